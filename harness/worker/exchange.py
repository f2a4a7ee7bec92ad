"""Shared outputs (eval.exchange = shared, DESIGN §5.4): a call's outputs handed from one worker to another
as a file descriptor instead of a file, and compared where they land.

The candidate's worker copies its outputs into memory it can export: device memory from the CUDA driver's
virtual memory API (cuMemCreate with a POSIX descriptor) on a GPU, a memfd on the CPU. The descriptor
travels with the reply over the Unix socket of the command channel; the parent passes it on to the trusted
reference worker, which maps it, copies the bytes into its own memory and closes it. Nothing is written to
disk, and on a GPU no byte crosses to the host. The reference worker then compares the copy with its own
outputs (`stats`): the numbers compare.c reports for files, computed on the device, for the parent to
judge. Thin on purpose: the rule (tolerances, pass or fail, the messages) is the parent's.
"""
import ctypes
import fcntl
import hashlib
import mmap
import os
import socket
import stat
import struct

import torch

import sbtensors

# torch dtype -> the safetensors name the parent knows (check.h's tolerances are per name)
DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
          torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8",
          torch.bool: "BOOL"}
BY_NAME = {v: k for k, v in DTYPES.items()}
ALIGN = 256        # each output starts at a multiple of this in the shared buffer
# Elements per step of the comparison and the digest. On a GPU, large steps keep the kernel launches few
# (and bound the float64 temporaries, ~3 GB). On the CPU, a step's temporaries stay in the cache and the
# allocator reuses them: a 4096 x 4096 comparison takes under a second in steps of 2^16 and ~20 s in steps
# of 2^26, whose fresh half-gigabyte temporaries are page-faulted in again for each of their ~30 passes.
CHUNK = 1 << 26
CPU_CHUNK = 1 << 16


def _step(t):
    return CPU_CHUNK if t.device.type == "cpu" else CHUNK


# a memfd with these seals can no longer change, whoever holds it (sbtensors.sealed_memfd adds them)
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


class ExchangeError(Exception):
    pass


# ---------- the command channel: lines of JSON, descriptors alongside ----------

class Channel:
    """Requests on fd 3, replies on fd 4, both Unix sockets (proc.c). A descriptor that comes with a
    request is queued; the request that names "fds": n takes the n oldest."""

    def __init__(self, rfd=3, wfd=4):
        # pipes still work (a test's, or an older parent's), without descriptors
        self.rfd, self.wfd = rfd, wfd
        self.rsock = socket.socket(fileno=rfd) if stat.S_ISSOCK(os.fstat(rfd).st_mode) else None
        self.wsock = socket.socket(fileno=wfd) if stat.S_ISSOCK(os.fstat(wfd).st_mode) else None
        self.buf = b""
        self.fds = []

    def lines(self):
        while True:
            while b"\n" not in self.buf:
                if self.rsock is not None:
                    data, fds, _, _ = socket.recv_fds(self.rsock, 1 << 16, 8)
                    self.fds.extend(fds)
                else:
                    data = os.read(self.rfd, 1 << 16)
                if not data:
                    return
                self.buf += data
            line, self.buf = self.buf.split(b"\n", 1)
            yield line.decode("utf-8")

    def take_fds(self, n):
        got, self.fds = self.fds[:n], self.fds[n:]
        return got

    def send(self, line, fds=()):
        data = (line + "\n").encode("utf-8")
        if self.wsock is None:
            while data:
                data = data[os.write(self.wfd, data):]
            return
        if fds:
            sent = socket.send_fds(self.wsock, [data], list(fds))
            data = data[sent:]
        if data:
            self.wsock.sendall(data)


# ---------- the CUDA driver's exportable memory ----------

class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


_PINNED, _POSIX_FD, _ON_DEVICE, _READWRITE = 1, 1, 1, 3
_driver = None


def _cu():
    global _driver
    if _driver is None:
        _driver = ctypes.CDLL("libcuda.so.1")
    return _driver


class OutOfMemory(ExchangeError):
    """The device had no room for the shared copy (CUDA_ERROR_OUT_OF_MEMORY)."""


_OUT_OF_MEMORY = 2


def _check(rc, what):
    if rc == _OUT_OF_MEMORY:
        raise OutOfMemory("%s failed: the device is out of memory (CUDA driver error %d)" % (what, rc))
    if rc != 0:
        raise ExchangeError("%s failed (CUDA driver error %d)" % (what, rc))


