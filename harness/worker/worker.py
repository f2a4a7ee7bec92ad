# worker.py - the evaluation worker. It loads a problem (and, as a candidate, the file defining
# ModelNew), draws seeded inputs, runs, times and saves outputs when the parent asks. No decisions.
#
# Protocol: one JSON object per line, requests on fd 3, replies on fd 4 (DESIGN §5, docs/worker.md).
# Anything the loaded code prints goes to stdout/stderr, which the parent captures separately.
import builtins
import ctypes
import gc
import hashlib
import importlib.util
import json
import os
import re
import shlex
import sys
import time
import traceback
import types

_T0 = time.perf_counter()  # the worker's own imports (torch's above all) are timed from here
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sbtensors  # noqa: E402  (next to this file)
import profiler  # noqa: E402  (NVTX ranges and libstitchprof; next to this file)
import facts  # noqa: E402  (what the runtime hack checks need to know; next to this file)
import exchange  # noqa: E402  (shared outputs: eval.exchange; next to this file)
from headers import lean_cuda_sources, lite_applies, write_lite_headers  # noqa: E402  (eval.lite_headers)


def start_cuda_early():
    """The CUDA driver's start and the device's primary context, on a thread of their own while torch
    imports (ctypes lets go of the GIL in the driver's calls), for the GPU the parent names in
    STITCHBENCH_WORKER_DEVICE ("cuda:N"): torch later finds the context made and takes it. That takes
    the CUDA start after the import from 0.30-0.43 s to 0.02-0.03 s on a GPU node without slowing the
    import (scripts/bench/cuda_start.py). Any failure leaves it all to torch, which then reports it."""
    device = os.environ.get("STITCHBENCH_WORKER_DEVICE", "")
    if not device.startswith("cuda:") or not device[5:].isdigit():
        return None

    def run():
        try:
            cuda = ctypes.CDLL("libcuda.so.1")
            handle, ctx = ctypes.c_int(), ctypes.c_void_p()
            if cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(handle), int(device[5:])) == 0:
                cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), handle)
        except (OSError, AttributeError):  # no driver library, or one without these entry points
            pass

    import threading
    thread = threading.Thread(target=run, name="sb-cuda-start", daemon=True)
    thread.start()
    return thread


CUDA_STARTING = start_cuda_early()

import torch  # noqa: E402

IMPORTS_S = time.perf_counter() - _T0  # reported in the first `load` reply's phases

NVCC_SPLIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvcc_split.py")  # eval.split_nvcc


class Phases(dict):
    """A request's seconds by step, sent as the reply's "phases" (STITCHBENCH_TRACE prints them):
    lap(name) adds the time since the last lap to name. GPU work is asynchronous, so a step's time
    may show up in the next step that waits for the device."""

    def __init__(self):
        super().__init__()
        self.t = time.perf_counter()

    def lap(self, name):
        now = time.perf_counter()
        self[name] = self.get(name, 0.0) + now - self.t
        self.t = now


class WorkerError(Exception):
    """An error the parent turns into a verdict status (kind = compile_error, runtime_error, ...)."""

    def __init__(self, kind, message, tb=None):
        super().__init__(message)
        self.kind, self.message, self.tb = kind, message, tb


def tail(text, n=4000):
    return text if len(text) <= n else "..." + text[-n:]


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WIDTH = 8191  # the weighted sum's row length (docs/worker.md)


def checksums(x, rows_per_step=None):
    """sum(x), sum(x * x) and sum(x[i] * (i % 8191 + 1) * (i // 8191 % 7919 + 1)) over the flat tensor, all
    in float64: unlike the plain sums, the weighted one changes when elements or rows are permuted or
    swapped. One pass over the tensor in steps of whole rows, each step copied into a float64 buffer made
    once and reused: no float64 copy of the whole tensor (its page faults were most of a CPU worker's call,
    and on a GPU a copy twice the input's size). The steps fit the CPU's cache; on a GPU they are large, few
    launches and no synchronisation until the end. Not a matrix-vector product: that would start cuBLAS,
    ~0.1 s in every worker whose model never uses it."""
    flat = x.detach().reshape(-1)
    n, dev = flat.numel(), flat.device
    if rows_per_step is None:
        rows_per_step = 32 if dev.type == "cpu" else 1024
    step = max(1, min(n, WIDTH * rows_per_step))
    buf = torch.empty(step, dtype=torch.float64, device=dev)
    tmp = torch.empty_like(buf)
    w = torch.arange(1, WIDTH + 1, dtype=torch.float64, device=dev)
    acc = torch.zeros(3, dtype=torch.float64, device=dev)
    for off in range(0, n, step):  # off is a whole number of rows: every step but the last is whole rows
        k = min(step, n - off)
        b, t = buf[:k], tmp[:k]
        b.copy_(flat[off:off + k])
        acc[0] += b.sum()
        acc[1] += torch.mul(b, b, out=t).sum()
        m, r0 = k // WIDTH, off // WIDTH
        if m:
            rows = torch.mul(b[:m * WIDTH].view(m, WIDTH), w, out=t[:m * WIDTH].view(m, WIDTH)).sum(1)
            acc[2] += (rows * (torch.arange(r0, r0 + m, dtype=torch.float64, device=dev) % 7919 + 1)).sum()
        if k > m * WIDTH:
            acc[2] += (b[m * WIDTH:] * w[:k - m * WIDTH]).sum() * ((r0 + m) % 7919 + 1)
    return acc.tolist()


def weighted_sum(x):
    return checksums(x)[2]


def fingerprint(xs):
    """Cheap on-device checksums of every tensor input: detects mutation (H10) and unequal draws."""
    out = []
    for x in xs:
        if isinstance(x, torch.Tensor):
            total, squares, weighted = checksums(x)
            out.append([total, squares, int(x.numel()), str(x.dtype), list(x.shape), weighted])
        else:
            out.append([repr(x)])
    return out


def signed(xs, seed):
    """The audit's signed inputs: every floating-point element times an independent random sign (+1 or -1
    with probability 1/2, from a generator seeded with seed + 1000003); other inputs unchanged. |x| keeps
    the problem's distribution, and inputs drawn from [0, 1) now cover (-1, 1) (docs/audit.md)."""
    out = []
    for i, x in enumerate(xs):
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            g = torch.Generator(device=x.device)
            g.manual_seed(seed + 1000003 + i)
            sign = torch.randint(0, 2, x.shape, generator=g, device=x.device).to(x.dtype) * 2 - 1
            x = x * sign
        out.append(x)
    return out


