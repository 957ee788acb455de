"""Filling a box, 003_9f0cdbfccae61a56.txt section 3.4 (Fig. 5(d), Fig. 11): Np = 218 spheres
settle under gravity in an L x L x 20 L box, L = 6 d (d = 0.01 m, density 2500), with the
parameters of 003 section 3: k d / (m g) = 195000, gamma_t = gamma_n / 2, gamma = 30 (the damping
ratio zeta = 30 / (2 sqrt(2 * 195000)) of 003's reduced units, as in val_variational_impact.py),
tangential force by damping only (kt = 1e-6 kn, Coulomb limit 1000). 003 starts from a LAMMPS
snapshot taken before the particles had settled; here every run starts from the same random
loose packing, at rest, in the lower half of the box, and goes to t = 1 s.

Macroscopic quantities (003 eq. (35)-(36)), from the velocities of all particles every 2 ms:
  K(t)   = 1/(2 Np) sum (m |v_i|^2 + I |w_i|^2)
  dv(t)  = 1/(3 Np) sum |vbar - v_i|^2,  vbar the mean velocity
and their time averages over windows of W = 0.05 s.

A settling pile is chaotic: trajectories of two runs that differ in the last bit diverge
particle by particle after a few collisions (003: "sensitive to initial conditions and
numerical errors"), and from then on each run is one realization of the settling. So both
integrators are run as ensembles whose members differ only by the time step (a perturbation
of O(h^2) per step that the chaos amplifies):
  verlet       h = tc/50, tc/53, tc/56, tc/60, tc/64, tc/68    (6 members)
  variational  h = tc/50, tc/56, tc/64  (alpha 0.5)             (3 members)
(tc = pi sqrt(m / (2 k))), and compared through the ensemble means of the window averages.

Criterion, per window w with the verlet mean of K above 1e-3 of its peak (before the last,
nearly static creep), for X = K and X = dv:
  D_w = |<X_var>_w - <X_verlet>_w| / <X_verlet>_w        (<>: ensemble mean)
  S_w = sqrt(s_var^2 / 3 + s_verlet^2 / 6) / <X_verlet>_w (standard error of the difference,
                                                           s the ensemble standard deviations)
  1. where the ensembles resolve 5 % (S_w <= 2.5 %, i.e. a 5 % difference is two standard
     errors): D_w <= 5 %  - the issue's criterion. This holds the fall, the impact and the
     first settling (about t < 0.35 s), where all members still agree closely;
  2. where they do not (S_w > 2.5 %: the late windows, in which the members scatter by tens of
     per cent): D_w <= 3 S_w, i.e. variational is a statistically indistinguishable
     realization of the same settling; every such window is printed with D_w and S_w. A 5 %
     statement there would need about (S_w / 2.5 %)^2 times as many members;
  3. both reach rest: K(1 s) <= 1e-5 of the peak of K, for every member.
With PLOT=FILE.png the ensemble means (and every member, thin) are drawn with gnuplot
(docs/img/variational_settling.png was made this way).
"""
import concurrent.futures
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
plot = sys.argv[2] if len(sys.argv) > 2 else ""
yaml = os.path.join(here, "val_variational_box.yaml")
Np, R, rho = 218, 0.005, 2500.0
d = 2 * R
m = dc.sphere_mass(rho, R)
I = dc.sphere_inertia(rho, R)
kn = 195000.0 * m * dc.G / d
tc = math.pi * math.sqrt(m / (2 * kn))
zeta = 30.0 / (2 * math.sqrt(2 * 195000.0))
gn = 2 * zeta * math.sqrt(kn / (m / 2))
h = tc / 50
t_end = 1.0
W = 0.05


