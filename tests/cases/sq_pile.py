"""A pile of 24 superquadrics (two shapes, one of them also scaled by a body radius) and 6
spheres settling in a box of five planes (sq_pile.yaml), then the configuration errors of the
superquadric shape.

Checked against numbers computed here:
  - every contact solve converged (thermo column sq_failures = 0 at every line; the shape's
    end-of-run line reports 0 not converged);
  - equilibrium at the end: the vertical reactions of the walls (walls.csv), averaged over the
    last 0.2 s, add up to the weight of the bodies within 1 % (without rolling resistance the
    spheres and the rounded pills never quite stop rolling and rattling, and the reactions
    fluctuate by a few per cent: they are sampled every 100 steps, 401 lines, whose mean is
    within ~0.1 % of W; sampled every 1000 steps, 41 lines, the mean wandered by ~1 % with
    round-off changes of the trajectory), W from the volumes of the beta-function
    formulas (Jaklic et al.) written out again here, the scale s = radius / r_bound of eq. (11)
    for the scaled set, and 4/3 pi r^3 for the spheres;
  - no superquadric through a wall: each body's surface, sampled on its parametric form
    (independent of the shape function) at its final pose, lies inside the box up to 1 % of
    its shortest half-axis (the Hertz overlaps here are ~0.3 %);
  - VTK: the last vtk/bodies_surf_NNNNNN.vtp (read with VTK, tests/tools/vtk_read.py) holds the
    24 superquadrics only (cell data id), (2 + (2m - 1) 4m) points and 8m (2m - 1) triangles
    each (tessellation m = 4), and every point lies on its body's surface: f(x) = 0 within
    1e-9 at the pose of bodies_final.csv; bodies_surf.pvd lists every frame; a run with
    spheres only writes no bodies_surf file;
  - the colliders' pair prefilter changes nothing but the work: it passed over pairs in the
    pile, and the same run with it off (MMDEM_SQ_PREFILTER=off) gives bitwise the same
    bodies_final.csv and thermo.csv (but wall_s);
  - bad input: blockiness below 2, non-positive half-axes, an unknown curvature model and an
    unknown key are refused by `mmdem check` with a message naming the key and the range.
"""
import glob
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "sq_pile.yaml")
py = os.environ.get("PY", "/usr/bin/python3")
vtkread = os.path.join(here, "..", "tools", "vtk_read.py")
rho, g, L, m_tess = 2500.0, 9.81, 0.03, 4
shapes = {"box": (0.003, 0.0025, 0.002, 6.0, 6.0), "pill": (0.0035, 0.002, 0.002, 2.0, 4.0)}
# the bodies of the YAML in id order: (shape, radius or None)
sets = [("box", None)] * 12 + [("pill", 0.0033)] * 6 + [("pill", None)] * 6 + [("bead", 0.002)] * 6


def beta(x, y):
    return math.exp(math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y))


def volume(a, b, c, n1, n2):
    e1, e2 = 2 / n1, 2 / n2
    return 2 * a * b * c * e1 * e2 * beta(e1 / 2 + 1, e1) * beta(e2 / 2, e2 / 2)


def r2d(a, b, n):
    """largest distance from the centre of |x/a|^n + |y/b|^n = 1, found by sampling"""
    best = 0.0
    for i in range(20001):
        t = i / 20000 * math.pi / 2
        best = max(best, math.hypot(a * math.cos(t) ** (2 / n), b * math.sin(t) ** (2 / n)))
    return best


def rbound(a, b, c, n1, n2):
    return r2d(r2d(a, b, n2), c, n1)


def spow(t, e):
    return math.copysign(abs(t) ** e, t)


def surface_points(a, b, c, n1, n2, ne=60, no=120):
    e1, e2 = 2 / n1, 2 / n2
    for i in range(ne + 1):
        eta = -math.pi / 2 + i * math.pi / ne
        ce, se = spow(math.cos(eta), e1), spow(math.sin(eta), e1)
        for j in range(no):
            om = 2 * math.pi * j / no
            yield (a * ce * spow(math.cos(om), e2), b * ce * spow(math.sin(om), e2), c * se)


def rot(q):
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


rb = {k: rbound(*v) for k, v in shapes.items()}
scale = [(r / rb[s] if r else 1.0) if s != "bead" else None for s, r in sets]
W = rho * g * (sum(volume(*shapes[s]) * scale[i] ** 3 for i, (s, r) in enumerate(sets) if s != "bead")
               + 6 * 4.0 / 3.0 * math.pi * 0.002 ** 3)
