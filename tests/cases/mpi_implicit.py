"""MPI: the implicit integrators trapezoid and cd on 1 and on 2 ranks (issue 9 (2); src/core/decomp.c).

mpi_settle.yaml (400 beads falling onto a floor, periodic in x and y, Hertz-Mindlin with
friction history), 0.04 s (about 3100 steps, up to ~70 contacts), under each variant below on
1 rank and on 2 (default grid 2 x 1 x 1). On 2 ranks the ghosts receive the owners' iterate
before every force evaluation of an iteration (DemDecompForwardState_Private) and the ghosts'
forces go back to their owners, so each iteration sees the same state as on 1 rank.
  - trapezoid, sweep jacobi: every sweep evaluates all forces at the previous iterate, on any
    rank count the same iteration: agreement to round-off, checked at 1e-8 (positions relative
    to the box, energies relative, identical contact counts and iteration counts);
  - trapezoid, sweep gauss_seidel (the default): the colours are made per rank over its owned
    bodies (a pair across ranks is coupled Jacobi-wise: block Jacobi between ranks,
    Gauss-Seidel within), so the iterates differ and only the converged steps agree, within
    the fixed-point tolerance tol = 1e-4 (eq. (48)): velocities relative to the fastest body,
    energies relative, positions relative to the box, contact counts identical.
  - cd, solver apgd (the default), dt 1e-4 s, 0.05 s (500 steps, up to ~240 contacts): every
    contact is owned by the rank evaluating its pair; each APGD iteration applies
    N = dt B M^-1 B^T with M^-1 B^T f summed over the ranks (ghosts' parts to the owners and
    back) and takes its dot products and residual norms over all ranks, so the iteration is
    the serial one up to round-off; it stops at the LCP residual tol 1e-10 (relative to the
    force scale). Checked at 1e-8: positions (box), velocities (fastest body), energies,
    identical contact counts. Thermo every step: the APGD iteration counts are identical in
    every step, which needs the warm starts (the previous step's forces) to move with their
    pair when its lower-id body migrates to the other rank (cd.c, DemCDWarmMigrate; with the
    warm starts of such pairs reset, 3 of the 500 steps took other counts).
  - cd, solver pgs, same run: on 2 ranks a block-Jacobi + Gauss-Seidel hybrid (each rank
    sweeps its own contacts in order, the velocities recomputed from all ranks' forces between
    sweeps), so the iterates differ from the serial sweep and only the converged steps agree,
    within the LCP tolerance tol 1e-10. Its scale, measured: the serial PGS with natural and
    with reversed order differ by 1.2e-9 of the box in positions, 2.0e-9 relative in the
    energies and 3.5e-7 of the fastest body in velocities (1 vs 2 ranks: 2.3e-10, 1.0e-10,
    3.7e-8). Checked: positions and energies at 1e-8, velocities at 1e-6, contact counts
    identical.
Run as `mpi_implicit.py TMP [trapezoid] [cd] [pgs]` (mpi_implicit.sh: trapezoid, mpi_cd.sh: cd,
mpi_pgs.sh: pgs).
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_settle.yaml")
L, periodic, N = (0.02, 0.02, 0.03), (True, True, False), 400
base = ["--quiet", "--set", "run.end_time=0.04", "--set", "output.vtk_every=0"]  # variants may override
variants = [
    ("trapezoid jacobi", ["--set", "integrator.type=trapezoid", "--set", "integrator.sweep=jacobi"], 1e-8, True, None),
    ("trapezoid gauss_seidel", ["--set", "integrator.type=trapezoid"], 1e-4, False, None),
    ("cd apgd", ["--set", "integrator.type=cd", "--set", "integrator.dt=1.0e-4", "--set", "run.end_time=0.05", "--set", "output.thermo_every=1"], 1e-8, True, None),
    ("pgs cd hybrid", ["--set", "integrator.type=cd", "--set", "integrator.solver=pgs", "--set", "integrator.dt=1.0e-4", "--set", "run.end_time=0.05", "--set", "output.thermo_every=10"], 1e-8, False, 1e-6),
]
only = sys.argv[2:]  # names of the variants to run (their first word): all when none
for name, sets, tol, same_iters, vtol in variants:
    if only and name.split()[0] not in only:
        continue
    tag = name.replace(" ", "_")
    d1, d2 = "%s/%s_1" % (tmp, tag), "%s/%s_2" % (tmp, tag)
    ok1, _ = mc.run("mpi_implicit %s: 1 rank" % name, 1, ["run", yaml, "--out", d1] + base + sets, d1 + ".log")
    ok2, log2 = mc.run("mpi_implicit %s: 2 ranks" % name, 2, ["run", yaml, "--out", d2] + base + sets, d2 + ".log")
    if not (ok1 and ok2):
        continue
    own, _, _ = mc.decomp_counts(log2)
    if not (len(own) == 2 and min(own) > 0 and sum(own) == N):
        dc.not_ok("mpi_implicit %s: decomposed" % name, "owned per rank %s" % own)
        continue
    mc.compare("mpi_implicit %s" % name, d1, d2, L, periodic, tol, N)
    b1, b2 = mc.bodies(d1 + "/bodies_final.csv"), mc.bodies(d2 + "/bodies_final.csv")
    vmax = max(abs(r["v" + c]) for r in b1.values() for c in "xyz")
    dv = max(abs(b1[k]["v" + c] - b2[k]["v" + c]) for k in b1 for c in "xyz")
    dc.check("mpi_implicit %s: velocities 1 vs 2 ranks" % name, dv / vmax, vtol or tol, "max |dv| = %.3e m/s, fastest body %.3f m/s" % (dv, vmax))
    if same_iters:
        t1, t2 = dc.read_csv(d1 + "/thermo.csv"), dc.read_csv(d2 + "/thermo.csv")
        it1 = [(r["iterations"], r["rejected"]) for r in t1]
        it2 = [(r["iterations"], r["rejected"]) for r in t2]
        if it1 == it2:
            dc.ok("mpi_implicit %s: iterations" % name, "iterations and rejected steps identical in all %d thermo rows" % len(t1))
        else:
            dc.not_ok("mpi_implicit %s: iterations" % name, "differ: %s vs %s" % (it1[:8], it2[:8]))
dc.finish()
