#!/usr/bin/env bash
# mpi_errors.sh - on 2 MPI ranks every rank validates the run description and an error on any
# rank stops all of them with one message (issue 9; src/core/decomp.c, DemDecompAgree_Private):
#   - configuration errors name file:line:col (an unknown key, an mpi.grid whose product is not
#     the number of ranks, initial overlaps), printed once, exit status 1;
#   - what does not run on several ranks yet is refused with one message naming it: the
#     integrators that are not MPI-correct (variational here; trapezoid, cd and newmark
#     take the same path: ig->mpi unset), shapes other than spheres and planes, loads;
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
for ig in variational; do
  expect "integrator $ig refused" "integrator $ig does not run on more than one MPI rank" run base.yaml --out o --set integrator.type=$ig
done
sed 's/  bead: {type: sphere, radius: 0.001}/  bead: {type: superquadric, half_axes: [0.001, 0.001, 0.0008], blockiness: [4, 4]}/' base.yaml > sq.yaml
expect "superquadrics refused" "shape 'bead' (superquadric): only spheres and plane walls run on more than one MPI rank" run sq.yaml --out o
printf 'loads:\n  - {bodies: [0], force: [0.001, 0, 0]}\n' | cat base.yaml - > loads.yaml
expect "loads refused" "loads: not supported on more than one MPI rank" run loads.yaml --out o
MMDEM_DEBUG_NAN_STEP=50 MMDEM_DEBUG_NAN_BODY=1 expect "failure on rank 1 only" "no longer finite at step 50 (t = .*): body 1 " run base.yaml --out o
expect "subdomain narrower than the ghost range" "narrower than the ghost range" run base.yaml --out o --set "mpi.grid=[2,1,1]" --set domain.hi=[0.0045,0.01,0.01] --set bodies.0.list.1.x=[0.0034,0.005,0.005] --set bodies.0.list.0.x=[0.0011,0.005,0.005]
