#!/usr/bin/python3
"""bench.py - 1000 superquadrics settling in a 0.1 x 0.1 x 0.25 m box, periodic in x and y
(002_a4a9ff6a3ba65368.txt, section "Settling of particles under gravity and simulation
speed"), for blockiness n1 = n2 = 2 and 10; prints microseconds per contact pair per step in
the dynamic and the static regime.

usage: benchmarks/superquadric_settle/bench.py [--quick] [--n 2,10] [--mmdem PATH] [--time T]

Set-up (002's Table 2 is not in the text we have; these are our choices): half-axes
[4, 3, 2] mm, density 2500 kg/m^3, Hertz-Mindlin with E = 1 GPa, nu = 0.3, restitution 0.5,
friction 0.5, the mean-curvature Hertz radius (q = 10); bodies start on a 9 x 9 x 13 lattice
(spacing = the n = 10 bounding diameter + 0.6 mm), 1000 of its points, with random
orientations (seeded) and at rest; planes at z = 0 and z = 0.25 m; velocity Verlet,
dt = 1e-5 s, 0.6 s of simulated time (--quick: 0.15 s). Thermo every 200 steps.

Regimes, from thermo.csv (wall_s, contacts, kinetic energy): for each thermo interval the time
per step divided by the contacts at its end (contacts = overlapping pairs, the thermo column)
is "us per contact pair per step". Dynamic: the intervals while the kinetic energy is above
10 % of its peak after the first contacts; static: the intervals of the last 20 % of the run
when the kinetic energy is below 1 % of its peak. The median of each is printed, together
with the narrow-phase time per candidate pair the superquadric shape reports at the end of the
run (its own clock around the colliders).
002 reports about 3 us (dynamic) and 1.6 us (static) per contact pair for N = 10 on an
Intel i7-4790 with LIGGGHTS; our goal is at most 1.5 and 0.5 us.
LIGGGHTS comparison: impossible here - Debian's `liggghts` package has no superquadric
support (BUILD-NOTES.md), so only mmdem runs.
"""
import argparse
import csv
import math
import os
import random
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))


def quat():
    u1, u2, u3 = random.random(), random.random(), random.random()
    return (math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
            math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3))


def write_bodies(path, seed):
    random.seed(seed)
    h = 0.1 / 9  # lattice spacing (periodic box 0.1 m)
    pts = []
    for k in range(13):
        for j in range(9):
            for i in range(9):
                pts.append(((i + 0.5) * h, (j + 0.5) * h, 0.008 + k * h))
    with open(path, "w") as f:
        f.write("x,y,z,qw,qx,qy,qz\n")
        for p in pts[:1000]:
            q = quat()
            f.write("%.9g,%.9g,%.9g,%.12g,%.12g,%.12g,%.12g\n" % (p + q))


YAML = """name: sq_settle_n{n}
domain: {{lo: [0, 0, 0], hi: [0.1, 0.1, 0.25], periodic: [true, true, false]}}
gravity: [0, 0, -9.81]
materials:
  grain: {{density: 2500, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}}
contact:
  - {{pair: default, law: hertz_mindlin}}
shapes:
  sq: {{type: superquadric, half_axes: [0.004, 0.003, 0.002], blockiness: [{n}, {n}]}}
bodies:
  - {{shape: sq, material: grain, file: {csv}}}
walls:
  - {{type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: grain}}
  - {{type: plane, name: lid, point: [0, 0, 0.25], normal: [0, 0, -1], material: grain}}
integrator: {{type: verlet, dt: 1.0e-5}}
run: {{end_time: {t}}}
output: {{dir: {out}, vtk_every: -1, thermo_every: 200}}
"""


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def analyse(thermo):
    rows = list(csv.DictReader(open(thermo)))
    ke = [float(r["ke_trans"]) + float(r["ke_rot"]) for r in rows]
    first = next((i for i, r in enumerate(rows) if int(r["contacts"]) > 0), len(rows))
    peak = max(ke[first:]) if first < len(rows) else 0
    dyn, sta = [], []
    for i in range(1, len(rows)):
        a, b = rows[i - 1], rows[i]
        ds = int(b["step"]) - int(a["step"])
        c = int(b["contacts"])
        if ds <= 0 or c <= 0:
            continue
        us = 1e6 * (float(b["wall_s"]) - float(a["wall_s"])) / ds / c
        if i > first and ke[i] > 0.1 * peak:
            dyn.append((us, c))
        if i >= 0.8 * len(rows) and ke[i] < 0.01 * peak:
            sta.append((us, c))
    return dyn, sta, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="0.15 s of settling (a smoke test)")
    ap.add_argument("--n", default="2,10", help="blockiness values, comma-separated")
    ap.add_argument("--time", type=float, default=0.0, help="simulated time [s] (default 0.6, quick 0.15)")
    ap.add_argument("--mmdem", default=os.path.join(ROOT, "build", "mmdem"))
    ap.add_argument("--dir", default=os.path.join(HERE, "cache"))
    a = ap.parse_args()
    t = a.time or (0.15 if a.quick else 0.6)
    os.makedirs(a.dir, exist_ok=True)
    csvp = os.path.join(a.dir, "bodies.csv")
    write_bodies(csvp, 7)
    print("superquadric_settle: 1000 superquadrics [4, 3, 2] mm in 0.1 x 0.1 x 0.25 m, periodic x, y; "
          "dt = 1e-5 s, %.3g s simulated (%s)" % (t, a.mmdem))
    print("LIGGGHTS: no comparison possible - Debian's liggghts has no superquadric support (BUILD-NOTES.md)")
    res = []
    for n in [int(x) for x in a.n.split(",") if x]:
        out = os.path.join(a.dir, "n%d" % n)
        y = os.path.join(a.dir, "settle_n%d.yaml" % n)
        open(y, "w").write(YAML.format(n=n, csv=csvp, t=t, out=out))
        log = os.path.join(a.dir, "run_n%d.log" % n)
        with open(log, "w") as f:
            rc = subprocess.call([a.mmdem, "run", y, "--quiet"], stdout=f, stderr=subprocess.STDOUT)
        text = open(log).read()
        if rc != 0:
            print("n = %d: mmdem failed (exit %d), see %s" % (n, rc, log))
            print(text[-2000:])
            continue
        dyn, sta, rows = analyse(os.path.join(out, "thermo.csv"))
        m = re.search(r"superquadric sq: .*", text)
        fails = rows[-1].get("sq_failures", "?")
        res.append((n, dyn, sta, rows, m.group(0) if m else "", fails))
    print()
    print("%4s %10s %12s %10s %12s %10s %9s %s" % ("n", "dyn us/c", "(contacts)", "stat us/c", "(contacts)", "wall s", "steps", "sq_failures"))
    for n, dyn, sta, rows, line, fails in res:
        print("%4d %10.3f %12.0f %10.3f %12.0f %10.1f %9s %s" % (n, median([u for u, c in dyn]), median([c for u, c in dyn]),
                                                               median([u for u, c in sta]), median([c for u, c in sta]),
                                                               float(rows[-1]["wall_s"]), rows[-1]["step"], fails))
    for n, dyn, sta, rows, line, fails in res:
        print("n = %d: %s" % (n, line))
    print("002 (LIGGGHTS, i7-4790, N = 10): about 3 us dynamic, 1.6 us static per contact pair; goal here: <= 1.5 and <= 0.5 us")


if __name__ == "__main__":
    sys.exit(main())
