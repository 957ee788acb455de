#!/usr/bin/env bash
# test-cost: 48 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# compare.sh - `mmdem compare` (src/core/compare.c) on the experiments of config/experiments
# and `mmdem plot` (src/core/plot.c). The numbers are checked in compare.py against analytic
# values; here: the commands run, a variant that fails or is not registered is reported in
# compare.csv, errors in the compare: block are located, plots are PNG files, and a missing
# gnuplot gives a clear message.
set -u
cd "$(dirname "$0")/../.."
M=${MMDEM:-build/mmdem}
PY=${PY:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }

run_compare() { # name, out dir, args...
  local name=$1 out=$2 t0
  shift 2
  t0=$(date +%s%N)
  if "$M" compare "$@" --out "$out" > "$out.log" 2>&1; then
    ok "$name: mmdem compare ran ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
  else
    nok "$name: mmdem compare" "exit $?: $(tail -n 4 "$out.log" | tr '\n' '|')"
  fi
}
# the experiments load ../../build/plugins/symplectic_euler.so: use the one built beside $M
# instead (another build directory may hold a plugin built from other sources)
plug=()
se="$(cd "$(dirname "$M")" && pwd)/plugins/symplectic_euler.so"
[ -f "$se" ] && plug=(--set "plugins=[$se]")
run_compare "(a) impact_dt" "$T/a" config/experiments/impact_dt.yaml --jobs 2 "${plug[@]}"
# (a) damped (restitution 0.8): the energy balance (dissipated energy included) of the
# second-order schemes stays second order
damped='compare.variants=[{integrator: {type: verlet}}, {integrator: {type: variational, alpha: 0.5}}, {name: variational_a0, integrator: {type: variational, alpha: 0}}]'
run_compare "(a) impact_dt damped" "$T/a2" config/experiments/impact_dt.yaml --jobs 2 "${plug[@]}" --set materials.glass.restitution=0.8 --set "$damped"
# (b): verlet and symplectic_euler only (the implicit integrators take minutes on the pile:
# variational 267 s, trapezoid 81 s on a loaded machine; their own tests cover them);
# (c): every variant of the file, every integrator (about 1 s per run)
mine='compare.variants=[{integrator: {type: verlet}}, {integrator: {type: symplectic_euler}}]'
run_compare "(b) pile_settling" "$T/b" config/experiments/pile_settling.yaml --jobs 2 "${plug[@]}" --set "$mine" --set 'compare.dt_fraction=[0.05]' --set run.end_time=0.4
run_compare "(c) spinning_sphere" "$T/c" config/experiments/spinning_sphere.yaml --jobs 2 "${plug[@]}"
# (b) reduced, every integrator of the file: 16 beads in a 6 mm box (two layers), 0.5 s, one
# dt_fraction (cd at dt_scale 10 of it: 0.5 tc); about 10 s of CPU in all. Checks in
# compare_pile.py (the full experiment: tests/validate/pile_settling.sh)
small=(--set 'domain.hi=[0.006, 0.006, 0.02]' --set bodies.0.random.count=16 --set 'bodies.0.random.region.hi=[0.006, 0.006, 0.012]' --set run.end_time=0.5 --set 'compare.dt_fraction=[0.05]')
run_compare "(b) pile_settling reduced, every integrator" "$T/b16" config/experiments/pile_settling.yaml --jobs 2 "${plug[@]}" "${small[@]}"
"$PY" tests/cases/compare_pile.py "$T/b16" 16 0.5 1 "(b) 16 beads"
grep -q "^trapezoid,trapezoid,.*,skipped," "$T/a/compare.csv" 2>/dev/null || grep -q "^trapezoid,trapezoid,.*,ok," "$T/a/compare.csv" 2>/dev/null \
  && ok "(a) compare.csv has the trapezoid rows (skipped until it is registered)" || nok "(a) trapezoid rows" "$(head -c 400 "$T/a/compare.csv" 2>/dev/null)"
"$PY" tests/cases/compare.py "$T"

# a variant whose run fails is reported, the others still run
y=config/experiments/impact_dt.yaml
"$M" compare "$y" "${plug[@]}" --out "$T/f" --set 'compare={variants: [{integrator: {type: verlet}}, {name: broken, integrator: {type: verlet, bogus: 1}}], dt: [2.0e-6]}' > "$T/f.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^verlet,verlet,2e-06,ok,' "$T/f/compare.csv" && grep -q "^broken,verlet,,failed,.*unknown key 'bogus'" "$T/f/compare.csv"; then
  ok "a failing variant: its row says failed with the run's message, the other runs"
else
  nok "a failing variant" "exit $rc: $(tr '\n' '|' < "$T/f/compare.csv" 2>/dev/null | cut -c1-500) $(tail -n 2 "$T/f.log" | tr '\n' '|')"
