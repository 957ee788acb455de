"""MPI with a mesh wall (issue 9 (4); src/core/decomp.c, src/search/featslot.c): the walls are
replicated on every rank, a sphere / mesh contact lives with the sphere's owner (the wall has
the higher id), and its tangential spring, kept in a feature slot (one per touching face, edge
or vertex), travels with the sphere when it migrates: at a rebuild the slots are taken out by
(gid sphere, gid wall, feature), routed with the sphere (DemDecompRoute) and put into the
feature map from which the new list's slots are made.

mpi_mesh.yaml: 400 beads (Hertz-Mindlin, friction 0.5) fall onto a Gmsh-meshed box floor in a
box periodic in x and y, all started with velocity (0.3, 0.1, 0) m/s so that they slide and
roll along the floor across the cut planes and the periodic faces (hundreds of migrations and
wraps while touching the floor), 0.06 s of verlet (4641 steps). 1 rank against 2 ranks (default
grid 2 x 1 x 1): the same ids, positions within 1e-8 of the box, energies within 1e-8
relative, contact counts identical in every thermo row, velocities within 1e-8 of the fastest
body, and both ranks moved beads across (migrations > 100, from MMDEM_DECOMP_VERBOSE).
Measured: positions 4.4e-12 of the box, energies 3.8e-10, velocities 1.0e-9. With the
feature histories not restored after a migration (a build of decomp.c without the put into
the feature map) the same comparison fails: positions 5.1e-2 of the box, energies 0.48,
velocities 0.76 of the fastest body, contact counts differing from step 2000 on (the friction
springs of the migrated beads restart from zero).
Checkpoint: the 2-rank run writes step-3000.ckpt with the feature slots gathered beside their
pairs (DemDecompSerialize_Private); restarted on 1 rank it ends within 1e-8 of the box of the
uninterrupted 2-rank run (measured 1.1e-12), with identical contact counts after the restart.
Restarted on 2 ranks it ends within 1e-8 of the box of the uninterrupted run too, with
identical contact counts: the distribution at the restart builds the list with twice the skin
and sets the positions of the last build back to the checkpoint's, so that the later rebuilds
(at which a contact passing to another mesh feature in the first step after it does not
inherit the spring: the slots go through the feature map) happen at the uninterrupted run's
steps, and the feature slots (also zeroed ones) and the feature map are made again as the
checkpoint has them (decomp.c DemDecompRestored_Private, featslot.c
DemNeighbourFeatureExport_Private / Import). Measured 5.5e-12 of the box; with the list's
build positions taken at the restart step instead: 6.3e-3 of the box, contact counts
differing from step 4000 on.
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
yaml = os.path.join(here, "mpi_mesh.yaml")
L, periodic, N, TOL = (0.02, 0.02, 0.03), (True, True, False), 400, 1e-8
sets = ["--quiet", "--set", "bodies.0.velocity=[0.3, 0.1, 0]", "--set", "run.end_time=0.06"]
d1, d2 = tmp + "/m1", tmp + "/m2"
ok1, _ = mc.run("mpi_mesh: 1 rank", 1, ["run", yaml, "--out", d1] + sets, d1 + ".log")
ok2, log2 = mc.run("mpi_mesh: 2 ranks", 2, ["run", yaml, "--out", d2] + sets + ["--set", "output.checkpoint_every=3000"], d2 + ".log")
if ok1 and ok2:
    own, mig, wraps = mc.decomp_counts(log2)
    if len(own) == 2 and min(own) > 0 and sum(own) == N and mig > 100:
        dc.ok("mpi_mesh: decomposed", "owned per rank at the start %s, %d migrations, %d periodic wraps" % (own, mig, wraps))
    else:
        dc.not_ok("mpi_mesh: decomposed", "owned per rank %s, %d migrations" % (own, mig))
    mc.compare("mpi_mesh", d1, d2, L, periodic, TOL, N)
    b1, b2 = mc.bodies(d1 + "/bodies_final.csv"), mc.bodies(d2 + "/bodies_final.csv")
    if sorted(b1) == sorted(b2):
        vmax = max(abs(r["v" + c]) for r in b1.values() for c in "xyz")
        dv = max(abs(b1[k]["v" + c] - b2[k]["v" + c]) for k in b1 for c in "xyz")
        dc.check("mpi_mesh: velocities 1 vs 2 ranks", dv / vmax, TOL, "max |dv| = %.3e m/s, fastest body %.3f m/s" % (dv, vmax))
    ck = d2 + "/checkpoints/step-3000.ckpt"
    if os.path.exists(ck):
        for nr in (1, 2):
            dr, what = tmp + "/mr%d" % nr, "2-rank checkpoint restarted on %d rank%s" % (nr, "s" if nr > 1 else "")
            shutil.copytree(d2, dr)
            okr, _ = mc.run("mpi_mesh: " + what, nr, ["run", yaml, "--out", dr, "--restart", ck] + sets + ["--set", "output.checkpoint_every=3000"], dr + ".log")
            if not okr:
                continue
            br = mc.bodies(dr + "/bodies_final.csv")
            dx = mc.max_pos_diff(b2, br, L, periodic) if sorted(br) == sorted(b2) else float("inf")
            dc.check("mpi_mesh: " + what, dx / max(L), TOL, "max |dx| = %.3e m against the uninterrupted 2-rank run" % dx)
            t2, tr = dc.read_csv(d2 + "/thermo.csv"), dc.read_csv(dr + "/thermo.csv")
            a2 = [r["contacts"] for r in t2 if r["step"] > 3000]
            ar = [r["contacts"] for r in tr if r["step"] > 3000]
            if a2 == ar and a2:
                dc.ok("mpi_mesh: restart on %d rank(s): contact counts" % nr, "identical in the %d thermo rows after the checkpoint (up to %d contacts)" % (len(a2), max(a2)))
            else:
                dc.not_ok("mpi_mesh: restart on %d rank(s): contact counts" % nr, "%s vs %s" % (a2[:6], ar[:6]))
    else:
        dc.not_ok("mpi_mesh: 2-rank checkpoint restarted on 1 rank", "no %s" % ck)
dc.finish()
