"""Night-owl contacts of newmark (000 section 2.6.3, src/integrators/newmark.c).

val_newmark_nightowl.yaml: in the first step sphere 1 is pushed into sphere 2, a pair the
neighbour list (skin 0.05 mm) did not hold when the step started. Checks:
  - thermo.csv night_owls >= 1 after the first step (the contact was found by the search
    after convergence and the step solved again), and 0 for the same run with a skin of 5 mm
    (the list holds the pair from the start);
  - both runs end in the same state: positions and velocities agree to 1e-9 (relative to
    the largest), i.e. the re-solved step is the step with the contact seen from the start;
  - momentum: sum m vx = m * 1 m/s (frictionless, no gravity) to 1e-9 in both runs.
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_newmark_nightowl.yaml")
res = {}
for name, skin in (("small", "5.0e-5"), ("large", "0.005")):
    out = os.path.join(tmp, name)
    if not dc.run("newmark night owls, skin %s" % skin, yaml, out, [("search.skin", skin)]):
        dc.finish()
    res[name] = (dc.read_csv(os.path.join(out, "thermo.csv")), dc.read_csv(os.path.join(out, "bodies_final.csv")))
ths, bs = res["small"]
thl, bl = res["large"]
n1 = [r["night_owls"] for r in ths if r["step"] == 1][0]
dc.check("newmark night owls: the contact missed by the list is found after step 1 (night_owls >= 1)", 0 if n1 >= 1 else 1, 0, "night_owls %g" % n1)
dc.check("newmark night owls: none with a skin that holds the pair", thl[-1]["night_owls"], 0)
xs = max(abs(r[k]) for r in bl for k in ("x", "vx"))
err = max(abs(a[k] - b[k]) for a, b in zip(bs, bl) for k in ("x", "y", "z", "vx", "vy", "vz"))
dc.check("newmark night owls: re-solved run = run with the pair listed (max difference / max value)", err / xs, 1e-9)
for name, (th, b) in res.items():
    p = sum(r["vx"] for r in b)   # equal masses: sum vx = 1 m/s
    dc.check("newmark night owls, %s skin: momentum sum vx = 1 m/s" % name, abs(p - 1.0), 1e-9)
dc.finish()
