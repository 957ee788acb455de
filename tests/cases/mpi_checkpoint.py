"""A checkpoint written on 2 ranks restarts on 1 and on 2 ranks (and one written on 1 rank on
2 ranks) and continues to the same result
(issue 9 validation; DESIGN.md "Output": checkpoints; src/core/decomp.c gathers the state in
the serial layout).

mpi_settle.yaml (400 beads settling, Hertz-Mindlin with friction history, periodic x, y) runs
on 2 ranks for 3868 steps with output.checkpoint_every 2000. A copy of its output directory
restarts on 1 rank from step-2000.ckpt. Checks:
  - the restarted run ends at the same step; its bodies_final.csv has ids 0..399 once and
    positions within 1e-8 of the box size of the uninterrupted 2-rank run's;
  - thermo rows after the checkpoint: contact counts identical, energies within 1e-8 relative
    (the contact history crossed the checkpoint: a lost history changes the friction forces
    at O(1));
  - the 1-rank run of the same description without interruption: positions within 1e-8;
  - the VTK series after the restart still lists every frame, the 2-rank frames as .pvtp and
    the new ones as .vtp, all existing;
  - the checkpoints of the 2-rank and of the 1-rank run restart on 2 ranks (distributed on
    read, the history with its pairs): both ranks own bodies, ids 0..399 once, positions
    within 1e-8 of the box size of the uninterrupted 2-rank run's, thermo rows after the
    checkpoint with identical contact counts and energies within 1e-8 relative.
"""
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_settle.yaml")
L, N = (0.02, 0.02, 0.03), 400
sets = ["--quiet", "--set", "run.end_time=0.05", "--set", "output.vtk_every=0.0125", "--set", "output.checkpoint_every=2000"]
ok2, _ = mc.run("mpi_checkpoint: 2 ranks", 2, ["run", yaml, "--out", tmp + "/r2"] + sets, tmp + "/r2.log")
ok1, _ = mc.run("mpi_checkpoint: 1 rank", 1, ["run", yaml, "--out", tmp + "/r1"] + sets, tmp + "/r1.log")
if not (ok1 and ok2):
    dc.finish()
ck = tmp + "/r2/checkpoints/step-2000.ckpt"
shutil.copytree(tmp + "/r2", tmp + "/rr")
okr, _ = mc.run("mpi_checkpoint: restart on 1 rank", 1, ["run", yaml, "--out", tmp + "/rr", "--restart", ck] + sets, tmp + "/rr.log")
if not okr:
    dc.finish()
b2, br, b1 = (mc.bodies(tmp + "/%s/bodies_final.csv" % d) for d in ("r2", "rr", "r1"))
rows = dc.read_csv(tmp + "/rr/bodies_final.csv")
if sorted(br) == list(range(N)) and len(rows) == N:
    dc.ok("mpi_checkpoint: ids", "0..%d once after the 2 -> 1 rank restart" % (N - 1))
else:
    dc.not_ok("mpi_checkpoint: ids", "%d rows, %d ids" % (len(rows), len(br)))
per = (True, True, False)
dx = mc.max_pos_diff(b2, br, L, per)
dc.check("mpi_checkpoint: restarted vs uninterrupted 2-rank run", dx / max(L), 1e-8, "max |dx| = %.3e m" % dx)
dx1 = mc.max_pos_diff(b1, br, L, per)
dc.check("mpi_checkpoint: restarted vs uninterrupted 1-rank run", dx1 / max(L), 1e-8, "max |dx| = %.3e m" % dx1)
t2, tr = dc.read_csv(tmp + "/r2/thermo.csv"), dc.read_csv(tmp + "/rr/thermo.csv")
after = [r for r in t2 if r["step"] > 2000]
afr = [r for r in tr if r["step"] > 2000]
de, bad = mc.thermo_diff(after, afr)
if [r["step"] for r in after] == [r["step"] for r in afr] and not bad and len(after) > 5:
    dc.ok("mpi_checkpoint: thermo after the restart", "%d rows, contact counts identical (up to %d)" % (len(after), max(r["contacts"] for r in after)))
else:
    dc.not_ok("mpi_checkpoint: thermo after the restart", "steps %s vs %s, contacts differ at %s" % ([r["step"] for r in after][:5], [r["step"] for r in afr][:5], bad[:5]))
dc.check("mpi_checkpoint: energies after the restart", de, 1e-8)
vr = [sys.executable, os.path.join(here, "..", "tools", "vtk_read.py")]
pvd = subprocess.run(vr + [tmp + "/rr/vtk/bodies.pvd"], capture_output=True, text=True)
ds = [l.split() for l in pvd.stdout.splitlines() if l.startswith("dataset ")]
ext = [d[3].rsplit(".", 1)[1] for d in ds]
if pvd.returncode == 0 and ds and all(d[2] == "1" for d in ds) and "pvtp" in ext and "vtp" in ext:
    dc.ok("mpi_checkpoint: vtk series", "%d frames (%d .pvtp from 2 ranks, %d .vtp after the restart), all exist" % (len(ds), ext.count("pvtp"), ext.count("vtp")))
else:
    dc.not_ok("mpi_checkpoint: vtk series", pvd.stdout[-400:] + pvd.stderr[-300:])
# restart on 2 ranks: from the 2-rank checkpoint and from the 1-rank run's (distributed on read)
for tag, src in (("2 -> 2", "r2"), ("1 -> 2", "r1")):
    d = tmp + "/rs" + src
    shutil.copytree(tmp + "/" + src, d)
    okx, logx = mc.run("mpi_checkpoint: restart %s ranks" % tag, 2, ["run", yaml, "--out", d, "--restart", tmp + "/%s/checkpoints/step-2000.ckpt" % src] + sets, d + ".log")
    if not okx:
        continue
    bx = mc.bodies(d + "/bodies_final.csv")
    nrow = len(dc.read_csv(d + "/bodies_final.csv"))
    own, _, _ = mc.decomp_counts(logx)
    if sorted(bx) == list(range(N)) and nrow == N and len(own) == 2 and min(own) > 0 and sum(own) == N:
        dc.ok("mpi_checkpoint: restart %s ranks: distributed" % tag, "owned per rank after the restart %s; ids 0..%d once at the end" % (own, N - 1))
    else:
        dc.not_ok("mpi_checkpoint: restart %s ranks: distributed" % tag, "owned %s, %d rows, %d ids" % (own, nrow, len(bx)))
    dx = mc.max_pos_diff(b2, bx, L, per)
    dc.check("mpi_checkpoint: restart %s ranks vs uninterrupted 2-rank run" % tag, dx / max(L), 1e-8, "max |dx| = %.3e m" % dx)
    tx = [r for r in dc.read_csv(d + "/thermo.csv") if r["step"] > 2000]
    de, bad = mc.thermo_diff(after, tx)
    if [r["step"] for r in after] == [r["step"] for r in tx] and not bad:
        dc.check("mpi_checkpoint: restart %s ranks: thermo after the restart" % tag, de, 1e-8, "%d rows, contact counts identical; largest relative energy difference" % len(tx))
    else:
        dc.not_ok("mpi_checkpoint: restart %s ranks: thermo after the restart" % tag, "steps or contact counts differ: %s" % bad[:5])
dc.finish()