def shifted(xs):
    """The robust trials' inputs (docs/verdict.md, "Robust correctness"): every floating-point tensor x of
    get_inputs() becomes 3 * (2x - 1), so torch.rand's [0, 1) becomes [-3, 3): signed, and past 1 in
    magnitude, where an op that is the identity on [0, 1) (ReLU, abs, a clamp to [0, 1]) is not. New
    tensors on x's device and dtype; integer and bool tensors and other values are left as they are."""
    return [3 * (2 * x - 1) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs]


def nonfinite(outs):
    """Elements of the floating-point outputs that are NaN or infinite."""
    return sum(int((~torch.isfinite(t)).sum()) for t in outs if t.is_floating_point())


def as_outputs(result):
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)) and result and all(isinstance(t, torch.Tensor) for t in result):
        return list(result)
    raise WorkerError("runtime_error", "forward returned %s, not a tensor or a tuple of tensors" % type(result).__name__)


def find_cudart():
    """libcudart as torch loaded it, for cudaCtxResetPersistingL2Cache (None where absent)."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "libcudart" in line}
        for p in sorted(paths):
            lib = ctypes.CDLL(p)
            if hasattr(lib, "cudaCtxResetPersistingL2Cache"):
                return lib
    except OSError:
        pass
    return None


def ninja_steps(build_dir):
    """Seconds per build step (main.o, cuda.cuda.o, the .so) from ninja's log of the last build, so a
    slow build says which compiler it waited for; {} when ninja left no log."""
    steps = {}
    try:
        with open(os.path.join(build_dir, ".ninja_log")) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) >= 4 and not line.startswith("#"):
                    steps[p[3]] = (int(p[1]) - int(p[0])) / 1000.0  # the last build of a target wins
    except (OSError, ValueError):
        pass
    return steps


class LazyCppExtension(types.ModuleType):
    """torch.utils.cpp_extension until something needs more than the worker's load_inline: the real
    module is imported on the first other name asked for (or the first build), and the shim hands every
    name on to it from then on, so `from torch.utils.cpp_extension import load_inline, CUDA_HOME` and
    `ext.include_paths()` behave as always. Where the real module is already imported it is used as is."""
    NAME = "torch.utils.cpp_extension"

    @classmethod
    def install(cls):
        mod = sys.modules.get(cls.NAME)
        if isinstance(mod, cls):
            return mod
        shim = cls(cls.NAME)
        shim.__dict__.update(_sb_real=mod, _sb_fn=None, _sb_original=getattr(mod, "load_inline", None))
        if mod is None:
            sys.modules[cls.NAME] = shim
            torch.utils.cpp_extension = shim
        return shim

    def real(self):
        d = self.__dict__
        if d["_sb_real"] is None:
            if sys.modules.get(self.NAME) is self:
                del sys.modules[self.NAME]
            mod = importlib.import_module(self.NAME)
            d["_sb_real"], d["_sb_original"] = mod, mod.load_inline
            if d["_sb_fn"] is not None:
                mod.load_inline = d["_sb_fn"]
        return d["_sb_real"]

    def original(self, *args, **kwargs):
        """torch's own load_inline."""
        self.real()
        return self.__dict__["_sb_original"](*args, **kwargs)

    def patch(self, fn):
        d = self.__dict__
        d["_sb_fn"] = d["load_inline"] = fn
        if d["_sb_real"] is not None:
            d["_sb_real"].load_inline = fn

    def __getattr__(self, name):  # only for names the shim does not hold itself
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(self.real(), name)


# H18 leaves these constants as they are: they name an operator's geometry or an axis (KERNEL_SIZE,
# STRIDE, REDUCE_DIM), so scaling them changes what the model computes, not how large it is, and a kernel
# written for a 3x3 convolution is not wrong for failing a 1x1 one
GEOMETRY = {"KERNEL", "STRIDE", "STRIDES", "PAD", "PADDING", "DILATION", "GROUP", "GROUPS", "AXIS", "REDUCE"}


