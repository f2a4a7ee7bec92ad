"""The facts the worker reports for the runtime hack checks (harness/worker/facts.py, docs/checks.md).

Each test runs the real worker on a small problem with a candidate written for it, and checks that the
fact a hack changes does change, and that an honest candidate leaves it alone (no false alarm).
Run with: /usr/bin/python3 -m pytest -q tests/worker/test_facts.py
"""

import os
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
import facts  # noqa: E402
import sbtensors  # noqa: E402
import worker as worker_module  # noqa: E402

PROBLEM = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(64))

    def forward(self, x):
        return torch.relu(x) * self.scale


def get_inputs():
    return [torch.randn(8, 64)]


def get_init_inputs():
    return []
"""

HEAD = "import torch\nimport torch.nn as nn\n"


def candidate(tmp_path, name, body, top=""):
    path = tmp_path / (name + ".py")
    path.write_text(HEAD + top + "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.scale = nn.Parameter(torch.ones(64))\n\n    def forward(self, x):\n" + body + "\n")
    return str(path)


def load(tmp_path, cand):
    problem = tmp_path / "1_Relu_Scale.py"
    problem.write_text(PROBLEM)
    return {"cmd": "load", "problem": str(problem), "candidate": cand, "device": "cpu", "seed": 42}


def run(tmp_path, seed=1, **extra):
    return dict({"cmd": "run", "seed": seed, "out": str(tmp_path / ("out_%d.safetensors" % seed))}, **extra)


def test_an_honest_candidate_reports_nothing_suspicious(tmp_path, worker):
    cand = candidate(tmp_path, "honest", "        return torch.relu(x) * self.scale")
    replies = worker([load(tmp_path, cand), run(tmp_path)])
    assert all(r["ok"] for r in replies), replies
    loaded, ran = replies[0], replies[1]
    assert loaded["patched"] == [] and ran["patched"] == []
    out = ran["outputs"][0]
    assert out["exact"] is True and out["type"] == "torch.Tensor" and out["layout"] == "torch.strided"
    assert out["device"] == "cpu" and out["meta"] is False and out["contiguous"] is True
    # a fresh output shares memory with neither the input nor the parameter
    assert out["storage"] not in ran["inputs_storage"] and out["storage"] not in ran["params_storage"]
    assert len(ran["params_storage"]) == 1 and ran["params_storage"][0][1] == 64 * 4
    assert ran["threads"]["python"][0] == ran["threads"]["python"][1]
    assert ran["inputs_before"] == ran["inputs_after"]


def test_replacing_a_watched_function_is_reported_at_import_and_after_a_call(tmp_path, worker):
    at_import = candidate(tmp_path, "patch_import", "        return torch.relu(x) * self.scale",
                          top="torch.allclose = lambda *a, **k: True\n")
    in_call = candidate(tmp_path, "patch_call", "        import time\n        time.perf_counter = lambda: 0.0\n"
                        "        return torch.relu(x) * self.scale")
    r1 = worker([load(tmp_path, at_import), run(tmp_path)])
    r2 = worker([load(tmp_path, in_call), run(tmp_path), {"cmd": "integrity"}])
    assert r1[0]["patched"] == ["torch.allclose"]
    assert r2[0]["patched"] == [] and r2[1]["patched"] == ["time.perf_counter"]
    assert r2[2]["patched"] == ["time.perf_counter"]


def test_a_thread_left_running_after_the_call_is_counted(tmp_path, worker):
    cand = candidate(tmp_path, "thread", "        t = threading.Thread(target=time.sleep, args=(3,), daemon=True)\n"
                     "        t.start()\n        return torch.relu(x) * self.scale", top="import threading\nimport time\n")
    ran = worker([load(tmp_path, cand), run(tmp_path)])[1]
    assert ran["threads"]["python"][1] == ran["threads"]["python"][0] + 1
    assert ran["threads"]["os"][1] >= ran["threads"]["os"][0] + 1 and ran["threads"]["new"] >= 1


def test_outputs_that_alias_an_input_or_a_parameter_or_are_subclasses(tmp_path, worker):
    alias_in = candidate(tmp_path, "alias_in", "        return x.view(8, 64)")
    alias_param = candidate(tmp_path, "alias_param", "        return self.scale.data.expand(8, 64)")
    sub = candidate(tmp_path, "sub", "        return (torch.relu(x) * self.scale).as_subclass(Lazy)",
                    top="\n\nclass Lazy(torch.Tensor):\n    pass\n")
    a = worker([load(tmp_path, alias_in), run(tmp_path)])[1]
    assert a["outputs"][0]["storage"] == a["inputs_storage"][0]
    b = worker([load(tmp_path, alias_param), run(tmp_path)])[1]
    assert b["outputs"][0]["storage"] == b["params_storage"][0] and b["outputs"][0]["contiguous"] is False
    c = worker([load(tmp_path, sub), run(tmp_path)])[1]
    assert c["outputs"][0]["exact"] is False and c["outputs"][0]["type"].endswith(".Lazy")


def test_rotate_writes_new_values_into_the_same_tensors(tmp_path, worker):
    honest = candidate(tmp_path, "honest", "        return torch.relu(x) * self.scale")
    cached = candidate(tmp_path, "cached", "        key = x.data_ptr()\n        if key not in CACHE:\n"
                       "            CACHE[key] = torch.relu(x) * self.scale\n        return CACHE[key]", top="CACHE = {}\n")
    outs = [str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")]
    for cand, same in ((honest, False), (cached, True)):
        r = worker([load(tmp_path, cand), {"cmd": "rotate", "seeds": [3, 4], "out": outs}])[1]
        assert r["ok"] and len(r["calls"]) == 2
        assert r["calls"][0]["inputs_storage"] == r["calls"][1]["inputs_storage"]  # the same memory
        a, _ = sbtensors.load(outs[0])
        b, _ = sbtensors.load(outs[1])
        assert torch.equal(a["out0"], b["out0"]) is same
    # the second call saw seed 4's values: the same fingerprint as a plain draw of seed 4
    fresh = worker([load(tmp_path, honest), run(tmp_path, seed=4)])[1]
    assert r["inputs"] == fresh["inputs_before"]


def test_audit_requests_signed_inputs_saved_inputs_and_a_second_call(tmp_path, worker):
    cand = candidate(tmp_path, "noisy", "        return torch.relu(x) + torch.rand_like(x) * 0")
    ins = str(tmp_path / "in.safetensors")
    again = str(tmp_path / "again.safetensors")
    r = worker([load(tmp_path, cand), run(tmp_path, seed=5, signed=True, inputs_out=ins, again_out=again)])[1]
    assert r["ok"] and r["again"][0]["shape"] == [8, 64]
    saved, _ = sbtensors.load(ins)
    torch.manual_seed(5)
    drawn = torch.randn(8, 64)
    assert torch.equal(saved["in0"].abs(), drawn.abs()) and not torch.equal(saved["in0"], drawn)


def test_signed_flips_about_half_the_signs_and_leaves_integers_alone():
    x = torch.rand(1000, 100)
    ids = torch.randint(0, 10, (50,))
    sx, sids = worker_module.signed([x, ids], seed=7)
    assert torch.equal(sx.abs(), x)
    frac = (sx < 0).float().mean().item()
    assert 0.45 < frac < 0.55
    assert sids is ids
    again, _ = worker_module.signed([x, ids], seed=7)
    assert torch.equal(again, sx)  # seeded: both workers and every rerun agree


def test_the_fingerprint_sees_a_permutation_that_keeps_sum_and_squares():
    x = torch.arange(12.0).reshape(3, 4)
    y = x.flip(1)
    fx, fy = worker_module.fingerprint([x])[0], worker_module.fingerprint([y])[0]
    assert fx[:5] == fy[:5]  # sum, sum of squares, numel, dtype and shape agree
    assert fx[5] != fy[5]
    rows = torch.rand(64, 8191 * 2 + 5).double()  # whole rows of the weighting, and a tail
    swapped = rows.clone()
    swapped[[3, 9]] = rows[[9, 3]]
    assert worker_module.weighted_sum(rows) != worker_module.weighted_sum(swapped)
    assert worker_module.weighted_sum(rows) == worker_module.weighted_sum(rows.clone())


def test_identity_ignores_classmethods_and_sees_deleted_attributes():
    # a classmethod read through its class is a new bound method each time; stored, it is one object
    ident = facts.Identity({"torch": torch}, extra=[("torch.cuda.Event", "from_ipc_handle")])
    assert torch.cuda.Event.from_ipc_handle is not torch.cuda.Event.from_ipc_handle
    assert ident.changed() == []
    saved = torch.equal
    try:
        del torch.equal
        assert "torch.equal" in ident.changed()
    finally:
        torch.equal = saved
    assert ident.changed() == []


def test_the_checksums_in_steps_are_the_sums_of_the_whole_tensor():
    # the fast path (steps of whole rows through a reused buffer) against the three sums computed at once,
    # for steps of 1, 2 and 3 rows, the default, one step for everything, and inputs of every kind
    for x in (torch.rand(3 * 8191 + 17), torch.rand(5, 8191), torch.rand(7, 3).t(), torch.randint(-9, 9, (4, 9000)),
              torch.rand(100) > 0.5, torch.rand(2, 3, 8191 * 2 + 1).half(), torch.empty(0)):
        d = x.to(torch.float64).reshape(-1)
        i = torch.arange(d.numel(), dtype=torch.float64)
        want = [float(d.sum()), float((d * d).sum()),
                float((d * (i % 8191 + 1) * (torch.div(i, 8191, rounding_mode="floor") % 7919 + 1)).sum())]
        for rows in (1, 2, 3, None, 10 ** 6):
            got = worker_module.checksums(x, rows)
            assert all(abs(g - w) <= 1e-12 * max(1.0, abs(w)) for g, w in zip(got, want)), (x.shape, rows, got, want)
    # and the same tensor gives the same fingerprint twice, bit for bit: the two workers compare them exactly
    x = torch.rand(33, 8191 + 5)
    assert worker_module.fingerprint([x]) == worker_module.fingerprint([x.clone()])


def test_the_weighted_sum_is_the_documented_formula():
    # docs/worker.md: element i weighs (i mod 8191 + 1) * (i div 8191 mod 7919 + 1)
    x = torch.rand(3 * 8191 + 17, dtype=torch.float64)
    i = torch.arange(x.numel(), dtype=torch.float64)
    expected = float((x * (i % 8191 + 1) * (torch.div(i, 8191, rounding_mode="floor") % 7919 + 1)).sum())
    got = worker_module.weighted_sum(x)
    assert abs(got - expected) <= 1e-9 * abs(expected)


def test_a_run_reports_its_seconds_by_step(tmp_path, worker):
    cand = candidate(tmp_path, "steps", "        return torch.relu(x) * self.scale")
    again = str(tmp_path / "again.safetensors")
    ran = worker([load(tmp_path, cand), run(tmp_path, again_out=again)])[1]
    assert ran["ok"], ran
    assert set(ran["phases"]) == {"draw", "fingerprint", "forward", "save", "again"}
    assert all(v >= 0 for v in ran["phases"].values())


def test_the_early_cuda_start_is_only_for_a_named_gpu_and_never_stops_a_worker(tmp_path, worker, monkeypatch):
    probe = "import worker, sys; t = worker.CUDA_STARTING; t and t.join(); print(type(t).__name__)"
    names = {}
    for device in ["", "cpu", "cuda", "cuda:x", "cuda:0"]:
        env = dict(os.environ, STITCHBENCH_WORKER_DEVICE=device)
        names[device] = subprocess.run([sys.executable, "-c", probe], cwd=ROOT / "harness" / "worker", env=env,
                                       capture_output=True, text=True, timeout=120).stdout.strip()
    assert names == {"": "NoneType", "cpu": "NoneType", "cuda": "NoneType", "cuda:x": "NoneType", "cuda:0": "Thread"}
    # on a machine without a GPU (or without libcuda) the thread fails quietly and the worker works
    monkeypatch.setenv("STITCHBENCH_WORKER_DEVICE", "cuda:0")
    cand = candidate(tmp_path, "early", "        return torch.relu(x) * self.scale")
    replies = worker([load(tmp_path, cand), run(tmp_path)])
    assert all(r["ok"] for r in replies), replies
