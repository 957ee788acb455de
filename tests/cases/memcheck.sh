#!/usr/bin/env bash
# test-cost: 48 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# memcheck.sh - `make memcheck` inside `make test` (about a minute on 2 cores): mmdem under
# valgrind on quick runs (a run stopped by a signal, its restart, a NaN failure, a
# configuration error, a truncated checkpoint), each with zero errors and no definite leak
# (tests/memcheck.sh has the details). A sanitizer build (make test SANITIZE=...) cannot run
# under valgrind; its own runtime checks the same runs there, so the case is skipped.
set -u
M=${MMDEM:-build/mmdem}
case $M in /*) ;; *) M=$PWD/$M ;; esac
if ldd "$M" 2>/dev/null | grep -q 'libasan\|libubsan'; then
  echo "ok - memcheck: skipped for a sanitizer build (the sanitizers check these runs)"
  exit 0
fi
BUILD=$(dirname "$M") bash tests/memcheck.sh
