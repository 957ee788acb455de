"""Cylinder-wall impact (002_a4a9ff6a3ba65368.txt section "Particle-wall impact", eq. (41)-(42),
after Kodam et al.): a cylinder whose end face makes the angle theta with a plane wall hits it
at V- = 0.5 m/s normal to the wall with no angular velocity; frictionless, no gravity,
restitution 1 (hertz_mindlin with e = 1 has no dashpot, so epsilon = 1 exactly). Post-impact
    w+ = m V- (1 + eps) r cos(alpha + theta) / (I_yy + m r^2 cos^2(alpha + theta))   (41)
    V+ = w+ r cos(alpha + theta) - eps V-                                           (42)
with r cos(alpha + theta) the horizontal offset of the corner point C from the centre.
The cylinder is a superquadric of radius R = 2 mm, half-length c = 4 mm, n1 = 20, n2 = 2 (axis
z; 002's Table 3 is not in our text). Its corner is rounded, so C - the point that touches the
wall - is the body's lowest point at that orientation; this script finds it by brute-force
sampling of the parametric surface (independent of the code's closed form, eq. (33)), and
takes m and I_yy from the beta-function formulas written out again here. 9 runs of verlet,
theta = 5, 15, ..., 85 degrees, and 3 each (15, 45, 75 degrees) of trapezoid and of cd (rigid
contact dynamics with restitution); the velocities are read from track.csv at the first output
step after the contact has ended (thermo contacts back to 0).
Checked: r w+ / V- and V+ / V- (002 Fig. 10) each within 0.05 of eq. (41)-(42) - 5 % of V-, an
absolute measure, since w+ changes sign near theta = 90 deg - alpha (alpha = atan(c/R)); for
cd, whose single impulse is the model of eq. (41)-(42) itself, within 1e-6.
Also printed (not asserted): the values of eq. (41)-(42) for the sharp-cornered true
cylinder, which the rounded superquadric misses by up to ~10 % at small angles (the
shape-approximation error 002 mentions for its small and large angles).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
R, c, n1, rho, V, eps = 0.002, 0.004, 20.0, 2500.0, 0.5, 1.0
YAML = """name: sq_cylinder_impact
domain: {lo: [-0.05, -0.05, -0.02], hi: [0.05, 0.05, 0.05]}
gravity: [0, 0, 0]
materials:
  grain: {density: %r, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 1, friction: 0}
contact:
  - {pair: default, law: hertz_mindlin}
shapes:
  cyl: {type: superquadric, half_axes: [%r, %r, %r], blockiness: [%r, 2]}
bodies:
  - shape: cyl
    material: grain
    list:
      - {x: [0, 0, %r], v: [0, 0, %r], q: [%r, 0, %r, 0]}
walls:
  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: grain}