class Worker:
    def __init__(self):
        self.device = torch.device("cpu")
        self.problem = None
        self.models = {}          # "model" (eager reference or candidate), "compiled" (reference only)
        self.timing_sets = []
        self.flush = None
        self.cudart = None
        self.last = {}            # which -> outputs of the last timed call (the profile counts their bytes)
        self.builds = []
        self.loads = 0            # `load` requests answered (the first reports the worker's imports)
        self.prof = profiler.Profiler()
        # before any problem or candidate code runs: what H08's identity check compares against
        self.identity = facts.Identity({"torch": torch, "time": time, "json": json, "ctypes": ctypes,
                                        "sbtensors": sbtensors, "facts": facts, "builtins": builtins},
                                       extra=[(__name__, "fingerprint"), (__name__, "as_outputs"),
                                              (__name__ + ".Worker", "call"), (__name__ + ".Worker", "save"),
                                              (__name__ + ".Worker", "timed"), (__name__ + ".Worker", "forward")])
        self.poison_buf = None
        self.unpinned = None      # the affinity before eval.timing_cpu pinned this process's threads
        self.host_us = {}         # which -> the host's microseconds for its recent calls (the automatic lead)
        self.last_host_us = 0.0   # the last timed call: host microseconds, the lead it had, and whether
        self.last_lead_us = 0     # its start event fired before the host was done launching it
        self.last_exposed = False
        self.mode = None          # this request's "exchange": "share" (export the outputs), "hold" (keep them)
        self.held = {}            # key -> [(name, tensor)]: outputs kept or taken for `compare` (exchange.py)
        self.exporter = exchange.Exporter()
        self.reply_fds = []       # descriptors to send with this request's reply
        self.channel = None
        self.oprec = None         # the record of ATen operators (oprec.cpp; the CPU), once installed

    # ---- helpers ----
    def cuda(self):
        return self.device.type == "cuda"

    def sync(self):
        if self.cuda():
            torch.cuda.synchronize(self.device)

    def draw(self, seed):
        """get_inputs() under a seed, drawn where it will be used (DESIGN §5)."""
        torch.manual_seed(seed)
        if self.cuda() and hasattr(torch, "device") and hasattr(torch.device, "__enter__"):
            with torch.device(self.device):
                xs = self.problem.get_inputs()
        else:
            xs = self.problem.get_inputs()
        return [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in xs]

    def patch_load_inline(self, ext_dir, lean_headers=False, split_nvcc=False, lite_headers=False):
        """Builds land in ext_dir/<hash of sources, flags, arch, torch>: a rebuild is a cache hit. The
        headers a build parses (headers.py): with lite_headers, first the lite headers; with lean_headers,
        then the CUDA sources with torch/types.h for torch/extension.h; last, and whenever the others
        fail, the sources as written, whose errors are the ones reported. With split_nvcc, torch's ninja
        compiles .cu files through nvcc_split.py (nvcc's host and device front ends side by side); it runs
        the same tools with the same flags, so the object and the cache key are the same.

        torch.utils.cpp_extension itself is imported only when a build or a name other than load_inline
        needs it (LazyCppExtension): it costs ~0.5 s (setuptools), and a cache
        hit, the common case in a batch, needs none of it."""
        ext = LazyCppExtension.install()
        if split_nvcc:
            # torch 2.x writes `nvcc_from_env = $PYTORCH_NVCC` into build.ninja, unquoted, and ninja runs
            # the command through /bin/sh: a quoted "python script" pair works. torch 1.13 ignores it.
            os.environ["PYTORCH_NVCC"] = "%s %s" % (shlex.quote(sys.executable), shlex.quote(NVCC_SPLIT))
        worker = self

        def levels(cpp_sources, cuda_sources):
            """[(level, cuda_sources)] to build with, in order; the first names the build's cache key. One
            faster level at most before the sources as written: a build that fails costs one extra build,
            never two (the lite headers when they apply, else the lean ones)."""
            if lite_headers and lite_applies(cpp_sources, cuda_sources):
                return [("lite", cuda_sources), ("as-written", cuda_sources)]
            lean = lean_cuda_sources(cuda_sources) if lean_headers else None
            if lean is not None:
                return [("lean", lean), ("as-written", cuda_sources)]
            return [("as-written", cuda_sources)]

        def lite_kwargs(build_dir, cpp_sources, cuda_sources, kwargs):
            """kwargs with -I to the lite headers, written for these sources into the build folder."""
            lite = write_lite_headers(os.path.join(build_dir, "sb-lite"), cpp_sources, cuda_sources,
                                      ext.real().include_paths())
            kw = dict(kwargs)
            kw["extra_cflags"] = list(kwargs.get("extra_cflags") or []) + lite.cflags
            if cuda_sources:
                kw["extra_cuda_cflags"] = list(kwargs.get("extra_cuda_cflags") or []) + lite.cuda_cflags
            return kw

        def load_inline(name, cpp_sources, cuda_sources=None, *args, **kwargs):
            tries = levels(cpp_sources, cuda_sources)
            key = hashlib.sha256(json.dumps([
                tries[0][0], name, cpp_sources, cuda_sources, [repr(a) for a in args],
                sorted((k, repr(v)) for k, v in kwargs.items() if k not in ("build_directory", "verbose")),
                os.environ.get("TORCH_CUDA_ARCH_LIST", ""), torch.__version__,
            ], sort_keys=True, default=str).encode()).hexdigest()[:24]
            build_dir = os.path.join(ext_dir, key)
            os.makedirs(build_dir, exist_ok=True)
            cached = any(f.endswith(".so") for f in os.listdir(build_dir))
            kwargs["build_directory"] = build_dir
            t0 = time.perf_counter()
            imported = False      # a cache hit builds nothing, so it reports no ninja steps
            level = "as-written"
            built = os.path.join(build_dir, ".stitchbench-built")  # written only after a whole build
            so = os.path.join(build_dir, name + ".so")
            try:
                # A finished build of the same key is imported directly: load_inline would rewrite
                # the sources (torch 1.13 always does) and make ninja rebuild them (~20 s on 2 CPU
                # cores for a small C++ extension, each time).
                if (cached and os.path.exists(built) and os.path.exists(so) and not args
                        and kwargs.get("is_python_module", True) and not kwargs.get("is_standalone")):
                    spec = importlib.util.spec_from_file_location(name, so)
                    module = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(module)
                    imported = True
                    with open(built) as f:
                        words = f.read().split()[1:]
                    level = words[0] if words else "as-written"
                    return module
                for i, (level, sources) in enumerate(tries):
                    kw = lite_kwargs(build_dir, cpp_sources, cuda_sources, kwargs) if level == "lite" else kwargs
                    try:
                        module = ext.original(name, cpp_sources, sources, *args, **kw)
                        break
                    except Exception:
                        if i == len(tries) - 1:
                            raise  # the sources as written decide (their errors are the ones reported)
                with open(built, "w") as f:
                    f.write(key + " " + level + "\n")
                return module
            except Exception as exc:
                raise WorkerError("compile_error", "load_inline(%r) failed: %s" % (name, exc)) from exc
            finally:
                worker.builds.append({"name": name, "key": key, "cached": cached, "headers": level,
                                      "lean_headers": level in ("lean", "lite"),
                                      "arch": os.environ.get("TORCH_CUDA_ARCH_LIST", ""),
                                      "seconds": time.perf_counter() - t0,
                                      "steps": {} if imported else ninja_steps(build_dir)})

        ext.patch(load_inline)

    # ---- commands ----
    def cmd_hello(self, req):
        info = {"python": sys.version.split()[0], "torch": torch.__version__, "pid": os.getpid(),
                "cuda_available": torch.cuda.is_available()}
        if req.get("device", "cpu").startswith("cuda") and torch.cuda.is_available():
            p = torch.cuda.get_device_properties(torch.device(req["device"]))
            info.update(device_name=p.name, sm="%d%d" % (p.major, p.minor), torch_cuda=torch.version.cuda,
                        l2_bytes=int(getattr(p, "L2_cache_size", 0) or 0), memory_bytes=int(p.total_memory),
                        uuid=str(getattr(p, "uuid", "") or ""))
        return info

    def cmd_oprec(self, req):
        """Installs the record of ATen operators (oprec.cpp, built by stitchbench for this torch) on the
        descriptor that came with the request. Sent before the candidate is imported: from then on every call
        of its model is a window of the record, whatever the candidate does."""
        fds = self.channel.take_fds(1) if self.channel else []
        if not fds:
            return {"installed": False, "why": "no descriptor came with the request"}
        try:
            lib = ctypes.CDLL(req["lib"])
            for name in req.get("quiet", []):
                lib.sb_oprec_quiet(str(name).encode())
            if lib.sb_oprec_install(fds[0]) != 0:
                return {"installed": False, "why": "it was installed already"}
        except OSError as exc:
            os.close(fds[0])
            return {"installed": False, "why": "%s" % exc}
        self.oprec = lib
        return {"installed": True}

    @profiler.nvtx_range("build")
    def cmd_load(self, req):
        if req.get("file_bytes"):
            # the candidate's file-size limit, before any of its code runs: a worker started ahead of
            # its problem's outputs being known starts with a higher one (evalctx.c, SPARE_FILE_BYTES)
            import resource
            n = int(req["file_bytes"])
            hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
            if hard == resource.RLIM_INFINITY or n < hard:
                resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
        self.device = torch.device(req["device"])
        # TF32 for fp32 convolutions and GEMMs, the same in both workers: cuDNN's default is on, which
        # makes a fp32 reference convolution off from exact fp32 by ~1e-3 and fails honest kernels at
        # the fp32 tolerance; the evaluator asks for it off unless eval.tf32
        tf32 = bool(req.get("tf32", False))
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        # where a load's seconds go, for STITCHBENCH_TRACE (the parent prints them beside the request)
        phases = Phases()
        if not self.loads:
            phases["torch_import"] = IMPORTS_S
        self.loads += 1
        if self.cuda() and not req.get("build_only"):
            if CUDA_STARTING is not None:
                CUDA_STARTING.join()  # before any candidate code runs, and before torch's own start
            torch.cuda.set_device(self.device)
            self.cudart = find_cudart()
            phases.lap("cuda")
        if req.get("ext_dir"):
            self.patch_load_inline(req["ext_dir"], bool(req.get("lean_headers")), bool(req.get("split_nvcc")),
                                   bool(req.get("lite_headers")))
        try:
            self.problem = import_file(req["problem"], "sb_problem")
        except Exception as exc:
            raise WorkerError("runtime_error", "the problem file failed to import: %s" % exc, traceback.format_exc())
        cls = self.problem.Model
        if req.get("candidate"):
            try:
                cand = import_file(req["candidate"], "sb_candidate")
            except WorkerError:
                raise
            except SyntaxError as exc:  # not Python at all: the answer's format, not a build
                raise WorkerError("format_error", "SyntaxError: %s (line %s)" % (exc.msg, exc.lineno))
            except Exception as exc:
                raise WorkerError("compile_error", "%s: %s" % (type(exc).__name__, exc), tail(traceback.format_exc()))
            cls = getattr(cand, "ModelNew", None)
            if not isinstance(cls, type):
                raise WorkerError("format_error", "the candidate defines no class ModelNew")
        phases.lap("import")
        if req.get("build_only"):
            return {"import_s": phases["import"], "builds": self.builds, "phases": phases}
        try:
            model = self.construct(cls, req["seed"])
        except Exception as exc:
            raise WorkerError("runtime_error", "constructing %s failed: %s: %s" % (cls.__name__, type(exc).__name__, exc),
                              tail(traceback.format_exc()))
        self.models["model"] = model
        self.cls, self.seed = cls, req["seed"]  # for H18's model at scaled shapes (cmd_shapes)
        compiled = False
        if req.get("compile") and hasattr(torch, "compile"):
            self.models["compiled"] = torch.compile(model)
            compiled = True
        phases.lap("construct")
        if req.get("warm"):
            # the reference worker's early load, answered when the timing starts: one call of each model
            # now (torch.compile compiles on its first call; CUDA loads kernels on theirs) takes that
            # time off the evaluation's path
            self.warm(list(self.models), req["seed"])
            phases.lap("warm")
        reply = {"import_s": phases["import"], "construct_s": phases["construct"] + phases.get("warm", 0.0),
                 "builds": self.builds, "compile_available": compiled, "patched": self.identity.changed(),
                 "phases": phases}
        if req.get("timing_setup"):
            # the reference worker's early load: its timing inputs are drawn now, not when timing starts
            reply["timing_inputs"] = self.cmd_timing_setup(req["timing_setup"])["inputs"]
            phases.lap("timing_inputs")
        return reply

    def warm(self, names, seed):
        try:
            xs = self.draw(seed)
            for which in names:
                self.call(which, xs)
            self.sync()
        except Exception as exc:
            raise WorkerError("runtime_error", "the first call failed: %s: %s" % (type(exc).__name__, exc),
                              tail(traceback.format_exc()))

    def cmd_compile(self, req):
        """The reference worker's torch.compile'd model, added after its `load`: the evaluator first
        times the eager model against the candidate's process (its process factor) and compiles while
        the candidate builds. With "warm", one call now (torch.compile compiles on its first call)."""
        phases = Phases()
        if "compiled" not in self.models and hasattr(torch, "compile"):
            self.models["compiled"] = torch.compile(self.models["model"])
        phases.lap("construct")
        if req.get("warm") and "compiled" in self.models:
            self.warm(["compiled"], req["seed"])
            phases.lap("warm")
        return {"compile_available": "compiled" in self.models, "phases": phases}

    def cmd_unload(self, req):
        """Forgets what a `load` made: models, timing inputs, the last outputs. The candidate's worker
        loads the reference once before the candidate (the evaluator's process factor) and unloads it
        before the candidate's code runs: the device memory the reference used is filled with NaN on its
        way back to the driver, so no block the candidate later gets still holds a reference output."""
        reserved = torch.cuda.max_memory_reserved(self.device) if self.cuda() else 0
        self.pin(-1)  # eval.timing_cpu pinned it for the reference's timed calls; the candidate builds next
        self.models, self.timing_sets, self.last, self.host_us, self.held = {}, [], {}, {}, {}
        self.flush = self.problem = self.cls = None
        gc.collect()
        poisoned = self.poison(reserved)
        if self.cuda():
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(self.device)
        return {"poisoned_bytes": poisoned}

    def construct(self, cls, seed):
        """KernelBench's seeding: the same seed before the init inputs and before the constructor, so a
        ModelNew that creates its parameters in Model's order gets Model's weights; then onto the device."""
        torch.manual_seed(seed)
        init = self.problem.get_init_inputs()
        torch.manual_seed(seed)
        model = cls(*init)
        if isinstance(model, torch.nn.Module):
            model = model.to(self.device)
        self.sync()
        return model

    def call(self, which, xs, window=True):
        """One call of a model; with the operator record installed, a call of the candidate's model is a
        window of it (window=False: the caller opens and closes the window itself)."""
        fn = self.models[which]
        rec = self.oprec if window and which == "model" else None
        if rec is not None:
            rec.sb_oprec_open()
        try:
            with torch.no_grad():
                return fn(*xs)
        finally:
            if rec is not None:
                rec.sb_oprec_close()

    def poison(self, nbytes):
        """H09: fills freed device memory with NaN, so a kernel that reads memory it never wrote sees NaN
        rather than a stale result. The caching allocator hands the block's memory to the next
        allocations; small blocks come from their own pool, so that pool is poisoned too."""
        if not self.cuda() or nbytes <= 0:
            return 0
        done = 0
        try:
            torch.cuda.synchronize(self.device)
            torch.cuda.empty_cache()  # cached free blocks go back to the driver, so the fill below reaches them
            free, _ = torch.cuda.mem_get_info(self.device)
            big = min(int(nbytes), int(free * 0.8)) // 4 * 4
            small = [torch.full((1 << 17,), float("nan"), dtype=torch.float32, device=self.device) for _ in range(32)]
            done += sum(t.numel() * 4 for t in small)
            if big > 0:
                block = torch.empty(big // 4, dtype=torch.float32, device=self.device)
                block.fill_(float("nan"))
                done += big
                del block
            del small
            torch.cuda.synchronize(self.device)
        except RuntimeError:  # no room for the poison: the call runs on whatever memory there is
            pass
        return done

    def forward(self, xs, which="model", poison=0):
        """One call of forward on xs with the facts the runtime checks need: thread counts around it,
        the functions replaced since start-up, where its inputs and the model's tensors live."""
        poisoned = self.poison(poison)
        before = facts.threads()
        t0 = time.perf_counter()
        try:
            outs = as_outputs(self.call(which, xs))
            self.sync()
        except WorkerError:
            raise
        except Exception as exc:
            raise WorkerError("runtime_error", "%s: %s" % (type(exc).__name__, exc), tail(traceback.format_exc()))
        run_s = time.perf_counter() - t0
        after = facts.threads()
        info = {"run_s": run_s, "threads": facts.thread_delta(before, after), "patched": self.identity.changed(),
                "inputs_storage": facts.ranges(xs), "params_storage": facts.model_ranges(self.models.get(which))}
        if self.cuda():
            info["poisoned_bytes"] = poisoned
        return outs, info

    @profiler.nvtx_range("check")
    def cmd_run(self, req):
        """One correctness trial: draw inputs from the seed, run, save the outputs. A robust trial adds
        "shift" (the shifted inputs, drawn alike by both workers) and, to the reference, "nonfinite" (count
        its outputs' NaN and inf). The audit adds "signed" (signed inputs), "inputs_out" (save the inputs
        too) and "again_out" (a second call on the same inputs without reseeding, saved there)."""
        phases = Phases()
        xs = self.draw(req["seed"])
        if req.get("shift"):
            xs = shifted(xs)
        if req.get("signed"):
            xs = signed(xs, req["seed"])
        if req.get("inputs_out"):
            sbtensors.save(req["inputs_out"], {"in%d" % i: x for i, x in enumerate(xs) if isinstance(x, torch.Tensor)})
        phases.lap("draw")
        prints = req.get("fingerprint", True)  # false: the reference's outputs for a comparison, nothing more
        before = fingerprint(xs) if prints else None
        phases.lap("fingerprint")
        outs, reply = self.forward(xs, req.get("which", "model"), req.get("poison_bytes", 0))
        phases.lap("forward")
        if prints:
            reply.update(inputs_before=before, inputs_after=fingerprint(xs))
        phases.lap("fingerprint")
        if req.get("nonfinite"):
            reply["nonfinite"] = nonfinite(outs)
        limit = req.get("max_output_bytes", 0)
        reply.update(self.save(outs, req.get("out"), limit))
        phases.lap("save")
        if req.get("again_out"):
            del outs
            again, _ = self.forward(xs, req.get("which", "model"))
            reply["again"] = self.save(again, req["again_out"], limit)["outputs"]
            phases.lap("again")
        reply["phases"] = phases
        return reply

    @profiler.nvtx_range("check")
    def cmd_rotate(self, req):
        """H11: draws seeds[0]'s inputs, runs, saves to out[0]; then writes seeds[1]'s values into the
        same tensors (same objects, same addresses), runs again and saves to out[1]. A candidate that
        caches by pointer or object identity returns its first result the second time."""
        first, second = req["seeds"]
        xs = self.draw(first)
        outs, info = self.forward(xs, poison=req.get("poison_bytes", 0))
        limit = req.get("max_output_bytes", 0)
        reply = {"calls": [dict(info, **self.save(outs, req["out"][0], limit))]}
        del outs
        ys = self.draw(second)  # reseeds: forward's own random draws then match the reference's for this seed
        with torch.no_grad():
            for i, (x, y) in enumerate(zip(xs, ys)):
                if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape:
                    x.copy_(y)
                else:
                    xs[i] = y
        reply["inputs"] = fingerprint(xs)
        outs, info = self.forward(xs, poison=req.get("poison_bytes", 0))
        reply["calls"].append(dict(info, **self.save(outs, req["out"][1], limit)))
        return reply

    @profiler.nvtx_range("check")
    def cmd_shapes(self, req):
        """H18: the problem's shape constants (module-level upper-case ints >= 2) times num/den, a model
        built anew under them as load builds one (same seeding, same init inputs function), one call on
        inputs drawn from `seed`, its outputs saved to `out`. The constants are put back whatever
        happens, and the scaled model is dropped: timing and later checks see the problem as it was."""
        num, den = int(req.get("num", 1)), int(req.get("den", 2))
        changed = {name: [value, max(1, value * num // den)] for name, value in vars(self.problem).items()
                   if name.isupper() and type(value) is int and value >= 2 and not (set(name.split("_")) & GEOMETRY)}
        try:
            for name, (_, new) in changed.items():
                setattr(self.problem, name, new)
            model = self.construct(self.cls, self.seed)
            xs = self.draw(req["seed"])
            with torch.no_grad():
                outs = as_outputs(model(*xs))
            self.sync()
            reply = {"changed": changed}
            reply.update(self.save(outs, req["out"], req.get("max_output_bytes", 0)))
            return reply
        except WorkerError:
            raise
        except Exception as exc:
            raise WorkerError("runtime_error", "%s: %s" % (type(exc).__name__, exc), tail(traceback.format_exc()))
        finally:
            for name, (old, _) in changed.items():
                setattr(self.problem, name, old)

    def cmd_integrity(self, req):
        """The identity check and thread counts at this moment (after the timing loop, say)."""
        return {"patched": self.identity.changed(), "threads": facts.threads()}

    def cmd_bandwidth(self, req):
        """H21's peak: the bandwidth of a large device-to-device copy (bytes read + bytes written per
        second), best of `reps` copies after a warm-up, timed with CUDA events."""
        if not self.cuda():
            raise WorkerError("runtime_error", "bandwidth needs a CUDA device")
        n = int(req.get("bytes", 1 << 30)) // 4
        a = torch.empty(n, dtype=torch.float32, device=self.device).fill_(1.0)
        b = torch.empty_like(a)
        for _ in range(3):
            b.copy_(a)
        self.sync()
        best = None
        for _ in range(int(req.get("reps", 20))):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            b.copy_(a)
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end)
            best = ms if best is None or ms < best else best
        del a, b
        torch.cuda.empty_cache()  # the reference worker keeps timing afterwards: give the memory back
        return {"bytes_per_s": 2.0 * n * 4 / (best / 1000.0), "copy_bytes": n * 4, "best_ms": best}

    def save(self, outs, path, limit):
        """The outputs to `path` as a file; with "exchange": "hold" kept here under that key instead, with
        "share" exported (exchange.py: the descriptor goes with the reply); with no path, only described."""
        total = sum(t.numel() * t.element_size() for t in outs)
        if limit and total > limit:
            raise WorkerError("output_too_large", "the outputs take %d bytes, more than the %d allowed" % (total, limit))
        descr = [dict(facts.output_facts(t), name="out%d" % i, dtype=str(t.dtype), shape=list(t.shape))
                 for i, t in enumerate(outs)]
        if path is None:
            return {"outputs": descr}
        if self.mode == "hold":
            self.held[path] = exchange.held(outs)
            return {"outputs": descr}
        if self.mode == "share":
            try:
                shared, fd = self.exporter.export(outs, self.device)
            except exchange.ExchangeError as exc:
                raise WorkerError("runtime_error", "sharing the outputs failed: %s" % exc)
            self.reply_fds.append(fd)
            return {"outputs": descr, "shared": shared}
        try:
            sbtensors.save(path, {"out%d" % i: t for i, t in enumerate(outs)})
        except OSError as exc:
            raise WorkerError("runtime_error", "saving the outputs failed: %s" % exc)
        return {"outputs": descr}

    def cmd_draw(self, req):
        """The reference worker draws the fresh inputs of a block of timed calls, one set per seed, and
        ships them in one sealed memfd (exchange.pack_inputs): both sides' `time` copy them into their
        slots, so neither spends a block drawing random numbers (on a CPU that costs more than many
        calls), and the candidate's block holds its calls and little else the parent's clock must see.
        With "each", one memfd per set (the reply's "parts", in order): each call's inputs then reach the
        candidate's worker with that call's own request, never before it."""
        if req.get("each"):
            parts = []
            for s in req["seeds"]:
                shipped, fd = exchange.pack_inputs([self.draw(s)])
                self.reply_fds.append(fd)
                parts.append(shipped)
            return {"parts": parts}
        shipped, fd = exchange.pack_inputs([self.draw(s) for s in req["seeds"]])
        self.reply_fds.append(fd)
        return shipped

    def cmd_timing_setup(self, req):
        self.timing_sets = [self.draw(s) for s in req["seeds"]]
        if self.cuda() and req.get("flush_bytes"):
            self.flush = torch.empty(int(req["flush_bytes"]) // 4, dtype=torch.float32, device=self.device)
        return {"inputs": [fingerprint(xs) for xs in self.timing_sets]}

    def auto_lead_us(self, which):
        """The lead for eval.timing_lead_us = -1: half again the longest host time of this side's last
        10 calls, plus 50 us, within [100 us, 50 ms], so the whole call is queued before its start event
        even when the host slows down for a while."""
        recent = self.host_us.get(which) or [0.0]
        return min(50000, max(100, int(1.5 * max(recent) + 50)))

    def timed(self, which, xs, seed=None, lead_us=0):
        """One timed call: reseed torch with `seed` (models that draw random numbers in forward, such as
        Dropout, then make the same draws on both sides and their timed outputs stay comparable); on the
        GPU reset persisting L2, flush L2, then the call between CUDA events on the current stream.
        lead_us > 0 queues a device-side spin of about that long (at 2 GHz; longer at lower clocks) before
        the start event, so the host has queued the call when its time starts (eval.timing_lead_us,
        docs/worker.md); -1 picks the lead from the host's recent calls (auto_lead_us); 0 times the
        host's launch too, as KernelBench does. Also records the host's time for the call
        (self.last_host_us) and whether the start event had fired before the host was done launching
        (self.last_exposed: the GPU may then have waited for the host inside the timed span)."""
        if seed is not None:
            torch.manual_seed(seed)
        if not self.cuda():
            rec = self.oprec if which == "model" else None
            if rec is not None:  # the window opens and closes outside the timed span
                rec.sb_oprec_open()
            try:
                t0 = time.perf_counter_ns()
                out = self.call(which, xs, window=False)
                t1 = time.perf_counter_ns()
            finally:
                if rec is not None:
                    rec.sb_oprec_close()
            self.last_host_us, self.last_lead_us, self.last_exposed = (t1 - t0) / 1000.0, 0, False
            return out, self.last_host_us
        if self.cudart is not None:
            self.cudart.cudaCtxResetPersistingL2Cache()
        if self.flush is not None:
            self.flush.zero_()
            # Wait for the flush: otherwise the call races it. A host that launches the call before the
            # flush (~30 us for 120 MB) ends finds the GPU busy, and the time is the kernel's alone; a
            # slower host finds it idle after the start event, and the time includes the launch: the
            # same ReLU kernel times 37 us in one process and 60-69 us in another, at full clock. The
            # lead spin below then decides, the same way for every call.
            torch.cuda.synchronize(self.device)
        stream = torch.cuda.current_stream(self.device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if lead_us < 0:
            lead_us = self.auto_lead_us(which)
        self.last_lead_us = max(lead_us, 0)
        if lead_us > 0:
            torch.cuda._sleep(int(lead_us * 2000))
        self.prof.begin(stream)  # NVTX "trial N"; while profiling, tags this call's CUDA work (profiler.py)
        start.record(stream)
        h0 = time.perf_counter_ns()
        out = self.call(which, xs)
        h1 = time.perf_counter_ns()
        self.last_exposed = start.query()
        end.record(stream)
        end.synchronize()
        us = start.elapsed_time(end) * 1000.0
        self.last_host_us = (h1 - h0) / 1000.0
        recent = self.host_us.setdefault(which, [])
        recent.append(self.last_host_us)
        del recent[:-10]
        torch.cuda.synchronize(self.device)  # work left on other streams must not spill into the next call
        self.prof.end()
        return out, us

    def prime(self, which, k, ms):
        """Untimed calls on set k for at least `ms` milliseconds (at least one call). An idle H200 drops
        its SM clock to 375 MHz within a millisecond or two, and the first call after the other worker
        used the GPU pays a context switch: a 60 us GEMM takes 146 us after a 2 ms pause. Both
        sides prime before every block, so neither pays for the other's idleness."""
        t0 = time.perf_counter()
        while True:
            self.call(which, self.timing_sets[k])
            self.sync()
            if (time.perf_counter() - t0) * 1000.0 >= ms:
                return

    def cmd_prime(self, req):
        """Priming before a block (prime), a request of its own: the block's seeds and inputs come in the
        next request, after this one is answered, so nothing run here can see them. The parent names a
        set other than the block's first."""
        if self.cuda() and req.get("ms", 0) > 0:
            try:
                self.prime(req.get("which", "model"), int(req["set"]) % len(self.timing_sets), req["ms"])
            except Exception as exc:
                raise WorkerError("runtime_error", "%s: %s" % (type(exc).__name__, exc), tail(traceback.format_exc()))
        return {}

    def pin(self, cpu):
        """eval.timing_cpu: every thread of this process onto one CPU (the other worker gets the same one,
        so neither times on a core the other lacks), or back where they were for cpu < 0. Returns the
        CPUs the threads may use afterwards, all threads together, as the kernel says."""
        if cpu is None or cpu < 0:
            if self.unpinned is None:
                return None  # the default: nothing to do, nothing read
            target, self.unpinned = self.unpinned, None
        else:
            if self.unpinned is None:
                self.unpinned = os.sched_getaffinity(0)
            target = {cpu}
        # every block again: threads started since (or an affinity the candidate widened) are put back
        threads = [int(t) for t in os.listdir("/proc/self/task")] if os.path.isdir("/proc/self/task") else [0]
        allowed = set()
        for tid in threads:
            try:
                os.sched_setaffinity(tid, target)
            except OSError:
                pass  # a thread that just ended, or a CPU we may not use: the reply says what stuck
            try:
                allowed |= os.sched_getaffinity(tid)
            except OSError:
                pass
        return sorted(allowed)

    @profiler.nvtx_range("warmup")
    def cmd_warmup(self, req):
        which, n, t0 = req.get("which", "model"), 0, time.perf_counter()
        try:
            while n < req.get("min_calls", 3) or (time.perf_counter() - t0) * 1000 < req.get("min_ms", 100):
                self.timed(which, self.timing_sets[n % len(self.timing_sets)])
                n += 1
        except Exception as exc:
            raise WorkerError("runtime_error", "%s: %s" % (type(exc).__name__, exc), tail(traceback.format_exc()))
        return {"calls": n, "seconds": time.perf_counter() - t0}

    def refresh(self, k, fresh):
        """Timing slot k gets new values (a set get_inputs drew), written into its tensors: the same
        objects at the same addresses, new values for every timed call. A result kept from an earlier call
        (by pointer, object or shape) is then stale, and every timed call is checked."""
        slot = self.timing_sets[k]
        with torch.no_grad():
            for i, (x, y) in enumerate(zip(slot, fresh)):
                if (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape
                        and x.dtype == y.dtype):
                    x.copy_(y)
                else:
                    slot[i] = y
        del fresh

    def snapshot(self, outs, how):
        """A timed call's outputs, frozen before the reply so the parent checks what this call returned:
        "memfd", a sealed memfd holding them as safetensors (the parent compares it); "share", exported
        for the reference worker to take (exchange.py; sealed on the CPU). Both sides do the same, so
        their blocks cost the same. Returns the description to send, or None."""
        outs = as_outputs(outs)
        if how == "memfd":
            self.reply_fds.append(sbtensors.save_sealed({"out%d" % i: t for i, t in enumerate(outs)}))
            return None
        if how == "share":
            try:
                shared, fd = self.exporter.export(outs, self.device)
            except exchange.ExchangeError as exc:
                raise WorkerError("runtime_error", "sharing the outputs failed: %s" % exc)
            self.reply_fds.append(fd)
            return shared
        return None

    def cmd_time(self, req):
        """A block of timed calls, back to back: call j uses timing slot sets[j] and seed seeds[j]. With
        "fresh", slot sets[j] first gets new values drawn under seeds[j] (refresh); with "snapshot", each
        call's outputs are frozen before the next call runs (snapshot)."""
        which, n = req.get("which", "model"), len(self.timing_sets)
        sets = [k % n for k in req["sets"]]
        seeds = req.get("seeds") or [None] * len(sets)
        fresh, how = bool(req.get("fresh")), req.get("snapshot")
        shipped = None
        if req.get("inputs") is not None:  # the block's fresh inputs, drawn by the reference worker (cmd_draw)
            fds = self.channel.take_fds(1) if self.channel else []
            if not fds:
                raise WorkerError("protocol_error", "no descriptor came with the shipped inputs")
            shipped = exchange.Shipped(fds[0], req["inputs"])
        us = []
        cpus = self.pin(req.get("cpu", -1))
        # The collector paused for the block, as timeit does (eval.timing_gc): a collection lands in
        # whichever call happens to cross its allocation threshold, and the two workers allocate
        # differently, so it would fall on one side's calls more than the other's.
        paused = not req.get("gc", True) and gc.isenabled()
        if paused:
            gc.disable()
        shared = []
        try:
            trials, host, exposed, leads = [], [], 0, []
            for j, (k, seed) in enumerate(zip(sets, seeds)):
                if shipped is not None:
                    self.refresh(k, shipped.set(j))
                elif fresh and seed is not None:
                    self.refresh(k, self.draw(seed))
                out, t = self.timed(which, self.timing_sets[k], seed=seed, lead_us=req.get("lead_us", 0))
                us.append(t)
                host.append(self.last_host_us)
                exposed += bool(self.last_lead_us > 0 and self.last_exposed)
                leads.append(self.last_lead_us)
                trials += self.prof.reply().get("trial", [])
                if how:
                    d = self.snapshot(out, how)
                    if d is not None:
                        shared.append(d)
        except WorkerError:
            raise
        except Exception as exc:
            raise WorkerError("runtime_error", "%s: %s" % (type(exc).__name__, exc), tail(traceback.format_exc()))
        finally:
            if paused:
                gc.enable()
            if shipped is not None:
                shipped.close()
        self.last[which] = out
        reply = {"us": us, "host_us": host, "exposed": exposed, "lead_us": max(leads) if leads else 0}
        if shared:
            reply["shared"] = shared
        if trials:
            reply["trials"] = trials
        if cpus is not None and req.get("cpu", -1) >= 0:
            reply["cpus"] = cpus
        return reply

    # ---- shared outputs (exchange.py; the reference worker's side) ----
    def cmd_take(self, req):
        """Maps the outputs another worker shared (the descriptor that came with this request), keeps a
        copy under req["key"]. What the candidate's worker described is checked, never trusted."""
        fds = self.channel.take_fds(1) if self.channel else []
        if not fds:
            raise WorkerError("bad_outputs", "no descriptor came with the shared outputs")
        try:
            self.held[req["key"]] = exchange.take(fds[0], req.get("shared") or {}, self.device, req.get("max_bytes", 0))
        except (exchange.ExchangeError, RuntimeError, OSError, ValueError, TypeError) as exc:
            raise WorkerError("bad_outputs", "the shared outputs cannot be read: %s" % exc)
        return {"outputs": len(self.held[req["key"]])}

    def cmd_compare(self, req):
        """exchange.stats of two kept output sets; then drops the keys in "drop"."""
        try:
            e, a = self.held[req["expected"]], self.held[req["actual"]]
        except KeyError as exc:
            raise WorkerError("protocol_error", "no outputs kept under %s" % exc)
        tol = {k: tuple(v) for k, v in req.get("tol", {}).items()}
        reply = exchange.stats(e, a, tol)
        for k in req.get("drop", []):
            self.held.pop(k, None)
        return reply

    def cmd_drop(self, req):
        if req.get("all"):
            self.held.clear()
        for k in req.get("keys", []):
            self.held.pop(k, None)
        return {}

    # ---- profiling (profiler.py, docs/trace.md) ----
    def cmd_profile_start(self, req):
        return self.prof.start(req["lib"], req["trace"])

    def cmd_profile_stop(self, req):
        reply = self.prof.stop(req.get("objects_under"))
        # bytes one call must at least read and write: an achieved-bandwidth floor for a lone kernel
        last = self.last.get(req.get("which", "model"))
        reply["io_bytes"] = profiler.tensor_bytes(self.timing_sets[0] if self.timing_sets else []) + \
            profiler.tensor_bytes(last)
        return reply

    def cmd_metrics_start(self, req):
        return self.prof.metrics_start(req["lib"], req["out"])

    def cmd_metrics_stop(self, req):
        return self.prof.metrics_stop()

    def cmd_quit(self, req):
        return {}


def main():
    channel = exchange.Channel(3, 4)
    sys.stdout = sys.stderr  # nothing the loaded code prints can reach the reply channel
    w = Worker()
    w.channel = channel
    for line in channel.lines():
        req = json.loads(line)
        handler = getattr(w, "cmd_" + req.get("cmd", ""), None)
        t0 = time.perf_counter()
        w.mode = req.get("exchange")
        w.reply_fds = []
        try:
            if handler is None:
                raise WorkerError("protocol_error", "unknown command %r" % req.get("cmd"))
            reply = {"ok": True}
            reply.update(handler(req))
        except WorkerError as exc:
            reply = {"ok": False, "kind": exc.kind, "message": exc.message, "traceback": exc.tb or ""}
        except Exception as exc:  # a bug here or a crash inside torch: still an answer, never silence
            reply = {"ok": False, "kind": "runtime_error", "message": "%s: %s" % (type(exc).__name__, exc),
                     "traceback": tail(traceback.format_exc())}
        reply["wall_s"] = time.perf_counter() - t0
        if reply.get("ok") and w.reply_fds:
            reply["fds"] = len(w.reply_fds)
        channel.send(json.dumps(reply), w.reply_fds if reply.get("ok") else ())
        for fd in w.reply_fds:
            os.close(fd)
        if req.get("cmd") == "quit":
            # Straight out: Python's and torch's teardown (module finalisers, the caching allocator, the
            # CUDA context released call by call) is time the parent waits for and nothing needs; the
            # kernel frees the process's GPU memory and context when its device files close.
            sys.stderr.flush()
            sys.__stdout__.flush()
            os._exit(0)


if __name__ == "__main__":
    main()
