"""The sphere gas of tests/cases/fused_kernel.py and verlet_defer.py (with fused_kernel.yaml):
200 spheres (r = 0.8 .. 1.1 mm, a radius column) on a jittered lattice (2.4 mm) in a 12 mm box,
random velocities (spread 0.3 m/s) and spins, seeded, so that every run sees the same bodies."""
import random

import demcheck as dc

RHO, L, SPREAD = 2500.0, 0.012, 0.3


def rows(seed=4242):
    """x, y, z, vx, vy, vz, wx, wy, wz, radius of each body"""
    rng = random.Random(seed)
    out = []
    h = L / 5
    for k in range(8):
        for j in range(5):
            for i in range(5):
                r = rng.uniform(0.8e-3, 1.1e-3)
                x = [(i + 0.5) * h + rng.uniform(-0.03, 0.03) * h, (j + 0.5) * h + rng.uniform(-0.03, 0.03) * h,
                     1.2e-3 + k * 2.4e-3]
                v = [rng.gauss(0, SPREAD) for _ in range(3)]
                w = [rng.gauss(0, SPREAD / r) for _ in range(3)]
                out.append(x + v + w + [r])
    return out


def write_bodies(path, rs):
    with open(path, "w") as fp:
        fp.write("x,y,z,vx,vy,vz,wx,wy,wz,radius\n")
        for r in rs:
            fp.write(",".join(repr(c) for c in r) + "\n")
    return path


def energy(rs):
    """kinetic energy of the bodies (density RHO)"""
    return sum(0.5 * dc.sphere_mass(RHO, r[9]) * (r[3] ** 2 + r[4] ** 2 + r[5] ** 2) +
               0.5 * dc.sphere_inertia(RHO, r[9]) * (r[6] ** 2 + r[7] ** 2 + r[8] ** 2) for r in rs)
