"""newmark's onset transform (src/integrators/newmark.c DemNmOnsetExponent, DemNmOnsetScale; key
onset_transform, issue 5): at a stiff sphere's first contact the root of the step lies at a
tiny overlap where the Hertzian dashpot d* delta^(1/4) (-vn) carries the force; Newton in
delta alternated open and closed iterates there (session 10). The transform takes, for a
closed contact whose normal force is concave in the overlap, the Newton step in
s = delta^p (p the law's local exponent), which only changes the step, not the residual.

Case: one glass sphere (r = 1 mm, density 2500, E = 63 GPa, nu = 0.22, restitution 0.3,
hertz_mindlin) at gap g0 above a floor, moving down at V, gravity 9.81, one newmark step of
dt h (beta 0.3025, gamma 0.6 as benchmarks/stiff_pile; 14-40 collision times), adapt true.
Three (V, h, g0) from a scan of V in {0.02, 0.05, 0.145, 0.3, 0.6} m/s, h in {2, 3, 5, 7,
10, 15, 20} x 1e-5 s and g0 in {0.3, 1, 3, 10} x 1e-6 m with adapt: false (when written: 10
of the 140 did not converge in 15 iterations without the transform, all 10 did with it, in
2-6; of the other 130, 125 took the same number of iterations, 3 one or two fewer and 2 one
or two more; roots at overlaps of 1e-18 ... 1e-8 m), those three of the 10 whose root
overlap (1e-10 m) is resolved by the positions' round-off (~2e-19 m at z = 1 mm): below
~1e-15 m the law's residual at the printed state is round-off. Checks per case:
  - without the transform (onset_transform: false) the first step is cut (its solve stalls:
    thermo.csv rejected >= 1 when the first step is accepted): the cycle this treats;
  - with it (the default) the first step converges in <= 6 Newton iterations, not cut;
  - the accepted state is the root of the unmodified law, by an independent computation:
    the 1-D residual of 000 eq. (61) for the sphere's vertical increment u,
      r(u) = m (a1 u - a2 v0 - a3 a0) + m g - fn(delta, vn),
      a0 = -g, delta = r - (z0 + u), vn = a4 u + a5 v0 + a6 a0 (eq. (20)-(21)),
      fn = 4/3 E* sqrt(r) delta^(3/2) - 2 xi sqrt(m kn) vn, kn = 2 E* sqrt(r delta)
      (001 eq. (19)-(22), E* = E / (2 (1 - nu^2)) for two glass bodies, xi = |ln e| /
      sqrt(pi^2 + ln^2 e), the wall's mass infinite: m* = m),
    evaluated at mmdem's z1 (track.csv) is within the solve's tolerance (SNES rtol 1e-8 of
    the predictor's |r|, a factor 2 of margin), v1 of track.csv is the Newmark velocity of
    that u to 1e-9, and the root (by bisection of the monotone r) agrees with z1;
  - the contact is closed at the root with an overlap of 1e-12 ... 1e-6 m, and the dashpot
    carries more of the force than the Hertz spring there (the regime of the onset cycles).
Config: `onset_transform: maybe` is an error naming file:line:col.
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
R, RHO, E, NU, EREST, G = 0.001, 2500.0, 63.0e9, 0.22, 0.3, 9.81
BETA, GAMMA = 0.3025, 0.6
m = dc.sphere_mass(RHO, R)
Es = E / (2 * (1 - NU * NU))
xi = abs(math.log(EREST)) / math.sqrt(math.pi ** 2 + math.log(EREST) ** 2)
YAML = """name: newmark_onset
domain: {lo: [-0.005, -0.005, -0.005], hi: [0.005, 0.005, 0.01]}
gravity: [0, 0, -9.81]
""" + dc.GLASS_BEADS + """bodies:
  - {shape: bead, material: glass, list: [{x: [0, 0, %r], v: [0, 0, %r]}]}
