#!/usr/bin/env bash
# sort.sh - the spatial reordering of the body store (search.sort_every, src/search/sort.c;
# issue 11) keeps the physics, the output order and restarts. tests/cases/sort.yaml: 800 beads
# thrown onto a floor (periodic sides, friction history, ~60 neighbour rebuilds in 3000 steps).
#   - sort_every 0 (never), 1 (every build) and 5: bodies_final.csv lists the same ids in
#     ascending order; the runs differ only by the order in which contact forces and sums over
#     bodies are added, so the final positions agree to 1e-9 m (1e-6 radii; measured 2e-14 m)
#     and thermo's energies and contacts to 1e-9 relative, and the energy balance
#     e_total + dissipated (velocity Verlet: a bounded second-order error) drifts by less than
#     1e-3 of the initial energy in every run (measured 3.3e-4);
#   - the checkpoint at step 1000 holds the bodies in the reordered store's order (its BODY ids
#     not ascending), and a restart from it reproduces the uninterrupted run bit for bit
#     (bodies_final, thermo but wall_s); on 2 MPI ranks (no reorder there) to 1e-9 m;
#   - search.sort_every: -1, and > 0 with an implicit integrator, are refused naming
#     FILE:LINE:COL; absent with an implicit integrator it is 0 (runs).
set -u
Y=$PWD/tests/cases/sort.yaml
. tests/tools/case_lib.sh

for s in 0 1 5; do
  "$M" run "$Y" --out S$s --set search.sort_every=$s --set output.checkpoint_every=1000 --quiet > S$s.log 2>&1 ||
    nok "sort_every $s runs" "$(tail -n 2 S$s.log | tr '\n' '|')"
done
"$PY" - <<'PYEOF'
import csv, struct
def rows(f): return list(csv.DictReader(open(f)))
def check(name, cond, detail=""):
    print(("ok - %s" % name) if cond else ("not ok - %s: %s" % (name, detail)))
final = {s: rows("S%d/bodies_final.csv" % s) for s in (0, 1, 5)}
thermo = {s: rows("S%d/thermo.csv" % s) for s in (0, 1, 5)}
for s in (0, 1, 5):
    ids = [int(r["id"]) for r in final[s]]
    check("sort_every %d: bodies_final.csv lists ids 0..%d in ascending order" % (s, len(ids) - 1), ids == list(range(len(ids))), str(ids[:8]))
    e0, e1 = float(thermo[s][0]["e_balance"]), float(thermo[s][-1]["e_balance"])
    check("sort_every %d: energy balance drift %.3g of the initial energy < 1e-3" % (s, abs(e1 - e0) / e0), abs(e1 - e0) < 1e-3 * e0)
for s in (1, 5):
    dx = max(abs(float(a[k]) - float(b[k])) for a, b in zip(final[0], final[s]) for k in "xyz")
    check("sort_every %d against 0: final positions within 1e-9 m (max %.3g m)" % (s, dx), dx < 1e-9 and len(final[0]) == len(final[s]) == 800)
    worst = 0.0
    for a, b in zip(thermo[0], thermo[s]):
        for k in ("ke_trans", "ke_rot", "pe_grav", "pe_contact", "dissipated", "e_balance"):
            worst = max(worst, abs(float(a[k]) - float(b[k])) / max(abs(float(a[k])), 1e-300))
    same_contacts = all(a["contacts"] == b["contacts"] for a, b in zip(thermo[0], thermo[s]))
    check("sort_every %d against 0: every thermo row's energies within 1e-9 relative (max %.3g), contacts equal" % (s, worst), worst < 1e-9 and same_contacts and len(thermo[0]) == len(thermo[s]))
def ckpt_ids(path):
    d = open(path, "rb").read()
    pos = 48
    while pos < len(d):
        tag, _, ln = struct.unpack_from("<4sIQ", d, pos)
        if tag == b"BODY":
            n = struct.unpack_from("<q", d, pos + 16)[0]
            return list(struct.unpack_from("<%dq" % n, d, pos + 24))
        pos += 16 + ln
    return []
for s in (0, 1):
    ids = ckpt_ids("S%d/checkpoints/step-1000.ckpt" % s)
    asc = ids == sorted(ids)
    check("sort_every %d: the step-1000 checkpoint holds %d bodies %s" % (s, len(ids), "in id order" if s == 0 else "in the reordered store's order"),
          len(ids) == 801 and sorted(ids) == list(range(801)) and asc == (s == 0), str(ids[:6]))
PYEOF

# restart from the reordered run's checkpoint: bitwise the uninterrupted run
cp -r S1 R1
"$M" run "$Y" --out R1 --set search.sort_every=1 --set output.checkpoint_every=1000 --restart S1/checkpoints/step-1000.ckpt --quiet > R1.log 2>&1 ||
  nok "restart" "$(tail -n 2 R1.log | tr '\n' '|')"
same_output S1 R1 "restart at step 1000 of a reordered run"
if command -v mpirun > /dev/null; then
  cp -r S1 R2
  mpirun -n 2 "$M" run "$Y" --out R2 --set search.sort_every=1 --set output.checkpoint_every=1000 --restart S1/checkpoints/step-1000.ckpt --quiet > R2.log 2>&1 ||
    nok "restart on 2 ranks" "$(tail -n 2 R2.log | tr '\n' '|')"
  "$PY" - <<'PYEOF'
import csv
a = list(csv.DictReader(open("S1/bodies_final.csv"))); b = list(csv.DictReader(open("R2/bodies_final.csv")))
dx = max(abs(float(x[k]) - float(y[k])) for x, y in zip(a, b) for k in "xyz") if len(a) == len(b) else 1
same = [x["id"] for x in a] == [y["id"] for y in b]
what = "restart on 2 MPI ranks from the reordered run's checkpoint: same ids, positions within 1e-9 m (max %.3g m)" % dx
print(("ok - %s" if dx < 1e-9 and same else "not ok - %s") % what)
PYEOF
fi

# configuration errors name FILE:LINE:COL
sed 's/^search: .*/search: {skin: 0.0004, sort_every: -1}/' "$Y" > neg.yaml
"$M" check neg.yaml > E1.log 2>&1
grep -q "neg.yaml:[0-9]*:[0-9]*: search.sort_every: sort_every must be >= 0" E1.log && ok "sort_every: -1 refused at its line" || nok "sort_every: -1" "$(cat E1.log)"
sed 's/^integrator: .*/integrator: {type: trapezoid, dt: 7.0e-6}/; s/^search: .*/search: {skin: 0.0004, sort_every: 2}/' "$Y" > trap.yaml
"$M" check trap.yaml > E2.log 2>&1
grep -q "trap.yaml:[0-9]*:[0-9]*: search.sort_every: sort_every must be 0 here: the integrator is not verlet" E2.log && ok "sort_every: 2 with trapezoid refused at its line" || nok "sort_every with trapezoid" "$(cat E2.log)"
sed 's/^integrator: .*/integrator: {type: trapezoid, dt: 7.0e-6}/' "$Y" > trap0.yaml
"$M" check trap0.yaml > E3.log 2>&1 && ok "trapezoid without sort_every: accepted (no reorder)" || nok "trapezoid default" "$(cat E3.log)"
