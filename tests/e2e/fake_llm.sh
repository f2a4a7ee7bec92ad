# fake_llm.sh - the fake OpenAI-compatible server of tests/fake_llm/server.py for the end-to-end tests
# that source it after lib.sh: start_fake NAME starts one on a free port of 127.0.0.1 serving the script
# $TMP/NAME.script and logging to $TMP/NAME.log, requests NAME counts what it received, stop_fakes ends
# every server the test started.
FAKE_PID=""
start_fake() { # name: starts server.py, sets PORT_<name> and FAKEPID_<name>
	python3 "$SB_ROOT/tests/fake_llm/server.py" "$TMP/$1.script" "$TMP/$1.log" >"$TMP/$1.out" 2>&1 &
	FAKE_PID="$FAKE_PID $!"
	printf -v "FAKEPID_$1" '%s' "$!"
	for _ in $(seq 100); do grep -q PORT "$TMP/$1.out" 2>/dev/null && break; sleep 0.1; done
	printf -v "PORT_$1" '%s' "$(awk '/PORT/ {print $2}' "$TMP/$1.out")"
}
requests() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["requests"]))' "$TMP/$1.log"; }
stop_fakes() { for p in $FAKE_PID; do kill "$p" 2>/dev/null; done; return 0; }
