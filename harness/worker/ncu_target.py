# ncu_target.py - what `stitchbench profile --ncu` runs under Nsight Compute: the problem's Model (or a
# candidate's ModelNew) loaded exactly as the worker loads it, then a few timed calls. No protocol, no files.
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from worker import Worker  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--candidate")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--ext-dir")
    ap.add_argument("--flush-bytes", type=int, default=0)
    a = ap.parse_args()
    import torch
    if "TORCH_CUDA_ARCH_LIST" not in os.environ and torch.cuda.is_available():
        # as the evaluator builds (the device's arch only), so the build cache is hit
        os.environ["TORCH_CUDA_ARCH_LIST"] = "%d.%d" % torch.cuda.get_device_capability(torch.device(a.device))
    w = Worker()
    w.cmd_load({"problem": a.problem, "candidate": a.candidate, "device": a.device, "seed": a.seed,
                "ext_dir": a.ext_dir})
    w.cmd_timing_setup({"seeds": [a.seed + 1, a.seed + 2], "flush_bytes": a.flush_bytes})
    # one block of calls over both input sets, as the evaluator's timing loop asks (worker.py cmd_time)
    w.cmd_time({"which": "model", "sets": list(range(a.calls)), "seeds": [a.seed] * a.calls})


if __name__ == "__main__":
    main()