out = os.path.join(tmp, "pile")
tag = "superquadric pile"
log = os.path.join(tmp, "pile.log")
if dc.run(tag, yaml, out, log=log):
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    fails = max(r.get("sq_failures", float("nan")) for r in th)
    dc.check(tag + ": every contact solve converged (thermo sq_failures)", fails, 0, "")
    text = open(log).read()
    lines = [l for l in text.splitlines() if l.startswith("superquadric ")]
    dc.check(tag + ": end-of-run lines of both superquadric shapes report 0 not converged",
             0 if len(lines) == 2 and all(" 0 not converged" in l for l in lines) else 1, 0, " | ".join(lines)[:300])
    walls = dc.read_csv(os.path.join(out, "walls.csv"))
    tend = walls[-1]["time"]
    steps = sorted(set(r["step"] for r in walls if r["time"] >= tend - 0.2 - 1e-9))
    fz = sum(r["fz"] for r in walls if r["step"] in steps) / len(steps)
    dc.check(tag + ": wall reactions carry the weight over the last 0.2 s, |mean sum fz + W| / W", abs(fz + W) / W, 1e-2,
             "W = %.6g N, mean sum fz = %.6g N over %d lines" % (W, fz, len(steps)))
    final = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    worst, nsq = 0.0, 0
    for i, (s, r) in enumerate(sets):
        if s == "bead":
            continue
        b = final[i]
        a_, b_, c_, n1, n2 = shapes[s]
        sc = scale[i]
        R = rot([b["qw"], b["qx"], b["qy"], b["qz"]])
        lo, hi = [1e9] * 3, [-1e9] * 3
        for p in surface_points(a_, b_, c_, n1, n2, 40, 80):
            X = [b[k] + sc * sum(R[d][j] * p[j] for j in range(3)) for d, k in enumerate(("x", "y", "z"))]
            lo = [min(lo[d], X[d]) for d in range(3)]
            hi = [max(hi[d], X[d]) for d in range(3)]
        out_of_box = max(-lo[0], -lo[1], -lo[2], hi[0] - L, hi[1] - L) / (sc * min(a_, b_, c_))
        worst = max(worst, out_of_box)
        nsq += 1
    dc.check(tag + ": no superquadric through a wall, max penetration / shortest half-axis (%d bodies)" % nsq, max(worst, 0.0), 0.01, "")
    # VTK surfaces of the last frame
    frames = sorted(glob.glob(os.path.join(out, "vtk", "bodies_surf_*.vtp")))
    npf, ntf = 2 + (2 * m_tess - 1) * 4 * m_tess, 8 * m_tess * (2 * m_tess - 1)
    if not frames:
        dc.not_ok(tag + ": VTK bodies_surf files", "none in %s" % os.path.join(out, "vtk"))
    else:
        res = subprocess.run([py, vtkread, frames[-1]], capture_output=True, text=True)
        d = {}
        for line in res.stdout.splitlines():
            t = line.split()
            if t and t[0] in ("points", "polys"):
                d[t[0]] = int(t[1])
            elif t and t[0] == "xyz":
                d["xyz"] = [float(v) for v in t[2:]]
            elif len(t) > 5 and t[0] == "celldata" and t[1] == "id":
                d["id"] = [int(v) for v in t[5:]]
        ok_counts = d.get("points") == 24 * npf and d.get("polys") == 24 * ntf and sorted(set(d.get("id", []))) == list(range(24))
        dc.check(tag + ": VTK surfaces: 24 superquadrics (no spheres), %d points and %d triangles each" % (npf, ntf),
                 0 if ok_counts else 1, 0, "points %s, polys %s, ids %s" % (d.get("points"), d.get("polys"), sorted(set(d.get("id", [])))[:30]))
        fmax = 0.0
        if ok_counts:
            xyz = d["xyz"]
            for k in range(24):
                s, r = sets[k]
                a_, b_, c_, n1, n2 = shapes[s]
                b = final[k]
                R = rot([b["qw"], b["qx"], b["qy"], b["qz"]])
                for p in range(k * npf, (k + 1) * npf):
                    X = [xyz[3 * p + j] - b[kk] for j, kk in enumerate(("x", "y", "z"))]
                    y = [sum(R[i][j] * X[i] for i in range(3)) / scale[k] for j in range(3)]
                    f = (abs(y[0] / a_) ** n2 + abs(y[1] / b_) ** n2) ** (n1 / n2) + abs(y[2] / c_) ** n1 - 1
                    fmax = max(fmax, abs(f))
        dc.check(tag + ": VTK surface points lie on the bodies (|f| at the final pose)", fmax if ok_counts else float("nan"), 1e-9, "")
        pvd = open(os.path.join(out, "vtk", "bodies_surf.pvd")).read()
        dc.check(tag + ": bodies_surf.pvd lists every frame", abs(pvd.count("<DataSet") - len(frames)), 0, "%d frames" % len(frames))
