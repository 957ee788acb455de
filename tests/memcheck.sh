#!/usr/bin/env bash
# memcheck.sh - `make memcheck`: mmdem under valgrind's memcheck on quick runs that go through
# the main paths: a run with walls, friction history, periodic images, VTK, checkpoints and a
# signal (tests/cases/checkpoint.yaml, 120 steps); its restart; a failure (NaN: diagnosis, the
# last good checkpoint); `mmdem check` of a configuration error and of a corrupted checkpoint.
# Each must have zero errors and no definitely lost block (--errors-for-leak-kinds=definite);
# suppressions: OpenMPI's (/usr/share/openmpi/openmpi-valgrind.supp) and tests/valgrind.supp
# (third-party code only). Prints "ok - ..." / "not ok - ..." lines like the test cases.
# BUILD=DIR selects the build (default build); a sanitizer build cannot run under valgrind.
set -u
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
M=$BUILD/mmdem
R=$PWD
if ! command -v valgrind > /dev/null; then echo "not ok - memcheck: valgrind is not installed"; exit 1; fi
if ldd "$M" 2>/dev/null | grep -q 'libasan\|libubsan'; then
  echo "not ok - memcheck: $M is a sanitizer build; run make memcheck without SANITIZE"
  exit 1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
SUPP=(--suppressions=/usr/share/openmpi/openmpi-valgrind.supp --suppressions="$R/tests/valgrind.supp")
VG=(valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
    --num-callers=30 "${SUPP[@]}")
pass=0
fail=0

# vg NAME EXPECTED_RC ARGS...: runs mmdem ARGS under valgrind
vg() {
  local name=$1 want=$2
  shift 2
  local t0=$(date +%s)
  "${VG[@]}" --log-file="$T/$name.vg" "$M" "$@" > "$T/$name.out" 2>&1
  local rc=$? errs defl
  errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$T/$name.vg" | tail -n 1)
  defl=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$T/$name.vg" | tail -n 1)
  if [ "$rc" = "$want" ] && [ "${errs:-x}" = 0 ]; then
    echo "ok - memcheck $name: 0 errors, definitely lost ${defl:-0} bytes, exit $rc ($(( $(date +%s) - t0 )) s)"
    pass=$((pass + 1))
  else
    echo "not ok - memcheck $name: exit $rc (want $want), ${errs:-?} errors, definitely lost ${defl:-?} bytes"
    grep -A 25 -E "Invalid|uninitialised|definitely lost in|Mismatched|overlap" "$T/$name.vg" | head -n 60
    tail -n 3 "$T/$name.out"
    fail=$((fail + 1))
  fi
}

Y=$R/tests/cases/checkpoint.yaml
Q=(--quiet --set run.steps=120 --set output.thermo_every=20 --set output.checkpoint_every=60 --set output.vtk_every=0.0005)
MMDEM_DEBUG_SIGNAL_STEP=90 vg "run+SIGTERM" 143 run "$Y" --out A "${Q[@]}"
vg "restart" 0 run "$Y" --out A "${Q[@]}" --restart A/checkpoints/step-90.ckpt
MMDEM_DEBUG_NAN_STEP=50 vg "NaN failure" 1 run "$Y" --out N "${Q[@]}"
printf 'name: bad\nmaterials: {glass: {density: 2500, youngs_modulus: 1.0e7}}\ncontact: [{pair: default, law: hertz_mindlin}]\nshapes: {bead: {type: sphere, radius: 0.005}}\nbodies: [{shape: bead, material: glass, list: [{x: [0, 0, 0]}]}]\nintegrator: {type: verlet, dt: 1.0e-5}\nrun: {steps: 10, colour: red}\n' > bad.yaml
vg "configuration error" 1 check bad.yaml
head -c 5000 A/checkpoints/step-60.ckpt > cut.ckpt
vg "truncated checkpoint" 1 check "$Y" --restart cut.ckpt
echo "memcheck: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
