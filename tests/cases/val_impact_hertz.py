"""Hertz impact: contact duration against Hertz's formula, 001_558b02b5fc003581.txt eq. (50):
    t_c = 2.87 (m*^2 / (r* E*^2 v_rel))^(1/5)
with m* = m m / (m + m) (eq. (23)), r* = r r / (r + r) and E* (eq. (20)), v_rel the normal
approach speed. Undamped (restitution 1, so xi = 0 in eq. (22)), frictionless, no gravity.
(The exact coefficient of the undamped Hertz collision is 2.868; 2.87 as printed.)

Durations measured two ways, with output at every step:
  - from track.csv: the times at which the gap x1 - x0 - 2r crosses zero, linearly
    interpolated between steps;
  - from the thermo contacts column: (number of steps with contacts > 0) * dt.
Both must match eq. (50) within 2 %. Also checked: restitution 1 (elastic), |e - 1| < 1e-3.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_impact_hertz.yaml")
R, rho, E, nu, v0 = 0.005, 2500.0, 1.0e8, 0.25, 0.5    # as in the YAML
m = dc.sphere_mass(rho, R)
mstar = m * m / (m + m)                                  # 001 eq. (23)
rstar = R * R / (R + R)                                  # 001 eq. (20)
Estar = E * E / (E * (1 - nu ** 2) + E * (1 - nu ** 2))  # 001 eq. (20)
vrel = 2 * v0
tc = 2.87 * (mstar ** 2 / (rstar * Estar ** 2 * vrel)) ** 0.2   # 001 eq. (50)
dt = tc / 1000
out = os.path.join(tmp, "out")
tag = "hertz impact"
if dc.run(tag, yaml, out, [("integrator.dt", dc.fmt(dt)), ("run.end_time", dc.fmt(1.5 * tc))]):
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    b0 = [r for r in tr if r["id"] == 0]
    b1 = [r for r in tr if r["id"] == 1]
    gaps = [(r1["step"] * dt, r1["x"] - r0["x"] - 2 * R) for r0, r1 in zip(b0, b1)]
    cross = []
    for (ta, ga), (tb, gb) in zip(gaps, gaps[1:]):
        if (ga >= 0) != (gb >= 0):
            cross.append(ta + (tb - ta) * ga / (ga - gb))
    if len(cross) != 2:
        dc.not_ok(tag + ": contact duration from track.csv", "expected one contact (2 gap sign changes), found %d" % len(cross))
    else:
        t_track = cross[1] - cross[0]
        dc.check(tag + ": contact duration from track.csv vs 001 eq. (50), |t - t_c| / t_c",
                 abs(t_track - tc) / tc, 0.02, "t = %.5e s, t_c = %.5e s, dt = t_c/1000" % (t_track, tc))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    t_thermo = sum(1 for r in th if r["contacts"] > 0) * dt
    dc.check(tag + ": contact duration from thermo contacts vs 001 eq. (50), |t - t_c| / t_c",
             abs(t_thermo - tc) / tc, 0.02, "t = %.5e s" % t_thermo)
    e = (b1[-1]["vx"] - b0[-1]["vx"]) / (b0[0]["vx"] - b1[0]["vx"])
    dc.check(tag + ": restitution 1 (undamped), |e - 1|", abs(e - 1), 1e-3, "e = %.7f" % e)
dc.finish()
