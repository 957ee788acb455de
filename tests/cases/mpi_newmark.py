"""MPI: the newmark integrator (000_c57329b1a40312e0.txt, sections 2.1-2.6) on 1 and on 2 ranks
(issue 9 (1); src/integrators/newmark.c, newmark_mpi.c, src/core/jacobian.c, decomp.c).

On 2 ranks the unknowns (u, alpha of 000 eq. (59)) are the owned mobile bodies, numbered in
global-id order rank after rank; the Jacobian is a MATMPIBAIJ whose contact blocks between an
owned body and a ghost are added with global indices; every residual / Jacobian evaluation
first sends the owners' trial state (x, v, w, q, u, alpha) to the ghosts; SNES and KSP run on
the communicator (GMRES with block Jacobi / ILU(0) instead of the serial ILU(0), so the linear
iterates differ, the Newton iterates agree to the KSP tolerance); newmark's state between
steps (acc, wdot, M of 000 eq. (20)-(22)) travels with its body in a per-body field; the
step-control decisions (the list's reach, SNES divergence, the rotation and penetration tests
of 000 section 2.4.7, the night-owl re-search of section 2.6.3) are taken collectively.
Newton stops at SNES rtol 1e-8 / atol 1e-12 r_min m_min / (beta h^2) (a residual that moves
no body by more than ~1e-12 r_min), so the bound 1e-8 used below is far above the solver
tolerance's accumulation over the run (360 steps x 1e-12 r_min = 4e-13 m, 1e-11 of the box).

1. mpi_settle.yaml (400 beads falling onto a floor, periodic in x and y, Hertz-Mindlin with
   friction history), gravity 40 m/s^2, dt = 0.2 tc, 0.016 s (360 steps, contacts from step
   ~180 on, 45 at the end): positions (of the box), energies (relative) within 1e-8; contact
   counts, Newton iterations, rejected steps and dt cuts identical in every thermo row;
   contacts between bodies that the 2-rank run's final cut planes put on different ranks (the
   1-rank run's last contact frame). The onset transform (newmark.c DemNmOnsetScale, on by
   default; the direction's ghost rows forwarded to each rank) took out the two SNES
   divergences that cut dt here (when written: 357 steps, 628 Newton iterations, no cut), so
   the same pair runs again with `onset_transform: false`, whose first contacts cut dt, and
   the step control must agree there with at least one rejected step.
2. Checkpoints at step 300 (20 contacts with friction history): the 2-rank checkpoint
   restarted on 1 rank, the 1-rank checkpoint restarted on 2 ranks, each within 1e-8 of the
   box of the uninterrupted run that wrote the checkpoint (newmark's accelerations and its
   contacts at i are written in the serial layout from every rank's bodies and pairs).
3. Night owls (val_newmark_nightowl.yaml with the domain's x extent chosen so that the cut
   plane falls between spheres 1 and 2): the night-owl contact 1-2 joins bodies of two ranks;
   the re-search at the converged positions migrates bodies, the iterate is rebuilt in the new
   layout. Night-owl counts and contact counts identical, tracked positions and velocities
   within 1e-8 (relative to the largest).
4. Penetration cuts (000 section 2.4.7; test_newmark.c's two spheres meeting at 3 m/s with
   dt = 1e-2 s, one on each rank): the test fails on the rank that evaluates the contact and
   every rank cuts dt with the same message; the same cuts, thermo rows and tracked states
   (within 1e-12 m, m/s; measured bitwise).
Run as `mpi_newmark.py TMP`.
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
L, periodic, N = (0.02, 0.02, 0.03), (True, True, False), 400
TOL = 1e-8
END = 0.016
base = ["--quiet", "--set", "run.end_time=%g" % END, "--set", "output.vtk_every=0", "--set", "integrator.type=newmark",
        "--set", "integrator.dt_fraction=0.2", "--set", "output.thermo_every=20", "--set", "gravity=[0, 0, -40]",
        "--set", "output.checkpoint_every=300"]


def step_control(name, d1, d2, cuts):
    """Newton iterations, rejected steps, dt cuts and dt identical in every thermo row of the
    1- and 2-rank runs (with cuts: at least one rejected step)"""
    t1, t2 = dc.read_csv(d1 + "/thermo.csv"), dc.read_csv(d2 + "/thermo.csv")
    cols = ("iterations", "rejected", "dt_cuts_snes", "dt_cuts_penetration", "night_owls", "newton_total", "dt")
    k1 = [tuple(r[c] for c in cols) for r in t1]
    k2 = [tuple(r[c] for c in cols) for r in t2]
    if k1 == k2 and (t1[-1]["rejected"] > 0 or not cuts) and t1[-1]["newton_total"] > 0:
        dc.ok(name, "Newton iterations, rejected steps, dt cuts and dt identical in all %d thermo rows (%d Newton iterations, %d rejected steps)" % (len(t1), t1[-1]["newton_total"], t1[-1]["rejected"]))
    else:
        dc.not_ok(name, "differ%s: %s vs %s" % (" (or no rejected step)" if cuts else "", k1[-3:], k2[-3:]))


# 1. settling on 1 and 2 ranks
d1, d2 = tmp + "/settle_1", tmp + "/settle_2"
ok1, _ = mc.run("mpi_newmark: 1 rank", 1, ["run", yaml, "--out", d1] + base + ["--set", "output.vtk_every=%g" % END], d1 + ".log")
ok2, log2 = mc.run("mpi_newmark: 2 ranks", 2, ["run", yaml, "--out", d2] + base, d2 + ".log")
if ok1 and ok2:
    own, mig, _ = mc.decomp_counts(log2)
    if len(own) == 2 and min(own) > 0 and sum(own) == N and mig > 0:
        dc.ok("mpi_newmark: decomposed", "owned per rank %s, %d bodies migrated" % (own, mig))
    else:
        dc.not_ok("mpi_newmark: decomposed", "owned per rank %s, %d migrated" % (own, mig))
    mc.compare("mpi_newmark", d1, d2, L, periodic, TOL, N)
    mc.cross_rank_contacts("mpi_newmark", d1, d1 + "/bodies_final.csv", log2, L, N, END)
    # 1b. the same without the onset transform, whose first contacts cut dt (SNES stalls)
    e1, e2 = tmp + "/settle_off_1", tmp + "/settle_off_2"
    off = ["--set", "integrator.onset_transform=false", "--set", "output.checkpoint_every=0"]
    if mc.run("mpi_newmark: 1 rank, onset_transform false", 1, ["run", yaml, "--out", e1] + base + off, e1 + ".log")[0] and \
       mc.run("mpi_newmark: 2 ranks, onset_transform false", 2, ["run", yaml, "--out", e2] + base + off, e2 + ".log")[0]:
        step_control("mpi_newmark: step control with dt cuts (onset_transform false)", e1, e2, True)
    step_control("mpi_newmark: step control", d1, d2, False)

    # 2. checkpoints across rank counts
    for src, nr, ref, what in ((d2, 1, d2, "2-rank checkpoint restarted on 1 rank"), (d1, 2, d1, "1-rank checkpoint restarted on 2 ranks")):
        ck = src + "/checkpoints/step-300.ckpt"
        out = "%s/restart_%d" % (tmp, nr)
        if not os.path.exists(ck):
            dc.not_ok("mpi_newmark: %s" % what, "no %s" % ck)
            continue
        shutil.copytree(src, out)
        ok, _ = mc.run("mpi_newmark: %s runs" % what, nr, ["run", yaml, "--out", out, "--restart", ck] + base, out + ".log")
        if not ok:
            continue
        br, bref = mc.bodies(out + "/bodies_final.csv"), mc.bodies(ref + "/bodies_final.csv")
        if sorted(br) != list(range(N)):
            dc.not_ok("mpi_newmark: %s" % what, "%d ids" % len(br))
            continue
        dx = mc.max_pos_diff(bref, br, L, periodic)
        dc.check("mpi_newmark: %s" % what, dx / max(L), TOL, "max |dx| = %.3e m against the uninterrupted %d-rank run" % (dx, 3 - nr))

# 3. night owls across the rank boundary
ny = os.path.join(here, "val_newmark_nightowl.yaml")
n1, n2 = tmp + "/owl_1", tmp + "/owl_2"
nsets = ["--set", "domain.hi=[0.0162, 0.01, 0.01]"]  # default cut at x = 0.0031: spheres 0, 1 | 2
ok1, _ = mc.run("mpi_newmark night owls: 1 rank", 1, ["run", ny, "--out", n1] + nsets, n1 + ".log")
ok2, log2 = mc.run("mpi_newmark night owls: 2 ranks", 2, ["run", ny, "--out", n2] + nsets, n2 + ".log")
if ok1 and ok2:
    own, mig, _ = mc.decomp_counts(log2)
    t1, t2 = dc.read_csv(n1 + "/thermo.csv"), dc.read_csv(n2 + "/thermo.csv")
    o1 = [(r["night_owls"], r["contacts"], r["iterations"]) for r in t1]
    o2 = [(r["night_owls"], r["contacts"], r["iterations"]) for r in t2]
    if own == [2, 1] and o1 == o2 and t1[-1]["night_owls"] >= 1:
        dc.ok("mpi_newmark night owls: counts", "owned %s; night owls, contacts, iterations identical in all %d rows (%d night owl(s))" % (own, len(t1), t1[-1]["night_owls"]))
    else:
        dc.not_ok("mpi_newmark night owls: counts", "owned %s; %s vs %s" % (own, o1, o2))
    k1, k2 = dc.read_csv(n1 + "/track.csv"), dc.read_csv(n2 + "/track.csv")
    if len(k1) != len(k2) or len(k1) < 9:
        dc.not_ok("mpi_newmark night owls: tracked bodies", "%d rows on 1 rank, %d on 2" % (len(k1), len(k2)))
    else:
        xs = max(abs(r[c]) for r in k1 for c in ("x", "y", "z"))
        vs = max(abs(r[c]) for r in k1 for c in ("vx", "vy", "vz"))
        dx = max(abs(a[c] - b[c]) for a, b in zip(k1, k2) for c in ("x", "y", "z"))
        dv = max(abs(a[c] - b[c]) for a, b in zip(k1, k2) for c in ("vx", "vy", "vz"))
        dc.check("mpi_newmark night owls: tracked positions 1 vs 2 ranks", dx / xs, TOL, "max |dx| = %.3e m over %d rows" % (dx, len(k1)))
        dc.check("mpi_newmark night owls: tracked velocities 1 vs 2 ranks", dv / vs, TOL, "max |dv| = %.3e m/s over %d rows" % (dv, len(k1)))

# 4. penetration cuts decided on the rank that evaluates the contact (rank 0: the pair's
#    lower-id body), agreed by every rank (DemDecompAgree_Private)
PEN = """name: pen
domain: {lo: [-1, -1, -1], hi: [1, 1, 1]}
gravity: [0, 0, 0]
materials:
  g: {density: 1000}
