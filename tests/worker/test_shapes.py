# test_shapes.py - the worker's `shapes` command (H18): the problem's upper-case integer constants are
# halved for one call of a model built anew, and put back afterwards, so the calls that follow (and the
# model they use) see the problem as it was. A Linear problem checks that the model is rebuilt from the
# scaled init inputs, not reused.
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "harness" / "worker"))
from sbtensors import load  # noqa: E402
from conftest import SMALL_SUITE as SUITE  # noqa: E402


def test_shapes_scales_then_restores(worker, tmp_path):
    problem = str(SUITE / "level1" / "2_ReLU.py")
    out_scaled, out_after = str(tmp_path / "scaled.safetensors"), str(tmp_path / "after.safetensors")
    replies = worker([
        {"cmd": "load", "problem": problem, "device": "cpu", "seed": 42},
        {"cmd": "shapes", "num": 1, "den": 2, "seed": 7, "out": out_scaled},
        {"cmd": "run", "seed": 7, "out": out_after},
    ])
    load_r, shapes_r, run_r = replies[0], replies[1], replies[2]
    assert load_r["ok"] and shapes_r["ok"] and run_r["ok"], replies
    assert shapes_r["changed"] == {"BATCH": [256, 128], "DIM": [256, 128]}
    assert shapes_r["outputs"][0]["shape"] == [128, 128]
    assert run_r["outputs"][0]["shape"] == [256, 256]      # the constants were put back
    scaled, _ = load(out_scaled)
    assert list(scaled["out0"].shape) == [128, 128]


def test_shapes_rebuilds_the_model_from_scaled_init_inputs(worker, tmp_path):
    # L2/1 builds nn.Linear(IN_FEATURES, OUT_FEATURES) from get_init_inputs(): halved, the weights change shape
    problem = str(SUITE / "level2" / "1_Linear_Bias_GELU.py")
    replies = worker([
        {"cmd": "load", "problem": problem, "device": "cpu", "seed": 42},
        {"cmd": "shapes", "num": 1, "den": 2, "seed": 7, "out": str(tmp_path / "s.safetensors")},
    ])
    assert replies[0]["ok"] and replies[1]["ok"], replies
    changed = replies[1]["changed"]
    assert len(changed) >= 2 and all(new == old // 2 for old, new in changed.values())
    batch = [k for k in changed if "BATCH" in k]
    out_features = [k for k in changed if "OUT" in k]
    assert batch and out_features, changed
    assert replies[1]["outputs"][0]["shape"] == [changed[batch[0]][1], changed[out_features[0]][1]]


def test_shapes_leaves_an_operators_geometry_alone(worker, tmp_path):
    # L1/6 is a 3x3 convolution: halving KERNEL_SIZE would ask for a 1x1 one, another operator, so only
    # the sizes (batch, channels, height, width) are scaled
    problem = str(SUITE / "level1" / "6_Conv2d.py")
    replies = worker([
        {"cmd": "load", "problem": problem, "device": "cpu", "seed": 42},
        {"cmd": "shapes", "num": 1, "den": 2, "seed": 7, "out": str(tmp_path / "s.safetensors")},
    ])
    assert replies[0]["ok"] and replies[1]["ok"], replies
    changed = replies[1]["changed"]
    assert "KERNEL_SIZE" not in changed and {"BATCH", "HEIGHT", "WIDTH"} <= set(changed), changed
