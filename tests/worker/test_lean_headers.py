# test_lean_headers.py - eval.lean_headers: a candidate's CUDA sources that include torch/extension.h
# (or torch/torch.h) are first built with torch/types.h in its place, and with the sources as written when
# that build fails. The rewrite itself is checked here; the speed it buys is measured on a GPU node by
# `make bench` (BENCHMARKS.md), where the CUDA build really runs.
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import worker  # noqa: E402

KERNEL = """#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
// #include <torch/extension.h> in a comment stays as it is
__global__ void k(float *x) { x[0] = 1; }
torch::Tensor f(torch::Tensor x) { k<<<1, 1>>>(x.data_ptr<float>()); return x; }
"""


def test_the_heavy_include_becomes_types_h_and_nothing_else_changes():
    lean = worker.lean_cuda_sources(KERNEL)
    assert isinstance(lean, str)
    lines, before = lean.splitlines(), KERNEL.splitlines()
    assert lines[0].startswith("#include <torch/types.h>")
    assert lines[1:] == before[1:]  # the commented include and the code are untouched


@pytest.mark.parametrize("spelling", ['#include <torch/torch.h>', '  #  include "torch/extension.h"'])
def test_other_spellings_of_the_heavy_include(spelling):
    lean = worker.lean_cuda_sources([spelling + "\n__global__ void k() {}\n", "int x;"])
    assert isinstance(lean, list) and len(lean) == 2
    assert lean[0].startswith("#include <torch/types.h>") and lean[1] == "int x;"


@pytest.mark.parametrize("needs", ["PYBIND11_MODULE(m, x) {}", "namespace py = pybind11;",
                                   "torch::nn::Linear l(1, 1);", "TORCH_LIBRARY(ns, m) {}",
                                   "auto s = torch::cuda::device_count();"])
def test_sources_that_need_the_heavy_headers_are_built_as_written(needs):
    assert worker.lean_cuda_sources(KERNEL + needs + "\n") is None


def test_nothing_to_do_without_a_heavy_include():
    assert worker.lean_cuda_sources("#include <torch/types.h>\n__global__ void k() {}\n") is None
    assert worker.lean_cuda_sources(None) is None
    assert worker.lean_cuda_sources([]) is None


def test_a_failed_lean_build_falls_back_to_the_sources_as_written(tmp_path, monkeypatch):
    # load_inline itself needs a CUDA torch for CUDA sources: here it is replaced by a recorder that
    # refuses the lean sources, to check the worker's decision (first lean, then as written, reported)
    import torch.utils.cpp_extension as ext
    seen = []

    def recorder(name, cpp_sources, cuda_sources=None, *args, **kwargs):
        seen.append(cuda_sources)
        if "torch/types.h" in cuda_sources:
            raise RuntimeError("error: identifier \"something_from_all_h\" is undefined")
        return "module"

    monkeypatch.setattr(ext, "load_inline", recorder)
    w = worker.Worker()
    w.patch_load_inline(str(tmp_path), lean_headers=True)
    assert ext.load_inline("sb_lean_probe", "", KERNEL) == "module"
    assert len(seen) == 2 and "torch/types.h" in seen[0] and seen[1] == KERNEL
    assert w.builds[-1]["lean_headers"] is False and w.builds[-1]["cached"] is False

    seen.clear()
    w2 = worker.Worker()
    monkeypatch.setattr(ext, "load_inline", lambda *a, **k: seen.append(a[2]) or "module")
    w2.patch_load_inline(str(tmp_path / "other"), lean_headers=True)
    assert ext.load_inline("sb_lean_probe", "", KERNEL) == "module"
    assert len(seen) == 1 and "torch/types.h" in seen[0]
    assert w2.builds[-1]["lean_headers"] is True


def test_off_builds_as_written(tmp_path, monkeypatch):
    import torch.utils.cpp_extension as ext
    seen = []
    monkeypatch.setattr(ext, "load_inline", lambda *a, **k: seen.append(a[2]) or "module")
    w = worker.Worker()
    w.patch_load_inline(str(tmp_path), lean_headers=False)
    ext.load_inline("sb_lean_probe", "", KERNEL)
    assert seen == [KERNEL] and w.builds[-1]["lean_headers"] is False
