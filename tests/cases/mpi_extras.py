"""MPI case: loads, bonds and output.track on 1 and on 2 ranks (mpi_extras.yaml; issue 9 (1)).

A bonded lattice (75 bonds) drifts through a fully periodic box across the ranks' subdomains
and the periodic faces, pushed by loads, colliding with free beads. Checks:
  - the 2-rank run is decomposed, bodies migrate between the ranks and wrap periodically;
  - 75 bonds (the edges of the 4 x 3 x 3 lattice: 3*3*3 + 4*2*3 + 4*3*2) on 1 and 2 ranks;
  - against the 1-rank run: the same ids, positions within 1e-8 of the box, identical contact
    counts, energies within 1e-8 relative (mpi_common.compare);
  - track.csv (gathered on rank 0 on 2 ranks): the same (step, id) rows; every column within
    1e-8 of that column's largest magnitude;
  - momentum (a conservation law, independent of the rank count): contacts and bonds are
    internal forces, so P(T) - P(0) is the loads' impulse. Velocity Verlet sums the forces
    with the trapezoidal rule in time, exact for the piecewise-linear ramp (its corner at
    t = 0.01 s is a step): J = F (T - ramp1/2) per ramped body, F T for the constant load.
    Equal masses m = rho 4/3 pi r^3. Both runs within 1e-9 of |J|.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_extras.yaml")
L, periodic, N = (0.02, 0.01, 0.01), (True, True, True), 39
ok1, log1 = mc.run("mpi_extras: 1 rank", 1, ["run", yaml, "--out", tmp + "/r1"], tmp + "/r1.log")
ok2, log2 = mc.run("mpi_extras: 2 ranks", 2, ["run", yaml, "--out", tmp + "/r2"], tmp + "/r2.log")
if not (ok1 and ok2):
    dc.finish()

own, mig, wraps = mc.decomp_counts(log2)
if len(own) == 2 and min(own) > 0 and sum(own) == N and mig > 0 and wraps > 0:
    dc.ok("mpi_extras: decomposed", "owned per rank at the start %s, %d migrations, %d periodic wraps" % (own, mig, wraps))
else:
    dc.not_ok("mpi_extras: decomposed", "owned %s, %d migrations, %d wraps (want 2 ranks > 0, sum %d, both > 0)" % (own, mig, wraps, N))
nb = [[l for l in lg.splitlines() if l.startswith("bonds: ")] for lg in (log1, log2)]
if nb[0] == nb[1] == ["bonds: 75 bonded pairs (law bond)"]:
    dc.ok("mpi_extras: bonds", "75 bonded pairs on 1 and 2 ranks (the lattice's edges)")
else:
    dc.not_ok("mpi_extras: bonds", "%s" % nb)
mc.compare("mpi_extras", tmp + "/r1", tmp + "/r2", L, periodic, 1e-8, N)

tr1, tr2 = dc.read_csv(tmp + "/r1/track.csv"), dc.read_csv(tmp + "/r2/track.csv")
keys = [(r["step"], r["id"]) for r in tr1]
if keys == [(r["step"], r["id"]) for r in tr2] and len(keys) == 4 * 61:
    cols = [c for c in tr1[0] if c not in ("step", "time", "id")]
    worst, where = 0.0, ""
    for c in cols:
        s = max(max(abs(r[c]) for r in tr1), 1e-300)
        for ra, rb in zip(tr1, tr2):
            e = abs(ra[c] - rb[c]) / s
            if c in "xyz":
                e = min(e, abs(e - L["xyz".index(c)] / s))
            if e > worst:
                worst, where = e, "%s at step %d id %d" % (c, ra["step"], ra["id"])
    dc.check("mpi_extras: track.csv 1 vs 2 ranks", worst, 1e-8, "%d rows (4 bodies x 61 thermo steps), largest difference relative to its column: %s" % (len(keys), where))
else:
    dc.not_ok("mpi_extras: track.csv rows", "%d rows on 1 rank, %d on 2, or other (step, id)" % (len(tr1), len(tr2)))

m = 2500 * 4.0 / 3 * math.pi * 0.001 ** 3
T, r1 = 0.03, 0.01
v0 = [(0.4, 0.05, 0.0)] * 36 + [(-0.3, 0, 0.02), (-0.2, 0.1, 0), (0.05, 0, 0)]
J = (2 * 0.0002 * (T - r1 / 2), 0.0001 * T, 0.0)
for tag in ("r1", "r2"):
    b = mc.bodies(tmp + "/%s/bodies_final.csv" % tag)
    dP = [m * sum(b[i]["v" + c] - v0[i][k] for i in range(N)) for k, c in enumerate("xyz")]
    err = max(abs(dP[k] - J[k]) for k in range(3)) / math.hypot(*J)
    dc.check("mpi_extras: momentum = loads' impulse (%s rank%s)" % (tag[1], "s" if tag == "r2" else ""), err, 1e-9, "dP = (%.10e, %.10e, %.3e), J = (%.10e, %.10e, 0)" % (dP[0], dP[1], dP[2], J[0], J[1]))
dc.finish()
