#!/bin/bash
# make lint: formatting, static analysis, banned functions, function size.
# usage: tools/lint.sh FILE...
set -u
status=0
files=("$@")
src=()
for f in "${files[@]}"; do case $f in src/* | include/*) src+=("$f") ;; esac; done

echo "lint: clang-format"
if ! clang-format --dry-run --Werror "${files[@]}" 2>&1 | head -40; then :; fi
clang-format --dry-run --Werror "${files[@]}" >/dev/null 2>&1 || status=1

echo "lint: banned functions"
# Unbounded or locale-bound calls with safer Corral or libc replacements.
banned='\b(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|atof|gets|system|strncpy|tmpnam)\s*\('
if grep -nE "$banned" "${files[@]}" | grep -v 'lint: allow'; then
    echo "  banned function used (see tools/lint.sh for replacements)"
    status=1
fi

echo "lint: function size"
# Linux brace style: a function body opens with '{' and closes with '}' in column 0.
for f in "${src[@]}"; do
    awk -v f="$f" -v max=120 '
        /^\{/ { start = NR }
        /^\}/ && start { if (NR - start > max) { printf "  %s:%d: function body is %d lines (max %d)\n", f, start, NR - start, max; bad = 1 } start = 0 }
        END { exit bad }' "$f" || status=1
done

echo "lint: cppcheck"
# Files in chunks, as many cppcheck processes at once as cores (its own -j
# gains nothing here); xargs fails when any chunk does.
if ! printf '%s\n' "${src[@]}" | xargs -r -P "$(nproc)" -n 16 cppcheck --quiet --error-exitcode=1 \
    --std=c11 --enable=warning,performance,portability --inline-suppr \
    --suppress=missingIncludeSystem -Iinclude -Isrc; then
    status=1
fi
echo "lint: clang-tidy"
# Config in .clang-tidy; one process per file, as many at once as cores.
srcs=()
for f in "${src[@]}"; do case $f in *.c) srcs+=("$f") ;; esac; done
inc=$(pkg-config --cflags-only-I libfyaml jansson 2>/dev/null)
# CORRAL_ANALYZER=shallow (make test) runs every check with the analyzer's
# shallow mode: less inlining across calls, about a tenth of the CPU; `make
# lint` and this script by hand analyze deep (docs/decisions.md).
case ${CORRAL_ANALYZER:-deep} in
deep) inc="$inc" ;;
shallow) inc="$inc -Xclang -analyzer-config -Xclang mode=shallow" ;;
*) echo "lint: CORRAL_ANALYZER must be deep or shallow" >&2; exit 2 ;;
esac
# Findings go to our stderr as it is (never reopened through /dev/stderr,
# which truncates a file the caller redirected stderr to).
tidy=$(printf '%s\n' "${srcs[@]}" | xargs -P "$(nproc)" -n 4 sh -c \
    'clang-tidy -quiet "$@" -- -std=c17 -D_GNU_SOURCE -Iinclude -Isrc -Ibuild/gen '"$inc"' 2>&1 | grep -E "(warning|error):" ; exit 0' sh)
if [ -n "$tidy" ]; then
    printf '%s\n' "$tidy" >&2
    status=1
fi
exit $status
