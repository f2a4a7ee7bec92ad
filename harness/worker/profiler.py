# profiler.py - the worker's profiling: NVTX ranges around build, warm-up, each timed call and checking
# (so an Nsight Systems trace of a run reads naturally), and lib/libstitchprof.so, loaded when the parent asks.
#
# Everything here degrades to a no-op: a CPU torch, a missing library or a CUPTI that refuses to start
# is reported to the parent, never raised into the worker (docs/worker.md, docs/trace.md).
import ctypes
import functools
import os

import torch


@functools.lru_cache(maxsize=None)
def nvtx():
    """torch.cuda.nvtx where this torch can emit ranges (a CUDA build with a device), else None. Looked up
    on first use, never at import: torch.cuda.is_available() arms torch's fork guard, and the fork server
    (template.py) imports this module and must still fork workers that can start CUDA."""
    try:
        if torch.cuda.is_available() and hasattr(torch._C, "_nvtx"):
            return torch.cuda.nvtx
    except Exception:  # a broken driver must not stop the worker; it only loses its ranges
        pass
    return None


def nvtx_range(name):
    """Decorator: the function runs inside the NVTX range `name`."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            nv = nvtx()
            if nv is None:
                return fn(*args, **kwargs)
            nv.range_push(name)
            try:
                return fn(*args, **kwargs)
            finally:
                nv.range_pop()
        return inner
    return wrap


def tensor_bytes(obj):
    """Bytes of the tensors in obj (a tensor, or a list/tuple of anything)."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(x) for x in obj)
    return 0


def mapped_objects(under):
    """The shared objects this process has mapped from below the folder `under` (the candidate's builds)."""
    if not under:
        return []
    root = os.path.realpath(under) + os.sep
    found = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip() if line.count(" ") >= 5 else ""
                if path.startswith(root) and ".so" in os.path.basename(path):
                    found.add(path)
    except OSError:
        pass
    return sorted(found)


def _bind(lib):
    lib.stitchprof_start.argtypes = [ctypes.c_char_p]
    lib.stitchprof_trial_begin.argtypes = [ctypes.c_uint64, ctypes.c_void_p]
    lib.stitchprof_counts.argtypes = [ctypes.POINTER(ctypes.c_uint64)] * 3
    lib.stitchprof_counts.restype = None
    lib.stitchprof_error.restype = ctypes.c_char_p
    for name in ("stitchprof_start", "stitchprof_trial_begin", "stitchprof_trial_end", "stitchprof_flush",
                 "stitchprof_stop"):
        getattr(lib, name).restype = ctypes.c_int
    lib.stitchprof_metrics_begin.argtypes = [ctypes.c_char_p]
    lib.stitchprof_metrics_begin.restype = ctypes.c_int
    lib.stitchprof_metrics_end.restype = ctypes.c_int
    lib.stitchprof_metrics_mark.argtypes = [ctypes.c_int]
    lib.stitchprof_metrics_mark.restype = None


class Profiler:
    """Numbers every timed call (a trial) and, while a session runs, tags its CUDA work with that number."""

    def __init__(self):
        self.lib = None
        self.active = False
        self.trial = 0            # the last trial id handed out
        self.open = False         # a CUPTI trial is open
        self.in_range = False     # its NVTX range is open
        self.metrics = False      # a hardware-metrics session runs (every launch is replayed)
        self.errors = []

    def _error(self):
        return (self.lib.stitchprof_error() or b"").decode(errors="replace")

    def _load(self, lib_path):
        """The library, loaded and bound; None and the reason when it cannot be."""
        if not torch.cuda.is_available():
            return "profiling needs a CUDA GPU; this worker has none"
        try:
            lib = ctypes.CDLL(lib_path)
            _bind(lib)
        except (OSError, AttributeError) as exc:
            return "cannot load %s: %s (build it with make on a machine with the CUDA toolkit's CUPTI)" % (
                lib_path, exc)
        self.lib = lib
        return None

    def start(self, lib_path, trace_path):
        """Loads the library and starts a session. Never raises: {"available": False, "reason"} instead."""
        if self.active or self.metrics:
            return {"available": False, "reason": "a profiling session is already running in this worker"}
        reason = self._load(lib_path)
        if reason:
            return {"available": False, "reason": reason}
        lib = self.lib
        torch.cuda.synchronize()  # earlier work would land in the trace without a trial
        if lib.stitchprof_start(os.fsencode(trace_path)) != 0:
            return {"available": False, "reason": self._error()}
        self.active = True
        self.errors = []
        return {"available": True}

    def begin(self, stream):
        """Just before the start event of a timed call on `stream`."""
        if self.in_range:  # the previous call raised before its end
            nvtx().range_pop()
        self.trial += 1
        if nvtx() is not None:
            nvtx().range_push("trial %d" % self.trial)
            self.in_range = True
        if self.active:
            if self.lib.stitchprof_trial_begin(self.trial, stream.cuda_stream or None) == 0:
                self.open = True
            elif len(self.errors) < 5:
                self.errors.append(self._error())
        if self.metrics:
            self.lib.stitchprof_metrics_mark(1)

    def end(self):
        """After the timed call and the device synchronised."""
        if self.open:
            self.lib.stitchprof_trial_end()
            self.open = False
        if self.metrics:
            self.lib.stitchprof_metrics_mark(0)
        if self.in_range:
            nvtx().range_pop()
            self.in_range = False

    def reply(self):
        """The trial id of the last timed call, as a one-element list, while a session records it."""
        return {"trial": [self.trial]} if self.active else {}

    def stop(self, objects_under=None):
        if not self.active:
            return {"available": False, "reason": "no profiling session is running"}
        torch.cuda.synchronize()
        self.end()
        rc = self.lib.stitchprof_stop()
        records, kernels, dropped = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        self.lib.stitchprof_counts(ctypes.byref(records), ctypes.byref(kernels), ctypes.byref(dropped))
        self.active = False
        reply = {"available": True, "records": records.value, "kernels": kernels.value, "dropped": dropped.value,
                 "objects": mapped_objects(objects_under), "errors": self.errors}
        if rc != 0:
            reply["errors"] = self.errors + [self._error()]
        return reply

    def metrics_start(self, lib_path, out_path):
        """Starts the hardware-metrics session (no trace may run). Never raises."""
        if self.active or self.metrics:
            return {"available": False, "reason": "a profiling session is already running in this worker"}
        reason = self._load(lib_path)
        if reason:
            return {"available": False, "reason": reason}
        torch.cuda.synchronize()  # earlier work must not become ranges
        if self.lib.stitchprof_metrics_begin(os.fsencode(out_path)) != 0:
            return {"available": False, "reason": self._error()}
        self.metrics = True
        return {"available": True}

    def metrics_stop(self):
        if not self.metrics:
            return {"available": False, "reason": "no metrics session is running"}
        torch.cuda.synchronize()
        self.metrics = False
        if self.lib.stitchprof_metrics_end() != 0:
            return {"available": False, "reason": self._error()}
        return {"available": True}
