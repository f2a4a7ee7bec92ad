#!/usr/bin/env python3
# cassette.py - turns a folder of hand-written answers into a JSONL cassette for `provider: replay`
# (docs/llm.md, docs/agents.md "Cassettes"): AGENT/L1_2/s0/call-0003.md is the text of that call.
"""Usage: cassette.py SRC_DIR OUT.jsonl

SRC_DIR holds AGENT/PROBLEM/sSAMPLE/call-NNNN.md, PROBLEM written as L<level>_<id> (L1_2 for L1/2).
Each file's text is the answer of that call. Every line of OUT is one recorded call in the transcript
format (stitchbench-transcript/1). Token counts are estimates (bytes / 4, the prompt counted as 0),
marked by "model": {"name": "hand-written"}; the cost is 0.
"""
import json
import os
import re
import sys

KEY = re.compile(r"^L(\d+)_(\d+)$")


def calls(src):
    for agent in sorted(os.listdir(src)):
        adir = os.path.join(src, agent)
        if not os.path.isdir(adir):
            continue
        for prob in sorted(os.listdir(adir)):
            m = KEY.match(prob)
            if not m:
                raise SystemExit("%s: problem folders are named L<level>_<id>" % os.path.join(adir, prob))
            for sdir in sorted(os.listdir(os.path.join(adir, prob))):
                if not re.match(r"^s\d+$", sdir):
                    raise SystemExit("%s: sample folders are named s<N>" % os.path.join(adir, prob, sdir))
                for f in sorted(os.listdir(os.path.join(adir, prob, sdir))):
                    c = re.match(r"^call-(\d{4})\.md$", f)
                    if not c:
                        raise SystemExit("%s: answers are named call-NNNN.md" % os.path.join(adir, prob, sdir, f))
                    path = os.path.join(adir, prob, sdir, f)
                    with open(path, encoding="utf-8") as fh:
                        text = fh.read()
                    yield {"agent": agent, "problem": "L%s/%s" % m.groups(), "sample": int(sdir[1:]),
                           "call": int(c.group(1))}, text, path


def record(key, text, path):
    return {
        "format": "stitchbench-transcript/1",
        "key": key,
        "model": {"name": "hand-written", "provider": "cassette", "model": None, "endpoint": path},
        "request_hash": None,
        "request": None,
        "response": {"status": 200, "raw": None, "text": text, "finish_reason": "stop"},
        "usage": {"prompt_tokens": 0, "completion_tokens": max(1, len(text.encode()) // 4), "cost_usd": 0.0},
        "timing": {"started_at": None, "latency_s": 0.0, "wall_s": 0.0, "attempts": 0, "attempt_log": []},
        "error": None,
    }


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    src, out = sys.argv[1], sys.argv[2]
    if not os.path.isdir(src):
        sys.stderr.write("cassette.py: %s is not a folder\n" % src)
        return 2
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    n = 0
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        for key, text, path in calls(src):
            fh.write(json.dumps(record(key, text, os.path.relpath(path, src)), sort_keys=True) + "\n")
            n += 1
    os.replace(tmp, out)
    print("%d calls from %s -> %s" % (n, src, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
