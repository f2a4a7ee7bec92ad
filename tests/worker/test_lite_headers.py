# test_lite_headers.py - eval.lite_headers: load_inline builds first read torch/types.h, torch/extension.h
# and torch/torch.h as headers made for the sources (harness/worker/headers.py), then the lean headers,
# then the sources as written. Here the headers are written and real C++ extensions are built with them on
# the CPU (the binding file parses them as a CUDA source would); their speed on a GPU node is measured by
# `make bench-eval` (BENCHMARKS.md).
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import headers  # noqa: E402
import worker  # noqa: E402

torch = pytest.importorskip("torch")
import torch.utils.cpp_extension as ext  # noqa: E402

RELU = r"""
#include <torch/extension.h>
torch::Tensor relu_fwd(torch::Tensor x) {
    TORCH_CHECK(x.dtype() == torch::kFloat32, "float only");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    auto n = at::zeros({1}, xc.options());
    const float *in = xc.data_ptr<float>();
    float *out = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); i++)
        out[i] = in[i] > 0.f ? in[i] : 0.f;
    return y + n;
}
"""


def include_dirs():
    return ext.include_paths()


def has_torch_headers():
    return any(os.path.exists(os.path.join(d, "torch", "extension.h")) for d in include_dirs())


needs_headers = pytest.mark.skipif(not has_torch_headers(), reason="torch's C++ headers are not installed "
                                   "(Debian: libtorch-dev; scripts/setup.sh installs it)")


def test_the_ops_a_source_calls_get_their_header_and_nothing_else(tmp_path):
    (tmp_path / "ATen" / "ops").mkdir(parents=True)
    for op in ("empty_like", "zeros", "relu"):
        (tmp_path / "ATen" / "ops" / (op + ".h")).write_text("")
    text = "auto y = torch::empty_like(x); auto z = at :: zeros({1}); torch::Tensor t; x.relu(); torch::nope(1);"
    assert headers.called_ops(text, [str(tmp_path)]) == ["empty_like", "zeros"]


def test_lite_headers_declare_torchs_names_and_only_the_ops_called(tmp_path):
    ops = headers.write_lite_headers(str(tmp_path), RELU, None, include_dirs())
    types_h = (tmp_path / "torch" / "types.h").read_text()
    if has_torch_headers():
        assert ops == ["empty_like", "zeros"]
    assert "#include <ATen/ops/empty_like.h>" in types_h or not has_torch_headers()
    assert "ATen/ATen.h" not in types_h and "constexpr auto kFloat32 = at::kFloat;" in types_h
    assert "#include <torch/types.h>" in (tmp_path / "torch" / "extension.h").read_text()
    assert "#include <torch/types.h>" in (tmp_path / "torch" / "torch.h").read_text()


@pytest.mark.parametrize("src", ["#include <torch/python.h>\n", "torch::nn::Linear l(1, 1);",
                                 "TORCH_LIBRARY(ns, m) {}", "auto n = torch::cuda::device_count();",
                                 "#include <torch/csrc/api/include/torch/nn.h>\n"])
def test_what_the_lite_headers_cannot_give_is_not_tried(src):
    assert not headers.lite_applies(src, None)
    assert not headers.lite_applies("", [src])
    assert headers.lite_applies(RELU, None)
    assert not headers.lite_applies(None, None)


