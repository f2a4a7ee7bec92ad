# headers.py - which of torch's headers a candidate's load_inline build parses (eval.lite_headers,
# eval.lean_headers). Parsing torch's headers is most of a cold build: nvcc parses a CUDA source three
# times (cudafe++, cicc, the host gcc) and gcc parses the binding file (main.cpp) once more.
#
#   as written   torch/extension.h = torch/all.h + torch/python.h (the C++ frontend, autograd, pybind11)
#   lean         the CUDA sources' torch/extension.h read as torch/types.h (all of ATen)
#   lite         torch/types.h, torch/extension.h and torch/torch.h all read as a header made for this
#                build: the Tensor class, the dispatch macros, the ATen functions the sources name, the
#                torch:: names of torch/types.h; torch/extension.h adds torch's pybind11 type casters,
#                for the binding file only; ATen/cuda/CUDAContext.h without ATen/Context.h; and the
#                operator headers without the four heavy headers each includes and none needs
#
# lite works without touching the sources: its headers sit in a folder of the build directory passed with
# -I, which the compilers search before torch's own -isystem folders. A build that fails at one level is
# tried at the next (the worker decides; the errors reported are always those of the sources as written).
import os
import re

HEAVY_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/(?:extension|torch)\.h[>"][^\n]*$', re.M)
# what only the heavy headers give: bindings written in the CUDA file, torch's C++ frontend, op registration
NEEDS_HEAVY = re.compile(r'PYBIND11|pybind11|\bpy::|torch/python|TORCH_LIBRARY|'
                         r'torch::(?:nn|optim|jit|data|autograd|serialize|python|cuda)\b')
# what the lite headers do not give: torch's C++ frontend and its Python bridge, op registration, the
# autograd and JIT internals (pybind11 itself they do give: torch/csrc/utils/pybind.h)
LITE_CANNOT = re.compile(r'torch/python|torch/csrc/api|torch/script|TORCH_LIBRARY|'
                         r'torch::(?:nn|optim|jit|data|autograd|serialize|python|cuda)\b')
# torch::name( and at::name( : the ATen functions whose per-operator header the lite build includes
CALLED = re.compile(r'\b(?:torch|at)\s*::\s*([a-z_][a-z0-9_]*)\s*\(')

# the torch:: names torch/types.h adds beside `using namespace at`
TORCH_DTYPES = [("kUInt8", "kByte"), ("kInt8", "kChar"), ("kInt16", "kShort"), ("kInt32", "kInt"),
                ("kInt64", "kLong"), ("kFloat16", "kHalf"), ("kFloat32", "kFloat"), ("kFloat64", "kDouble"),
                ("kU8", "kByte"), ("kI8", "kChar"), ("kI16", "kShort"), ("kI32", "kInt"), ("kI64", "kLong"),
                ("kF16", "kHalf"), ("kF32", "kFloat"), ("kF64", "kDouble")]


def as_list(sources):
    return [sources] if isinstance(sources, str) else list(sources or [])


def lean_cuda_sources(cuda_sources):
    """cuda_sources with torch/extension.h (torch/torch.h) included as torch/types.h, or None when that
    does not apply (no heavy include, or something that needs one)."""
    srcs = as_list(cuda_sources)
    if not all(isinstance(x, str) for x in srcs):
        return None
    text = "\n".join(srcs)
    if not srcs or not HEAVY_INCLUDE.search(text) or NEEDS_HEAVY.search(text):
        return None
    lean = [HEAVY_INCLUDE.sub("#include <torch/types.h>  // stitchbench: lean build (eval.lean_headers)", x)
            for x in srcs]
    return lean[0] if isinstance(cuda_sources, str) else lean


def lite_applies(cpp_sources, cuda_sources):
    srcs = as_list(cpp_sources) + as_list(cuda_sources)
    return bool(srcs) and all(isinstance(x, str) for x in srcs) and not LITE_CANNOT.search("\n".join(srcs))


def called_ops(text, include_dirs):
    """The names in torch::f( / at::f( that have a per-operator header ATen/ops/f.h, sorted."""
    names = set(CALLED.findall(text))
    return sorted(n for n in names if any(os.path.isfile(os.path.join(d, "ATen", "ops", n + ".h"))
                                          for d in include_dirs))


# What every per-operator header ATen/ops/<f>.h includes beside the operator's own declarations and
# Tensor.h: ATen/Context.h, DeviceGuard.h, TensorUtils.h and TracerMode.h, which none of its inline
# functions needs (with torch 2.11, Tensor.h and all 1324 operator headers parse without them) and
# which cost more than Tensor.h itself. The lite build reads the operator headers it includes without them,
# and includes one of them only when the sources name what it declares.
STRIPPED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*<ATen/(?:Context|DeviceGuard|TensorUtils|TracerMode)\.h>[^\n]*\n', re.M)
NAMED = [
    (re.compile(r'globalContext|\bContext\b|getCUDAHooks|hasCUDA|manual_seed|[Dd]eterministic'), "ATen/Context.h"),
    (re.compile(r'DeviceGuard'), "ATen/DeviceGuard.h"),
    (re.compile(r'TensorArg|TensorGeometryArg|\bcheck(?:All|Dim|Size|Numel|Same|Scalar|Defined|Backend|Device|Layout|'
                r'Contiguous|_dim)\w*'), "ATen/TensorUtils.h"),
    (re.compile(r'Tracer|tracer'), "ATen/TracerMode.h"),
    # not in torch/types.h's Tensor.h either: ATen.h's intra-op parallelism (at::parallel_for, ...)
    (re.compile(r'parallel_for|parallel_reduce|num_threads|in_parallel_region|intraop|at::launch\b'),
     "ATen/Parallel.h"),
]


def stripped_op_header(op, include_dirs):
    """ATen/ops/<op>.h as torch has it, less the includes in STRIPPED; None where torch has no such header."""
    for d in include_dirs:
        path = os.path.join(d, "ATen", "ops", op + ".h")
        if os.path.isfile(path):
            with open(path) as f:
                text = f.read()
            return ("// ATen/ops/%s.h for a stitchbench lite build (eval.lite_headers): torch's, without the\n"
                    "// includes none of its functions needs (headers.py, STRIPPED).\n" % op) + STRIPPED.sub("", text)
    return None


def lite_types_h(ops, text=""):
    lines = ["// torch/types.h for a stitchbench lite build (eval.lite_headers): the Tensor class, the",
             "// dispatch macros and the ATen functions this extension's sources call, not all of ATen.",
             "#pragma once",
             "#include <ATen/core/Tensor.h>",
             # x + y on tensors; without the macro it includes ATen/Functions.h, every operator's header
             # (3 s of a 4.3 s parse)
             "#ifndef AT_PER_OPERATOR_HEADERS",
             "#define AT_PER_OPERATOR_HEADERS",
             "#include <ATen/TensorOperators.h>",
             "#undef AT_PER_OPERATOR_HEADERS",
             "#else",
             "#include <ATen/TensorOperators.h>",
             "#endif",
             "#include <ATen/Dispatch.h>",
             "#include <c10/util/Optional.h>"]
    lines += ["#include <%s>" % h for rx, h in NAMED if rx.search(text)]
    lines += ["#include <ATen/ops/%s.h>" % op for op in ops]
    lines += ["namespace torch {",
              "using namespace at; // NOLINT",
              "using c10::optional;",
              "using c10::nullopt;",
              "using Dtype = at::ScalarType;"]
    lines += ["constexpr auto %s = at::%s;" % pair for pair in TORCH_DTYPES]
    lines += ["} // namespace torch", ""]
    return "\n".join(lines)


LITE_EXTENSION_H = """// torch/extension.h for a stitchbench lite build (eval.lite_headers): torch's pybind11 type casters
// and error translation for the bindings, and the lite torch/types.h beside them.
#pragma once
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/Exceptions.h>
#include <torch/types.h>
"""

# The CUDA compiler's torch/extension.h: the kernels' file needs no pybind11 (load_inline's bindings are in
# main.cpp), and pybind11 with torch's casters is most of what a lite CUDA source parses (with torch
# 2.11, 2.6 s of 4.3 s in g++, and nvcc parses a CUDA source three times). A CUDA source that
# writes bindings or Python glue of its own keeps LITE_EXTENSION_H.
LITE_CUDA_EXTENSION_H = """// torch/extension.h for the CUDA sources of a stitchbench lite build (eval.lite_headers): the lite
// torch/types.h; the bindings are compiled from main.cpp, with torch's pybind11 casters.
#pragma once
#include <torch/types.h>
"""
PYTHON_GLUE = re.compile(r'PYBIND11|pybind11|\bpy::|HANDLE_TH_ERRORS|python_error|\bTHP|PyObject|Py_')

# ATen/cuda/CUDAContext.h is CUDAContextLight.h (handles, device properties) plus, "for backward
# compatibility", ATen/Context.h, CUDAStream.h, Logging.h and ATen/cuda/Exceptions.h. The lite one leaves
# out ATen/Context.h (at::globalContext()), Exceptions.h unless its check macros are used, and
# CUDAContextLight.h (cuBLAS, cuSPARSE and cuSOLVER's headers) unless a name it declares is used;
# at::cuda::getCurrentCUDAStream is c10's, through CUDAStream.h.
CUDA_CHECKS = re.compile(r'\b(?:AT_CUDA\w*_CHECK|TORCH_CU\w*_CHECK)\b')
CUDA_LIGHT = re.compile(r'getNumGPUs|is_available|DeviceProperties|warp_size|canDeviceAccessPeer|Allocator|'
                        r'Handle|Workspace|cublas|cusparse|cusolver|cudss|CUBLAS|CUSPARSE|CUSOLVER')


def lite_cuda_context_h(text):
    lines = ["// ATen/cuda/CUDAContext.h for a stitchbench lite build (eval.lite_headers): without ATen/Context.h.",
             "#pragma once"]
    if CUDA_LIGHT.search(text):
        lines.append("#include <ATen/cuda/CUDAContextLight.h>")
    lines += ["#include <c10/cuda/CUDAFunctions.h>",
              "#include <c10/cuda/CUDAStream.h>",
              "#include <c10/cuda/CUDAException.h>",
              "#include <c10/util/Logging.h>"]
    if CUDA_CHECKS.search(text):
        lines.append("#include <ATen/cuda/Exceptions.h>")
    return "\n".join(lines + [""])


LITE_TORCH_H = """// torch/torch.h for a stitchbench lite build (eval.lite_headers): the lite torch/types.h.
#pragma once
#include <torch/types.h>
"""


class LiteHeaders:
    """What write_lite_headers wrote: the ops included, and the -I options for each compiler."""

    def __init__(self, ops, cflags, cuda_cflags):
        self.ops, self.cflags, self.cuda_cflags = ops, cflags, cuda_cflags


def write(folder, rel, body):
    path = os.path.join(folder, *rel.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(body)


def write_lite_headers(folder, cpp_sources, cuda_sources, include_dirs):
    """Writes, for these sources, folder/torch/{types,extension,torch}.h, folder/ATen/cuda/CUDAContext.h
    (where torch has CUDA headers), folder/ATen/ops/<op>.h for the ops included (STRIPPED), and, unless
    the CUDA sources write Python glue, folder-cu/torch/extension.h, which the CUDA compiler finds first."""
    text = "\n".join(as_list(cpp_sources) + as_list(cuda_sources))
    cuda_text = "\n".join(as_list(cuda_sources))
    ops = called_ops(text, include_dirs)
    write(folder, "torch/types.h", lite_types_h(ops, text))
    write(folder, "torch/extension.h", LITE_EXTENSION_H)
    write(folder, "torch/torch.h", LITE_TORCH_H)
    if any(os.path.isfile(os.path.join(d, "ATen", "cuda", "CUDAContextLight.h")) for d in include_dirs):
        write(folder, "ATen/cuda/CUDAContext.h", lite_cuda_context_h(text))
    for op in sorted(set(ops) | {"empty_like"}):  # empty_like: ATen/TensorOperators.h includes it
        body = stripped_op_header(op, include_dirs)
        if body is not None:
            write(folder, "ATen/ops/%s.h" % op, body)
    cuda_cflags = []
    if cuda_sources:
        if not PYTHON_GLUE.search(cuda_text):
            write(folder + "-cu", "torch/extension.h", LITE_CUDA_EXTENSION_H)
            cuda_cflags.append("-I" + folder + "-cu")
        cuda_cflags.append("-I" + folder)
    return LiteHeaders(ops, ["-I" + folder], cuda_cflags)
