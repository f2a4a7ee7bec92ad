# exp_driver.py - a diagnostic: drives two worker.py processes over fd3/fd4 from Python, without the
# C parent, to tell whether timing spread comes from the worker or the parent.
# Usage: python3 scripts/bench/exp_driver.py [full|min] [solo|pairs|all]   (PROB=..., DEV=... in the env)
#   full/min: the workers get this environment or a minimal one; solo: one worker, then each beside the
#   other, 50 calls back to back; pairs: the two workers alternating blocks of several sizes.
import json, os, subprocess, sys, statistics
prob = os.path.abspath(os.environ.get("PROB", "kernelbench/suite/level1/1_Square_GEMM.py"))
envmode = sys.argv[1] if len(sys.argv) > 1 else "full"
def start():
    r3, w3 = os.pipe(); r4, w4 = os.pipe()
    os.dup2(r3, 100); os.dup2(w4, 101); os.close(r3); os.close(w4); r3, w4 = 100, 101
    env = dict(os.environ) if envmode == "full" else {"HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    p = subprocess.Popen([sys.executable, "harness/worker/worker.py"],
                         preexec_fn=lambda: (os.dup2(r3, 3), os.dup2(w4, 4)), close_fds=False, env=env)
    os.close(r3); os.close(w4)
    return p, os.fdopen(w3, "w"), os.fdopen(r4, "r")
def ask(w, req):
    w[1].write(json.dumps(req) + "\n"); w[1].flush()
    rep = json.loads(w[2].readline())
    assert rep["ok"], rep
    return rep
def setup(w):
    ask(w, {"cmd": "load", "problem": prob, "device": os.environ.get("DEV", "cuda:0"), "seed": 42, "compile": False})
    ask(w, {"cmd": "timing_setup", "seeds": [1, 2, 3], "flush_bytes": 2 * 60 * 1024 * 1024 * 2})
    ask(w, {"cmd": "warmup", "min_ms": 100, "min_calls": 3})
    return w
def solo(tag, w):
    for seeds in (None, list(range(50)), None):
        us = ask(w, {"cmd": "time", "sets": list(range(50)), "seeds": seeds})["us"]
        print(envmode, tag, "seeds" if seeds else "no seeds", "median %.1f min %.1f" % (statistics.median(us), min(us)), flush=True)
what = sys.argv[2] if len(sys.argv) > 2 else "all"
ws = [setup(start())]
if what != "pairs":
    solo("A alone", ws[0])
ws.append(setup(start()))
if what != "pairs":
    solo("A with B", ws[0])
    solo("B with A", ws[1])
if what == "solo":
    sys.exit(0)
for block, prime in ((50, 0), (10, 5), (1, 5), (10, 0)):
    res = [[], []]
    for r in range(100 // block + 1):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        for s in order:
            if prime:
                ask(ws[s], {"cmd": "prime", "set": block - 1, "ms": prime})
            us = ask(ws[s], {"cmd": "time", "sets": list(range(block)), "seeds": list(range(block))})["us"]
            if r: res[s] += us
    print(envmode, "block %3d prime %d: A median %.1f min %.1f | B median %.1f min %.1f | ratio %.4f" % (
        block, prime, statistics.median(res[0]), min(res[0]), statistics.median(res[1]), min(res[1]),
        statistics.median([a / b for a, b in zip(res[0], res[1])])), flush=True)
for w in ws:
    w[1].write('{"cmd":"quit"}\n'); w[1].flush(); w[0].wait()
