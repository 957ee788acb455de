#!/usr/bin/env bash
# test-cost: 19 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# mpi_errors.sh - on 2 MPI ranks every rank validates the run description and an error on any
# rank stops all of them with one message (issue 9; src/core/decomp.c, DemDecompAgree_Private):
#   - configuration errors name file:line:col (an unknown key, an mpi.grid whose product is not
#     the number of ranks, initial overlaps), printed once, exit status 1;
#   - what does not run on several ranks yet is refused with one message naming it: the
#     integrators that are not MPI-correct (a plugin integrator that does not declare it:
#     plugins/symplectic_euler.c; newmark runs: mpi_newmark, variational: mpi_variational),
#     fields (polyhedra run: mpi_poly);
#   - cd's compatibility post-solve (runs: mpi_cd_compat) with contact laws of different
#     powers on the two ranks stops both with the serial message; a PETSc error in its
#     distributed post-solve on rank 1 only (injected: MMDEM_DEBUG_CDC_FAIL) stops both with
#     one message naming the rank, the step and the cause;
#   - a bond whose bodies drift farther apart than the ghost range stops both ranks with one
#     message naming the pair (loads, bonds and output.track run on several ranks: mpi_extras);
#   - a run-time failure on rank 1 only (a NaN velocity injected into a body rank 1 owns,
#     MMDEM_DEBUG_NAN_STEP) stops both ranks with the diagnosis naming that body, once,
#     instead of leaving rank 0 waiting;
#   - a grid whose subdomains are narrower than the ghost range is refused.
set -u
M=${MMDEM:-build/mmdem}
case $M in /*) ;; *) M=$PWD/$M ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }
# expect NAME PATTERN ARGS...: 2 ranks, nonzero exit, exactly one "mmdem:" line, matching PATTERN
expect() {
  local name=$1 pat=$2 rc n; shift 2
  timeout 120 mpirun --allow-run-as-root -n 2 "$M" "$@" > out.log 2> err.log; rc=$?
  n=$(grep -c '^mmdem:' err.log)
  if [ "$rc" -eq 124 ]; then nok "$name" "hung (timeout)"
  elif [ "$rc" -ne 0 ] && [ "$n" -eq 1 ] && grep -q -- "$pat" err.log; then ok "$name: $(grep '^mmdem:' err.log | cut -c1-200)"
  else nok "$name" "status $rc, $n error lines: $(grep '^mmdem:' err.log | head -3 | tr '\n' '|')"; fi
}
cat > base.yaml <<'Y'
name: two
domain: {lo: [0, 0, 0], hi: [0.02, 0.01, 0.01], periodic: [false, true, true]}
gravity: [0, 0, 0]
materials:
  glass: {density: 2500}
contact:
  - {pair: default, law: hooke, params: {kn: 100.0, restitution: 0.8}}
shapes:
  bead: {type: sphere, radius: 0.001}
bodies:
  - {shape: bead, material: glass, list: [{x: [0.005, 0.005, 0.005], v: [0.01, 0, 0]}, {x: [0.015, 0.005, 0.005], v: [-0.01, 0, 0]}]}
integrator: {type: verlet, dt: 1.0e-5}
run: {steps: 200}
output: {thermo_every: 10}
Y
sed 's/run: {steps: 200}/run: {steps: 200, bogus: 1}/' base.yaml > badkey.yaml
expect "unknown key" "badkey.yaml:[0-9]*:[0-9]*: .*unknown key 'bogus'" run badkey.yaml --out o
printf 'mpi: {grid: [3, 1, 1]}\n' | cat base.yaml - > grid.yaml
expect "mpi.grid product" "grid.yaml:[0-9]*:[0-9]*: mpi.grid: mpi.grid \[3, 1, 1\] needs 3 ranks, this run has 2" run grid.yaml --out o
sed 's/x: \[0.015, 0.005, 0.005\]/x: [0.0055, 0.005, 0.005]/' base.yaml > overlap.yaml
expect "initial overlap" "overlap.yaml:[0-9]*:[0-9]*: bodies\[0\].list\[1\]: bodies 0 and 1 overlap at the start" run overlap.yaml --out o
se="$(cd "$(dirname "$M")" && pwd)/plugins/symplectic_euler.so"
printf 'plugins: [%s]\n' "$se" | cat base.yaml - > plugin.yaml
expect "plugin integrator refused" "integrator symplectic_euler does not run on more than one MPI rank" run plugin.yaml --out o --set integrator.type=symplectic_euler
# cd compatible (runs on several ranks: mpi_cd_compat): a hooke pair on rank 0 and a
# hertz_mindlin pair on rank 1, p = 2 and 5/2 of 004 eq. (34), are found in one reduction
sed -e 's/^  glass: {density: 2500}/  glass: {density: 2500}\n  steel: {density: 7800, youngs_modulus: 2.0e8, poisson_ratio: 0.3, restitution: 0.5}/' \
    -e 's/^integrator: .*/integrator: {type: cd, dt: 1.0e-4, compatible: true}/' base.yaml > mix.yaml
