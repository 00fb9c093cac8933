#!/bin/bash
# Modules depend only on the modules below them (tools/layers.py: the
# symbols each module's objects use, resolved to the module defining them).
source tests/cli/lib.bash
objdir=$(dirname "$CORRAL")/obj
expect_exit 0 tools/layers.py "$objdir"
# The check can fail: a fake object of the model that calls the client.
mkdir -p "$TMP/obj/src/model" "$TMP/obj/src/client" "$TMP/src/model" "$TMP/src/client"
echo 'void corral_client_x(void); void corral_client_x(void) {}' >"$TMP/src/client/x.c"
echo 'void corral_client_x(void); void corral_model_y(void); void corral_model_y(void) { corral_client_x(); }' >"$TMP/src/model/y.c"
cc -c "$TMP/src/client/x.c" -o "$TMP/obj/src/client/x.o"
cc -c "$TMP/src/model/y.c" -o "$TMP/obj/src/model/y.o"
ROOT=$PWD
(cd "$TMP" && "$ROOT/tools/layers.py" obj >out.txt 2>&1)
[ $? -eq 1 ] || fail "a model object using the client passed the layer check"
grep -q "src/model/y.o uses corral_client_x from module client" "$TMP/out.txt" ||
    fail "the layer check does not name the offending use: $(cat "$TMP/out.txt")"
finish
