#!/usr/bin/env bash
# newmark: a run interrupted (SIGTERM, MMDEM_DEBUG_SIGNAL_STEP) and restarted from its
# checkpoint continues to the bitwise-same result as the uninterrupted run (DESIGN.md "Output",
# src/core/checkpoint.c), for the stiff frictional pile of tests/validate/val_newmark_pile.yaml
# (E = 63 GPa, Hertz-Mindlin with friction 0.5: tangential history) at dt = 50 explicit critical
# dt (2.194e-4 s = 50 x 2 tc / pi, tc = 6.892e-6 s), where steps are cut and dt grows again.
# Interrupted at steps 5 (dt cut to 1/16 and growing), 23 and 60 (settled, full dt).
# Before newmark.c fixed its Jacobian's nonzero pattern (DemNmJacobianPattern) the restart
# from step 60 differed in the 8th digit of the kinetic energy: the pattern, and so ILU(0) and
# the last bits of Newton's solution, depended on the contacts of the first step after the
# neighbour list's build, which a restarted run (same list, new matrix) did not reproduce.
set -u
cd "$(dirname "$0")/../.."
. tests/tools/case_lib.sh
Y=$R/tests/validate/val_newmark_pile.yaml
S=(--set integrator.dt=2.1939254257e-4 --set run.end_time=0.03 --set output.thermo_every=1 --set output.vtk_every=0.01)
"$M" run "$Y" --out A --quiet "${S[@]}" > A.log 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  nok "newmark restart: uninterrupted run" "exit $rc: $(tail -n 2 A.log | tr '\n' '|')"
  exit 0
fi
# the case exercises what it should: rejected (cut) steps and contacts with friction history
"$PY" - A/thermo.csv <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
rej, con = int(float(rows[-1]["rejected"])), max(int(float(r["contacts"])) for r in rows)
what = "newmark restart case: steps were cut (rejected %d) and contacts held (max %d)" % (rej, con)
print(("ok - %s" if rej > 0 and con >= 6 else "not ok - %s") % what)
EOF
for st in 5 23 60; do
  MMDEM_DEBUG_SIGNAL_STEP=$st "$M" run "$Y" --out B$st --quiet "${S[@]}" > B$st.log 2>&1
  rcp=$?
  "$M" run "$Y" --out B$st --quiet "${S[@]}" --restart B$st/checkpoints/step-$st.ckpt > R$st.log 2>&1
  rcr=$?
  if [ $rcp -ne 143 ] || [ $rcr -ne 0 ]; then
    nok "newmark restart at step $st" "exit $rcp, $rcr: $(tail -n 2 R$st.log | tr '\n' '|')"
    continue
  fi
  same_output A B$st "newmark stiff frictional pile: SIGTERM at step $st + restart"
done
