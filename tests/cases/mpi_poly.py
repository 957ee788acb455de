"""MPI with polyhedra (issue 9 (2); src/core/decomp.c, src/shapes/polyhedron*.c): a ghost
polyhedron is its body record (position, orientation, shape index, radius: the contact kernels
carry its surface to the world frame from them at every evaluation), the pointwise contacts of a
pair (one per pair of sub-regions, 000 section 2.4.3) keep their history in feature slots,
which travel with the pair's lower-id body at a migration like a mesh wall's (barrier_hybrid's
elastic tangential spring, 000 eq. (52)-(55)); the feature-level Verlet lists are caches,
dropped at every rebuild. thermo.csv's contacts_bb and contacts_bw are summed over the ranks.

mpi_poly.yaml: three 1 m cubes falling onto each other and the ground on both sides of the cut
plane x = 0, and a fourth cube landing at 2 m/s and sliding with friction across x = 0 (it
migrates while its four corner contacts with the ground hold their springs), 0.25 s of verlet
(5000 steps), search.skin 0.1 m (rebuilds every 5 cm of motion: two migrations, the slider's
after it crossed the cut). 1 rank against 2 ranks (default grid 2 x 1 x 1): the same ids, positions within
1e-8 of the box, energies within 1e-8 relative and identical contact counts (also the
body-body and body-wall counts) in every thermo row, the slider crossed the cut plane, bodies
migrated. Measured: positions 1.4e-15 m, energies 6.4e-10 relative (ke_rot of 1e-5 J).
The same case with newmark (dt 2e-4 s, adaptive): positions within 1e-8 of the box (measured
3.5e-12 m), dt, contact counts, Newton iterations and rejected steps identical in every row,
energies within 1e-8 of the largest e_total (ke_rot, ~1e-5 J, differs by 4e-6 of itself: the
Newton tolerance).
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_poly.yaml")
L, periodic, N, TOL = (6.0, 6.0, 4.5), (False, False, False), 4, 1e-8
d1, d2 = tmp + "/p1", tmp + "/p2"
ok1, _ = mc.run("mpi_poly: 1 rank", 1, ["run", yaml, "--out", d1, "--quiet"], d1 + ".log")
ok2, log2 = mc.run("mpi_poly: 2 ranks", 2, ["run", yaml, "--out", d2, "--quiet"], d2 + ".log")
if ok1 and ok2:
    own, mig, _ = mc.decomp_counts(log2)
    if len(own) == 2 and min(own) > 0 and sum(own) == N and mig > 0:
        dc.ok("mpi_poly: decomposed", "owned per rank at the start %s, %d migrations" % (own, mig))
    else:
        dc.not_ok("mpi_poly: decomposed", "owned per rank %s, %d migrations" % (own, mig))
    mc.compare("mpi_poly", d1, d2, L, periodic, TOL, N)
    t1, t2 = dc.read_csv(d1 + "/thermo.csv"), dc.read_csv(d2 + "/thermo.csv")
    c1 = [(r["contacts_bb"], r["contacts_bw"]) for r in t1]
    c2 = [(r["contacts_bb"], r["contacts_bw"]) for r in t2]
    if c1 == c2 and max(b for b, _ in c1) > 0 and max(w for _, w in c1) > 0:
        dc.ok("mpi_poly: body-body and body-wall contacts", "identical in all %d rows (up to %d and %d)" % (len(t1), max(b for b, _ in c1), max(w for _, w in c1)))
    else:
        dc.not_ok("mpi_poly: body-body and body-wall contacts", "%s vs %s" % (c1[-3:], c2[-3:]))
    k1 = dc.read_csv(d1 + "/track.csv")
    if k1 and k1[0]["x"] < 0 < k1[-1]["x"] and abs(k1[-1]["z"] - 0.51) < 0.005:
        dc.ok("mpi_poly: the slider crossed the cut plane on the ground", "x from %.3f to %.3f m, z %.4f m at the end" % (k1[0]["x"], k1[-1]["x"], k1[-1]["z"]))
    else:
        dc.not_ok("mpi_poly: the slider crossed the cut plane on the ground", "x %s -> %s" % (k1[0]["x"] if k1 else None, k1[-1]["x"] if k1 else None))

# newmark (000 sections 2.1-2.6) on the same case, dt 2e-4 s (adaptive: five steps cut by the
# impacts): the Newton iterates agree to the solver tolerance
n1, n2 = tmp + "/n1", tmp + "/n2"
nsets = ["--quiet", "--set", "integrator.type=newmark", "--set", "integrator.dt=2.0e-4"]
ok1, _ = mc.run("mpi_poly newmark: 1 rank", 1, ["run", yaml, "--out", n1] + nsets, n1 + ".log")
ok2, _ = mc.run("mpi_poly newmark: 2 ranks", 2, ["run", yaml, "--out", n2] + nsets, n2 + ".log")
if ok1 and ok2:
    b1, b2 = mc.bodies(n1 + "/bodies_final.csv"), mc.bodies(n2 + "/bodies_final.csv")
    if sorted(b1) == sorted(b2) == list(range(N)):
        dx = mc.max_pos_diff(b1, b2, L, periodic)
        dc.check("mpi_poly newmark: positions 1 vs 2 ranks", dx / max(L), TOL, "max |dx| = %.3e m" % dx)
    else:
        dc.not_ok("mpi_poly newmark: ids", "%d and %d ids" % (len(b1), len(b2)))
    t1, t2 = dc.read_csv(n1 + "/thermo.csv"), dc.read_csv(n2 + "/thermo.csv")
    cols = ("step", "dt", "contacts", "contacts_bb", "contacts_bw", "iterations", "rejected")
    k1, k2 = [tuple(r[c] for c in cols) for r in t1], [tuple(r[c] for c in cols) for r in t2]
    if k1 == k2 and t1[-1]["rejected"] > 0 and max(r["contacts_bb"] for r in t1) > 0:
        dc.ok("mpi_poly newmark: step control and contacts", "dt, contact counts, Newton iterations, rejected steps identical in all %d rows (%d rejected)" % (len(t1), t1[-1]["rejected"]))
    else:
        dc.not_ok("mpi_poly newmark: step control and contacts", "%s vs %s" % (k1[-3:], k2[-3:]))
    # energies against the system's energy scale (ke_rot is ~1e-5 J of ~6e4 J: relative to
    # itself it shows the Newton tolerance, 4e-6)
    scale = max(abs(r["e_total"]) for r in t1)
    de = max(abs(a[c] - b[c]) for a, b in zip(t1, t2) for c in ("ke_trans", "ke_rot", "pe_contact", "dissipated", "e_balance")) / scale
    dc.check("mpi_poly newmark: energies 1 vs 2 ranks", de, TOL, "largest difference of ke, pe_contact, dissipated, e_balance over %d rows / max e_total %.4g J" % (len(t1), scale))
dc.finish()
