#!/usr/bin/env bash
# demo.sh - the agent part of `make demo`: stitchcuda, oneshot and torch-compile on L1/2 and L1/3 of the
# bundled suite, answers from the hand-written cassettes (CUDA ones on a GPU, CPU ones elsewhere), then
# the metrics table and where everything is. docs/agents.md "The demo" tells the story of each answer.
set -u
cd "$(dirname "$0")/.."
dev=${SB_DEMO_DEVICE:-}
if [ -z "$dev" ]; then
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then dev=cuda; else dev=cpu; fi
fi
case $dev in cpu|cuda) ;; *) echo "demo: SB_DEMO_DEVICE must be cpu or cuda, not '$dev'" >&2; exit 2 ;; esac
cassette=build/cassettes/demo-$dev.jsonl
python3 scripts/cassette.py "kernelbench/cassettes/demo-$dev" "$cassette" || exit 3
id=${SB_DEMO_RUN_ID:-demo-$dev-$(date +%Y%m%d-%H%M%S)}
echo "demo: run $id on the $dev with $cassette (two to three minutes on 2 CPU cores: every candidate is built and timed)"
bin/stitchbench run -c configs/demo.yaml --device "$dev" --set "models.cassette.cassette=$cassette" --run-id "$id"
rc=$?
echo "$id" >build/demo-run
echo
bin/stitchbench metrics "results/$id"
echo
cat <<TXT
Where everything is (results/$id/):
  results.db        every attempt's verdict, trials, findings, LLM calls (sqlite3; docs/store.md)
  config.yaml       the configuration of the run;  run.json: agents, problems, samples, sessions
  hardware.json     the device the candidates ran on
  prompts/          every rendered prompt      transcripts/  every LLM call (here: replayed)
  candidates/       every attempt's file       samples/      plans and summary.json per sample
  best/             the best solution per agent, problem and sample
  run.log           one line per attempt
Try: bin/stitchbench export results/$id --format csv;  bin/stitchbench run --resume $id (nothing left to do)
TXT
exit $rc
