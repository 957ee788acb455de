"""Sphere-polyhedron and polyhedron-mesh contacts at rest, law barrier_hybrid
(000_c57329b1a40312e0.txt eq. (49)-(53); g_bar = 0.01 m, switch fraction f = 0.1, n1 = 1, so
that a resting contact sits in part (i), fn = eps1 (g_bar - g)):
  - a sphere (R = 0.1 m, 1000 kg/m^3) dropped on a fixed unit cube off the face's centre comes
    to rest: the cube's reaction (bodies_final.csv, f of the fixed body) equals the sphere's
    weight within 0.1 %; the sphere stays above its starting point (x, y within 1e-9 m: the
    contact normal is the face normal) at the height 0.5 + R + g_bar - m g / eps1 within 1e-6 m
    (the law inverted at the weight);
  - a unit cube (1000 kg), turned 30 degrees about z, dropped on a mesh wall (OCC box meshed
    into 0.3 m triangles; the cube's corners fall on triangles and near their flat edges) comes
    to rest: the wall's reaction (walls.csv fz, averaged over the last 0.2 s) equals the weight
    within 0.1 %, and the cube's centre sits at 0.5 + g_bar - m g / (4 eps1) within 1e-6 m (four
    corner contacts share the weight); the same cube on a plane wall gives the same numbers
    (the plane collider's vertex-face contacts, 000 Fig. 4c);
  - feature-level Verlet lists (000 section 2.5) against the full candidate search
    (-poly_feature_lists 0, every candidate feature pair examined at each evaluation): 0.6 s of
    the ten-cube pile (poly_pile.yaml, impacts, sliding, toppling) ends in the same state, bitwise
    (same contacts in the same order).
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc
import math

tmp = sys.argv[1]
g, gbar = 9.81, 0.01
law = "{pair: default, law: barrier_hybrid, params: {g_bar: 0.01, f: 0.1, eps1: %s, n1: 1, n2: -2, zeta: 0.7, mu: 0.5, eps_t: 1.0e6, c_t: 1.0e3}}"
mat = "  m: {density: 1000, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}\n"


def write(name, text):
    p = os.path.join(tmp, name + ".yaml")
    with open(p, "w") as fp:
        fp.write(text)
    return p


# sphere on a fixed cube
R, eps1s = 0.1, 1.0e6
ms = 1000 * 4.0 / 3.0 * math.pi * R ** 3
ys = write("sphere_cube", "name: sphere_cube\ndomain: {lo: [-2, -2, -2], hi: [2, 2, 2]}\ngravity: [0, 0, -9.81]\nmaterials:\n" + mat +
           "contact:\n  - " + law % "1.0e6" + "\n"
           "shapes:\n  cube: {type: polyhedron, box: [1, 1, 1]}\n  ball: {type: sphere, radius: 0.1}\n"
           "bodies:\n  - {shape: cube, material: m, fixed: true, list: [{x: [0, 0, 0]}]}\n"
           "  - {shape: ball, material: m, list: [{x: [0.1, 0.2, 0.62]}]}\n"
           "integrator: {type: verlet, dt: 1.0e-4}\nrun: {end_time: 1.0}\noutput: {thermo_every: 1000}\n")
out = os.path.join(tmp, "sc")
if dc.run("sphere on cube run", ys, out):
    bf = {int(r["id"]): r for r in dc.read_csv(os.path.join(out, "bodies_final.csv"))}
    W = ms * g
    dc.check("sphere-polyhedron: reaction of the cube = sphere weight within 0.1 % (fz = -m g on the cube)", abs(bf[0]["fz"] + W) / W, 1e-3, "fz %.8g N, weight %.8g N" % (bf[0]["fz"], W))
    s = bf[1]
    dc.check("sphere-polyhedron: sphere rests above its start (x, y within 1e-9 m)", max(abs(s["x"] - 0.1), abs(s["y"] - 0.2)), 1e-9, "x %.12g y %.12g" % (s["x"], s["y"]))
    z = 0.5 + R + gbar - W / eps1s
    dc.check("sphere-polyhedron: rest height 0.5 + R + g_bar - m g / eps1 within 1e-6 m", abs(s["z"] - z), 1e-6, "z %.9g m, expected %.9g m" % (s["z"], z))

# cube on a mesh wall and on a plane
eps1c, mc = 1.0e9, 1000.0
Wc = mc * g
zc = 0.5 + gbar - Wc / (4 * eps1c)
for kind, wall in (("mesh", "{type: mesh, material: m, point: [0, 0, 0], mesh_size: 0.3, occ: [{box: {corner: [-2, -2, -1], size: [4, 4, 1]}}]}"),
                   ("plane", "{type: plane, material: m, point: [0, 0, 0], normal: [0, 0, 1]}")):
    yc = write("cube_" + kind, "name: cube_%s\ndomain: {lo: [-3, -3, -2], hi: [3, 3, 3]}\ngravity: [0, 0, -9.81]\nmaterials:\n" % kind + mat +
               "contact:\n  - " + law % "1.0e9" + "\n"
               "shapes:\n  cube: {type: polyhedron, box: [1, 1, 1]}\n"
               "bodies:\n  - {shape: cube, material: m, list: [{x: [0.123, -0.211, 0.515], q: [0.9659258262890683, 0, 0, 0.25881904510252074]}]}\n"
               "walls:\n  - " + wall + "\n"
               "integrator: {type: verlet, dt: 5.0e-5}\nrun: {end_time: 1.0}\noutput: {thermo_every: 200}\n")
    out = os.path.join(tmp, "c" + kind)
    if dc.run("cube on %s wall run" % kind, yc, out):
        w = [r for r in dc.read_csv(os.path.join(out, "walls.csv")) if r["time"] >= 0.8]
        fz = sum(r["fz"] for r in w) / len(w)
        dc.check("polyhedron-%s: wall reaction = cube weight within 0.1 %%" % kind, abs(abs(fz) - Wc) / Wc, 1e-3, "fz %.8g N, weight %.8g N (%d samples)" % (fz, Wc, len(w)))
        bf = dc.read_csv(os.path.join(out, "bodies_final.csv"))
        dc.check("polyhedron-%s: rest height 0.5 + g_bar - m g / (4 eps1) within 1e-6 m" % kind, abs(bf[0]["z"] - zc), 1e-6, "z %.9g m, expected %.9g m" % (bf[0]["z"], zc))

# feature lists against the full search
pile = os.path.join(here, "poly_pile.yaml")
res = {}
for tag, extra in (("lists", []), ("full", ["-poly_feature_lists", "0"])):
    o = os.path.join(tmp, "pile_" + tag)
    cmd = [dc.MMDEM, "run", pile, "--out", o, "--quiet", "--set", "run.end_time=0.6", "--set", "output.vtk_every=0"] + extra
    import subprocess
    rc = subprocess.call(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    res[tag] = open(os.path.join(o, "bodies_final.csv")).read() if rc == 0 else None
if res["lists"] is None or res["full"] is None:
    dc.not_ok("feature lists: pile runs", "mmdem failed")
else:
    dc.check("feature lists: the pile ends bitwise as with the full candidate search (0.6 s)", 0 if res["lists"] == res["full"] else 1, 0)
dc.finish()
