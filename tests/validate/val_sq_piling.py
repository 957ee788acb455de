"""Piling (002_a4a9ff6a3ba65368.txt, section "Piling of particles", Fig. 11): superquadrics
a = b = 2 mm, c = 1 mm, n1 = n2 = 4, and spheres of the same volume (R = 1.836 mm, as 002 gives),
poured onto a plate, form heaps of different angles of repose: 40 deg (superquadrics) and
31 deg (spheres, no rolling friction) in 002.

Set-up (002's Table 4 is not in the text we have; these are our choices): N = 1500 bodies,
density 2500 kg/m^3, Hertz-Mindlin E = 1e8 Pa, nu = 0.3, restitution 0.5, friction 0.5 between
bodies and with the plate, mean-curvature Hertz radius (q = 10, as 002 uses); velocity Verlet,
dt = 1e-5 s. mmdem has no particle insertion, and a column of bodies dropped from above
scatters over the plate (we tried: the impacts at 2-3 m/s throw the bodies far), so the heap is
made as in 002's own angle-of-repose experiment, by releasing a filled container: the bodies
start on a 6 x 6 lattice (spacing 6.5 mm, random offsets of up to 0.4 mm and random
orientations, seeded) in a 4 x 4 cm square container of four plane walls standing on the plate
at the centre of a 0.3 x 0.3 m domain; they settle in it for 0.4 s, the walls are removed
(remove_at), and the column slumps into a heap, at rest after another 0.8 s (checked:
kinetic energy). Four walls at the edges of the plate keep bodies that roll away in the domain
(spheres without rolling resistance roll on for ever: without them a sphere left the domain at
0.77 s and the run stopped).

Angle of repose, from bodies_final.csv: the top of the heap at radius r from the heap axis
(the mean x, y of the bodies) is the highest body top (z + its extent upwards; the bounding
radius for a superquadric is replaced by its exact extreme point in +z, from its orientation)
in rings of 2 mm; the heap radius is where, going out from the axis, the ring tops first drop
below 3 mm (a body lying on the plate; bodies scattered beyond are ignored); the angle is atan
of minus the slope of a least-squares line through the ring tops between 25 % and 85 % of the
heap radius (the apex and the toe excluded).
Checked: superquadric heap angle within 40 +- 4 deg (002); and steeper than the spheres'
(printed, with 002's 31 deg for reference).
"""
import csv
import math
import os
import random
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
N, H, W, T_REMOVE, T_END = 1500, 0.3, 0.04, 0.4, 1.2
YAML = """name: {name}
domain: {{lo: [0, 0, 0], hi: [{H}, {H}, 0.5]}}
gravity: [0, 0, -9.81]
materials:
  grain: {{density: 2500, youngs_modulus: 1.0e8, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}}
contact:
  - {{pair: default, law: hertz_mindlin}}
shapes:
  p: {shape}
bodies:
  - {{shape: p, material: grain, file: {csv}}}
walls:
  - {{type: plane, name: plate, point: [0, 0, 0], normal: [0, 0, 1], material: grain}}
  - {{type: plane, point: [{x0}, 0, 0], normal: [1, 0, 0], material: grain, remove_at: {tr}}}
  - {{type: plane, point: [{x1}, 0, 0], normal: [-1, 0, 0], material: grain, remove_at: {tr}}}
  - {{type: plane, point: [0, {x0}, 0], normal: [0, 1, 0], material: grain, remove_at: {tr}}}
  - {{type: plane, point: [0, {x1}, 0], normal: [0, -1, 0], material: grain, remove_at: {tr}}}
  - {{type: plane, point: [0, 0, 0], normal: [1, 0, 0], material: grain}}
  - {{type: plane, point: [{H}, 0, 0], normal: [-1, 0, 0], material: grain}}
  - {{type: plane, point: [0, 0, 0], normal: [0, 1, 0], material: grain}}
  - {{type: plane, point: [0, {H}, 0], normal: [0, -1, 0], material: grain}}
integrator: {{type: verlet, dt: 1.0e-5}}
run: {{end_time: {te}}}
output: {{thermo_every: 2000, vtk_every: 0.1}}
"""
SQ = "{type: superquadric, half_axes: [0.002, 0.002, 0.001], blockiness: [4, 4], curvature: mean}"
SPH = "{type: sphere, radius: 0.001836}"


def quat(rng):
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    return (math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
            math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3))


