"""Blocky superquadrics on an incline (002_a4a9ff6a3ba65368.txt: the piling body of section
"Piling of particles", a = b = 2 mm, c = 1 mm, n1 = n2 = 4; and n = 10), Hertz-Mindlin,
friction mu = 0.5 (atan mu = 26.57 deg), restitution 0.5, E = 1e7 Pa. The incline is a
horizontal plane with gravity tilted by theta about y, g = 9.81 (sin theta, 0, -cos theta); the
bodies start flat on it at zero overlap.

Checks (expected values computed here):
  1. theta = 20 deg < atan mu, on the plane: no creep - the horizontal displacement stays below
     1e-5 m (0.5 % of a) over 0.5 s and its largest value in the second half of the run is no
     larger than in the first (+10 %: a creeping body's grows). The equilibrium tilt phi_eq of
     the single-point contact (the contact point, the body's extreme point towards the plane,
     eq. (31)-(33), straight below the centre along gravity) is solved here by bisection from
     the closed-form support point. n = 4: started flat, the body rocks about phi_eq without
     loss (a single-point contact rolling over the face dissipates nothing; 002 has no rolling
     resistance): the middle of the swing within 25 % of phi_eq (the swing is not symmetric:
     the restoring torque grows like tilt^(1/3) and the drop onto the plane at the start adds
     to it) and no growth (the largest tilt of the second half within 5 % of the first's).
     n = 10: the face is flat to 9th order and the body comes to rest at phi_eq (10 %).
  2. theta = 30 deg > atan mu: the body slides with g (sin theta - mu cos theta), slope of
     vx(t) from t = 0.1 to 0.3 s within 2 %.
  3. theta = 20 deg on the upper face of a fixed superquadric of the same shape (superquadric/
     superquadric contact, faces aligned: the Jacobian of 002 eq. (25) is singular there; before
     the fix every solve failed and the body fell through): every solve converged, the body
     stays on the face (centre height within 1e-5 m of 3 c, the fixed body's centre at c) and
     does not creep (as in 1, with 2e-5 m: it rocks on two curved faces).
  4. A body held by three fixed spheres under gravity tilted off the vertical (sticking): at
     rest after 0.3 s, the net force and torque on it below 1e-9 m g and 1e-9 m g a (force and
     torque balance with the contact points of eq. (36)-(37)), |v| < 1e-9 m/s, |w| < 1e-6 rad/s.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
MU, A, C = 0.5, 0.002, 0.001
YAML = """name: {name}
domain: {{lo: [-0.1, -0.1, -0.01], hi: [0.1, 0.1, 0.05]}}
gravity: [{gx}, {gy}, {gz}]
materials:
  grain: {{density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.3, restitution: 0.5, friction: {mu}}}
contact:
  - {{pair: default, law: hertz_mindlin}}
shapes:
  p: {{type: superquadric, half_axes: [{a}, {a}, {c}], blockiness: [{n}, {n}], curvature: mean}}
  s: {{type: sphere, radius: 0.001}}
