# Durability: kill -9 the API server in the middle of concurrent writes from
# many clients, restart it, and check that every write it acknowledged (a 201
# the client received) is there, complete, and that the revision counter
# carried on. Writes that were in flight may or may not have happened; none
# may be half there.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
writers=()
cleanup() {
    for p in "${writers[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "${SERVER_PID:-}" ] && kill -9 "$SERVER_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

start_server "$TMP/data"

# Each writer creates configmaps one after another and records the names the
# server acknowledged with 201.
writer() {
    local id=$1 i=0
    : >"$TMP/acked.$id"
    while :; do
        code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
            --data-binary "{\"metadata\":{\"name\":\"w$id-$i\",\"labels\":{\"writer\":\"w$id\"}},\"data\":{\"i\":\"$i\",\"pad\":\"$(printf '%0200d' "$i")\"}}" \
            "$API/api/v1/namespaces/default/configmaps") || true
        [ "$code" = 201 ] && echo "w$id-$i" >>"$TMP/acked.$id"
        [ "$code" = 000 ] && break # the server is gone
        i=$((i + 1))
    done
}
for id in $(seq 1 12); do
    writer "$id" &
    writers+=($!)
done
# At least 1.5 s of writes and more than 20 acknowledged (a loaded machine,
# other scripts running beside this one, may need longer for them).
sleep 1.5
until_ok 30 sh -c "[ \$(cat $TMP/acked.* | wc -l) -gt 20 ]"
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
for p in "${writers[@]}"; do wait "$p" 2>/dev/null; done
writers=()

acked=$(cat "$TMP"/acked.* | wc -l)
[ "$acked" -gt 20 ] || fail "too few writes before the crash to mean anything ($acked)"

if command -v sqlite3 >/dev/null; then
    ic=$(sqlite3 "$TMP/data/corral.db" 'PRAGMA integrity_check' 2>&1)
    [ "$ic" = ok ] || fail "integrity_check after kill -9: $ic"
fi

start_server "$TMP/data"
call GET '/api/v1/namespaces/default/configmaps'
[ "$CODE" = 200 ] || fail "list after restart: $CODE"
printf '%s' "$BODY" | tr '{' '\n' | sed -n 's/^"name":"\(w[0-9]*-[0-9]*\)".*/\1/p' | sort >"$TMP/present"
missing=$(cat "$TMP"/acked.* | sort | comm -23 - "$TMP/present")
[ -z "$missing" ] || fail "acknowledged writes lost: $(echo "$missing" | head -5 | tr '\n' ' ')"
present=$(wc -l <"$TMP/present")
# Every object that is there is whole: its data matches its name.
bad=0
for name in $(shuf -n 20 "$TMP/present"); do
    call GET "/api/v1/namespaces/default/configmaps/$name"
    i=${name#*-}
    printf '%s' "$BODY" | grep -q "\"i\":\"$i\",\"pad\":\"$(printf '%0200d' "$i")\"" || bad=$((bad + 1))
done
[ "$bad" -eq 0 ] || fail "$bad objects were not whole"
# The revision counter continues after the last committed write.
max_rv=$(printf '%s' "$BODY" | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p')
expect_call 201 POST /api/v1/namespaces/default/configmaps '{"metadata":{"name":"after-crash"}}'
new_rv=$(printf '%s' "$BODY" | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p')
[ "$new_rv" -gt "$max_rv" ] || fail "revision $new_rv after crash is not beyond $max_rv"
# A watch from before the crash replays what was committed, from the log.
call GET '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=7&timeoutSeconds=1'
events=$(printf '%s\n' "$BODY" | grep -c '"type":"ADDED"')
[ "$events" -ge "$present" ] || fail "watch replayed $events events for $present objects"
stop_server
echo "acknowledged $acked, present $present (in flight at the crash: $((present - acked)))"
finish
