"""Mesh walls (src/shapes/mesh.c): sphere-triangle contact against closed forms.

1. rest: a sphere (r = 5 mm, glass) dropped 0.2 mm above the top face of a box floor read from an
   ASCII STL file (written here: 12 triangles, the top face split by a diagonal the sphere sits
   next to), damped Hooke law: at rest the wall's reaction in walls.csv is -m g (to 1e-6) and
   the sphere's overlap is m g / kn (to 1e-4).
2. rolling over internal edges: the same sphere on a box floor meshed by Gmsh (OCC box, element
   size 10 mm), started at its static overlap m g / kn, rolling without slip at 0.36 m/s along
   a diagonal path. The floor is flat, so the normal force must stay m g (1e-6) while the contact
   passes from one triangle to the next (the path crosses >= 4 triangle boundaries, counted here
   from the wall surface written to VTK), and force, torque and velocity must be those of the
   same run on a plane wall (closed-form collider) to 1e-9: no bump, and the friction spring
   carried over from triangle to triangle.
3. VTK: the wall surface (walls_000000.vtp) is the box surface: area 2 (a b + a c + b c) to
   1e-12 (a box is meshed exactly), every point on the box boundary.
4. errors: a missing mesh file, an unknown key, an unknown OCC solid, both file and occ, a
   negative radius, and with closed: true an open, a non-manifold and an inverted STL surface
   stop `mmdem check` with FILE:LINE:COL and a message naming the fault (and what is allowed).
"""
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
PY = os.environ.get("PY", "/usr/bin/python3")
R, rho, kn = 0.005, 2500.0, 1.0e4
m = dc.sphere_mass(rho, R)
W = m * dc.G
d0 = W / kn

HEAD = """name: mesh_wall_test
domain: {lo: [-0.05, -0.05, -0.02], hi: [0.05, 0.05, 0.05]}
gravity: [0, 0, -9.81]
materials:
  glass: {density: 2500}
contact:
  - {pair: default, law: hooke, params: {kn: 1.0e4, gamma_n: %g, mu: 0.5}}
shapes:
  bead: {type: sphere, radius: 0.005}
"""


def write(path, text):
    with open(path, "w") as fp:
        fp.write(text)
    return path


# the STL floor: box [-0.04, 0.04]^2 x [-0.01, 0]
def stl_box(path, lo, hi, drop=False, extra=False, flip=False):
    v = [(lo[0] + (hi[0] - lo[0]) * (i in (1, 2, 5, 6)), lo[1] + (hi[1] - lo[1]) * (i in (2, 3, 6, 7)),
          lo[2] + (hi[2] - lo[2]) * (i >= 4)) for i in range(8)]
    tris = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4), (3, 7, 6), (3, 6, 2),
            (0, 4, 7), (0, 7, 3), (1, 2, 6), (1, 6, 5)]
    if drop:
        tris = tris[:-1]
    if extra:
        tris = tris + [(0, 2, 5)]  # a third triangle on the edge 0-2
    if flip:
        tris = [(t[0], t[2], t[1]) for t in tris]
    with open(path, "w") as fp:
        fp.write("solid floor\n")
        for t in tris:
            fp.write(" facet normal 0 0 0\n  outer loop\n")
            for k in t:
                fp.write("   vertex %.17g %.17g %.17g\n" % v[k])
            fp.write("  endloop\n endfacet\n")
        fp.write("endsolid floor\n")


