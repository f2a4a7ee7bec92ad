"""Checks on the bundled problem suite, kernelbench/suite/level*/ID_Name.py.

Every problem must load like an upstream KernelBench file, cost little enough on a CPU for the end-to-end
tests (a budget in units of a fixed workload timed beside it, so a slower machine moves both), be
reproducible under a seed (unless it declares NONDETERMINISTIC = True), and keep the traps it claims.
Run with: /usr/bin/python3 -m pytest -q tests/worker/test_suite.py
"""

import importlib.util
import math
import re
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.nn as nn

SUITE = Path(__file__).resolve().parents[2] / "kernelbench" / "suite"
FILE_NAME = re.compile(r"^[0-9]+_[A-Za-z0-9_]+\.py$")
SEED = 42
# A problem's construct + inputs + forward may cost at most this many calibration units (_calibration_s):
# the largest bundled problem (level2/2) costs 18-19 alone and 21 beside two busy loops on a 2-core
# machine, the rest at most 15; 30 units are about 1.3 s of one core there.
COST_LIMIT_UNITS = 30
# Plain Python values a constructor argument may be built from (get_init_inputs).
PLAIN_TYPES = (bool, int, float, str, type(None))


def _problem_id(path):
    return int(path.name.split("_", 1)[0])


def _problem_files():
    files = [p for p in SUITE.glob("level*/*.py") if p.parent.name[len("level"):].isdigit()]
    return sorted(files, key=lambda p: (int(p.parent.name[len("level"):]), _problem_id(p)))


PROBLEMS = _problem_files()
LEVELS = sorted({p.parent.name for p in PROBLEMS})


def _label(path):
    return f"{path.parent.name}/{path.name}"


