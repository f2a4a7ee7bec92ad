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
    ops = headers.write_lite_headers(str(tmp_path), RELU, None, include_dirs()).ops
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


def test_one_faster_level_then_as_written(tmp_path, monkeypatch):
    # a recorder in place of load_inline (CUDA sources need a CUDA torch): it refuses the first level, to
    # check the order, the flags each gets and what the build reports; a failed build costs one extra
    # build at most, so the lean level is not tried after the lite one
    kernel = "#include <torch/extension.h>\n__global__ void k(float *x) { x[0] = 1; }\n"
    seen = []

    def recorder(name, cpp_sources, cuda_sources=None, *args, **kwargs):
        seen.append((cuda_sources, list(kwargs.get("extra_cflags") or []),
                     list(kwargs.get("extra_cuda_cflags") or [])))
        if len(seen) < 2:
            raise RuntimeError("error: something is undefined")
        return "module"

    monkeypatch.setattr(ext, "load_inline", recorder)
    w = worker.Worker()
    w.patch_load_inline(str(tmp_path), lean_headers=True, lite_headers=True)
    assert ext.load_inline("sb_lite_probe", "", kernel, extra_cuda_cflags=["-O3"]) == "module"
    (lite_src, lite_c, lite_cu), (aw_src, aw_c, aw_cu) = seen
    folder = os.path.join(str(tmp_path), w.builds[-1]["key"], "sb-lite")
    # the CUDA compiler finds the extension.h without pybind11 first, then the folder both compilers share
    assert lite_src == kernel and lite_c == ["-I" + folder] and lite_cu == ["-O3", "-I" + folder + "-cu", "-I" + folder]
    assert os.path.isfile(os.path.join(folder, "torch", "types.h"))
    assert "#include <torch/csrc" not in open(os.path.join(folder + "-cu", "torch", "extension.h")).read()
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

    # a fresh worker's cache hit imports the build without torch.utils.cpp_extension (0.5 s on the GPU
    # node); the module comes in when a name other than load_inline is asked for, and stays patched
    probe = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import worker
w = worker.Worker()
w.patch_load_inline(sys.argv[2], lean_headers=True, lite_headers=True)
from torch.utils.cpp_extension import load_inline
import torch
mod = load_inline(name="sb_lite_relu", cpp_sources=sys.argv[3], functions=["relu_fwd"])
out = {"lazy": type(sys.modules["torch.utils.cpp_extension"]).__name__, "cached": w.builds[-1]["cached"],
       "same": torch.equal(mod.relu_fwd(torch.tensor([-1.0, 2.0])), torch.tensor([0.0, 2.0]))}
