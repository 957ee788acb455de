"""newmark (000 eq. (20)-(22), src/integrators/newmark.c) against verlet on two-sphere head-on
impacts, issue 5: the coefficient of restitution and the contact duration of newmark at
dt = tc/20 agree with those of verlet at dt = tc/160 within 1 %.

Cases (no gravity, no friction): val_impact_hooke.yaml with kn from 003 section 3
(k d / (m g) = 195000) and gamma_n for e = 0.9 (zeta = -ln e / sqrt(pi^2 + ln^2 e),
gamma_n = 2 zeta w0, tc = pi / w_d, evaluated here); val_impact_hertz.yaml with restitution
0.9 (hertz_mindlin's damping, 001 eq. (22)-(23)), tc from 001 eq. (50) for the undamped
Hertz contact (the reference run's own duration is what is compared, so eq. (50) only sets dt).
Measured from track.csv (every step): restitution = -(post/pre) relative normal speed of the
two spheres; contact duration = the time between the two zero crossings of the gap
|x1 - x0| - 2R, each located by linear interpolation between the steps around it (the gap
is ~linear in t there, its speed being the approach/separation speed).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
R, rho = 0.005, 2500.0
m = dc.sphere_mass(rho, R)


def measure(out):
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    tt = {int(r["step"]): r["time"] for r in th}
    b0 = [r for r in tr if r["id"] == 0]
    b1 = [r for r in tr if r["id"] == 1]
    t = [tt.get(int(r["step"]), r["time"]) for r in b0]
    gap = [abs(q["x"] - p["x"]) - 2 * R for p, q in zip(b0, b1)]
    cross = []
    for k in range(1, len(gap)):
        if (gap[k - 1] >= 0) != (gap[k] >= 0):
            s = gap[k - 1] / (gap[k - 1] - gap[k])
            cross.append(t[k - 1] + s * (t[k] - t[k - 1]))
    pre = b1[0]["vx"] - b0[0]["vx"]
    post = b1[-1]["vx"] - b0[-1]["vx"]
    dur = cross[1] - cross[0] if len(cross) >= 2 else float("nan")
    return -post / pre, dur, len(cross)


# Hooke, e = 0.9
d = 2 * R
kn = 195000.0 * m * dc.G / d
meff = m / 2
w0 = math.sqrt(kn / meff)
le = math.log(0.9)
zeta = -le / math.sqrt(math.pi ** 2 + le ** 2)
gn = 2 * zeta * w0
tc_hooke = math.pi / math.sqrt(w0 ** 2 - 0.25 * gn ** 2)
hooke = ("hooke", os.path.join(here, "val_impact_hooke.yaml"), tc_hooke,
         [("contact.0.params.kn", dc.fmt(kn)), ("contact.0.params.gamma_n", dc.fmt(gn)),
          ("contact.0.params.gamma_t", dc.fmt(gn / 2)),
          # start 1 mm apart (no initial contact), both integrators see the onset
          ("bodies.0.list.0.x", "[-0.0055, 0, 0]"), ("bodies.0.list.1.x", "[0.0055, 0, 0]")])
# Hertz, restitution 0.9: tc of 001 eq. (50) for the undamped contact sets dt
E, nu, vrel = 1.0e8, 0.25, 1.0
Estar = E / (2 * (1 - nu * nu))
tc_hertz = 2.87 * (meff ** 2 / (R / 2 * Estar ** 2 * vrel)) ** 0.2
hertz = ("hertz", os.path.join(here, "val_impact_hertz.yaml"), tc_hertz,
         [("materials.glass.restitution", "0.9")])

for name, yaml, tc, sets in (hooke, hertz):
    res = {}
    for integ, frac in (("verlet", 160), ("newmark", 20)):
        out = os.path.join(tmp, "%s_%s" % (name, integ))
        dt = tc / frac
        end = 0.0011 / 1.0 + 1.5 * tc   # the approach (1 mm at 1 m/s) and the collision
        s = sets + [("integrator.type", integ), ("integrator.dt", dc.fmt(dt)),
                    ("run.end_time", dc.fmt(end)), ("run.steps", "0")]
        if integ == "newmark":
            s.append(("integrator.adapt", "false"))
        if not dc.run("%s impact, %s at tc/%d" % (name, integ, frac), yaml, out, s):
            break
        res[integ] = measure(out)
    if len(res) < 2:
        continue
    (ev, tv, nv), (en, tn, nn) = res["verlet"], res["newmark"]
    detail = "verlet e %.5f t %.5e s; newmark e %.5f t %.5e s; tc %.4e s" % (ev, tv, en, tn, tc)
    dc.check("%s impact: restitution, newmark at tc/20 vs verlet at tc/160 (relative)" % name, abs(en - ev) / ev, 0.01, detail)
    dc.check("%s impact: contact duration, newmark at tc/20 vs verlet at tc/160 (relative)" % name, abs(tn - tv) / tv, 0.01, detail)
dc.finish()