bodies:
  - {{shape: p, material: grain, list: [{{x: [0, 0, {z0}], q: {q0}}}]}}
{extra}
integrator: {{type: verlet, dt: 1.0e-5}}
run: {{end_time: {te}}}
output: {{thermo_every: 1000, track: [0]}}
"""
PLANE = "walls:\n  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: grain}"
FIXED_SQ = "  - {shape: p, material: grain, fixed: true, list: [{x: [0, 0, 0.001]}]}"
SPHERES = ("  - shape: s\n    material: grain\n    fixed: true\n    list:\n"
           "      - {x: [-0.0015, 0.0003, 0]}\n      - {x: [0.0012, -0.0002, 0.0001]}\n      - {x: [0.0001, 0.0014, -0.0001]}")


def run(name, n, gravity, z0, extra, te, q0="[1, 0, 0, 0]"):
    y = os.path.join(tmp, name + ".yaml")
    with open(y, "w") as f:
        f.write(YAML.format(name=name, gx=dc.fmt(gravity[0]), gy=dc.fmt(gravity[1]), gz=dc.fmt(gravity[2]), mu=MU, a=A, c=C, n=n, z0=z0,
                            q0=q0, extra=extra, te=te))
    out = os.path.join(tmp, name)
    if not dc.run(name, y, out):
        return None, None
    return dc.read_csv(os.path.join(out, "track.csv")), dc.read_csv(os.path.join(out, "thermo.csv"))


def tilted(theta):
    return (dc.G * math.sin(theta), 0.0, -dc.G * math.cos(theta))


def tilt(r):
    """rotation angle of the orientation quaternion (from its vector part: acos(qw) loses the
    small angles)"""
    return 2 * math.asin(min(1.0, math.sqrt(r["qx"] ** 2 + r["qy"] ** 2 + r["qz"] ** 2)))


def no_creep(tag, tr, tol):
    h = len(tr) // 2
    d = [math.hypot(r["x"], r["y"]) for r in tr]
    dc.check(tag + ": no creep over 0.5 s, max horizontal displacement (m)", max(d), tol)
    dc.check(tag + ": no creep, max displacement of the second half / first half - 1 (a creeping body's grows)",
             max(0.0, max(d[h:]) / max(d[:h]) - 1), 0.1, "%.3g vs %.3g m" % (max(d[h:]), max(d[:h])))


def support(n, d):
    """extreme point of |x/a|^n + |y/a|^n + |z/c|^n = 1 in direction d (Hoelder: x_i ~
    sign(d_i) a_i (a_i |d_i|)^(1/(n-1)), normalized onto the surface)"""
    ax = (A, A, C)
    y = [math.copysign(ax[i] * (ax[i] * abs(d[i])) ** (1.0 / (n - 1)), d[i]) for i in range(3)]
    s = sum(abs(y[i] / ax[i]) ** n for i in range(3)) ** (1.0 / n)
    return [v / s for v in y]


def phi_eq(n, theta):
    """tilt phi (about y) at which the contact point lies straight below the centre along
    gravity: with the body turned by phi, the extreme point towards the plane (world -z) is
    p = R(phi) y*(R^T (0, 0, -1)); equilibrium when p is parallel to g, p_x / -p_z = tan theta"""
    def h(phi):
        c, s = math.cos(phi), math.sin(phi)
        d = (s, 0.0, -c)                      # R^T (0, 0, -1) for a rotation by phi about y
        y = support(n, d)
        px, pz = c * y[0] + s * y[2], -s * y[0] + c * y[2]
        return px / -pz - math.tan(theta)
    lo, hi = 0.0, 0.5
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if h(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


th20, th30 = math.radians(20), math.radians(30)
for n in (4, 10):
    tr, _ = run("plane20_n%d" % n, n, tilted(th20), C, PLANE, 0.5)
    if tr:
        ph = phi_eq(n, th20)
        tag = "n = %d on the plane at 20 deg (< atan mu)" % n
        no_creep(tag, tr, 1e-5)
        if n == 4:
            h = len(tr) // 2
            tl = [tilt(r) for r in tr]
            mid = 0.5 * (max(tl) + min(tl))
            dc.check(tag + ": rocks about the equilibrium tilt, |middle of the swing - phi_eq| / phi_eq", abs(mid - ph) / ph, 0.25,
                     "tilt %.4g to %.4g deg, phi_eq %.4g deg, |w| up to %.2g rad/s" % (math.degrees(min(tl)), math.degrees(max(tl)), math.degrees(ph), max(abs(r["wy"]) for r in tr)))
            dc.check(tag + ": rocking not growing, max tilt of the second half / first half - 1", max(0.0, max(tl[h:]) / max(tl[:h]) - 1), 0.05)
        else:
            r = tr[-1]
            dc.check(tag + ": at rest at the equilibrium tilt at 0.5 s, |tilt - phi_eq| / phi_eq", abs(tilt(r) - ph) / ph, 0.1,
                     "tilt %.4g rad, phi_eq %.4g rad, |w| %.2g rad/s" % (tilt(r), ph, math.sqrt(r["wx"] ** 2 + r["wy"] ** 2 + r["wz"] ** 2)))

tr, _ = run("plane30_n4", 4, tilted(th30), C, PLANE, 0.3)
if tr:
    pts = [(r["time"], r["vx"]) for r in tr if r["time"] >= 0.1 - 1e-9]
    m = len(pts)
    sx = sum(p[0] for p in pts); sy = sum(p[1] for p in pts)
    sxx = sum(p[0] ** 2 for p in pts); sxy = sum(p[0] * p[1] for p in pts)
    acc = (m * sxy - sx * sy) / (m * sxx - sx * sx)
    ref = dc.G * (math.sin(th30) - MU * math.cos(th30))
    dc.check("n = 4 on the plane at 30 deg (> atan mu): slides with g (sin theta - mu cos theta), relative error of the acceleration", abs(acc - ref) / ref, 0.02,
             "%.5g vs %.5g m/s^2" % (acc, ref))

tr, th = run("sqsq20_n4", 4, tilted(th20), 3 * C, FIXED_SQ, 0.5)
if tr:
    dc.check("n = 4 on the face of a fixed superquadric at 20 deg: every contact solve converged (aligned faces)", th[-1]["sq_failures"], 0)
    dc.check("n = 4 on the face of a fixed superquadric: stays on it, max |z - 3c| (m)", max(abs(r["z"] - 3 * C) for r in tr), 1e-5)
    no_creep("n = 4 on the face of a fixed superquadric at 20 deg", tr, 2e-5)

g3 = (1.0, 0.5, -dc.G)
tr, th = run("three_n4", 4, g3, 0.0026, SPHERES, 0.3, q0="[0.99, 0.05, 0.1, 0.02]")
if tr:
    r = tr[-1]
    vol = 8 * A * A * C * (math.gamma(1.25) ** 3 / math.gamma(1.75))   # |x|^4 + |y|^4 + |z|^4 <= 1 scaled: 8 Gamma(1 + 1/4)^3 / Gamma(1 + 3/4)
    mg = 2500 * vol * math.sqrt(sum(v * v for v in g3))
    fnet = math.sqrt(r["fx"] ** 2 + r["fy"] ** 2 + r["fz"] ** 2)
    tnet = math.sqrt(r["tx"] ** 2 + r["ty"] ** 2 + r["tz"] ** 2)
    dc.check("n = 4 held by three fixed spheres under tilted gravity: net force / (m g) at rest", fnet / mg, 1e-9)
    dc.check("n = 4 held by three fixed spheres: net torque / (m g a) at rest", tnet / (mg * A), 1e-9)
    dc.check("n = 4 held by three fixed spheres: |v| (m/s) at rest", math.sqrt(r["vx"] ** 2 + r["vy"] ** 2 + r["vz"] ** 2), 1e-9)
    dc.check("n = 4 held by three fixed spheres: |w| (rad/s) at rest", math.sqrt(r["wx"] ** 2 + r["wy"] ** 2 + r["wz"] ** 2), 1e-6)
dc.finish()
