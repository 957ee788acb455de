"""001_558b02b5fc003581.txt example 5.2: collision of three particles rolling over a flat surface.

Three spheres (r = 0.2 m, m = 1000 kg, E = 1e10 Pa, nu = 0.25, xi = 0: an elastic collision,
mu_s = mu_d = 0.5 with the plane and between them) sit on a plane in an equilateral triangle
and roll without sliding toward its centre; they collide, their velocities reverse, their
spins reverse only later through sliding friction, and they roll back. 001 reports: collision
at about 0.46 s lasting about 0.0047 s, spin sign change at about 0.62 s, pure rolling again at
about 0.69 s, back at the start positions at about 1.39 s, identical results for the three.

001 Fig. 6 (the set-up) is not in the text; the set-up here is the one its numbers imply:
triangle side 2 m (centres 2/sqrt(3) m from the centroid), speed v0 = 2 m/s toward the centroid,
spin w0 = z x v0 / r (rolling). Then contact starts when the centres are 2r apart, at
(2/sqrt(3) - 2r/sqrt(3)) / v0 = 0.462 s; the three-body Hertz collision has the duration of a
two-body one with effective mass m/3 and approach speed sqrt(3) v0 (eq. (50): 0.0047 s); after
it, sliding at 2 v0 reverses the spin at 2 v0 / (5 mu g) and ends at 4 v0 / (7 mu g) later
(0.63 s, 0.70 s), and the spheres roll back at 3/7 v0, at the start at about 1.39 s. (v0 = 1.9
m/s with a side of 1.95 m fits as well; both give these times within 2 %.)
The spheres start at their static Hertz overlap on the plane; dt = 1e-4 s, phi = 0.5, tol 1e-4,
sweep gauss_seidel (the three touching spheres take three colours), hertz_mindlin with
`tangential: rolling_spring`.

Checks (sphere 0, interpolated on the per-step track): each time within 3 % of 001's value;
the three spheres' speed, spin magnitude and distance from the centroid agree at every step
within 1e-6 of v0, w0 and the start distance (the Gauss-Seidel sweep treats them in turn, so
they agree to a fraction of tol, not to round-off); the energy balance closes within 1e-3 of
the dissipated energy.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
r, m, E, nu, mu, g = 0.2, 1000.0, 1.0e10, 0.25, 0.5, 9.81
v0, side = 2.0, 2.0
rho = m / (4.0 / 3.0 * math.pi * r ** 3)
Es = E * E / (E * (1 - nu * nu) + E * (1 - nu * nu))
d0 = (m * g / (4.0 / 3.0 * Es * math.sqrt(r))) ** (2.0 / 3.0)
D0 = side / math.sqrt(3)
items = []
for k in range(3):
    th = math.pi / 2 + 2 * math.pi * k / 3
    ex, ey = math.cos(th), math.sin(th)
    vx, vy = -v0 * ex, -v0 * ey
    items.append("      - {x: [%r, %r, %r], v: [%r, %r, 0], w: [%r, %r, 0]}" % (D0 * ex, D0 * ey, r - d0, vx, vy, -vy / r, vx / r))
yaml = os.path.join(tmp, "three.yaml")
with open(yaml, "w") as fp:
    fp.write("""name: trap_three
domain: {lo: [-3, -3, -0.5], hi: [3, 3, 1]}
gravity: [0, 0, %r]
materials:
  m: {density: %r, youngs_modulus: %r, poisson_ratio: %r, restitution: 1.0, friction: %r}
contact:
  - {pair: default, law: hertz_mindlin, params: {tangential: rolling_spring}}
shapes:
  ball: {type: sphere, radius: %r}
bodies:
  - shape: ball
    material: m
    list:
%s
walls:
  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: m}
