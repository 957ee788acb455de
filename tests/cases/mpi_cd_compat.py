"""cd with `compatible: true` on 1 and 2 MPI ranks (issue 9; src/integrators/cd_compat_mpi.c):
the compatibility post-solve of 004_66a055dbe6238b20.txt (Olsen & Kamrin) section 7,
Algorithm 1 step 2, the truss problem 004 eq. (36) distributed over the ranks (rows: the
owned bodies' DOF, columns: the rank's contacts; TAOALMM and the Newton polish on the
communicator).

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
  - contact counts identical at every step; positions within 1e-9 of a radius;
  - no rank holds the whole problem: the -cd_view lines of the 2-rank run give each rank's
    rows (owned bodies' DOF) and contacts of the last solve; each is > 0 and < the total, and
    they add up to the totals;
  - equilibrium B^T f_c = F~ (004 eq. (36)-(37)) on each rank's bodies: the rank's own
    residual from -cd_view < 1e-8, and independently from the output: at the last step the
    force on a mobile body (track.csv: F_ext + B^T f_c) against m (v_n - v_(n-1)) / dt
    (= F_ext + F~, track.csv's last two rows), over the bodies each rank owns at the end
    (its VTK piece), < 1e-8 of a sphere's weight;
  - the compatibility condition holds on both: the floor reactions agree with the penalty-DEM
    reference (verlet, the same law, at rest: its forces are compatible by construction) to
    1e-4 (004 Table 1), and the post-solve's equilibrium residual B^T f_c - F~ reported by
    -cd_view is below 1e-8 of the force scale on both.
  - a checkpoint written on 2 ranks at step 20 (every rank's compatibility displacements and
    warm starts gathered into it) restarts on 1 rank and ends at the uninterrupted 2-rank
    reactions within 10x the tolerance (hooke2), and one written on 1 rank restarts on 2
    ranks and ends at the uninterrupted 1-rank reactions (hooke2);
  - (hooke2) the former path, -cd_compat_gather (the problem gathered on rank 0), agrees with
    the distributed one within 10x the tolerance, and its -cd_view lines show rank 0 holding
    every row: the size check above tells the two apart; the polish's direct fallback
    (-cd_compat_polish_ksp_max_it 1 makes CG fail: MUMPS' parallel Cholesky) agrees too;
  - the chain case (chain() below): an analytic reaction, and the loaded-cluster flag that
    must cross the ranks.
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


def rank_lines(text):
    """[(rank, rows, total rows, contacts, total contacts, residual, rounds)] of -cd_view on
    several ranks (rounds: of the loaded-cluster flags' exchange, -1 if not printed)"""
    pat = (r"cd: compatibility post-solve on rank (\d+): last solve (\d+) of (\d+) rows, (\d+) of (\d+) "
           r"contacts on this rank; max equilibrium residual on its bodies ([0-9.eE+-]+)"
           r"(?:; loaded-cluster rounds max (\d+))?")
    return sorted((int(m[0]), int(m[1]), int(m[2]), int(m[3]), int(m[4]), float(m[5]), int(m[6] or -1))
                  for m in re.findall(pat, text or ""))


def split_ok(lines):
    """every rank holds a part of the last solve's rows and contacts, none all of them"""
    if len(lines) != 2:
        return False
    M, N = lines[0][2], lines[0][4]
    return (all(0 < l[1] < l[2] == M and 0 < l[3] < l[4] == N for l in lines)
            and sum(l[1] for l in lines) == M and sum(l[3] for l in lines) == N)


def owned_at_end(out, nranks):
    """{rank: body ids} of the last VTK frame's pieces"""
    import glob
    import vtk
    last = sorted(glob.glob(os.path.join(out, "vtk", "bodies_*_0.vtp")))[-1][:-len("_0.vtp")]
    own = {}
    for r in range(nranks):
        rd = vtk.vtkXMLPolyDataReader()
        rd.SetFileName("%s_%d.vtp" % (last, r))
        rd.Update()
        a = rd.GetOutput().GetPointData().GetArray("id")
        own[r] = [int(a.GetTuple1(i)) for i in range(a.GetNumberOfTuples())]
    return own


def rank_equilibrium(out, nb, dt):
    """{rank: max over its mobile bodies of |f_n - m (v_n - v_(n-1)) / dt| / (m g)}"""
    rows = dc.read_csv(os.path.join(out, "track.csv"))
    steps = sorted({int(r["step"]) for r in rows})
    n1, n0 = steps[-1], steps[-2]
    at = {(int(r["step"]), int(r["id"])): r for r in rows}
    res = {}
    for rk, ids in owned_at_end(out, 2).items():
        worst = 0.0
        for i in ids:
            if i < nb:
                continue
            a, b = at[(n1, i)], at[(n0, i)]
            for c in "xyz":
                worst = max(worst, abs(a["f" + c] - cp.M * (a["v" + c] - b["v" + c]) / dt) / (cp.M * cp.G))
        res[rk] = (worst, len([i for i in ids if i >= nb]), n1 - n0)
    return res


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
    # every step a thermo row and the mobile spheres' track rows; VTK: first and last frame
    with open(yaml) as fp:
        text = fp.read()
    tyaml = os.path.join(d, "track.yaml")
    with open(tyaml, "w") as fp:
        fp.write(text.replace("output: {thermo_every: 100}", "output: {thermo_every: 1, vtk_every: 0, track: [%s]}"
                              % ", ".join(str(i) for i in range(nb, nb + nm))))
    rows = [("output.checkpoint_every", "20")]
    o1, o2 = os.path.join(d, "r1"), os.path.join(d, "r2")
    l1 = cd_run(tag + ": 1 rank", 1, tyaml, o1, rows)
    l2 = cd_run(tag + ": 2 ranks", 2, tyaml, o2, rows)
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
    lines = rank_lines(l2)
    if split_ok(lines):
        dc.ok(tag + ": no rank holds the whole problem", "last solve, rows / contacts per rank %s of %d / %d"
              % ([(l[1], l[3]) for l in lines], lines[0][2], lines[0][4]))
    else:
        dc.not_ok(tag + ": no rank holds the whole problem", "-cd_view rank lines %s" % lines)
    if len(lines) == 2:
        dc.check(tag + ": equilibrium residual on each rank's bodies (-cd_view, largest of the ranks)",
                 max(l[5] for l in lines), 1e-8, "per rank %s" % [l[5] for l in lines])
    else:
        dc.not_ok(tag + ": equilibrium residual on each rank's bodies (-cd_view)", "rank lines %s" % lines)
    try:
        req = rank_equilibrium(o2, nb, 1.0e-3)
    except (OSError, IndexError, KeyError) as e:
        dc.not_ok(tag + ": B^T f_c = F~ on each rank's bodies from the output", "cannot read: %s" % e)
    else:
        good = len(req) == 2 and all(v[1] > 0 and v[2] == 1 for v in req.values())
        worst = max(v[0] for v in req.values()) if good else float("inf")
        dc.check(tag + ": B^T f_c = F~ on each rank's bodies from the output, |f - m dv/dt| / (m g) at the last step",
                 worst, 1e-8, "per rank (residual, mobile bodies owned) %s" % {r: ("%.3g" % v[0], v[1]) for r, v in req.items()})
    if law != "hooke2":
        return
    # the gathered path for comparison: same forces, rank 0 holds every row
    o6 = os.path.join(d, "g2")
    l6 = cd_run(tag + ": 2 ranks, -cd_compat_gather", 2, yaml, o6, (), ["-cd_compat_gather"])
    if l6 is not None:
        g = rank_lines(l6)
        dc.check(tag + ": floor reactions 2 ranks distributed vs gathered on rank 0", cp.rel(F2, cp.reactions(o6, nb)), 1e-9)
        if len(g) == 2 and g[0][1] == g[0][2] and g[0][3] == g[0][4] and not split_ok(g):
            dc.ok(tag + ": the size check detects the gathered path", "rank 0 holds %d of %d rows" % (g[0][1], g[0][2]))
        else:
            dc.not_ok(tag + ": the size check detects the gathered path", "rank lines %s" % g)
    # the polish's direct fallback across the ranks (MUMPS Cholesky when PETSc has it): CG
    # limited to one iteration fails at every Newton step
    o8 = os.path.join(d, "fb2")
    if cd_run(tag + ": 2 ranks, direct fallback", 2, yaml, o8, (), ["-cd_compat_polish_ksp_max_it", "1"]) is not None:
        dc.check(tag + ": floor reactions 2 ranks, the polish's direct fallback vs CG", cp.rel(cp.reactions(o8, nb), F2), 1e-9)
    # tighter solver tolerances: the agreement follows them
    tight = [("integrator.tol", "1e-13"), ("integrator.compatible_tol", "1e-12")]
    o3, o4 = os.path.join(d, "t1"), os.path.join(d, "t2")
    if cd_run(tag + ": tight, 1 rank", 1, yaml, o3, tight) is not None and cd_run(tag + ": tight, 2 ranks", 2, yaml, o4, tight) is not None:
        dc.check(tag + ": floor reactions 2 vs 1 rank at tol 1e-13, compatible_tol 1e-12", cp.rel(cp.reactions(o4, nb), cp.reactions(o3, nb)), 1e-12)
    # restart on 1 rank from the 2-rank checkpoint of step 20, and on 2 from the 1-rank one
    o5 = os.path.join(d, "rs")
    ck = os.path.join(o2, "checkpoints", "step-20.ckpt")
    if cd_run(tag + ": restart 2 -> 1 rank", 1, yaml, o5, (), ["--restart", ck]) is not None:
        dc.check(tag + ": restart on 1 rank from the 2-rank checkpoint of step 20, reactions vs uninterrupted 2 ranks",
                 cp.rel(cp.reactions(o5, nb), F2), 1e-9)
    o7 = os.path.join(d, "rs2")
    ck = os.path.join(o1, "checkpoints", "step-20.ckpt")
    if cd_run(tag + ": restart 1 -> 2 ranks", 2, yaml, o7, (), ["--restart", ck]) is not None:
        dc.check(tag + ": restart on 2 ranks from the 1-rank checkpoint of step 20, reactions vs uninterrupted 1 rank",
                 cp.rel(cp.reactions(o7, nb), F1), 1e-9)


CHAIN_N, CHAIN_R, CHAIN_F = 12, 1.0e-3, 1.0


def chain(tmp):
    """a straight chain of CHAIN_N touching spheres along x without gravity, the last one
    fixed, a force CHAIN_F along +x on the first: statically determinate, so every contact
    carries CHAIN_F and the fixed sphere's reaction is (CHAIN_F, 0, 0) (equilibrium of each
    sphere). On 2 ranks (cut across x) the mobile spheres of the right half have F~ = 0: their
    cluster is loaded only through the left rank's spheres, so the flag has to cross the ranks
    (cd_compat_mpi.c); without it their contacts would be left out and the reaction be 0."""
    tag = "mpi cd compatible chain"
    d = os.path.join(tmp, "chain")
    os.makedirs(d, exist_ok=True)
    r, n = CHAIN_R, CHAIN_N
    pts = ", ".join("{x: [%.17g, 0, 0]}" % (2 * r * i) for i in range(n - 1))
    text = "\n".join([
        "name: chain",
        "domain: {lo: [%g, %g, %g], hi: [%g, %g, %g]}" % (-2 * r, -4 * r, -4 * r, 2 * r * n, 4 * r, 4 * r),
        "gravity: [0, 0, 0]",
        "materials:", "  glass: {density: 2000, youngs_modulus: 5.0e10}",
        "contact:", "  - {pair: default, law: hooke, params: {kn: 1.0e7}}",
        "shapes:", "  ball: {type: sphere, radius: %g}" % r,
        "bodies:",
        "  - {shape: ball, material: glass, list: [%s]}" % pts,
        "  - {shape: ball, material: glass, fixed: true, list: [{x: [%.17g, 0, 0]}]}" % (2 * r * (n - 1)),
        "loads:", "  - {bodies: [0], force: [%g, 0, 0]}" % CHAIN_F,
        "integrator: {type: cd, dt: 1.0e-3, compatible: true}",
        "run: {end_time: 0.005}",
        "output: {thermo_every: 1}", ""])
    yaml = os.path.join(d, "chain.yaml")
    with open(yaml, "w") as fp:
        fp.write(text)
    F = {}
    for nr in (1, 2):
        out = os.path.join(d, "r%d" % nr)
        log = cd_run(tag + ": %d rank(s)" % nr, nr, yaml, out)
        if log is None:
            return
        b = {int(x["id"]): x for x in dc.read_csv(os.path.join(out, "bodies_final.csv"))}
        F[nr] = (b[n - 1]["fx"], b[n - 1]["fy"], b[n - 1]["fz"])
        free = max(abs(b[i]["f" + c]) for i in range(n - 1) for c in "xyz")
        dc.check(tag + ": reaction of the fixed sphere on %d rank(s) vs the load, |F - (F0, 0, 0)| / F0" % nr,
                 math.sqrt((F[nr][0] - CHAIN_F) ** 2 + F[nr][1] ** 2 + F[nr][2] ** 2) / CHAIN_F, 1e-8)
        dc.check(tag + ": net force on the mobile spheres on %d rank(s) / F0 (equilibrium)" % nr, free / CHAIN_F, 1e-8)
        if nr == 2:
            own = mc.decomp_counts(log)[0]
            lines = rank_lines(log)
            if len(own) == 2 and min(own) > 0 and split_ok(lines) and max(l[6] for l in lines) >= 2:
                dc.ok(tag + ": the chain splits and the loaded flag crosses the ranks",
                      "owned %s, rows / contacts per rank %s, flag rounds %s" % (own, [(l[1], l[3]) for l in lines], [l[6] for l in lines]))
            else:
                dc.not_ok(tag + ": the chain splits and the loaded flag crosses the ranks", "owned %s, rank lines %s" % (own, lines))


def main():
    tmp = sys.argv[1]
    case(tmp, "hooke2")
    case(tmp, "hertz")
    chain(tmp)
    dc.finish()


if __name__ == "__main__":
    main()