class DeviceMapping:
    """`size` bytes of device memory mapped into this process: made here (handle 0) or imported from a
    descriptor. `tensor` is a uint8 view of all of it."""

    def __init__(self, device, size, fd=None):
        cu = _cu()
        self.device, self.handle, self.ptr, self.size = device, ctypes.c_ulonglong(0), ctypes.c_ulonglong(0), 0
        loc = _Location(_ON_DEVICE, device.index if device.index is not None else torch.cuda.current_device())
        prop = _AllocProp(type=_PINNED, requestedHandleTypes=_POSIX_FD, location=loc)
        gran = ctypes.c_size_t(0)
        _check(cu.cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(prop), 0), "cuMemGetAllocationGranularity")
        size = max(int(size), 1)
        size = (size + gran.value - 1) // gran.value * gran.value
        if fd is None:
            _check(cu.cuMemCreate(ctypes.byref(self.handle), ctypes.c_size_t(size), ctypes.byref(prop), 0), "cuMemCreate")
        else:
            _check(cu.cuMemImportFromShareableHandle(ctypes.byref(self.handle), ctypes.c_void_p(fd), _POSIX_FD),
                   "importing the shared outputs")
        try:
            _check(cu.cuMemAddressReserve(ctypes.byref(self.ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                          ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)), "cuMemAddressReserve")
            _check(cu.cuMemMap(self.ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), self.handle, ctypes.c_ulonglong(0)),
                   "mapping the shared outputs (larger than the allocation?)")
            self.size = size
            access = _AccessDesc(loc, _READWRITE)
            _check(cu.cuMemSetAccess(self.ptr, ctypes.c_size_t(size), ctypes.byref(access), ctypes.c_size_t(1)),
                   "cuMemSetAccess")
        except ExchangeError:
            self.close()
            raise

        class _View:
            pass
        view = _View()
        view.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (self.ptr.value, False),
                                         "version": 3, "strides": None}
        self.tensor = torch.as_tensor(view, device=device)

    def export(self):
        fd = ctypes.c_int(-1)
        _check(_cu().cuMemExportToShareableHandle(ctypes.byref(fd), self.handle, _POSIX_FD, ctypes.c_ulonglong(0)),
               "cuMemExportToShareableHandle")
        return fd.value

    def close(self):
        cu = _cu()
        self.tensor = None
        if self.size:
            cu.cuMemUnmap(self.ptr, ctypes.c_size_t(self.size))
        if self.ptr.value:
            cu.cuMemAddressFree(self.ptr, ctypes.c_size_t(self.size))
        if self.handle.value:
            cu.cuMemRelease(self.handle)
        self.size, self.ptr, self.handle = 0, ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)


# ---------- the candidate's side: export ----------

def layout(outs):
    """Where each output goes in the shared buffer, and the buffer's size."""
    descr, off = [], 0
    for i, t in enumerate(outs):
        if t.dtype not in DTYPES:
            raise ExchangeError("output %d has dtype %s, which cannot be compared" % (i, t.dtype))
        n = t.numel() * t.element_size()
        descr.append({"name": "out%d" % i, "dtype": DTYPES[t.dtype], "shape": list(t.shape), "offset": off, "nbytes": n})
        off += (n + ALIGN - 1) // ALIGN * ALIGN
    return descr, off


def _bytes_of(t):
    t = t.detach().contiguous().reshape(-1)
    return t.view(torch.uint8) if t.dtype != torch.uint8 else t


