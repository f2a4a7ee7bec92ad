#!/usr/bin/env python3
"""sbclient.py - spreads a batch of candidates over `stitchbench serve` endpoints and returns one result
per candidate, in order; when an endpoint dies, its part of the batch goes to another (docs/serve.md).

Standard library only, so a trainer can vendor this one file. As a library:

    from sbclient import Client
    c = Client(["http://node1:8470", "http://node2:8470"], token=os.environ.get("SB_SERVE_TOKEN"))
    results = c.evaluate([{"problem": "L1/19", "source": code}], reward="stitchcuda")
    rewards = [r["reward"] for r in results]      # None where the candidate was not judged

As a program (one JSON result per line on stdout, in the order of the files):

    sbclient.py --endpoints endpoints.txt --problem L1/2 a.py b.py
    sbclient.py --endpoints http://127.0.0.1:8470 --samples generations/   # level_1_problem_2_sample_0_kernel.py
"""
import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor


class ServeError(Exception):
    """A request the servers refuse (bad input, a spent budget) or a batch no endpoint could judge."""


class _Down(Exception):
    """An endpoint that cannot answer now: refused, reset, timed out, 5xx."""


def read_endpoints(spec):
    """Endpoints from a file (one URL a line, # comments) or a comma-separated list of URLs."""
    if os.path.isfile(spec):
        with open(spec) as f:
            urls = [l.strip() for l in f if l.strip() and not l.lstrip().startswith("#")]
    else:
        urls = [u.strip() for u in spec.split(",") if u.strip()]
    if not urls:
        raise ServeError("no endpoints in %r" % spec)
    return [u.rstrip("/") for u in urls]


def candidate_request_id(c):
    """The same candidate with the same reward gets the same id, so a retry of it on the same server is
    answered from that server's store instead of being judged again."""
    h = hashlib.sha256()
    for k in ("problem", "source", "reward", "lambda"):
        h.update(repr(c.get(k)).encode())
        h.update(b"\0")
    return "sbc-" + h.hexdigest()[:40]


