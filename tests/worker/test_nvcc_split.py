# test_nvcc_split.py - eval.split_nvcc: harness/worker/nvcc_split.py compiles a .cu file with nvcc's
# host and device front ends side by side. These tests compile a small self-contained source (no torch
# headers: seconds, not minutes) with the wrapper and with the real nvcc and compare the objects' symbols,
# check the fallbacks to the real nvcc, and the worker's wiring. The speed-up itself is in the commit
# message and docs/config.md (measured by hand on a source including torch's headers).
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPLIT = ROOT / "harness" / "worker" / "nvcc_split.py"
NVCC = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
if not os.access(NVCC, os.X_OK):
    NVCC = shutil.which("nvcc")
pytestmark = pytest.mark.skipif(not NVCC, reason="no nvcc (CUDA toolkit) on this machine")

SM90 = "-gencode=arch=compute_90,code=sm_90"
FLAGS = ["--compiler-options", "-fPIC", "-O3", "-std=c++17", "--expt-relaxed-constexpr"]
# A kernel in an anonymous namespace: its host stub and its device code are named after the module id,
# which cudafe++ and (in the split) cicc each compute - a mismatch shows in the symbols
SOURCE = r"""
#include <cstdio>
namespace { __global__ void scale(float *x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; } }
template <typename T> __global__ void fill(T *x, T v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }
static __device__ int launches;
__global__ void count() { atomicAdd(&launches, 1); }
void launch(float *x, int n)
{
	fill<float><<<(n + 255) / 256, 256>>>(x, 1.0f, n);
	scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n);
	count<<<1, 1>>>();
	if (cudaGetLastError() != cudaSuccess) std::printf("launch failed\n");
}
"""


def wrapper(args, cwd, **env):
    e = dict(os.environ, SB_REAL_NVCC=NVCC, SB_NVCC_SPLIT_VERBOSE="1")
    e.update(env)
    return subprocess.run([sys.executable, str(SPLIT)] + args, cwd=cwd, env=e, capture_output=True, text=True,
                          timeout=300)


def nvcc(args, cwd):
    return subprocess.run([NVCC] + args, cwd=cwd, capture_output=True, text=True, timeout=300)


def symbols(obj, demangle):
    """nm's names and types; nvcc's temporary file names (in the static initialiser's name) vary per run."""
    out = subprocess.run(["nm"] + (["-C"] if demangle else []) + [str(obj)], capture_output=True, text=True,
                         check=True).stdout
    rows = [re.sub(r"tmpxft_[0-9a-f]+_[0-9a-f]+", "tmpxft", " ".join(line.split()[-2:])) for line in out.splitlines()]
    return sorted(rows)


@pytest.fixture
def src(tmp_path):
    (tmp_path / "k.cu").write_text(SOURCE)
    return tmp_path


def test_the_split_compile_makes_the_same_object_as_nvcc(src):
    tmp = src / "tmp"
    tmp.mkdir()
    r = wrapper(["--generate-dependencies-with-compile", "--dependency-output", "split.o.d"] + FLAGS
                + [SM90, "-c", str(src / "k.cu"), "-o", "split.o"], src, TMPDIR=str(tmp))
    assert r.returncode == 0, r.stderr
    assert "nvcc_split: split" in r.stderr  # not a fallback to the real nvcc
    n = nvcc(FLAGS + [SM90, "-c", "k.cu", "-o", "whole.o"], src)
    assert n.returncode == 0, n.stderr
    assert symbols(src / "split.o", True) == symbols(src / "whole.o", True)
    raw = symbols(src / "split.o", False)
    assert raw == symbols(src / "whole.o", False)  # mangled: the anonymous namespace's module id too
    assert any("_GLOBAL__N_" in s and "scale" in s for s in raw)
    # the device code is there: the fatbin nvcc registers at load time
    assert any("fatbinData" in s for s in raw)
    assert (src / "split.o.d").read_text() == "split.o: %s\n" % (src / "k.cu")
    assert list(tmp.iterdir()) == []  # the private temporary directory is gone


def test_version_is_passed_through(tmp_path):
    r = wrapper(["--version"], tmp_path)
    assert r.returncode == 0 and "Cuda compilation tools" in r.stdout
    assert r.stdout == nvcc(["--version"], tmp_path).stdout