def series(name, integ, h=h):
    out = os.path.join(tmp, name.replace(" ", "_").replace("/", "_").replace("=", ""))
    s = [("contact.0.params.kn", dc.fmt(kn)), ("contact.0.params.kt", dc.fmt(1e-6 * kn)),
         ("contact.0.params.gamma_n", dc.fmt(gn)), ("contact.0.params.gamma_t", dc.fmt(gn / 2)),
         ("run.end_time", dc.fmt(t_end)), ("output.thermo_every", str(int(round(2e-3 / h)))),
         ("output.track", "[%s]" % ", ".join(str(i) for i in range(Np)))]
    s += [("integrator", "{type: verlet, dt: %r}" % h)] if integ == "verlet" else [("integrator.dt", dc.fmt(h))]
    cmd = [dc.MMDEM, "run", yaml, "--out", out, "--quiet"]
    for k, v in s:
        cmd += ["--set", "%s=%s" % (k, v)]
    with open(out + ".log", "w") as fp:    # no time limit: a few CPU minutes, more on a busy machine
        rc = subprocess.call(cmd, stdout=fp, stderr=subprocess.STDOUT)
    if rc:
        dc.not_ok("box settling " + name, "mmdem run exited with status %d (log %s.log)" % (rc, out))
        return None
    frames = {}
    for r in dc.read_csv(os.path.join(out, "track.csv")):
        frames.setdefault(r["step"], []).append(r)
    res = []
    for step in sorted(frames):
        rows = frames[step]
        if len(rows) != Np:
            continue
        t = rows[0]["time"]
        K = sum(m * (r["vx"] ** 2 + r["vy"] ** 2 + r["vz"] ** 2) + I * (r["wx"] ** 2 + r["wy"] ** 2 + r["wz"] ** 2) for r in rows) / (2 * Np)
        vb = [sum(r[c] for r in rows) / Np for c in ("vx", "vy", "vz")]
        dv = sum((vb[0] - r["vx"]) ** 2 + (vb[1] - r["vy"]) ** 2 + (vb[2] - r["vz"]) ** 2 for r in rows) / (3 * Np)
        res.append((t, K, dv))
    return res


VERLET_N = (50, 53, 56, 60, 64, 68)
VAR_N = (50, 56, 64)
members = {"verlet": [], "variational": []}
jobs = [(integ, n) for integ, ns in (("variational", VAR_N), ("verlet", VERLET_N)) for n in ns]
# two runs at a time (JOBS=1 for one): the slow variational members first
with concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("JOBS", "2"))) as ex:
    futs = [(integ, n, ex.submit(series, "%s h=tc%d" % (integ, n), integ, tc / n)) for integ, n in jobs]
    for integ, n, fu in futs:
        sr = fu.result()
        if sr:
            members[integ].append((n, sr))
for integ in members:
    members[integ].sort()


def windows(s):
    # time averages over [w W, (w + 1) W] of the piecewise-linear K(t), dv(t) (trapezoids;
    # the frames of runs with different steps fall at different times)
    def interp(t):
        for (ta, Ka, da), (tb, Kb, db) in zip(s, s[1:]):
            if ta <= t <= tb:
                f = (t - ta) / (tb - ta)
                return (Ka + f * (Kb - Ka), da + f * (db - da))
        return None
    out = {}
    for w in range(int(s[-1][0] / W + 1e-9)):
        a, b = w * W, (w + 1) * W
        pts = [(a,) + interp(a)] + [x for x in s if a < x[0] < b] + [(b,) + interp(b)]
        out[w] = tuple(sum(0.5 * (p[k] + q[k]) * (q[0] - p[0]) for p, q in zip(pts, pts[1:])) / W for k in (1, 2))
    return out


def stats(vals):
    mu = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - mu) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else 0.0
    return mu, sd


