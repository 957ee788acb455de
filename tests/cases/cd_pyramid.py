"""Cannonball pyramid of 004_66a055dbe6238b20.txt section 8.2-8.3: compatible contact
dynamics against a penalty-DEM reference, through the floor-reaction distribution.

A square-based pyramid of close-packed spheres (diameter 2.5 mm, density 2000 kg/m^3,
frictionless), EDGE spheres along the base edge, base layer fixed. Layer k (k = 0 the base)
holds (EDGE-k)^2 spheres at x = (2i+k) r, y = (2j+k) r, z = r + k sqrt(2) r: every sphere
sits in the pocket of four below and touches its four neighbours in the layer (12 neighbours
inside: indeterminate, 004 section 8.2).

  CD runs (integrator cd, dt = 1e-3 s as in 004 8.2): the layers start separated vertically
  by 5 % of a radius (004 8.2) and are dropped together; run until at rest. Solvers APGD and
  PGS without compatibility, and APGD + the compatibility post-solve (004 Algorithm 1).
  DEM reference (integrator verlet, mmdem's own penalty DEM): the same law (hooke: kn, or
  hertz_mindlin: E, nu) stiff enough that overlaps are ~1e-7 of a radius, damping near
  critical (004 8.2: gamma = 2 sqrt(k m), e_n = 0), dt well below the collision time, started
  from the touching lattice (the frictionless elastic static solution is unique, so the start
  only changes how long it takes to come to rest), run until at rest.
  Measure (004 section 8.3, Table 1): F = the reaction forces (3 components) on the fixed base
  spheres (bodies_final.csv f of a fixed body = the sum of the contact forces on it), and
  err = ||F_CD - F_DEM|| / ||F_DEM||.

Usage (from the case scripts): cd_pyramid.py TMPDIR EDGE LAW [TOL_COMPAT [MIN_INDET]]
  LAW: hooke | hertz | hooke2 (two species, E1/E0 = 5, even body ids E0, odd E1: hooke kn
  of the pairs 1/5, 1/3, 1 of the stiff pair's, the series rule E* of 004 8.2.2).
  Checks: err(compatible) < TOL_COMPAT; err(APGD), err(PGS) > MIN_INDET (the indeterminacy
  of classic CD; omitted when MIN_INDET is not given); both runs at rest (kinetic energy <
  1e-12 of N m g r) and DEM floor reaction = weight of the mobile spheres within 1e-9.
"""
import math
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

R, RHO, G = 1.25e-3, 2000.0, 9.81
M = RHO * 4.0 / 3.0 * math.pi * R ** 3


def lattice(edge, lift):
    """(x, y, z) per layer; lift: extra vertical separation per layer, in radii"""
    layers = []
    h = math.sqrt(2.0) * R
    for k in range(edge):
        pts = []
        for j in range(edge - k):
            for i in range(edge - k):
                pts.append(((2 * i + k) * R, (2 * j + k) * R, R + k * (h + lift * R)))
        layers.append(pts)
    return layers


