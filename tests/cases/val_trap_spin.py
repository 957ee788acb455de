"""001_558b02b5fc003581.txt example 5.1: dynamics of a spinning particle over a flat surface.

A sphere of radius r = 0.2 m and mass m = 1000 kg (density m / (4/3 pi r^3)), E = 1e10 Pa,
nu = 0.25, no damping (xi = 0: restitution 1), mu_s = mu_d = 0.25, is released on a rigid
plane (normal +y, gravity -y) with v(0) = (2.355, 0, 0) m/s and w(0) = (0, 0, -127.03) rad/s.
The contact point slides backwards (v_C = v + w r = -23.051 m/s), so friction mu m g pushes the
sphere forward and brakes its spin (001 eq. (51)-(52)):
    v(t) = v0 + mu g t,   w(t) = w0 + 5 mu g / (2 r) t,   v_C(t) = -23.051 + 8.584 t
until pure rolling at t_roll = -(v0 + w0 r) / (7/2 mu g) = 2.685 s (001 eq. (53): 2.69 s), with
v_roll = 8.941 m/s and w_roll = -44.70 rad/s (001 eq. (54) evaluates (51) at the rounded
2.69 s: 8.95 m/s and -44.57 rad/s). 001's own simulation gives 2.69 s, 8.94 m/s, -44.71 rad/s.
The run uses dt = 1e-4 s, phi = 0.5, tol 1e-4 (as 001) and hertz_mindlin with
`tangential: rolling_spring` (001 eq. (25)-(39)); the sphere starts at its static Hertz
overlap (m g / (4/3 E* sqrt(r)))^(2/3) so that it does not bounce (E* of eq. (20) with the
plane of the same material).

After t_roll the stuck tangential spring (no tangential damping in 001's model) oscillates
with an amplitude up to mu m g about the rolling state; v_roll and w_roll are therefore the
means over [3.0, 3.5] s (many periods of that oscillation, about 0.01 s).

Checks: t_roll (zero of v_C, interpolated), v_roll, w_roll within 0.5 % of the paper's values
and of the exact analytic ones; the sliding phase against eq. (51) at t = 1 s within 1e-3 (the collider puts the contact point in
the middle of the overlap: the friction moment's arm is r - delta/2, which slows the spin-down
by delta / (2 r) = 5e-4);
the energy balance (kinetic + potential + contact + dissipated) within 1e-3 of the energy
dissipated; the mean number of sweeps per step (001: "about three"), printed and <= 3.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
r, m, E, nu, mu, g = 0.2, 1000.0, 1.0e10, 0.25, 0.25, 9.81
v0, w0 = 2.355, -127.03
rho = m / (4.0 / 3.0 * math.pi * r ** 3)
Es = E * E / (E * (1 - nu * nu) + E * (1 - nu * nu))
d0 = (m * g / (4.0 / 3.0 * Es * math.sqrt(r))) ** (2.0 / 3.0)
yaml = os.path.join(tmp, "spin.yaml")
with open(yaml, "w") as fp:
    fp.write("""name: trap_spin
domain: {lo: [-1, -0.5, -1], hi: [40, 1, 1]}
gravity: [0, %r, 0]
materials:
  m: {density: %r, youngs_modulus: %r, poisson_ratio: %r, restitution: 1.0, friction: %r}
contact:
  - {pair: default, law: hertz_mindlin, params: {tangential: rolling_spring}}
shapes:
  ball: {type: sphere, radius: %r}
bodies:
  - {shape: ball, material: m, list: [{x: [0, %r, 0], v: [%r, 0, 0], w: [0, 0, %r]}]}
walls:
  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 1, 0], material: m}
integrator: {type: trapezoid, dt: 1.0e-4, phi: 0.5, tol: 1.0e-4}
run: {end_time: 3.5}
output: {thermo_every: 10, track: [0]}
""" % (-g, rho, E, nu, mu, r, r - d0, v0, w0))

t_an = -(v0 + w0 * r) / (3.5 * mu * g)
v_an = v0 + mu * g * t_an
w_an = w0 + 2.5 * mu * g / r * t_an
paper = {"t": 2.69, "v": 8.95, "w": -44.57}
tag = "001 5.1 spinning sphere"
out = os.path.join(tmp, "out")
if dc.run(tag, yaml, out):
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    ts = [x["time"] for x in tr]
    slip = [x["vx"] + x["wz"] * r for x in tr]
    j = next((i for i, s in enumerate(slip) if s >= 0), None)
    if j is None or j == 0:
        dc.not_ok(tag + ": rolling starts", "the contact point never stopped sliding")
    else:
        t_roll = ts[j - 1] + (ts[j] - ts[j - 1]) * (-slip[j - 1]) / (slip[j] - slip[j - 1])
        late = [x for x in tr if 3.0 <= x["time"] <= 3.5]
        v_roll = sum(x["vx"] for x in late) / len(late)
        w_roll = sum(x["wz"] for x in late) / len(late)
        for key, val, an in (("t", t_roll, t_an), ("v", v_roll, v_an), ("w", w_roll, w_an)):
            what = {"t": "t_roll (eq. (53))", "v": "v_roll (eq. (54), mean over [3, 3.5] s)", "w": "w_roll (eq. (54), mean over [3, 3.5] s)"}[key]
            dc.check(tag + ": %s vs 001's %g" % (what, paper[key]), abs(val / paper[key] - 1), 5e-3,
                     "got %.5f, paper %g, exact analytic %.5f" % (val, paper[key], an))
            dc.check(tag + ": %s vs the exact analytic value" % what, abs(val / an - 1), 5e-3, "got %.5f, analytic %.5f" % (val, an))
        s1 = min(tr, key=lambda x: abs(x["time"] - 1.0))
        dc.check(tag + ": sliding phase, v(1 s) and w(1 s) vs eq. (51)",
                 max(abs(s1["vx"] - (v0 + mu * g * s1["time"])) / v0, abs(s1["wz"] - (w0 + 2.5 * mu * g / r * s1["time"])) / abs(w0)), 1e-3,
                 "v %.6f, w %.5f at t = %.4f s" % (s1["vx"], s1["wz"], s1["time"]))
    e0, e1, diss = th[0]["e_balance"], th[-1]["e_balance"], th[-1]["dissipated"]
    dc.check(tag + ": energy balance closes (|e_balance - e0| / dissipated)", abs(e1 - e0) / diss, 1e-3,
             "e0 %.6g J, end %.6g J, dissipated %.6g J" % (e0, e1, diss))
    its = [x["iterations"] for x in th[1:]]
    mean = sum(its) / len(its)
    dc.check(tag + ": mean sweeps per step (thermo samples) <= 3 (001: about three)", max(0.0, mean - 3), 0.0,
             "mean %.3f sweeps + 1 committing evaluation per step, max %d; rejected steps %d" % (mean, max(its), th[-1]["rejected"]))
dc.finish()
