"""MPI settling case (mpi_settle.yaml) on 1 and on 2 ranks (DESIGN.md "MPI": `mpirun -n 2`
gives the serial result within round-off; issue 9 validation).

400 beads fall onto a floor in a box periodic in x and y; Hertz-Mindlin with friction
(tangential history). The 2-rank run uses the default rank grid 2 x 1 x 1 (src/core/decomp.c).
Checks, against the 1-rank run of the same description:
  - the decomposition really splits the bodies (both ranks own some, the sum is 400);
  - bodies_final.csv: the same set of ids, no id twice; positions within 1e-8 of the box
    size (periodic minimum image) - the issue's "1e-8 relative";
  - thermo.csv (written once, by rank 0): the same rows; contact counts identical in every
    row; kinetic, contact, dissipated energy and e_balance within 1e-8 relative in every row;
  - VTK: one piece per rank: every bodies frame is a .pvtp with 2 pieces, the .pvd series
    lists the .pvtp files (which exist), and VTK's reader finds all 400 ids once in the last
    frame, at the positions of bodies_final.csv.
The window (0.05 s, 3868 steps, up to ~160 contacts) ends before the bed is dense: granular
packings amplify round-off exponentially (measured: a 2e-13 relative change of dt grows to
O(1) position differences by 0.1 s in this case), so only a run whose summation order is the
serial one could agree to 1e-8 over a full settling; the 2-rank run's difference is reported.
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True
import mpi_common as mc
dc = mc.dc

tmp = sys.argv[1]
yaml = os.path.join(here, "mpi_settle.yaml")
L, periodic, N = (0.02, 0.02, 0.03), (True, True, False), 400
sets = ["--set", "run.end_time=0.05", "--set", "output.vtk_every=0.025"]
ok1, _ = mc.run("mpi_settle: 1 rank", 1, ["run", yaml, "--out", tmp + "/r1", "--quiet"] + sets, tmp + "/r1.log")
ok2, log2 = mc.run("mpi_settle: 2 ranks", 2, ["run", yaml, "--out", tmp + "/r2", "--quiet"] + sets, tmp + "/r2.log")
if not (ok1 and ok2):
    dc.finish()

own = [int(l.split()[4]) for l in log2.splitlines() if l.startswith("decomp: rank ") and " owns " in l]
if len(own) == 2 and min(own) > 0 and sum(own) == N:
    dc.ok("mpi_settle: decomposed", "owned particles per rank %s" % own)
else:
    dc.not_ok("mpi_settle: decomposed", "owned particles per rank %s (want 2 ranks, each > 0, sum %d)" % (own, N))

b1, b2 = mc.bodies(tmp + "/r1/bodies_final.csv"), mc.bodies(tmp + "/r2/bodies_final.csv")
n2 = len(dc.read_csv(tmp + "/r2/bodies_final.csv"))
if sorted(b1) == sorted(b2) == list(range(N)) and n2 == N:
    dc.ok("mpi_settle: ids", "the same %d ids on 1 and 2 ranks, none twice" % N)
else:
    dc.not_ok("mpi_settle: ids", "1 rank %d ids, 2 ranks %d rows / %d ids" % (len(b1), n2, len(b2)))
dx = mc.max_pos_diff(b1, b2, L, periodic)
dc.check("mpi_settle: positions 1 vs 2 ranks", dx / max(L), 1e-8, "max |dx| = %.3e m" % dx)

t1, t2 = dc.read_csv(tmp + "/r1/thermo.csv"), dc.read_csv(tmp + "/r2/thermo.csv")
if [r["step"] for r in t1] == [r["step"] for r in t2] and len(t1) > 10:
    dc.ok("mpi_settle: thermo rows", "%d rows, the same steps" % len(t1))
else:
    dc.not_ok("mpi_settle: thermo rows", "%d rows on 1 rank, %d on 2" % (len(t1), len(t2)))
de, bad = mc.thermo_diff(t1, t2)
if not bad and max(r["contacts"] for r in t1) > 50:
    dc.ok("mpi_settle: contact counts", "identical in all %d rows (up to %d contacts)" % (len(t1), max(r["contacts"] for r in t1)))
else:
    dc.not_ok("mpi_settle: contact counts", "differ at steps %s" % bad[:10])
dc.check("mpi_settle: energies 1 vs 2 ranks", de, 1e-8, "largest relative difference of ke, pe_contact, dissipated, e_balance over all rows")

# VTK: one piece per rank, .pvtp in the .pvd
vr = [sys.executable, os.path.join(here, "..", "tools", "vtk_read.py")]
pvd = subprocess.run(vr + [tmp + "/r2/vtk/bodies.pvd"], capture_output=True, text=True)
sets_ = [l.split() for l in pvd.stdout.splitlines() if l.startswith("dataset ")]
if pvd.returncode == 0 and len(sets_) >= 2 and all(s[2] == "1" and s[3].endswith(".pvtp") for s in sets_):
    dc.ok("mpi_settle: pvd series", "%d frames, each a .pvtp that exists" % len(sets_))
else:
    dc.not_ok("mpi_settle: pvd series", "%s %s" % (pvd.stdout[:300], pvd.stderr[:300]))
last = os.path.join(tmp, "r2", "vtk", sets_[-1][3]) if sets_ else ""
pv = subprocess.run(vr + [last], capture_output=True, text=True)
info = {}
for l in pv.stdout.splitlines():
    w = l.split()
    if w and w[0] in ("pieces", "points"):
        info[w[0]] = int(w[1])
    if w[:2] == ["pointdata", "id"]:
        info["id"] = [int(float(v)) for v in w[5:]]
    if w and w[0] == "xyz":
        info["xyz"] = [float(v) for v in w[2:]]
pieces = [f for f in os.listdir(os.path.join(tmp, "r2", "vtk")) if f.startswith(os.path.basename(last)[:-5] + "_") and f.endswith(".vtp")] if last else []
if pv.returncode == 0 and info.get("pieces") == 2 and info.get("points") == N and sorted(info.get("id", [])) == list(range(N)):
    worst = 0.0
    for k, g in enumerate(info["id"]):
        for d, c in enumerate("xyz"):
            worst = max(worst, abs(info["xyz"][3 * k + d] - b2[g][c]))
    if worst == 0.0:
        dc.ok("mpi_settle: pvtp pieces", "%s: 2 pieces (%d piece files), %d points, every id once, positions = bodies_final.csv" % (os.path.basename(last), len(pieces), N))
    else:
        dc.not_ok("mpi_settle: pvtp pieces", "positions differ from bodies_final.csv by %.3e" % worst)
else:
    dc.not_ok("mpi_settle: pvtp pieces", "%s: pieces %s points %s ids %d; %s" % (last, info.get("pieces"), info.get("points"), len(info.get("id", [])), pv.stderr[:300]))
dc.finish()