""" + dc.FLOOR + """integrator: {type: newmark, dt: %r, beta: 0.3025, gamma: 0.6, max_iterations: 15}
run: {end_time: %r}
output: {thermo_every: 1, vtk_every: -1, track: [0]}
"""


def fn_law(delta, vn):
    kn = 2 * Es * math.sqrt(R * delta)
    return 4.0 / 3.0 * Es * math.sqrt(R) * delta ** 1.5 - 2 * xi * math.sqrt(m * kn) * vn, 2 * xi * math.sqrt(m * kn) * abs(vn)


def residual(u, z0, v0, h):
    a1, a2, a3 = 1 / (BETA * h * h), 1 / (BETA * h), (1 - 2 * BETA) / (2 * BETA)
    a4, a5, a6 = GAMMA / (BETA * h), 1 - GAMMA / BETA, (1 - GAMMA / (2 * BETA)) * h
    a0 = -G
    delta = R - (z0 + u)
    vn = a4 * u + a5 * v0 + a6 * a0
    f = fn_law(delta, vn)[0] if delta > 0 else 0.0
    return m * (a1 * u - a2 * v0 - a3 * a0) + m * G - f, vn


for k, (V, h, g0) in enumerate(((0.02, 7e-5, 1e-6), (0.145, 1e-4, 1e-5), (0.6, 2e-5, 1e-5))):
    name = "newmark_onset: V %g m/s, dt %g s, gap %g m" % (V, h, g0)
    z0, v0 = R + g0, -V
    y = os.path.join(tmp, "onset%d.yaml" % k)
    # a little more than the first step: the run ends with its first accepted step (or the cut ones)
    open(y, "w").write(YAML % (z0, v0, h, h))
    res = {}
    for tf in ("false", "true"):
        out = os.path.join(tmp, "o%d_%s" % (k, tf))
        if not dc.run("%s, onset_transform %s" % (name, tf), y, out, [("integrator.onset_transform", tf)]):
            continue
        th = dc.read_csv(os.path.join(out, "thermo.csv"))
        tr = dc.read_csv(os.path.join(out, "track.csv"))
        res[tf] = (th[1], tr[-1])
    if "false" in res:
        r1 = res["false"][0]
        (dc.ok if r1["rejected"] >= 1 else dc.not_ok)("%s: without the transform the first step is cut" % name,
                                                    "rejected %d, iterations of the accepted step %d, its dt %g s" % (r1["rejected"], r1["iterations"], r1["dt"]))
    if "true" not in res:
        continue
    r1, t1 = res["true"]
    (dc.ok if r1["rejected"] == 0 and r1["iterations"] <= 6 and abs(r1["time"] - h) <= 1e-12 * h else dc.not_ok)(
        "%s: with the transform the first step converges in <= 6 Newton iterations, not cut" % name,
        "iterations %d, rejected %d, t %g s" % (r1["iterations"], r1["rejected"], r1["time"]))
    z1, v1 = t1["z"], t1["vz"]
    u = z1 - z0
    r_mm, vn = residual(u, z0, v0, h)
    r_pred, _ = residual(h * v0 - 0.5 * h * h * G, z0, v0, h)
    dc.check("%s: the law's residual of eq. (61) at mmdem's state within the solve's tolerance" % name,
             abs(r_mm) / (2e-8 * abs(r_pred)), 1.0, "|r| %.3e N, predictor's |r| %.3e N" % (abs(r_mm), abs(r_pred)))
    dc.check("%s: v1 is Newmark's velocity of the increment" % name, abs(v1 - vn) / V, 1e-9, "v1 %.12g, a4 u + a5 v0 + a6 a0 %.12g m/s" % (v1, vn))
    lo, hi = h * v0 - 0.5 * h * h * G - 1e-3, 1e-3  # r(lo) < 0 < r(hi): r increases with u
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if residual(mid, z0, v0, h)[0] > 0:
            hi = mid
        else:
            lo = mid
    us = 0.5 * (lo + hi)
    ds = R - (z0 + us)
    dc.check("%s: the root by bisection agrees with mmdem's state" % name, abs(u - us) / ds, 1e-6,
             "overlap at the root %.6e m, mmdem's %.6e m" % (ds, R - z1))
    fe = 4.0 / 3.0 * Es * math.sqrt(R) * ds ** 1.5
    fd = fn_law(ds, residual(us, z0, v0, h)[1])[1]
    (dc.ok if 1e-12 < ds < 1e-6 and fd > fe else dc.not_ok)("%s: a dashpot-carried onset root" % name,
                                                           "overlap %.3e m, |dashpot| %.3e N, spring %.3e N" % (ds, fd, fe))
y = os.path.join(tmp, "bad.yaml")
bad = (YAML % (R + 1e-6, -0.1, 1e-4, 1e-4)).replace("max_iterations: 15}", "max_iterations: 15, onset_transform: maybe}")
open(y, "w").write(bad)
line = bad.splitlines()[13]  # line 14, the integrator; libyaml's column of the value + 1
p = subprocess.run([dc.MMDEM, "run", y, "--quiet", "--out", os.path.join(tmp, "bad")], capture_output=True, text=True)
want = "bad.yaml:14:%d: integrator.onset_transform: expected true or false, got 'maybe'" % (line.index("maybe") + 1)
(dc.ok if p.returncode != 0 and want in p.stderr + p.stdout else dc.not_ok)("newmark_onset: a bad onset_transform names file:line:col",
                                                                         "exit %d, %s" % (p.returncode, (p.stderr + p.stdout).strip()[-200:]))
dc.finish()
