"""Two-particle impact with the variational integrator, 003_9f0cdbfccae61a56.txt section 3.1.

Parameters as in 003 section 3: equal spheres (d = 0.01 m, density 2500), k d / (m g) = 195000,
gamma_t = gamma_n / 2. 003's damping parameter gamma = 30 is read in the reduced units
d = m = g = 1 of its k d / (m g) = 195000, where sqrt(2 k / m) = sqrt(390000): the damping
ratio zeta = gamma / (2 sqrt(2 k / m)) = 0.02402 is unit-free and is what we keep
(gamma_n = 2 zeta sqrt(kn / meff) in our 1/s convention, F = -meff gamma_n v).
tc = pi sqrt(m / (2 k)) (003 after eq. (34)).

1. dy = 0, alpha = 0.5, h = tc/160 (003 Fig. 8): the kinetic energy of the right particle
   against the analytic damped oscillator, 003 eq. (32)-(34), for gamma = 0 and gamma = 30:
   max |KE - KE_exact| / KE(0) <= 1e-3 over the collision and 0.5 tc after it.
   The spheres start 1e-6 m apart, so the contact starts within a step as in a real run.
   Analytic: overlap delta'' + gamma_n delta' + w0^2 delta = 0 from delta = 0, delta' = 2 v0
   (w0^2 = kn / meff, meff = m/2), v_right = -delta'/2 until delta returns to 0.
1b. Order of accuracy (003 section 2.1: alpha = 0 "first-order accurate", alpha = 1/2
   "second-order"): undamped head-on, max |v - v_exact| / v0 over the run at h = tc/40, tc/80,
   tc/160, tc/320; the observed order log2(err(tc/40) / err(tc/320)) / 3 is 1 +- 0.15 for
   alpha = 0 and 2 +- 0.25 for alpha = 0.5.
2. dy / d = 0.1, gamma = 30 (003 Fig. 7): second order at h = tc/16.1 against velocity Verlet
   at h = tc/160; translational and rotational kinetic energy of the right particle at the end
   of the collision agree within 2 %, as means over 8 phases of the first touch within a step
   (see the comment at the runs: a single run carries an O(h/tc) error from where in a step
   the dashpots switch on and off; the spread over the phases is printed). The tangential force of 003 eq. (21) without the
   tangential overlap (003 section 3: "the tangential overlap between particles is not
   calculated") is the hooke law with kt = 1e-6 kn (a negligible spring) and a Coulomb limit
   mu = 1000 that never acts while the spheres press (it does once the normal dashpot pulls,
   identically for both integrators).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_variational_impact.yaml")
R, rho, v0 = 0.005, 2500.0, 0.5
d = 2 * R
m = dc.sphere_mass(rho, R)
I = dc.sphere_inertia(rho, R)
meff = m / 2
kn = 195000.0 * m * dc.G / d                      # 003 section 3
w0 = math.sqrt(kn / meff)
tc = math.pi * math.sqrt(m / (2 * kn))            # 003 after eq. (34)
zeta30 = 30.0 / (2 * math.sqrt(2 * 195000.0))     # 003's gamma = 30 in d = m = g = 1 units
ke0 = 0.5 * m * v0 ** 2
g0 = 1.0e-6                                       # initial gap


def sets_for(gn, dy, dt, t_end, integrator="variational", alpha=0.5):
    # centres at distance d + g0, offset dy in y
    dx = math.sqrt((d + g0) ** 2 - dy ** 2)
    s = [("contact.0.params.kn", dc.fmt(kn)), ("contact.0.params.kt", dc.fmt(1e-6 * kn)),
         ("contact.0.params.gamma_n", dc.fmt(gn)), ("contact.0.params.gamma_t", dc.fmt(gn / 2)),
         ("contact.0.params.mu", "1000"),
         ("bodies.0.list.0.x", "[%r, %r, 0]" % (-dx / 2, -dy / 2)),
         ("bodies.0.list.1.x", "[%r, %r, 0]" % (dx / 2, dy / 2)),
         ("integrator.type", integrator), ("integrator.dt", dc.fmt(dt)),
         ("run.steps", str(int(math.ceil(t_end / dt))))]
    if integrator == "variational":
        s.append(("integrator.alpha", repr(alpha)))
    else:
        s.append(("integrator", "{type: verlet, dt: %r}" % dt))
    return s


def track(out, body):
    return [r for r in dc.read_csv(os.path.join(out, "track.csv")) if r["id"] == body]


# 1. head-on, against 003 eq. (33)-(34)
for gname, zeta in (("0", 0.0), ("30", zeta30)):
    gn = 2 * zeta * w0
    wd = math.sqrt(w0 ** 2 - 0.25 * gn ** 2)
    tA = g0 / (2 * v0)
    t_out = math.pi / wd                           # delta returns to 0
    dt = tc / 160
    t_end = tA + t_out + 0.5 * tc
    V = 2 * v0

    def v_right(t):
        tp = min(max(t - tA, 0.0), t_out)
        if t <= tA:
            return -v0
        dd = V * math.exp(-0.5 * gn * tp) * (math.cos(wd * tp) - 0.5 * gn / wd * math.sin(wd * tp))
        return -0.5 * dd

    tag = "variational impact dy=0 gamma=%s alpha=0.5 h=tc/160" % gname
    out = os.path.join(tmp, "head_g%s" % gname)
    if dc.run(tag, yaml, out, sets_for(gn, 0.0, dt, t_end)):
        tr = track(out, 1)
        err = 0.0
        for r in tr:
            t = r["step"] * dt
            err = max(err, abs(0.5 * m * r["vx"] ** 2 - 0.5 * m * v_right(t) ** 2) / ke0)
        dc.check(tag + ": kinetic energy of the right particle vs 003 eq. (34), max |KE - KE_exact| / KE(0)",
                 err, 1e-3, "zeta = %.5f, %d steps" % (zeta, len(tr) - 1))
        e_sim = -tr[-1]["vx"] / v0
        e_ex = math.exp(-math.pi * zeta / math.sqrt(1 - zeta ** 2))
        print("# %s: restitution %.6f (analytic %.6f)" % (tag, e_sim, e_ex))

# 1b. order of accuracy
for alpha, order, band in ((0.0, 1.0, 0.15), (0.5, 2.0, 0.25)):
    errs = []
    tA = g0 / (2 * v0)
    for frac in (40, 80, 160, 320):
        dt = tc / frac
        out = os.path.join(tmp, "order_%g_%d" % (alpha, frac))
        if not dc.run("order alpha=%g" % alpha, yaml, out, sets_for(0.0, 0.0, dt, tA + math.pi / w0 + 0.5 * tc, "variational", alpha)):
            break
        err = 0.0
        for r in track(out, 1):
            tp = min(max(r["step"] * dt - tA, 0.0), math.pi / w0)
            vex = -v0 if r["step"] * dt <= tA else -v0 * math.cos(w0 * tp)
            err = max(err, abs(r["vx"] - vex) / v0)
        errs.append(err)
    if len(errs) == 4:
        p = math.log2(errs[0] / errs[3]) / 3
        dc.check("variational alpha=%g, undamped head-on impact: order of accuracy %g (003 section 2.1), |observed - %g|" % (alpha, order, order),
                 abs(p - order), band, "observed %.3f; max |v - v_exact| / v0 at tc/40..tc/320: %s" % (p, ", ".join("%.3e" % e for e in errs)))

# 2. oblique, gamma = 30: variational at tc/16.1 against verlet at tc/160. The dashpots of
# 003 eq. (20)-(21) switch on and off with the contact, inside a step: with 16 steps per
# collision where the contact starts within a step changes the dissipated impulse by O(h/tc)
# for any fixed-step scheme. Each comparison is therefore made over 8 starting gaps that put
# the first touch at 0, 1/8, ..., 7/8 of a step of the coarse run; the means are compared.
gn = 2 * zeta30 * w0
dy = 0.1 * d
runs = (("verlet tc/160", "verlet", 0.5, tc / 160),
        ("variational alpha=0.5 tc/16.1", "variational", 0.5, tc / 16.1),
        ("variational alpha=0.5 tc/160", "variational", 0.5, tc / 160))
res = {}
for name, integ, alpha, dt in runs:
    vals = []
    for ph in range(8):
        gap0 = g0 + ph / 8.0 * (tc / 16.1) * 2 * v0
        out = os.path.join(tmp, "obl_%d_%d" % (len(res), ph))
        t_end = gap0 / (2 * v0) + 2.0 * tc
        s = sets_for(gn, dy, dt, t_end, integ, alpha)
        dx = math.sqrt((d + gap0) ** 2 - dy ** 2)
        s += [("bodies.0.list.0.x", "[%r, %r, 0]" % (-dx / 2, -dy / 2)), ("bodies.0.list.1.x", "[%r, %r, 0]" % (dx / 2, dy / 2)),
              ("output.thermo_every", "1000000")]
        if not dc.run("oblique impact " + name, yaml, out, s):
            break
        r = [x for x in dc.read_csv(os.path.join(out, "bodies_final.csv")) if x["id"] == 1][0]
        vals.append((0.5 * m * (r["vx"] ** 2 + r["vy"] ** 2), 0.5 * I * r["wz"] ** 2))
    if len(vals) < 8:
        continue
    res[name] = (sum(v[0] for v in vals) / 8, sum(v[1] for v in vals) / 8)
    print("# oblique impact dy/d = 0.1, gamma = 30, %s: mean over 8 phases KE_trans %.6e J, KE_rot %.6e J;"
          " KE_rot per phase in [%.6e, %.6e] J" % (name, res[name][0], res[name][1], min(v[1] for v in vals), max(v[1] for v in vals)))
if "verlet tc/160" in res and "variational alpha=0.5 tc/16.1" in res:
    (kt0, kr0), (kt1, kr1) = res["verlet tc/160"], res["variational alpha=0.5 tc/16.1"]
    dc.check("oblique impact dy/d=0.1 gamma=30: KE_trans after the collision, variational (alpha 0.5, tc/16.1) vs verlet (tc/160), mean over 8 phases",
             abs(kt1 - kt0) / kt0, 0.02, "%.6e vs %.6e J" % (kt1, kt0))
    dc.check("oblique impact dy/d=0.1 gamma=30: KE_rot after the collision, variational (alpha 0.5, tc/16.1) vs verlet (tc/160), mean over 8 phases",
             abs(kr1 - kr0) / kr0, 0.02, "%.6e vs %.6e J" % (kr1, kr0))
if "verlet tc/160" in res and "variational alpha=0.5 tc/160" in res:
    (kt0, kr0), (kt1, kr1) = res["verlet tc/160"], res["variational alpha=0.5 tc/160"]
    dc.check("oblique impact dy/d=0.1 gamma=30: KE_trans and KE_rot, variational (alpha 0.5) vs verlet, both tc/160 (003 Fig. 6: indistinguishable), mean over 8 phases",
             max(abs(kt1 - kt0) / kt0, abs(kr1 - kr0) / kr0), 0.01, "KE_rot %.6e vs %.6e J" % (kr1, kr0))
dc.finish()