printf '  - {pair: [steel, steel], law: hertz_mindlin}\n' > law.txt
sed -i '/law: hooke/r law.txt' mix.yaml
printf '  - {shape: bead, material: %s, list: [{x: [%s, 0.005, 0.005], v: [0.01, 0, 0]}, {x: [%s, 0.005, 0.005], v: [-0.01, 0, 0]}]}\n' glass 0.004 0.00601 steel 0.014 0.01601 > pairs.txt
sed -i -e '/^  - {shape: bead/d' -e '/^bodies:/r pairs.txt' mix.yaml
expect "cd compatible, power laws mixed across the ranks" "the contact laws mix power laws p = 2.* and p = 2.5" run mix.yaml --out o --set "mpi.grid=[2,1,1]"
# the distributed compatibility post-solve (cd_compat_mpi.c) with a PETSc error on rank 1 only
# (MMDEM_DEBUG_CDC_FAIL=RANK:STEP): in a rank-local step (assembling A) and after the collective
# TAOALMM / Newton stage, both ranks stop at the next agreement with one message naming the
# rank, the step and the cause, instead of rank 0 waiting in the next collective
sed -e 's/material: steel/material: glass/' mix.yaml > same.yaml
MMDEM_DEBUG_CDC_FAIL=1:assemble expect "cd compatible, error on rank 1 while assembling" "cd compatible post-solve (MPI): assembling the constraint matrix failed on rank 1 of 2: error injected by MMDEM_DEBUG_CDC_FAIL=1:assemble" run same.yaml --out o --set "mpi.grid=[2,1,1]"
MMDEM_DEBUG_CDC_FAIL=1:solve expect "cd compatible, error on rank 1 in the solve" "cd compatible post-solve (MPI): TAOALMM / the Newton polish (DemCDCompatCore_Private) failed on rank 1 of 2: error injected by MMDEM_DEBUG_CDC_FAIL=1:solve" run same.yaml --out o --set "mpi.grid=[2,1,1]"
printf 'fields:\n  drag: {c_fluid: 0.001}\n' | cat base.yaml - > fields.yaml
expect "fields refused" "fields: not supported on more than one MPI rank" run fields.yaml --out o
# a bond (a weak spring) between two beads flying apart at 2 m/s: once the partner is beyond the
# ghost range 2 r + skin = 2.5 mm of the other rank's subdomain (about step 150), one message
printf 'bonds: {law: bond, params: {kn: 0.001}}\n' | cat base.yaml - > bond.yaml
expect "bond beyond the ghost range" "bonds: the bonded bodies 0 and 1 are farther apart than the ghost range" run bond.yaml --out o --set bodies.0.list.0.x=[0.009,0.005,0.005] --set bodies.0.list.0.v=[-1,0,0] --set bodies.0.list.1.x=[0.011,0.005,0.005] --set bodies.0.list.1.v=[1,0,0]
MMDEM_DEBUG_NAN_STEP=50 MMDEM_DEBUG_NAN_BODY=1 expect "failure on rank 1 only" "no longer finite at step 50 (t = .*): body 1 " run base.yaml --out o
expect "subdomain narrower than the ghost range" "narrower than the ghost range" run base.yaml --out o --set "mpi.grid=[2,1,1]" --set domain.hi=[0.0045,0.01,0.01] --set bodies.0.list.1.x=[0.0034,0.005,0.005] --set bodies.0.list.0.x=[0.0011,0.005,0.005]
