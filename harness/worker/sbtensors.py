# sbtensors.py - writes (and, for tests, reads) safetensors files by hand, so that workers need no
# `safetensors` package. Thin on purpose: the C parent (harness/eval/check/safetensors.c) validates and judges.
import ctypes
import fcntl
import json
import os
import struct
import sys
import tempfile

import torch

# name in the header, bytes per element
_DTYPES = {
    torch.float32: ("F32", 4),
    torch.float16: ("F16", 2),
    torch.bfloat16: ("BF16", 2),
    torch.float64: ("F64", 8),
    torch.int64: ("I64", 8),
    torch.int32: ("I32", 4),
    torch.int16: ("I16", 2),
    torch.int8: ("I8", 1),
    torch.uint8: ("U8", 1),
    torch.bool: ("BOOL", 1),
}
_BY_NAME = {name: dt for dt, (name, _) in _DTYPES.items()}

# The format is little endian and the bytes below are the machine's own; every target is LE.
if sys.byteorder != "little":
    raise ImportError("sbtensors writes the machine's byte order and needs a little-endian machine")


def _raw_bytes(t):
    """The tensor's elements as C-contiguous bytes: (the CPU tensor that owns them, a view of them).

    A view of the CPU tensor's memory rather than .numpy(): torch 2.x may have no numpy, and numpy has
    no bfloat16, so this one path serves every dtype on 1.13 and 2.x alike. Not a copy: a large output
    is written from where it lies (the caller keeps the tensor alive until then). A GPU tensor is copied
    into a pinned buffer kept for the next save (_staged).
    """
    t = t.detach()
    t = _staged(t) if t.is_cuda and t.numel() else t.to("cpu").contiguous()
    n = t.numel() * t.element_size()
    return t, memoryview((ctypes.c_char * n).from_address(t.data_ptr())) if n else memoryview(b"")


# dtype -> a pinned host buffer, grown to the largest GPU tensor saved. For 64 MiB, to("cpu") takes 49 ms
# (a fresh pageable allocation, faulted in page by page) and copy_ into a reused pinned buffer 1.3 ms;
# writing the bytes is 36-46 ms either way (scripts/bench/save_cost.py).
_PINNED = {}


def _staged(t):
    buf = _PINNED.get(t.dtype)
    if buf is None or buf.numel() < t.numel():
        buf = _PINNED[t.dtype] = torch.empty(t.numel(), dtype=t.dtype, pin_memory=True)
    host = buf[:t.numel()].view(t.shape)
    host.copy_(t)
    return host


def _header(tensors, metadata):
    """The encoded header (padded so the data section starts 8-byte aligned) and its dict."""
    header = {}
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("safetensors metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    offset = 0
    for name, t in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError("bad tensor name %r" % (name,))
        if t.dtype not in _DTYPES:
            raise ValueError("tensor %r: dtype %s cannot be stored" % (name, t.dtype))
        nbytes = t.numel() * _DTYPES[t.dtype][1]
        header[name] = {"dtype": _DTYPES[t.dtype][0], "shape": list(t.shape),
                        "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return text + b" " * (-len(text) % 8), header


def _write(f, tensors, metadata):
    """The whole file into f. Each tensor is brought to the host just before its bytes are written, so
    one staging buffer per dtype serves."""
    text, header = _header(tensors, metadata)
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for name, t in tensors.items():
        owner, data = _raw_bytes(t)
        if data.nbytes != header[name]["data_offsets"][1] - header[name]["data_offsets"][0]:
            raise ValueError("tensor %r changed size while it was saved" % name)
        f.write(data)
        del owner, data


def save(path, tensors, metadata=None):
    """Writes `tensors` (name -> tensor) in dict order; replaces `path` atomically."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            _write(f, tensors, metadata)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# Once these are set nobody, this process included, can change the memfd's bytes or size again.
SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def sealed_memfd(fill):
    """A memfd that fill(fd) writes, then sealed: returns the descriptor (the caller sends and closes it).
    What the receiver reads is what fill wrote, whatever this process does afterwards."""
    fd = os.memfd_create("stitchbench-tensors", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        fill(fd)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
    except BaseException:
        os.close(fd)
        raise
    return fd


def save_sealed(tensors, metadata=None):
    """The same file in a sealed memfd (sealed_memfd)."""
    def fill(fd):
        with os.fdopen(os.dup(fd), "wb") as f:
            _write(f, tensors, metadata)
    return sealed_memfd(fill)


def load(path):
    """Returns ({name: tensor}, metadata or {}); trusts the file (tests only, the C side validates)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    base, out = 8 + n, {}
    for name, info in header.items():
        dtype = _BY_NAME[info["dtype"]]
        begin, end = info["data_offsets"]
        if end == begin:  # frombuffer refuses an empty buffer
            out[name] = torch.empty(info["shape"], dtype=dtype)
        else:
            buf = bytearray(raw[base + begin:base + end])
            out[name] = torch.frombuffer(buf, dtype=dtype).reshape(info["shape"])
    return out, metadata
