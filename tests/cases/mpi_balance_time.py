"""Load balancing by measured work, mpi.balance_by: time (issue 9; src/core/decomp.c), and the
per-phase timers of the steps (MMDEM_MPI_TIMERS).

9000 spheres (radius 1 mm) without gravity in a box periodic in x, y and z, cut in two along x
at x = 40 mm (mpi.grid [2, 1, 1]): rank 0's half holds 8000 of them in a simple cubic lattice
at 2 mm spacing (neighbours just touch; periodic in y and z, 20 x 2 mm = 40 mm), rank 1's half
1000 at 4 mm spacing (no contact); random velocities up to 1 mm/s make the lattice's pairs
touch and part (about 10000 contacts). Rank 0 then works several times
longer per step than rank 1, and the ranks' work (wall time outside the waits for each other)
is compared every 50 steps (windows of 51 evaluations). Checks:
  - a rebalance by time happened, from a work ratio max/mean above balance_threshold 1.1, the
    first at step 101 (the second comparison: a rebalance needs the same rank the slowest in
    two windows running), or at 152 or 203 when on a loaded machine the light rank was
    preempted long enough in one window to look as slow as the other;
  - the cut plane moved into the lattice (below x = 39 mm: the quantile of the particles
    weighted by their rank's work per particle), so rank 1 owns more than its 1000;
  - bodies_final.csv has ids 0..8999 once; positions agree with the 1-rank run within 1e-8 of
    the box size, contact counts are identical in every thermo row and the energies agree
    within 1e-8 relative (the rebalances migrate bodies and their contact history and change
    nothing beyond round-off);
  - the timers (MMDEM_MPI_TIMERS=1): both ranks report 11 phases, 301 force evaluations for
    300 steps (the start's and one per step), and the two ranks' pairs per evaluation sum to
    the pairs of one serial list, 23600 in every evaluation (every pair evaluated on exactly
    one rank; the list holds the pairs within 2 r + skin = 2.2 mm: the lattice's axis
    neighbours, 20^3 along y, 20^3 along z (periodic) and 19 x 20^2 along x; the face
    diagonals are 2.83 mm apart, the sparse spheres 4 mm; the spheres move < 10 um);
  - balance_by: weight is refused with file:line:col, the key and the allowed values.
"""
import os
import random
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
L = (0.08, 0.04, 0.04)
thr = 1.1
rng = random.Random(5)
rows = []
for i in range(20):          # 20 x 20 x 20 at 2 mm, x in [1, 39] mm
    for j in range(20):
        for k in range(20):
            rows.append((0.001 + 0.002 * i, 0.001 + 0.002 * j, 0.001 + 0.002 * k))
for i in range(10):          # 10 x 10 x 10 at 4 mm, x in [41, 77] mm
    for j in range(10):
        for k in range(10):
            rows.append((0.041 + 0.004 * i, 0.002 + 0.004 * j, 0.002 + 0.004 * k))
N = len(rows)
with open(os.path.join(tmp, "bodies.csv"), "w") as f:
    f.write("x,y,z,vx,vy,vz\n")
    for x, y, z in rows:
        f.write("%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n" % (x, y, z, rng.uniform(-1e-3, 1e-3), rng.uniform(-1e-3, 1e-3), rng.uniform(-1e-3, 1e-3)))


def yaml(path, by, grid="grid: [2, 1, 1], "):
    with open(path, "w") as f:
        f.write("""# tests/cases/mpi_balance_time.py
name: balance_time
domain: {lo: [0, 0, 0], hi: [0.08, 0.04, 0.04], periodic: [true, true, true]}
gravity: [0, 0, 0]
materials:
  glass: {density: 2500, friction: 0.5}
contact:
  - {pair: default, law: hooke, params: {kn: 400, kt: 114.28571428571428, gamma_n: 2800, gamma_t: 1400, mu: 0.5}}
shapes:
  bead: {type: sphere, radius: 0.001}
bodies:
  - {shape: bead, material: glass, file: bodies.csv}
search: {skin: 0.0002}
integrator: {type: verlet, dt: 7.0e-06}
mpi: {%sbalance_by: %s}
run: {steps: 300}
output: {vtk_every: -1, thermo_every: 50}
""" % (grid, by))


