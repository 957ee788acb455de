#!/usr/bin/env bash
# checkpoint_bonds.sh - restart with bonded pairs (003 section 3.3; src/core/bonds.c) and the
# variational integrator's checkpoint method (src/integrators/variational.c).
#
# The case of tests/cases/val_variational_bond.yaml (a bonded pair hit by a third sphere),
# 3 ms = about three periods of the bond, VTK bodies and contact network (bonds have bond = 1)
# every 0.25 ms. For verlet, variational alpha 1/2 and variational alpha 0: a run stopped by
# SIGTERM at step 611 (after the impact, the bond stretched), restarted from its checkpoint,
# ends byte for byte equal to the uninterrupted run (bodies_final, track, thermo without
# wall_s, every VTK file), with no "no checkpoint method" warning; and in both runs the bond
# held: the bonded pair's centre distance at the end is d within 2e-4 m (the bond's
# oscillation amplitude is about v / omega_B = 0.5 / 6180 = 8e-5 m; without the bond,
# --set bonds.threshold=1e-30, body 0 leaves at 0.49 m/s and the gap is 0.92 mm at the end).
set -u
Y=$PWD/tests/cases/val_variational_bond.yaml
. tests/tools/case_lib.sh
# distance of bodies 0 and 1 at the end, minus d = 0.01 m, from bodies_final.csv
stretch() {
  awk -F, 'NR > 1 && $1 == 0 {x0 = $4; y0 = $5; z0 = $6} NR > 1 && $1 == 1 {x1 = $4; y1 = $5; z1 = $6}
           END {printf "%.3e", sqrt((x1-x0)^2 + (y1-y0)^2 + (z1-z0)^2) - 0.01}' "$1/bodies_final.csv"
}
common=(--set integrator.dt=2.0e-6 --set run.steps=1500 --set output.checkpoint_every=500
        --set output.vtk_every=2.5e-4 --set output.thermo_every=10)
for v in "verlet|{type: verlet, dt: 2.0e-6}" "variational|{type: variational, dt: 2.0e-6, alpha: 0.5}" "variational_a0|{type: variational, dt: 2.0e-6, alpha: 0}"; do
  name=${v%%|*}
  integ=${v#*|}
  set_=("${common[@]}" --set "integrator=$integ")
  "$M" run "$Y" --out F-$name --quiet "${set_[@]}" > F-$name.log 2>&1
  rcf=$?
  MMDEM_DEBUG_SIGNAL_STEP=611 "$M" run "$Y" --out P-$name --quiet "${set_[@]}" > P-$name.log 2>&1
  rcp=$?
  "$M" run "$Y" --out P-$name --quiet "${set_[@]}" --restart P-$name/checkpoints/step-611.ckpt > R-$name.log 2>&1
  rcr=$?
  if [ $rcf -ne 0 ] || [ $rcp -ne 143 ] || [ $rcr -ne 0 ]; then
    nok "$name with bonds: run, SIGTERM at step 611, restart" "exit $rcf, $rcp (want 143), $rcr: $(tail -n 2 F-$name.log R-$name.log | tr '\n' '|')"
    continue
  fi
  if grep -q "no checkpoint method" R-$name.log; then nok "$name: checkpoint method" "$(grep "no checkpoint method" R-$name.log | head -n 1)"; fi
  bad=""
  for f in bodies_final.csv track.csv; do cmp -s F-$name/$f P-$name/$f || bad="$bad $f"; done
  cmp -s <(nowall F-$name/thermo.csv) <(nowall P-$name/thermo.csv) || bad="$bad thermo.csv"
  [ "$(cd F-$name/vtk && ls)" = "$(cd P-$name/vtk && ls)" ] || bad="$bad vtk-file-list"
  nv=0
  for f in F-$name/vtk/*; do nv=$((nv + 1)); cmp -s "$f" "P-$name/vtk/$(basename "$f")" || bad="$bad vtk/$(basename "$f")"; done
  if [ -z "$bad" ]; then ok "$name with bonds: SIGTERM at step 611 + restart = the uninterrupted run, bodies_final, track, thermo (but wall_s) and $nv VTK files byte for byte"
  else nok "$name with bonds: restart" "differs from the uninterrupted run:$bad"; fi
  for d in F P; do
    s=$(stretch $d-$name)
    if awk -v s="$s" 'BEGIN {exit !(s < 2e-4 && s > -2e-4)}'; then ok "$name ($d): the bond held, |x1 - x0| - d = $s m (|.| < 2e-4 m)"
    else nok "$name ($d): the bond held" "|x1 - x0| - d = $s m"; fi
  done
done
