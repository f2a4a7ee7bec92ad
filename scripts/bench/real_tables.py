#!/usr/bin/env python3
# real_tables.py - the tables of `make bench-real` (scripts/bench/bench_real.sh): statuses, non-pass
# verdicts by cause (the candidate's or the harness's), throughput and GPU idle share, ours beside theirs.
"""Markdown tables for one part of `make bench-real`, and the splice of its section into BENCHMARKS.md.

  real_tables.py part --title T --samples DIR --jsonl FILE --log FILE --walls FILE [--util FILE]
                      [--manifest FILE] [--stopped S] [--command TEXT]
  real_tables.py splice --file BENCHMARKS.md --section FILE

A non-pass verdict is the harness's when its status is harness_error, or when its message says the
trusted side failed (HARNESS_MESSAGES: the reference or its worker, the output exchange, a cache); a file
of the batch that `eval --samples` reported as "not judged" or "skipped", or that has no verdict line at
all, is the harness's too (with --stopped, when the batch was stopped before it: "not reached", no
one's). Every other non-pass status (compile_error, format_error, incorrect, rejected
with the ids of its reject findings, runtime_error, timeout) is the candidate's. BENCHMARKS.md, section
"make bench-real", states the same rule.
"""
import argparse
import collections
import json
import os
import re
import statistics
import sys

CANDIDATE_STATUSES = ("incorrect", "compile_error", "format_error", "runtime_error", "timeout", "rejected")
# Messages of verdicts that name a failure of the trusted side (docs/verdict.md: `message`). Only statuses
# whose message can carry such a failure are read: a rejection or a format error is always the candidate's.
HARNESS_MESSAGES = (
    ("reference failed", re.compile(r"\bthe reference (worker )?failed\b")),
    # the exchange's own device allocations (harness/worker/exchange.py names the driver call)
    ("exchange failed", re.compile(r"\(CUDA driver error \d+\)|\bthe (output )?exchange\b")),
    ("cache failed", re.compile(r"\b(reference|build) cache\b|\bcannot (publish|copy|mark) the build\b")),
)
HARNESS_READ = ("incorrect", "compile_error", "runtime_error", "timeout")
# what eval --samples says on stderr about a file it wrote no verdict for (harness/cli/eval.c)
NOT_JUDGED = re.compile(r"^stitchbench: warning: (.+?\.py): not judged: (.*)$")
SKIPPED = re.compile(r"^stitchbench: warning: skipped (.+?\.py): (.*)$")
GEN_NAME = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")
BEGIN = "<!-- bench-real: begin"
END = "<!-- bench-real: end -->"
# A part's file-by-file table is long: it stays in the run's own bench-real.md, and the splice into
# BENCHMARKS.md keeps the summaries only, with a line saying where the table is.
FILES_BEGIN = "<!-- bench-real: files -->"
FILES_END = "<!-- bench-real: files end -->"
FILES_RE = re.compile(re.escape(FILES_BEGIN) + r".*?" + re.escape(FILES_END) + r"\n?", re.S)


def reject_ids(v):
    ids = sorted({f.get("id", "?") for f in v.get("findings") or [] if f.get("severity") == "reject"})
    if not ids:  # a rejection by a check that reports through the message only ("H18: ...")
        m = re.match(r"(H\d+):", v.get("message") or "")
        ids = [m.group(1)] if m else []
    return ids


def classify(v):
    """(side, cause) of one verdict: side "pass", "candidate" or "harness"."""
    status = v.get("status")
    if status == "pass":
        return "pass", "pass"
    if status == "harness_error":
        return "harness", "harness_error"
    if status not in CANDIDATE_STATUSES:
        return "harness", "unknown status %s" % status
    if status in HARNESS_READ:
        msg = v.get("message") or ""
        for cause, pattern in HARNESS_MESSAGES:
            if pattern.search(msg):
                return "harness", "%s (%s)" % (cause, status)
    if status == "rejected":
        ids = reject_ids(v)
        return "candidate", "rejected " + "+".join(ids) if ids else "rejected"
    return "candidate", status


