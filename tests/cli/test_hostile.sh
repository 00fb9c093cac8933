#!/usr/bin/env bash
# Hostile requests (issue 10, point 5): each case sends a request meant to
# hurt the server and checks its answer, a liveness bound on it (5 s), and
# that /healthz on another connection of the same loop (--threads 1) keeps
# answering within 1 s meanwhile (tests/cli/hostile.py). Then 1,000
# concurrent watches all get every event with the server under 512 MiB, the
# release binary has no test hooks, and --listen ports are checked.
# run-scripts: alone (it bounds how fast the server answers under attack)
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/apiserver_lib.bash"
command -v python3 >/dev/null || exit 77

# No test hooks in the release binary (they exist in build/obj-hooks only).
if strings "$CORRAL" | grep -qx 'CORRAL_STORE_FAULT'; then
    fail "the release binary reads CORRAL_STORE_FAULT"
fi
for l in 127.0.0.1:99999 127.0.0.1:abc 127.0.0.1:-1; do
    out=$("$CORRAL" apiserver --data-dir "$TMP/nodata" --listen "$l" 2>&1) &&
        fail "--listen $l accepted"
    printf '%s' "$out" | grep -qF "port must be a number from 0 to 65535" ||
        fail "--listen $l: $out"
done

start_server "$TMP/data" --threads 1 --no-fsync
trap 'stop_server; rm -rf "$TMP"' EXIT
python3 "$(dirname "$0")/hostile.py" 127.0.0.1 "$PORT" "$SERVER_PID" \
    params patch yaml te hash big-body lists gone fill=3000 big-list watches fill-big=40 huge-list ||
    fail "hostile requests (server log: $(tail -5 "$TMP/server.log"))"
stop_server
finish
