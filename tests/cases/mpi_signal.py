"""A 2-rank verlet run stopped by SIGTERM at step 1550 (between the thermo rows of steps 1500
and 1600: MMDEM_DEBUG_SIGNAL_STEP raises it on every rank after that step) writes a checkpoint
and exits; restarted from it on 2 ranks, it continues to the uninterrupted 2-rank run's result
(issue 9; src/core/guard.c, decomp.c).

On several ranks verlet skips the sums over the ranks at steps whose energies, counts and wall
reactions nothing reads, and each rank books its own share of the dissipation until the next
step that is read (sim->dissip_pending); the failure test and the signal are agreed in one
reduction at the end of each step. A checkpoint written at a signal between thermo rows must
hold the dissipation summed over the ranks: without that sum the restarted run's `dissipated`
column lacks the 50 steps' share (about 1e-3 of it here), far above the 1e-8 checked.

mpi_settle.yaml: 400 beads settling, periodic x, y, Hertz-Mindlin with friction history,
thermo every 100 steps. Checks: the interrupted run exits non-zero naming step 1550 and its
checkpoint; the restart ends at the same step with positions within 1e-8 of the box size of
the uninterrupted run's; thermo rows after step 1550 have identical contact counts and
energies (kinetic, contact, dissipated, balance) within 1e-8 relative.
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
L = (0.02, 0.02, 0.03)
S = 1550
sets = ["--quiet", "--set", "run.end_time=0.05", "--set", "output.vtk_every=-1"]
ok2, _ = mc.run("mpi_signal: 2 ranks, uninterrupted", 2, ["run", yaml, "--out", tmp + "/a"] + sets, tmp + "/a.log")
if not ok2:
    dc.finish()
cmd = ["mpirun", "--allow-run-as-root", "-n", "2", dc.MMDEM, "run", yaml, "--out", tmp + "/b"] + sets
env = dict(mc.ENV, MMDEM_DEBUG_SIGNAL_STEP=str(S))
with open(tmp + "/b.log", "w") as fp:
    rc = subprocess.call(cmd, stdout=fp, stderr=subprocess.STDOUT, timeout=600, env=env)
text = open(tmp + "/b.log").read()
ck = tmp + "/b/checkpoints/step-%d.ckpt" % S
if rc != 0 and ("interrupted by SIGTERM at step %d" % S) in text and os.path.exists(ck):
    dc.ok("mpi_signal: SIGTERM at step %d on 2 ranks" % S, "exit %d, checkpoint written" % rc)
else:
    dc.not_ok("mpi_signal: SIGTERM at step %d on 2 ranks" % S, "exit %d, checkpoint %s: %s" % (rc, os.path.exists(ck), " | ".join(text.strip().splitlines()[-4:])))
    dc.finish()
okr, _ = mc.run("mpi_signal: restart on 2 ranks", 2, ["run", yaml, "--out", tmp + "/b", "--restart", ck] + sets, tmp + "/r.log")
if not okr:
    dc.finish()
ba, bb = mc.bodies(tmp + "/a/bodies_final.csv"), mc.bodies(tmp + "/b/bodies_final.csv")
dx = mc.max_pos_diff(ba, bb, L, (True, True, False))
dc.check("mpi_signal: restarted vs uninterrupted positions", dx / max(L), 1e-8, "max |dx| = %.3e m" % dx)
ta, tb = dc.read_csv(tmp + "/a/thermo.csv"), dc.read_csv(tmp + "/b/thermo.csv")
after = [r for r in ta if r["step"] > S]
afb = [r for r in tb if r["step"] > S]
de, bad = mc.thermo_diff(after, afb)
if [r["step"] for r in after] == [r["step"] for r in afb] and not bad and len(after) > 5:
    dc.ok("mpi_signal: thermo after the restart", "%d rows, contact counts identical" % len(after))
else:
    dc.not_ok("mpi_signal: thermo after the restart", "steps %s vs %s, contacts differ at %s" % ([r["step"] for r in after][:5], [r["step"] for r in afb][:5], bad[:5]))
dc.check("mpi_signal: energies after the restart (dissipated included)", de, 1e-8)
dc.finish()