def flagged(v):
    return sorted({f.get("id", "?") for f in v.get("findings") or [] if f.get("severity") == "flag"})


def cell(text, n=None):
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if n is None or len(text) <= n else text[: n - 3] + "..."


def problem_of(name):
    m = GEN_NAME.match(name)
    return "L%s/%s" % (m.group(1), m.group(2)) if m else "?"


def short(r):
    """L1/12 s2: the problem and the sample of a generations file."""
    m = GEN_NAME.match(r["file"])
    return "%s s%s" % (r["problem"], m.group(3)) if m else r["file"]


def load(samples, jsonl, log, stopped=False):
    """Per file of the batch: a record with its verdict or why there is none, and how many verdicts."""
    files = sorted(f for f in os.listdir(samples) if f.endswith(".py"))
    rows = collections.OrderedDict((f, {"file": f, "problem": problem_of(f), "verdict": None, "why": None})
                                   for f in files)
    count = 0
    if os.path.exists(jsonl):
        for line in open(jsonl, encoding="utf-8", errors="replace"):
            if not line.strip():
                continue
            try:
                v = json.loads(line)
            except ValueError:
                continue
            name = os.path.basename((v.get("candidate") or {}).get("path") or "")
            if name in rows:  # a verdict of an earlier selection kept in the same JSONL is not this batch's
                count += rows[name]["verdict"] is None
                rows[name]["verdict"] = v
    if log and os.path.exists(log):
        for line in open(log, encoding="utf-8", errors="replace"):
            line = line.rstrip("\n")
            for pattern, what in ((NOT_JUDGED, "not judged"), (SKIPPED, "skipped")):
                m = pattern.match(line)
                name = m and os.path.basename(m.group(1))
                if name in rows and rows[name]["verdict"] is None:
                    rows[name]["why"] = (what, m.group(2))
    for r in rows.values():
        v = r["verdict"]
        if v is not None:
            r["side"], r["cause"] = classify(v)
            r["status"] = v.get("status")
            r["message"] = v.get("message") or ""
        elif r["why"] is None and stopped:
            r["side"], r["cause"], r["status"], r["message"] = "open", "not reached", "not reached", ""
        else:
            what, msg = r["why"] or ("no verdict", "eval --samples wrote no line and said nothing about it")
            r["side"], r["cause"], r["status"], r["message"] = "harness", what, what, msg
    return list(rows.values()), count


def statuses_table(rows):
    out = ["| status | files |", "|---|---|"]
    by = collections.Counter(r["status"] for r in rows)
    clean = sum(1 for r in rows if r["status"] == "pass" and not flagged(r["verdict"]))
    order = ["pass"] + list(CANDIDATE_STATUSES) + ["harness_error", "not judged", "skipped", "no verdict",
                                                    "not reached"]
    for s in order + sorted(k for k in by if k not in order):
        if by.get(s):
            extra = ""
            if s == "pass" and clean != by[s]:
                ids = collections.Counter(i for r in rows if r["status"] == "pass" for i in flagged(r["verdict"]))
                extra = " (%d clean, %d with a flag finding: %s)" % (
                    clean, by[s] - clean, ", ".join("%s %d" % kv for kv in sorted(ids.items())))
            out.append("| %s | %d%s |" % (s, by[s], extra))
    out.append("| all | %d |" % len(rows))
    return out


