"""Bodies crossing rank and periodic boundaries many times (issue 9 validation: "none lost or
duplicated (gid set identical at the end), momentum conserved").

150 spheres (r = 0.5 mm) in a 12 x 8 x 8 mm box periodic in x, y, z, on a jittered lattice
with random velocities (0.15 m/s spread) plus a drift of 0.4 m/s along x, no gravity; damped
Hooke law with friction (003_9f0cdbfccae61a56.txt eq. (20)-(25): every contact force acts in
equal and opposite pairs, eq. (24)). 2 ranks, grid 2 x 1 x 1 (mpi.grid), cut at x = 6 mm and
at the periodic boundary: over 0.06 s the drift alone carries every body 24 mm, i.e. across
4 rank boundaries and 2 periodic ones. Checks:
  - migration and wrapping happened (counts reported by the decomposition,
    MMDEM_DECOMP_VERBOSE): bodies migrated >= 3 x 150, periodic wraps >= 150;
  - ids at the end: exactly 0..149, each once (bodies_final.csv gathered from both ranks);
  - momentum: |sum m v (end) - sum m v (initial, as written here)| / sum m |v| <= 1e-12;
  - the 1-rank run of the same description: positions within 1e-8 of the box size (periodic
    minimum image), contact counts identical in every thermo row, energies within 1e-8.
"""
import math
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_cross.yaml")
R, rho, L = 0.0005, 2500.0, (0.012, 0.008, 0.008)
m = dc.sphere_mass(rho, R)
rng = random.Random(2026)
drift = (0.4, 0.0, 0.0)
rows = []
nx, ny, nz = 6, 5, 5
for k in range(nz):
    for j in range(ny):
        for i in range(nx):
            h = (L[0] / nx, L[1] / ny, L[2] / nz)
            x = [(i + 0.5) * h[0], (j + 0.5) * h[1], (k + 0.5) * h[2]]
            x = [x[c] + rng.uniform(-0.08, 0.08) * h[c] for c in range(3)]
            v = [drift[c] + rng.gauss(0, 0.15) for c in range(3)]
            rows.append(x + v)
N = len(rows)
csvp = os.path.join(tmp, "bodies.csv")
with open(csvp, "w") as fp:
    fp.write("x,y,z,vx,vy,vz\n")
    for r in rows:
        fp.write(",".join(repr(c) for c in r) + "\n")
p0 = [sum(m * r[3 + c] for r in rows) for c in range(3)]
pabs = sum(m * math.sqrt(sum(r[3 + c] ** 2 for c in range(3))) for r in rows)

args = lambda out: ["run", yaml, "--out", out, "--quiet", "--set", "bodies.0.file=" + csvp]
ok2, log2 = mc.run("mpi_cross: 2 ranks", 2, args(tmp + "/r2"), tmp + "/r2.log")
ok1, _ = mc.run("mpi_cross: 1 rank", 1, args(tmp + "/r1") + ["--set", "mpi.grid=[1, 1, 1]"], tmp + "/r1.log")
if not (ok1 and ok2):
    dc.finish()

mig = wrap = 0
for l in log2.splitlines():
    if l.startswith("decomp: rank ") and "migrated" in l:
        w = l.replace(",", "").split()
        mig += int(w[5])
        wrap += int(w[9])
if mig >= 3 * N and wrap >= N:
    dc.ok("mpi_cross: crossings", "%d bodies migrated between the ranks, %d periodic wraps (%d bodies)" % (mig, wrap, N))
else:
    dc.not_ok("mpi_cross: crossings", "%d migrations (want >= %d), %d wraps (want >= %d)" % (mig, 3 * N, wrap, N))

b2rows = dc.read_csv(tmp + "/r2/bodies_final.csv")
ids = sorted(int(r["id"]) for r in b2rows)
if ids == list(range(N)):
    dc.ok("mpi_cross: ids", "exactly ids 0..%d, each once, after the crossings" % (N - 1))
else:
    dc.not_ok("mpi_cross: ids", "%d rows, %d distinct ids, missing %s" % (len(ids), len(set(ids)), sorted(set(range(N)) - set(ids))[:10]))
p1 = [sum(m * r["v" + c] for r in b2rows) for c in "xyz"]
dp = math.sqrt(sum((p1[c] - p0[c]) ** 2 for c in range(3)))
dc.check("mpi_cross: momentum (2 ranks)", dp / pabs, 1e-12, "|P_end - P_0| = %.3e kg m/s, sum m|v| = %.3e" % (dp, pabs))

b1, b2 = mc.bodies(tmp + "/r1/bodies_final.csv"), mc.bodies(tmp + "/r2/bodies_final.csv")
dx = mc.max_pos_diff(b1, b2, L, (True, True, True))
dc.check("mpi_cross: positions 1 vs 2 ranks", dx / max(L), 1e-8, "max |dx| = %.3e m" % dx)
t1, t2 = dc.read_csv(tmp + "/r1/thermo.csv"), dc.read_csv(tmp + "/r2/thermo.csv")
de, bad = mc.thermo_diff(t1, t2)
ncs = sum(r["contacts"] for r in t1)
if not bad and len(t1) == len(t2) and ncs > 0:
    dc.ok("mpi_cross: contact counts", "identical in all %d rows (%d contacts summed over the rows)" % (len(t1), ncs))
else:
    dc.not_ok("mpi_cross: contact counts", "rows %d / %d, differ at steps %s" % (len(t1), len(t2), bad[:10]))
dc.check("mpi_cross: energies 1 vs 2 ranks", de, 1e-8)
dc.finish()
