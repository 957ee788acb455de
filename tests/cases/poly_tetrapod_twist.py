"""000_c57329b1a40312e0.txt example 3.4: a tetrapod (config/meshes/tetrapod.stl, non-convex,
density 2400) rests on three leg tips and is twisted about z by M(t) = 750 N m t / 2 s
(poly_tetrapod_twist.yaml), mu = 0.6.
Computed here, independently of the code: the volume and centre of mass of the STL surface
(divergence theorem), its lowest vertices (the three contact points: the next vertices are
27 mm higher, beyond g_bar = 10 mm), the normal forces N_i of the three points from statics
(sum N_i = W, sum N_i (x_i, y_i) = 0 about the centre of mass), and the Coulomb limit of the
twisting moment about the vertical axis through the centre, M_slip = mu sum N_i r_i.
Checked (the reactive moment is the ground's mz in walls.csv, sampled every 10 ms):
  - three pointwise contacts while at rest (thermo.csv);
  - sticking: the reactive moment follows the applied one within 1 % of M_slip while
    M(t) < 0.9 M_slip;
  - the slip moment: the reactive moment after M(t) > 1.1 M_slip equals M_slip within 2 %
    (000: "the induced reactive moment keeps constant");
  - the tetrapod turns once the limit is passed (|w_z| > 0.1 rad/s at the end) and not before
    (|w_z| < 1e-3 rad/s while M < 0.9 M_slip).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "poly_tetrapod_twist.yaml")
stl = os.path.join(here, "..", "..", "config", "meshes", "tetrapod.stl")
rho, g, mu, gbar, Mmax, T = 2400.0, 9.81, 0.6, 0.01, 750.0, 2.0

tris, cur = [], []
with open(stl) as fp:
    for line in fp:
        w = line.split()
        if w and w[0] == "vertex":
            cur.append(tuple(float(x) for x in w[1:]))
            if len(cur) == 3:
                tris.append(cur)
                cur = []
V, m1 = 0.0, [0.0, 0.0, 0.0]
for a, b, c in tris:
    det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])
    V += det / 6
    for j in range(3):
        m1[j] += det / 24 * (a[j] + b[j] + c[j])
com = [x / V for x in m1]
W = rho * V * g
verts = sorted(set(p for t in tris for p in t), key=lambda p: p[2])
z0 = verts[0][2]
low = [p for p in verts if p[2] - z0 < 1e-9]
nxt = min(p[2] for p in verts if p[2] - z0 >= 1e-9) - z0
assert len(low) == 3 and nxt > gbar, (len(low), nxt)
# statics of three supports: [1 1 1; x; y] N = [W 0 0]
X = [p[0] - com[0] for p in low]
Y = [p[1] - com[1] for p in low]
A = [[1.0, 1.0, 1.0], X, Y]
det3 = lambda M: (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) + M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]))
D = det3(A)
N = []
for k in range(3):
    Mk = [row[:] for row in A]
    for i, v in enumerate((W, 0.0, 0.0)):
        Mk[i][k] = v
    N.append(det3(Mk) / D)
Mslip = mu * sum(N[i] * math.hypot(X[i], Y[i]) for i in range(3))
# centre height: the three tips inside the skin, just below g_bar (part (i) deflects by N/eps1)
zc = com[2] - z0 + gbar - 1e-5
out = os.path.join(tmp, "twist")
if dc.run("3.4 tetrapod twist run", yaml, out, [("bodies.0.list.0.x", "[%s, %s, %s]" % (dc.fmt(0), dc.fmt(0), dc.fmt(zc)))]):
    w = dc.read_csv(os.path.join(out, "walls.csv"))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    M = lambda t: Mmax * min(t / T, 1.0)
    nc = set(int(r["contacts"]) for r in th if 0.05 < r["time"] and M(r["time"]) < 0.9 * Mslip)
    dc.check("3.4 three pointwise contacts (leg tips) at rest", 0 if nc == {3} else 1, 0, "contacts seen %s" % sorted(nc))
    st = [abs(r["mz"] - M(r["time"])) for r in w if 0.05 < r["time"] and M(r["time"]) < 0.9 * Mslip]
    dc.check("3.4 sticking: reactive moment = applied within 1 % of M_slip", max(st) / Mslip, 1e-2, "%d samples, M_slip %.5g N m (W %.5g N)" % (len(st), Mslip, W))
    sl = [r["mz"] for r in w if M(r["time"]) > 1.1 * Mslip]
    if not sl:
        dc.not_ok("3.4 slip moment", "the applied moment never exceeds 1.1 M_slip = %.4g N m" % (1.1 * Mslip))
    else:
        err = max(abs(x - Mslip) for x in sl) / Mslip
        dc.check("3.4 slip moment = mu sum N_i r_i within 2 %", err, 2e-2, "mean %.5g N m vs M_slip %.5g N m over %d samples" % (sum(sl) / len(sl), Mslip, len(sl)))
    wz_stick = max(abs(r["wz"]) for r in tr if 0.05 < r["time"] and M(r["time"]) < 0.9 * Mslip)
    dc.check("3.4 no twist before the limit: |w_z| < 1e-3 rad/s", wz_stick, 1e-3)
    dc.check("3.4 twisting after the limit: |w_z| > 0.1 rad/s at the end", 0 if abs(tr[-1]["wz"]) > 0.1 else 1, 0, "w_z %.3g rad/s" % tr[-1]["wz"])
dc.finish()
