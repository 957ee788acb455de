#!/usr/bin/python3
"""bench.py - 1000 superquadrics settling in a 0.1 x 0.1 x 0.25 m box, periodic in x and y
(002_a4a9ff6a3ba65368.txt, section "Settling of particles under gravity and simulation
speed"), for blockiness n1 = n2 = 2 and 10; prints microseconds per contact pair per step in
the dynamic and the static regime.

usage: benchmarks/superquadric_settle/bench.py [--quick] [--n 2,10] [--mmdem PATH] [--dir DIR] [--reuse]

Set-up (002's Table 2 is not in the text we have; these are our choices): half-axes
[4, 3, 2] mm, density 2500 kg/m^3, Hertz-Mindlin with E = 1 GPa, nu = 0.3, restitution 0.5,
friction 0.5, the mean-curvature Hertz radius (q = 10); 1000 bodies start at rest on a
9 x 9 x 13 lattice (spacing 11.1 mm; the n = 10 bounding diameter is 10.3 mm) with random
orientations (seeded); planes at z = 0 and z = 0.25 m; velocity Verlet, dt = 1e-5 s.

Timing is CPU time of the mmdem process (getrusage), not wall time, so that other processes
on the machine do not inflate it; a regime's cost is the difference of two runs that differ
only in their length, divided by the steps between them and the mean number of contacts
(thermo `contacts`: touching pairs, walls included) over those steps:
  dynamic: the settling run from t = 0.10 s to 0.30 s (bodies landing and the bed forming);
  static:  the bed of the 0.6 s settling run, restarted at rest, from 1000 to 6000 steps.
That is "us per contact pair per step" of the whole program (search, contacts, laws,
integration, output), as 002 reports it. The superquadric shape's own line at the end of each
run adds the narrow-phase CPU time per pair check (its clock around the colliders).
002 reports about 3 us (dynamic) and 1.6 us (static) per contact pair for N = 10 on an
Intel i7-4790 with LIGGGHTS; our goal is at most 1.5 and 0.5 us.
LIGGGHTS comparison: the script probes the `liggghts` on PATH with a two-line deck
(`atom_style superquadric`) and prints what it finds. Debian 12's package (3.8.0, the last
LIGGGHTS-PUBLIC release; `apt-get install --no-install-recommends liggghts` - with the
recommends apt pulls python3-paraview and removes python3-vtk9 and libvtk9-dev) refuses it:
"ERROR: Invalid atom style" - its sources hold the superquadric code, but it is compiled only
with USE_SUPERQUADRICS = "ON" (-DSUPERQUADRIC_ACTIVE_FLAG -DNONSPHERICAL_ACTIVE_FLAG), which
Debian's build does not set. So no side-by-side run and no ratio; a LIGGGHTS built with that
flag would be detected, but the comparison deck is not written (it could not be run here).
--quick: n = 10 only, dynamic 0.10 -> 0.15 s, settling 0.3 s, static 500 -> 2500 steps (a smoke
test of the harness; the bed is not settled).
"""
import argparse
import csv
import math
import os
import random
import re
import resource
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
DT = 1.0e-5


def quat(rng):
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    return (math.sqrt(1 - u1) * math.sin(2 * math.pi * u2), math.sqrt(1 - u1) * math.cos(2 * math.pi * u2),
            math.sqrt(u1) * math.sin(2 * math.pi * u3), math.sqrt(u1) * math.cos(2 * math.pi * u3))


