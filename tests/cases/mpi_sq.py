"""MPI: superquadrics on 1 and on 2 ranks (mpi_sq.yaml; issue 9 (4)).

150 spinning blocky pills and 50 beads fall onto a floor, periodic in x and y, default grid
2 x 1 x 1. The superquadric contact solver (002: Newton on the midway-point system) keeps a
warm start per pair (superquadric.c); on several ranks decomp.c moves it with the pair when
the pair's evaluating rank changes at a migration, like the contact history. Checks, against
the 1-rank run: decomposed (both ranks own bodies); the same ids; positions within 1e-8 of
the box size; contact counts identical in every thermo row; energies within 1e-8 relative;
superquadric contact solves happened on both runs (the end-of-run line of superquadric.c).
The window (0.032 s, ~3200 steps, up to ~12 contacts) keeps the test short; measured over
0.07 s (6960 steps, up to ~200 contacts) both runs make the same 441556 solves (790 by shape
continuation, the rest from warm starts), positions agree within 1.5e-8 of the box and
energies within 2.5e-7 relative (round-off amplified by the packing, as in mpi_settle).
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
yaml = os.path.join(here, "mpi_sq.yaml")
L, periodic, N = (0.02, 0.012, 0.03), (True, True, False), 200
ok1, log1 = mc.run("mpi_sq: 1 rank", 1, ["run", yaml, "--out", tmp + "/r1"], tmp + "/r1.log")
ok2, log2 = mc.run("mpi_sq: 2 ranks", 2, ["run", yaml, "--out", tmp + "/r2"], tmp + "/r2.log")
if not (ok1 and ok2):
    dc.finish()
own, mig, wraps = mc.decomp_counts(log2)
solves = []
for lg in (log1, log2):
    m = re.search(r"superquadric pill: (\d+) contact solves \((\d+) from the warm start, (\d+) by shape continuation\)", lg)
    solves.append(tuple(int(g) for g in m.groups()) if m else None)
if len(own) == 2 and min(own) > 0 and sum(own) == N:
    dc.ok("mpi_sq: decomposed", "owned per rank at the start %s, %d migrations" % (own, mig))
else:
    dc.not_ok("mpi_sq: decomposed", "owned %s" % own)
if solves[0] and solves[1] and min(solves[0][0], solves[1][0]) > 1000:
    dc.ok("mpi_sq: superquadric contact solves", "1 rank: %d solves (%d warm, %d continuations); 2 ranks: %d (%d warm, %d continuations)" % (solves[0] + solves[1]))
else:
    dc.not_ok("mpi_sq: superquadric contact solves", "%s" % solves)
mc.compare("mpi_sq", tmp + "/r1", tmp + "/r2", L, periodic, 1e-8, N)
dc.finish()
