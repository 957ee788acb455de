"""Friction history of law barrier_hybrid across changes of feature key between polyhedra
(000_c57329b1a40312e0.txt eq. (54)-(58): the elastic part g_t of a sticking contact; the
pointwise contacts of a face-face contact, 000 Fig. 4c, change their keys when their points
cross from one sub-region to the next). Config poly_friction_keys.yaml, verlet dt = 1e-5 s,
eps_t = 1e7 N/m per pointwise contact, mu = 0.5:
  (a) a cube resting centred on a slab, two of its bottom corners on the diagonal of the slab's
      top face, under a constant Fx = 2 N and an Fy swinging +-2 N at its base: each swing moves
      those corners across the diagonal (their vertex-face keys change). The four corners stick
      and act as four springs in parallel, so at every sample where Fy = 0 (t = 0.1, 0.2, ...)
      the cube is displaced by Fx / (4 eps_t) = 5e-8 m along x (analytic) within 1 %, and by
      |y| < 1 % of that along y. Run again with -poly_key_history 0 (no transfer of g_t to the
      new key, the behaviour before the fix): the displacement exceeds the elastic one by more
      than 50 % (measured: 1.15e-7 m), so the case does exercise key changes.
  (b) the same cube with the loads off on an incline of tan a = 0.3 < mu (gravity tilted):
      after the first 0.2 s it does not creep: |x(1 s) - x(0.2 s)| < 1e-12 m (against an elastic
      displacement of ~1e-7 m).
  (c) as (b) for a cube on a cube of the same size turned 30 degrees about the vertical (edge-edge
      crossings and vertex-face contacts both ways): no creep, same bound.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "poly_friction_keys.yaml")
eps_t, Fx = 1.0e7, 2.0
xel = Fx / (4 * eps_t)


def track(out):
    return dc.read_csv(os.path.join(out, "track.csv"))


def at(tr, t):
    return min(tr, key=lambda r: abs(r["time"] - t))


# (a) with and without the transfer of g_t across keys
res = {}
for tag, opt in (("on", ""), ("off", "-poly_key_history 0")):
    out = os.path.join(tmp, "a_" + tag)
    old = os.environ.get("PETSC_OPTIONS")
    os.environ["PETSC_OPTIONS"] = opt
    okrun = dc.run("poly_friction_keys(a, %s) run" % tag, yaml, out)
    if old is None:
        del os.environ["PETSC_OPTIONS"]
    else:
        os.environ["PETSC_OPTIONS"] = old
    if okrun:
        res[tag] = track(out)
if "on" in res:
    tr = res["on"]
    samples = [at(tr, 0.1 * k) for k in range(1, 11)]
    ex = max(abs(r["x"] - xel) for r in samples) / xel
    ey = max(abs(r["y"]) for r in samples) / xel
    dc.check("poly_friction_keys(a) corners crossing the diagonal keep their springs: x = Fx/(4 eps_t) within 1 %", ex, 1e-2, "x(1 s) = %.6g m, analytic %.6g m" % (samples[-1]["x"], xel))
    dc.check("poly_friction_keys(a) |y| < 1 % of Fx/(4 eps_t) where Fy = 0", ey, 1e-2, "max |y| = %.3g m" % (ey * xel))
if "off" in res:
    x1 = at(res["off"], 1.0)["x"]
    dc.check("poly_friction_keys(a) the case changes keys: without the transfer x > 1.5 Fx/(4 eps_t)", 0 if x1 > 1.5 * xel else 1, 0, "x(1 s) = %.6g m without -poly_key_history" % x1)

# (b), (c): incline of tan a = 0.3 (gravity tilted), loads off
a = math.atan(0.3)
grav = "[%r,0,%r]" % (dc.G * math.sin(a), -dc.G * math.cos(a))
turned = [("shapes.slab.box", "[0.1,0.1,0.1]"), ("bodies.1.list.0.q", "[%r,0,0,%r]" % (math.cos(math.pi / 12), math.sin(math.pi / 12)))]
for tag, sets in (("b", []), ("c", turned)):
    out = os.path.join(tmp, tag)
    if not dc.run("poly_friction_keys(%s) run" % tag, yaml, out, [("loads", "[]"), ("gravity", grav)] + sets):
        continue
    tr = track(out)
    r0, r1 = at(tr, 0.2), at(tr, 1.0)
    creep = math.hypot(r1["x"] - r0["x"], r1["y"] - r0["y"])
    what = "cube on a slab" if tag == "b" else "cube on a cube turned 30 deg"
    dc.check("poly_friction_keys(%s) %s on an incline below the friction angle does not creep: |dx(0.2 s -> 1 s)| < 1e-12 m" % (tag, what), creep, 1e-12, "x(0.2 s) = %.6g m" % r0["x"])
dc.finish()