def column(path):
    rng = random.Random(11)
    h = 0.006
    with open(path, "w") as f:
        f.write("x,y,z,qw,qx,qy,qz\n")
        k = 0
        for layer in range(60):
            for j in range(5):
                for i in range(5):
                    if k == N:
                        break
                    x = H / 2 + (i - 2) * h + rng.uniform(-4e-4, 4e-4)
                    y = H / 2 + (j - 2) * h + rng.uniform(-4e-4, 4e-4)
                    z = 0.01 + layer * h
                    f.write("%.9g,%.9g,%.9g,%.12g,%.12g,%.12g,%.12g\n" % ((x, y, z) + quat(rng)))
                    k += 1


def zup_sq(q):
    """the height of the highest point of the a = b = 2, c = 1 mm, n = 4 body above its centre
    at orientation q: the body-frame direction of world +z is the third row of R; the
    extreme point of |x/a|^4 + |y/b|^4 + |z/c|^4 = 1 in direction d has x ~ (a|d_x|)^(1/3)
    (Hoelder), value (sum (a_i |d_i|)^(4/3))^(3/4)"""
    w, x, y, z = q
    d = (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
    ax = (0.002, 0.002, 0.001)
    return sum((ax[i] * abs(d[i])) ** (4.0 / 3.0) for i in range(3)) ** 0.75


def angle(final, top):
    cx = sum(r["x"] for r in final) / len(final)
    cy = sum(r["y"] for r in final) / len(final)
    ring = {}
    for r in final:
        rr = math.hypot(r["x"] - cx, r["y"] - cy)
        zt = r["z"] + top(r)
        k = int(rr / 0.002)
        ring[k] = max(ring.get(k, 0.0), zt)
    # the heap's edge: walking out from the axis, the first ring whose top is below 3 mm (about
    # one body lying on the plate); a few bodies scattered far out must not stretch the fit
    k, kmax = 0, max(ring)
    while k <= kmax and ring.get(k, 1.0) > 0.003:   # an empty ring (near the axis) does not end it
        k += 1
    rmax = k * 0.002
    pts = [((k + 0.5) * 0.002, z) for k, z in ring.items() if 0.25 * rmax <= (k + 0.5) * 0.002 <= 0.85 * rmax]
    n = len(pts)
    if n < 2:   # no heap (the bodies spread into a single layer): angle 0
        return 0.0, rmax, n
    sx = sum(p[0] for p in pts); sy = sum(p[1] for p in pts)
    sxx = sum(p[0] ** 2 for p in pts); sxy = sum(p[0] * p[1] for p in pts)
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return math.degrees(math.atan(-slope)), rmax, n


res = {}
for name, shape, top in (("superquadrics", SQ, lambda r: zup_sq((r["qw"], r["qx"], r["qy"], r["qz"]))),
                         ("spheres", SPH, lambda r: 0.001836)):
    csvp = os.path.join(tmp, "column.csv")
    column(csvp)
    y = os.path.join(tmp, name + ".yaml")
    with open(y, "w") as f:
        f.write(YAML.format(name=name, H=H, shape=shape, csv=csvp, x0=H / 2 - W / 2, x1=H / 2 + W / 2, tr=T_REMOVE, te=T_END))
    out = os.path.join(tmp, name)
    tag = "piling, " + name
    with open(os.path.join(tmp, name + ".log"), "w") as lf:   # no time limit: a long run
        rc = subprocess.call([dc.MMDEM, "run", y, "--out", out, "--quiet"], stdout=lf, stderr=subprocess.STDOUT)
    if rc != 0:
        dc.not_ok(tag, "mmdem run exited with status %d: %s" % (rc, open(os.path.join(tmp, name + ".log")).read()[-500:]))
        continue
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    ke = th[-1]["ke_trans"] + th[-1]["ke_rot"]
    pe = max(r["pe_grav"] for r in th)
    dc.check(tag + ": at rest at the end, kinetic energy / initial potential energy", ke / pe, 1e-4, "")
    if "sq_failures" in th[-1] and name == "superquadrics":
        dc.check(tag + ": every contact solve converged", th[-1]["sq_failures"], 0, "")
    final = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    a, rmax, n = angle(final, top)
    res[name] = a
    print("# %s: angle of repose %.1f deg (heap radius %.1f mm, %d rings fitted)" % (name, a, 1e3 * rmax, n))
if "superquadrics" in res:
    dc.check("piling: superquadric angle of repose within 40 +- 4 deg (002)", abs(res["superquadrics"] - 40.0), 4.0,
             "%.1f deg" % res["superquadrics"])
if len(res) == 2:
    dc.check("piling: superquadrics heap steeper than volume-equivalent spheres (002: 40 vs 31 deg)",
             max(0.0, res["spheres"] - res["superquadrics"]), 0, "%.1f vs %.1f deg" % (res["superquadrics"], res["spheres"]))
dc.finish()
