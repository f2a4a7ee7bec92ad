# facts.py - what the worker reports about a call for the parent's runtime hack checks (docs/checks.md):
# the identity of the functions a harness relies on, thread counts, storage ranges, output kinds.
#
# Facts only: the C parent compares them and decides (harness/checks/runtime.c). Nothing here raises
# into the worker; a fact that cannot be taken is reported as missing (None).
import builtins
import os
import threading

import torch

# Functions and classes whose replacement could fake timing, synchronisation, comparison, input draws
# or what the worker reports (H08). Taken before the candidate is imported; compared after its import
# and after each call. (module or class path, attribute)
WATCHED = [
    ("torch", "allclose"), ("torch", "equal"), ("torch", "isclose"), ("torch", "manual_seed"),
    ("torch", "rand"), ("torch", "randn"), ("torch", "randint"), ("torch", "no_grad"), ("torch", "Tensor"),
    ("torch.cuda", "synchronize"), ("torch.cuda", "Event"), ("torch.cuda", "current_stream"),
    ("torch.cuda", "Stream"), ("torch.cuda", "empty_cache"),
    ("torch.cuda.Event", "record"), ("torch.cuda.Event", "elapsed_time"), ("torch.cuda.Event", "synchronize"),
    ("torch.cuda.Event", "query"),
    ("torch.Tensor", "sum"), ("torch.Tensor", "to"), ("torch.Tensor", "detach"), ("torch.Tensor", "contiguous"),
    ("torch.Tensor", "numel"), ("torch.Tensor", "element_size"), ("torch.Tensor", "data_ptr"),
    ("torch.Tensor", "copy_"), ("torch.Tensor", "cpu"), ("torch.Tensor", "is_contiguous"),
    ("torch.Tensor", "__eq__"), ("torch.Tensor", "__mul__"),
    ("torch.nn.Module", "__call__"),
    ("time", "perf_counter"), ("time", "perf_counter_ns"), ("time", "time"), ("time", "time_ns"),
    ("time", "monotonic"), ("time", "monotonic_ns"),
    ("json", "dumps"), ("json", "loads"), ("ctypes", "string_at"), ("ctypes", "c_char"), ("builtins", "memoryview"),
    ("builtins", "isinstance"), ("builtins", "type"), ("builtins", "len"), ("builtins", "float"),
    ("builtins", "sum"), ("builtins", "getattr"),
    ("sbtensors", "save"), ("sbtensors", "_raw_bytes"),
    ("facts", "changed"), ("facts", "threads"), ("facts", "output_facts"), ("facts", "storage_range"),
]


def _resolve(path, modules):
    """The object a dotted path names: a module from `modules` (or sys.modules), then attributes."""
    import sys
    head, *rest = path.split(".")
    obj = modules.get(head) or sys.modules.get(head)
    for name in rest:
        obj = _static_get(obj, name)
    return obj


def _static_get(obj, name):
    """The attribute as stored, without calling descriptors: a class attribute read through the class
    (a classmethod, say) is a new object each time and would always look replaced."""
    if obj is None:
        return None
    if isinstance(obj, type):
        for k in obj.__mro__:
            if name in vars(k):
                return vars(k)[name]
        return None
    try:
        return vars(obj).get(name)
    except TypeError:
        return getattr(obj, name, None)


class Identity:
    """The watched objects as they were when the worker started (before any candidate code ran)."""

    def __init__(self, modules, extra=()):
        self.modules = dict(modules)
        self.modules.setdefault("builtins", builtins)
        self.original = {}
        for owner, name in list(WATCHED) + list(extra):
            try:
                self.original[owner + "." + name] = _static_get(_resolve(owner, self.modules), name)
            except Exception:  # an owner this torch lacks: nothing to watch
                pass

    def changed(self):
        """Dotted names whose object is no longer the original one (replaced or deleted)."""
        return changed(self)


def changed(identity):
    out = []
    for key, orig in identity.original.items():
        owner, _, name = key.rpartition(".")
        try:
            now = _static_get(_resolve(owner, identity.modules), name)
        except Exception:
            now = None
        if now is not orig:
            out.append(key)
    return out


def threads():
    """Python threads alive and the OS threads of this process, with their ids."""
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/self/task"))
    except OSError:
        tids = []
    return {"python": threading.active_count(), "os": len(tids), "tids": tids}


def thread_delta(before, after):
    """The counts before and after a call, and how many OS threads are new (ids not there before)."""
    new = len(set(after["tids"]) - set(before["tids"]))
    return {"python": [before["python"], after["python"]], "os": [before["os"], after["os"]], "new": new}


def storage_range(t):
    """[address, bytes] of the memory that holds t's elements (its whole storage), or None."""
    try:
        if t.is_meta:
            return None
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        ptr, n = int(s.data_ptr()), int(s.nbytes())
        return [ptr, n] if ptr else None
    except Exception:
        return None


def ranges(tensors, limit=4096):
    """Storage ranges of tensors, without repeats, at most `limit`."""
    seen, out = set(), []
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            continue
        r = storage_range(t)
        if r and tuple(r) not in seen:
            seen.add(tuple(r))
            out.append(r)
            if len(out) >= limit:
                break
    return out


def model_ranges(model):
    """Where the model's parameters and buffers live: an output there is a stored tensor, not a result."""
    if not isinstance(model, torch.nn.Module):
        return []
    try:
        return ranges(list(model.parameters()) + list(model.buffers()))
    except Exception:
        return []


def output_facts(t):
    """What kind of tensor an output is. type() is taken first, before any of t's own methods run."""
    kind = type(t)
    facts = {"type": kind.__module__ + "." + kind.__qualname__, "exact": kind is torch.Tensor}
    try:
        facts.update(layout=str(t.layout), contiguous=bool(t.is_contiguous()), device=str(t.device),
                     meta=bool(t.is_meta), storage=storage_range(t))
    except Exception as exc:
        facts["error"] = "%s: %s" % (type(exc).__name__, exc)
    return facts