integrator: %s
run: {end_time: 2.2e-4}
output: {thermo_every: %d, track: [0], vtk_every: -1}
"""
# (integrator, thermo_every, angles, tolerance): verlet at every angle; the generic 6-DOF
# paths of the other integrators that accept superquadrics at three angles (variational
# refuses them: tests/cases/sq_free_top.py). cd is rigid (004): the impact is one impulse at
# the contact point with Newton's restitution (restitution: true, e = 1) - exactly the model
# eq. (41)-(42) are derived from - so it must reproduce them to the accuracy of the contact
# point (the solver's midway point, Newton tolerance 1e-6) rather than within 5 %.
RUNS = [("{type: verlet, dt: 5.0e-8}", 5, range(5, 90, 10), 0.05),
        ("{type: trapezoid, dt: 5.0e-8}", 5, (15, 45, 75), 0.05),
        ("{type: cd, dt: 1.0e-6, restitution: true}", 1, (15, 45, 75), 1e-6)]


def spow(t, e):
    return math.copysign(abs(t) ** e, t)


def surface(eta):
    """the body-frame surface point at latitude eta in the x-z plane (y = 0, x >= 0)"""
    e1 = 2 / n1
    return (R * spow(math.cos(eta), e1), c * spow(math.sin(eta), e1))


def lowest(th):
    """the surface point with the lowest world z when the body is turned by th about y: by
    symmetry it lies in the x-z plane; 401 samples in eta, then 40 zooms"""
    ct, st = math.cos(th), math.sin(th)

    def zw(p):
        return -p[0] * st + p[1] * ct
    best = min((zw(surface(-math.pi / 2 + i * math.pi / 400)), -math.pi / 2 + i * math.pi / 400) for i in range(401))
    h = math.pi / 400
    for _ in range(40):
        e0 = best[1]
        for i in range(-4, 5):
            eta = min(math.pi / 2, max(-math.pi / 2, e0 + i * h / 2))
            best = min(best, (zw(surface(eta)), eta))
        h /= 2
    p = surface(best[1])
    return p[0] * ct + p[1] * st, best[0]     # horizontal offset of C, its height


def beta(x, y):
    return math.exp(math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y))


e1, e2 = 2 / n1, 1.0                        # Jaklic et al., as in the module comment
m = rho * 2 * R * R * c * e1 * e2 * beta(e1 / 2 + 1, e1) * beta(e2 / 2, e2 / 2)
Iyy = rho * 0.5 * R * R * c * e1 * e2 * (R * R * beta(1.5 * e2, e2 / 2) * beta(e1 / 2, 2 * e1 + 1)
                                          + 4 * c * c * beta(e2 / 2, e2 / 2 + 1) * beta(1.5 * e1, e1 + 1))
r = math.hypot(R, c)                        # centre to the sharp corner
mc, Ic = rho * math.pi * R * R * 2 * c, rho * math.pi * R * R * 2 * c * (3 * R * R + 4 * c * c) / 12
rows = []
for integ, every, thetas, tol in RUNS:
    iname = integ.split(",")[0].split()[-1]
    for th in thetas:
        t = math.radians(th)
        d, zmin = lowest(t)
        y = os.path.join(tmp, "imp_%s_%d.yaml" % (iname, th))
        with open(y, "w") as f:
            f.write(YAML % (rho, R, R, c, n1, -zmin + 1e-6, -V, math.cos(t / 2), math.sin(t / 2), integ, every))
        out = os.path.join(tmp, "o_%s_%d" % (iname, th))
        tag = "cylinder impact (%s) theta = %d deg" % (iname, th)
        if not dc.run(tag, y, out):
            continue
        th_ = dc.read_csv(os.path.join(out, "thermo.csv"))
        tr = dc.read_csv(os.path.join(out, "track.csv"))
        hit = next((i for i, row in enumerate(th_) if row["contacts"] > 0), None)
        end = next((i for i in range(hit or 0, len(th_)) if hit is not None and th_[i]["contacts"] == 0), None)
        if end is None:
            dc.not_ok(tag, "no complete impact in the run (contact from row %s)" % hit)
            continue
        wy, vz = tr[end]["wy"], tr[end]["vz"]
        w41 = m * V * (1 + eps) * d / (Iyy + m * d * d)     # eq. (41), r cos(alpha + theta) = d
        v42 = w41 * d - eps * V                              # eq. (42), positive towards the wall
        # the code's signs: the impulse at offset d turns the body about -y; vz > 0 is away from the wall
        ew, ev = abs(-wy - w41) * r / V, abs(-vz - v42) / V
        ds = R * math.cos(t) - c * math.sin(t)
        ws = mc * V * (1 + eps) * ds / (Ic + mc * ds * ds)
        rows.append("#   %-9s %2d deg: r w+/V- %+.4f (eq. 41 %+.4f; sharp cylinder %+.4f)   V+/V- %+.4f (eq. 42 %+.4f; sharp %+.4f)"
                    % (iname, th, -wy * r / V, w41 * r / V, ws * r / V, -vz / V, v42 / V, ws * ds / V - eps))
        dc.check(tag + ": |r w+ - r w+(41)| / V- and |V+ - V+(42)| / V-", max(ew, ev), tol,
                 "r w+/V- = %+.4f vs %+.4f, V+/V- = %+.4f vs %+.4f" % (-wy * r / V, w41 * r / V, -vz / V, v42 / V))
for line in rows:
    print(line)
dc.finish()
