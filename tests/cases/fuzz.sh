#!/usr/bin/env bash
# test-timeout: 1200
# fuzz.sh - the libFuzzer targets of tests/fuzz inside `make test` (so CI, which runs exactly
# `make deps` and `make test`, fuzzes every target): builds the instrumented library with clang
# (tests/fuzz/run.sh, into $FUZZ_BUILD [build-fuzz], incremental) and runs each target for
# FUZZ_TIME seconds [60], two targets at a time (one per core). One check per target: it ran
# (executions > 0) and found nothing (no crash, leak, sanitizer report or timeout). The
# executions, coverage and corpus size of each target are printed for the record.
# FUZZ_TIME=0 skips the case (prints one "ok - fuzz: skipped" line, for quick local runs).
set -u
cd "$(dirname "$0")/../.."
FUZZ_TIME=${FUZZ_TIME:-60}
if [ "$FUZZ_TIME" = 0 ]; then echo "ok - fuzz: skipped (FUZZ_TIME=0)"; exit 0; fi
# a sanitizer build of the whole suite already runs with ASan/UBSan; the fuzzers are separate
M=${MMDEM:-build/mmdem}
if ldd "$M" 2>/dev/null | grep -q 'libasan\|libubsan'; then echo "ok - fuzz: skipped in a sanitizer build"; exit 0; fi
targets=$(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_\(.*\)\.c|\1|')
B=${FUZZ_BUILD:-$PWD/build-fuzz}
log=$(mktemp -d); trap 'rm -rf "$log"' EXIT
# build once (FUZZ_TIME=0 in run.sh is not a run: build with an empty target run of 1 s)
FUZZ_BUILD=$B FUZZ_TARGETS="$targets" FUZZ_TIME=1 bash tests/fuzz/run.sh > "$log/build.txt" 2>&1 ||
  { echo "not ok - fuzz: building or a 1-s run of the targets failed: $(tail -n 5 "$log/build.txt" | tr '\n' '|')"; exit 1; }
set -- $targets
while [ $# -gt 0 ]; do
  pids=()
  for t in "$1" ${2:+"$2"}; do
    FUZZ_NOBUILD=1 FUZZ_BUILD=$B FUZZ_TARGETS=$t FUZZ_TIME=$FUZZ_TIME bash tests/fuzz/run.sh > "$log/$t.txt" 2>&1 &
    pids+=($!)
  done
  i=0
  for t in "$1" ${2:+"$2"}; do
    wait "${pids[$i]}"; rc=$?; i=$((i + 1))
    line=$(grep "^$t: " "$log/$t.txt" | tail -n 1)
    execs=$(echo "$line" | sed -n 's/^[^:]*: \([0-9]*\) executions.*/\1/p')
    if [ $rc -eq 0 ] && [ "${execs:-0}" -gt 0 ]; then echo "ok - fuzz $t for ${FUZZ_TIME} s: $line"
    else echo "not ok - fuzz $t: exit $rc; $(grep -m 3 -E 'FAILED|ERROR|SUMMARY|runtime error|artifacts' "$log/$t.txt" | tr '\n' '|')"; fi
  done
  shift; [ $# -gt 0 ] && shift
done
