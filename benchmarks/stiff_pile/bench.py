"""benchmarks/stiff_pile: time to rest of N stiff glass spheres (E = 63 GPa, Hertz-Mindlin,
restitution 0.3, friction 0.5, r = 1 mm) poured onto a floor, integrator newmark (adaptive,
implicit, 000) against verlet at its stable dt (issue 5; goal: newmark >= 3x faster to rest).

Time to rest: the first thermo row from which ke_trans + ke_rot stays below 1e-8 of its peak;
its wall_s column is the wall time to rest (thermo.csv's wall clock since the start of the run),
its step column the step count; newton_total and ksp_total (newmark) the Newton and the linear
(GMRES) iterations up to it.
Runs: verlet with dt = dt_fraction * tc (dt: auto; default 0.2 tc, where tc is mmdem's shortest
collision time); newmark by default with beta 0.3025, gamma 0.6 (numerical damping of the contact
modes that a step far above tc cannot resolve; --beta 0.3 --gamma 0.5 runs the paper's defaults,
which have none), starting at dt = tc, growing up to dt_max = 50 x the
explicit critical dt (2 tc / pi), at most 15 Newton iterations per solve (max_iterations: a
solve that has not converged by then rarely does, and the step is retried with dt/2 anyway;
measured at N = 100 up to t = 0.025 s: 2973 instead of 6395 Newton iterations, the same 96-100
cut steps). A run that does not reach rest before end_time reports "--".

cpu_total_s: user + system CPU time of the whole run (getrusage of the child; on a shared machine
the wall clock is mostly other people's load, the CPU time is the run's own); cpu_to_rest_s: that
times the run's share of wall time up to rest (thermo.csv's wall clock). --newmark-keys appends
keys to newmark's integrator map (e.g. --newmark-keys "active_set: true").

Also reported: the first thermo row from which KE stays below 1e-4 and 1e-6 of its peak, with
the CPU time up to it (verlet: its share of the steps; newmark: its share of wall time).
A run is stopped after --timeout seconds of wall time (exit 124 in the table; its thermo rows
up to then still count). ke_end/peak: the kinetic energy of the last row over the peak (a
pile whose spheres keep rolling - Hertz-Mindlin has no rolling resistance - may level off
above the rest threshold).

Usage: /usr/bin/python3 benchmarks/stiff_pile/bench.py [--n 2000] [--end 1.0] [--mmdem build/mmdem]
       [--only verlet|newmark] [--fraction 0.2] [--timeout 1800] [--rest 1e-8] [--beta 0.3025]
       [--gamma 0.6] [--newmark-keys "k: v, ..."] [--results FILE] [--keep DIR]
Writes benchmarks/stiff_pile/results.txt (or --results FILE; the table printed). benchmarks/run.sh (make bench)
runs it with STIFF_PILE_N (default 2000; 0 skips it) and STIFF_PILE_TIMEOUT (default 1800).
"""
import argparse
import csv
import math
import os
import re
import resource
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=2000)
ap.add_argument("--end", type=float, default=1.0)
ap.add_argument("--mmdem", default=os.path.join(here, "..", "..", "build", "mmdem"))
ap.add_argument("--only", default="")
ap.add_argument("--fraction", type=float, default=0.2)
ap.add_argument("--keep", default="")
ap.add_argument("--timeout", type=float, default=1800.0)
ap.add_argument("--rest", type=float, default=1e-8)
ap.add_argument("--beta", type=float, default=0.3025)
ap.add_argument("--gamma", type=float, default=0.6)
ap.add_argument("--results", default=os.path.join(here, "results.txt"))
ap.add_argument("--newmark-keys", default="")
a = ap.parse_args()

R = 0.001
# box: about 10 x 10 spheres per layer of a loose random fill, 3 diameters of height per layer
L = 2 * R * max(3, round(math.sqrt(a.n / 4.0)))
layers = a.n / ((L / (2 * R)) ** 2) * 2.0
H0 = 0.0011 + layers * 2 * R * 1.2
H = H0 + 0.01
tmp = a.keep or tempfile.mkdtemp()
os.makedirs(tmp, exist_ok=True)


def write(name, integ, every):
    s = open(os.path.join(here, "stiff_pile.yaml.in")).read()
    for k, v in (("@L@", repr(L)), ("@H@", repr(H)), ("@H0@", repr(H0)), ("@N@", str(a.n)), ("@INTEG@", integ),
                 ("@T@", repr(a.end)), ("@EVERY@", str(every))):
        s = s.replace(k, v)
    p = os.path.join(tmp, name + ".yaml")
    open(p, "w").write(s)
    return p


