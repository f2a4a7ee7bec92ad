"""The fork server (harness/worker/template.py, docs/worker.md "The fork server") over its own fd 3/4 protocol,
with the real lib/libsbspawn.so: it forks workers that answer on the channel they were given, reports how each
ended on its status pipe (an exit code, a signal), refuses a malformed spawn and goes on serving, and its
workers die with it unless they are to outlive it."""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

from conftest import ROOT, start_on_channel

LIB = ROOT / "lib" / "libsbspawn.so"
pytestmark = pytest.mark.skipif(not LIB.exists(), reason="lib/libsbspawn.so is not built (run make)")


class Server:
    """template.py started as stitchbench starts it: fds 3 and 4 are Unix sockets, the library in the environment."""

    def __init__(self, tmp_path):
        env = dict(os.environ, STITCHBENCH_SPAWN_LIB=str(LIB), HOME=str(tmp_path))
        self.proc, self.req, self.rep = start_on_channel(
            [sys.executable, "-u", str(ROOT / "harness" / "worker" / "template.py")], env=env, cwd=str(tmp_path),
            stderr=subprocess.PIPE)
        self.replies = self.rep.makefile("r")
        self.dir = tmp_path

    def ask(self, req, fds=()):
        data = (json.dumps(req) + "\n").encode()
        if fds:
            socket.send_fds(self.req, [data], list(fds))
        else:
            self.req.sendall(data)
        line = self.replies.readline()
        assert line, "the server closed its channel: %s" % self.proc.stderr.read().decode()[-2000:]
        return json.loads(line)

    def spawn(self, outlives=False):
        """A trusted worker (no sandbox); returns (pid, its channel's request and reply sockets, status pipe)."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        req_p, req_c = socket.socketpair()
        rep_p, rep_c = socket.socketpair()
        st_r, st_w = os.pipe()
        env = ["HOME=%s" % self.dir, "PATH=%s" % os.environ.get("PATH", "/usr/bin:/bin"), "LANG=C.UTF-8"]
        reply = self.ask({"cmd": "spawn", "fds": 5, "cwd": str(self.dir), "env": env, "outlives_parent": outlives,
                          "sandbox": None}, [out_w, err_w, req_c.fileno(), rep_c.fileno(), st_w])
        for fd in (out_w, err_w, st_w):
            os.close(fd)
        req_c.close()
        rep_c.close()
        assert reply["ok"], reply
        return reply["pid"], req_p, rep_p, st_r, (out_r, err_r)

    def close(self):
        self.req.close()
        self.rep.close()
        self.replies.close()
        try:
            self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.stderr.close()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path)
    yield s
    s.close()


def call(req_sock, rep_sock, req):
    req_sock.sendall((json.dumps(req) + "\n").encode())
    return json.loads(rep_sock.makefile("r").readline())


def status_of(fd, timeout=20):
    """The wait status the server wrote (4 bytes), then end-of-file."""
    os.set_blocking(fd, True)
    deadline = time.time() + timeout
    data = b""
    while len(data) < 4 and time.time() < deadline:
        chunk = os.read(fd, 4 - len(data))
        if not chunk:
            break
        data += chunk
    rest = os.read(fd, 1)
    os.close(fd)
    assert len(data) == 4 and rest == b"", (data, rest)
    return struct.unpack("=i", data)[0]


def test_hello_names_the_server(server):
    assert server.ask({"cmd": "hello"}) == {"ok": True, "pid": server.proc.pid}


def test_forked_worker_answers_and_its_exit_code_arrives(server):
    pid, req, rep, st, outs = server.spawn()
    hello = call(req, rep, {"cmd": "hello"})
    assert hello["ok"] and hello["pid"] == pid  # the worker itself, in our PID namespace
    assert call(req, rep, {"cmd": "quit"})["ok"]
    status = status_of(st)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    for fd in outs:
        os.close(fd)


def test_a_signal_that_ends_a_worker_arrives(server):
    pid, req, rep, st, outs = server.spawn()
    assert call(req, rep, {"cmd": "hello"})["ok"]
    assert os.getpgid(pid) == pid  # a session and group of its own: stitchbench kills the group
    os.killpg(pid, signal.SIGKILL)
    status = status_of(st)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    for fd in outs:
        os.close(fd)


def test_a_malformed_spawn_is_refused_and_the_server_goes_on(server):
    a, b = os.pipe()
    reply = server.ask({"cmd": "spawn", "fds": 2, "cwd": str(server.dir), "env": []}, [a, b])
    os.close(a)
    os.close(b)
    assert reply["ok"] is False and "5 descriptors" in reply["message"]
    assert server.ask({"cmd": "hello"})["ok"]


def gone(pid, timeout=10):
    """Whether pid has ended (no process, or a zombie no one reaped yet) within timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


def test_workers_die_with_the_server_unless_they_outlive_it(server):
    pid, req, rep, st, outs = server.spawn()
    kept, kreq, krep, kst, kouts = server.spawn(outlives=True)
    assert call(req, rep, {"cmd": "hello"})["ok"] and call(kreq, krep, {"cmd": "hello"})["ok"]
    server.close()  # its channel closes: it exits
    assert gone(pid), "a worker outlived its server"
    # its status pipe ends without a status (stitchbench counts that as killed: proc.c)
    os.set_blocking(st, True)
    assert os.read(st, 4) == b""
    os.close(st)
    # the kept one still answers, and exits on its own channel's end
    assert call(kreq, krep, {"cmd": "hello"})["pid"] == kept
    kreq.close()
    krep.close()
    assert gone(kept), "the kept worker did not exit when its channel closed"
    for fd in outs + kouts + (kst,):
        os.close(fd)
