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

Restart on 2 ranks (DESIGN.md "Output": a restart continues to the bitwise-same result as the
uninterrupted run): the 2-rank run writes a checkpoint at step 2000 (a dozen contacts, pills
resting on the floor with warm starts); a copy of its output restarts from it on 2 ranks.
The checkpoint holds every rank's solver state by global ids (section SQWS, gathered on rank
0; a restart on several ranks puts each record back into the slot of its pair in the new
list, superquadric.c). Checks against the uninterrupted 2-rank run: bodies_final.csv identical
byte for byte; thermo.csv rows after step 2000 identical in every column but wall_s; the
end-of-run counters (contact solves, warm starts, continuations, failures, Newton iterations
per solve, certified skips, bounding-box rejections: the checkpoint's sums continued)
identical. Before the solver state was gathered, the restart took fresh warm starts: 4 bodies
of bodies_final.csv differed (4e-16 m), 4902 solves instead of 4904; restarted at step 3000 of
a 0.07-s run, 199 of 200 bodies differed, by up to 6.1e-5 m.
"""
import shutil
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
ok2, log2 = mc.run("mpi_sq: 2 ranks", 2, ["run", yaml, "--out", tmp + "/r2", "--set", "output.checkpoint_every=2000"], tmp + "/r2.log")
if not (ok1 and ok2):
    dc.finish()
own, mig, wraps = mc.decomp_counts(log2)
SOLVES = r"superquadric pill: (\d+) contact solves \((\d+) from the warm start, (\d+) by shape continuation\), (\d+) not converged, ([\d.]+) Newton iterations per solve; (\d+) pair checks skipped \(separation certified\), (\d+) rejected by the bounding boxes"
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


def thermo_rows(path, after):
    """the rows of thermo.csv after step `after` as text, without the column wall_s"""
    lines = open(path).read().splitlines()
    head = lines[0].split(",")
    w = head.index("wall_s")
    return [",".join(c for j, c in enumerate(l.split(",")) if j != w) for l in lines[1:] if int(l.split(",")[0]) > after]


shutil.copytree(tmp + "/r2", tmp + "/rr")
okr, logr = mc.run("mpi_sq: restart on 2 ranks", 2, ["run", yaml, "--out", tmp + "/rr", "--restart", tmp + "/r2/checkpoints/step-2000.ckpt"], tmp + "/rr.log")
if okr:
    b2, br = (open(tmp + "/%s/bodies_final.csv" % d, "rb").read() for d in ("r2", "rr"))
    rows2 = b2.decode().splitlines()
    nd = sum(1 for x, y in zip(rows2, br.decode().splitlines()) if x != y)
    if b2 == br and len(rows2) == N + 1:
        dc.ok("mpi_sq: restart on 2 ranks: bodies_final.csv", "identical to the uninterrupted 2-rank run's byte for byte (%d bodies)" % N)
    else:
        dc.not_ok("mpi_sq: restart on 2 ranks: bodies_final.csv", "%d of %d rows differ from the uninterrupted 2-rank run's" % (nd, len(rows2) - 1))
    t2, tr = thermo_rows(tmp + "/r2/thermo.csv", 2000), thermo_rows(tmp + "/rr/thermo.csv", 2000)
    if t2 == tr and len(t2) >= 10:
        dc.ok("mpi_sq: restart on 2 ranks: thermo", "%d rows after step 2000 identical in every column but wall_s" % len(t2))
    else:
        bad = [x.split(",")[0] for x, y in zip(t2, tr) if x != y]
        dc.not_ok("mpi_sq: restart on 2 ranks: thermo", "%d and %d rows; differ at steps %s" % (len(t2), len(tr), bad[:8]))
    c2, cr = re.search(SOLVES, log2), re.search(SOLVES, logr)
    if c2 and cr and c2.groups() == cr.groups():
        dc.ok("mpi_sq: restart on 2 ranks: solver counters", "the uninterrupted run's: %s solves, %s warm, %s continuations, %s not converged, %s Newton iterations per solve, %s skipped, %s box rejections" % c2.groups())
    else:
        dc.not_ok("mpi_sq: restart on 2 ranks: solver counters", "uninterrupted %s, restarted %s" % (c2.groups() if c2 else None, cr.groups() if cr else None))
dc.finish()