y = os.path.join(tmp, "bt.yaml")
yaml(y, "time")
mc.ENV["MMDEM_MPI_TIMERS"] = "1"
ok2, log = mc.run("mpi_balance_time: 2 ranks", 2, ["run", y, "--out", tmp + "/r2", "--quiet"], tmp + "/r2.log")
y1 = os.path.join(tmp, "bt1.yaml")
yaml(y1, "time", "")
ok1, _ = mc.run("mpi_balance_time: 1 rank", 1, ["run", y1, "--out", tmp + "/r1", "--quiet"], tmp + "/r1.log")
if not (ok1 and ok2):
    dc.finish()
reb = [(int(s), float(w)) for s, w in re.findall(r"step (\d+) rebalanced by time: max/mean work ([0-9.]+)", log)]
if reb and reb[0][0] in (101, 152, 203) and all(w > thr for _, w in reb):
    dc.ok("mpi_balance_time: rebalances", "%d, the first at step %d; max/mean work %s (threshold %.2f)" % (len(reb), reb[0][0], ", ".join("%.3f" % w for _, w in reb), thr))
else:
    dc.not_ok("mpi_balance_time: rebalances", "expected the first at step 101 (152, 203) from max/mean work > %.2f: %s" % (thr, reb))
m = re.search(r"cut planes x: ([-0-9.e]+) ([-0-9.e]+) ([-0-9.e]+) y:", log)
own = re.findall(r"decomp: rank (\d): \d+ rebuilds, \d+ bodies migrated away, \d+ periodic wraps, \d+ rebalances, (\d+) owned at the end", log)
own = {int(r): int(n) for r, n in own}
if m and len(own) == 2:
    x1 = float(m.group(2))
    if x1 < 0.039 and own.get(1, 0) > 1000 and own[0] + own[1] == N:
        dc.ok("mpi_balance_time: cut plane", "x cut at %.5f m (was 0.04), owned %d + %d" % (x1, own[0], own[1]))
    else:
        dc.not_ok("mpi_balance_time: cut plane", "x cut at %g (expected < 0.039), owned %s" % (x1, own))
else:
    dc.not_ok("mpi_balance_time: cut plane", "no cut-plane or owned-count lines in the log")
mc.compare("mpi_balance_time", tmp + "/r1", tmp + "/r2", L, (True, True, True), 1e-8, N)
ph = re.findall(r"mpi timers: rank (\d): ([a-z_]+) +([0-9.]+) s", log)
tot = re.findall(r"mpi timers: rank (\d): [0-9.]+ s from the first forward exchange; (\d+) evaluations, ([0-9.]+) pairs per evaluation", log)
if len(ph) == 22 and len(tot) == 2 and all(int(e) == 301 for _, e, _ in tot):
    dc.ok("mpi_timers: phases", "11 phases on each rank, 301 evaluations")
else:
    dc.not_ok("mpi_timers: phases", "%d phase lines, totals %s" % (len(ph), tot))
if len(tot) == 2:
    want = 2 * 20 ** 3 + 19 * 20 ** 2
    got = sum(float(p) for _, _, p in tot)
    dc.check("mpi_timers: pairs", abs(got - want) / want, 1e-12, "the ranks' mean pairs per evaluation %s sum to %.1f; the lattice's %d" % (" + ".join(p for _, _, p in tot), got, want))
# a misspelt choice is refused with its place and the allowed values
yb = os.path.join(tmp, "bad.yaml")
yaml(yb, "weight", "")
p = subprocess.run([dc.MMDEM, "run", yb, "--out", tmp + "/bad", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
if p.returncode != 0 and re.search(r"bad\.yaml:\d+:\d+:.*balance_by.*particles, time", p.stdout):
    dc.ok("mpi_balance_time: balance_by refused", [l for l in p.stdout.splitlines() if "balance_by" in l][0].strip()[:160])
else:
    dc.not_ok("mpi_balance_time: balance_by refused", "exit %d: %s" % (p.returncode, p.stdout[-300:]))
dc.finish()
