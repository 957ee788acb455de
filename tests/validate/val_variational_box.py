"""Filling a box, 003_9f0cdbfccae61a56.txt section 3.4 (Fig. 5(d), Fig. 11): Np = 218 spheres
settle under gravity in an L x L x 20 L box, L = 6 d (d = 0.01 m, density 2500), with the
parameters of 003 section 3: k d / (m g) = 195000, gamma_t = gamma_n / 2, gamma = 30 (the damping
ratio zeta = 30 / (2 sqrt(2 * 195000)) of 003's reduced units, as in val_variational_impact.py),
tangential force by damping only (kt = 1e-6 kn, Coulomb limit 1000). 003 starts from a LAMMPS
snapshot taken before the particles had settled; here both runs start from the same random
loose packing, at rest, in the lower half of the box. Velocity Verlet and the variational
integrator (alpha 0.5) at the same h = tc / 50 (tc = pi sqrt(m / (2k))), to t = 1 s, and
velocity Verlet at h = tc / 60 as the measure of the runs' chaotic divergence.

Macroscopic quantities (003 eq. (35)-(36)), from the velocities of all particles every 2 ms:
  K(t)   = 1/(2 Np) sum (m |v_i|^2 + I |w_i|^2)
  dv(t)  = 1/(3 Np) sum |vbar - v_i|^2,  vbar the mean velocity
The two runs diverge particle by particle after a few collisions (003: "sensitive to initial
conditions and numerical errors"), so they are compared over windows of 0.05 s:
  1. in every window before the trajectories diverge, i.e. up to the first window where the
     mean K of verlet at h = tc/60 and at tc/50 differ by more than 2.5 % (the fall and the
     first collisions, about 0.35 s), |K_var - K_verlet| / K_verlet <= 5 %, and the same for dv;
  2. both reach rest: K(1 s) <= 1e-5 of the peak of K, for each run.
After the trajectories have diverged (the final settling, few particles still moving) one
realization of the settling is compared with another: the window averages of verlet at
tc/60 and at tc/50 then differ by 10-80 %, and so do variational and verlet. These windows
are printed (with the verlet-verlet difference beside each) but not checked: a 5 % agreement
there would need averages over an ensemble of starts.
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


ver = series("verlet", "verlet")
var = series("variational", "variational")
base = series("verlet h=tc/60", "verlet", tc / 60)
if ver and var and base:
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
        for w in range(int(s[-1][0] / W)):
            a, b = w * W, (w + 1) * W
            pts = [(a,) + interp(a)] + [x for x in s if a < x[0] < b] + [(b,) + interp(b)]
            out[w] = tuple(sum(0.5 * (p[k] + q[k]) * (q[0] - p[0]) for p, q in zip(pts, pts[1:])) / W for k in (1, 2))
        return out
    wv, wa, wb = windows(ver), windows(var), windows(base)
    Kpk = max(K for _, K, _ in ver)
    worst = [0.0, 0.0]
    n = 0
    diverged = False
    for w in sorted(wv):
        if w not in wa or w not in wb or wv[w][0] < 1e-3 * Kpk:
            continue
        e = [abs(wa[w][k] - wv[w][k]) / wv[w][k] for k in (0, 1)]
        b = [abs(wb[w][k] - wv[w][k]) / wv[w][k] for k in (0, 1)]
        diverged = diverged or b[0] > 0.025
        print("# window [%.2f, %.2f) s%s: K verlet %.4e variational %.4e (%.2f %%; verlet tc/60 %.2f %%), dv verlet %.4e variational %.4e (%.2f %%; verlet tc/60 %.2f %%)"
              % (w * W, (w + 1) * W, " (diverged)" if diverged else "", wv[w][0], wa[w][0], 100 * e[0], 100 * b[0], wv[w][1], wa[w][1], 100 * e[1], 100 * b[1]))
        if not diverged:
            n += 1
            worst = [max(worst[k], e[k]) for k in (0, 1)]
    dc.check("box settling, 218 spheres: mean kinetic energy per particle (003 eq. (35)), variational vs verlet, worst of the %d windows of 0.05 s before the trajectories diverge" % n, worst[0], 0.05)
    dc.check("box settling, 218 spheres: velocity fluctuation (003 eq. (36)), variational vs verlet, worst of the same %d windows" % n, worst[1], 0.05)
    for name, s in (("verlet", ver), ("variational", var)):
        pk = max(K for _, K, _ in s)
        dc.check("box settling: %s reaches rest, K(%.1f s) / max K" % (name, s[-1][0]), s[-1][1] / pk, 1e-5, "K %.3e J, peak %.3e J" % (s[-1][1], pk))
    if plot:
        dat = os.path.join(tmp, "box.dat")
        with open(dat, "w") as fp:
            for (t, K, dv), (t2, K2, dv2) in zip(ver, var):
                fp.write("%.6f %.6e %.6e %.6e %.6e\n" % (t, K, dv, K2, dv2))
        dat2 = os.path.join(tmp, "box_base.dat")
        with open(dat2, "w") as fp:
            for t, K, dv in base:
                fp.write("%.6f %.6e %.6e\n" % (t, K, dv))
        gp = """set terminal pngcairo size 1000,420 font ',10'
set output '%s'
set multiplot layout 1,2 title '218 spheres settling in a 6d x 6d box (003 section 3.4): velocity Verlet vs variational (alpha = 0.5), h = t_c/50'
set logscale y
set format y '10^{%%L}'
set xrange [0:1]
set xlabel 't [s]'
set grid
set key top right
set ylabel 'mean kinetic energy per particle [J]  (003 eq. (35))'
plot '%s' u 1:2 w l lw 2 t 'verlet', '' u 1:4 w l lw 1.5 dt 2 t 'variational', '%s' u 1:2 w l lw 1 lc rgb 'gray' t 'verlet, h = t_c/60'
set ylabel 'velocity fluctuation [m^2/s^2]  (003 eq. (36))'
set yrange [1e-8:*]
plot '%s' u 1:3 w l lw 2 t 'verlet', '' u 1:5 w l lw 1.5 dt 2 t 'variational', '%s' u 1:3 w l lw 1 lc rgb 'gray' t 'verlet, h = t_c/60'
unset multiplot
""" % (plot, dat, dat2, dat, dat2)
        p = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
        print("# plot %s: %s" % (plot, "written" if p.returncode == 0 else p.stderr))
dc.finish()