def write_case(d, edge, law, integ, lift):
    """writes base.csv, mobile.csv and case.yaml into d; returns the yaml path"""
    layers = lattice(edge, lift)
    base, mob = layers[0], [p for l in layers[1:] for p in l]
    nb = len(base)
    two = law == "hooke2"
    # body sets in id order (ids run over the base, then the mobile layers), one set per run
    # of equal (fixed, material); two species: material by the parity of the body id
    runs = []
    for idx, p in enumerate(base + mob):
        key = (idx < nb, ("m%d" % (idx % 2)) if two else "glass")
        if runs and runs[-1][0] == key:
            runs[-1][1].append(p)
        else:
            runs.append((key, [p]))
    sets = []
    for s, (key, pts) in enumerate(runs):
        name = "set%d.csv" % s
        with open(os.path.join(d, name), "w") as fp:
            fp.write("x,y,z\n")
            for p in pts:
                fp.write("%.17g,%.17g,%.17g\n" % p)
        sets.append("  - {shape: ball, material: %s, fixed: %s, file: %s}" % (key[1], "true" if key[0] else "false", name))
    kn = 1.0e7                              # N/m: overlap ~1e-7 r under the heaviest contact
    gam = 2.0 * math.sqrt(2.0 * kn / M)     # critical for two equal free spheres (m_eff = m/2)
    if law == "hooke":
        mats = "  glass: {density: %g, youngs_modulus: 5.0e10, poisson_ratio: 0.25, restitution: 0.5}" % RHO
        contact = "  - {pair: default, law: hooke, params: {kn: %g, gamma_n: %.10g}}" % (kn, gam)
    elif law == "hooke2":
        mats = ("  m0: {density: %g, youngs_modulus: 1.0e10}\n"
                "  m1: {density: %g, youngs_modulus: 5.0e10}") % (RHO, RHO)
        # series stiffness E_a E_b / (E_a + E_b): m0-m0 1/5, m0-m1 1/3, m1-m1 1 (004 8.2.2)
        contact = "\n".join("  - {pair: [%s, %s], law: hooke, params: {kn: %.10g, gamma_n: %.10g}}"
                            % (a, b, kn * f, 2.0 * math.sqrt(2.0 * kn * f / M))
                            for a, b, f in (("m0", "m0", 0.2), ("m0", "m1", 1.0 / 3.0), ("m1", "m1", 1.0)))
    else:
        mats = "  glass: {density: %g, youngs_modulus: 5.0e10, poisson_ratio: 0.25, restitution: 0.02}" % RHO
        contact = "  - {pair: default, law: hertz_mindlin}"
    span = 2 * edge * R
    text = "\n".join([
        "name: pyramid",
        "domain: {lo: [%g, %g, 0], hi: [%g, %g, %g]}" % (-2 * R, -2 * R, span, span, (edge + 1) * 2 * R),
        "gravity: [0, 0, -9.81]",
        "materials:", mats,
        "contact:", contact,
        "shapes:", "  ball: {type: sphere, radius: %.17g}" % R,
        "bodies:"] + sets + [integ, "output: {thermo_every: 100}", ""])
    path = os.path.join(d, "case.yaml")
    with open(path, "w") as fp:
        fp.write(text)
    return path, nb, len(mob)


def mmdem(name, yaml, outdir, sets=(), extra=()):
    """runs mmdem like demcheck.run, with extra arguments and without its 600 s limit (the
    full-size pyramid takes longer on a shared machine)"""
    cmd = [dc.MMDEM, "run", yaml, "--out", outdir, "--quiet"] + list(extra)
    for k, v in sets:
        cmd += ["--set", "%s=%s" % (k, v)]
    with open(outdir.rstrip("/") + ".log", "w") as fp:
        try:
            rc = subprocess.call(cmd, stdout=fp, stderr=subprocess.STDOUT)
        except OSError as e:
            dc.not_ok(name, "cannot run %s: %s" % (dc.MMDEM, e))
            return False
    if rc != 0:
        with open(outdir.rstrip("/") + ".log") as fp:
            tail = " | ".join(l.strip() for l in fp.readlines()[-6:])
        dc.not_ok(name, "mmdem run exited with status %d: %s" % (rc, tail))
        return False
    return True


def reactions(out, nb):
    rows = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    rows.sort(key=lambda r: r["id"])
    F = []
    for r in rows[:nb]:
        F += [r["fx"], r["fy"], r["fz"]]
    return F


