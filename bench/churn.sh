#!/usr/bin/env bash
# The engine's churn test at 1,000,000 pod creations and deletions (the unit
# suite runs 200,000): prints what the engine and the heap hold at each fifth
# and fails if the last checkpoint is more than 10% above the second.
# Usage: bench/churn.sh [PODS]   (after make build/tests/unit)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build/tests/unit
CORRAL_CHURN_PODS=${1:-1000000} /usr/bin/time -f 'churn: %e s, max RSS %M KiB' \
    build/tests/unit --filter 'churn/*' -j1 2>&1 | grep -v "^\[SKIP\]"
