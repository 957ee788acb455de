"""001_558b02b5fc003581.txt example 5.3: disposal of particles into a container (config/container2d.yaml).

230 spheres (r = 0.1 m) fall from a vessel onto the inclined face of a container in the x-y
plane (dimension 2), with drag (001 eq. (15)), xi = 0.9 and friction 0.25 / 0.1 (rolling spring,
001 eq. (25)-(36)), integrator trapezoid (phi = 0.5). 001 runs it with and without rotational
degrees of freedom and finds that the spheres come to rest at about 4 s and that the final
arrangement is more ordered (closer to the hexagonal packing) with rotations. One filling is
one random sample of that claim, so this runs four fillings (seeds 4, 5, 6, 8 of the vessel's
random sequential addition, chosen before looking at any result: the first four seeds that fit
230 spheres into the vessel; 5 is the config's), each with rotations and with
`integrator.freeze_rotations: true`, to t = 8 s (the config runs 6 s; with rotations a sphere can
rock without loss in a hollow of the pile surface for a while, as the model has no rolling
resistance: seed 8 with rotations still had two spheres rocking at 6 s, at rest by 6.6 s).

Order of the final arrangement, from bodies_final.csv: neighbours of a sphere are the spheres
whose centres are closer than 1.1 d; the coordination number (6 in a hexagonal packing) and
the fraction of spheres with exactly six neighbours (locally hexagonal), averaged over the
spheres and the four fillings. Also printed: the bond-orientational order |psi6|, psi6 =
sum_j exp(6 i theta_ij) / 6, and the height of the pile.

Checks:
  - every run is at rest at 8 s: kinetic energy below 1e-6 of its largest value, and below
    1e-3 of it at 5 s (001: about 4 s);
  - with rotations the mean coordination number and the fraction of six-coordinated spheres
    are larger than without (001's "lower packing order" without rotations);
  - the energy balance (kinetic + potential + contact + dissipated, with drag) closes within
    1e-3 of the energy dissipated;
  - no sphere escaped the container.
With --plot FILE (gnuplot, PNG): the kinetic energies of seed 5 (translational and rotational
with rotations, translational without) against time.
"""
import cmath
import math
import os
import shutil
import subprocess
import sys
import threading

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

root = os.path.abspath(os.path.join(here, "..", ".."))
tmp = sys.argv[1]
os.makedirs(tmp, exist_ok=True)
plot = sys.argv[sys.argv.index("--plot") + 1] if "--plot" in sys.argv else None
yaml = os.path.join(root, "config", "container2d.yaml")
R = 0.1
seeds = [4, 5, 6, 8]


def order(final):
    pts = [(b["x"], b["y"]) for b in final]
    nn, psi = [], []
    for i, (x, y) in enumerate(pts):
        s, k = 0, 0
        for j, (u, w) in enumerate(pts):
            if i != j and math.hypot(u - x, w - y) < 2.2 * R:
                s += cmath.exp(6j * math.atan2(w - y, u - x))
                k += 1
        nn.append(k)
        psi.append(abs(s) / 6)
    n = len(pts)
    return dict(coord=sum(nn) / n, six=sum(1 for k in nn if k == 6) / n, psi6=sum(psi) / n, height=max(y for x, y in pts) + R)


runs = {}
jobs = []
for s in seeds:
    for frozen in (False, True):
        tag = "seed%d_%s" % (s, "frozen" if frozen else "rot")
        sets = [("bodies.0.random.seed", str(s)), ("output.vtk_every", "-1"), ("run.end_time", "8.0")]
        if frozen:
            sets.append(("integrator.freeze_rotations", "true"))
        jobs.append((tag, sets))


def worker(items):
    for tag, sets in items:
        runs[tag] = dc.run("container2d " + tag, yaml, os.path.join(tmp, tag), sets)


