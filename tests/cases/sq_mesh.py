"""Superquadric/mesh contact (src/shapes/superquadric_mesh.c; 002_a4a9ff6a3ba65368.txt eq. (26)-(33)
for faces, the contact line of eq. (36) for edges and vertices).

Body: a = 3, b = 2, c = 1.5 mm, n1 = n2 = 4, density 2500; mass m from the closed-form volume
(Jaklic et al.: V = 2 a b c e1 e2 B(e1/2 + 1, e1) B(e2/2, e2/2), e = 2/n), recomputed here.
Law: hooke, kn = 1000 N/m, damped (gamma_n = 300 1/s), mu = 0.5.

1. tilted plate: a 20 x 20 mm plate of 32 triangles (an ASCII STL written here), tilted by
   theta = 20 deg about x (tan 20 = 0.36 < mu: the body sticks). A smooth convex body touches a
   plane at one point and rests where that point is straight below its centre: the body, lying
   on its face c, starts in that pose (its rotation about x found here by bisection with the
   closed-form extreme point of the n = 4 shape) with the contact 0.76 mm from an interior
   vertex of the plate (the triangles around it are all near), pressed by the static overlap.
   At the end the wall's reaction (walls.csv) is -m g to 0.1 % (each component / m g), and
   the overlap (depth of the body's extreme point towards the plate, from its final pose) is
   m g cos(theta) / kn to 1 %.
   The same run with a plane wall of the same normal (closed-form superquadric/plane):
   positions along the run (track.csv) the same to 1e-9 m - a flat mesh acts as its plane.
   Sliding (mu = 0.1 < tan(theta)) from 8 mm up the slope, 0.1 s: the body crosses internal
   edges of the plate; positions the same as on the plane wall to 1e-9 m.
2. ridge: a roof of two faces sloping down at 10 deg from a ridge along x (vertices on the
   ridge every 5 mm); the body lies flat across the ridge, touching it along an edge only: one
   edge contact (the ridge's vertex next to it and the faces are not touched), reaction -m g
   to 0.1 % and overlap m g / kn to 1 %: a second contact on the vertex would halve it.
3. apex: the body lies flat on the apex of a four-sided pyramid, straight above it: one vertex
   contact (the faces slope away), reaction -m g to 0.1 %, overlap m g / kn to 1 %.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
A, B, C, N, RHO, KN = 0.003, 0.002, 0.0015, 4.0, 2500.0, 1000.0


def beta(x, y):
    return math.exp(math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y))


e = 2.0 / N
V = 2 * A * B * C * e * e * beta(e / 2 + 1, e) * beta(e / 2, e / 2)
M = RHO * V
W = M * dc.G

HEAD = """name: sq_mesh
domain: {lo: [-0.03, -0.03, -0.03], hi: [0.03, 0.03, 0.03]}
gravity: [0, 0, -9.81]
materials:
  grain: {density: 2500}
contact:
  - {pair: default, law: hooke, params: {kn: 1000, gamma_n: 300, mu: 0.5}}
shapes:
  p: {type: superquadric, half_axes: [0.003, 0.002, 0.0015], blockiness: [4, 4]}
