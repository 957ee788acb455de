"""Hopper discharge against Beverloo's correlation (config/hopper.yaml; issue 6 part 5).

    W_B = C rho_b sqrt(g) (D0 - k d)^(5/2),   C = 0.58, k = 1.5

(Beverloo, Leniger and van de Velde 1961, Chem. Eng. Sci. 15, 260; the constants as reviewed by
Nedderman, Tuzun, Savage and Houlsby 1982, Chem. Eng. Sci. 37, 1597: C = 0.55-0.65, k about 1.5
for spheres). D0 = 24 mm the orifice, d = 4 mm the mean bead diameter (3.8-4.2 mm uniform),
rho_b the bulk density, measured here from the settled bed just before the orifice opens (solid
volume of the beads whose centres lie in a cylinder r < 20 mm, z from 10 mm to 8 mm below the
top bead, over its volume). Beverloo's law is for flat-bottomed silos; over a cone of half-angle
theta (here atan(23/30) = 37.5 deg) the rate is higher by Rose and Tanaka's factor
(tan theta tan phi_d)^(-0.35) (Rose and Tanaka 1959, as quoted by Nedderman et al. 1982; with an
assumed friction angle phi_d = 25 deg for glass beads it is 1.43), which this check takes as the
upper end of the accepted band, widened by 10 % on each side for the spread of C (0.55-0.65):
0.9 W_B <= W <= 1.1 * 1.43 W_B. (Measured: W / W_B = 1.057 quick, 1.075 full; 1.005 quick since
sphere/mesh takes its triangles in index order, session 9: a different chaotic discharge.)
The rate W is the slope of a least-squares line through thermo.csv's discharged_mass (beads below
z = -0.01 m) from 0.05 s after the opening (the first beads reach the outlet plane) until 60 %
of the beads have left.
Also: before the opening the hopper and the orifice plate carry the whole weight (walls.csv,
sum of fz = M g within 1 %), and at the end thermo.csv's discharged_mass is the mass of the beads
below the outlet in bodies_final.csv (1e-9).

Usage: hopper_beverloo.py MODE DIR, MODE quick (make test: 726 beads, kn 1000 N/m, dt = tc/20,
opened at 0.25 s, 0.55 s in all; about 8 s of CPU) or full (make validate: the YAML as it is,
2904 beads, opened at 0.4 s, 1.4 s; 3.5 minutes of CPU, 31 minutes of wall time on the loaded
machine). A PNG plot (gnuplot) of the discharged mass and the Beverloo band goes to
DIR/hopper_MODE.png. HOPPER_REUSE=1 checks the run already in DIR/hopper_MODE.
"""
import json
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

mode, tmp = sys.argv[1], sys.argv[2]
root = os.path.abspath(os.path.join(here, "..", ".."))
yaml = os.path.join(root, "config", "hopper.yaml")
PY = os.environ.get("PY", "/usr/bin/python3")
rho_p, g, D0, d, C, k = 2500.0, 9.81, 0.024, 0.004, 0.58, 1.5
theta = math.atan(0.023 / 0.03)
rose = (math.tan(theta) * math.tan(math.radians(25))) ** -0.35
out = os.path.join(tmp, "hopper_" + mode)
if mode == "quick":
    t_open, t_end = 0.25, 0.55
    sets = [("bodies.0.lattice.hi", "[0.0225, 0.0225, 0.065]"), ("walls.1.remove_at", "0.25"),
            ("contact.0.params.kn", "1000"), ("integrator.dt_fraction", "0.05"),
            ("run.end_time", "0.55"), ("output.thermo_every", "200")]
else:
    t_open, t_end = 0.4, 1.4
    sets = []
# HOPPER_REUSE=1: check the run already in DIR/hopper_MODE (KEEP=DIR of an earlier run)
if os.environ.get("HOPPER_REUSE") and os.path.isfile(os.path.join(out, "bodies_final.csv")):
    dc.ok("hopper %s: reusing the run in %s" % (mode, out))
elif not dc.run("hopper %s run" % mode, yaml, out, sets):
    dc.finish()
th = dc.read_csv(os.path.join(out, "thermo.csv"))
walls = dc.read_csv(os.path.join(out, "walls.csv"))

# beads at the opening: the VTK frame at t_open
pvd = subprocess.run([PY, os.path.join(root, "tests", "tools", "vtk_read.py"), os.path.join(out, "vtk", "bodies.pvd")],
                     capture_output=True, text=True).stdout.split("\n")
frames = [l.split() for l in pvd if l.startswith("dataset ")]
fr = min(frames, key=lambda f: abs(float(f[1]) - t_open))
j = json.loads(subprocess.run([PY, os.path.join(root, "tests", "tools", "vtk_read.py"), "--json",
                               os.path.join(out, "vtk", fr[3])], capture_output=True, text=True).stdout)
xyz = j["xyz"]
rad = next((p["values"] for p in j.get("pointdata", []) if p.get("name") == "radius"), None)
n = len(xyz) // 3
if rad is None:
    dc.not_ok("hopper: radius array in the VTK frame", "keys %s" % list(j.keys()))
    dc.finish()
M = sum(rho_p * 4.0 / 3.0 * math.pi * r ** 3 for r in rad)
ztop = max(xyz[3 * i + 2] for i in range(n))
rc, z0, z1 = 0.02, 0.01, ztop - 0.008
vs = sum(4.0 / 3.0 * math.pi * rad[i] ** 3 for i in range(n)
         if math.hypot(xyz[3 * i], xyz[3 * i + 1]) < rc and z0 < xyz[3 * i + 2] < z1)
