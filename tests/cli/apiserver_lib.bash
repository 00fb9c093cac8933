# Helpers for API server scripts (sourced after lib.bash): start
# `corral apiserver` on a free port in the background, wait until it answers,
# and stop it. The server's pid is in SERVER_PID, its address in API.

# start_server DATA_DIR [extra args...]: sets SERVER_PID, PORT and API.
# CORRAL_APISERVER_ARGS (e.g. --strict) are added to every server a script
# starts: tests/cli/test_strict.sh runs component scripts against a strict one.
start_server() {
    local dir=$1
    shift
    # shellcheck disable=SC2086 # word splitting intended
    "$CORRAL" apiserver --data-dir "$dir" --listen 127.0.0.1:0 ${CORRAL_APISERVER_ARGS:-} "$@" \
        2>"$TMP/server.log" &
    SERVER_PID=$!
    PORT=""
    for _ in $(seq 1 100); do
        PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/server.log")
        [ -n "$PORT" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$PORT" ]; then
        echo "server did not start:"
        cat "$TMP/server.log"
        exit 1
    fi
    API=http://127.0.0.1:$PORT
}

stop_server() {
    if [ -n "${SERVER_PID:-}" ]; then
        kill -TERM "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    fi
}

# call METHOD PATH [BODY [CONTENT-TYPE]]: sets CODE and BODY.
call() {
    local method=$1 path=$2 data=${3:-} ctype=${4:-application/json}
    local out
    if [ -n "$data" ]; then
        out=$(curl -s -X "$method" -H "Content-Type: $ctype" --data-binary "$data" \
            -w '\n%{http_code}' "$API$path")
    else
        out=$(curl -s -X "$method" -w '\n%{http_code}' "$API$path")
    fi
    CODE=${out##*$'\n'}
    BODY=${out%$'\n'*}
}

# expect_call CODE METHOD PATH [BODY [CONTENT-TYPE]]
expect_call() {
    local want=$1
    shift
    call "$@"
    [ "$CODE" = "$want" ] || fail "$1 $2: HTTP $CODE (want $want): $BODY"
}

expect_body() {
    printf '%s' "$BODY" | grep -qF -- "$1" || fail "body lacks '$1': $BODY"
}

# jv PATH EXPR: GET PATH and print the Python expression EXPR of the object o.
jv() {
    call GET "$1"
    [ "$CODE" = 200 ] || {
        echo "<HTTP $CODE>"
        return
    }
    printf '%s' "$BODY" | "${PY:-python3}" -c "import json,sys
o=json.load(sys.stdin)
try: print($2)
except Exception as e: print('<%s>' % e)"
}

# wait_for WHAT PATH EXPR WANT: poll until EXPR of PATH prints WANT (10 s).
wait_for() {
    local what=$1 path=$2 expr=$3 want=$4 got=""
    for _ in $(seq 1 100); do
        got=$(jv "$path" "$expr")
        [ "$got" = "$want" ] && return 0
        sleep 0.1
    done
    fail "$what: got '$got', want '$want'"
    return 1
}
