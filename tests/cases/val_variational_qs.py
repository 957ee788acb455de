"""Quasi-static mode of the variational integrator (quasi_static: true): inertia dropped, each
load step minimises the potential energy (003 section 1 and section 2.1: "when the
quasi-static approximation is taken ... the method simplifies to minimising the potential
energy of the system"). Three equal spheres (r = 5 mm) stacked between a floor and a piston.

1. Hertz (hertz_mindlin, frictionless, no gravity; 003 after eq. (27): V ~ delta^(5/2)): the
   piston starts 1e-4 m above the column and moves down 1e-5 m per load step. In equilibrium
   every contact carries the same force F (the column is a chain), so with
   F = 4/3 E* sqrt(R*) delta^(3/2) (001 eq. (19), E* of 001 eq. (20); R* = r at the walls,
   r/2 between spheres) the compression c = 2 delta_wall(F) + 2 delta_pair(F); F(c) is solved
   here by bisection and compared with the piston's reaction (walls.csv) at every load step
   after contact: relative error <= 1e-8. The floor carries -F.
2. Hooke (kn = 1e5 N/m, damping given but dropped in quasi-static mode), gravity -9.81, no
   piston motion: the column settles onto the floor in load steps; the floor carries 3 m g,
   and the contacts are compressed by 3, 2 and 1 m g / kn from below (positions of
   track.csv): relative error <= 1e-8.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_variational_qs.yaml")
R, rho, E, nu = 0.005, 2500.0, 1.0e8, 0.25
m = dc.sphere_mass(rho, R)
Estar = E / (2 * (1 - nu ** 2))                  # 001 eq. (20), two equal materials


def delta(F, Rs):
    return (F / (4.0 / 3.0 * Estar * math.sqrt(Rs))) ** (2.0 / 3.0)


def force_for(c):
    lo, hi = 0.0, 1.0
    while 2 * delta(hi, R) + 2 * delta(hi, R / 2) < c:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 2 * delta(mid, R) + 2 * delta(mid, R / 2) < c:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# 1. Hertzian column under the piston
out = os.path.join(tmp, "hertz")
tag = "quasi-static hertz column under a piston"
if dc.run(tag, yaml, out, [("run.steps", "30")]):
    w = dc.read_csv(os.path.join(out, "walls.csv"))
    piston = [r for r in w if r["wall"] == 4]
    floor = {r["step"]: r["fz"] for r in w if r["wall"] == 3}
    err = eq = 0.0
    n = 0
    for r in piston:
        c = 0.01 * r["time"] - 1e-4            # compression after the 1e-4 m gap
        if c <= 0:
            continue
        F = force_for(c)
        err = max(err, abs(r["fz"] - F) / F)
        eq = max(eq, abs(r["fz"] + floor[r["step"]]) / F)
        n += 1
    dc.check(tag + ": piston force vs Hertz chain F(c) (001 eq. (19)-(20)), max relative error over %d load steps" % n, err, 1e-8)
    dc.check(tag + ": floor reaction = -piston force", eq, 1e-8)

# 2. Hookean column under gravity
kn, g = 1.0e5, 9.81
out = os.path.join(tmp, "hooke")
tag = "quasi-static hooke column under gravity"
if dc.run(tag, yaml, out, [("contact.0", "{pair: default, law: hooke, params: {kn: %r, gamma_n: 50, mu: 0}}" % kn),
                           ("gravity", "[0, 0, -9.81]"), ("walls.1.velocity", "[0, 0, 0]"), ("run.steps", "5")]):
    w = dc.read_csv(os.path.join(out, "walls.csv"))
    fl = [r for r in w if r["wall"] == 3][-1]["fz"]
    dc.check(tag + ": floor reaction = 3 m g", abs(-fl - 3 * m * g) / (3 * m * g), 1e-8, "%.9e N" % -fl)
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    last = {r["id"]: r for r in tr if r["step"] == max(x["step"] for x in tr)}
    d0 = R - last[0]["z"]
    d1 = 2 * R - (last[1]["z"] - last[0]["z"])
    d2 = 2 * R - (last[2]["z"] - last[1]["z"])
    e = max(abs(d0 - 3 * m * g / kn), abs(d1 - 2 * m * g / kn), abs(d2 - m * g / kn)) / (m * g / kn)
    dc.check(tag + ": overlaps 3, 2, 1 m g / kn from the floor up", e, 1e-8, "%.6e %.6e %.6e m" % (d0, d1, d2))
dc.finish()
