# test_build_cache.py - the worker's load_inline cache: a finished build of the same sources is
# imported as it is, without load_inline rewriting its sources or ninja running again; a changed source
# is a new build. Each load happens in a fresh interpreter, as each candidate worker is one.
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DRIVER = r"""
import json, sys, time
sys.path.insert(0, %(worker)r)
import worker
w = worker.Worker()
w.patch_load_inline(%(ext)r)
from torch.utils.cpp_extension import load_inline
src = "int triple(int x) { return %(factor)d * x; }"
m = load_inline(name="sb_cache_probe", cpp_sources=[src], functions=["triple"])
print(json.dumps({"value": m.triple(5), "build": w.builds[-1]}))
"""


def load(ext_dir, factor):
    code = DRIVER % {"worker": str(ROOT / "harness" / "worker"), "ext": str(ext_dir), "factor": factor}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def sources_mtimes(build_dir):
    return {p.name: p.stat().st_mtime_ns for p in Path(build_dir).iterdir() if p.suffix in (".cpp", ".cu", ".o", ".so")}


def test_finished_builds_are_imported_unfinished_and_changed_ones_are_built(tmp_path):
    # one sequence, three compilations: each costs about 20 s on 2 CPU cores
    first = load(tmp_path, 3)
    assert first["value"] == 15 and first["build"]["cached"] is False
    # ninja's log names the compile and the link, each with its seconds, within the build's own time
    steps = first["build"]["steps"]
    assert any(k.endswith(".o") for k in steps) and any(k.endswith(".so") for k in steps), steps
    assert all(0 <= v <= first["build"]["seconds"] + 1 for v in steps.values()), steps
    build_dir = tmp_path / first["build"]["key"]
    assert (build_dir / ".stitchbench-built").exists()
    before = sources_mtimes(build_dir)

    second = load(tmp_path, 3)
    assert second["value"] == 15 and second["build"]["cached"] is True
    assert second["build"]["key"] == first["build"]["key"]
    assert second["build"]["steps"] == {}  # a cache hit ran no ninja step
    assert sources_mtimes(build_dir) == before  # nothing rewritten, nothing recompiled

    os.remove(build_dir / ".stitchbench-built")  # as if the worker had died before the build ended
    third = load(tmp_path, 3)
    assert third["value"] == 15 and (build_dir / ".stitchbench-built").exists()
    assert sources_mtimes(build_dir) != before  # built again

    changed = load(tmp_path, 4)
    assert changed["value"] == 20
    assert changed["build"]["key"] != first["build"]["key"] and changed["build"]["cached"] is False
