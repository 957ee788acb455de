"""cd with `compatible: true` on 1 and 2 MPI ranks (issue 9; src/integrators/cd_compat_mpi.c):
the compatibility post-solve of 004_66a055dbe6238b20.txt (Olsen & Kamrin) section 7,
Algorithm 1 step 2, gathered on rank 0 on a decomposed run.

Case: the cannonball pyramid of 004 section 8.2 (tests/cases/cd_pyramid.py's geometry and
DEM reference), EDGE = 5 spheres per base edge, base fixed, dropped together and run to rest
with dt = 1e-3 s. Two laws: hooke2 (two species, pair stiffnesses 1/5, 1/3, 1 of the stiff
pair's: k~ of 004 eq. (35) is normalized over both ranks' contacts) and hertz (p = 5/2 of
004 eq. (34), derived from the law on every rank and agreed).

Checks, per law:
  - the run splits: both ranks own bodies (MMDEM_DECOMP_VERBOSE);
  - the floor reactions (sum of the compatible contact forces on each fixed base sphere) on
    2 ranks agree with 1 rank to 10x the solver tolerance: the velocities (hence F~ of 004
    eq. (37)) are those of the LCP solved to `tol` 1e-10, and the post-solve's optimum
    004 eq. (36) is unique (strictly convex for p > 1), so the two differ by the solvers'
    tolerances only. With tol 1e-13 and compatible_tol 1e-12 (hooke2) they agree to 1e-12;
  - contact counts identical at every thermo row; positions within 1e-9 of a radius;
  - the compatibility condition holds on both: the floor reactions agree with the penalty-DEM
    reference (verlet, the same law, at rest: its forces are compatible by construction) to
    1e-4 (004 Table 1), and the post-solve's equilibrium residual B^T f_c - F~ reported by
    -cd_view is below 1e-8 of the force scale on both.
  - a checkpoint written on 2 ranks at step 20 (the compatibility displacements live on
    rank 0, every rank's warm starts gathered) restarts on 1 rank and ends at the
    uninterrupted 2-rank reactions within 10x the tolerance.
Usage: mpi_cd_compat.py TMPDIR
"""
import math
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import cd_pyramid as cp
import mpi_common as mc
import demcheck as dc

EDGE = 5
R = cp.R


def cd_run(name, nranks, yaml, out, sets=(), extra=()):
    args = ["run", yaml, "--out", out, "--quiet", "-cd_view"] + list(extra)
    for k, v in sets:
        args += ["--set", "%s=%s" % (k, v)]
    ok, text = mc.run(name, nranks, args, out + ".log")
    return text if ok else None


def eqres(text):
    m = re.search(r"max equilibrium residual ([0-9.eE+-]+)", text or "")
    return float(m.group(1)) if m else float("nan")