phi = vs / (math.pi * rc * rc * (z1 - z0))
rho_b = phi * rho_p
dc.ok("hopper %s: %d beads, M = %.5g kg, packing fraction %.4f at t = %s s (rho_b %.1f kg/m^3)" % (mode, n, M, phi, fr[1], rho_b))
if not 0.5 < phi < 0.66:
    dc.not_ok("hopper %s: packing fraction of a random packing of spheres in (0.5, 0.66)" % mode, "%.4f" % phi)

# statics before the opening: hopper + orifice carry M g. The pile still rings when the orifice
# opens (the instantaneous sum fz of the quick run swings by about 3 % of M g between walls.csv
# rows 0.006 s apart), so the check takes the mean over the rows of the last 0.05 s before the
# opening: by the momentum balance M dV/dt = sum fz - M g its mean is M g up to M dV / 0.05 s.
pre = [r for r in walls if r["time"] <= t_open and r["time"] >= t_open - 0.05]
if pre:
    steps = sorted(set(r["step"] for r in pre))
    fzs = [sum(r["fz"] for r in pre if r["step"] == s and int(r["wall"]) in (n, n + 1)) for s in steps]
    fz = sum(fzs) / len(fzs)
    dc.check("hopper %s: before the opening, hopper + orifice carry the weight (mean sum fz = -M g)" % mode,
             abs(-fz / (M * g) - 1), 0.01, "mean sum fz %.6g N over %d rows in [%.4g, %.4g] s (%.6g .. %.6g), M g %.6g N" % (fz, len(fzs), min(r["time"] for r in pre), max(r["time"] for r in pre), min(fzs), max(fzs), M * g))
else:
    dc.not_ok("hopper %s: walls.csv rows before the opening" % mode, "none")

# rate
t = [r["time"] for r in th]
m = [r["discharged_mass"] for r in th]
ta = t_open + 0.05
tb = next((ti for ti, mi in zip(t, m) if mi >= 0.6 * M), t[-1])
pts = [(ti, mi) for ti, mi in zip(t, m) if ta <= ti <= tb]
if len(pts) < 5:
    dc.not_ok("hopper %s: steady discharge window" % mode, "%d thermo lines in [%.3g, %.3g] s" % (len(pts), ta, tb))
    dc.finish()
tm = sum(p[0] for p in pts) / len(pts)
mm = sum(p[1] for p in pts) / len(pts)
W = sum((p[0] - tm) * (p[1] - mm) for p in pts) / sum((p[0] - tm) ** 2 for p in pts)
res = max(abs(p[1] - mm - W * (p[0] - tm)) for p in pts)
WB = C * rho_b * math.sqrt(g) * (D0 - k * d) ** 2.5
lo, hi = 0.9 * WB, 1.1 * rose * WB
ok = lo <= W <= hi
msg = "W = %.4g kg/s over [%.3g, %.3g] s; Beverloo (C %.2f, k %.1f) %.4g kg/s, W/W_B = %.3f; band [%.4g, %.4g]" % (W, ta, tb, C, k, WB, W / WB, lo, hi)
(dc.ok if ok else lambda a, b="": dc.not_ok(a, b or msg))("hopper %s: discharge rate within Beverloo's band" % mode, msg)
dc.check("hopper %s: steady flow (largest deviation from the fitted line / mass in the window)" % mode,
         res / max(pts[-1][1] - pts[0][1], 1e-30), 0.05)
# mass accounting at the end
fin = dc.read_csv(os.path.join(out, "bodies_final.csv"))
ids = next((p["values"] for p in j.get("pointdata", []) if p.get("name") == "id"), list(range(n)))
rid = dict(zip(ids, rad))
below = th[-1]["discharged_mass"]
mb = sum(rho_p * 4.0 / 3.0 * math.pi * rid[int(b["id"])] ** 3 for b in fin if b["z"] < -0.01)
dc.check("hopper %s: discharged_mass = mass of the beads below the outlet in bodies_final.csv" % mode,
         abs(below - mb) / M, 1e-9, "%d of %d beads, %.6g kg" % (sum(1 for b in fin if b["z"] < -0.01), n, mb))
# plot
png = os.path.join(tmp, "hopper_%s.png" % mode)
dat = os.path.join(tmp, "hopper_%s.dat" % mode)
with open(dat, "w") as fp:
    for ti, mi in zip(t, m):
        fp.write("%.8g %.8g\n" % (ti, mi))
gp = """set terminal pngcairo size 800,500
set output '%s'
set xlabel 'time [s]'
set ylabel 'discharged mass [kg]'
set key left top
t0 = %.8g; m0 = %.8g
plot '%s' using 1:2 with lines lw 2 title 'mmdem (thermo.csv discharged\\_mass)', \\
     (x > t0 ? m0 + %.8g*(x - t0) : 1/0) with lines dt 2 title 'Beverloo W_B = %.3g kg/s', \\
     (x > t0 ? m0 + %.8g*(x - t0) : 1/0) with lines dt 3 title 'x Rose-Tanaka %.2f'
""" % (png, tm, mm, dat, WB, WB, rose * WB, rose)
p = subprocess.run(["gnuplot"], input=gp, capture_output=True, text=True)
if p.returncode == 0 and os.path.getsize(png) > 1000:
    dc.ok("hopper %s: plot %s" % (mode, png))
else:
    dc.not_ok("hopper %s: gnuplot plot" % mode, p.stderr.strip()[-200:])
dc.finish()
