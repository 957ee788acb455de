#!/usr/bin/python3
"""benchmarks/tetrapods/bench.py [--mmdem build/mmdem] [--time T] [--dir DIR]

000_c57329b1a40312e0.txt section 3.6: the box of 1005 tetrapods (config/box_of_tetrapods.yaml,
integrator verlet, dt 2e-5 s; `--set integrator.type=newmark` etc. through --set). Runs the first
T simulated seconds (default 0.3: the lowest layer lands at about 0.25 s) and prints wall time,
CPU time, steps, rejected steps, Newton iterations per step (1 for verlet), active contacts per
step (body-body, body-wall; over the thermo rows, every --thermo-every steps) and the wall time that
7 s of simulated time would take at the measured rate (the paper's pack collapse: 7 s, about
4 h on a 6-core Xeon W-2135; goal here: under 30 minutes on 2 cores). The extrapolation is
only indicative: the measured window is the start of the fill, not the collapse of a packed
box, which has far more contacts per body.
"""
import argparse
import csv
import os
import resource
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..")
ap = argparse.ArgumentParser()
ap.add_argument("--mmdem", default=os.path.join(root, "build", "mmdem"))
ap.add_argument("--time", type=float, default=0.3)
ap.add_argument("--dir", default=os.path.join(here, "cache"))
ap.add_argument("--thermo-every", type=int, default=50)
ap.add_argument("--set", action="append", default=[], help="key.path=value, passed to mmdem run")
a = ap.parse_args()
out = os.path.join(a.dir, "run")
os.makedirs(a.dir, exist_ok=True)
cmd = [a.mmdem, "run", os.path.join(root, "config", "box_of_tetrapods.yaml"), "--out", out, "--quiet",
       "--set", "run.end_time=%r" % a.time, "--set", "output.vtk_every=0", "--set", "output.thermo_every=%d" % a.thermo_every]
for kv in a.set:
    cmd += ["--set", kv]
t0 = time.time()
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
wall, cpu = time.time() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
if rc != 0:
    sys.exit("mmdem exited with status %d" % rc)
rows = list(csv.DictReader(open(os.path.join(out, "thermo.csv"))))
steps = int(rows[-1]["step"])
it = sum(float(r["iterations"]) for r in rows[1:]) / max(1, len(rows) - 1)
bb = sum(float(r["contacts_bb"]) for r in rows[1:]) / max(1, len(rows) - 1)
bw = sum(float(r["contacts_bw"]) for r in rows[1:]) / max(1, len(rows) - 1)
rej = int(float(rows[-1].get("rejected", 0) or 0))
t = float(rows[-1]["time"])
print("simulated %.4g s: wall %.1f s, CPU %.1f s, %d steps (%d rejected), %.2f Newton iterations/step, "
      "contacts/step %.1f body-body + %.1f body-wall; 7 s at this rate: %.0f min wall"
      % (t, wall, cpu, steps, rej, it, bb, bw, wall / t * 7 / 60))