contact:
  - {pair: default, law: hooke, params: {kn: 10.0, gamma_n: 0, gamma_t: 0, mu: 0}}
shapes:
  b: {type: sphere, radius: 0.01}
bodies:
  - {shape: b, material: g, list: [{x: [-0.00999, 0, 0], v: [1.5, 0, 0]}, {x: [0.00999, 0, 0], v: [-1.5, 0, 0]}]}
search: {skin: 0.1}
integrator: {type: newmark, dt: 1.0e-2, dt_max: 1.0e-2}
run: {steps: 10}
output: {thermo_every: 1, track: [0, 1]}
"""
py = tmp + "/pen.yaml"
with open(py, "w") as fp:
    fp.write(PEN)
p1, p2 = tmp + "/pen_1", tmp + "/pen_2"
ok1, log1 = mc.run("mpi_newmark penetration: 1 rank", 1, ["run", py, "--out", p1], p1 + ".log")
ok2, log2 = mc.run("mpi_newmark penetration: 2 ranks", 2, ["run", py, "--out", p2], p2 + ".log")
if ok1 and ok2:
    own, _, _ = mc.decomp_counts(log2)
    t1, t2 = dc.read_csv(p1 + "/thermo.csv"), dc.read_csv(p2 + "/thermo.csv")
    cols = ("step", "dt", "contacts", "rejected", "dt_cuts_penetration")
    k1, k2 = [tuple(r[c] for c in cols) for r in t1], [tuple(r[c] for c in cols) for r in t2]
    # the cut messages (a progress line of a slow run may share their line: from "newmark:" on)
    cuts1 = [l[l.index("newmark: step"):] for l in log1.splitlines() if "dt cut" in l and "newmark: step" in l]
    cuts2 = [l[l.index("newmark: step"):] for l in log2.splitlines() if "dt cut" in l and "newmark: step" in l]
    if own == [1, 1] and k1 == k2 and t1[-1]["dt_cuts_penetration"] >= 3 and cuts1 == cuts2:
        dc.ok("mpi_newmark penetration: cuts", "one sphere per rank; the same %d penetration cuts (the same messages, printed once) and thermo rows" % t1[-1]["dt_cuts_penetration"])
    else:
        dc.not_ok("mpi_newmark penetration: cuts", "owned %s; %s vs %s; %d vs %d cut lines" % (own, k1[-2:], k2[-2:], len(cuts1), len(cuts2)))
    a1, a2 = dc.read_csv(p1 + "/track.csv"), dc.read_csv(p2 + "/track.csv")
    dx = max(abs(a[c] - b[c]) for a, b in zip(a1, a2) for c in ("x", "vx")) if len(a1) == len(a2) and a1 else float("inf")
    dc.check("mpi_newmark penetration: tracked x, vx 1 vs 2 ranks", dx, 1e-12, "over %d rows (0.01 m spheres at 1.5 m/s)" % len(a1))
dc.finish()