chk = subprocess.run([a.mmdem, "check", write("check", "{type: verlet, dt: auto, dt_fraction: 0.1}", 100)],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
m = re.search(r"shortest collision time tc = ([0-9.eE+-]+)", chk.stdout)
if not m:
    sys.exit("mmdem check failed: " + chk.stdout[-500:])
tc = float(m.group(1))
dtc = 2 * tc / math.pi
runs = [("verlet", "{type: verlet, dt: auto, dt_fraction: %r}" % a.fraction, 200),
        ("newmark", "{type: newmark, dt: %r, dt_max: %r, beta: %r, gamma: %r, max_iterations: 15%s}" % (tc, 50 * dtc, a.beta, a.gamma, ", " + a.newmark_keys if a.newmark_keys else ""), 5)]


def where_ke(name, path, ke_last):
    """the body holding most of the kinetic energy in bodies_final.csv (a finished run), with
    its velocities and height: what keeps a pile from coming to rest"""
    try:
        bodies = list(csv.DictReader(open(path)))
    except OSError:
        return []
    m = 2500.0 * 4.0 / 3.0 * math.pi * R ** 3  # stiff_pile.yaml.in: density 2500, radius R
    ii = 0.4 * m * R * R
    ke = []
    for b in bodies:
        v = [float(b[c]) for c in ("vx", "vy", "vz")]
        w = [float(b[c]) for c in ("wx", "wy", "wz")]
        ke.append((0.5 * m * sum(c * c for c in v) + 0.5 * ii * sum(c * c for c in w), b, v, w))
    tot = sum(e[0] for e in ke)
    if not ke or tot <= 0:
        return []
    e, b, v, w = max(ke, key=lambda e: e[0])
    return ["%s: at the end %.1f %% of the KE (%.3g J; thermo's last row %.3g J) is body %s's: z = %.4g m, v = (%.2g, %.2g, %.2g) m/s, w = (%.3g, %.3g, %.3g) rad/s"
            % (name, 100.0 * e / tot, tot, ke_last, b["id"], float(b["z"]), v[0], v[1], v[2], w[0], w[1], w[2])]


rows = []
extra = []  # the first rows below 1e-4 and 1e-6 of the peak (a pile that keeps rolling may never reach --rest)
for name, integ, every in runs:
    if a.only and a.only != name:
        continue
    out = os.path.join(tmp, name)
    y = write(name, integ, every)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run([a.mmdem, "run", y, "--out", out, "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=a.timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = 124
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
    try:
        th = list(csv.DictReader(open(os.path.join(out, "thermo.csv"))))
    except OSError:
        th = []
    if len(th) < 2:
        rows.append((name, "--", "-", "-", "-", "-", "%.1f" % cpu, "-", "-", "-", rc))
        continue
    ke = [float(r["ke_trans"]) + float(r["ke_rot"]) for r in th]
    peak = max(ke)
    rest = None
    for k in range(len(th)):
        if all(x < a.rest * peak for x in ke[k:]):
            rest = k
            break
    last = th[-1]
    kend = "%.2e" % (ke[-1] / peak if peak > 0 else 0)
    for thr in (1e-4, 1e-6):
        k = next((k for k in range(len(th)) if all(x < thr * peak for x in ke[k:])), None)
        if k is None:
            extra.append("%s: KE < %g of its peak: not reached by t = %s" % (name, thr, last["time"]))
            continue
        r = th[k]
        # CPU up to the row: verlet's steps cost the same (its step share); newmark's by its wall share
        share = (float(r["wall_s"]) / float(last["wall_s"]) if float(last["wall_s"]) > 0 else 1) if "newton_total" in r else float(r["step"]) / float(last["step"])
        extra.append("%s: KE < %g of its peak from t = %.4f s, step %s, newton_its %s, ksp_its %s, cpu ~%.1f s" % (name, thr, float(r["time"]), r["step"], r.get("newton_total", "-"), r.get("ksp_total", "-"), cpu * share))
    # translational KE alone: a sphere spinning about the normal of its only contact (on the
    # floor) keeps its spin, since the laws have no twisting torque; that KE then never decays
    kt = [float(r["ke_trans"]) for r in th]
    k = next((k for k in range(len(th)) if all(x < a.rest * peak for x in kt[k:])), None)
    extra.append("%s: translational KE < %g of the peak (of the total KE): %s" % (name, a.rest, "from t = %.4f s, step %s" % (float(th[k]["time"]), th[k]["step"]) if k is not None else "not reached by t = %s" % last["time"]))
    extra += where_ke(name, os.path.join(out, "bodies_final.csv"), ke[-1])
    if rest is None or rc != 0:
        rows.append((name, "--", last["step"], last.get("newton_total", "-"), last.get("ksp_total", "-"), last["wall_s"], "%.1f" % cpu, "--", last["time"], kend, rc))
    else:
        r = th[rest]
        share = float(r["wall_s"]) / float(last["wall_s"]) if float(last["wall_s"]) > 0 else 1
        rows.append((name, r["wall_s"], r["step"], r.get("newton_total", "-"), r.get("ksp_total", "-"), last["wall_s"], "%.1f" % cpu, "%.1f" % (cpu * share), r["time"], kend, rc))
lines = ["stiff_pile: N = %d spheres, tc = %.4g s, explicit critical dt 2 tc/pi = %.4g s, end_time %g s, rest: KE < %g of its peak"
         % (a.n, tc, dtc, a.end, a.rest) + ("; newmark beta %g, gamma %g%s" % (a.beta, a.gamma, ", " + a.newmark_keys if a.newmark_keys else "") if a.only != "verlet" else ""),
         "%-8s %14s %10s %12s %12s %12s %11s %13s %12s %11s %5s" % ("integ", "wall_to_rest_s", "steps", "newton_its", "ksp_its", "wall_total_s", "cpu_total_s", "cpu_to_rest_s", "t_rest_s", "ke_end/peak", "exit"),
         "(a run not at rest: steps, newton_its, ksp_its, t_rest_s are those of its last row)"]
for r in rows:
    lines.append("%-8s %14s %10s %12s %12s %12s %11s %13s %12s %11s %5s" % r)
if len(rows) == 2 and rows[0][1] != "--" and rows[1][1] != "--":
    lines.append("speed-up newmark / verlet (wall to rest): %.2f, (CPU to rest): %.2f (goal >= 3)" % (float(rows[0][1]) / float(rows[1][1]), float(rows[0][7]) / float(rows[1][7])))
lines += extra
print("\n".join(lines))
open(a.results, "w").write("\n".join(lines) + "\n")
