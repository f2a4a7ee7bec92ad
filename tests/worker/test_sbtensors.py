"""Round trips through harness/worker/sbtensors.py, the workers' hand-written safetensors writer.

Every dtype, 0-dim and empty tensors, non-contiguous input, exact bf16 bits, header alignment, and
the official `safetensors` package as a second opinion where it is installed.
Run with: /usr/bin/python3 -m pytest -q tests/worker/test_sbtensors.py
"""

import importlib.util
import json
import struct
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "worker"))
import sbtensors  # noqa: E402

ALL_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32,
              torch.int16, torch.int8, torch.uint8, torch.bool]


def _sample(dtype, shape=(3, 4)):
    g = torch.Generator().manual_seed(7)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 100).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), shape, generator=g, dtype=dtype)


def _same(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_round_trip_every_dtype(tmp_path, dtype):
    t = _sample(dtype)
    sbtensors.save(tmp_path / "o.safetensors", {"out": t}, {"trial": "0"})
    got, meta = sbtensors.load(tmp_path / "o.safetensors")
    assert meta == {"trial": "0"}
    _same(got["out"], t)


def test_zero_dim_and_empty_round_trip(tmp_path):
    ts = {"scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3, dtype=torch.int32),
          "empty_bf16": torch.zeros(4, 0, dtype=torch.bfloat16), "after": torch.arange(3)}
    sbtensors.save(tmp_path / "o.safetensors", ts)
    got, meta = sbtensors.load(tmp_path / "o.safetensors")
    assert meta == {}
    assert list(got) == list(ts)
    for name, t in ts.items():
        _same(got[name], t)
    assert got["scalar"].dim() == 0


def test_non_contiguous_input_is_written_c_contiguous(tmp_path):
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    view = base.t()
    assert not view.is_contiguous()
    sbtensors.save(tmp_path / "o.safetensors", {"t": view})
    got, _ = sbtensors.load(tmp_path / "o.safetensors")
    _same(got["t"], view)
    assert got["t"][0].tolist() == [0.0, 4.0, 8.0]


def test_bf16_bits_survive_exactly(tmp_path):
    # 1.0, -2.5, 3.140625, +inf, a NaN with payload, the smallest subnormal, -0.0
    bits = torch.tensor([0x3F80, -0x3FE0, 0x4049, 0x7F80, 0x7FC1, 0x0001, -0x8000], dtype=torch.int16)
    t = bits.view(torch.bfloat16)
    sbtensors.save(tmp_path / "o.safetensors", {"b": t})
    got, _ = sbtensors.load(tmp_path / "o.safetensors")
    assert got["b"].dtype == torch.bfloat16
    assert torch.equal(got["b"].view(torch.int16), bits)
    assert got["b"][2].item() == 3.140625


def test_header_layout_and_alignment(tmp_path):
    for name in ["a", "ab", "abc", "a_much_longer_name_for_padding"]:
        path = tmp_path / ("%s.safetensors" % name)
        t = torch.arange(5, dtype=torch.int16)
        sbtensors.save(path, {name: t}, {"k": "v"})
        raw = path.read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        assert (8 + n) % 8 == 0
        header = json.loads(raw[8:8 + n])
        assert header[name] == {"dtype": "I16", "shape": [5], "data_offsets": [0, 10]}
        assert header["__metadata__"] == {"k": "v"}
        assert raw[8 + n:] == struct.pack("<5h", 0, 1, 2, 3, 4)  # little endian, back to back


def test_tensors_are_back_to_back_in_order(tmp_path):
    ts = {"x": torch.ones(3, dtype=torch.float64), "y": torch.ones(2, dtype=torch.int8), "z": torch.ones(1)}
    sbtensors.save(tmp_path / "o.safetensors", ts)
    raw = (tmp_path / "o.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert [header[k]["data_offsets"] for k in "xyz"] == [[0, 24], [24, 26], [26, 30]]
    assert len(raw) == 8 + n + 30


def test_save_replaces_atomically_and_leaves_no_temp(tmp_path):
    path = tmp_path / "o.safetensors"
    sbtensors.save(path, {"a": torch.zeros(2)})
    sbtensors.save(path, {"b": torch.ones(2)})
    got, _ = sbtensors.load(path)
    assert list(got) == ["b"]
    with pytest.raises(ValueError):
        sbtensors.save(path, {"c": torch.zeros(2, dtype=torch.complex64)})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.safetensors"]
    assert list(sbtensors.load(path)[0]) == ["b"]  # the failed save left the old file alone


def test_rejects_bad_names_and_metadata(tmp_path):
    with pytest.raises(ValueError):
        sbtensors.save(tmp_path / "o", {"__metadata__": torch.zeros(1)})
    with pytest.raises(TypeError):
        sbtensors.save(tmp_path / "o", {"a": torch.zeros(1)}, {"k": 1})


HAVE_SAFETENSORS = importlib.util.find_spec("safetensors") is not None


@pytest.mark.skipif(not HAVE_SAFETENSORS, reason="the safetensors package is not installed for this Python")
def test_cross_check_with_safetensors_package(tmp_path):
    from safetensors.torch import load_file, save_file
    ts = {str(dt): _sample(dt) for dt in ALL_DTYPES}
    ts["scalar"] = torch.tensor(1.5)
    ts["empty"] = torch.zeros(0, 2)
    sbtensors.save(tmp_path / "ours.safetensors", ts, {"who": "sbtensors"})
    theirs = load_file(str(tmp_path / "ours.safetensors"))
    for name, t in ts.items():
        _same(theirs[name], t)
    save_file(ts, str(tmp_path / "theirs.safetensors"), metadata={"who": "safetensors"})
    ours, meta = sbtensors.load(tmp_path / "theirs.safetensors")
    assert meta == {"who": "safetensors"}
    for name, t in ts.items():
        _same(ours[name], t)