class Client:
    def __init__(self, endpoints, token=None, chunk=16, timeout=30.0, poll=60, give_up_after=1800.0,
                 verdicts="summary", log=None):
        self.endpoints = list(endpoints) if not isinstance(endpoints, str) else read_endpoints(endpoints)
        self.token = token
        self.chunk = max(1, int(chunk))
        self.timeout = timeout          # seconds for one HTTP exchange, beyond any long poll
        self.poll = poll                # seconds a long poll waits on the server
        self.give_up_after = give_up_after
        self.verdicts = verdicts
        self.log = log or (lambda msg: print("sbclient: " + msg, file=sys.stderr))
        self._dead = {}                 # endpoint -> when it was last found down
        self._lock = threading.Lock()
        self._next = 0

    # ---------- HTTP ----------

    def _call(self, endpoint, method, path, body=None, timeout=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(endpoint + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as r:
                return r.status, json.loads(r.read() or b"{}"), r.headers
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                payload = json.loads(text)
            except ValueError:
                payload = {"error": text.decode(errors="replace")}
            if e.code >= 500:
                raise _Down("%s %s: %d %s" % (method, path, e.code, payload.get("error", "")))
            return e.code, payload, e.headers
        except (urllib.error.URLError, OSError, ValueError) as e:
            # refused, reset, timed out, or an answer cut off: the endpoint is down for this batch
            raise _Down("%s %s: %s" % (method, path, getattr(e, "reason", e)))

    # ---------- endpoints ----------

    def _pick(self, avoid=()):
        """The next live endpoint, round robin; one found down is tried again after a minute."""
        with self._lock:
            now = time.monotonic()
            n = len(self.endpoints)
            for _ in range(n):
                e = self.endpoints[self._next % n]
                self._next += 1
                if e in avoid:
                    continue
                if now - self._dead.get(e, -1e9) > 60:
                    return e
            return None

    def _mark_down(self, e, why):
        with self._lock:
            self._dead[e] = time.monotonic()
        self.log("%s is down (%s); its candidates go to another endpoint" % (e, why))

    # ---------- one chunk ----------

    def _run_chunk(self, items):
        """Submits items (a list of candidate dicts) as one job and waits for it, moving to another endpoint
        when the one it is on goes down. Returns the result dicts in order."""
        request_id = "sbc-job-" + uuid.uuid4().hex
        deadline = time.monotonic() + self.give_up_after
        tried = set()
        while time.monotonic() < deadline:
            e = self._pick(avoid=tried)
            if e is None:
                tried.clear()
                if not self._pick():
                    time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
                continue
            try:
                return self._on(e, request_id, items, deadline)
            except _Down as why:
                self._mark_down(e, why)
                tried.add(e)
        raise ServeError("no endpoint judged %d candidates within %.0f s (%s)" %
                         (len(items), self.give_up_after, ", ".join(self.endpoints)))

    def _on(self, e, request_id, items, deadline):
        body = {"candidates": items, "request_id": request_id, "verdicts": self.verdicts}
        while True:
            status, payload, headers = self._call(e, "POST", "/v1/jobs", body)
            if status == 429:
                wait = float(headers.get("Retry-After") or 5)
                if time.monotonic() + wait > deadline:
                    raise _Down("queue full past the deadline")
                self.log("%s: queue full, retrying in %.0f s" % (e, wait))
                time.sleep(min(wait, 30))
                continue
            if status not in (200, 202):
                raise ServeError("%s refused the batch: %d %s" % (e, status, payload.get("error")))
            break
        job = payload["job_id"]
        while payload.get("state") != "done":
            if time.monotonic() > deadline:
                raise _Down("job %s did not end in time" % job)
            status, payload, _ = self._call(e, "GET", "/v1/jobs/%s?wait=%d&verdicts=%s" % (job, self.poll, self.verdicts),
                                            timeout=self.poll + self.timeout)
            if status != 200:
                raise _Down("job %s: %d %s" % (job, status, payload.get("error")))
        out = payload["candidates"]
        for r in out:
            r["endpoint"] = e
        return out

    # ---------- the batch ----------

    def evaluate(self, candidates, reward=None, lam=None):
        """candidates: dicts with "problem" and "source" (and optionally "reward", "lambda",
        "request_id"). Returns one result per candidate, in order: the server's answer for it (status,
        reward, reward_note, speedup, findings, ...) plus "endpoint"."""
        items = []
        for c in candidates:
            x = {"problem": c["problem"], "source": c["source"]}
            for k, v in (("reward", c.get("reward", reward)), ("lambda", c.get("lambda", lam))):
                if v is not None:
                    x[k] = v
            x["request_id"] = c.get("request_id") or candidate_request_id(x)
            items.append(x)
        chunks = [items[i:i + self.chunk] for i in range(0, len(items), self.chunk)]
        if not chunks:
            return []
        with ThreadPoolExecutor(max_workers=min(len(chunks), 2 * len(self.endpoints))) as pool:
            parts = list(pool.map(self._run_chunk, chunks))
        return [r for part in parts for r in part]


# ---------- the program ----------

SAMPLE_RE = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--endpoints", required=True, help="a file of URLs, one a line, or URL,URL,...")
    ap.add_argument("--token-env", default="SB_SERVE_TOKEN", help="variable holding the bearer token")
    ap.add_argument("--problem", help="the problem of every FILE (L1/2)")
    ap.add_argument("--samples", help="a KernelBench generations folder instead of FILEs")
    ap.add_argument("--reward", choices=["stitchcuda", "speedup", "pass"])
    ap.add_argument("--lambda", dest="lam", type=float)
    ap.add_argument("--chunk", type=int, default=16)
    ap.add_argument("--give-up-after", type=float, default=1800.0)
    ap.add_argument("--verdicts", choices=["summary", "full"], default="summary",
                    help="full: each result carries its whole verdict (replay_check.py replays them)")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args(argv)
    cands = []
    if a.samples:
        for name in sorted(os.listdir(a.samples)):
            m = SAMPLE_RE.search(name)
            if m:
                with open(os.path.join(a.samples, name)) as f:
                    cands.append({"problem": "L%s/%s" % (m.group(1), m.group(2)), "source": f.read()})
    elif a.problem:
        for p in a.files:
            with open(p) as f:
                cands.append({"problem": a.problem, "source": f.read()})
    else:
        ap.error("give --problem with FILEs, or --samples DIR")
    c = Client(read_endpoints(a.endpoints), token=os.environ.get(a.token_env) or None, chunk=a.chunk,
               give_up_after=a.give_up_after, verdicts=a.verdicts)
    try:
        for r in c.evaluate(cands, reward=a.reward, lam=a.lam):
            print(json.dumps(r, sort_keys=True))
    except ServeError as e:
        print("sbclient: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
