# oprec_build.py - builds oprec.cpp (the CPU's record of ATen operators) against this interpreter's torch
# into OUT (stitchbench names it by the digest of the source, the torch version and the interpreter, and
# builds only when it is missing), published by a rename so that two evaluations building it at once both
# end with a whole file. Trusted: stitchbench runs it before any candidate's code, never inside a worker.
# Usage: python3 oprec_build.py SOURCE OUT
import os
import subprocess
import sys
import tempfile


def main(src, out):
    import torch
    from torch.utils import cpp_extension

    cxx = os.environ.get("CXX", "g++")
    out_dir = os.path.dirname(os.path.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    libs = cpp_extension.library_paths()
    cmd = [cxx, "-shared", "-fPIC", "-O2", "-std=c++17", "-w",
           "-D_GLIBCXX_USE_CXX11_ABI=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI)]
    cmd += ["-I" + p for p in cpp_extension.include_paths()]
    fd, tmp = tempfile.mkstemp(prefix=".oprec-", suffix=".so", dir=out_dir)
    os.close(fd)
    cmd += [src, "-o", tmp] + ["-L" + p for p in libs] + ["-Wl,-rpath," + p for p in libs] + ["-lc10", "-ltorch_cpu"]
    try:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    except subprocess.CalledProcessError as exc:
        os.unlink(tmp)
        sys.exit("building the operator record failed: %s" % exc.stderr.decode(errors="replace")[-2000:])
    except BaseException:
        os.unlink(tmp)
        raise
    os.chmod(tmp, 0o755)
    os.replace(tmp, out)



if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: oprec_build.py SOURCE OUT")
    main(sys.argv[1], sys.argv[2])
