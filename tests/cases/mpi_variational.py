"""MPI: the variational integrator (003_9f0cdbfccae61a56.txt, section 2, Algorithm 1) on 1 and
on 2 ranks (issue 9 (3); src/integrators/variational.c, src/core/jacobian.c, src/core/decomp.c).

On 2 ranks the unknowns are the owned mobile bodies (6 per body, numbered by global id on each
rank and rank after rank), the Newton matrix M / h + alpha (1 - alpha) h K + C / 2 is a
MATMPIBAIJ (or MATMPISBAIJ) whose contact blocks between an owned body and a ghost are added
with global indices, and every residual / Jacobian evaluation first sends the owners' trial
state to the ghosts. CG with point Jacobi is invariant under the permutation of the unknowns,
so each Newton iterate is the serial one up to round-off; a step converges on 003 Algorithm
1's increment criterion, |delta| <= tol (|dq| + 1e-6 r_min) with tol = 1e-10, and the linear
solves reach rtol 1e-12. The bound used below, 1e-8, is thus far above the solver tolerance's
accumulation (tol |dq| per step, |dq| <= 3e-4 m, ~720 steps: 2e-11 m = 7e-10 of the box).

1. mpi_settle.yaml (400 beads falling onto a floor, periodic in x and y, Hertz-Mindlin with
   friction history) with gravity 40 m/s^2 (the beads land sooner), dt = tc / 10, 0.016 s
   (717 steps, contacts from about step 500 on, 44 at the end): alpha 1/2 with jacobian baij,
   alpha 0 with jacobian sbaij (the 1-rank and 2-rank runs take the same collective
   decisions: the Q^+_d re-evaluation of alpha 0), and alpha 1/2 with jacobian matrix_free
   (the shell's products exchange x and the result with the ghosts). Checked at 1e-8: positions (of the box),
   velocities (of the fastest body), energies (relative); contact counts, Newton iteration
   counts and rejected steps identical in every thermo row. That blocks between bodies of the
   two ranks were assembled: the 1-rank run's last contact frame (VTK, bodies a, b) has
   contacts whose bodies the 2-rank run's final cut planes put on different ranks.
2. Checkpoints: the alpha 1/2 run on 2 ranks writes step-600.ckpt (19 contacts, friction
   history); restarted on 1 rank it ends within 1e-8 (of the box) of the uninterrupted 2-rank
   run; the 1-rank run's step-600 checkpoint restarted on 2 ranks ends within 1e-8 of the
   uninterrupted 1-rank run.
3. Quasi-static mode (val_variational_qs.yaml: three spheres between a floor and a piston, TAO
   minimisation per load step; 003 section 1), the default grid cuts z between the spheres:
   the piston's and the floor's reactions (walls.csv) and the tracked positions agree with
   1 rank within 1e-8 relative at every load step (the minimiser stops at tol 1e-10 of the
   force scale); with jacobian baij and with matrix_free.
Run as `mpi_variational.py TMP PART...` with PART among baij, sbaij, matrix_free, restart (needs
baij), qs, qs_matrix_free (mpi_variational.sh: baij restart qs; mpi_variational2.sh: the others).
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
parts = sys.argv[2:]
yaml = os.path.join(here, "mpi_settle.yaml")
L, periodic, N = (0.02, 0.02, 0.03), (True, True, False), 400
TOL = 1e-8
END = 0.016
base = ["--quiet", "--set", "run.end_time=%g" % END, "--set", "output.vtk_every=0", "--set", "integrator.type=variational",
        "--set", "integrator.dt_fraction=0.1", "--set", "output.thermo_every=50", "--set", "gravity=[0, 0, -40]"]
variants = [
    ("variational baij alpha 0.5", ["--set", "output.checkpoint_every=600"]),
    ("variational sbaij alpha 0", ["--set", "integrator.jacobian=sbaij", "--set", "integrator.alpha=0"]),
    ("variational matrix_free alpha 0.5", ["--set", "integrator.jacobian=matrix_free"]),
]


dirs = {}
for name, sets in variants:
    if name.split()[1] not in parts:
        continue
    tag = name.replace(" ", "_")
    d1, d2 = "%s/%s_1" % (tmp, tag), "%s/%s_2" % (tmp, tag)
    vtk = ["--set", "output.vtk_every=%g" % END] if name == variants[0][0] else []  # the last contact frame
    ok1, _ = mc.run("mpi_variational %s: 1 rank" % name, 1, ["run", yaml, "--out", d1] + base + sets + vtk, d1 + ".log")
    ok2, log2 = mc.run("mpi_variational %s: 2 ranks" % name, 2, ["run", yaml, "--out", d2] + base + sets, d2 + ".log")
    if not (ok1 and ok2):
        continue
    dirs[name] = (d1, d2, sets)
    own, _, _ = mc.decomp_counts(log2)
    if not (len(own) == 2 and min(own) > 0 and sum(own) == N):
        dc.not_ok("mpi_variational %s: decomposed" % name, "owned per rank %s" % own)
        continue
    mc.compare("mpi_variational %s" % name, d1, d2, L, periodic, TOL, N)
    if vtk:
        mc.cross_rank_contacts("mpi_variational %s" % name, d1, d2 + "/bodies_final.csv", log2, L, N, END)
    b1, b2 = mc.bodies(d1 + "/bodies_final.csv"), mc.bodies(d2 + "/bodies_final.csv")
    vmax = max(abs(r["v" + c]) for r in b1.values() for c in "xyz")
    dv = max(abs(b1[k]["v" + c] - b2[k]["v" + c]) for k in b1 for c in "xyz")
    dc.check("mpi_variational %s: velocities 1 vs 2 ranks" % name, dv / vmax, TOL, "max |dv| = %.3e m/s, fastest body %.3f m/s" % (dv, vmax))
    t1, t2 = dc.read_csv(d1 + "/thermo.csv"), dc.read_csv(d2 + "/thermo.csv")
    it1 = [(r["iterations"], r["rejected"]) for r in t1]
    it2 = [(r["iterations"], r["rejected"]) for r in t2]
    if it1 == it2 and sum(i for i, _ in it1) > 0:
        dc.ok("mpi_variational %s: iterations" % name, "Newton iterations and rejected steps identical in all %d thermo rows (%d iterations in them)" % (len(t1), sum(i for i, _ in it1)))
    else:
        dc.not_ok("mpi_variational %s: iterations" % name, "differ (or none): %s vs %s" % (it1[-6:], it2[-6:]))

# 2. checkpoints across rank counts
name = variants[0][0]
if "restart" in parts and name in dirs:
    d1, d2, sets = dirs[name]
    for src, nr, ref, what in ((d2, 1, d2, "2-rank checkpoint restarted on 1 rank"), (d1, 2, d1, "1-rank checkpoint restarted on 2 ranks")):
        ck = src + "/checkpoints/step-600.ckpt"
        out = "%s/restart_%d" % (tmp, nr)
        if not os.path.exists(ck):
            dc.not_ok("mpi_variational: %s" % what, "no %s" % ck)
            continue
        shutil.copytree(src, out)
        ok, _ = mc.run("mpi_variational: %s runs" % what, nr, ["run", yaml, "--out", out, "--restart", ck] + base + sets, out + ".log")
        if not ok:
            continue
        br, bref = mc.bodies(out + "/bodies_final.csv"), mc.bodies(ref + "/bodies_final.csv")
        if sorted(br) != list(range(N)):
            dc.not_ok("mpi_variational: %s" % what, "%d ids" % len(br))
            continue
        dx = mc.max_pos_diff(bref, br, L, periodic)
        dc.check("mpi_variational: %s" % what, dx / max(L), TOL, "max |dx| = %.3e m against the uninterrupted run" % dx)

# 3. quasi-static mode
qy = os.path.join(here, "val_variational_qs.yaml")
for part, jac in (("qs", "baij"), ("qs_matrix_free", "matrix_free")):
    if part not in parts:
        continue
    q1, q2 = tmp + "/%s_1" % part, tmp + "/%s_2" % part
    qsets = ["--quiet", "--set", "integrator.jacobian=" + jac]
    ok1, _ = mc.run("mpi_variational quasi_static %s: 1 rank" % jac, 1, ["run", qy, "--out", q1] + qsets, q1 + ".log")
    ok2, log2 = mc.run("mpi_variational quasi_static %s: 2 ranks" % jac, 2, ["run", qy, "--out", q2] + qsets, q2 + ".log")
    if not (ok1 and ok2):
        continue
    own, _, _ = mc.decomp_counts(log2)
    if len(own) == 2 and min(own) > 0 and sum(own) == 3:
        dc.ok("mpi_variational quasi_static %s: decomposed" % jac, "owned per rank %s" % own)
    else:
        dc.not_ok("mpi_variational quasi_static %s: decomposed" % jac, "owned per rank %s" % own)
    w1, w2 = dc.read_csv(q1 + "/walls.csv"), dc.read_csv(q2 + "/walls.csv")
    fmax = max(abs(r["fz"]) for r in w1)
    if len(w1) != len(w2) or len(w1) < 20 or fmax <= 0:
        dc.not_ok("mpi_variational quasi_static %s: wall reactions" % jac, "%d rows on 1 rank, %d on 2 (largest |fz| %g)" % (len(w1), len(w2), fmax))
    else:
        de = max(abs(a[c] - b[c]) for a, b in zip(w1, w2) for c in ("fx", "fy", "fz")) / fmax
        dc.check("mpi_variational quasi_static %s: wall reactions 1 vs 2 ranks" % jac, de, TOL, "largest |df| relative to the largest reaction %.4f N over %d rows" % (fmax, len(w1)))
    k1, k2 = dc.read_csv(q1 + "/track.csv"), dc.read_csv(q2 + "/track.csv")
    if len(k1) != len(k2) or not k1:
        dc.not_ok("mpi_variational quasi_static %s: tracked positions" % jac, "%d rows on 1 rank, %d on 2" % (len(k1), len(k2)))
    else:
        dx = max(abs(a[c] - b[c]) for a, b in zip(k1, k2) for c in ("x", "y", "z"))
        dc.check("mpi_variational quasi_static %s: tracked positions 1 vs 2 ranks" % jac, dx / 0.0301, TOL, "max |dx| = %.3e m over %d rows" % (dx, len(k1)))
dc.finish()
