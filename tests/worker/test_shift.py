# test_shift.py - the robust trials' shifted draw (`run` with "shift", docs/verdict.md "Robust
# correctness"): every floating-point tensor of get_inputs() becomes 3 * (2x - 1), so torch.rand's [0, 1)
# becomes [-3, 3); integer and bool tensors and other values are drawn as usual, and one seed gives the
# same inputs every time, which is what lets both workers draw alike. "nonfinite" counts the NaN and inf
# of the outputs, which is how the parent learns that the reference is undefined on the shifted inputs.
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
from sbtensors import load  # noqa: E402

PROBLEM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, h, ids, mask, k):
        return torch.log(x) * k, h.float().sum(1) + ids.float() + mask.float()


def get_inputs():
    return [torch.rand(64, 32), torch.rand(8, 16).half(), torch.randint(0, 100, (8,)), torch.rand(8) > 0.5, 3]


def get_init_inputs():
    return []
'''


def draws(worker, tmp_path, runs):
    problem = tmp_path / "problem.py"
    problem.write_text(PROBLEM)
    reqs = [{"cmd": "load", "problem": str(problem), "device": "cpu", "seed": 42}]
    for i, extra in enumerate(runs):
        reqs.append(dict({"cmd": "run", "seed": 1234, "out": str(tmp_path / ("out%d.safetensors" % i)),
                          "inputs_out": str(tmp_path / ("in%d.safetensors" % i))}, **extra))
    replies = worker(reqs)
    assert all(r["ok"] for r in replies), replies
    return replies[1:1 + len(runs)], [load(str(tmp_path / ("in%d.safetensors" % i)))[0] for i in range(len(runs))]


def test_shift_maps_floats_and_leaves_the_rest(worker, tmp_path):
    _, (plain, shifted, again) = draws(worker, tmp_path, [{}, {"shift": True}, {"shift": True}])
    x, h = shifted["in0"], shifted["in1"]
    assert x.dtype == torch.float32 and h.dtype == torch.float16
    assert torch.equal(x, 3 * (2 * plain["in0"] - 1))
    assert torch.equal(h, 3 * (2 * plain["in1"] - 1))
    # torch.rand's [0, 1) is now [-3, 3): signed, and past 1 in magnitude
    for t in (x, h):
        assert float(t.min()) >= -3 and float(t.max()) < 3
        assert float(t.min()) < -1 and float(t.max()) > 1
    assert float(plain["in0"].min()) >= 0 and float(plain["in0"].max()) < 1
    # integers and bools are drawn as they always are
    assert shifted["in2"].dtype == torch.int64 and torch.equal(shifted["in2"], plain["in2"])
    assert shifted["in3"].dtype == torch.bool and torch.equal(shifted["in3"], plain["in3"])
    # one seed, one draw: the candidate's and the reference's workers see the same inputs
    assert set(again) == set(shifted) and all(torch.equal(again[k], shifted[k]) for k in shifted)


def test_nonfinite_counts_the_outputs_undefined_on_shifted_inputs(worker, tmp_path):
    (plain, counted, shifted), (_, ins, _) = draws(worker, tmp_path, [{"nonfinite": True},
                                                                       {"shift": True, "nonfinite": True},
                                                                       {"shift": True}])
    assert plain["nonfinite"] == 0                       # log of (0, 1) is finite
    assert counted["nonfinite"] == int((ins["in0"] < 0).sum()) > 0  # log of a negative number is NaN
    assert "nonfinite" not in shifted                    # counted only when asked, for the reference
    assert plain["inputs_before"] != counted["inputs_before"]
    assert counted["inputs_before"] == shifted["inputs_before"]
