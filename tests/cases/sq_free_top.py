"""Free asymmetric top (sq_free_top.yaml): verlet's rotation of aspherical bodies
(002_a4a9ff6a3ba65368.txt eq. (5)-(7); src/core/rotor.c, a symplectic splitting of the free
rigid body) over 10^5 steps. The body is an ellipsoid, so its principal inertia is exact here:
I = m/5 (b^2 + c^2, a^2 + c^2, a^2 + b^2), m = rho 4/3 pi a b c.
  - energy (thermo ke_rot) stays within 0.1 (|w| dt)^2 of its initial value (a second-order
    symplectic scheme: bounded O(dt^2) oscillation), and does not drift: its largest deviation
    in the last quarter of the run is at most 1.1 times that of the first quarter;
  - the world angular momentum L = R diag(I) R^T w (from track.csv) keeps its initial value to
    1e-9 (every sub-rotation of the splitting conserves it exactly);
  - the body-frame angular velocity follows an RK4 solution of Euler's equations (dt 1e-5 s)
    over the first 2 s (~120 rad of rotation) within 0.1 (|w| dt)^2 |w| t.
The same checks for the other integrators that accept aspherical bodies, 10^5 steps each:
trapezoid (the rule applied to the world angular momentum, 001 eq. (42) generalized; solved to
tol 1e-10 so that the scheme is measured, not the fixed-point tolerance, which at its default
1e-4 lets L and E drift by ~1e-5 over the run) and cd (velocity update at fixed orientation,
then the torque-free rotation of rotor.c; with the exponential map of dt w alone, as before,
|L - L0| / |L0| reached 0.76 within 10^4 steps); newmark, when built, within a loose 1 % over
10^4 steps. variational (isotropic kinetic energy, 003 eq. (26)) must refuse the superquadric
with a configuration error.
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
yaml = os.path.join(here, "sq_free_top.yaml")
a, b, c, rho, dt = 0.003, 0.002, 0.001, 7800.0, 2.0e-4       # as in the YAML
w0 = (30.0, 10.0, 50.0)
m = rho * 4.0 / 3.0 * math.pi * a * b * c
I = (m / 5 * (b * b + c * c), m / 5 * (a * a + c * c), m / 5 * (a * a + b * b))
wdt = math.sqrt(sum(x * x for x in w0)) * dt
out = os.path.join(tmp, "out")
tag = "free asymmetric top"


def rot(q):
    w, x, y, z = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def body_w(r):
    R = rot([r["qw"], r["qx"], r["qy"], r["qz"]])
    w = [r["wx"], r["wy"], r["wz"]]
    return R, [sum(R[i][j] * w[i] for i in range(3)) for j in range(3)]


def euler(w):
    return [(I[1] - I[2]) / I[0] * w[1] * w[2], (I[2] - I[0]) / I[1] * w[2] * w[0], (I[0] - I[1]) / I[2] * w[0] * w[1]]


def check_top(tag, out, nsteps):
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    dc.check(tag + ": %d steps run" % nsteps, abs(th[-1]["step"] - nsteps), 0, "last step %d" % th[-1]["step"])
    E = [r["ke_rot"] for r in th]
    e0, n = E[0], len(E)
    dev = [abs(e - e0) / e0 for e in E]
    dc.check(tag + ": max |E - E0| / E0 <= 0.1 (|w| dt)^2", max(dev), 0.1 * wdt ** 2, "E0 = %.6e J, |w| dt = %.3g" % (e0, wdt))
    q1, q4 = max(dev[: n // 4]), max(dev[3 * n // 4:])
    dc.check(tag + ": no energy drift, max deviation last quarter / first quarter - 1.1", max(0.0, q4 / q1 - 1.1), 0,
             "first quarter %.3e, last quarter %.3e" % (q1, q4))
    L = []
    for r in tr:
        R, wb = body_w(r)
        L.append([sum(R[i][j] * I[j] * wb[j] for j in range(3)) for i in range(3)])
    l0 = math.sqrt(sum(x * x for x in L[0]))
    dL = max(math.sqrt(sum((l[i] - L[0][i]) ** 2 for i in range(3))) for l in L) / l0
    dc.check(tag + ": world angular momentum, max |L - L0| / |L0|", dL, 1e-9, "%d samples over %g s" % (len(L), tr[-1]["time"]))
    w = body_w(tr[0])[1]
    t, h, err, T = 0.0, 1e-5, 0.0, 2.0
    for r in tr[1:]:
        if r["time"] > T + 1e-9:
            break
        while t < r["time"] - 1e-12:
            k1 = euler(w)
            k2 = euler([w[i] + h / 2 * k1[i] for i in range(3)])
            k3 = euler([w[i] + h / 2 * k2[i] for i in range(3)])
            k4 = euler([w[i] + h * k3[i] for i in range(3)])
            w = [w[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) for i in range(3)]
            t += h
        wb = body_w(r)[1]
        err = max(err, math.sqrt(sum((wb[i] - w[i]) ** 2 for i in range(3))) / math.sqrt(sum(x * x for x in w)))
    wn = math.sqrt(sum(x * x for x in w0))
    dc.check(tag + ": body-frame w vs RK4 of Euler's equations over 2 s, max |w - w_RK4| / |w|", err, 0.1 * wdt ** 2 * wn * T, "")


if dc.run(tag, yaml, out):
    check_top(tag, out, 100000)
# the other integrators' aspherical rotation: trapezoid (the rule on the world angular momentum,
# solved to 1e-10 so that the scheme, not the fixed-point tolerance, is measured) and cd (the
# velocity update, then rotor.c's torque-free rotation)
for integ, sets in (("trapezoid", [("integrator.type", "trapezoid"), ("integrator.tol", "1e-10")]),
                    ("cd", [("integrator.type", "cd")])):
    o = os.path.join(tmp, "out_" + integ)
    if dc.run(tag + " (%s)" % integ, yaml, o, sets=sets):
        check_top(tag + " (%s)" % integ, o, 100000)
# newmark (000 eq. (17)-(22): gyroscopic term in the residual), when this build has it: neither
# symplectic nor momentum-conserving for rotation, so only a loose bound - energy and angular
# momentum within 1 % over 10^4 steps (2 s, ~120 rad)
if "newmark" in subprocess.run([dc.MMDEM, "list"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode():
    o = os.path.join(tmp, "out_newmark")
    t = tag + " (newmark)"
    if dc.run(t, yaml, o, sets=[("integrator.type", "newmark"), ("run.steps", "10000")]):
        th = dc.read_csv(os.path.join(o, "thermo.csv"))
        tr = dc.read_csv(os.path.join(o, "track.csv"))
        e0 = th[0]["ke_rot"]
        dc.check(t + ": max |E - E0| / E0 over 10^4 steps", max(abs(r["ke_rot"] - e0) / e0 for r in th), 1e-2, "")
        L = []
        for r in tr:
            R, wb = body_w(r)
            L.append([sum(R[i][j] * I[j] * wb[j] for j in range(3)) for i in range(3)])
        l0 = math.sqrt(sum(x * x for x in L[0]))
        dc.check(t + ": max |L - L0| / |L0| over 10^4 steps",
                 max(math.sqrt(sum((l[i] - L[0][i]) ** 2 for i in range(3))) for l in L) / l0, 1e-2, "")
# variational handles isotropic bodies only (003 eq. (26)): it must refuse, naming the body set
log = os.path.join(tmp, "variational.log")
rc = subprocess.call([dc.MMDEM, "check", yaml, "--set", "integrator.type=variational"], stdout=open(log, "w"), stderr=subprocess.STDOUT)
msg = open(log).read().strip()
good = rc != 0 and "sq_free_top.yaml:" in msg and "variational" in msg and "superquadric" in msg
(dc.ok if good else dc.not_ok)(tag + ": integrator variational refuses a superquadric with file:line:col and the shape kind",
                               "exit %d: %s" % (rc, msg.splitlines()[-1] if msg else ""))
dc.finish()