class Exporter:
    """Each export in memory of its own: on a GPU a fresh allocation, unmapped and released here as soon as
    its descriptor exists. The descriptor alone keeps it alive (the driver frees an allocation once every
    handle, shareable ones included, is gone), so it lasts until the reference worker has copied it, and
    no later call of this process can write to it.

    A problem whose outputs fill most of the device leaves no room for a second copy there. Then the
    allocator's cache is given back and the allocation tried once more; failing that, the outputs go to
    the host in a sealed memfd (as on the CPU), marked "where": "host". That copy is just as frozen, and
    the receiver checks its seals whatever the sender claims, so the fallback changes the cost, not what
    can be trusted."""

    def export(self, outs, device, host=False):
        """Returns ({"bytes", "outputs"[, "where"]}, fd): fd is this process's to send and then close.
        host: skip the device (the fallback's path, taken directly)."""
        descr, total = layout(outs)
        if device.type != "cuda":
            return {"bytes": total, "outputs": descr}, sealed_memfd(outs, descr, total)
        if not host:
            try:
                return {"bytes": total, "outputs": descr}, self._on_device(outs, descr, total, device)
            except OutOfMemory:
                torch.cuda.empty_cache()
                try:
                    return {"bytes": total, "outputs": descr}, self._on_device(outs, descr, total, device)
                except OutOfMemory:
                    pass
        return {"bytes": total, "outputs": descr, "where": "host"}, sealed_memfd(outs, descr, total)

    @staticmethod
    def _on_device(outs, descr, total, device):
        buf = DeviceMapping(device, total)
        try:
            for d, t in zip(descr, outs):
                buf.tensor[d["offset"]:d["offset"] + d["nbytes"]].copy_(_bytes_of(t))
            torch.cuda.synchronize(device)
            return buf.export()
        finally:
            buf.close()


def sealed_memfd(tensors, descr, total):
    """A sealed memfd holding each tensor's bytes at its place in descr (layout): frozen before the reply,
    so what the receiver reads is what this call produced, whatever this process does next."""
    def fill(fd):
        os.ftruncate(fd, max(total, 1))
        with mmap.mmap(fd, max(total, 1)) as m:
            view = torch.frombuffer(m, dtype=torch.uint8)
            for d, t in zip(descr, tensors):
                view[d["offset"]:d["offset"] + d["nbytes"]].copy_(_bytes_of(t))
            del view
    return sbtensors.sealed_memfd(fill)


# ---------- inputs shipped by the reference worker (the CPU's timed calls) ----------

def pack_inputs(sets):
    """Input sets (lists of get_inputs' values) into one sealed memfd: ({"sets", "bytes"}, fd). A tensor
    is described by its place in the memfd; any other value travels as itself (JSON)."""
    tensors, where = [], []
    for xs in sets:
        for x in xs:
            if isinstance(x, torch.Tensor):
                tensors.append(x.detach().cpu())
    descr, total = layout(tensors)
    it = iter(descr)
    for xs in sets:
        where.append([dict(next(it)) if isinstance(x, torch.Tensor) else {"value": x} for x in xs])
    return {"sets": where, "bytes": total}, sealed_memfd(tensors, descr, total)