def test_levels_in_order_lite_lean_as_written(tmp_path, monkeypatch):
    # a recorder in place of load_inline (CUDA sources need a CUDA torch): it refuses the first two
    # levels, to check the order, the flags each gets and what the build reports
    kernel = "#include <torch/extension.h>\n__global__ void k(float *x) { x[0] = 1; }\n"
    seen = []

    def recorder(name, cpp_sources, cuda_sources=None, *args, **kwargs):
        seen.append((cuda_sources, list(kwargs.get("extra_cflags") or []),
                     list(kwargs.get("extra_cuda_cflags") or [])))
        if len(seen) < 3:
            raise RuntimeError("error: something is undefined")
        return "module"

    monkeypatch.setattr(ext, "load_inline", recorder)
    w = worker.Worker()
    w.patch_load_inline(str(tmp_path), lean_headers=True, lite_headers=True)
    assert ext.load_inline("sb_lite_probe", "", kernel, extra_cuda_cflags=["-O3"]) == "module"
    (lite_src, lite_c, lite_cu), (lean_src, lean_c, lean_cu), (aw_src, aw_c, aw_cu) = seen
    folder = os.path.join(str(tmp_path), w.builds[-1]["key"], "sb-lite")
    assert lite_src == kernel and lite_c == ["-I" + folder] and lite_cu == ["-O3", "-I" + folder]
    assert os.path.isfile(os.path.join(folder, "torch", "types.h"))
    assert "torch/types.h" in lean_src and lean_c == [] and lean_cu == ["-O3"]
    assert aw_src == kernel and aw_cu == ["-O3"]
    assert w.builds[-1]["headers"] == "as-written" and w.builds[-1]["lean_headers"] is False

    seen.clear()
    monkeypatch.setattr(ext, "load_inline", lambda *a, **k: seen.append(a[2]) or "module")
    w2 = worker.Worker()
    w2.patch_load_inline(str(tmp_path / "two"), lean_headers=True, lite_headers=True)
    ext.load_inline("sb_lite_probe", "", kernel)
    assert seen == [kernel] and w2.builds[-1]["headers"] == "lite" and w2.builds[-1]["lean_headers"] is True


@needs_headers
def test_a_cpp_extension_built_with_lite_headers_computes_the_same(tmp_path):
    w = worker.Worker()
    w.patch_load_inline(str(tmp_path), lean_headers=True, lite_headers=True)
    mod = ext.load_inline(name="sb_lite_relu", cpp_sources=RELU, functions=["relu_fwd"])
    assert w.builds[-1]["headers"] == "lite", w.builds[-1]
    x = torch.randn(1000)
    assert torch.equal(mod.relu_fwd(x), torch.relu(x))
    with pytest.raises(RuntimeError, match="float only"):  # TORCH_CHECK's error reaches Python as torch's
        mod.relu_fwd(x.double())
    # a second worker imports the finished build and reports its level
    w2 = worker.Worker()
    w2.patch_load_inline(str(tmp_path), lean_headers=True, lite_headers=True)
    ext.load_inline(name="sb_lite_relu", cpp_sources=RELU, functions=["relu_fwd"])
    assert w2.builds[-1]["cached"] is True and w2.builds[-1]["headers"] == "lite"


@needs_headers
def test_a_source_the_lite_headers_cannot_compile_is_built_as_written(tmp_path):
    # torch::special is torch's C++ API (torch/special.h): in torch/extension.h, not in the lite headers
    src = RELU + "\ntorch::Tensor sig(torch::Tensor x) { return torch::special::expit(x); }\n"
    w = worker.Worker()
    w.patch_load_inline(str(tmp_path), lean_headers=True, lite_headers=True)
    mod = ext.load_inline(name="sb_lite_special", cpp_sources=src, functions=["relu_fwd", "sig"])
    assert w.builds[-1]["headers"] == "as-written", w.builds[-1]
    x = torch.randn(100)
    assert torch.allclose(mod.sig(x), torch.sigmoid(x))


def test_the_lite_cuda_context_leaves_out_aten_context_and_unused_checks(tmp_path):
    (tmp_path / "inc" / "ATen" / "cuda").mkdir(parents=True)
    (tmp_path / "inc" / "ATen" / "cuda" / "CUDAContextLight.h").write_text("")
    headers.write_lite_headers(str(tmp_path / "a"), "", "k<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>();",
                               [str(tmp_path / "inc")])
    plain = (tmp_path / "a" / "ATen" / "cuda" / "CUDAContext.h").read_text()
    assert "#include <ATen/cuda/CUDAContextLight.h>" in plain and "#include <c10/cuda/CUDAStream.h>" in plain
    assert "#include <ATen/Context.h>" not in plain and "#include <ATen/cuda/Exceptions.h>" not in plain
    headers.write_lite_headers(str(tmp_path / "b"), "", "AT_CUDA_CHECK(cudaGetLastError());", [str(tmp_path / "inc")])
    assert "#include <ATen/cuda/Exceptions.h>" in (tmp_path / "b" / "ATen" / "cuda" / "CUDAContext.h").read_text()
    # a torch without CUDA headers gets no CUDAContext.h of ours (the real one's error is the one seen)
    headers.write_lite_headers(str(tmp_path / "c"), "", "int x;", [str(tmp_path / "none")])
    assert not (tmp_path / "c" / "ATen").exists()