integrator: {type: trapezoid, dt: 1.0e-4, phi: 0.5, tol: 1.0e-4, sweep: gauss_seidel}
run: {end_time: 1.5}
output: {thermo_every: 1, track: [0, 1, 2]}
""" % (-g, rho, E, nu, mu, r, "\n".join(items)))

tag = "001 5.2 three spheres"
out = os.path.join(tmp, "out")
if dc.run(tag, yaml, out):
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    B = [[x for x in tr if int(x["id"]) == k] for k in range(3)]
    n = min(len(b) for b in B)
    t = [x["time"] for x in B[0][:n]]

    def crossing(f, start, up):
        """first zero of f after index start (up: from - to +), linearly interpolated"""
        for i in range(max(start, 1), n):
            if (f[i - 1] < 0 <= f[i]) if up else (f[i - 1] > 0 >= f[i]):
                return t[i - 1] + (t[i] - t[i - 1]) * f[i - 1] / (f[i - 1] - f[i]), i
        return None, None

    def dist(a, b):
        return math.sqrt((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2 + (a["z"] - b["z"]) ** 2)

    gap = [dist(B[0][i], B[1][i]) - 2 * r for i in range(n)]
    tc0, i0 = crossing(gap, 0, False)
    tc1, i1 = (None, None) if i0 is None else crossing(gap, i0, True)
    if tc1 is None:
        dc.not_ok(tag + ": collision", "no collision found")
    else:
        b = B[0][:n]
        ex, ey = b[0]["x"] / D0, b[0]["y"] / D0                     # outward radial direction
        ax, ay = b[0]["wx"] / (v0 / r), b[0]["wy"] / (v0 / r)       # initial spin axis
        spin = [x["wx"] * ax + x["wy"] * ay for x in b]
        slip = [(x["vx"] - x["wy"] * r) * ex + (x["vy"] + x["wx"] * r) * ey for x in b]  # v + w x (-r z), radial
        rad = [x["x"] * ex + x["y"] * ey - D0 for x in b]
        ts, _ = crossing(spin, i1, False)
        tr_, _ = crossing([-s for s in slip], i1, True) if slip[i1] > 0 else crossing(slip, i1, True)
        tb, _ = crossing(rad, i1, True)
        for what, val, ref in (("collision starts", tc0, 0.46), ("collision lasts", tc1 - tc0, 0.0047),
                               ("spin changes sign", ts, 0.62), ("pure rolling again", tr_, 0.69),
                               ("back at the start position", tb, 1.39)):
            if val is None:
                dc.not_ok(tag + ": " + what, "not found")
            else:
                dc.check(tag + ": %s at %.5g s vs 001's %g s" % (what, val, ref), abs(val / ref - 1), 0.03, "")
        vf = math.hypot(b[-1]["vx"], b[-1]["vy"])
        dc.check(tag + ": rolling back at 3/7 v0 (sliding with mu g, then rolling)", abs(vf / (3.0 / 7.0 * v0) - 1), 0.03,
                 "speed %.5f m/s, 3/7 v0 = %.5f m/s" % (vf, 3.0 / 7.0 * v0))
    dev = 0.0
    for i in range(n):
        s = [math.hypot(B[k][i]["vx"], B[k][i]["vy"]) / v0 for k in range(3)]
        w = [math.hypot(B[k][i]["wx"], B[k][i]["wy"]) / (v0 / r) for k in range(3)]
        d = [math.hypot(B[k][i]["x"], B[k][i]["y"]) / D0 for k in range(3)]
        z = [B[k][i]["z"] / r for k in range(3)]
        for q in (s, w, d, z):
            dev = max(dev, max(q) - min(q))
    dc.check(tag + ": the three spheres move identically (speed, spin, distance, height)", dev, 1e-6, "largest difference %.3g (relative to v0, w0, start distance, r)" % dev)
    e0, e1, diss = th[0]["e_balance"], th[-1]["e_balance"], th[-1]["dissipated"]
    dc.check(tag + ": energy balance closes (|e_balance - e0| / dissipated)", abs(e1 - e0) / diss, 1e-3,
             "e0 %.6g J, end %.6g J, dissipated %.6g J" % (e0, e1, diss))
    its = [x["iterations"] for x in th[1:]]
    dc.ok(tag + ": sweeps per step", "mean %.3f, max %d; rejected steps %d" % (sum(its) / len(its), max(its), th[-1]["rejected"]))
dc.finish()
