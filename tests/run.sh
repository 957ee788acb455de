#!/usr/bin/env bash
# mmdem test runner. Runs the C unit tests (build/tests/*), then the case scripts
# (tests/cases/*.sh; with "validate" also tests/validate/*.sh). Each prints
# "ok - NAME" / "not ok - NAME: ..." lines; a program that fails without printing
# a "not ok" line counts as one failure. Last line: "N passed, N failed".
# BUILD=DIR (default build) selects the build directory, as for make. ONLY="name ..." runs only
# the test programs and case scripts of those names (tests/cases/sanitize.sh uses it).
set -u
mode=${1:-quick}
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD MMDEM=$BUILD/mmdem PY=/usr/bin/python3
# sanitizer builds (make test SANITIZE=address,undefined): leak and UB reports fail the tests;
# the suppressions cover third-party libraries only (OpenMPI, Gmsh, VTK; tests/*.supp)
if ldd "$MMDEM" 2>/dev/null | grep -q 'libasan\|libubsan'; then
  cc -shared -fPIC -O2 -o "$BUILD/nodlclose.so" tests/tools/nodlclose.c && export LD_PRELOAD="$BUILD/nodlclose.so"
  export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0:suppressions=$PWD/tests/asan.supp${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  echo "sanitizer build ($BUILD): ASAN_OPTIONS=$ASAN_OPTIONS"
fi
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run_one() { # name, command...
  local name=$1; shift
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  local t0=$(date +%s%N)
  # a case script may allow itself more time with a line "# test-timeout: SECONDS" (a build inside)
  local lim=${TEST_TIMEOUT:-600} own
  own=$(sed -n 's/^# test-timeout: *\([0-9]*\).*/\1/p' "${@: -1}" 2>/dev/null | head -n 1)
  [ -n "$own" ] && [ "$own" -gt "$lim" ] && lim=$own
  timeout "$lim" "$@" > "$tmp/out" 2>&1; local rc=$?
  [ "$rc" -eq 124 ] && echo "not ok - $name: timed out after $lim s" >> "$tmp/out"
  local p f; p=$(grep -c '^ok - ' "$tmp/out"); f=$(grep -c '^not ok - ' "$tmp/out")
  local dt=$(( ($(date +%s%N) - t0) / 100000000 )); dt="$((dt / 10)).$((dt % 10))"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name: exit status $rc" >> "$tmp/out"; fi
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name: no checks ran" >> "$tmp/out"; fi
  pass=$((pass + p)); fail=$((fail + f))
  if [ "$f" -gt 0 ]; then echo "== $name: $p passed, $f failed (${dt}s)"; grep -v '^ok - ' "$tmp/out" | tail -n 40
  else echo "== $name: $p passed (${dt}s)"; fi
}
for t in "$BUILD"/tests/*; do [ -f "$t" ] && [ -x "$t" ] && run_one "$(basename "$t")" "$t"; done
for s in tests/cases/*.sh; do [ -f "$s" ] && run_one "$(basename "$s" .sh)" bash "$s"; done
if [ "$mode" = validate ]; then
  for s in tests/validate/*.sh; do [ -f "$s" ] && run_one "$(basename "$s" .sh)" bash "$s"; done
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
