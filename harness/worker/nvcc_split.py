#!/usr/bin/env python3
"""nvcc_split.py - nvcc with its host and device front ends run side by side (eval.split_nvcc).

    python3 nvcc_split.py <nvcc arguments...>     (torch 2.x: PYTORCH_NVCC="<python> nvcc_split.py")

nvcc compiles a .cu file one phase after another: two `gcc -E` preprocessings, cudafe++ (the host front
end), cicc + ptxas + fatbinary (the device chain), then the final `gcc -c` of cudafe++'s output, which
#includes the fatbin. For a source including torch's headers that is ~2 + 2 + 8 + 7 + 8 s on this project's
build machines, but the host chain (gcc -E .cpp4.ii, cudafe++) and the device chain (gcc -E .cpp1.ii,
cicc, ptxas, fatbinary) do not read each other's files, so running them at once leaves max(host, device)
+ the final gcc on the critical path (~18 s instead of ~27 s).

How: the real nvcc is asked for its plan (--dryrun, in a private TMPDIR so its temporary names are ours),
the plan is split into the two chains and the tail, the chains run concurrently and the tail after them.
The one link between the chains is the module id (it names anonymous namespaces, so host stubs and device
code must agree): cudafe++ writes it and cicc reads it. Here cicc computes its own (cicc can, as older
nvccs had it do) into another file, and the two must be byte-equal, or the object is not used.

Anything this does not recognise - several archs or sources, -dlink, -E, -M, --version, a plan of another
shape - is handed to the real nvcc unchanged (exec). When a chain, the tail or the module id check fails,
the real nvcc is run with the original arguments, so errors and the exit status are exactly nvcc's.

The real nvcc: $SB_REAL_NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# Options after which nvcc stops being a plain single-source compile (or which print something else).
PASSTHROUGH = {
    "-E", "--preprocess", "-M", "-MM", "--generate-dependencies", "--generate-nonsystem-dependencies",
    "-dlink", "--device-link", "-dc", "--device-c", "-dw", "--device-w", "-rdc", "-lib", "--lib", "-link",
    "--link", "-run", "--run", "-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin", "-optix-ir",
    "--version", "-V", "--help", "-h", "-dryrun", "--dryrun", "-keep", "--keep", "-keep-dir", "--keep-dir",
    "-save-temps", "--save-temps", "-time", "--time", "-optf", "--options-file", "-odir", "--output-directory",
    "-lto", "-dlto", "--dlink-time-opt", "--list-gpu-arch", "--list-gpu-code", "-arch=all", "-arch=all-major",
}
ARCH_OPTS = ("-gencode", "--generate-code", "-arch", "--gpu-architecture")
DEPS_FLAGS, DEPS_OUT = ("--generate-dependencies-with-compile", "-MD"), "--dependency-output"


def real_nvcc():
    if os.environ.get("SB_REAL_NVCC"):
        return os.environ["SB_REAL_NVCC"]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
        return os.path.join(home, "bin", "nvcc")
    return shutil.which("nvcc") or "nvcc"


def exec_nvcc(args):
    nvcc = real_nvcc()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(nvcc, [nvcc] + list(args))
    except OSError as exc:  # as a shell says it (set SB_REAL_NVCC or CUDA_HOME)
        sys.stderr.write("nvcc_split: cannot run the real nvcc %s: %s\n" % (nvcc, exc.strerror))
        sys.exit(127)


def plain_compile(args):
    """(source, object, depfile or None, args without the dependency options) for `-c X.cu -o Y.o` with at
    most one arch option, else None."""
    kept, depfile, deps, i = [], None, False, 0
    while i < len(args):
        a = args[i]
        if a in DEPS_FLAGS:
            deps = True
        elif a == DEPS_OUT or a == "-MF":
            if i + 1 >= len(args):
                return None
            depfile = args[i + 1]
            i += 1
        elif a.startswith(DEPS_OUT + "="):
            depfile = a.split("=", 1)[1]
        else:
            kept.append(a)
        i += 1
    if any(a in PASSTHROUGH or a.split("=", 1)[0] in PASSTHROUGH or a.startswith(("-rdc", "--relocatable-device-code"))
           for a in kept):
        return None
    arch = sum(1 for a in kept if a in ARCH_OPTS or a.split("=", 1)[0] in ARCH_OPTS)
    outs = [kept[i + 1] for i, a in enumerate(kept[:-1]) if a in ("-o", "--output-file")]
    sources = [a for i, a in enumerate(kept) if a.endswith(".cu") and (i == 0 or kept[i - 1] not in ("-o", "--output-file"))]
    if (arch > 1 or kept.count("-c") + kept.count("--compile") != 1 or len(outs) != 1 or len(sources) != 1
            or not deps and depfile):
        return None
    return sources[0], outs[0], depfile if deps else None, kept


ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def env_value(raw):
    """nvcc prints `NAME=value` as shell text; a single (quoted) word is unquoted, a list kept as printed."""
    raw = raw.strip()
    try:
        words = shlex.split(raw)
    except ValueError:
        return raw
    return words[0] if len(words) == 1 else ("" if not words else raw)


def output_of(cmd):
    words = shlex.split(cmd)
    return words[words.index("-o") + 1] if "-o" in words[:-1] else ""


def split_plan(stderr):
    """nvcc --dryrun's stderr -> (env, host chain, device chain, tail, other lines) or None when the plan is
    not the one single-arch shape this knows."""
    env, cmds, other = {}, [], []
    for line in stderr.splitlines():
        if not line.startswith("#$ "):
            other.append(line)
            continue
        text = line[3:]
        m = ASSIGN.match(text)
        if m and not cmds:
            env[m.group(1)] = env_value(m.group(2))
        elif m or text.startswith("--"):
            return None  # an assignment between commands, or a step nvcc does itself (-- Filter ...)
        else:
            cmds.append(text)

    def kind(cmd):
        try:
            words = shlex.split(cmd)
        except ValueError:
            return "?"
        tool = os.path.basename(words[0]) if words else ""
        if "-E" in words and output_of(cmd).endswith(".cpp4.ii"):
            return "host-E"
        if "-E" in words and output_of(cmd).endswith(".cpp1.ii"):
            return "device-E"
        return {"cudafe++": "cudafe", "cicc": "cicc", "ptxas": "ptxas", "fatbinary": "fatbinary"}.get(tool, "?")

    kinds = [kind(c) for c in cmds]
    if "fatbinary" not in kinds:
        return None
    end = kinds.index("fatbinary") + 1
    head, tail = kinds[:end], cmds[end:]
    if sorted(head) != sorted(["host-E", "device-E", "cudafe", "cicc", "ptxas", "fatbinary"]) or not tail:
        return None
    host = [c for c, k in zip(cmds, kinds) if k in ("host-E", "cudafe")]
    device = [c for c, k in zip(cmds, kinds) if k in ("device-E", "cicc", "ptxas", "fatbinary")]
    if [kind(c) for c in host] != ["host-E", "cudafe"] or [kind(c) for c in device] != ["device-E", "cicc", "ptxas", "fatbinary"]:
        return None
    return env, host, device, tail, other


MODULE_ID = re.compile(r'--module_id_file_name ("[^"]*"|\S+)')


def unlink_module_id(host, device):
    """cicc reads the module id cudafe++ writes; give cicc its own (--gen_module_id_file) so the chains are
    independent. Returns (device chain, [(cudafe++'s file, cicc's file)] to compare) or None."""
    cicc = device[1]
    found = MODULE_ID.findall(cicc)
    if not found:
        return device, []  # nothing shared
    if len(found) != 1 or "--gen_module_id_file" in cicc:
        return None
    theirs = shlex.split(found[0])[0]
    if "--gen_module_id_file" not in host[1] or theirs not in shlex.split(host[1]):
        return None
    ours = theirs + ".cicc"
    cicc = MODULE_ID.sub(lambda m: "--gen_module_id_file --module_id_file_name " + shlex.quote(ours), cicc)
    return [device[0], cicc] + device[2:], [(theirs, ours)]


class Chain(threading.Thread):
    """Runs one chain's commands in order, each through bash (for nvcc's "$CICC_PATH/cicc"), and stops at
    the first that fails, as nvcc does. The tools stay in the caller's process group: the evaluator ends
    a build by killing the worker's group, which must reach them (no new session here)."""

    def __init__(self, cmds, env):
        super().__init__(daemon=True)
        self.cmds, self.env, self.lock = cmds, env, threading.Lock()
        self.out, self.err, self.ok, self.seconds, self.proc, self.stopped = b"", b"", False, 0.0, None, False

    def run(self):
        t0 = time.perf_counter()
        for cmd in self.cmds:
            with self.lock:
                if self.stopped:
                    return
                self.proc = subprocess.Popen(["bash", "-c", cmd], env=self.env, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE)
            out, err = self.proc.communicate()
            self.out, self.err = self.out + out, self.err + err
            if self.proc.returncode != 0:
                return
        self.ok, self.seconds = True, time.perf_counter() - t0

    def stop(self):
        with self.lock:
            self.stopped = True
            if self.proc and self.proc.poll() is None:
                self.proc.kill()  # bash runs a single command by exec, so this is the tool itself


