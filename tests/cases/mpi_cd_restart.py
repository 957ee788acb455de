"""MPI: cd's warm starts in a checkpoint written on 2 ranks (issue 9 (3); src/integrators/cd.c
DemCDMPIGather, src/core/decomp.c DemDecompSerialize_Private).

cd (004, APGD, the default) keeps per contact the previous step's force as the next step's
starting point (warm_start: true). On several ranks each rank holds the warm starts of the
pairs it evaluates; while rank 0 serializes a checkpoint every rank's warm starts are gathered
into it (ops->mpigather), so a restart on any number of ranks starts every contact from its
warm start, as the uninterrupted run does. With rank 0's warm starts only (before; measured with
ops->mpigather unset), the restarts on 2 and on 1 rank took another APGD iteration count in
the first step after the checkpoint below (step 151) and ended 1.5e-11 of the box away.

mpi_settle.yaml, gravity 40 m/s^2, cd with dt 1e-4 s to 0.02 s (200 steps), thermo every step,
checkpoint at step 150 (64 contacts): written on 2 ranks, restarted on 2 ranks and on 1 rank.
Checked against the uninterrupted 2-rank run: APGD iteration counts and contact counts identical
in each of the 50 steps after the checkpoint (APGD stops at the LCP residual tol 1e-10; a
warm start of another value shifts the count), positions within 1e-8 of the box.
Run as `mpi_cd_restart.py TMP`.
"""
import os
import shutil
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_settle.yaml")
L, periodic, N, TOL, CK = (0.02, 0.02, 0.03), (True, True, False), 400, 1e-8, 150
base = ["--quiet", "--set", "output.vtk_every=0", "--set", "integrator.type=cd", "--set", "integrator.dt=1.0e-4",
        "--set", "run.end_time=0.02", "--set", "gravity=[0, 0, -40]", "--set", "output.thermo_every=1",
        "--set", "output.checkpoint_every=%d" % CK]
d2 = tmp + "/cd_2"
ok2, log2 = mc.run("mpi_cd_restart: 2 ranks", 2, ["run", yaml, "--out", d2] + base, d2 + ".log")
ck = d2 + "/checkpoints/step-%d.ckpt" % CK
if ok2 and not os.path.exists(ck):
    dc.not_ok("mpi_cd_restart: checkpoint", "no %s" % ck)
elif ok2:
    own, _, _ = mc.decomp_counts(log2)
    t2 = {r["step"]: r for r in dc.read_csv(d2 + "/thermo.csv")}
    if len(own) == 2 and min(own) > 0 and t2[CK]["contacts"] > 0:
        dc.ok("mpi_cd_restart: decomposed", "owned per rank %s, %d contacts at the checkpoint" % (own, t2[CK]["contacts"]))
    else:
        dc.not_ok("mpi_cd_restart: decomposed", "owned per rank %s, %d contacts at the checkpoint" % (own, t2[CK]["contacts"]))
    b2 = mc.bodies(d2 + "/bodies_final.csv")
    for nr in (2, 1):
        out = "%s/restart_%d" % (tmp, nr)
        shutil.copytree(d2, out)
        ok, _ = mc.run("mpi_cd_restart: restart on %d rank(s)" % nr, nr, ["run", yaml, "--out", out, "--restart", ck] + base, out + ".log")
        if not ok:
            continue
        tr = {r["step"]: r for r in dc.read_csv(out + "/thermo.csv")}
        steps = [s for s in sorted(tr) if s > CK]
        bad = [s for s in steps if s not in t2 or (tr[s]["iterations"], tr[s]["contacts"]) != (t2[s]["iterations"], t2[s]["contacts"])]
        its = sum(t2[s]["iterations"] for s in steps if s in t2)
        if steps and not bad:
            dc.ok("mpi_cd_restart: restart on %d rank(s): iterations" % nr, "APGD iterations and contacts identical in the %d steps after the checkpoint (%d iterations)" % (len(steps), its))
        else:
            dc.not_ok("mpi_cd_restart: restart on %d rank(s): iterations" % nr, "differ at steps %s (%d of %d)" % (bad[:8], len(bad), len(steps)))
        br = mc.bodies(out + "/bodies_final.csv")
        dx = mc.max_pos_diff(b2, br, L, periodic) if sorted(br) == sorted(b2) else float("inf")
        dc.check("mpi_cd_restart: restart on %d rank(s): positions" % nr, dx / max(L), TOL, "max |dx| = %.3e m against the uninterrupted 2-rank run" % dx)
dc.finish()