def rel(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / math.sqrt(sum(y * y for y in b))


def run_case(tmp, tag, edge, law, integ, lift, sets=()):
    d = os.path.join(tmp, tag)
    os.makedirs(d, exist_ok=True)
    yaml, nb, nm = write_case(d, edge, law, integ, lift)
    out = os.path.join(d, "out")
    t0 = time.time()
    ok = mmdem("pyramid %s %s" % (law, tag), yaml, out, sets=sets)
    wall = time.time() - t0
    if not ok:
        return None
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    ke = th[-1]["ke_trans"] + th[-1]["ke_rot"]
    return {"F": reactions(out, nb), "ke": ke, "nb": nb, "nm": nm, "wall": wall, "thermo": th, "out": out}


def main():
    edge, law = int(sys.argv[2]), sys.argv[3]
    tmp = os.path.join(sys.argv[1], "%s-%d" % (law, edge))
    tolc = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
    mind = float(sys.argv[5]) if len(sys.argv) > 5 else None
    tag = "pyramid %d/edge %s" % (edge, law)
    t_end_cd = 0.03 + 0.004 * edge
    cd = "integrator: {type: cd, dt: 1.0e-3}\nrun: {end_time: %g}" % t_end_cd
    if law == "hertz":
        # Hertz is soft at small overlaps: contact stiffness 3/2 k delta^(1/2) ~ 2e5 N/m under
        # the base of the 20-edge pyramid (omega dt ~ 0.2 at dt = 1e-6 s), slow to come to rest
        dem = "integrator: {type: verlet, dt: 1.0e-6}\nrun: {end_time: %g}" % (0.004 + 0.0013 * edge)
    else:
        dem = "integrator: {type: verlet, dt: 1.0e-7}\nrun: {end_time: %g}" % (0.002 + 0.0002 * edge)
    ref = run_case(tmp, "dem", edge, law, dem, 0.0)
    runs = {}
    for name, sets in (("compatible", [("integrator.compatible", "true")]),
                       ("apgd", [("integrator.solver", "apgd")]),
                       ("pgs", [("integrator.solver", "pgs")])):
        if mind is None and name != "compatible":
            continue
        runs[name] = run_case(tmp, name, edge, law, cd, 0.05, sets)
    if ref is None:
        dc.finish()
    W = ref["nm"] * M * G
    scale = ref["nm"] * M * G * R
    dc.check(tag + ": DEM reference at rest, kinetic energy / (N m g r)", ref["ke"] / scale, 1e-12,
             "%d steps in %.1f s" % (int(ref["thermo"][-1]["step"]), ref["wall"]))
    fz = sum(ref["F"][2::3])
    dc.check(tag + ": DEM floor reaction = weight of the mobile spheres", abs(-fz - W) / W, 1e-9,
             "sum fz = %.12g N, W = %.12g N" % (fz, W))
    for name, r in runs.items():
        if r is None:
            continue
        dc.check(tag + ": CD %s at rest, kinetic energy / (N m g r)" % name, r["ke"] / scale, 1e-12,
                 "%.1f s wall" % r["wall"])
        err = rel(r["F"], ref["F"])
        errz = rel(r["F"][2::3], ref["F"][2::3])
        if name == "compatible":
            dc.check(tag + ": compatible CD vs DEM floor reactions, ||F_CD - F_DEM|| / ||F_DEM|| (004 Table 1)",
                     err, tolc, "%d base spheres; vertical components only: %.3e" % (ref["nb"], errz))
        else:
            detail = "error %.3e, vertical components only %.3e (must exceed %.2g: classic CD is indeterminate, 004 Table 1)" % (err, errz, mind)
            if err > mind:
                dc.ok(tag + ": classic CD (%s) floor reactions differ from DEM" % name, detail)
            else:
                dc.not_ok(tag + ": classic CD (%s) floor reactions differ from DEM" % name, detail)
    if edge <= 5 and runs.get("compatible"):
        # checkpoint/restart: the integrator's state (warm-start forces, compatibility
        # displacements, random order) travels in the checkpoint; a run restarted at step 20
        # ends bitwise like the uninterrupted one
        d = os.path.join(tmp, "restart")
        os.makedirs(d, exist_ok=True)
        yaml = write_case(d, edge, law, cd, 0.05)[0]
        sets = [("integrator.compatible", "true"), ("integrator.solver", "pgs"), ("integrator.order", "random"),
                ("output.checkpoint_every", "20")]
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        if mmdem(tag + " restart (uninterrupted)", yaml, a, sets=sets):
            ck = os.path.join(a, "checkpoints", "step-20.ckpt")
            if mmdem(tag + " restart", yaml, b, sets=sets, extra=["--restart", ck]):
                same = open(os.path.join(a, "bodies_final.csv")).read() == open(os.path.join(b, "bodies_final.csv")).read()
                if same:
                    dc.ok(tag + ": restart from step 20 ends bitwise like the uninterrupted run (compatible, PGS random order)")
                else:
                    dc.not_ok(tag + ": restart from step 20 ends bitwise like the uninterrupted run", "bodies_final.csv differs")
    dc.finish()


if __name__ == "__main__":
    main()
