"""template.py - the fork server (DESIGN §6, docs/worker.md "The fork server").

A trusted process that imports the worker (and with it torch) once, never touches a GPU or a problem,
and forks a fresh worker per request: a candidate's worker starts in milliseconds instead of the 2-5 s
of Python and `import torch`. Each forked child runs lib/libsbspawn.so's sbspawn_child(), the same C
code that sets up an exec'd worker (its session, its descriptors, its folder, the sandbox), then the
worker's loop. stitchbench kills a child by its process group and learns how it ended from the status
pipe that came with the request, which this process writes when it reaps the child.

Protocol (fd 3 requests, fd 4 replies, JSON lines):
  {"cmd": "hello"}                                     -> {"ok": true, "pid": N}
  {"cmd": "spawn", "fds": 5, "cwd": D, "env": ["K=V", ...], "outlives_parent": bool,
   "sandbox": null | {"workdir", "write_dirs": [...], "hidden": [...], "cpu_seconds", "file_bytes", "address_space",
                      "open_files", "processes", "no_network", "own_pids", "private_tmp", "landlock", "disabled"}}
      with five descriptors: the child's stdout, stderr, fd 3, fd 4, and the status pipe's write end
                                                       -> {"ok": true, "pid": N}
It exits when its channel closes; its children die with it (PR_SET_PDEATHSIG).
"""
import ctypes
import json
import os
import signal
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import exchange  # noqa: E402
import worker  # noqa: E402  (imports torch: the point of this process)
import torch  # noqa: E402  (already imported by worker)

STATUS = {}  # child pid -> the write end of its status pipe


def reap(signo=None, frame=None):
    """Writes each ended child's wait status to its pipe (4 bytes, native order, then closed)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = STATUS.pop(pid, None)
        if fd is not None:
            try:
                os.write(fd, struct.pack("=i", status))
            except OSError:
                pass
            os.close(fd)


def load_lib(path):
    lib = ctypes.PyDLL(path)  # PyDLL: the GIL stays held, as the child is one thread
    lib.sbspawn_child.restype = ctypes.c_int
    lib.sbspawn_child.argtypes = [ctypes.c_int, ctypes.c_int * 4, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                  ctypes.c_longlong, ctypes.c_longlong, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return lib


def text(v):
    return v.encode() if isinstance(v, str) else None


def child(lib, parent, req, fds):
    """In the forked child: never returns."""
    code = 70
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        env = dict(kv.split("=", 1) for kv in req.get("env", []) if "=" in kv)
        os.environ.clear()
        os.environ.update(env)
        sb = req.get("sandbox")
        b = sb or {}
        lib.sbspawn_child(parent, (ctypes.c_int * 4)(*fds[:4]), text(req.get("cwd")), bool(req.get("outlives_parent")),
                          sb is not None, text(b.get("workdir")), "\n".join(b.get("write_dirs") or []).encode(),
                          "\n".join(b.get("hidden") or []).encode(), int(b.get("cpu_seconds", 0)),
                          int(b.get("file_bytes", 0)), int(b.get("address_space", 0)),
                          int(b.get("open_files", 0)), int(b.get("processes", 0)),
                          int(b.get("no_network", 0)), int(b.get("own_pids", 0)), int(b.get("private_tmp", 0)),
                          int(b.get("landlock", 0)),
                          int(b.get("disabled", 0)))
        # Python ignores SIGPIPE from its start (a broken pipe is an exception); the C setup reset it for an
        # exec that does not come
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        # fds 0-4 are now the worker's; the server's sockets (fd 3 and 4 before) were replaced, so the
        # objects that wrapped them must never close them: they are left alone until os._exit
        sys.argv = [worker.__file__]
        worker.IMPORTS_S = 0.0  # nothing was imported for this worker: the server did it
        worker.FORKED = True
        worker.CUDA_STARTING = worker.start_cuda_early()  # as an exec'd worker does, for its device
        worker.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: B902  (anything: reported on its stderr, never back into the server)
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def fork_is_clean():
    """Whether a child of this process may start CUDA: torch refuses in a child whose parent asked the CUDA
    runtime anything (even torch.cuda.is_available() arms that guard), and a server whose children all fail
    is worse than none. Checked once, on a child that only looks."""
    pid = os.fork()
    if pid == 0:
        bad = getattr(torch.cuda, "_is_in_bad_fork", lambda: False)()
        os._exit(3 if bad or torch.cuda.is_initialized() else 0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def main():
    lib = load_lib(os.environ.pop("STITCHBENCH_SPAWN_LIB"))
    if not fork_is_clean():
        sys.stderr.write("template.py: this process touched CUDA while importing the worker: its forks could not "
                         "use the GPU\n")
        sys.exit(1)
    channel = exchange.Channel(3, 4)
    signal.signal(signal.SIGCHLD, reap)
    for line in channel.lines():
        req = json.loads(line)
        fds = channel.take_fds(int(req.get("fds", 0)))
        if req.get("cmd") == "quit":
            channel.send(json.dumps({"ok": True}))
            break
        if req.get("cmd") == "hello":
            channel.send(json.dumps({"ok": True, "pid": os.getpid()}))
            continue
        if req.get("cmd") != "spawn" or len(fds) != 5:
            for fd in fds:
                os.close(fd)
            channel.send(json.dumps({"ok": False, "message": "expected spawn with 5 descriptors"}))
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        # the status pipe is registered before the child can end: SIGCHLD waits for the mask's end
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
        pid = os.fork()
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])
            child(lib, parent, req, fds)
        STATUS[pid] = fds[4]
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])
        for fd in fds[:4]:
            os.close(fd)
        channel.send(json.dumps({"ok": True, "pid": pid}))
    reap()
    # Straight out, as a worker leaves: Python's and torch's teardown is a second of CPU that the parent
    # waits for at the end of every evaluating command, and nothing in this process needs it.
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