def causes_table(rows):
    groups = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: (r["side"] != "candidate", r["cause"])):
        if r["side"] in ("candidate", "harness"):
            groups.setdefault((r["side"], r["cause"]), []).append(r)
    if not groups:
        return ["No non-pass verdict."]
    out = ["| whose | cause | files | which | first message |", "|---|---|---|---|---|"]
    for (side, cause), rs in groups.items():
        which = ", ".join(short(r) for r in rs[:12]) + (", ..." if len(rs) > 12 else "")
        out.append("| %s | %s | %d | %s | %s |" % (side, cell(cause), len(rs), which, cell(rs[0]["message"], 160)))
    cand = sum(len(rs) for (s, _), rs in groups.items() if s == "candidate")
    harn = sum(len(rs) for (s, _), rs in groups.items() if s == "harness")
    out += ["", "Non-pass: %d the candidate's, %d the harness's (of %d files%s)." % (
        cand, harn, len(rows), ", %d not reached" % sum(r["side"] == "open" for r in rows)
        if any(r["side"] == "open" for r in rows) else "")]
    return out


def failures_table(rows):
    bad = [r for r in rows if r["side"] in ("candidate", "harness")]
    if not bad:
        return []
    out = ["| file | problem | status | message |", "|---|---|---|---|"]
    for r in bad:
        out.append("| %s | %s | %s | %s |" % (r["file"], r["problem"], cell(r["cause"]), cell(r["message"], 240)))
    return out


def util_samples(path):
    if not path or not os.path.exists(path):
        return []
    return [int(x) for x in open(path).read().split() if x.strip().isdigit()]


def throughput_lines(rows, count, walls, util):
    each = [float(x) for x in open(walls).read().split()] if os.path.exists(walls) else []
    wall, runs = sum(each), len(each)
    secs = [r["verdict"]["seconds"]["total"] for r in rows
            if r["verdict"] and isinstance((r["verdict"].get("seconds") or {}).get("total"), (int, float))]
    out = ["Throughput: %d verdicts in %.0f s of wall time%s, %.0f verdicts per hour%s." % (
        count, wall, " (%d invocations)" % runs if runs > 1 else "", 3600.0 * count / wall if wall > 0 else 0.0,
        "; median verdict %.1f s" % statistics.median(secs) if secs else "")]
    u = util_samples(util)
    if u:
        out.append("GPU idle (utilization 0 in nvidia-smi's 200 ms samples of GPU 0): %.0f%% of %d samples; "
                   "mean utilization %.0f%%." % (100.0 * sum(x == 0 for x in u) / len(u), len(u), statistics.mean(u)))
    else:
        out.append("GPU idle: not measured (no nvidia-smi samples: a CPU run, or nvidia-smi failed).")
    return out


def manifest_rows(path):
    with open(path, encoding="utf-8") as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            if line.strip():
                yield dict(zip(head, line.rstrip("\n").split("\t")))


def their_outcome(text):
    """pass, a non-pass status, or None when the source recorded no correctness."""
    if re.search(r"\bcompiled=0\b", text):
        return "compile_error"
    if re.search(r"\bcorrect=1\b", text):
        return "pass"
    if re.search(r"\bcorrect=0\b", text):
        return "runtime_error" if "runtime_error=" in text else "incorrect"
    return None


def ours_cell(r):
    v = r["verdict"]
    s = r["cause"] if r["side"] != "pass" else "pass"
    if v and flagged(v):
        s += " (flag " + "+".join(flagged(v)) + ")"
    return s


def compare_table(rows, manifest):
    by = {r["file"]: r for r in rows}
    out = ["| file | problem | ours | vs eager | our message | their_verdict | agree |", "|---|---|---|---|---|---|---|"]
    agree = disagree = unknown = 0
    differ = []
    for m in manifest_rows(manifest):
        r = by.get(m.get("file"))
        if r is None:
            continue
        v = r["verdict"] or {}
        sp = (v.get("speedup") or {}).get("vs_eager")
        theirs = m.get("their_verdict", "-")
        t = their_outcome(theirs)
        ours_pass = r["status"] == "pass"
        if t is None or r["side"] in ("harness", "open"):
            a = "-"
            unknown += 1
        elif (t == "pass") == ours_pass:
            a = "yes"
            agree += 1
        else:
            a = "**no**"
            disagree += 1
            differ.append("%s (ours %s, theirs %s)" % (r["file"], r["status"], t))
        msg = "" if ours_pass else r["message"]
        shown = re.sub(r"\s*\[from [^]]*\]\s*$", "", theirs)
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["file"], r["problem"], cell(ours_cell(r)), "%.3f" % sp if isinstance(sp, (int, float)) else "-",
            cell(msg, 100), cell(shown, 120), a))
    summary = ["Pass or not, ours against theirs: %d agree, %d disagree, %d not comparable (the source recorded "
               "no correctness, or we have no verdict of the candidate's own)." % (agree, disagree, unknown)]
    if differ:
        summary.append("Disagreements: " + "; ".join(differ) + ".")
    return out, summary


