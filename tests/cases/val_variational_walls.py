"""Undamped sphere between two plane walls 1.01 d apart, 250 collisions, integrator
variational: 003_9f0cdbfccae61a56.txt section 3.2, Fig. 9.

Parameters of 003 section 3: d = 0.01 m, density 2500, k d / (m g) = 195000, gamma = 0;
v0 = 0.5 m/s (003 does not give it; the linear contact's duration does not depend on it).
h in units of 003's tc = pi sqrt(m / (2 k)) (003 after eq. (34)); a sphere-wall contact
(meff = m) lasts sqrt(2) tc. Energy = kinetic + 1/2 kn delta^2 (thermo.csv e_total, every step).

  loss      (E0 - E_end) / E0, E_end the mean of e_total over the free flights of the last
            10 % of the run (out of contact the energy is the kinetic energy alone);
            E0 = m v0^2 / 2 (independent of the code)
  fluct     max |E - E0| / E0 over the whole run (velocity Verlet's bounded fluctuation)
Checks:
  1. second order (alpha 0.5), h = tc/32: loss < 0.2 % (003: "loses a small fraction
     (~0.1 %)")
  2. second order, h = tc/160: |loss| <= 2 fluct(velocity Verlet, h = tc/160) (003: "the
     energy loss ... is similar to the fluctuations in the energy produced by the
     velocity-Verlet integrator")
  and in both runs at least 250 collisions. First order (alpha 0) at tc/32 is printed.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_variational_walls.yaml")
R, rho, v0 = 0.005, 2500.0, 0.5
d = 2 * R
m = dc.sphere_mass(rho, R)
kn = 195000.0 * m * dc.G / d
tc = math.pi * math.sqrt(m / (2 * kn))
t_w = math.pi * math.sqrt(m / kn)
free = 0.01 * d / v0
ncoll = 250
t_end = (ncoll + 2) * (free + t_w)
E0 = 0.5 * m * v0 ** 2


def measure(tag, integ, h, alpha=0.5):
    out = os.path.join(tmp, tag.replace(" ", "_").replace("/", "_"))
    s = [("contact.0.params.kn", dc.fmt(kn)), ("run.end_time", dc.fmt(t_end))]
    if integ == "verlet":
        s.append(("integrator", "{type: verlet, dt: %r}" % h))
    else:
        s += [("integrator.dt", dc.fmt(h)), ("integrator.alpha", repr(alpha))]
    if not dc.run(tag, yaml, out, s):
        return None
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    E = [r["e_total"] for r in th]
    hits = sum(1 for a, b in zip(th, th[1:]) if a["contacts"] == 0 and b["contacts"] > 0)
    tail = [r["e_total"] for r in th[-(len(th) // 10):] if r["contacts"] == 0]
    loss = (E0 - sum(tail) / len(tail)) / E0
    fluct = max(abs(e - E0) for e in E) / E0
    print("# %s: %d steps, %d collisions, loss %.4e, max |E - E0| / E0 %.4e" % (tag, len(th) - 1, hits, loss, fluct))
    if hits < ncoll:
        dc.not_ok(tag + ": number of collisions", "%d < %d" % (hits, ncoll))
    return loss, fluct


r32 = measure("variational alpha=0.5 h=tc/32", "variational", tc / 32)
if r32:
    name = "walls, 250 collisions, variational alpha=0.5 h=tc/32: energy loss (E0 - E_end) / E0 in [0, 0.2 %] (003: ~0.1 %)"
    if 0 <= r32[0] < 2e-3:
        dc.ok(name, "loss %.4e" % r32[0])
    else:
        dc.not_ok(name, "loss %.4e (negative: a gain)" % r32[0])
measure("variational alpha=0 h=tc/32", "variational", tc / 32, 0.0)
r160 = measure("variational alpha=0.5 h=tc/160", "variational", tc / 160)
rv = measure("verlet h=tc/160", "verlet", tc / 160)
if r160 and rv:
    dc.check("walls, 250 collisions, h=tc/160: |loss| of variational alpha=0.5 <= 2 x energy fluctuation of verlet (003 Fig. 9)",
             abs(r160[0]), 2 * rv[1], "loss %.4e, verlet fluctuation %.4e" % (r160[0], rv[1]))
dc.finish()
