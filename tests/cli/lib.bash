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