def cmd_part(a):
    rows, count = load(a.samples, a.jsonl, a.log, a.stopped is not None)
    out = ["#### " + a.title, ""]
    if a.command:
        out += ["`%s`, %d file%s." % (" ".join(a.command.split()), len(rows), "" if len(rows) == 1 else "s"), ""]
    left = sum(r["side"] == "open" for r in rows)
    if a.stopped is not None:
        out += ["Stopped after SB_BENCH_TIME_S=%s s with %d file%s not reached: run again with the same "
                "SB_BENCH_STATE to go on." % (a.stopped, left, "" if left == 1 else "s"), ""]
    out += statuses_table(rows) + [""] + ["Non-pass verdicts by cause:", ""] + causes_table(rows) + [""]
    out += throughput_lines(rows, count, a.walls, a.util) + [""]
    if a.manifest:
        table, summary = compare_table(rows, a.manifest)
        out += summary + ["", FILES_BEGIN, "Our verdict beside the source's (`their_verdict`, manifest.tsv; "
                          "\"[from ...]\" left out):", ""] + table + [FILES_END, ""]
    else:
        fails = failures_table(rows)
        if fails:
            out += [FILES_BEGIN, "Every non-pass verdict:", ""] + fails + [FILES_END, ""]
    print("\n".join(out))


def cmd_splice(a):
    """Replace the text between the markers (kept) by the section; without markers, append both."""
    section = open(a.section, encoding="utf-8").read().rstrip("\n")
    section = FILES_RE.sub("The file-by-file table is in the run's bench-real.md (bench-real-PART.jsonl beside it).\n",
                           section)
    text = open(a.file, encoding="utf-8").read() if os.path.exists(a.file) else ""
    begin = text.find(BEGIN)
    end = text.find(END, begin) if begin >= 0 else -1
    if begin >= 0 and end >= 0:
        head = text[: text.index("\n", begin) + 1]
        text = head + section + "\n" + text[end:]
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + \
            "%s (scripts/bench/bench_real.sh writes what follows on each run) -->\n%s\n%s\n" % (BEGIN, section, END)
    tmp = a.file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, a.file)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("part", help="the tables of one batch")
    q.add_argument("--title", required=True)
    q.add_argument("--samples", required=True, help="the generations folder the batch judged")
    q.add_argument("--jsonl", required=True, help="eval --samples' verdicts")
    q.add_argument("--log", help="eval --samples' stderr")
    q.add_argument("--walls", required=True, help="the batch's wall seconds, one number per invocation")
    q.add_argument("--stopped", metavar="S", help="the batch was stopped after S seconds: files left are not reached")
    q.add_argument("--util", help="nvidia-smi utilization samples, one a line")
    q.add_argument("--manifest", help="manifest.tsv with file and their_verdict columns")
    q.add_argument("--command", help="the batch's command line, shown above the tables")
    s = sub.add_parser("splice", help="replace the bench-real section of a Markdown file")
    s.add_argument("--file", required=True)
    s.add_argument("--section", required=True)
    a = p.parse_args(argv)
    (cmd_part if a.cmd == "part" else cmd_splice)(a)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