def test_pytorch_nvcc_as_the_worker_sets_it_runs_through_a_shell(tmp_path, monkeypatch):
    # torch 2.x's build.ninja: `nvcc_from_env = $PYTORCH_NVCC`, `command = $nvcc_from_env ...`, run by sh
    sys.path.insert(0, str(ROOT / "harness" / "worker"))
    import worker
    monkeypatch.delenv("PYTORCH_NVCC", raising=False)
    monkeypatch.setenv("SB_REAL_NVCC", NVCC)
    worker.Worker().patch_load_inline(str(tmp_path), split_nvcc=True)
    value = os.environ["PYTORCH_NVCC"]
    r = subprocess.run(["sh", "-c", value + " --version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Cuda compilation tools" in r.stdout


def test_a_syntax_error_reads_as_nvccs(tmp_path):
    (tmp_path / "bad.cu").write_text("__global__ void k(float *x) { x[0] = 1 }\n")
    args = FLAGS + [SM90, "-c", "bad.cu", "-o", "bad.o"]
    r, n = wrapper(args, tmp_path), nvcc(args, tmp_path)
    assert r.returncode != 0 and r.returncode == n.returncode
    assert "error" in r.stderr and "nvcc_split: real nvcc: a chain failed" in r.stderr
    assert r.stderr.replace("nvcc_split: real nvcc: a chain failed\n", "") == n.stderr  # nvcc's words, once
    assert not (tmp_path / "bad.o").exists()


def test_two_archs_fall_back_to_nvcc_and_still_compile(src):
    r = wrapper(FLAGS + [SM90, "-gencode=arch=compute_80,code=sm_80", "-c", "k.cu", "-o", "two.o"], src)
    assert r.returncode == 0, r.stderr
    assert "nvcc_split: real nvcc: not a single-source, single-arch compile" in r.stderr
    cuobjdump = os.path.join(os.path.dirname(NVCC), "cuobjdump")
    if os.access(cuobjdump, os.X_OK):
        elves = subprocess.run([cuobjdump, "--list-elf", str(src / "two.o")], capture_output=True, text=True).stdout
        assert "sm_80" in elves and "sm_90" in elves


def test_split_nvcc_does_not_change_the_cache_key(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "harness" / "worker"))
    import worker
    monkeypatch.delenv("PYTORCH_NVCC", raising=False)
    # torch's own load_inline, as the worker reaches it whether or not its shim is installed yet
    monkeypatch.setattr(worker.LazyCppExtension, "original", lambda self, *a, **k: "module")
    keys = []
    for split in (False, True):
        w = worker.Worker()
        w.patch_load_inline(str(tmp_path / str(split)), split_nvcc=split)
        assert ("PYTORCH_NVCC" in os.environ) == split
        ext = sys.modules["torch.utils.cpp_extension"]  # the shim, or the real module when imported before
        assert ext.load_inline("sb_split_probe", "", "__global__ void k() {}\n") == "module"
        keys.append(w.builds[-1]["key"])
    assert keys[0] == keys[1]
    assert os.environ["PYTORCH_NVCC"].endswith("nvcc_split.py")


def test_a_plan_of_another_shape_falls_back_to_nvcc(src):
    # one -gencode, two cubins: nvcc plans two ptxas runs, which the split does not know
    r = wrapper(FLAGS + ["-gencode=arch=compute_80,code=[sm_80,sm_90]", "-c", "k.cu", "-o", "fat.o"], src)
    assert r.returncode == 0, r.stderr
    assert "nvcc_split: real nvcc: nvcc's plan is not the single-arch shape" in r.stderr
    assert (src / "fat.o").stat().st_size > 0


def test_warnings_are_passed_through_as_nvcc_prints_them(tmp_path):
    (tmp_path / "w.cu").write_text("__global__ void k(float *x) { int unused = 3; x[0] = 1; }\n"
                                   "int host_only() { int y; return 0; }\n"
                                   "void launch(float *x) { k<<<1, 1>>>(x); }\n")
    args = [SM90, "-O3", "-c", "w.cu", "-o", "w.o"]
    r, n = wrapper(args, tmp_path), nvcc(args, tmp_path)
    assert r.returncode == 0 == n.returncode
    assert "nvcc_split: split" in r.stderr
    assert re.sub(r"nvcc_split: split .*\n", "", r.stderr) == n.stderr
    assert n.stderr.count("warning") >= 2  # the kernel's and the host function's


@pytest.mark.parametrize("source, why", [
    # only the device chain fails (its preprocessing defines __CUDA_ARCH__): the host chain is stopped
    ("#ifdef __CUDA_ARCH__\nstatic_assert(sizeof(int) == 3, \"device side only\");\n#endif\n"
     "__global__ void k(float *x) { x[0] = 1; }\n", "a chain failed"),
    # both front ends accept it, the final host compile (its assembler) does not
    ("__global__ void k(float *x) { x[0] = 1; }\nvoid host() { __asm__(\"this_is_not_an_instruction\"); }\n",
     "the host compile failed"),
])
def test_a_failure_in_one_part_reads_as_nvccs(tmp_path, source, why):
    (tmp_path / "f.cu").write_text(source)
    args = [SM90, "-c", "f.cu", "-o", "f.o"]
    r, n = wrapper(args, tmp_path), nvcc(args, tmp_path)
    assert n.returncode != 0 and r.returncode == n.returncode
    assert "nvcc_split: real nvcc: %s\n" % why in r.stderr
    assert r.stderr.replace("nvcc_split: real nvcc: %s\n" % why, "") == n.stderr
    assert "error" in n.stderr.lower()


def test_without_a_real_nvcc_it_says_so(src, tmp_path):
    r = wrapper([SM90, "-c", "k.cu", "-o", "k.o"], src, SB_REAL_NVCC=str(tmp_path / "no-nvcc"))
    assert r.returncode == 127 and "cannot run the real nvcc" in r.stderr and "Traceback" not in r.stderr