# the colliders' pair prefilter (superquadric_contact.c: pairs shown apart at the poses of the
# last list build by more than the bodies' motion bounds since are passed over) stands only for
# tests that would have rejected or skipped the pair: the same pile with it switched off
# (MMDEM_SQ_PREFILTER=off) must give bitwise the same bodies and thermo (but the wall clock)
if os.path.exists(os.path.join(out, "bodies_final.csv")):
    off = os.path.join(tmp, "pile_off")
    os.environ["MMDEM_SQ_PREFILTER"] = "off"
    ran = dc.run(tag + ", prefilter off", yaml, off, sets=[("output.vtk_every", "0")])
    del os.environ["MMDEM_SQ_PREFILTER"]
    pre = [int(l.rsplit(";", 1)[1].split()[0]) for l in open(log).read().splitlines() if l.startswith("superquadric ") and "passed over by the prefilter" in l]
    dc.check(tag + ": the prefilter passed over pairs in the pile (end-of-run lines)", 0 if len(pre) == 2 and sum(pre) > 0 else 1, 0, "%s pair checks" % pre)
    if ran:
        same = open(os.path.join(out, "bodies_final.csv")).read() == open(os.path.join(off, "bodies_final.csv")).read()
        dc.check(tag + ": bodies_final.csv bitwise the same with the prefilter off", 0 if same else 1, 0, "")
        th0, th1 = dc.read_csv(os.path.join(out, "thermo.csv")), dc.read_csv(os.path.join(off, "thermo.csv"))
        diff = sum(1 for r0, r1 in zip(th0, th1) for k in r0 if k != "wall_s" and r0[k] != r1.get(k)) + abs(len(th0) - len(th1))
        dc.check(tag + ": thermo.csv (but wall_s) the same with the prefilter off, differing values", diff, 0, "%d lines" % len(th0))
# spheres only: no surfaces
sph = os.path.join(tmp, "spheres.yaml")
with open(sph, "w") as f:
    f.write("""name: spheres
domain: {lo: [0, 0, 0], hi: [0.1, 0.1, 0.1]}
gravity: [0, 0, -9.81]
materials:
  glass: {density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25, restitution: 0.5, friction: 0.3}
contact:
  - {pair: default, law: hertz_mindlin}
shapes:
  bead: {type: sphere, radius: 0.005}
bodies:
  - {shape: bead, material: glass, list: [{x: [0.05, 0.05, 0.05]}]}
integrator: {type: verlet, dt: 1.0e-5}
run: {steps: 20}
output: {thermo_every: 10, vtk_every: 0}
""")
if dc.run("spheres only", sph, os.path.join(tmp, "sph")):
    n = len(glob.glob(os.path.join(tmp, "sph", "vtk", "bodies_surf*")))
    dc.check("spheres only: no bodies_surf files (surfaces only for non-spherical bodies)", n, 0, "")
# configuration errors
bad = [("shapes.box.blockiness", "[1.5, 2]", "blockiness must be"),
       ("shapes.box.half_axes", "[0.003, 0, 0.002]", "half_axes must be"),
       ("shapes.box.curvature", "gauss", "curvature"),
       ("shapes.box.roundness", "3", "roundness")]
for key, val, want in bad:
    res = subprocess.run([dc.MMDEM, "check", yaml, "--set", "%s=%s" % (key, val)], capture_output=True, text=True)
    msg = (res.stdout + res.stderr).strip().splitlines()
    first = next((l for l in msg if want in l), "")
    dc.check("bad input %s = %s refused with a message naming it" % (key, val),
             0 if res.returncode != 0 and first and ("sq_pile.yaml:" in first or "--set " + key in first) else 1, 0, first or " | ".join(msg[-3:]))
dc.finish()
