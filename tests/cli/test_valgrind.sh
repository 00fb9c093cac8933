# corral validate under valgrind: no invalid reads/writes, no leaks, on valid
# manifests and on broken ones (the error paths allocate too).
. tests/cli/lib.bash
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
vg() {
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        "$CORRAL" "$@"
}
expect_exit 0 vg validate -f examples/
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec:\n  containers:\n  - {name: a, image: x, resources: {limits: {nvidia.com/gpu: 0.5, memory: 16GB}}}\n  -name: b\n' >"$TMP/bad.yaml"
expect_exit 2 vg validate -f "$TMP/bad.yaml"
expect_out "did you mean"
printf 'a: [1, 2\n' >"$TMP/syntax.yaml"
expect_exit 2 vg validate -f "$TMP/syntax.yaml"
finish
