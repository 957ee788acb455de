"""Static pile: the floor carries the whole weight.

256 spheres poured at random into a box periodic in x and y settle on a floor plane (Hooke
law with damping, restitution 0.3, and friction mu = 0.5; 003_9f0cdbfccae61a56.txt eq.
(20)-(25)). At rest, the momentum balance of the pile in z gives floor reaction = weight:
the force the spheres exert on the floor (walls.csv fz, the reaction on the wall body)
equals -sum m g, with m = 4/3 pi r^3 rho computed here from the YAML's density and radius
and the number of bodies in bodies_final.csv.

Checks:
  at rest:    kinetic energy at the end < 1e-4 N m g r (N m g r: the potential energy of
              lifting the pile by one radius; a sphere may keep rolling on the floor, as
              nothing resists rolling, without loading it)
  reaction:   |fz + W| / W < 1e-3 at the last output, and for every output over the last
              20 % of the run
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_static_pile.yaml")
R, rho, g = 0.001, 2500.0, 9.81          # as in the YAML
tag = "static pile"
out = os.path.join(tmp, "out")
if dc.run(tag, yaml, out):
    bodies = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    n = len(bodies)
    m = dc.sphere_mass(rho, R)
    W = n * m * g
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    walls = dc.read_csv(os.path.join(out, "walls.csv"))
    t_end = th[-1]["time"]
    ke = th[-1]["ke_trans"] + th[-1]["ke_rot"]
    dc.check(tag + ": at rest, kinetic energy / (N m g r)", ke / (n * m * g * R), 1e-4,
             "%d spheres, %d contacts at the end" % (n, int(th[-1]["contacts"])))
    fz = walls[-1]["fz"]
    dc.check(tag + ": floor reaction vs total weight, |fz + W| / W", abs(fz + W) / W, 1e-3,
             "fz = %.9g N, W = sum m g = %.9g N" % (fz, W))
    late = [abs(r["fz"] + W) / W for r in walls if r["time"] >= 0.8 * t_end]
    dc.check(tag + ": floor reaction vs weight over the last 20 %% of the run (%d outputs), max |fz + W| / W" % len(late),
             max(late), 1e-3)
dc.finish()
