#!/usr/bin/env python3
"""header_cost.py - what parsing one of torch's headers costs, with the flags a load_inline build uses.

    python3 scripts/bench/header_cost.py [--jobs N] [--repeat R] [HEADER[+HEADER...]]...

Each argument is a set of headers joined by '+'; without arguments, the sets that decide what the lite
headers (harness/worker/headers.py, eval.lite_headers) include. One `g++ -fsyntax-only` per set, with
torch's include folders, CUDA's, Python's and C++17, in parallel; prints the best of R runs in seconds.
A CUDA source parses what it includes three times (cudafe++, cicc, the host gcc), the binding file once.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sysconfig
import tempfile
import time

DEFAULT = [
    "cuda_runtime.h",
    "torch/extension.h",
    "torch/types.h",
    "ATen/ATen.h",
    "ATen/core/Tensor.h",
    "ATen/core/Tensor.h+ATen/TensorOperators.h+ATen/Dispatch.h+c10/util/Optional.h+ATen/ops/empty_like.h",
    "ATen/Dispatch.h",
    "ATen/cuda/CUDAContext.h",
    "ATen/cuda/CUDAContextLight.h",
    "ATen/Context.h",
    "ATen/cuda/Exceptions.h",
    "c10/cuda/CUDAStream.h",
    "c10/cuda/CUDAGuard.h",
    "c10/cuda/CUDAException.h",
    "torch/csrc/utils/pybind.h",
    "torch/csrc/utils/pybind.h+torch/csrc/Exceptions.h",
]


def flags():
    import torch.utils.cpp_extension as ext
    home = ext.CUDA_HOME or "/usr/local/cuda"
    inc = ext.include_paths() + [os.path.join(home, "include"), sysconfig.get_paths()["include"]]
    abi = "1" if getattr(__import__("torch")._C, "_GLIBCXX_USE_CXX11_ABI", True) else "0"
    return ["-std=c++17", "-fPIC", "-D_GLIBCXX_USE_CXX11_ABI=" + abi] + ["-isystem" + d for d in inc]


def cost(headers, fl, repeat):
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("".join("#include <%s>\n" % h for h in headers.split("+")))
    best, err = None, ""
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = subprocess.run(["g++", "-fsyntax-only"] + fl + [f.name], capture_output=True, text=True)
            s = time.perf_counter() - t0
            if r.returncode:
                err = (r.stderr.strip().splitlines() or ["failed"])[0]
                break
            best = s if best is None else min(best, s)
    finally:
        os.unlink(f.name)
    return headers, best, err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("sets", nargs="*")
    a = ap.parse_args()
    fl = flags()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for headers, best, err in pool.map(lambda h: cost(h, fl, a.repeat), a.sets or DEFAULT):
            print("%8s  %s%s" % ("-" if best is None else "%.2f s" % best, headers.replace("+", " + "),
                                 "  (" + err + ")" if err else ""), flush=True)


if __name__ == "__main__":
    main()