# 1. rest on an STL floor
stl_box(os.path.join(tmp, "floor.stl"), (-0.04, -0.04, -0.01), (0.04, 0.04, 0.0))
y1 = write(os.path.join(tmp, "rest.yaml"), HEAD % 200 + """bodies:
  - {shape: bead, material: glass, list: [{x: [0.0013, 0.0021, 0.0052]}]}
walls:
  - {type: mesh, point: [0, 0, 0], material: glass, name: floor, file: floor.stl}
integrator: {type: verlet, dt: 1.0e-5}
run: {end_time: 0.3}
output: {thermo_every: 1000, vtk_every: 0}
""")
if dc.run("rest on mesh floor", y1, os.path.join(tmp, "rest")):
    w = dc.read_csv(os.path.join(tmp, "rest", "walls.csv"))[-1]
    dc.check("rest: STL floor reaction fz = -m g", abs(w["fz"] + W) / W, 1e-6, "fz %.12g N, m g %.12g N" % (w["fz"], W))
    dc.check("rest: fx, fy = 0", (abs(w["fx"]) + abs(w["fy"])) / W, 1e-9)
    b = dc.read_csv(os.path.join(tmp, "rest", "bodies_final.csv"))[0]
    dc.check("rest: overlap = m g / kn", abs((R - b["z"]) / d0 - 1), 1e-4, "overlap %.6g m, m g/kn %.6g m" % (R - b["z"], d0))

# 1b. the same rest with law hertz_mindlin (every law that takes sphere-plane geometry takes
# sphere-mesh contacts): reaction -m g, overlap from Hertz, F = 4/3 E* sqrt(R) delta^(3/2)
# (001 eq. (19)-(20); wall of the same material, E* = E / (2 (1 - nu^2)))
E, nu = 1.0e7, 0.25
Es = E / (2 * (1 - nu * nu))
dh = (W / (4.0 / 3.0 * Es * math.sqrt(R))) ** (2.0 / 3.0)
yh = write(os.path.join(tmp, "rest_hertz.yaml"), (HEAD % 200).replace(
    "glass: {density: 2500}", "glass: {density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25, restitution: 0.3, friction: 0.5}").replace(
    "{pair: default, law: hooke, params: {kn: 1.0e4, gamma_n: 200, mu: 0.5}}", "{pair: default, law: hertz_mindlin}") + """bodies:
  - {shape: bead, material: glass, list: [{x: [0.0013, 0.0021, 0.0051]}]}
walls:
  - {type: mesh, point: [0, 0, 0], material: glass, name: floor, file: floor.stl}
integrator: {type: verlet, dt: 2.0e-6}
run: {end_time: 0.1}
output: {thermo_every: 1000, vtk_every: 0}
""")
if dc.run("rest on mesh floor, hertz_mindlin", yh, os.path.join(tmp, "rest_hertz")):
    w = dc.read_csv(os.path.join(tmp, "rest_hertz", "walls.csv"))[-1]
    dc.check("rest (hertz_mindlin): floor reaction fz = -m g", abs(w["fz"] + W) / W, 1e-6, "fz %.12g N" % w["fz"])
    b = dc.read_csv(os.path.join(tmp, "rest_hertz", "bodies_final.csv"))[0]
    dc.check("rest (hertz_mindlin): overlap = (3 m g / (4 E* sqrt(R)))^(2/3)", abs((R - b["z"]) / dh - 1), 1e-4, "overlap %.6g m, Hertz %.6g m" % (R - b["z"], dh))

# 1c. a moving mesh wall: the floor slides at U = 0.1 m/s under a sphere at rest (a conveyor
# belt): friction makes it roll on the belt; angular momentum about the contact point is kept,
# so it ends at v = 2 U / 7 (rolling without slip relative to the belt: v - w r = U)
U = 0.1
ym = write(os.path.join(tmp, "belt.yaml"), (HEAD % 200) + """bodies:
  - {shape: bead, material: glass, list: [{x: [0.0013, 0.0021, %r]}]}
walls:
  - {type: mesh, point: [-0.02, 0, 0], material: glass, name: belt, file: floor.stl, velocity: [%r, 0, 0]}
integrator: {type: verlet, dt: 1.0e-5}
run: {end_time: 0.2}
output: {thermo_every: 1000, vtk_every: 0}
""" % (R - d0, U))
if dc.run("sphere on a moving mesh wall", ym, os.path.join(tmp, "belt")):
    b = dc.read_csv(os.path.join(tmp, "belt", "bodies_final.csv"))[0]
    dc.check("belt: the sphere ends at v = 2 U / 7", abs(b["vx"] / (2 * U / 7) - 1), 1e-3, "vx %.6g m/s" % b["vx"])
    dc.check("belt: rolling without slip on the belt, v - w r = U", abs((b["vx"] - b["wy"] * R) / U - 1), 1e-3, "w %.6g 1/s" % b["wy"])

