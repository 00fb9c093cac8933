#!/bin/bash
# tools/lint.sh reports each finding on stderr and leaves a file its caller
# appends stderr to intact (it once reopened /dev/stderr through tee, which
# truncated such a file to the clang-tidy findings alone).
source tests/cli/lib.bash
ROOT=$PWD
command -v clang-tidy >/dev/null || { echo "clang-tidy is not installed"; exit 77; }

case_dir=$TMP/lintcase
mkdir -p "$case_dir/src/x"
cp .clang-tidy .clang-format "$case_dir/"
ln -s "$ROOT/include" "$case_dir/include"
# A null dereference clang-analyzer reports, in otherwise clean code.
cat >"$case_dir/src/x/bad.c" <<'C'
/*
 * A file with one clang-tidy finding.
 */
#include <stddef.h>

int corral_x_bad(int flag);

int corral_x_bad(int flag)
{
    int *p = NULL;
    if (flag)
        return 0;
    return *p;
}
C
echo "line written before lint ran" >"$case_dir/err.txt"
(cd "$case_dir" && "$ROOT/tools/lint.sh" src/x/bad.c >/dev/null 2>>err.txt)
rc=$?
[ "$rc" -ne 0 ] || fail "lint passed a file with a null dereference"
grep -q "line written before lint ran" "$case_dir/err.txt" ||
    fail "lint truncated the file stderr is appended to: $(cat "$case_dir/err.txt")"
grep -q "NullDereference" "$case_dir/err.txt" ||
    fail "the clang-tidy finding is not on stderr: $(cat "$case_dir/err.txt")"
finish
