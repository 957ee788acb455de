"""Load balancing by shifting cut planes (issue 9 part 2; src/core/decomp.c).

mpi_settle.yaml on 2 ranks with the grid 1 x 1 x 2 (mpi.grid), i.e. cut across gravity: the
beads fall out of the upper subdomain, so the owned-particle counts drift apart and the
imbalance max/mean passes mpi.balance_threshold (1.1); the cut plane then moves to the median
height of the beads. Checks (numbers reported by the decomposition, MMDEM_DECOMP_VERBOSE):
  - rebalancing happened (at least one), every reported rebalance ends at imbalance <= 1.1,
    and the imbalance at the last rebuild is <= 1.1;
  - the final cut plane moved below the middle (15 mm) and no subdomain is narrower than the
    ghost range 2 r_max + skin;
  - bodies_final.csv has ids 0..399 once; positions agree with the 1-rank run within 1e-8 of
    the box size and contact counts are identical in every thermo row (migration of bodies
    and contact history at each rebalance changes nothing beyond round-off).
"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_settle.yaml")
L, N, thr = (0.02, 0.02, 0.03), 400, 1.1
sets = ["--quiet", "--set", "run.end_time=0.05", "--set", "output.vtk_every=-1"]
ok2, log = mc.run("mpi_balance: 2 ranks", 2, ["run", yaml, "--out", tmp + "/r2", "--set", "mpi.grid=[1,1,2]"] + sets, tmp + "/r2.log")
ok1, _ = mc.run("mpi_balance: 1 rank", 1, ["run", yaml, "--out", tmp + "/r1"] + sets, tmp + "/r1.log")
if not (ok1 and ok2):
    dc.finish()
reb = [(float(a), float(b)) for a, b in re.findall(r"rebalanced: max/mean owned particles ([0-9.]+) -> ([0-9.]+)", log)]
if reb and all(a > thr and b <= thr for a, b in reb):
    dc.ok("mpi_balance: rebalances", "%d, each from above %.2f to at most %.2f: %s" % (len(reb), thr, thr, ", ".join("%.3f->%.3f" % r for r in reb[:6])))
else:
    dc.not_ok("mpi_balance: rebalances", "%s" % reb)
m = re.search(r"decomp: imbalance ([0-9.]+) .* z: ([-0-9.e]+) ([-0-9.e]+) ([-0-9.e]+); ghost range ([0-9.e-]+)", log)
if m:
    imb, z0, z1, z2, gr = (float(v) for v in m.groups())
    dc.check("mpi_balance: final imbalance", max(0.0, imb - thr), 0.0, "max/mean %.4f, threshold %.2f" % (imb, thr))
    if z1 < 0.015 and min(z1 - z0, z2 - z1) >= gr:
        dc.ok("mpi_balance: cut plane", "z cut at %.5f m (was 0.015), slabs %.5f and %.5f m >= ghost range %.5f m" % (z1, z1 - z0, z2 - z1, gr))
    else:
        dc.not_ok("mpi_balance: cut plane", "z cuts %g %g %g, ghost range %g" % (z0, z1, z2, gr))
else:
    dc.not_ok("mpi_balance: final imbalance", "no summary line in the log")
b1, b2 = mc.bodies(tmp + "/r1/bodies_final.csv"), mc.bodies(tmp + "/r2/bodies_final.csv")
if sorted(b2) == list(range(N)) and len(dc.read_csv(tmp + "/r2/bodies_final.csv")) == N:
    dc.ok("mpi_balance: ids", "0..%d once" % (N - 1))
else:
    dc.not_ok("mpi_balance: ids", "%d ids" % len(b2))
dx = mc.max_pos_diff(b1, b2, L, (True, True, False))
dc.check("mpi_balance: positions 1 vs 2 ranks", dx / max(L), 1e-8, "max |dx| = %.3e m" % dx)
de, bad = mc.thermo_diff(dc.read_csv(tmp + "/r1/thermo.csv"), dc.read_csv(tmp + "/r2/thermo.csv"))
if not bad:
    dc.ok("mpi_balance: contact counts", "identical in every thermo row")
else:
    dc.not_ok("mpi_balance: contact counts", "differ at steps %s" % bad[:10])
dc.finish()