def case(tmp, law):
    tag = "mpi cd compatible %s" % law
    d = os.path.join(tmp, law)
    os.makedirs(d, exist_ok=True)
    t_end = 0.03 + 0.004 * EDGE
    integ = "integrator: {type: cd, dt: 1.0e-3, compatible: true}\nrun: {end_time: %g}" % t_end
    yaml, nb, nm = cp.write_case(d, EDGE, law, integ, 0.05)
    # the DEM reference (one rank), as in cd_pyramid.py
    dd = os.path.join(d, "dem")
    os.makedirs(dd, exist_ok=True)
    if law == "hertz":
        dem = "integrator: {type: verlet, dt: 1.0e-6}\nrun: {end_time: %g}" % (0.004 + 0.0013 * EDGE)
    else:
        dem = "integrator: {type: verlet, dt: 1.0e-7}\nrun: {end_time: %g}" % (0.002 + 0.0002 * EDGE)
    dyaml = cp.write_case(dd, EDGE, law, dem, 0.0)[0]
    if not cp.mmdem(tag + ": DEM reference", dyaml, os.path.join(dd, "out")):
        return
    Fdem = cp.reactions(os.path.join(dd, "out"), nb)
    rows = [("output.thermo_every", "5")]
    o1, o2 = os.path.join(d, "r1"), os.path.join(d, "r2")
    l1 = cd_run(tag + ": 1 rank", 1, yaml, o1, rows)
    l2 = cd_run(tag + ": 2 ranks", 2, yaml, o2, rows + [("output.checkpoint_every", "20")])
    if l1 is None or l2 is None:
        return
    own = mc.decomp_counts(l2)[0]
    if len(own) == 2 and min(own) > 0:
        dc.ok(tag + ": the run splits", "owned bodies per rank at the start %s" % own)
    else:
        dc.not_ok(tag + ": the run splits", "owned per rank %s" % own)
    F1, F2 = cp.reactions(o1, nb), cp.reactions(o2, nb)
    dc.check(tag + ": floor reactions 2 vs 1 rank, ||F2 - F1|| / ||F1||", cp.rel(F2, F1), 1e-9,
             "solver tolerances tol 1e-10, compatible_tol 1e-10; %d base spheres" % nb)
    t1, t2 = dc.read_csv(o1 + "/thermo.csv"), dc.read_csv(o2 + "/thermo.csv")
    bad = [int(a["step"]) for a, b in zip(t1, t2) if a["contacts"] != b["contacts"]]
    if len(t1) == len(t2) and len(t1) > 5 and not bad:
        dc.ok(tag + ": contact counts 1 vs 2 ranks", "identical in all %d thermo rows (%d at the end)" % (len(t1), int(t1[-1]["contacts"])))
    else:
        dc.not_ok(tag + ": contact counts 1 vs 2 ranks", "rows %d vs %d, differ at steps %s" % (len(t1), len(t2), bad[:10]))
    b1, b2 = mc.bodies(o1 + "/bodies_final.csv"), mc.bodies(o2 + "/bodies_final.csv")
    dx = mc.max_pos_diff(b1, b2, [1, 1, 1], [False] * 3) if sorted(b1) == sorted(b2) else float("inf")
    dc.check(tag + ": positions 2 vs 1 rank / r", dx / R, 1e-9, "%d bodies" % len(b1))
    for n, F, text in (("1 rank", F1, l1), ("2 ranks", F2, l2)):
        dc.check(tag + ": compatible CD on %s vs DEM floor reactions (004 Table 1)" % n, cp.rel(F, Fdem), 1e-4)
        dc.check(tag + ": equilibrium residual of the post-solve on %s (-cd_view)" % n, eqres(text), 1e-8)
    if law != "hooke2":
        return
    # tighter solver tolerances: the agreement follows them
    tight = [("integrator.tol", "1e-13"), ("integrator.compatible_tol", "1e-12")]
    o3, o4 = os.path.join(d, "t1"), os.path.join(d, "t2")
    if cd_run(tag + ": tight, 1 rank", 1, yaml, o3, tight) is not None and cd_run(tag + ": tight, 2 ranks", 2, yaml, o4, tight) is not None:
        dc.check(tag + ": floor reactions 2 vs 1 rank at tol 1e-13, compatible_tol 1e-12", cp.rel(cp.reactions(o4, nb), cp.reactions(o3, nb)), 1e-12)
    # restart on 1 rank from the 2-rank checkpoint of step 20
    o5 = os.path.join(d, "rs")
    ck = os.path.join(o2, "checkpoints", "step-20.ckpt")
    if cd_run(tag + ": restart 2 -> 1 rank", 1, yaml, o5, rows, ["--restart", ck]) is not None:
        dc.check(tag + ": restart on 1 rank from the 2-rank checkpoint of step 20, reactions vs uninterrupted 2 ranks",
                 cp.rel(cp.reactions(o5, nb), F2), 1e-9)


def main():
    tmp = sys.argv[1]
    case(tmp, "hooke2")
    case(tmp, "hertz")
    dc.finish()


if __name__ == "__main__":
    main()