if len(members["verlet"]) >= 3 and len(members["variational"]) >= 2:
    wv = [windows(sr) for _, sr in members["verlet"]]
    wa = [windows(sr) for _, sr in members["variational"]]
    nwin = min(min(len(x) for x in wv), min(len(x) for x in wa))
    Kpk = max(max(K for _, K, _ in sr) for _, sr in members["verlet"])
    res = {0: [], 1: []}   # per quantity: (w, D, S)
    for w in range(nwin):
        muK = stats([x[w][0] for x in wv])[0]
        if muK < 1e-3 * Kpk:
            continue
        line = []
        for k, q in ((0, "K"), (1, "dv")):
            mv, sv = stats([x[w][k] for x in wv])
            ma, sa = stats([x[w][k] for x in wa])
            D = abs(ma - mv) / mv
            S = math.sqrt(sa * sa / len(wa) + sv * sv / len(wv)) / mv
            res[k].append((w, D, S))
            line.append("%s verlet %.4e (sd %.1f %%) variational %.4e (sd %.1f %%): D %.2f %%, S %.2f %%" % (q, mv, 100 * sv / mv, ma, 100 * sa / ma if ma else 0, 100 * D, 100 * S))
        print("# window [%.2f, %.2f) s: %s" % (w * W, (w + 1) * W, "; ".join(line)))
    for k, q in ((0, "mean kinetic energy per particle (003 eq. (35))"), (1, "velocity fluctuation (003 eq. (36))")):
        fine = [(w, D, S) for w, D, S in res[k] if S <= 0.025]
        coarse = [(w, D, S) for w, D, S in res[k] if S > 0.025]
        if fine:
            w, D, S = max(fine, key=lambda x: x[1])
            dc.check("box settling, 218 spheres: %s, ensemble means variational (%d) vs verlet (%d), worst of the %d windows of 0.05 s where the ensembles resolve 5 %% (standard error <= 2.5 %%)"
                     % (q, len(wa), len(wv), len(fine)), D, 0.05, "window [%.2f, %.2f) s" % (w * W, (w + 1) * W))
        else:
            dc.not_ok("box settling: %s" % q, "no window where the ensembles resolve 5 %")
        if coarse:
            w, D, S = max(coarse, key=lambda x: x[1] / x[2])
            dc.check("box settling, 218 spheres: %s, the other %d windows (ensemble scatter > 2.5 %%): difference / 3 standard errors, worst"
                     % (q, len(coarse)), D / (3 * S), 1.0, "window [%.2f, %.2f) s: D %.1f %%, S %.1f %%" % (w * W, (w + 1) * W, 100 * D, 100 * S))
    for integ in ("verlet", "variational"):
        worst = max(sr[-1][1] / max(K for _, K, _ in sr) for _, sr in members[integ])
        dc.check("box settling: every %s member reaches rest, K(%.1f s) / max K, largest of %d" % (integ, members[integ][0][1][-1][0], len(members[integ])), worst, 1e-5)
    if plot:
        def mean_series(ms):
            # ensemble mean on the 2 ms grid of the first member (interpolated)
            base = ms[0][1]
            out = []
            for t, _, _ in base:
                vals = []
                for _, sr in ms:
                    for (ta, Ka, da), (tb, Kb, db) in zip(sr, sr[1:]):
                        if ta <= t <= tb:
                            f = (t - ta) / (tb - ta) if tb > ta else 0
                            vals.append((Ka + f * (Kb - Ka), da + f * (db - da)))
                            break
                if len(vals) == len(ms):
                    out.append((t, sum(v[0] for v in vals) / len(vals), sum(v[1] for v in vals) / len(vals)))
            return out
        files = []
        for integ in ("verlet", "variational"):
            fn = os.path.join(tmp, "box_%s_mean.dat" % integ)
            with open(fn, "w") as fp:
                for t, K, dv in mean_series(members[integ]):
                    fp.write("%.6f %.6e %.6e\n" % (t, K, dv))
            files.append(fn)
        mem = os.path.join(tmp, "box_members.dat")
        with open(mem, "w") as fp:
            for _, sr in members["verlet"]:
                for t, K, dv in sr:
                    fp.write("%.6f %.6e %.6e\n" % (t, K, dv))
                fp.write("\n")
        memv = os.path.join(tmp, "box_members_var.dat")
        with open(memv, "w") as fp:
            for _, sr in members["variational"]:
                for t, K, dv in sr:
                    fp.write("%.6f %.6e %.6e\n" % (t, K, dv))
                fp.write("\n")
        gp = """set terminal pngcairo size 1100,460 font ',10'
set output '%s'
set multiplot layout 1,2 title '218 spheres settling in a 6d x 6d x 120d box (003 section 3.4): ensemble means, verlet (h = t_c/50 ... t_c/68, 6 runs) vs variational alpha 0.5 (h = t_c/50, t_c/56, t_c/64)'
set logscale y
set format y '10^{%%L}'
set xrange [0:1]
set xlabel 't [s]'
set grid
set key top right
set ylabel 'mean kinetic energy per particle [J]  (003 eq. (35))'
plot '%s' u 1:2 w l lw 0.5 lc rgb '#c0c0ff' t 'verlet runs', '%s' u 1:2 w l lw 0.5 lc rgb '#ffc0a0' t 'variational runs', '%s' u 1:2 w l lw 2.5 lc rgb 'blue' t 'verlet, ensemble mean', '%s' u 1:2 w l lw 2 dt 2 lc rgb 'red' t 'variational, ensemble mean'
set ylabel 'velocity fluctuation [m^2/s^2]  (003 eq. (36))'
set yrange [1e-8:*]
plot '%s' u 1:3 w l lw 0.5 lc rgb '#c0c0ff' t 'verlet runs', '%s' u 1:3 w l lw 0.5 lc rgb '#ffc0a0' t 'variational runs', '%s' u 1:3 w l lw 2.5 lc rgb 'blue' t 'verlet, ensemble mean', '%s' u 1:3 w l lw 2 dt 2 lc rgb 'red' t 'variational, ensemble mean'
unset multiplot
""" % (plot, mem, memv, files[0], files[1], mem, memv, files[0], files[1])
        p = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
        print("# plot %s: %s" % (plot, "written" if p.returncode == 0 else p.stderr))
else:
    dc.not_ok("box settling ensembles", "runs finished: verlet %d, variational %d" % (len(members["verlet"]), len(members["variational"])))
dc.finish()