def run_both(host, device, env):
    """Runs the two chains at once; both Chains, or None as soon as one fails (the other is stopped: the
    real nvcc reruns the compile anyway)."""
    chains = [Chain(host, env), Chain(device, env)]
    for c in chains:
        c.start()
    while any(c.is_alive() for c in chains):
        if any(not c.is_alive() and not c.ok for c in chains):
            break
        next(c for c in chains if c.is_alive()).join(0.05)
    if all(c.ok for c in chains):
        return chains
    for c in chains:
        c.stop()
    for c in chains:
        c.join()
    return None


def same_file(a, b):
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def write_depfile(path, obj, src):
    # Only the source: the build directory is keyed by the sources, flags, arch and torch version
    # (worker.py patch_load_inline), so ninja needs no header tracking to know when to rebuild.
    def esc(p):
        return p.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")
    with open(path, "w") as f:
        f.write("%s: %s\n" % (esc(obj), esc(src)))


def said(why):
    """SB_NVCC_SPLIT_VERBOSE=1 says why the real nvcc compiles instead (the tests check the split ran)."""
    if os.environ.get("SB_NVCC_SPLIT_VERBOSE") == "1":
        sys.stderr.write("nvcc_split: real nvcc: %s\n" % why)
    return None


def split_compile(args, parsed, tmp):
    """Runs the compile split; returns its exit status, or None when the real nvcc must do it."""
    src, obj, depfile, kept = parsed
    env = dict(os.environ, TMPDIR=tmp)
    dry = subprocess.run([real_nvcc(), "--dryrun"] + kept, env=env, capture_output=True, text=True)
    if dry.returncode != 0:
        return said("nvcc --dryrun failed")
    plan = split_plan(dry.stderr)
    if plan is None:
        return said("nvcc's plan is not the single-arch shape")
    assigned, host, device, tail, other = plan
    unlinked = unlink_module_id(host, device)
    if unlinked is None:
        return said("the module id is shared in an unknown way")
    device, compare = unlinked
    env.update(assigned)
    outs = run_both(host, device, env)
    if outs is None:
        return said("a chain failed")
    if not all(same_file(a, b) for a, b in compare):
        return said("cudafe++ and cicc computed different module ids")
    # nvcc's own `rm` of files that may not exist (the .fatbin: fatbinary wrote only the .fatbin.c) ignores them
    tail = [re.sub(r"^rm ", "rm -f ", c) for c in tail]
    t0 = time.perf_counter()
    done = subprocess.run(["bash", "-c", "set -e\n" + "\n".join(tail)], env=env, capture_output=True)
    if done.returncode != 0:
        return said("the host compile failed")
    # nvcc's own messages from the plan (none usually), then the tools' warnings, host front end first
    for line in other:
        sys.stderr.write(line + "\n")
    for out, err in [(c.out, c.err) for c in outs] + [(done.stdout, done.stderr)]:
        sys.stdout.buffer.write(out)
        sys.stderr.buffer.write(err)
    sys.stdout.flush()
    sys.stderr.flush()
    if depfile:
        write_depfile(depfile, obj, src)
    if os.environ.get("SB_NVCC_SPLIT_VERBOSE") == "1":
        sys.stderr.write("nvcc_split: split (host chain %.1f s, device chain %.1f s, then the host compile %.1f s)\n"
                         % (outs[0].seconds, outs[1].seconds, time.perf_counter() - t0))
    return 0


def main(args):
    parsed = plain_compile(args)
    if parsed is None:
        said("not a single-source, single-arch compile")
        exec_nvcc(args)
    tmp = tempfile.mkdtemp(prefix="nvcc-split-")
    try:
        status = split_compile(args, parsed, tmp)
    except Exception as exc:  # a surprise in nvcc's plan (an undecodable path, ...): nvcc compiles
        status = said("%s: %s" % (type(exc).__name__, exc))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if status is None:
        exec_nvcc(args)  # errors and exit status exactly nvcc's
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
