#!/usr/bin/env bash
# mmdem test runner. Runs the C unit tests (build/tests/*), then the case scripts
# (tests/cases/*.sh; with "validate" also tests/validate/*.sh). Each prints
# "ok - NAME" / "not ok - NAME: ..." lines; a program that fails without printing
# a "not ok" line counts as one failure. Last line: "N passed, N failed".
# BUILD=DIR (default build) selects the build directory, as for make. ONLY="name ..." runs only
# the test programs and case scripts of those names (tests/cases/sanitize.sh uses it).
# JOBS=N (default: the number of cores) runs up to N test programs or scripts at once; each
# one's block ("== NAME: ...") is printed whole when it finishes. Scripts with a
# "# test-timeout:" line (the long ones: builds inside) start first, then those with a
# "# test-cost: SECONDS" line, the most costly first.
set -u
mode=${1:-quick}
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD MMDEM=$BUILD/mmdem PY=/usr/bin/python3
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
# sanitizer builds (make test SANITIZE=address,undefined): leak and UB reports fail the tests;
# the suppressions cover third-party libraries only (OpenMPI, Gmsh, VTK; tests/*.supp)
if ldd "$MMDEM" 2>/dev/null | grep -q 'libasan\|libubsan'; then
  cc -shared -fPIC -O2 -o "$BUILD/nodlclose.so" tests/tools/nodlclose.c && export LD_PRELOAD="$BUILD/nodlclose.so"
  export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0:suppressions=$PWD/tests/asan.supp${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$PWD/tests/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  echo "sanitizer build ($BUILD): ASAN_OPTIONS=$ASAN_OPTIONS"
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# own time limit of a script: a line "# test-timeout: SECONDS" (a build inside)
own_limit() { sed -n 's/^# test-timeout: *\([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -n 1; }
run_one() { # name, command...: counts into $tmp/NAME.res, its block to stdout under a lock
  local name=$1; shift
  local t0=$(date +%s%N) out="$tmp/$name.out"
  local lim=${TEST_TIMEOUT:-600} own
  own=$(own_limit "${@: -1}")
  [ -n "$own" ] && [ "$own" -gt "$lim" ] && lim=$own
  timeout "$lim" "$@" > "$out" 2>&1 < /dev/null; local rc=$?
  [ "$rc" -eq 124 ] && echo "not ok - $name: timed out after $lim s" >> "$out"
  local p f; p=$(grep -c '^ok - ' "$out"); f=$(grep -c '^not ok - ' "$out")
  local dt=$(( ($(date +%s%N) - t0) / 100000000 )); dt="$((dt / 10)).$((dt % 10))"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name: exit status $rc" >> "$out"; fi
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name: no checks ran" >> "$out"; fi
  echo "$p $f" > "$tmp/$name.res"
  if [ "$f" -gt 0 ]; then { echo "== $name: $p passed, $f failed (${dt}s)"; grep -v '^ok - ' "$out" | tail -n 40; } > "$tmp/$name.txt"
  else echo "== $name: $p passed (${dt}s)" > "$tmp/$name.txt"; fi
  flock "$tmp/lock" cat "$tmp/$name.txt"
}
# the list: "name<TAB>command words"; long scripts first
list=()
for t in "$BUILD"/tests/*; do [ -f "$t" ] && [ -x "$t" ] && list+=("$(basename "$t")	$t"); done
scripts=(tests/cases/*.sh)
[ "$mode" = validate ] && scripts+=(tests/validate/*.sh)
# then the scripts with a "# test-cost: SECONDS" line (measured run time, the longest first, so that
# none of them is left running alone at the end), then the unit programs and the other scripts
long=(); costly=(); short=()
for s in "${scripts[@]}"; do
  [ -f "$s" ] || continue
  c=$(sed -n 's/^# test-cost: *\([0-9]*\).*/\1/p' "$s" | head -n 1)
  if [ -n "$(own_limit "$s")" ]; then long+=("$(basename "$s" .sh)	bash $s")
  elif [ -n "$c" ]; then costly+=("$c $(basename "$s" .sh)	bash $s")
  else short+=("$(basename "$s" .sh)	bash $s"); fi
done
sorted=()
if [ "${#costly[@]}" -gt 0 ]; then
  while IFS= read -r line; do sorted+=("${line#* }"); done < <(printf '%s\n' "${costly[@]}" | sort -t ' ' -k1,1nr)
fi
list=("${long[@]}" "${sorted[@]}" "${list[@]}" "${short[@]}")
running=0; started=0
for item in "${list[@]}"; do
  name=${item%%	*}; cmd=${item#*	}
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
  # shellcheck disable=SC2086
  run_one "$name" $cmd &
  running=$((running + 1)); started=$((started + 1))
done
wait
pass=0; fail=0
for r in "$tmp"/*.res; do
  [ -f "$r" ] || continue
  read -r p f < "$r"; pass=$((pass + p)); fail=$((fail + f))
done
done_=$(find "$tmp" -name '*.res' | wc -l)
if [ "$done_" -ne "$started" ]; then  # a job that died without its counts
  echo "not ok - runner: $started test programs started, $done_ reported"; fail=$((fail + started - done_))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
