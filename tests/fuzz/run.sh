#!/usr/bin/env bash
# tests/fuzz/run.sh - `make fuzz [FUZZ_TIME=60]`: builds mmdem's library with clang, libFuzzer
# coverage, AddressSanitizer and UndefinedBehaviorSanitizer (every UB is fatal) into
# $FUZZ_BUILD [build-fuzz], and runs each target for FUZZ_TIME seconds:
#   config      a run description (YAML) through DemConfigLoad + DemSimSetFromConfig + SetUp
#   csv         a bodies file (`file:` of a body set) through a fixed run description
#   checkpoint  a checkpoint through the restart's checks, restore and 3 steps
#   stl         a triangulated surface through the Gmsh import and its checks (src/core/trimesh.c)
# Seeds: tests/fuzz/corpus/<target> and the
# regressions in tests/fuzz/regressions; the corpus grown by a run stays in
# $FUZZ_BUILD/corpus-<target>. A crash, leak, timeout or sanitizer report leaves its input in
# $FUZZ_BUILD/artifacts and fails the target; fix it, then copy the input to
# tests/fuzz/regressions/<target>-<what>.{yaml,csv,ckpt}, which `make test` runs
# (tests/cases/fuzz_regressions.sh). Needs clang and libclang-rt-14-dev (installed here with
# apt-get when missing and running as root; not part of `make deps`).
# Other knobs: FUZZ_TARGETS="config csv checkpoint", FUZZ_JOBS (parallel workers per target).
set -u
cd "$(dirname "$0")/../.."
R=$PWD
FUZZ_TIME=${FUZZ_TIME:-60}
FUZZ_TARGETS=${FUZZ_TARGETS:-config csv checkpoint stl}
B=${FUZZ_BUILD:-build-fuzz}
case "$B" in /*) ;; *) B=$R/$B ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$B/fuzz" "$B/artifacts"

# FUZZ_NOBUILD=1: the library, targets and seeds are built already (parallel runs of targets)
if [ -z "${FUZZ_NOBUILD:-}" ]; then
# clang with the libFuzzer runtime
probe() {
  printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' > "$B/fuzz/probe.c"
  clang -fsanitize=fuzzer,address -o "$B/fuzz/probe" "$B/fuzz/probe.c" > /dev/null 2>&1
}
if ! probe; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null; then
    echo "fuzz: installing clang and libclang-rt-14-dev"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev > "$B/apt.log" 2>&1 ||
      { apt-get update -q >> "$B/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends clang libclang-rt-14-dev >> "$B/apt.log" 2>&1; }
  fi
  probe || { echo "fuzz: clang with libFuzzer is not available (apt-get install clang libclang-rt-14-dev)"; exit 1; }
fi

# the library, instrumented (mpicc and mpicxx run clang)
# (vptr: the C++ shim's dynamic-type checks would need the C++ runtime of UBSan at link time)
SAN="fuzzer-no-link,address,undefined -fno-sanitize=vptr"
OPTS="-O1 -g -fno-sanitize-recover=all"
# objects built with other flags are rebuilt (make compares times only)
[ "$(cat "$B/flags" 2>/dev/null)" = "$SAN $OPTS" ] || rm -rf "$B/src" "$B/libmmdem.so"
echo "$SAN $OPTS" > "$B/flags"
echo "fuzz: building the instrumented library in $B"
OMPI_CC=clang OMPI_CXX=clang++ make --no-print-directory -C "$R" BUILD="$B" SANITIZE="$SAN" OPT="$OPTS" "$B/libmmdem.so" > "$B/build.log" 2>&1 ||
  { tail -n 30 "$B/build.log"; echo "fuzz: the build failed (log: $B/build.log)"; exit 1; }
PETSC_CFLAGS=$(pkg-config --cflags PETSc)
PETSC_LIBS=$(pkg-config --libs PETSc)
for t in $FUZZ_TARGETS; do
  OMPI_CC=clang mpicc -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-sanitize=vptr -fno-omit-frame-pointer \
    -DPETSC_SKIP_COMPLEX -I"$R/src/core" -I"$B" $PETSC_CFLAGS -o "$B/fuzz/fuzz_$t" "$R/tests/fuzz/fuzz_$t.c" \
    -L"$B" -lmmdem -Wl,-rpath,"$B" $PETSC_LIBS -lm > "$B/fuzz/build_$t.log" 2>&1 ||
    { cat "$B/fuzz/build_$t.log"; echo "fuzz: building fuzz_$t failed"; exit 1; }
done

# checkpoint seeds: checkpoints of the target's own run description, written by the target
if [[ " $FUZZ_TARGETS " == *" checkpoint "* ]]; then
  rm -rf "$B/fuzz/ckseed"
  mkdir -p "$B/corpus-checkpoint"
  FUZZ_CKPT_SEEDS="$B/fuzz/ckseed" ASAN_OPTIONS=detect_leaks=0 "$B/fuzz/fuzz_checkpoint" > "$B/fuzz/ckseed.log" 2>&1 &&
    cp "$B"/fuzz/ckseed/checkpoints/*.ckpt "$B/corpus-checkpoint/" ||
    echo "fuzz: could not make checkpoint seeds (log: $B/fuzz/ckseed.log)"
fi
fi

export ASAN_OPTIONS="detect_leaks=1:verify_asan_link_order=0:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$R/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# a fuzzed body count is refused, not allocated: at most a few thousand bodies per input
export MMDEM_MEMORY_LIMIT=${MMDEM_MEMORY_LIMIT:-8M}
[ -n "${FUZZ_NOBUILD:-}" ] || cc -shared -fPIC -O2 -o "$B/nodlclose.so" "$R/tests/tools/nodlclose.c"
status=0
summary=""
for t in $FUZZ_TARGETS; do
  corpus=$B/corpus-$t
  mkdir -p "$corpus"
  seeds=("$R/tests/fuzz/corpus/$t")
  dict=()
  [ -f "$R/tests/fuzz/$t.dict" ] && dict=(-dict="$R/tests/fuzz/$t.dict")
  reg=$(mktemp -d)
  case $t in config) ext=yaml ;; csv) ext=csv ;; checkpoint) ext=ckpt ;; *) ext=$t ;; esac
  cp "$R"/tests/fuzz/regressions/*."$ext" "$reg/" 2>/dev/null
  before=$(ls "$B/artifacts" | grep -v -- '-slow-unit-' | wc -l)
  echo "fuzz: $t for ${FUZZ_TIME} s"
  supp=$R/tests/lsan.supp
  [ "$t" = stl ] && supp=$R/tests/fuzz/lsan_stl.supp # Gmsh's own leaks (see that file)
  LSAN_OPTIONS="suppressions=$supp:print_suppressions=0" LD_PRELOAD="$B/nodlclose.so" "$B/fuzz/fuzz_$t" "${dict[@]}" -max_total_time="$FUZZ_TIME" -timeout=60 -rss_limit_mb=3072 \
    -max_len=65536 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$B/artifacts/$t-" \
    ${FUZZ_JOBS:+-jobs=$FUZZ_JOBS -workers=$FUZZ_JOBS} \
    "$corpus" "${seeds[@]}" "$reg" > "$B/fuzz/$t.log" 2>&1
  rc=$?
  rm -rf "$reg"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/fuzz/$t.log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$B/fuzz/$t.log" | tail -n 1)
  new=$(( $(ls "$B/artifacts" | grep -v -- '-slow-unit-' | wc -l) - before ))
  slow=$(grep -c 'Slowest unit' "$B/fuzz/$t.log")
  line="$t: ${execs:-?} executions, ${cov:-cov: ?} edges, corpus $(ls "$corpus" | wc -l) files, $new new artifacts, $slow slow units"
  summary="$summary$line"$'\n'
  if [ $rc -ne 0 ] || [ $new -gt 0 ]; then
    status=1
    echo "fuzz: $t FAILED (exit $rc): $(grep -m 1 -E 'ERROR|SUMMARY|runtime error' "$B/fuzz/$t.log")"
    ls -t "$B/artifacts" | head -n "$((new > 0 ? new : 1))" | sed "s|^|  $B/artifacts/|"
  fi
done
printf '%s' "$summary"
exit $status
