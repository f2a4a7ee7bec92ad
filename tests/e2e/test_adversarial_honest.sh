#!/usr/bin/env bash
# test_adversarial_honest.sh - the honest CPU half of the corpus (tests/adversarial/honest/) with every
# runtime check on: each candidate must pass with no finding at all. On tests/run.sh's SERIAL list: the
# parent's clock (H08) compares the time around each timed call with the reference's, and a loaded machine
# adds time to one and not the other.
source "$(dirname "$0")/lib.sh"
use_cache
source "$SB_ROOT/tests/e2e/corpus.sh"

corpus_run honest/
honest=$(grep -oE '^# honest files: [0-9]+' "$TMP/corpus.out" | grep -oE '[0-9]+$')
if [ "${honest:-0}" -ge 12 ]; then _report ok "at least 12 honest CPU candidates ran ($honest)"; else
	_report fail "at least 12 honest CPU candidates ran" "${honest:-none}"; fi
