"""Impact with a bonded pair, 003_9f0cdbfccae61a56.txt section 3.3 (Fig. 5(c), Fig. 10).

Bodies 0 and 1 (touching at t = 0, so |delta| < d/100) are bonded: V = kB delta^2 / 2 acts
whether they press or pull (003 section 3.3). Body 2 hits body 1 head-on; all three are equal
spheres of 003 section 3 (d = 0.01 m, density 2500, k d / (m g) = 195000), undamped,
frictionless; kB = k / 4, a second time scale (003: "different time scales ... k and kB").
The pair is at rest and body 2 comes in at -v0 (003's setup seen from the pair's frame), so
that the pair recoils away from body 2 and they do not meet again.
h = tc / 160, tc = pi sqrt(m / (2 k)). Checks:
  1. the bond survives: the pair's gap stays within +-d/10 for the whole run (the bond's
     oscillation has an amplitude of about 2 v0 / sqrt(2 kB / m) = d/100), and the bond is in
     the last VTK contact network (bond = 1) although the pair is then apart or pressed;
  2. momentum: max_t |P(t) - P(0)| / |P(0)| <= 1e-10 (sum of m v over the three bodies,
     track.csv at every step; P(0) = m v0 is independent of the code);
  3. after body 2 has left, the force on body 0 (only the bond acts on it) oscillates with
     the period of the bond, T = 2 pi / sqrt(2 kB / m) (two equal masses on a spring):
     the mean period between zero crossings (linear interpolation) within 2 % of T;
  4. body 2 and the pair part: after the last step in which bodies 1 and 2 overlap, their
     gap grows to the end of the run.
The bonds live in the force pipeline, not in the integrator: the same run with velocity Verlet
must give the bond's period too (check 3 for verlet).
"""
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_variational_bond.yaml")
R, rho, v0 = 0.005, 2500.0, 0.5
d = 2 * R
m = dc.sphere_mass(rho, R)
kn = 195000.0 * m * dc.G / d
kB = kn / 4
tc = math.pi * math.sqrt(m / (2 * kn))
TB = 2 * math.pi / math.sqrt(2 * kB / m)
dt = tc / 160
steps = int(math.ceil((4 * tc + 8 * TB) / dt))


def bond_period(by, n, t_free):
    f = [(by[0][k]["step"] * dt, by[0][k]["fx"]) for k in range(t_free, n)]
    cross = [ta + (tb - ta) * fa / (fa - fb) for (ta, fa), (tb, fb) in zip(f, f[1:]) if (fa > 0) != (fb > 0) and fa != fb]
    if len(cross) < 6:
        return None, len(cross)
    return 2 * (cross[-1] - cross[0]) / (len(cross) - 1), len(cross)


out = os.path.join(tmp, "out")
tag = "bonded pair impact (variational alpha=0.5, h=tc/160, kB=k/4)"
vtag = "bonded pair impact (verlet, h=tc/160, kB=k/4)"
vout = os.path.join(tmp, "verlet")
if dc.run(vtag, yaml, vout, [("contact.0.params.kn", dc.fmt(kn)), ("bonds.params.kn", dc.fmt(kB)),
                             ("integrator", "{type: verlet, dt: %r}" % dt), ("run.steps", str(steps))]):
    by = {0: [], 1: [], 2: []}
    for r in dc.read_csv(os.path.join(vout, "track.csv")):
        by[int(r["id"])].append(r)
    n = min(len(v) for v in by.values())
    last = max([k for k in range(n) if by[2][k]["x"] - by[1][k]["x"] - d < 0] or [0])
    T, nc = bond_period(by, n, last + 1)
    if T is None:
        dc.not_ok(vtag + ": bond force oscillates", "only %d zero crossings" % nc)
    else:
        dc.check(vtag + ": period of the bond force vs 2 pi / sqrt(2 kB / m)", abs(T - TB) / TB, 0.02, "T = %.6e s" % T)
if dc.run(tag, yaml, out, [("contact.0.params.kn", dc.fmt(kn)), ("bonds.params.kn", dc.fmt(kB)),
                           ("integrator.dt", dc.fmt(dt)), ("run.steps", str(steps))]):
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    by = {0: [], 1: [], 2: []}
    for r in tr:
        by[int(r["id"])].append(r)
    n = min(len(v) for v in by.values())
    # 1. the bond holds
    gap01 = [by[1][k]["x"] - by[0][k]["x"] - d for k in range(n)]
    dc.check(tag + ": bond survives, max |gap(0,1)| / (d/10)", max(abs(g) for g in gap01) / (d / 10), 1.0,
             "gap in [%.3e, %.3e] m" % (min(gap01), max(gap01)))
    # 2. momentum
    P0 = -m * v0
    dP = 0.0
    for k in range(n):
        px = sum(m * by[b][k]["vx"] for b in (0, 1, 2))
        py = sum(m * by[b][k]["vy"] for b in (0, 1, 2))
        dP = max(dP, math.hypot(px - P0, py) / abs(P0))
    dc.check(tag + ": momentum conserved, max |P - P0| / |P0|", dP, 1e-10, "%d steps" % (n - 1))
    # 3. period of the bond force on body 0, after body 2 has left
    gap12 = [by[2][k]["x"] - by[1][k]["x"] - d for k in range(n)]
    last = max([k for k in range(n) if gap12[k] < 0] or [0])
    t_free = last + 1 if last + 1 < n else None
    if t_free is None or any(b <= a for a, b in zip(gap12[t_free:], gap12[t_free + 1:])):
        dc.not_ok(tag + ": body 2 and the pair part", "gap(1,2) does not grow after step %s" % t_free)
    else:
        dc.ok(tag + ": body 2 and the pair part after step %d (v2 = %.4f m/s, pair %.4f m/s)" % (t_free, by[2][-1]["vx"], 0.5 * (by[0][-1]["vx"] + by[1][-1]["vx"])))
        T, nc = bond_period(by, n, t_free)
        if T is None:
            dc.not_ok(tag + ": bond force oscillates", "only %d zero crossings" % nc)
        else:
            dc.check(tag + ": period of the bond force vs 2 pi / sqrt(2 kB / m)", abs(T - TB) / TB, 0.02,
                     "T = %.6e s, expected %.6e s, %d half periods" % (T, TB, nc - 1))
    # 1b. the bond in the VTK contact network of the last frame
    vtk = sorted(f for f in os.listdir(os.path.join(out, "vtk")) if f.startswith("contacts_"))[-1]
    txt = subprocess.run([os.environ.get("PY", "/usr/bin/python3"), os.path.join(here, "..", "tools", "vtk_read.py"),
                          os.path.join(out, "vtk", vtk)], capture_output=True, text=True).stdout
    arrays = {}
    for line in txt.splitlines():
        w = line.split()
        if w and w[0] == "celldata":
            arrays[w[1]] = [float(x) for x in w[5:]]
    pairs = list(zip(arrays.get("a", []), arrays.get("b", []), arrays.get("bond", [])))
    found = [p for p in pairs if sorted(p[:2]) == [0, 1]]
    nbond = sum(1 for p in pairs if p[2] == 1)
    if found and found[0][2] == 1 and nbond == 1:
        dc.ok(tag + ": the bond is in the last VTK contact network with bond = 1 (gap %.3e m)" % gap01[-1])
    else:
        dc.not_ok(tag + ": bond in the VTK contact network", "contacts in %s: %s" % (vtk, pairs))
dc.finish()
