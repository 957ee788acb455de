"""Undamped sphere bouncing between two plane walls 1.01 d apart for 250 collisions at
h = tc/50: total energy bounded, no drift. 003_9f0cdbfccae61a56.txt section 3.2, Fig. 9
(velocity Verlet "remains bounded"); energy = kinetic + 1/2 kn delta^2 (003 section 3.2).

Time step: tc is the paper's collision time, 003 section 3.1 (after eq. (34)):
tc = pi sqrt(m / (2 kn)), the duration of a two-particle collision (meff = m/2), which 003
uses as the unit of h throughout section 3 ("h ~ tc/32", "tc/160" in section 3.2). The
sphere-wall contact itself (meff = m) lasts t_w = pi sqrt(m / kn) = sqrt(2) tc, so
h = tc/50 = t_w/70.7. (With h = t_w/50 velocity Verlet's deviation reaches 1.08e-3.)
Between two collisions the sphere crosses the free space of 0.01 d. Checks on e_total
(thermo.csv, every step):
  bounded:   max |E(t) - E(0)| / E(0) <= 1e-3
  no drift:  |mean(E, last 10 % of the run) - mean(E, first 10 %)| / E(0) <= 1e-3
  count:     at least 250 collisions (rising edges of the contacts column)
Expected: velocity Verlet conserves v^2 + w^2 x^2 (1 - (w h)^2 / 4) during a contact
(w = sqrt(kn / m)), so E deviates by about (w h)^2 / 4 = (pi / 70.7)^2 / 4 = 4.9e-4 at the
deepest overlap, plus a shift of the same order from the step in which the contact opens.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_bounce_walls.yaml")
R, rho, v0 = 0.005, 2500.0, 0.1            # as in the YAML
d = 2 * R
free = 0.01 * d                             # walls 1.01 d apart
m = dc.sphere_mass(rho, R)
kn = 195000.0 * m * dc.G / d                # 003 section 3
tc = math.pi * math.sqrt(m / (2 * kn))      # 003 section 3.1: tC = pi sqrt(m / (2k))
t_w = math.pi * math.sqrt(m / kn)           # sphere-wall contact duration (meff = m)
dt = tc / 50
ncoll = 250
t_end = (ncoll + 2) * (free / v0 + t_w)     # one collision per crossing of the free space
tag = "bouncing between walls"
out = os.path.join(tmp, "out")
if dc.run(tag, yaml, out, [("contact.0.params.kn", dc.fmt(kn)), ("integrator.dt", dc.fmt(dt)),
                           ("run.end_time", dc.fmt(t_end))]):
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    E = dc.col(th, "e_total")
    E0 = 0.5 * m * v0 ** 2                  # independent: the initial kinetic energy
    n = len(E)
    k = max(1, n // 10)
    hits = sum(1 for a, b in zip(th, th[1:]) if a["contacts"] == 0 and b["contacts"] > 0)
    if hits >= ncoll:
        dc.ok(tag + ": %d collisions (>= %d)" % (hits, ncoll))
    else:
        dc.not_ok(tag + ": number of collisions", "%d < %d" % (hits, ncoll))
    dc.check(tag + ": e_total(0) = m v0^2 / 2", abs(E[0] - E0) / E0, 1e-10)   # 12 digits in thermo.csv
    dc.check(tag + ": total energy bounded, max |E - E0| / E0", max(abs(e - E0) for e in E) / E0, 1e-3,
             "dt = tc/50 = %.4e s, %d steps" % (dt, n - 1))
    drift = abs(sum(E[-k:]) / k - sum(E[:k]) / k) / E0
    dc.check(tag + ": no drift, |mean(E, last 10 %) - mean(E, first 10 %)| / E0", drift, 1e-3)
dc.finish()
