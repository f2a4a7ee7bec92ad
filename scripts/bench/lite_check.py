#!/usr/bin/env python3
"""lite_check.py - which load_inline candidates the lite headers (eval.lite_headers) cannot compile.

    python3 scripts/bench/lite_check.py [--include-dir DIR] [--python-include DIR] [--jobs N] FILE.py...

A source the lite headers cannot compile is built again with the lean headers, then as written: correct,
but its cold build costs one failed compile more. This finds such sources in a corpus without building
anything: each file is imported in a child process whose load_inline only records its arguments (the
files are this project's fixtures; never point it at untrusted code), then each recorded extension's
binding file is parsed by g++ (-fsyntax-only) and its CUDA file by nvcc's host front end (nvcc -cuda),
with the lite headers, and as written when that fails: a file is reported when as written parses and lite
does not. --include-dir points at another torch's headers (say, those of the GPU node's torch, copied
here); CUDA's headers are $CUDA_HOME/include (default /usr/local/cuda).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.normpath(os.path.join(HERE, "..", "..", "harness", "worker"))
sys.path.insert(0, WORKER)
CUDA_INCLUDE = os.path.join(os.environ.get("CUDA_HOME") or "/usr/local/cuda", "include")
import headers  # noqa: E402

# The child: load_inline records its arguments and returns an object whose every function does nothing,
# so that the module-level code after the build (ModelNew's definition, a first call) runs to the end.
RECORD = r"""
import json, sys, importlib.util
sys.path.insert(0, sys.argv[2])
from headers import as_list
import torch.utils.cpp_extension as ext
seen = []
class NothingBuilt:
    def __getattr__(self, k):
        return lambda *a, **k: None
def load_inline(name, cpp_sources, cuda_sources=None, functions=None, extra_cflags=None, extra_cuda_cflags=None, **kw):
    seen.append({"name": name, "cpp": as_list(cpp_sources), "cuda": as_list(cuda_sources),
                 "functions": as_list(functions), "cflags": list(extra_cflags or []),
                 "cuda_cflags": list(extra_cuda_cflags or [])})
    return NothingBuilt()
ext.load_inline = load_inline
try:
    spec = importlib.util.spec_from_file_location("sb_lite_check", sys.argv[1])
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
except BaseException:
    pass
print(json.dumps(seen))
"""


def record(path):
    r = subprocess.run([sys.executable, "-c", RECORD, path, WORKER], capture_output=True, text=True, timeout=120)
    try:
        return json.loads((r.stdout.strip().splitlines() or ["[]"])[-1])
    except ValueError:
        return []


def main_cpp(e):
    out = "#include <torch/extension.h>\n" + "\n".join(e["cpp"]) + "\n"
    if e["functions"]:
        out += "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
        out += "".join('m.def("%s", &%s, "%s");\n' % (f, f, f) for f in e["functions"])
        out += "}\n"
    return out


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:200]
    return (text.strip().splitlines() or ["failed"])[-1][:200]


def check(e, inc, pyinc, tmp):
    """{"as-written": error or None, "lite": error or None} for one recorded extension."""
    base = ["-DTORCH_EXTENSION_NAME=%s" % e["name"], "-DTORCH_API_INCLUDE_EXTENSION_H", "-D_GLIBCXX_USE_CXX11_ABI=1",
            "-isystem", inc, "-isystem", os.path.join(inc, "torch", "csrc", "api", "include"), "-isystem", pyinc,
            "-isystem", CUDA_INCLUDE]
    res = {"as-written": None}
    for level in ("lite", "as-written"):  # as written only to tell a lite failure from a broken source
        if level == "as-written" and not res["lite"]:
            break
        d = os.path.join(tmp, level)
        os.makedirs(d, exist_ok=True)
        lite = headers.write_lite_headers(os.path.join(d, "sb-lite"), e["cpp"], e["cuda"] or None, [inc]) \
            if level == "lite" else None
        with open(os.path.join(d, "main.cpp"), "w") as f:
            f.write(main_cpp(e))
        cmds = [["g++", "-std=c++17", "-fsyntax-only", "-fPIC"] + (lite.cflags if lite else []) + base +
                [x for x in e["cflags"] if x.startswith(("-D", "-I", "-std"))] + [os.path.join(d, "main.cpp")]]
        if e["cuda"]:
            with open(os.path.join(d, "cuda.cu"), "w") as f:
                f.write("\n".join(e["cuda"]))
            cmds.append(["nvcc", "-cuda", "-std=c++17", "--expt-relaxed-constexpr", "-arch=sm_90"] +
                        (lite.cuda_cflags if lite else []) + base +
                        [x for x in e["cuda_cflags"] if x.startswith(("-D", "-I", "-std"))] +
                        [os.path.join(d, "cuda.cu"), "-o", os.path.join(d, "cuda.ii")])
        err = None
        for cmd in cmds:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                err = first_error(r.stderr)
                break
        res[level] = err
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--include-dir", help="torch's include folder (default: this Python's torch's)")
    ap.add_argument("--python-include", default=sysconfig.get_paths()["include"])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.include_dir is None:
        import torch.utils.cpp_extension as ext
        a.include_dir = ext.include_paths()[0]
    work, seen, same = [], {}, 0
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:  # each import starts a Python with torch
        recorded = list(pool.map(lambda p: (p, record(os.path.abspath(p))), a.files))
    for p, found in recorded:
        for e in found:
            key = json.dumps([e["cpp"], e["cuda"], e["functions"], e["cflags"], e["cuda_cflags"]])
            if key in seen:  # the corpus's CPU candidates share one source
                same += 1
                continue
            seen[key] = p
            work.append((p, e))
    bad = 0
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        jobs = [(p, e, pool.submit(check, e, a.include_dir, a.python_include, os.path.join(tmp, str(i))))
                for i, (p, e) in enumerate(work)]
        for p, e, fut in jobs:
            r = fut.result()
            if r["as-written"]:
                verdict = "as written fails too (%s)" % r["as-written"]
            elif r["lite"]:
                verdict = "LITE FAILS: %s" % r["lite"]
                bad += 1
            else:
                verdict = "ok"
            print("%-60s %-24s %s" % (os.path.relpath(p), e["name"][:24], verdict), flush=True)
    print("lite_check: %d extension(s) in %d file(s) (%d more with the same sources), %d the lite headers "
          "cannot compile" % (len(work), len(a.files), same, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