import torch.utils.cpp_extension as e
out["include_paths"] = len(e.include_paths()) > 0
out["real"] = type(sys.modules["torch.utils.cpp_extension"]).__name__
out["still_patched"] = sys.modules["torch.utils.cpp_extension"].load_inline is load_inline
print(json.dumps(out))
"""
    import json
    import subprocess
    r = subprocess.run([sys.executable, "-c", probe, str(ROOT / "harness" / "worker"), str(tmp_path), RELU],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {
        "lazy": "LazyCppExtension", "cached": True, "same": True, "include_paths": True, "real": "module",
        "still_patched": True}


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
    # the stream is c10's (at::cuda is c10::cuda there); the handles and device properties are not needed
    assert "#include <c10/cuda/CUDAStream.h>" in plain and "CUDAContextLight" not in plain
    assert "#include <ATen/Context.h>" not in plain and "#include <ATen/cuda/Exceptions.h>" not in plain
    headers.write_lite_headers(str(tmp_path / "h"), "", "cublasSetStream(at::cuda::getCurrentCUDABlasHandle(), s);",
                               [str(tmp_path / "inc")])
    assert "#include <ATen/cuda/CUDAContextLight.h>" in (tmp_path / "h" / "ATen" / "cuda" / "CUDAContext.h").read_text()
    headers.write_lite_headers(str(tmp_path / "b"), "", "AT_CUDA_CHECK(cudaGetLastError());", [str(tmp_path / "inc")])
    assert "#include <ATen/cuda/Exceptions.h>" in (tmp_path / "b" / "ATen" / "cuda" / "CUDAContext.h").read_text()
    # a torch without CUDA headers gets no CUDAContext.h of ours (the real one's error is the one seen)
    headers.write_lite_headers(str(tmp_path / "c"), "", "int x;", [str(tmp_path / "none")])
    assert not (tmp_path / "c" / "ATen").exists()


def test_the_cuda_compiler_reads_no_pybind11_unless_the_cuda_sources_write_python_glue(tmp_path):
    kernel = "#include <torch/extension.h>\n__global__ void k(float *x) { x[0] = 1; }\n"
    lite = headers.write_lite_headers(str(tmp_path / "a"), "torch::Tensor f(torch::Tensor x);", kernel, [])
    assert lite.cflags == ["-I" + str(tmp_path / "a")]
    assert lite.cuda_cflags == ["-I" + str(tmp_path / "a-cu"), "-I" + str(tmp_path / "a")]
    cu_ext = (tmp_path / "a-cu" / "torch" / "extension.h").read_text()
    assert "#include <torch/types.h>" in cu_ext and "#include <torch/csrc" not in cu_ext
    assert "torch/csrc/utils/pybind.h" in (tmp_path / "a" / "torch" / "extension.h").read_text()
    # bindings in the CUDA file: it reads the binding file's extension.h
    glue = kernel + "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"f\", &f); }\n"
    lite = headers.write_lite_headers(str(tmp_path / "b"), "", glue, [])
    assert lite.cuda_cflags == ["-I" + str(tmp_path / "b")] and not (tmp_path / "b-cu").exists()
    # no CUDA sources, nothing for nvcc
    assert headers.write_lite_headers(str(tmp_path / "c"), RELU, None, []).cuda_cflags == []


def test_operator_headers_are_read_without_what_none_of_them_needs(tmp_path):
    inc = tmp_path / "inc" / "ATen" / "ops"
    inc.mkdir(parents=True)
    body = ("#pragma once\n#include <ATen/Context.h>\n#include <ATen/DeviceGuard.h>\n#include <ATen/TensorUtils.h>\n"
            "#include <ATen/TracerMode.h>\n#include <ATen/core/Tensor.h>\n#include <ATen/ops/%s_ops.h>\n"
            "namespace at { inline int %s() { return 1; } }\n")
    for op in ("zeros", "empty_like"):
        (inc / (op + ".h")).write_text(body % (op, op))
    headers.write_lite_headers(str(tmp_path / "l"), "auto z = torch::zeros({2});", None, [str(tmp_path / "inc")])
    for op in ("zeros", "empty_like"):  # empty_like: ATen/TensorOperators.h includes it
        text = (tmp_path / "l" / "ATen" / "ops" / (op + ".h")).read_text()
        assert "ATen/Context.h" not in text and "DeviceGuard" not in text and "TensorUtils" not in text
        assert "TracerMode" not in text
        assert "#include <ATen/core/Tensor.h>" in text and "#include <ATen/ops/%s_ops.h>" % op in text
        assert "inline int %s()" % op in text
    types_h = (tmp_path / "l" / "torch" / "types.h").read_text()
    assert "ATen/DeviceGuard.h" not in types_h
    # a source that names what a left-out header declares gets that header
    headers.write_lite_headers(str(tmp_path / "m"), "const at::DeviceGuard g(x.device()); at::checkAllSameGPU(\"f\", {});",
                               None, [str(tmp_path / "inc")])
    types_h = (tmp_path / "m" / "torch" / "types.h").read_text()
    assert "#include <ATen/DeviceGuard.h>" in types_h and "#include <ATen/TensorUtils.h>" in types_h
    assert "ATen/Context.h" not in types_h
    # ATen.h's intra-op parallelism (the corpus's shared CPU source uses it)
    headers.write_lite_headers(str(tmp_path / "p"), "at::parallel_for(0, n, 2048, [&](int64_t b, int64_t e) {});",
                               None, [str(tmp_path / "inc")])
    assert "#include <ATen/Parallel.h>" in (tmp_path / "p" / "torch" / "types.h").read_text()


@needs_headers
def test_every_stripped_operator_header_still_parses(tmp_path):
    # all of torch's operator headers, as the lite build reads them, in one translation unit: what the
    # left-out headers declared must not be needed by any of them (g++ checks the inline functions)
    import subprocess
    import sysconfig
    dirs = include_dirs()
    functions = next(os.path.join(d, "ATen", "Functions.h") for d in dirs
                     if os.path.isfile(os.path.join(d, "ATen", "Functions.h")))
    import re
    ops = sorted(set(re.findall(r"#include <ATen/ops/([a-z0-9_]+)\.h>", open(functions).read())))
    assert len(ops) > 500
    for op in ops:
        body = headers.stripped_op_header(op, dirs)
        assert body is not None and "ATen/Context.h" not in body
        headers.write(str(tmp_path / "lite"), "ATen/ops/%s.h" % op, body)
    src = tmp_path / "all.cpp"
    src.write_text("#include <ATen/core/Tensor.h>\n" + "".join("#include <ATen/ops/%s.h>\n" % op for op in ops))
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-I" + str(tmp_path / "lite")] + ["-isystem" + d for d in dirs]
    cmd += ["-isystem" + sysconfig.get_paths()["include"], str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