# 2. rolling over internal edges of a Gmsh-meshed floor, and the same on a plane wall
v = (0.3, 0.2)
ROLL = HEAD % 0 + """bodies:
  - {shape: bead, material: glass, list: [{x: [-0.03, -0.021, %r], v: [%r, %r, 0], w: [%r, %r, 0]}]}
walls:
  - %s
integrator: {type: verlet, dt: 1.0e-5}
run: {end_time: 0.15}
output: {thermo_every: 10, vtk_every: 0, track: [0]}
"""
args = (R - d0, v[0], v[1], -v[1] / R, v[0] / R)
y2 = write(os.path.join(tmp, "roll.yaml"), ROLL % (args + ("""{type: mesh, point: [0, 0, 0], material: glass, name: floor, mesh_size: 0.01,
     occ: [{box: {corner: [-0.04, -0.04, -0.01], size: [0.08, 0.08, 0.01]}}]}""",)))
y3 = write(os.path.join(tmp, "rollp.yaml"), ROLL % (args + ("{type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: glass}",)))
if dc.run("roll over mesh edges", y2, os.path.join(tmp, "roll")) and dc.run("roll on a plane", y3, os.path.join(tmp, "rollp")):
    tr = dc.read_csv(os.path.join(tmp, "roll", "track.csv"))
    tp = dc.read_csv(os.path.join(tmp, "rollp", "track.csv"))
    en = max(abs((r["fz"] + W) - W) / W for r in tr)
    dc.check("roll: normal force = m g at every step (no bump at internal edges)", en, 1e-6)
    # the plane collider is closed form: the mesh contact must give the same force and torque
    # (tangential spring included: it is carried over from triangle to triangle)
    ed = max(max(abs(a[k] - b[k]) for k in ("fx", "fy", "fz")) / W for a, b in zip(tr, tp))
    et = max(max(abs(a[k] - b[k]) for k in ("tx", "ty", "tz")) / (W * R) for a, b in zip(tr, tp))
    ev = max(math.hypot(a["vx"] - b["vx"], a["vy"] - b["vy"]) / math.hypot(*v) for a, b in zip(tr, tp))
    dc.check("roll: force on the mesh = force on a plane wall, every step", ed, 1e-9, "%d steps" % len(tr))
    dc.check("roll: torque on the mesh = torque on a plane wall, every step", et, 1e-9)
    dc.check("roll: velocity on the mesh = velocity on a plane wall", ev, 1e-9)
    # the triangles of the top face (z = 0) from the VTK surface; count boundary crossings
    out = subprocess.run([PY, os.path.join(here, "..", "tools", "vtk_read.py"), "--json",
                          os.path.join(tmp, "roll", "vtk", "walls_000000.vtp")], capture_output=True, text=True)
    if out.returncode != 0:
        dc.not_ok("roll: wall surface readable", out.stderr.strip())
    else:
        import json
        j = json.loads(out.stdout)
        x = j["xyz"]
        off, conn = j["polys.offsets"], j["polys.conn"]
        if off and off[0] != 0:
            off = [0] + off
        tris = [conn[off[i]:off[i + 1]] for i in range(len(off) - 1)]
        pts = [x[3 * i:3 * i + 3] for i in range(len(x) // 3)]
        top = [t for t in tris if all(abs(pts[k][2]) < 1e-12 for k in t)]

        def inside(t, px, py):
            a, b, c = (pts[k] for k in t)
            d = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1])
            l1 = ((b[1] - c[1]) * (px - c[0]) + (c[0] - b[0]) * (py - c[1])) / d
            l2 = ((c[1] - a[1]) * (px - c[0]) + (a[0] - c[0]) * (py - c[1])) / d
            return l1 >= 0 and l2 >= 0 and 1 - l1 - l2 >= 0

        seq = []
        for r in tr:
            k = next((i for i, t in enumerate(top) if inside(t, r["x"], r["y"])), -1)
            if not seq or seq[-1] != k:
                seq.append(k)
        ncross = len(seq) - 1
        if ncross >= 4 and -1 not in seq:
            dc.ok("roll: the path crosses %d internal edges of the top face (%d triangles)" % (ncross, len(top)))
        else:
            dc.not_ok("roll: path crosses internal edges", "sequence of triangles %s" % seq)
        # 3. the surface is the box surface
        area, onb = 0.0, True
        for t in tris:
            a, b, c = (pts[k] for k in t)
            u = [b[i] - a[i] for i in range(3)]
            w_ = [c[i] - a[i] for i in range(3)]
            n = (u[1] * w_[2] - u[2] * w_[1], u[2] * w_[0] - u[0] * w_[2], u[0] * w_[1] - u[1] * w_[0])
            area += 0.5 * math.sqrt(sum(q * q for q in n))
        for p in pts:
            onb = onb and (abs(abs(p[0]) - 0.04) < 1e-12 or abs(abs(p[1]) - 0.04) < 1e-12 or abs(p[2]) < 1e-12 or abs(p[2] + 0.01) < 1e-12)
        A = 2 * (0.08 * 0.08 + 2 * 0.08 * 0.01)
        dc.check("VTK wall surface area = box surface 2 (ab + ac + bc)", abs(area / A - 1), 1e-12, "area %.15g m^2" % area)
        if onb:
            dc.ok("VTK wall surface: every point on the box boundary")
        else:
            dc.not_ok("VTK wall surface points", "a point off the box boundary")

