"""Checks of experiment (b), config/experiments/pile_settling.yaml, from its compare.csv, for
every integrator of the file. Usage: compare_pile.py COMPARE_DIR NBEADS END_TIME NDT TAG

Used by tests/cases/compare.sh (a reduced pile: 16 beads in a 6 mm box, one dt_fraction, in
make test) and tests/validate/pile_settling.sh (the file as it is: 128 beads, two
dt_fractions). For each of the six variants of the file (verlet, symplectic_euler,
trapezoid, newmark, variational, cd) and each time step:
  - the run finished: status ok (a failed, timed-out or skipped run is reported with its note);
  - the floor reaction at the end equals the weight of the beads (conservation of momentum
    at rest: the floor is the only support), |wall.0.fz| = NBEADS m g within 0.1 %
    (m = 2500 kg/m^3 * 4/3 pi (1 mm)^3; 128 m g = 0.013149 N);
  - time_to_rest (compare.c: first thermo time from which the kinetic energy stays below
    1e-3 of its maximum) is a finite time inside the run, 0 < t < END_TIME.
cd runs at 10 times the others' dt (dt_scale: 10 in the file, its header says why); that the
scaled dt reached the run is asserted too (dt of cd = 10 dt of verlet at the same index).
"""
import csv
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

VARIANTS = ("verlet", "symplectic_euler", "trapezoid", "newmark", "variational", "cd")

cdir, nbeads, t_end, ndt, tag = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
path = os.path.join(cdir, "compare.csv")
if not os.path.isfile(path):
    dc.not_ok(tag + ": compare.csv", "missing: %s" % path)
    dc.finish()
with open(path, newline="") as fp:
    tab = list(csv.DictReader(fp))
weight = nbeads * dc.sphere_mass(2500.0, 0.001) * dc.G
for v in VARIANTS:
    rs = [r for r in tab if r["variant"] == v]
    if len(rs) != ndt:
        dc.not_ok("%s %s: %d rows" % (tag, v, ndt), "found %d" % len(rs))
    for k, r in enumerate(rs):
        name = "%s %s dt %s" % (tag, v, r["dt"])
        if r["status"] != "ok":
            dc.not_ok(name + ": finished", "status %s: %s" % (r["status"], r["note"][:400]))
            continue
        dc.ok(name + ": finished, %s steps, %s s wall, %s iterations per step" % (r["steps"], r["wall_s"], r["iterations"]))
        fz = float(r["wall.0.fz"]) if r["wall.0.fz"] else float("nan")
        dc.check(name + ": floor reaction |wall.0.fz| = %d m g = %.7g N, relative error" % (nbeads, weight), abs(abs(fz) / weight - 1), 1e-3,
                 "wall.0.fz = %s N" % r["wall.0.fz"])
        t = float(r["time_to_rest"]) if r["time_to_rest"] else float("nan")
        if math.isfinite(t) and 0 < t < t_end:
            dc.ok(name + ": at rest (kinetic energy <= 1e-3 of its maximum) from t = %.4g s" % t)
        else:
            dc.not_ok(name + ": time_to_rest in (0, %g) s" % t_end, "'%s'" % r["time_to_rest"])
ver = [r for r in tab if r["variant"] == "verlet" and r["dt"]]
cds = [r for r in tab if r["variant"] == "cd" and r["dt"]]
for a, b in zip(ver, cds):
    dc.check("%s cd runs at dt_scale 10 times verlet's dt (%s vs %s s), relative error" % (tag, b["dt"], a["dt"]),
             abs(float(b["dt"]) / (10 * float(a["dt"])) - 1), 1e-9)
dc.finish()
