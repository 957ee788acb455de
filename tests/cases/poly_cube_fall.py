"""000_c57329b1a40312e0.txt example 3.1: a cube (edge 1 m, 1000 kg) falls from 0.1 m (lowest
point above the ground) onto the ground, law barrier_hybrid without damping or friction
(poly_cube_fall.yaml), in the four orientations of the paper:
  (a) a vertex down, the centre of mass exactly above it (body diagonal vertical);
  (b) an edge down (45 degrees about x), the centre above the middle of the edge;
  (c) a face down;
  (d) tilted (30 degrees about x, then 20 about y): the impacts change the angular momentum.
Checked against numbers computed here:
  - energy, kinetic + gravitational + barrier (thermo.csv, every 20 steps), stays within
    0.5 % of the drop energy m g h at every sample over the bounces (0.8 s, two to three
    impacts), and the cube did touch the ground (an active contact was recorded, and the
    barrier energy reached at least half of m g h);
  - (a)-(c): |w| < 1e-9 rad/s at every sample of track.csv (no rotation induced);
  - (d): the impact does rotate the cube (|w| > 0.1 rad/s after the first impact);
  - the number of pointwise contacts at the first impact: 1 (vertex), 2 (edge, two vertex-face
    contacts), 4 (face, the face's four corners: 000 Fig. 4c);
  - a cube placed through the ground, and two cubes placed into each other, are refused by
    `mmdem check` (the barrier law cannot start from an overlap).
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
yaml = os.path.join(here, "poly_cube_fall.yaml")
m, g, h, L = 1000.0, 9.81, 0.1, 1.0


def qmul(a, b):
    return [a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]]


def qaxis(ax, ang):
    s = math.sin(ang / 2)
    n = math.sqrt(sum(c * c for c in ax))
    return [math.cos(ang / 2)] + [s * c / n for c in ax]


def rot(q, v):
    w, x, y, z = q
    R = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    return [sum(R[i][j] * v[j] for j in range(3)) for i in range(3)]


cases = {
    "a": (qaxis([1, -1, 0], math.acos(1 / math.sqrt(3))), 1),
    "b": (qaxis([1, 0, 0], math.pi / 4), 2),
    "c": ([1.0, 0.0, 0.0, 0.0], 4),
    "d": (qmul(qaxis([0, 1, 0], math.radians(20)), qaxis([1, 0, 0], math.radians(30))), None),
}
for name, (q, ncont) in sorted(cases.items()):
    # lowest vertex of the turned cube, then the centre so that it is h above the ground
    zmin = min(rot(q, [sx * L / 2, sy * L / 2, sz * L / 2])[2] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1))
    z0 = h - zmin
    out = os.path.join(tmp, name)
    sets = [("bodies.0.list.0.x", "[0, 0, %s]" % dc.fmt(z0)), ("bodies.0.list.0.q", "[%s]" % ", ".join(dc.fmt(c) for c in q))]
    if not dc.run("3.1(%s) run" % name, yaml, out, sets):
        continue
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    e0 = th[0]["ke_trans"] + th[0]["ke_rot"] + th[0]["pe_grav"] + th[0]["pe_contact"]
    dev = max(abs(r["ke_trans"] + r["ke_rot"] + r["pe_grav"] + r["pe_contact"] - e0) for r in th)
    pemax = max(r["pe_contact"] for r in th)
    dc.check("3.1(%s) energy conserved within 0.5 %% of m g h over the bounces" % name, dev / (m * g * h), 5e-3,
             "max |E - E0| = %.4g J, m g h = %.4g J" % (dev, m * g * h))
    dc.check("3.1(%s) the cube hit the ground (barrier energy >= m g h / 2)" % name, 0 if pemax >= 0.5 * m * g * h else 1, 0, "max pe_contact %.4g J" % pemax)
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    wmax = max(math.sqrt(r["wx"] ** 2 + r["wy"] ** 2 + r["wz"] ** 2) for r in tr)
    if ncont is not None:
        dc.check("3.1(%s) no rotation induced: |w| < 1e-9 rad/s" % name, wmax, 1e-9)
        first = [int(r["contacts"]) for r in th if r["contacts"] > 0]
        nmax = max(first) if first else 0
        dc.check("3.1(%s) %d pointwise contact(s) at the impact" % (name, ncont), abs(nmax - ncont), 0, "max active contacts %d" % nmax)
    else:
        dc.check("3.1(%s) the impact rotates the cube (|w| > 0.1 rad/s)" % name, 0 if wmax > 0.1 else 1, 0, "max |w| %.3g" % wmax)

# initial overlaps refused
for name, sets, expect in [
        ("cube through the ground", [("bodies.0.list.0.x", "[0, 0, 0.45]")], "overlaps wall"),
]:
    p = subprocess.run([dc.MMDEM, "check", yaml] + sum([["--set", "%s=%s" % kv] for kv in sets], []), capture_output=True, text=True)
    msg = p.stdout + p.stderr
    dc.check("refusal: %s" % name, 0 if (p.returncode != 0 and expect in msg) else 1, 0, "status %d, output: %s" % (p.returncode, msg.strip()[-200:]))
two = os.path.join(tmp, "two.yaml")
with open(yaml) as fp:
    text = fp.read()
text = text.replace("      - {x: [0, 0, 0.6], q: [1, 0, 0, 0]}", "      - {x: [0, 0, 0.6], q: [1, 0, 0, 0]}\n      - {x: [0.3, 0.2, 1.4], q: [0.9, 0.3, 0.1, 0.2]}")
with open(two, "w") as fp:
    fp.write(text)
p = subprocess.run([dc.MMDEM, "check", two], capture_output=True, text=True)
msg = p.stdout + p.stderr
dc.check("refusal: two cubes placed into each other", 0 if (p.returncode != 0 and "overlap" in msg) else 1, 0, "status %d, output: %s" % (p.returncode, msg.strip()[-200:]))
dc.finish()