# 4. errors with file:line:col
base = HEAD % 0 + """bodies:
  - {shape: bead, material: glass, list: [{x: [0, 0, 0.01]}]}
walls:
  - %s
integrator: {type: verlet, dt: 1.0e-5}
run: {end_time: 0.01}
"""
cases = [
    ("missing mesh file", "{type: mesh, point: [0, 0, 0], material: glass, file: nothere.stl}", ":13:", "cannot read the file"),
    ("unknown wall key", "{type: mesh, point: [0, 0, 0], material: glass, file: floor.stl, colour: red}", ":13:", "unknown key 'colour'; allowed: type, name, point"),
    ("unknown occ solid", "{type: mesh, point: [0, 0, 0], material: glass, occ: [{torus: {r: 1}}]}", ":13:", "unknown key 'torus'; allowed: box, cylinder, cone, sphere"),
    ("file and occ both", "{type: mesh, point: [0, 0, 0], material: glass, file: floor.stl, occ: [{sphere: {centre: [0, 0, 0], radius: 1}}]}", ":13:", "exactly one of file"),
    ("negative cylinder radius", "{type: mesh, point: [0, 0, 0], material: glass, occ: [{cylinder: {base: [0, 0, 0], axis: [0, 0, 1], radius: -1}}]}", ":13:", "radius must be > 0"),
]
for tag, kw in (("open", {"drop": True}), ("nonmanifold", {"extra": True}), ("inverted", {"flip": True})):
    stl_box(os.path.join(tmp, tag + ".stl"), (-0.04, -0.04, -0.01), (0.04, 0.04, 0.0), **kw)
cases += [
    ("closed: true, open STL", "{type: mesh, point: [0, 0, 0], material: glass, file: open.stl, closed: true}", ":13:", "open surface: edge"),
    ("closed: true, non-manifold STL", "{type: mesh, point: [0, 0, 0], material: glass, file: nonmanifold.stl, closed: true}", ":13:", "non-manifold edge"),
    ("closed: true, inverted STL", "{type: mesh, point: [0, 0, 0], material: glass, file: inverted.stl, closed: true}", ":13:", "inverted surface"),
]
for name, wall, loc, msg in cases:
    y = write(os.path.join(tmp, "bad.yaml"), base % wall)
    p = subprocess.run([dc.MMDEM, "check", y], capture_output=True, text=True)
    text = (p.stdout + p.stderr).strip()
    if p.returncode != 0 and ("bad.yaml" + loc) in text and msg in text:
        dc.ok("error: %s -> %s" % (name, text.splitlines()[-1][-120:]))
    else:
        dc.not_ok("error: %s" % name, "status %d, output: %s" % (p.returncode, text[-300:]))
dc.finish()