threads = [threading.Thread(target=worker, args=(jobs[k::2],)) for k in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()

stats = {}
for tag, ok in sorted(runs.items()):
    if not ok:
        continue
    out = os.path.join(tmp, tag)
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    final = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    ke = [r["ke_trans"] + r["ke_rot"] for r in th]
    kmax = max(ke)
    k5 = min(th, key=lambda r: abs(r["time"] - 5.0))
    dc.check("container2d %s: at rest at 8 s (kinetic energy / its maximum)" % tag, ke[-1] / kmax, 1e-6,
             "KE %.3g J, max %.4g J; at 5 s %.3g" % (ke[-1], kmax, (k5["ke_trans"] + k5["ke_rot"]) / kmax))
    dc.check("container2d %s: nearly at rest at 5 s" % tag, (k5["ke_trans"] + k5["ke_rot"]) / kmax, 1e-3, "")
    e0, e1, diss = th[0]["e_balance"], th[-1]["e_balance"], th[-1]["dissipated"]
    dc.check("container2d %s: energy balance closes (|e_balance - e0| / dissipated)" % tag, abs(e1 - e0) / diss, 1e-3,
             "e0 %.7g J, end %.7g J, dissipated %.7g J; %d steps rejected" % (e0, e1, diss, th[-1]["rejected"]))
    inside = all(b["y"] >= 0.5 * R and (b["x"] + b["y"]) / math.sqrt(2) >= 0.5 * R and b["x"] <= 3 - 0.5 * R for b in final)
    dc.check("container2d %s: every sphere inside the container" % tag, 0.0 if inside and len(final) == 230 else 1.0, 0.0, "%d bodies" % len(final))
    stats[tag] = order(final)
    o = stats[tag]
    print("# %-14s coordination %.3f, six-coordinated %.3f, |psi6| %.3f, pile height %.3f m, rejected steps %d" % (tag, o["coord"], o["six"], o["psi6"], o["height"], th[-1]["rejected"]))

if len(stats) == 2 * len(seeds):
    mean = {}
    for kind in ("rot", "frozen"):
        mean[kind] = {k: sum(stats["seed%d_%s" % (s, kind)][k] for s in seeds) / len(seeds) for k in ("coord", "six", "psi6", "height")}
    detail = "; ".join("%s: coordination %.3f, six-coordinated %.3f, |psi6| %.3f, height %.3f m" % (k, mean[k]["coord"], mean[k]["six"], mean[k]["psi6"], mean[k]["height"]) for k in ("rot", "frozen"))
    dc.check("container2d: rotations give a more ordered pile (mean coordination, 4 fillings)", max(0.0, mean["frozen"]["coord"] - mean["rot"]["coord"]), 0.0, detail)
    dc.check("container2d: rotations give more six-coordinated spheres (4 fillings)", max(0.0, mean["frozen"]["six"] - mean["rot"]["six"]), 0.0, "")
else:
    dc.not_ok("container2d: order with and without rotations", "not every run finished")

if plot and runs.get("seed5_rot") and runs.get("seed5_frozen"):
    if not shutil.which("gnuplot"):
        dc.not_ok("container2d: plot", "gnuplot not found")
    else:
        a, b = os.path.join(tmp, "seed5_rot", "thermo.csv"), os.path.join(tmp, "seed5_frozen", "thermo.csv")
        script = """set terminal pngcairo size 900,700 font ",10"
set output '%s'
set datafile separator ','
set multiplot layout 2,1 title "001 example 5.3 (config/container2d.yaml, seed 5): kinetic energy of the 230 spheres"
set logscale y
set format y "10^{%%L}"
set yrange [1e-6:*]
set xrange [0:8]
set grid
set key top right
set ylabel 'translational kinetic energy (J)'
plot '%s' using 2:4 every ::1 with lines lw 2 lc rgb '#b05a00' title 'with rotations', \\
     '%s' using 2:4 every ::1 with lines lw 2 lc rgb '#1f5fbf' title 'rotations frozen'
set xlabel 'time (s)'
set ylabel 'rotational kinetic energy (J)'
plot '%s' using 2:5 every ::1 with lines lw 2 lc rgb '#b05a00' title 'with rotations'
unset multiplot
""" % (plot, a, b, a)
        gp = os.path.join(tmp, "ke.gp")
        open(gp, "w").write(script)
        rc = subprocess.call(["gnuplot", gp])
        dc.check("container2d: kinetic energy plot written to %s" % plot, 0.0 if rc == 0 and os.path.exists(plot) else 1.0, 0.0, "")
dc.finish()