fi
# a compare whose energy errors are all exactly 0 (cd): the log-scale error plot has nothing
# to draw; gnuplot must still succeed (a placeholder text) and write every PNG
"$M" compare "$y" "${plug[@]}" --out "$T/z" --set 'compare={variants: [{integrator: {type: cd}}], dt: [2.0e-6, 1.0e-6]}' > "$T/z.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q "gnuplot failed" "$T/z.log" && [ "$(head -c 4 "$T/z/plots/error_vs_dt.png" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] \
  && grep -q '^cd,cd,2e-06,ok,' "$T/z/compare.csv"; then
  ok "cd only (energy error 0): gnuplot succeeds, error_vs_dt.png written"
else
  nok "cd only" "exit $rc: $(tail -n 3 "$T/z.log" | tr '\n' '|' | cut -c1-400) $(cat "$T/z/plots/gnuplot.log" 2>/dev/null | head -c 300)"
fi
expect_error() { # name, substring, command...
  local name=$1 pat=$2 out rc
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] && grep -qF -- "$pat" <<<"$out"; then ok "$name: exit $rc: $(grep -F -- "$pat" <<<"$out" | head -n 1 | cut -c1-200)"
  else nok "$name" "exit $rc, expected '$pat', got: $(tail -n 2 <<<"$out" | tr '\n' '|' | cut -c1-400)"; fi
}
expect_error "no compare: block" "compare needs a top-level 'compare:' block" "$M" compare tests/cases/val_impact_hooke.yaml --out "$T/n"
expect_error "unknown statistic, located" "compare.observables[0]: unknown statistic 'median'" "$M" compare "$y" "${plug[@]}" --out "$T/n" --set 'compare.observables=[median:ke_trans]'
expect_error "unknown compare key" "unknown key 'variant'" "$M" compare "$y" "${plug[@]}" --out "$T/n" --set 'compare.variant=[]'
expect_error "dt in a variant and a dt list" "compare.dt lists the time steps" "$M" compare "$y" "${plug[@]}" --out "$T/n" --set 'compare.variants=[{integrator: {type: verlet, dt: 1.0e-6}}]'
expect_error "dt_scale beyond dt_fraction 1, located" "compare.variants[0].dt_scale: dt_scale 40 makes dt_fraction 40 * 0.05 = 2 > 1" "$M" compare config/experiments/pile_settling.yaml "${plug[@]}" --out "$T/n" --set 'compare.variants=[{integrator: {type: cd}, dt_scale: 40}]'
expect_error "dt_scale without a dt list" "dt_scale multiplies the compare.dt or compare.dt_fraction list, and there is none" "$M" compare "$y" "${plug[@]}" --out "$T/n" --set 'compare={variants: [{integrator: {type: verlet}, dt_scale: 2}]}'
expect_error "compare under mpirun" "run it without mpirun" mpirun -n 2 "$M" compare "$y" "${plug[@]}" --out "$T/n"

# mmdem plot on a run with a wall
d="$T/c/verlet/dt0"
if [ -f "$d/walls.csv" ] && "$M" plot "$d" > "$T/plot.log" 2>&1; then
  missing=""
  wid=$(sed -n 2p "$d/walls.csv" | cut -d, -f3)
  for p in energy energy_error contacts dt iterations "wall_$wid"; do
    [ "$(head -c 4 "$d/plots/$p.png" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] || missing="$missing $p.png"
  done
  [ -z "$missing" ] && ok "mmdem plot: energy, energy_error, contacts, dt, iterations and wall_$wid PNGs in DIR/plots" || nok "mmdem plot PNGs" "missing:$missing"
else
  nok "mmdem plot" "$(tail -n 3 "$T/plot.log" 2>/dev/null | tr '\n' '|')"
fi
expect_error "mmdem plot without gnuplot" "plot: gnuplot not found (MMDEM_GNUPLOT is not an executable); install it" env MMDEM_GNUPLOT=/nonexistent/gnuplot "$M" plot "$d"
out=$(MMDEM_GNUPLOT=/nonexistent/gnuplot "$M" compare "$y" "${plug[@]}" --out "$T/g" --set 'compare={dt: [2.0e-6]}' 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -qF "compare: gnuplot not found (MMDEM_GNUPLOT is not an executable): no plots" <<<"$out" && [ -f "$T/g/compare.csv" ]; then
  ok "compare without gnuplot: compare.csv written, a note instead of plots, exit 0"
else
  nok "compare without gnuplot" "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' '|')"
fi
expect_error "mmdem plot of a directory without thermo.csv" "plot: no $T/empty/thermo.csv" "$M" plot "$T/empty"