class Shipped:
    """The input sets of one block as the worker reads them: set(j) is the j-th set's values, views of
    a private copy-on-write mapping of the memfd (nothing written here reaches the sender's)."""

    def __init__(self, fd, shipped):
        self.sets, total = shipped.get("sets") or [], int(shipped.get("bytes", 0))
        try:
            self.map = mmap.mmap(fd, max(total, 1), flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self.raw = torch.frombuffer(self.map, dtype=torch.uint8)

    def set(self, j):
        return [_typed(self.raw, d) if "dtype" in d else d.get("value") for d in self.sets[j]]

    def close(self):
        self.raw = None
        self.map.close()


# ---------- the reference worker's side: import and compare ----------

def _check_descr(shared, limit):
    total = int(shared.get("bytes", -1))
    if total < 0 or (limit and total > limit):
        raise ExchangeError("the shared outputs claim %d bytes, more than the %d allowed" % (total, limit))
    outs = shared.get("outputs")
    if not isinstance(outs, list) or len(outs) > 64:
        raise ExchangeError("the shared outputs are not described")
    for d in outs:
        dtype = BY_NAME.get(d.get("dtype"))
        shape = d.get("shape")
        if dtype is None or not isinstance(shape, list) or not all(isinstance(x, int) and x >= 0 for x in shape):
            raise ExchangeError("an output is described with dtype %r, shape %r" % (d.get("dtype"), shape))
        numel = 1
        for x in shape:
            numel *= x
        off, n = d.get("offset"), d.get("nbytes")
        if (not isinstance(off, int) or not isinstance(n, int) or off < 0 or off % ALIGN
                or n != numel * torch.empty(0, dtype=dtype).element_size() or off + n > total):
            raise ExchangeError("output %r lies outside the shared buffer or has the wrong size" % d.get("name"))
    return total, outs


def take(fd, shared, device, limit):
    """The outputs behind fd, copied into this process's memory: [(name, tensor)]. Closes fd. On a GPU
    the copy lands on `device`, or stays on the host when the sender shared host memory and the device
    has no room for it (compare_one then brings it over a step at a time)."""
    try:
        total, descr = _check_descr(shared, limit)
        if device.type == "cuda" and shared.get("where") != "host":
            m = DeviceMapping(device, total, fd=fd)
            try:
                outs = [(d["name"], _typed(m.tensor, d).clone()) for d in descr]
                torch.cuda.synchronize(device)
            finally:
                m.close()
            return outs
        raw = _read_sealed(fd, total)
        if device.type == "cuda":
            try:
                raw = raw.to(device)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
        return [(d["name"], _typed(raw, d)) for d in descr]
    finally:
        os.close(fd)


def _read_sealed(fd, total):
    """total bytes of a sealed memfd in one copy, read straight into this process's own buffer."""
    if (fcntl.fcntl(fd, fcntl.F_GET_SEALS) & SEALS) != SEALS:
        raise ExchangeError("the shared outputs are not sealed: they could still change after the reply")
    size = os.fstat(fd).st_size
    if size < total:
        raise ExchangeError("the shared outputs hold %d bytes, not the %d described" % (size, total))
    raw = torch.empty(total, dtype=torch.uint8)
    view, done = memoryview(raw.numpy()), 0
    while done < total:
        n = os.preadv(fd, [view[done:]], done)
        if n <= 0:
            raise ExchangeError("the shared outputs ended after %d of %d bytes" % (done, total))
        done += n
    return raw


def _typed(raw, d):
    t = raw[d["offset"]:d["offset"] + d["nbytes"]]
    dtype = BY_NAME[d["dtype"]]
    return (t.view(dtype) if dtype != torch.uint8 else t).reshape(d["shape"])


def held(outs):
    """A worker's own outputs, as `take` returns them."""
    return [("out%d" % i, t.detach()) for i, t in enumerate(outs)]


def digest(outs):
    """64 bits over every output's name, dtype, shape and bytes, as hex: equal outputs always agree. A
    position-weighted sum of the 8-byte words (wrapping, so the order of the additions does not matter),
    then a real hash over that and the header. Only compared within one evaluation."""
    h = hashlib.blake2b(digest_size=8)
    for name, t in outs:
        h.update(("%s %s %d %s;" % (name, DTYPES.get(t.dtype, str(t.dtype)), t.dim(), list(t.shape))).encode())
        b = _bytes_of(t)
        n8 = b.numel() // 8
        acc = 0
        if n8:
            words = b[:n8 * 8].view(torch.int64)
            step = _step(words)
            for lo in range(0, n8, step):
                w = words[lo:lo + step]
                k = torch.arange(lo, lo + w.numel(), dtype=torch.int64, device=w.device) * 2 + 1
                acc = (acc + int(((w ^ (w >> 29)) * k).sum())) & 0xFFFFFFFFFFFFFFFF
        h.update(struct.pack("<Q", acc))
        h.update(bytes(b[n8 * 8:].cpu().tolist()))
    return h.hexdigest()


def _zero(t):
    return not bool(_bytes_of(t).any()) if t.numel() else True


def _equal_bytes(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    x, y = _bytes_of(a), _bytes_of(b)
    if x.device == y.device:
        return torch.equal(x, y)
    step = _step(x) * 8
    return all(torch.equal(x[lo:lo + step], y[lo:lo + step].to(x.device)) for lo in range(0, x.numel(), step))


def _value(t, i):
    v = t.reshape(-1)[i].item()
    return bool(v) if isinstance(v, bool) else v


def compare_one(e, a, tol):
    """compare.c's statistics for one output, computed here: the parent judges them."""
    r = {"dtype": DTYPES.get(e.dtype, str(e.dtype)), "actual_dtype": DTYPES.get(a.dtype, str(a.dtype)),
         "shape": list(e.shape), "actual_shape": list(a.shape), "ndim": a.dim()}
    if e.dtype != a.dtype or e.shape != a.shape:
        return r
    atol, rtol = tol.get(r["dtype"], (0.0, 0.0))
    n = e.numel()
    ef, af = e.reshape(-1), a.reshape(-1)
    floating = e.is_floating_point()
    if n and _equal_bytes(e, a) and not (floating and bool(torch.isnan(ef).any())):
        # the same bits and no NaN: every difference is 0, so the first element is the worst (as in compare.c)
        r.update({"n_mismatched": 0, "n_nan": 0, "n_inf": 0, "max_abs": 0.0, "max_rel": 0.0, "worst_index": 0,
                  "numel": n, "worst_expected": _value(e, 0), "worst_actual": _value(a, 0)})
        return r
    mism = nnan = ninf = 0
    max_abs, max_abs_i, max_rel = -1.0, -1, 0.0
    worst, worst_i = float("-inf"), -1
    step = _step(ef)
    for lo in range(0, n, step):
        # an output kept on the host (take) comes to the device a step at a time
        x, y = ef[lo:lo + step].double(), af[lo:lo + step].to(ef.device).double()
        if floating:
            fin = torch.isfinite(x) & torch.isfinite(y)
            same_inf = ~fin & (x == y)  # the same infinity: a difference of 0 (NaN never equals)
            ok = fin | same_inf
            bad = ~ok                   # NaN on either side, or an infinity against anything else
            d = torch.where(fin, (y - x).abs(), torch.zeros_like(x))
            ae = torch.where(fin, x.abs(), torch.zeros_like(x))
            nan_pair = torch.isnan(x) | torch.isnan(y)
            xfin = torch.isfinite(x)
            nnan += int((bad & xfin & torch.isnan(y)).sum())
            ninf += int((bad & xfin & torch.isinf(y)).sum())
            dmax = torch.where(ok, d, torch.where(nan_pair, torch.full_like(d, -1.0), torch.full_like(d, float("inf"))))
            rel_inf = bool((bad & ~nan_pair & xfin & (x != 0)).any())
        else:
            x0, y0 = ef[lo:lo + step], af[lo:lo + step].to(ef.device)
            ok = torch.ones_like(x, dtype=torch.bool)
            bad = ~ok
            # integers that differ differ by at least 1, even where a double rounds them together
            d = torch.where(y0 != x0, torch.clamp((y - x).abs(), min=1.0), torch.zeros_like(x))
            ae = x.abs()
            dmax = d
            rel_inf = False
        excess = d - (atol + rtol * ae)
        exceeded = ok & (excess > 0)
        mism += int(exceeded.sum()) + int(bad.sum())
        ex = torch.where(bad, torch.full_like(excess, float("inf")), torch.where(ok, excess, torch.full_like(excess, float("-inf"))))
        if x.numel():
            m, i = torch.max(ex, 0)
            if float(m) > worst:
                worst, worst_i = float(m), lo + int(i)
            m, i = torch.max(dmax, 0)
            if float(m) > max_abs:
                max_abs, max_abs_i = float(m), lo + int(i)
            rel = torch.where(ok & (ae != 0), d / torch.where(ae != 0, ae, torch.ones_like(ae)), torch.zeros_like(d))
            max_rel = max(max_rel, float(rel.max()))
        if rel_inf:
            max_rel = float("inf")
    passed = mism == 0
    wi = max_abs_i if passed else worst_i
    r.update({"n_mismatched": mism, "n_nan": nnan, "n_inf": ninf, "max_abs": max(max_abs, 0.0), "max_rel": max_rel,
              "worst_index": wi, "numel": n})
    if wi >= 0:
        r["worst_expected"], r["worst_actual"] = _value(e, wi), _value(a, wi)
    return r


def _num(v):
    """JSON has no infinity or NaN: those travel as strings the parent reads back."""
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return repr(v)
    return v


def stats(expected, actual, tol):
    """outputs.c's comparison of two output sets (see check.h), without the judgement."""
    out = {"bitwise": len(expected) == len(actual) and all(x[0] == y[0] and _equal_bytes(x[1], y[1])
                                                           for x, y in zip(expected, actual)),
           "digest_expected": digest(expected), "digest_actual": digest(actual), "count": len(actual),
           "expected_count": len(expected), "outputs": []}
    by_name = dict(actual)
    for name, e in expected:
        r = {"name": name, "zero_expected": _zero(e)}
        a = by_name.get(name)
        if a is None:
            r["missing"] = True
        else:
            r["zero_actual"] = _zero(a)
            r.update(compare_one(e, a, tol))
        out["outputs"].append({k: _num(v) for k, v in r.items()})
    return out
