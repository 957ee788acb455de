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
"""
import math
import os
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


if dc.run(tag, yaml, out):
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    dc.check(tag + ": 10^5 steps run", abs(th[-1]["step"] - 100000), 0, "last step %d" % th[-1]["step"])
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
    dc.check(tag + ": world angular momentum, max |L - L0| / |L0|", dL, 1e-9, "%d samples over 20 s" % len(L))
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
dc.finish()