def _load(path):
    """Import a problem file by path, as the harness does, without writing __pycache__ into the suite."""
    spec = importlib.util.spec_from_file_location(f"suite_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def _build(module):
    """Seed, build the constructor arguments, seed again, construct: KernelBench's init protocol."""
    torch.manual_seed(SEED)
    init_inputs = module.get_init_inputs()
    torch.manual_seed(SEED)
    return module.Model(*init_inputs)


def _run(module):
    """One seeded construct + inputs + forward; returns (inputs, output, CPU seconds of this thread).

    The callers hold torch to one thread, so the calling thread's CPU time is all the work done, and
    time the machine gives to other processes is not counted: a wall clock on a shared 2-core CI
    machine measures its neighbours as much as the problem."""
    start = time.thread_time()
    model = _build(module)
    inputs = module.get_inputs()
    with torch.no_grad():
        output = model(*inputs)
    return inputs, output, time.thread_time() - start


def _calibration_s():
    """CPU seconds of one calibration unit on this machine: a 512 x 512 GEMM and an add over 4 Mi
    floats, into tensors allocated beforehand, one thread, the best of four (the first warms up). The unit
    holds a compute-bound and a memory-bound part, as the problems do, so a machine slower at either
    moves the unit and the problems together; fresh allocations are left out of it because their
    page faults vary with what the allocator kept from before."""
    g = torch.Generator().manual_seed(SEED)
    a, c = torch.randn(512, 512, generator=g), torch.empty(512, 512)
    v, w = torch.randn(1 << 22, generator=g), torch.empty(1 << 22)
    best = math.inf
    for _ in range(4):
        start = time.thread_time()
        torch.mm(a, a, out=c)
        torch.add(v, v, out=w)
        best = min(best, time.thread_time() - start)
    return best


def _cost_units(module):
    """One seeded run's cost in calibration units, the unit timed just before it: on a machine whose
    speed drifts (a neighbour on the same core, a frequency step) both sides see the same state.
    Returns (inputs, output, units)."""
    unit_s = _calibration_s()
    inputs, output, run_s = _run(module)
    return inputs, output, run_s / unit_s


@pytest.fixture(scope="module")
def one_thread():
    """torch on one thread for the cost test, so the calling thread's CPU time is all the work."""
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def _tensors(output):
    return list(output) if isinstance(output, tuple) else [output]


def _is_integer(tensor):
    return not tensor.is_floating_point() and not tensor.is_complex() and tensor.dtype != torch.bool


def _is_plain(value):
    if isinstance(value, (list, tuple)):
        return all(_is_plain(v) for v in value)
    return isinstance(value, PLAIN_TYPES)


def _draws_integers(path):
    """A problem that draws its inputs with torch.randint is an integer-input problem."""
    return "torch.randint" in path.read_text()


@pytest.fixture(scope="module")
def modules():
    """Each problem module is loaded once and shared by the tests of this file."""
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = _load(path)
        return cache[path]

    return get


@pytest.mark.parametrize("path", PROBLEMS, ids=_label)
def test_file_format(path):
    assert FILE_NAME.match(path.name), f"{path.name} does not match ID_Name.py"
    lines = path.read_text().splitlines()
    assert len(lines) >= 2 and lines[0].startswith("# ") and lines[1].startswith("# "), (
        "a problem starts with a 2-line header comment"
    )


@pytest.mark.parametrize("path", PROBLEMS, ids=_label)
def test_interface(path, modules):
    module = modules(path)
    assert isinstance(getattr(module, "Model", None), type) and issubclass(module.Model, nn.Module)
    assert callable(getattr(module, "get_inputs", None))
    assert callable(getattr(module, "get_init_inputs", None))

    init_inputs = module.get_init_inputs()
    assert isinstance(init_inputs, list)
    assert _is_plain(init_inputs), f"get_init_inputs() must return plain Python values: {init_inputs!r}"

    torch.manual_seed(SEED)
    inputs = module.get_inputs()
    assert isinstance(inputs, list) and inputs
    for tensor in inputs:
        assert isinstance(tensor, torch.Tensor)
        assert tensor.device.type == "cpu"
        # The suite is fp32 throughout; integer inputs are indices.
        assert tensor.dtype == torch.float32 or _is_integer(tensor), f"unexpected dtype {tensor.dtype}"
    if _draws_integers(path):
        assert any(_is_integer(t) for t in inputs), "an integer-input problem must return integer tensors"


@pytest.mark.parametrize("path", PROBLEMS, ids=_label)
def test_runs_cheaply_and_reproducibly(path, modules, one_thread):
    module = modules(path)
    # Two seeded runs: the lesser cost guards against cache and frequency noise, and comparing the
    # two outputs checks that the problem is deterministic under a seed.
    _, first, first_units = _cost_units(module)
    _, second, second_units = _cost_units(module)

    assert isinstance(first, torch.Tensor) or (
        isinstance(first, tuple) and first and all(isinstance(t, torch.Tensor) for t in first)
    ), f"output must be a tensor or a tuple of tensors, got {type(first).__name__}"
    for tensor in _tensors(first):
        assert tensor.numel() > 0
        if tensor.is_floating_point():
            assert torch.isfinite(tensor).all(), "the reference output must be finite"

    units = min(first_units, second_units)
    if units >= COST_LIMIT_UNITS:  # a third try before failing: both runs can meet a burst of load
        units = min(units, _cost_units(module)[2])
    assert units < COST_LIMIT_UNITS, (
        f"construct + inputs + forward cost {units:.1f} calibration units on one thread, over the "
        f"budget of {COST_LIMIT_UNITS}"
    )

    if not getattr(module, "NONDETERMINISTIC", False):
        a, b = _tensors(first), _tensors(second)
        assert len(a) == len(b)
        assert all(torch.equal(x, y) for x, y in zip(a, b)), "same seed, different outputs"


@pytest.mark.parametrize("level", LEVELS)
def test_ids_are_contiguous(level):
    ids = sorted(_problem_id(p) for p in PROBLEMS if p.parent.name == level)
    assert ids == list(range(1, len(ids) + 1)), f"{level}: ids {ids} are not 1..n"


def test_suite_spans_levels_1_to_3():
    assert len(PROBLEMS) >= 12
    assert {"level1", "level2", "level3"} <= set(LEVELS)
    assert any(_draws_integers(p) for p in PROBLEMS), "the suite keeps an integer-input problem"


def test_declared_traps_are_real(modules):
    """The traps named in kernelbench/README.md hold, so the audit has something to find."""
    # H17: ReLU on torch.rand inputs is the identity.
    relu = modules(SUITE / "level1" / "2_ReLU.py")
    inputs, output, _ = _run(relu)
    assert torch.equal(output, inputs[0])

    # H15/H16: every output of the mean + sigmoid chain is within 1e-3 of one constant.
    flat = modules(SUITE / "level2" / "4_Tanh_GlobalMean_Sigmoid.py")
    _, output, _ = _run(flat)
    constant = 1.0 / (1.0 + math.exp(-math.log(math.cosh(1.0))))
    assert (output - constant).abs().max().item() < 1e-3

    # Dropout in training mode: two calls on the same input differ.
    dropout = modules(SUITE / "level2" / "3_GELU_Dropout_Residual.py")
    assert dropout.NONDETERMINISTIC is True
    model = _build(dropout)
    x = dropout.get_inputs()[0]
    with torch.no_grad():
        assert not torch.equal(model(x), model(x))


CONSTANT = re.compile(r"^([A-Z][A-Z0-9_]*) = ([0-9]+)$")


def test_the_small_suite_is_the_bundled_one_at_smaller_shapes(tmp_path):
    """tests/fixtures/suite_small.py, whose output the end-to-end tests judge: the same files, line for line,
    but for integer size constants that are smaller (in all but a problem that is small already)."""
    from conftest import suite_small

    small = suite_small.build(tmp_path / "small")
    got = sorted(p.relative_to(small) for p in small.glob("level*/*.py"))
    assert got == sorted(p.relative_to(SUITE) for p in PROBLEMS)
    shrunk = 0
    for rel in got:
        a, b = (SUITE / rel).read_text().splitlines(), (small / rel).read_text().splitlines()
        assert len(a) == len(b), rel
        for x, y in zip(a, b):
            if x == y:
                continue
            mx, my = CONSTANT.match(x), CONSTANT.match(y)
            assert mx and my and mx.group(1) == my.group(1), f"{rel}: '{x}' became '{y}'"
            assert 0 < int(my.group(2)) < int(mx.group(2)), f"{rel}: {mx.group(1)} must shrink"
        shrunk += a != b
    assert shrunk >= len(got) - 1


def test_the_small_suite_refuses_a_table_the_suite_no_longer_matches(tmp_path):
    """A bundled problem renamed or a constant gone: the generator says which, rather than leave the tests a
    problem at its real size."""
    from conftest import suite_small

    with pytest.raises(ValueError, match="no module-level 'WIDTH = <integer>'"):
        suite_small.shrink("level1/6_Conv2d.py", "BATCH = 16\nIN_CHANNELS = 32\nOUT_CHANNELS = 64\nHEIGHT = 128\n")
    with pytest.raises(ValueError, match="would not shrink"):
        suite_small.shrink("level1/1_Square_GEMM.py", "N = 64\n")
    with pytest.raises(ValueError, match="defined twice"):
        suite_small.shrink("level1/1_Square_GEMM.py", "N = 960\nN = 960\n")
    # a current folder is left alone; a stale one is replaced whole
    small = suite_small.build(tmp_path / "small")
    (small / "level1" / "1_Square_GEMM.py").write_text("stale\n")
    assert suite_small.build(small) == small and (small / "level1" / "1_Square_GEMM.py").read_text() == "stale\n"
    (small / ".stamp").write_text("old")
    suite_small.build(small)
    assert "N = 128" in (small / "level1" / "1_Square_GEMM.py").read_text()
