#!/usr/bin/python3
"""benchmarks/tetrapods/bench.py [--mmdem build/mmdem] [--time T] [--dir DIR] [--restart CKPT | --prepare]

000_c57329b1a40312e0.txt section 3.6: the box of 1005 tetrapods (config/box_of_tetrapods.yaml,
integrator verlet; `--set key=value` is passed to mmdem run).

  (default)       runs the first T simulated seconds of the fill from t = 0 (dt 2e-5 s, the
                  config's: the layers land at up to 20 m/s);
  --prepare       makes the packed box whose collapse is the benchmark: the fill at the config's
                  dt 2e-5 s to t = 2.5 s (every layer has landed by about 2.1 s), then dt 8e-5 s
                  (README: stable and in agreement with 2e-5 s in the dense pack) to t = 7.9 s,
                  0.1 s before the side walls' removal at 8 s; writes DIR/rest.ckpt (t = 7.9 s).
                  Long (not timed);
  --restart CKPT  runs T simulated seconds from the checkpoint CKPT, e.g. the collapse:
                  `--restart DIR/rest.ckpt --time 7.1 --set integrator.dt=8e-5` (the paper's 7 s
                  pack collapse, about 4 h on a 6-core Xeon W-2135; goal: under 30 min on 2 cores).

Prints wall time, CPU time, steps, rejected steps, Newton iterations per step (1 for verlet),
active contacts per step (body-body, body-wall; over the thermo rows, every --thermo-every steps),
CPU seconds per simulated second, and the wall time 7 s would take at the measured rate.
"""
import argparse
import csv
import os
import re
import resource
import shutil
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..")
yaml = os.path.join(root, "config", "box_of_tetrapods.yaml")
ap = argparse.ArgumentParser()
ap.add_argument("--mmdem", default=os.path.join(root, "build", "mmdem"))
ap.add_argument("--time", type=float, default=0.3)
ap.add_argument("--dir", default=os.path.join(here, "cache"))
ap.add_argument("--thermo-every", type=int, default=50)
ap.add_argument("--restart", default=None, help="checkpoint to continue from; --time is then the simulated time after it")
ap.add_argument("--prepare", action="store_true", help="write DIR/rest.ckpt, the packed box at t = 8 s")
ap.add_argument("--set", action="append", default=[], help="key.path=value, passed to mmdem run")
a = ap.parse_args()
os.makedirs(a.dir, exist_ok=True)


def run(out, extra):
    cmd = [a.mmdem, "run", yaml, "--out", out, "--set", "output.vtk_every=0",
           "--set", "output.thermo_every=%d" % a.thermo_every] + extra
    for kv in a.set:
        cmd += ["--set", kv]
    t0 = time.time()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("mmdem exited with status %d:\n%s" % (p.returncode, p.stdout[-2000:]))
    return p.stdout, time.time() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


if a.prepare:
    # stage 1: the fill at the config's dt to t = 2.5 s (step 125000), checkpoint there
    s1 = os.path.join(a.dir, "fill")
    run(s1, ["--set", "run.end_time=2.5", "--set", "output.checkpoint_every=125000"])
    ck1 = os.path.join(s1, "checkpoints", "step-125000.ckpt")
    # stage 2: dt 8e-5 s to t = 7.9 s, 0.1 s before the walls' removal: 67500 more steps
    s2 = os.path.join(a.dir, "settle")
    run(s2, ["--restart", ck1, "--set", "integrator.dt=8e-5", "--set", "run.end_time=7.90001",
             "--set", "output.checkpoint_every=2500"])
    shutil.copy(os.path.join(s2, "checkpoints", "step-192500.ckpt"), os.path.join(a.dir, "rest.ckpt"))
    print("wrote %s (t = 7.9 s)" % os.path.join(a.dir, "rest.ckpt"))
    sys.exit(0)

out = os.path.join(a.dir, "run")
shutil.rmtree(out, ignore_errors=True)  # a restart keeps the rows of an old thermo.csv there
t_start, step0 = 0.0, 0
extra = ["--quiet"]
if a.restart:
    # the checkpoint's step and time: a run that ends at once (end_time before the checkpoint's)
    chk = subprocess.run([a.mmdem, "run", yaml, "--out", os.path.join(a.dir, "probe"), "--restart", a.restart,
                          "--set", "run.end_time=1e-9", "--set", "output.vtk_every=-1"] + sum((["--set", kv] for kv in a.set), []),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True).stdout
    m = re.search(r"at step (\d+), t = ([0-9.eE+-]+) s", chk)
    if not m:
        sys.exit("cannot read the step and time of %s:\n%s" % (a.restart, chk[-2000:]))
    step0, t_start = int(m.group(1)), float(m.group(2))
    extra = ["--restart", a.restart]
text, wall, cpu = run(out, extra + ["--set", "run.end_time=%r" % (t_start + a.time)])
rows = list(csv.DictReader(open(os.path.join(out, "thermo.csv"))))
steps = int(rows[-1]["step"]) - step0
it = sum(float(r["iterations"]) for r in rows[1:]) / max(1, len(rows) - 1)
bb = sum(float(r["contacts_bb"]) for r in rows[1:]) / max(1, len(rows) - 1)
bw = sum(float(r["contacts_bw"]) for r in rows[1:]) / max(1, len(rows) - 1)
rej = int(float(rows[-1].get("rejected", 0) or 0))
t = float(rows[-1]["time"]) - t_start
print("simulated %.4g s (from t = %.4g s): wall %.1f s, CPU %.1f s (%.1f s CPU per simulated s), %d steps "
      "(%d rejected), %.2f Newton iterations/step, contacts/step %.1f body-body + %.1f body-wall; "
      "7 s at this rate: %.0f min wall"
      % (t, t_start, wall, cpu, cpu / t, steps, rej, it, bb, bw, wall / t * 7 / 60))
