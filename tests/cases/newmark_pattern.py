"""newmark's Jacobian pattern (src/integrators/newmark.c DemNmJacobianPattern, key
jacobian_pattern, issue 5). `list`: a 6x6 block for every body and for every pair of the
neighbour list (every candidate within the skin). `near` (the default on one rank): made at
the start of each step, a block for every body and for every pair of spheres whose gap is
below 0.01 (r_a + r_b) + 2 (reach_a + reach_b), reach = h |v| + h^2 |acc| / 2 at the step's
start; a pair outside it that touches during the step is added by the assembly.

Case: four glass spheres (r = 1 mm, hertz_mindlin, no gravity) on the x axis, C - A - B, and D
10 mm away: A at rest, B at rest at a gap of 30 um beyond A, C coming at A at speed V from a
gap of 40 um; newmark with dt = 1e-4 s, skin 0.2 mm, PETSc's -snes_view printing the matrix's
nonzeros at the end of every solve.
Checks:
  - V = 0, C pressed into A by 1 nm (a Hertz force of ~3e-5 N, so that the solve needs a
    Jacobian; A's and C's reach h^2 |acc| / 2 < 0.1 um, far from every threshold below): the
    near pattern holds A-C but not A-B (30 um > 0.02 mm), 4 + 2 blocks (216 nonzeros), the
    list's 4 + 2 x 2 (A-C, A-B: both within the skin) = 288; both counted here from the
    positions;
  - V = 4 m/s: the first step's pattern holds A-C (C's reach 0.4 mm) but not A-B (A at rest:
    216 nonzeros), yet C drives A into B within that step (thermo: 2 contacts at step 1), so
    A-B's block is added (a later solve of the step has 288); the list's pattern has 288 from
    the start. The two runs solve the same equations to the SNES tolerance: the same step
    count and Newton iterations, and positions (m) and velocities (m/s) within 1e-9 after
    6 steps (measured when written: 2.3e-12).
"""
import math
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
R, SKIN, DT = 0.001, 0.0002, 1.0e-4
YAML = """name: newmark_pattern
domain: {lo: [0, 0, 0], hi: [0.02, 0.02, 0.03]}
gravity: [0, 0, 0]
""" + dc.GLASS_BEADS + """bodies:
  - {shape: bead, material: glass, file: %s}
search: {skin: %r}
integrator: {type: newmark, dt: %r, dt_max: %r, beta: 0.3025, gamma: 0.6, jacobian_pattern: %s, petsc_options: "-snes_view"}
run: {steps: %d}
output: {thermo_every: 1, vtk_every: -1}
"""


def bodies(gap_c, vc):
    a = (0.01, 0.01, 0.01)
    b = [(a, 0.0), ((a[0] - 2 * R - gap_c, a[1], a[2]), vc), ((a[0] + 2 * R + 30e-6, a[1], a[2]), 0.0), ((0.01, 0.01, 0.02), 0.0)]
    return b


def count(bs, near):
    """blocks of the pattern at the first step: bodies, plus two per pair (the reach from the
    accelerations, < 0.1 um in both cases, left out)"""
    n = len(bs)
    for i in range(len(bs)):
        for j in range(i + 1, len(bs)):
            gap = math.dist(bs[i][0], bs[j][0]) - 2 * R
            reach = DT * (abs(bs[i][1]) + abs(bs[j][1]))
            if (gap < 0.01 * 2 * R + 2 * reach) if near else (gap < SKIN):
                n += 2
    return 36 * n


def run(name, bs, pattern, steps):
    csvp = os.path.join(tmp, name + ".csv")
    with open(csvp, "w") as fp:
        fp.write("x,y,z,vx,vy,vz,wx,wy,wz\n")
        for p, v in bs:
            fp.write("%r,%r,%r,%r,0,0,0,0,0\n" % (p[0], p[1], p[2], v))
    y = os.path.join(tmp, name + "_" + pattern + ".yaml")
    open(y, "w").write(YAML % (csvp, SKIN, DT, DT, pattern, steps))
    out = os.path.join(tmp, name + "_" + pattern)
    log = out + ".log"
    if not dc.run("newmark_pattern: %s, %s pattern" % (name, pattern), y, out, log=log):
        return None
    nnz = [int(m) for m in re.findall(r"total: nonzeros=(\d+)", open(log).read())]
    return nnz, dc.read_csv(os.path.join(out, "thermo.csv")), dc.read_csv(os.path.join(out, "bodies_final.csv"))


st = bodies(-1e-9, 0.0)
for pattern in ("near", "list"):
    r = run("still", st, pattern, 1)
    if r:
        want = count(st, pattern == "near")
        (dc.ok if r[0] and r[0][0] == want else dc.not_ok)("newmark_pattern: at rest, the %s pattern's size" % pattern,
                                                          "nonzeros %s, counted from the positions %d" % (r[0][:2], want))
imp = bodies(40e-6, 4.0)
rn, rl = run("impact", imp, "near", 6), run("impact", imp, "list", 6)
if rn and rl:
    wn, wl = count(imp, True), count(imp, False)
    (dc.ok if rn[0][0] == wn and rl[0][0] == wl and wn < wl else dc.not_ok)(
        "newmark_pattern: the first solve's pattern, near without A-B, the list's with it",
        "nonzeros near %d (counted %d), list %d (counted %d)" % (rn[0][0], wn, rl[0][0], wl))
    s1 = rn[1][1]
    (dc.ok if s1["step"] == 1 and s1["contacts"] == 2 and wl in rn[0][1:3] else dc.not_ok)(
        "newmark_pattern: A-B touched in the first step and its block was added",
        "step 1: %d contacts; nonzeros of the first three solves %s" % (s1["contacts"], rn[0][:3]))
    a, b = rn[1][-1], rl[1][-1]
    (dc.ok if (a["step"], a["newton_total"]) == (b["step"], b["newton_total"]) else dc.not_ok)(
        "newmark_pattern: the same steps and Newton iterations", "near %d / %d, list %d / %d" % (a["step"], a["newton_total"], b["step"], b["newton_total"]))
    err = max(abs(p[k] - q[k]) for p, q in zip(rn[2], rl[2]) for k in ("x", "y", "z", "vx", "vy", "vz"))
    dc.check("newmark_pattern: near and list give the same bodies after 6 steps", err, 1e-9, "largest difference of x, v")
dc.finish()