def write_lattice(path, seed):
    rng = random.Random(seed)
    h = 0.1 / 9  # lattice spacing (periodic box 0.1 m)
    pts = [((i + 0.5) * h, (j + 0.5) * h, 0.008 + k * h) for k in range(13) for j in range(9) for i in range(9)]
    with open(path, "w") as f:
        f.write("x,y,z,qw,qx,qy,qz\n")
        for p in pts[:1000]:
            f.write("%.9g,%.9g,%.9g,%.12g,%.12g,%.12g,%.12g\n" % (p + quat(rng)))


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
integrator: {{type: verlet, dt: {dt}}}
run: {{steps: {steps}}}
output: {{dir: {out}, vtk_every: -1, thermo_every: {every}}}
"""


def run(mmdem, d, tag, n, csvp, steps, every):
    """one mmdem run; returns (CPU seconds, thermo rows, log text)"""
    y = os.path.join(d, tag + ".yaml")
    out = os.path.join(d, tag)
    with open(y, "w") as f:
        f.write(YAML.format(n=n, csv=csvp, dt=DT, steps=steps, every=every, out=out))
    log = os.path.join(d, tag + ".log")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "w") as f:
        rc = subprocess.call([mmdem, "run", y, "--quiet"], stdout=f, stderr=subprocess.STDOUT)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = open(log).read()
    if rc != 0:
        sys.exit("%s: mmdem failed (exit %d):\n%s" % (tag, rc, text[-2000:]))
    rows = list(csv.DictReader(open(os.path.join(out, "thermo.csv"))))
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), rows, text


def mean_contacts(rows, s0, s1):
    c = [int(r["contacts"]) for r in rows if s0 < int(r["step"]) <= s1]
    return sum(c) / max(1, len(c))


def bed_csv(out, path):
    rows = list(csv.DictReader(open(os.path.join(out, "bodies_final.csv"))))
    with open(path, "w") as f:
        f.write("x,y,z,qw,qx,qy,qz\n")
        for r in rows:
            f.write(",".join(r[k] for k in ("x", "y", "z", "qw", "qx", "qy", "qz")) + "\n")


def liggghts_probe(d):
    """what the liggghts on PATH says to `atom_style superquadric`"""
    exe = shutil.which("liggghts")
    if not exe:
        return "not installed (Debian: apt-get install --no-install-recommends liggghts) - no comparison"
    deck = os.path.join(d, "liggghts_probe.in")
    with open(deck, "w") as f:
        f.write("atom_style superquadric\nunits si\n")
    try:
        text = subprocess.run([exe, "-in", deck, "-log", "none"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=60, cwd=d).stdout.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return "%s could not be run (%s) - no comparison" % (exe, e)
    ver = re.search(r"LIGGGHTS \(Version ([^)]*)\)", text)
    ver = ver.group(1) if ver else "unknown version"
    try:  # the atom styles it was built with (`liggghts -h`, section "* Atom styles:")
        hlp = subprocess.run([exe, "-h"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60, cwd=d).stdout.decode(errors="replace")
        m = re.search(r"\* Atom styles:\s*\n(.*?)\n\s*\* ", hlp, re.S)
        styles = m.group(1).split() if m else []
    except (OSError, subprocess.TimeoutExpired):
        styles = []
    if "Invalid atom style" in text:
        return ("%s (%s) has no superquadric support (atom_style superquadric: Invalid atom style; `liggghts -h` atom "
                "styles: %s; built without USE_SUPERQUADRICS) - not supported: no comparison, no ratio"
                % (exe, ver, " ".join(styles) if styles else "?"))
    return ("%s (%s) accepts atom_style superquadric, but this script has no LIGGGHTS deck for the workload "
            "(never runnable here) - no ratio" % (exe, ver))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="n = 10, short runs (a smoke test)")
    ap.add_argument("--n", default="", help="blockiness values, comma-separated (default 2,10)")
    ap.add_argument("--mmdem", default=os.path.join(ROOT, "build", "mmdem"))
    ap.add_argument("--dir", default=os.path.join(HERE, "cache"))
    ap.add_argument("--reuse", action="store_true",
                    help="take the settled beds bed_nN.csv from DIR (an earlier run) instead of settling again")
    a = ap.parse_args()
    ns = [int(x) for x in (a.n or ("10" if a.quick else "2,10")).split(",") if x]
    d0, d1, settle, s0, s1 = (10000, 15000, 30000, 500, 2500) if a.quick else (10000, 30000, 60000, 1000, 6000)
    os.makedirs(a.dir, exist_ok=True)
    lat = os.path.join(a.dir, "lattice.csv")
    write_lattice(lat, 7)
    print("superquadric_settle: 1000 superquadrics [4, 3, 2] mm in 0.1 x 0.1 x 0.25 m, periodic in x and y, "
          "dt = 1e-5 s (%s)" % a.mmdem)
    print("LIGGGHTS: " + liggghts_probe(a.dir))
    res = []
    for n in ns:
        cpu_a, rows_a, _ = run(a.mmdem, a.dir, "n%d_t%d" % (n, d0), n, lat, d0, 500)
        cpu_b, rows_b, text_b = run(a.mmdem, a.dir, "n%d_t%d" % (n, d1), n, lat, d1, 500)
        c_dyn = mean_contacts(rows_b, d0, d1)
        us_dyn = 1e6 * (cpu_b - cpu_a) / (d1 - d0) / c_dyn
        ke = lambda r: float(r["ke_trans"]) + float(r["ke_rot"])
        bed = os.path.join(a.dir, "bed_n%d.csv" % n)
        if a.reuse and os.path.exists(bed) and os.path.exists(os.path.join(a.dir, "n%d_settle" % n, "thermo.csv")):
            rows_s = list(csv.DictReader(open(os.path.join(a.dir, "n%d_settle" % n, "thermo.csv"))))
        else:
            cpu_s, rows_s, text_s = run(a.mmdem, a.dir, "n%d_settle" % n, n, lat, settle, 1000)
            bed_csv(os.path.join(a.dir, "n%d_settle" % n), bed)
        cpu_c, rows_c, _ = run(a.mmdem, a.dir, "n%d_s%d" % (n, s0), n, bed, s0, 100)
        cpu_d, rows_d, text_d = run(a.mmdem, a.dir, "n%d_s%d" % (n, s1), n, bed, s1, 100)
        c_sta = mean_contacts(rows_d, s0, s1)
        us_sta = 1e6 * (cpu_d - cpu_c) / (s1 - s0) / c_sta
        m_dyn = re.search(r"superquadric sq: .*", text_b)
        m_sta = re.search(r"superquadric sq: .*", text_d)
        kes = max(ke(r) for r in rows_s)
        res.append((n, us_dyn, c_dyn, us_sta, c_sta, ke(rows_s[-1]) / kes, max(ke(r) for r in rows_d if int(r["step"]) > s0) / kes,
                    rows_s[-1].get("sq_failures", "?"), m_dyn.group(0) if m_dyn else "", m_sta.group(0) if m_sta else ""))
    print()
    print("%4s %12s %10s %12s %10s %16s %s" % ("n", "dynamic us", "contacts", "static us", "contacts", "KE end/peak", "sq_failures"))
    for n, ud, cd, us, cs, k1, k2, f, ld, ls in res:
        print("%4d %12.3f %10.0f %12.3f %10.0f %16.2e %s" % (n, ud, cd, us, cs, k2, f))
    print("(us = CPU microseconds per contact pair per step of the whole program; KE end/peak: the static window's "
          "kinetic energy over the settling run's peak)")
    for n, ud, cd, us, cs, k1, k2, f, ld, ls in res:
        print("n = %d, dynamic run: %s" % (n, ld))
        print("n = %d, static run:  %s" % (n, ls))
    print("002 (LIGGGHTS, i7-4790, N = 10): about 3 us dynamic, 1.6 us static per contact pair; goal here: <= 1.5 and <= 0.5 us")


if __name__ == "__main__":
    sys.exit(main())
