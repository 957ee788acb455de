"""000_c57329b1a40312e0.txt example 3.3: a 0.1 m cube of weight W = 10 N on the ground is
pushed along x by F(t) = 16 N t / 0.8 s (poly_push.yaml), mu_s = 0.8, mu_d = 0.6, applied at
  (a) the bottom face centroid, (b) the centre of mass, (c) the top face centroid.
Checked against statics and Coulomb's law, computed here (the friction force on the block is
minus the ground's reaction fx in walls.csv, sampled every 5 ms):
  (a) sticking: friction = F(t) within 1e-3 W for F < 0.95 mu_s W; the largest friction reaches
      mu_s W within 2 % (sampling: F grows by 0.1 N per sample); sliding: friction = mu_d W
      within 1e-3 W once F > mu_s W + 0.5 N; no rotation (|tilt| < 1e-3 rad);
  (b) sliding at mu_d W within 1e-3 W after F > mu_s W + 0.5 N; no toppling (|tilt| < 0.01 rad
      at every sample: the tipping force W (moment F L/2 = W L/2) exceeds mu_s W);
  (c) toppling (tipping force W/2 = 5 N < mu_s W = 8 N): the tilt about y first exceeds 0.01 rad
      while 5 N <= F(t) <= 8 N, the block has not slid then (centre moved < 1 mm: it turns about
      its leading edge), and by 0.8 s it has turned over (tilt > 1 rad).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "poly_push.yaml")
W, mus, mud, Fmax, T, L = 10.0, 0.8, 0.6, 16.0, 0.8, 0.1


def F(t):
    return Fmax * min(t / T, 1.0)


def tilt(r):  # rotation angle about y from the quaternion (rotation about y only)
    return 2 * math.atan2(r["qy"], r["qw"])


for case, pz in (("a", -0.05), ("b", 0.0), ("c", 0.05)):
    out = os.path.join(tmp, case)
    if not dc.run("3.3(%s) run" % case, yaml, out, [("loads.0.point", "[0, 0, %s]" % dc.fmt(pz))]):
        continue
    w = dc.read_csv(os.path.join(out, "walls.csv"))
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    slide = [abs(r["fx"] - mud * W) for r in w if F(r["time"]) > mus * W + 0.5]
    if case in ("a", "b"):
        dc.check("3.3(%s) sliding friction = mu_d W within 1e-3 W" % case, max(slide) / W, 1e-3, "%d samples" % len(slide))
    if case == "a":
        st = [abs(r["fx"] - F(r["time"])) for r in w if 0.01 < r["time"] and F(r["time"]) < 0.95 * mus * W]
        dc.check("3.3(a) sticking friction = applied force within 1e-3 W", max(st) / W, 1e-3, "%d samples" % len(st))
        peak = max(r["fx"] for r in w)
        dc.check("3.3(a) friction peaks at mu_s W within 2 %", abs(peak - mus * W) / (mus * W), 2e-2, "peak %.4g N" % peak)
        dc.check("3.3(a) no rotation: |tilt| < 1e-3 rad", max(abs(tilt(r)) for r in tr), 1e-3)
    if case == "b":
        dc.check("3.3(b) no toppling: |tilt| < 0.01 rad", max(abs(tilt(r)) for r in tr), 1e-2)
    if case == "c":
        on = [r for r in tr if abs(tilt(r)) > 0.01]
        if not on:
            dc.not_ok("3.3(c) the block topples", "tilt never exceeds 0.01 rad")
            continue
        r0 = on[0]
        dc.check("3.3(c) tipping starts between W/2 and mu_s W", 0 if 0.5 * W <= F(r0["time"]) <= mus * W else 1, 0, "F = %.3g N at t = %.3g s" % (F(r0["time"]), r0["time"]))
        dc.check("3.3(c) it turns about the leading edge (no sliding before): centre moved < 1 mm", abs(r0["x"]), 1e-3)
        dc.check("3.3(c) turned over by 0.8 s: tilt > 1 rad", 0 if tilt(tr[-1]) > 1 else 1, 0, "tilt %.3g rad" % tilt(tr[-1]))
dc.finish()
