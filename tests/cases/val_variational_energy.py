"""Energy bookkeeping of the variational integrator (003_9f0cdbfccae61a56.txt eq. (5)-(6), (14),
(29)-(31)) in a short damped run with rejected steps.

Two spheres (d = 0.01 m, density 2500) are put on the floor, touching it, with horizontal
velocities v0 = 0.5 and 0.3 m/s and no spin, under gravity. Contact law hooke with the parameters
of 003 section 3 (k d / (m g) = 195000, gamma = 30, gamma_t = gamma_n / 2) and the tangential force
of the dashpot alone (kt = 1e-6 kn, Coulomb limit 1000 fn, as val_variational_box.py emulates 003's
frictionless tangential damping). In the first steps fn is tiny, so the Coulomb limit caps the
dashpot force: the case in which the old return mapping (friction.h) stretched the soft spring to
|Ft| / kt and made energy from nothing (a negative `dissipated` increment).

A rigid sphere sliding on a plane under a tangential force at the contact point keeps its angular
momentum about the contact point: it ends rolling at v = 5/7 v0 (w R = v), having lost
  D = 1/2 m v0^2 - 1/2 (m + I / R^2) (5/7 v0)^2 = 2/7 * 1/2 m v0^2
whatever the dashpot's constant. The soft spring still holds about 3e-4 m (it relaxes with
ct / kt = 2.4 s), which leaves a creep of 1e-4 of v: tolerances 1e-3.

alpha = 0.5, h = tc/20, max_iterations 2 (so that Newton steps are rejected and retried with dt/2):
  1. rejected steps happen (thermo.csv `rejected` > 0, dt below h);
  2. `dissipated` never decreases, step by step (thermo_every 1);
  3. e_total + dissipated (e_balance) stays within 1e-6 of the initial kinetic energy K0 (for the
     midpoint rule the dashpots' work h Q(S) . dq / h is exactly the counted loss, and the linear
     normal spring's energy is conserved exactly; measured 3e-11);
  4. D(end) = 2/7 K0 within 1e-3; each sphere's v = 5/7 v0 and w R = v within 1e-3.
alpha = 0 (first order), h = tc/20: `dissipated` never decreases, and D(end) = 2/7 K0 within 2 %
(its bookkeeping is first order in h: 1.2 % at tc/20).
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
yaml = os.path.join(here, "val_variational_energy.yaml")
R, rho = 0.005, 2500.0
d = 2 * R
m = dc.sphere_mass(rho, R)
kn = 195000.0 * m * dc.G / d
tc = math.pi * math.sqrt(m / (2 * kn))
zeta = 30.0 / (2 * math.sqrt(2 * 195000.0))
gn = 2 * zeta * math.sqrt(kn / (m / 2))
V0 = (0.5, 0.3)
K0 = sum(0.5 * m * v * v for v in V0)
h = tc / 20


def run(tag, alpha, maxit):
    out = os.path.join(tmp, tag)
    sets = [("contact.0.params.kn", dc.fmt(kn)), ("contact.0.params.kt", dc.fmt(1e-6 * kn)),
            ("contact.0.params.gamma_n", dc.fmt(gn)), ("contact.0.params.gamma_t", dc.fmt(gn / 2)),
            ("integrator.dt", dc.fmt(h)), ("integrator.alpha", str(alpha)), ("integrator.max_iterations", str(maxit))]
    if not dc.run("variational energy bookkeeping, " + tag, yaml, out, sets):
        return None, None
    return dc.read_csv(os.path.join(out, "thermo.csv")), dc.read_csv(os.path.join(out, "track.csv"))


th, tr = run("alpha0.5", 0.5, 2)
if th:
    nrej = th[-1]["rejected"]
    dtmin = min(r["dt"] for r in th[1:])
    if nrej > 0 and dtmin < h * (1 - 1e-12):
        dc.ok("variational alpha 0.5, max_iterations 2: steps are rejected and retried with dt/2", "%d rejected, smallest dt %.3g s = h / %.0f" % (nrej, dtmin, h / dtmin))
    else:
        dc.not_ok("variational alpha 0.5, max_iterations 2: steps are rejected", "%d rejected, smallest dt %.3g s, h %.3g s" % (nrej, dtmin, h))
    inc = [b["dissipated"] - a["dissipated"] for a, b in zip(th, th[1:])]
    k = min(range(len(inc)), key=lambda i: inc[i])
    dc.check("variational alpha 0.5 with rejected steps: `dissipated` never decreases (smallest step increment, J, must be >= 0)", max(0.0, -inc[k]), 0.0, "smallest increment %.3e J at step %d" % (inc[k], th[k + 1]["step"]))
    dev = max(abs(r["e_balance"] - th[0]["e_balance"]) for r in th)
    dc.check("variational alpha 0.5 with rejected steps: e_total + dissipated conserved, max deviation / K0", dev / K0, 1e-6)
    D = th[-1]["dissipated"]
    dc.check("variational alpha 0.5: energy dissipated until rolling = 2/7 K0 (rigid sphere sliding to rolling), relative error", abs(D / (2.0 / 7.0 * K0) - 1), 1e-3, "D %.6e J, 2/7 K0 %.6e J" % (D, 2.0 / 7.0 * K0))
    for i, v0 in enumerate(V0):
        r = [x for x in tr if x["id"] == i][-1]
        v = math.hypot(r["vx"], r["vy"])
        wR = math.hypot(r["wx"], r["wy"]) * R
        dc.check("variational alpha 0.5: sphere %d rolls at 5/7 v0, relative error" % i, abs(v / (5.0 / 7.0 * v0) - 1), 1e-3, "v %.6f m/s, 5/7 v0 %.6f m/s" % (v, 5.0 / 7.0 * v0))
        dc.check("variational alpha 0.5: sphere %d rolls without slip, |w R - v| / v" % i, abs(wR - v) / v, 1e-3, "w R %.6f m/s" % wR)
th, tr = run("alpha0", 0, 20)
if th:
    inc = [b["dissipated"] - a["dissipated"] for a, b in zip(th, th[1:])]
    k = min(range(len(inc)), key=lambda i: inc[i])
    dc.check("variational alpha 0: `dissipated` never decreases (smallest step increment, J, must be >= 0)", max(0.0, -inc[k]), 0.0, "smallest increment %.3e J at step %d" % (inc[k], th[k + 1]["step"]))
    D = th[-1]["dissipated"]
    dc.check("variational alpha 0 (first order): energy dissipated until rolling = 2/7 K0, relative error", abs(D / (2.0 / 7.0 * K0) - 1), 0.02, "D %.6e J, 2/7 K0 %.6e J" % (D, 2.0 / 7.0 * K0))
dc.finish()
