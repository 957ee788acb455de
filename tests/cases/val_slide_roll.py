"""Sliding to rolling: a sphere launched with v0 (w0 = 0) on a floor with friction mu.
While it slides the kinetic friction mu m g decelerates it and spins it up:
    v(t) = v0 - mu g t,   w(t) r = (m r^2 / I) mu g t = 5/2 mu g t   (I = 2/5 m r^2)
until the contact point sticks, v = w r, at
    t_roll = 2 v0 / (7 mu g),   v_roll = 5/7 v0,
after which it rolls at constant speed (no rolling resistance). The contact law is the
Hooke law with Coulomb friction of 003_9f0cdbfccae61a56.txt eq. (20)-(25) (hooke.c): stiff kn
(static overlap 1e-5 r), restitution 0.5 to damp the normal direction, dt = (normal
contact time) / 100. The sphere starts touching the floor (initial overlaps are refused) and
settles into its static overlap m g / kn within a few normal contact times (~1e-4 s); as it
starts and ends that transient at rest in z, the normal impulse over it is exactly m g t, and
so is the friction impulse mu m g t while it slides.

Checks (track.csv at every 10th step, dt ~ 1.4e-6 s, i.e. a t_roll / 7000 sampling):
  rolling time: first time |vx - wy r| < 1e-3 v0, within 1 % (the slip velocity falls at
                7/2 mu g, so the threshold makes this time early by 1e-3 t_roll);
                also the slip-velocity zero, linearly interpolated;
  speed:        vx averaged over [1.1, 1.5] t_roll against 5/7 v0, within 1 %, and at the
                rolling time itself;
  sliding phase: vx at t_roll / 2 against v0 - mu g t (1 %).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_slide_roll.yaml")
R, rho, v0, mu, kn, e = 0.005, 7800.0, 1.0, 0.3, 1.0e6, 0.5   # as in the YAML
g = 9.81
m = dc.sphere_mass(rho, R)
le = math.log(e)
zeta = -le / math.sqrt(math.pi ** 2 + le ** 2)
t_n = math.pi / (math.sqrt(kn / m) * math.sqrt(1 - zeta ** 2))    # normal contact time (meff = m)
dt = t_n / 100
t_roll = 2 * v0 / (7 * mu * g)
v_roll = 5.0 / 7.0 * v0
tag = "sliding to rolling"
out = os.path.join(tmp, "out")
sets = [("integrator.dt", dc.fmt(dt)), ("run.end_time", dc.fmt(1.5 * t_roll))]
if dc.run(tag, yaml, out, sets):
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    ts = [r["step"] * dt for r in tr]
    slip = [r["vx"] - r["wy"] * R for r in tr]
    thr = 1e-3 * v0
    k = next((i for i, s in enumerate(slip) if abs(s) < thr), None)
    if k is None:
        dc.not_ok(tag + ": rolling time", "|v - w r| never fell below %g m/s" % thr)
    else:
        dc.check(tag + ": rolling time (|v - w r| < 1e-3 v0) vs 2 v0 / (7 mu g)", abs(ts[k] - t_roll) / t_roll, 0.01,
                 "t = %.6e s, analytic %.6e s, dt = %.3e s" % (ts[k], t_roll, dt))
        j = next(i for i, s in enumerate(slip) if s <= 0) if any(s <= 0 for s in slip) else k
        tz = ts[j - 1] + (ts[j] - ts[j - 1]) * slip[j - 1] / (slip[j - 1] - slip[j]) if j > 0 else ts[j]
        dc.check(tag + ": zero of the slip velocity (interpolated) vs 2 v0 / (7 mu g)", abs(tz - t_roll) / t_roll, 0.01,
                 "t = %.6e s" % tz)
        dc.check(tag + ": speed at the rolling time vs 5/7 v0", abs(tr[k]["vx"] - v_roll) / v_roll, 0.01,
                 "v = %.6f m/s, 5/7 v0 = %.6f m/s" % (tr[k]["vx"], v_roll))
    late = [r["vx"] for t, r in zip(ts, tr) if 1.1 * t_roll <= t <= 1.5 * t_roll]
    vl = sum(late) / len(late)
    dc.check(tag + ": rolling speed (mean over [1.1, 1.5] t_roll) vs 5/7 v0", abs(vl - v_roll) / v_roll, 0.01,
             "v = %.6f m/s" % vl)
    slide = min(zip(ts, tr), key=lambda p: abs(p[0] - 0.5 * t_roll))
    va = v0 - mu * g * slide[0]
    dc.check(tag + ": sliding phase, vx(t_roll/2) vs v0 - mu g t", abs(slide[1]["vx"] - va) / va, 0.01,
             "v = %.6f m/s, analytic %.6f m/s" % (slide[1]["vx"], va))
dc.finish()
