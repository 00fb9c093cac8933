# Shared helpers for CLI test scripts (sourced, not run).
set -u
CORRAL=${CORRAL:-build/corral}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# expect_exit CODE CMD... : run CMD, capture stdout+stderr in $OUT, check status.
expect_exit() {
    local want=$1
    shift
    OUT=$("$@" 2>&1)
    local rc=$?
    [ "$rc" -eq "$want" ] || fail "exit $rc (want $want): $*
$OUT"
}

# expect_out TEXT : the last command's output contains TEXT.
expect_out() {
    printf '%s' "$OUT" | grep -qF -- "$1" || fail "output lacks '$1':
$OUT"
}

finish() {
    [ "$fails" -eq 0 ] || exit 1
    exit 0
}

# until_ok SECONDS CMD...: run CMD (output discarded) every 0.2 s until it
# succeeds; 1 when it has not within SECONDS.
until_ok() {
    local n=$(($1 * 5))
    shift
    for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}

# free_port: a TCP port free on 127.0.0.1 now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# up_start SECONDS ARGS...: `$CORRAL up ARGS` in the background (UP_PID; its
# output in $TMP/up.out and $TMP/up.err); waits at most SECONDS for its
# banner. Returns 1, with the output printed, when it does not come up.
up_start() {
    local wait=$1
    shift
    # the router on a free port unless the test chose: scripts running at
    # once must not share 127.0.0.1:8080
    case " $* " in
    *" --router-listen "*) ;;
    *) set -- "$@" --router-listen "127.0.0.1:$(free_port)" ;;
    esac
    "$CORRAL" up "$@" >"$TMP/up.out" 2>"$TMP/up.err" &
    UP_PID=$!
    for _ in $(seq 1 $((wait * 10))); do
        grep -q "Corral is up" "$TMP/up.out" && return 0
        kill -0 "$UP_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "corral up did not come up:"
    cat "$TMP/up.out" "$TMP/up.err"
    return 1
}

# up_stop: stop the `corral up` of up_start (SIGINT, SIGKILL after 10 s)
# and remove $TMP; for `trap up_stop EXIT`.
up_stop() {
    if [ -n "${UP_PID:-}" ]; then
        kill -INT "$UP_PID" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$UP_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$UP_PID" 2>/dev/null
    fi
    rm -rf "$TMP"
}