"""


def write_stl(path, verts, tris):
    with open(path, "w") as f:
        f.write("solid s\n")
        for t in tris:
            f.write(" facet normal 0 0 0\n  outer loop\n")
            for k in t:
                f.write("   vertex %.17g %.17g %.17g\n" % verts[k])
            f.write("  endloop\n endfacet\n")
        f.write("endsolid s\n")


def grid(xs, ys, z):
    """triangles of the grid xs x ys, vertex (x, y, z(x, y)), alternating diagonals"""
    verts = [(x, y, z(x, y)) for y in ys for x in xs]
    nx = len(xs)
    tris = []
    for j in range(len(ys) - 1):
        for i in range(nx - 1):
            v0, v1, v2, v3 = j * nx + i, j * nx + i + 1, (j + 1) * nx + i + 1, (j + 1) * nx + i
            tris += [(v0, v1, v2), (v0, v2, v3)] if (i + j) % 2 == 0 else [(v0, v1, v3), (v1, v2, v3)]
    return verts, tris


# 1. tilted plate
th = math.radians(20.0)
ct, st = math.cos(th), math.sin(th)
xs = [-0.01 + 0.005 * i for i in range(5)]
verts, tris = grid(xs, xs, lambda x, y: 0.0)
verts = [(x, y * ct, y * st) for x, y, z in verts]    # rotated about x by theta
write_stl(os.path.join(tmp, "plate.stl"), verts, tris)
nrm = (0.0, -st, ct)


def support(d):
    """extreme point of |x/a|^4 + |y/b|^4 + |z/c|^4 = 1 in body direction d (Hoelder):
    x_i = a_i sgn(d_i) (a_i |d_i|)^(1/3) / (sum (a_j |d_j|)^(4/3))^(1/4)"""
    ax = (A, B, C)
    S = sum((ax[i] * abs(d[i])) ** (4.0 / 3.0) for i in range(3)) ** 0.25
    return [ax[i] * math.copysign((ax[i] * abs(d[i])) ** (1.0 / 3.0), d[i]) / S for i in range(3)]


def rotx(phi, v):
    c, s_ = math.cos(phi), math.sin(phi)
    return (v[0], c * v[1] - s_ * v[2], s_ * v[1] + c * v[2])


def contact_point(phi):
    """world offset from the centre of the body's extreme point towards the plate, body rotated
    by phi about x"""
    return rotx(phi, support(rotx(-phi, (-nrm[0], -nrm[1], -nrm[2]))))


# the equilibrium pose: the body (a smooth convex body touches the plane at one point) rests
# where that point is straight below its centre (weight and contact force on one line): rotation
# phi about x by bisection on the point's horizontal offset; it rests pressed by m g cos(theta)/kn
lo = th                                               # the first sign change above theta
hi = next(th + 0.01 * k for k in range(1, 100) if contact_point(th + 0.01 * k)[1] < 0)
for _ in range(200):
    mid = 0.5 * (lo + hi)
    if (contact_point(lo)[1] > 0) == (contact_point(mid)[1] > 0):
        lo = mid
    else:
        hi = mid
phi = 0.5 * (lo + hi)
pc = contact_point(phi)
u0, v0 = 0.0007, 0.0003                                # plate coordinates of the contact
delta = W * ct / KN
tn = -delta - sum(nrm[i] * pc[i] for i in range(3))
x0 = (u0, v0 * ct + tn * nrm[1], v0 * st + tn * nrm[2])
q0 = (math.cos(phi / 2), math.sin(phi / 2), 0.0, 0.0)
BODY = "bodies:\n  - {shape: p, material: grain, list: [{x: [%.17g, %.17g, %.17g], q: [%.17g, %.17g, %.17g, %.17g]}]}\n" % (x0 + q0)
TAIL = """integrator: {type: verlet, dt: 2.0e-5}
run: {end_time: 0.4}
output: {thermo_every: 500, vtk_every: 0, track: [0]}
"""
res = {}
for kind, wall in (("mesh", "{type: mesh, name: plate, point: [0, 0, 0], material: grain, file: plate.stl}"),
                   ("plane", "{type: plane, name: plate, point: [0, 0, 0], normal: [0, %.17g, %.17g], material: grain}" % (-st, ct))):
    y = os.path.join(tmp, "tilt_%s.yaml" % kind)
    with open(y, "w") as f:
        f.write(HEAD + BODY + "walls:\n  - " + wall + "\n" + TAIL)
    out = os.path.join(tmp, "tilt_" + kind)
    if dc.run("tilted plate (%s)" % kind, y, out):
        res[kind] = out
if "mesh" in res:
    w = dc.read_csv(os.path.join(res["mesh"], "walls.csv"))[-1]
    err = max(abs(w["fx"]), abs(w["fy"]), abs(w["fz"] + W)) / W
    dc.check("tilted mesh plate: at rest, reaction = -m g (each component / m g)", err, 1e-3,
             "f = (%.6g, %.6g, %.6g) N, m g = %.6g N" % (w["fx"], w["fy"], w["fz"], W))
    b = dc.read_csv(os.path.join(res["mesh"], "bodies_final.csv"))[0]
    qb = (b["qw"], b["qx"], b["qy"], b["qz"])
    ang = 2 * math.atan2(qb[1], qb[0])
    pc = contact_point(ang)
    d = -(sum(nrm[i] * (b["xyz"[i]] + pc[i]) for i in range(3)))
    dc.check("tilted mesh plate: overlap = m g cos(theta) / kn", abs(d / (W * ct / KN) - 1), 1e-2,
             "overlap %.6g m, m g cos(theta)/kn %.6g m" % (d, W * ct / KN))
if len(res) == 2:
    tm = dc.read_csv(os.path.join(res["mesh"], "track.csv"))
    tp = dc.read_csv(os.path.join(res["plane"], "track.csv"))
    dmax = max(math.sqrt(sum((r[k] - s[k]) ** 2 for k in ("x", "y", "z"))) for r, s in zip(tm, tp)) if len(tm) == len(tp) else float("nan")
    dc.check("tilted plate: the mesh run follows the plane run (max distance of positions, m)", dmax, 1e-9,
             "%d track rows" % len(tm))

# 1b. sliding down the plate (mu = 0.1 < tan(theta)) from 8 mm up the slope, over internal edges
# of the mesh (y = 5 and 0 mm and the diagonals): the same as on the plane wall
u1, v1 = 0.0007, 0.008
x1 = (u1, v1 * ct + tn * nrm[1], v1 * st + tn * nrm[2])
BODY1 = "bodies:\n  - {shape: p, material: grain, list: [{x: [%.17g, %.17g, %.17g], q: [%.17g, %.17g, %.17g, %.17g]}]}\n" % (x1 + q0)
res = {}
for kind, wall in (("mesh", "{type: mesh, name: plate, point: [0, 0, 0], material: grain, file: plate.stl}"),
                   ("plane", "{type: plane, name: plate, point: [0, 0, 0], normal: [0, %.17g, %.17g], material: grain}" % (-st, ct))):
    y = os.path.join(tmp, "slide_%s.yaml" % kind)
    with open(y, "w") as f:
        f.write((HEAD + BODY1 + "walls:\n  - " + wall + "\n" + TAIL).replace("mu: 0.5", "mu: 0.1").replace("end_time: 0.4", "end_time: 0.1").replace("thermo_every: 500", "thermo_every: 50"))
    out = os.path.join(tmp, "slide_" + kind)
    if dc.run("sliding on the plate (%s)" % kind, y, out):
        res[kind] = out
if len(res) == 2:
    tm = dc.read_csv(os.path.join(res["mesh"], "track.csv"))
    tp = dc.read_csv(os.path.join(res["plane"], "track.csv"))
    dmax = max(math.sqrt(sum((r[k] - s[k]) ** 2 for k in ("x", "y", "z"))) for r, s in zip(tm, tp)) if len(tm) == len(tp) else float("nan")
    dist = (tm[0]["y"] - tm[-1]["y"]) / ct
    dc.check("sliding over internal edges: the mesh run follows the plane run (max distance of positions, m)", dmax, 1e-9,
             "%d track rows, slid %.1f mm down the slope" % (len(tm), 1e3 * dist))

def rest_on(name, stl, x, feature):
    """the body dropped 1e-5 m above rest height at x onto mesh wall `stl`: at rest, the
    reaction is -m g and the overlap of the one contact (a `feature` contact) m g / kn"""
    y = os.path.join(tmp, name + ".yaml")
    with open(y, "w") as f:
        f.write(HEAD + "bodies:\n  - {shape: p, material: grain, list: [{x: [%.17g, 0, %.17g]}]}\n" % (x, C + 1e-5)
                + "walls:\n  - {type: mesh, name: %s, point: [0, 0, 0], material: grain, file: %s}\n" % (name, stl) + TAIL)
    out = os.path.join(tmp, name)
    if not dc.run(name, y, out):
        return
    w = dc.read_csv(os.path.join(out, "walls.csv"))[-1]
    err = max(abs(w["fx"]), abs(w["fy"]), abs(w["fz"] + W)) / W
    dc.check("%s: at rest, reaction = -m g (each component / m g)" % name, err, 1e-3,
             "f = (%.6g, %.6g, %.6g) N" % (w["fx"], w["fy"], w["fz"]))
    b = dc.read_csv(os.path.join(out, "bodies_final.csv"))[0]
    d = C - b["z"]
    dc.check("%s: one %s contact, overlap = m g / kn" % (name, feature), abs(d / (W / KN) - 1), 1e-2,
             "overlap %.6g m, m g/kn %.6g m" % (d, W / KN))


# 2. ridge
sl = math.tan(math.radians(10.0))
verts, tris = grid([-0.01 + 0.005 * i for i in range(5)], [-0.01, -0.005, 0.0, 0.005, 0.01], lambda x, y: -abs(y) * sl)
write_stl(os.path.join(tmp, "roof.stl"), verts, tris)
rest_on("ridge", "roof.stl", 0.0013, "edge")
# 3. apex: a pyramid (apex at the origin, base corners at (+-10, +-10, -5) mm); the body lies flat
# on the apex, straight above it: one vertex contact
verts = [(0.0, 0.0, 0.0), (-0.01, -0.01, -0.005), (0.01, -0.01, -0.005), (0.01, 0.01, -0.005), (-0.01, 0.01, -0.005)]
write_stl(os.path.join(tmp, "pyramid.stl"), verts, [(0, 1, 2), (0, 2, 3), (0, 3, 4), (0, 4, 1)])
rest_on("apex", "pyramid.stl", 0.0, "vertex")
dc.finish()
