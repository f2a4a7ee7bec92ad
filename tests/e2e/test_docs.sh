#!/usr/bin/env bash
# test_docs.sh - what the docs say about the program agrees with it and with itself: no command that
# `stitchbench help` lists is called one "to come", and every place that says how long `make demo` takes
# says the same.
# tier: fast (no evaluation: tests/README.md)
source "$(dirname "$0")/lib.sh"
cd "$SB_ROOT" || exit 1

run_sb help
commands=$(awk '/^Commands:/ {on = 1; next} on && /^   [a-z]/ {print $1} on && /^$/ {on = 0}' <<<"$OUT_TXT")
stale=""
for c in $commands; do
	hits=$(grep -rnE "\`(stitchbench )?$c\`[^.;]{0,40}\((to come|not yet|planned)\)|\`stitchbench $c\` (will|is to) come" \
		README.md docs/*.md 2>/dev/null)
	[ -n "$hits" ] && stale="$stale$hits"$'\n'
done
if [ -n "$commands" ] && [ -z "$stale" ]; then _report ok "no doc calls a command that exists 'to come'"; else
	_report fail "no doc calls a command that exists 'to come'" "commands: $(tr '\n' ' ' <<<"$commands"); $stale"; fi

# The demo's duration: README.md, docs/agents.md and the line scripts/demo.sh prints.
said=$(for f in README.md docs/agents.md scripts/demo.sh; do
	tr '\n' ' ' <"$f" | grep -oE '(about [a-z]+|a few|[a-z]+ to [a-z]+) minutes( on 2 CPU cores| once the machine is set up)?' |
		head -1 | grep -oE '^(about [a-z]+|a few|[a-z]+ to [a-z]+) minutes'
done | sort -u)
if [ "$(wc -l <<<"$said")" = 1 ] && [ -n "$said" ]; then _report ok "README, docs/agents.md and demo.sh give one duration for the demo ($said)"; else
	_report fail "README, docs/agents.md and demo.sh give one duration for the demo" "$said"; fi
