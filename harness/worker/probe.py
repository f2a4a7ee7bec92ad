# probe.py - tells the harness what this Python can do: its version, torch's version, CUDA devices.
# Prints one JSON object on stdout. Kept free of decisions: the C side judges what it means.
import json
import platform
import sys

info = {"python": platform.python_version(), "executable": sys.executable}
try:
    import torch
except Exception as exc:  # report why, the parent decides whether that is fatal
    info["torch_error"] = "%s: %s" % (type(exc).__name__, exc)
    print(json.dumps(info))
    sys.exit(0)

info["torch"] = torch.__version__
info["torch_file"] = torch.__file__  # the harness re-probes when this file changes (a reinstall)
info["torch_cuda"] = torch.version.cuda
info["cuda_available"] = bool(torch.cuda.is_available())
info["torch_compile"] = hasattr(torch, "compile")  # torch >= 2.0; the torch-compile baseline needs it
devices = []
if info["cuda_available"]:
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        devices.append({
            "index": i,
            "name": p.name,
            "sm": "%d%d" % (p.major, p.minor),
            "memory_bytes": int(p.total_memory),
            "multiprocessors": int(p.multi_processor_count),
            "l2_bytes": int(getattr(p, "L2_cache_size", 0) or 0),
            "uuid": str(getattr(p, "uuid", "") or ""),  # NVML finds the GPU by it (serve's GPU idle)
        })
info["devices"] = devices
print(json.dumps(info))
