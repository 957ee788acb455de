"""Checks of `mmdem compare` and `mmdem plot` (tests/cases/compare.sh) on the experiments of
config/experiments. Usage: compare.py TMPDIR

(a) impact_dt.yaml: two equal spheres, elastic frictionless Hertz impact (hertz_mindlin),
    touching at t = 0, Hertz collision time tc (001 eq. (50)); dt = tc/20 ... tc/160.
    For verlet, symplectic_euler (plugin), variational (alpha 1/2) and variational_a0
    (alpha 0): the least-squares slope of log(energy_error) over log(dt), computed here from
    the rows, is 1.8..2.2 (second order: verlet, variational) or 0.8..1.2 (first order),
    and compare.csv's energy_order says the same; each row's energy_error equals that of an
    independent 1-D integration of the same impact by the same scheme (ref_energy_error
    below: kick-drift-kick, symplectic Euler = 003 eq. (29)-(31) with alpha 0, implicit
    midpoint = alpha 1/2) within 1e-4 relative; |restitution - 1| <= energy_error (elastic:
    the exact value is 1). Why Hertz: on a linear spring the midpoint rule conserves the
    energy exactly during the contact and its error comes only from the step in which the
    contact opens, erratically in dt (impact_dt.yaml's header has the numbers).
    Every other variant that is not registered: "skipped" with the note; a registered one
    (trapezoid, newmark, cd: owned by their own tests) is reported, not asserted.
(a) damped: the same impact with restitution 0.8: the energy balance error (dissipated energy
    included) has slope 1.8..2.2 for verlet and variational alpha 1/2 (003 eq. (6)'s Q^+_d;
    eq. (14)'s approximation of it made this 1.12), 0.8..1.2 for alpha 0; variational's
    restitution at the smallest dt equals verlet's within 1e-3.
(b): asserted for verlet and symplectic_euler (the 128-bead run of compare.sh; every
    integrator on a reduced 16-bead pile: compare_pile.py);
(c): every variant runs (status ok at every dt, or skipped when not registered); the values
    are asserted for verlet, symplectic_euler and variational, printed for the others.
(b) pile_settling.yaml (one dt_fraction): the floor carries the weight at the end,
    |wall.0.fz| = 128 m g within 1 %, and time_to_rest is a time inside the run.
(c) spinning_sphere.yaml (001 example 5.1): final v = (5 v0 - 2 w0 r)/7 = 8.941 m/s within
    0.2 %, w = -v/r within 0.2 %, dissipated = KE(0) - KE_roll within 0.5 % for every run
    that finished (the Mindlin spring's elastic slip makes the DEM values differ slightly
    from rigid rolling).
"""
import csv
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]


def rows(path):
    with open(path, newline="") as fp:
        return list(csv.DictReader(fp))


def slope(pts):
    xs = [math.log(a) for a, b in pts]
    ys = [math.log(b) for a, b in pts]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def is_png(path):
    try:
        with open(path, "rb") as fp:
            return fp.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 1000
    except OSError:
        return False


# ---- (a)
a = os.path.join(tmp, "a")
tab = rows(os.path.join(a, "compare.csv"))
head = list(tab[0].keys())
want = ["variant", "integrator", "dt", "status", "wall_s", "steps", "iterations", "energy_error", "energy_order", "restitution"]
if all(w in head for w in want) and head[-2:] == ["dir", "note"]:
    dc.ok("(a) compare.csv columns: %s" % ",".join(head))
else:
    dc.not_ok("(a) compare.csv columns", ",".join(head))
R, rho, E, nu = 0.005, 2500.0, 1.0e8, 0.25
ms = dc.sphere_mass(rho, R) / 2                      # m* = m/2
Es = E / (2 * (1 - nu * nu))                         # 001 eq. (20), equal materials
rs = R / 2                                           # r*
kh = 4.0 / 3.0 * Es * math.sqrt(rs)                  # F = kh delta^(3/2), V = 2/5 kh delta^(5/2)
vrel, d0, T = 1.0, 2 * (0.005 - 0.0049999999975), 0.001
tc = 2.87 * (ms * ms / (rs * Es * Es * vrel)) ** 0.2  # 001 eq. (50)


def ref_energy_error(scheme, h):
    """Independent 1-D integration of the same impact (relative coordinate: overlap d, rate u):
    largest |E(t) - E(0)| / E(0) over the steps.
      verlet           kick, drift, kick
      symplectic       v += h F(x) / m*, x += h v (= variational alpha 0: 003 eq. (29)-(31))
      midpoint         variational alpha 1/2: d1 = d0 + h (u0 + u1) / 2, u1 = u0 + h F((d0 + d1) / 2) / m*"""
    F = lambda d: -kh * d ** 1.5 if d > 0 else 0.0
    V = lambda d: 0.4 * kh * d ** 2.5 if d > 0 else 0.0
    d, u = d0, vrel
    e0 = 0.5 * ms * u * u + V(d)
    worst = 0.0
    for _ in range(int(round(T / h))):
        if scheme == "verlet":
            u += 0.5 * h * F(d) / ms
            d += h * u
            u += 0.5 * h * F(d) / ms
        elif scheme == "symplectic":
            u += h * F(d) / ms
            d += h * u
        else:
            dd = h * u
            for _ in range(60):      # Newton on g(dd) = dd - h u - h^2 F(d + dd/2) / (2 m*)
                dm = d + 0.5 * dd
                g = dd - h * u - 0.5 * h * h * F(dm) / ms
                J = 1 + (0.25 * h * h * 1.5 * kh * math.sqrt(dm) / ms if dm > 0 else 0.0)
                step = g / J
                dd -= step
                if abs(step) <= 1e-15 * abs(dd):
                    break
            u += h * F(d + 0.5 * dd) / ms
            d += dd
        worst = max(worst, abs(0.5 * ms * u * u + V(d) - e0) / e0)
    return worst


by = {}
for r in tab:
    by.setdefault(r["variant"], []).append(r)


def order_check(name, lo, hi, scheme):
    rs_ = [r for r in by.get(name, []) if r["status"] == "ok"]
    if len(rs_) < 3:
        dc.not_ok("(a) %s: runs" % name, "%d ok rows: %s" % (len(rs_), [r["note"] for r in by.get(name, [])]))
        return None
    p = slope([(float(r["dt"]), float(r["energy_error"])) for r in rs_])
    if lo <= p <= hi:
        dc.ok("(a) %s: energy error order %.3f in [%.1f, %.1f] (%d time steps, tc/%.0f ... tc/%.0f)" % (name, p, lo, hi, len(rs_), tc / float(rs_[0]["dt"]), tc / float(rs_[-1]["dt"])))
    else:
        dc.not_ok("(a) %s: energy error order" % name, "%.3f not in [%.1f, %.1f]: %s" % (p, lo, hi, [(r["dt"], r["energy_error"]) for r in rs_]))
    dc.check("(a) %s: compare.csv energy_order = the slope of its rows" % name, max(abs(float(r["energy_order"]) - p) for r in rs_), 1e-6)
    # the same numbers from an independent 1-D integration of the scheme (round-off only)
    worst = max(abs(float(r["energy_error"]) / ref_energy_error(scheme, float(r["dt"])) - 1) for r in rs_)
    dc.check("(a) %s: energy_error = that of a 1-D %s integration in compare.py, largest relative difference" % (name, scheme), worst, 1e-4)
    # elastic: restitution 1 within the energy error (e^2 = KE_end / KE_0)
    worst = max(abs(float(r["restitution"]) - 1) / float(r["energy_error"]) for r in rs_)
    dc.check("(a) %s: |restitution - 1| / energy_error, largest over the time steps" % name, worst, 1.0)
    return rs_


rs = order_check("verlet", 1.8, 2.2, "verlet")
if rs:
    if all(r["dir"] and os.path.isfile(os.path.join(a, r["dir"], "thermo.csv")) for r in rs):
        dc.ok("(a) verlet: each row's dir holds its run (thermo.csv)")
    else:
        dc.not_ok("(a) verlet: run directories", str([r["dir"] for r in rs]))
order_check("symplectic_euler", 0.8, 1.2, "symplectic")
for name, lo, hi, scheme in (("variational", 1.8, 2.2, "midpoint"), ("variational_a0", 0.8, 1.2, "symplectic")):
    vr = by.get(name, [])
    if vr and all(r["status"] == "skipped" for r in vr):
        dc.not_ok("(a) %s" % name, "skipped: %s" % vr[0]["note"])
    else:
        order_check(name, lo, hi, scheme)
for name in ("trapezoid", "newmark", "cd"):
    vr = by.get(name, [])
    if not vr:
        dc.not_ok("(a) %s: rows" % name, "no rows for the variant")
    elif all(r["status"] == "skipped" for r in vr):
        if all("integrator '%s' is not registered" % name in r["note"] for r in vr) and all(r["energy_error"] == "" for r in vr):
            dc.ok("(a) %s: not registered yet: %d rows skipped, with the note" % (name, len(vr)))
        else:
            dc.not_ok("(a) %s: skipped rows" % name, vr[0]["note"])
    else:     # registered: owned by their own tests, reported here
        print("# (a) %s: registered, rows %s, energy errors %s, order %s" % (name, ",".join(r["status"] for r in vr), ",".join(r["energy_error"] for r in vr), vr[0]["energy_order"]))
for png in ("error_vs_dt.png", "energy_verlet.png", "energy_symplectic_euler.png", "restitution_vs_dt.png"):
    p = os.path.join(a, "plots", png)
    if is_png(p):
        dc.ok("(a) plot %s" % png)
    else:
        dc.not_ok("(a) plot %s" % png, "missing or not a PNG (gnuplot log: %s)" % os.path.join(a, "plots", "gnuplot.log"))

# ---- (a) damped: restitution 0.8 (Hertz dashpot, 001 eq. (22)); energy_error is the energy
# balance error (dissipated energy included)
a2 = os.path.join(tmp, "a2")
tab2 = rows(os.path.join(a2, "compare.csv"))
by2 = {}
for r in tab2:
    by2.setdefault(r["variant"], []).append(r)
fine = {}
for name, lo, hi in (("verlet", 1.8, 2.2), ("variational", 1.8, 2.2), ("variational_a0", 0.8, 1.2)):
    rs_ = [r for r in by2.get(name, []) if r["status"] == "ok"]
    if len(rs_) < 3:
        dc.not_ok("(a) damped %s: runs" % name, "%d ok rows" % len(rs_))
        continue
    p = slope([(float(r["dt"]), float(r["energy_error"])) for r in rs_])
    if lo <= p <= hi:
        dc.ok("(a) damped (restitution 0.8) %s: energy balance error order %.3f in [%.1f, %.1f] (%s)" % (name, p, lo, hi, ", ".join(r["energy_error"] for r in rs_)))
    else:
        dc.not_ok("(a) damped %s: energy balance error order" % name, "%.3f not in [%.1f, %.1f]: %s" % (p, lo, hi, [(r["dt"], r["energy_error"]) for r in rs_]))
    fine[name] = min(rs_, key=lambda r: float(r["dt"]))
if "verlet" in fine and "variational" in fine:
    ev, ea = float(fine["verlet"]["restitution"]), float(fine["variational"]["restitution"])
    dc.check("(a) damped: restitution of variational = verlet's at dt %s (%.6f vs %.6f), relative difference" % (fine["verlet"]["dt"], ea, ev), abs(ea / ev - 1), 1e-3)

# ---- (b)
b = os.path.join(tmp, "b")
tab = rows(os.path.join(b, "compare.csv"))
weight = 128 * dc.sphere_mass(2500.0, 0.001) * dc.G
MINE = ("verlet", "symplectic_euler")
for r in tab:
    if r["status"] != "ok":
        continue
    name = "(b) %s dt %s" % (r["variant"], r["dt"])
    if r["variant"] not in MINE:
        print("# %s: floor reaction %s N (weight %.6g N), at rest from %s s" % (name, r["wall.0.fz"], weight, r["time_to_rest"]))
        continue
    dc.check(name + ": floor reaction |wall.0.fz| = 128 m g = %.6g N" % weight, abs(abs(float(r["wall.0.fz"])) / weight - 1), 1e-2)
    t = float(r["time_to_rest"]) if r["time_to_rest"] else float("nan")
    if 0 < t < 0.6:
        dc.ok(name + ": at rest from t = %.4g s" % t)
    else:
        dc.not_ok(name + ": time_to_rest", "'%s' (note: %s)" % (r["time_to_rest"], r["note"]))
if not any(r["status"] == "ok" and r["variant"] in MINE for r in tab):
    dc.not_ok("(b) runs", "no run of verlet or symplectic_euler succeeded")

# ---- (c)
c = os.path.join(tmp, "c")
tab = rows(os.path.join(c, "compare.csv"))
r0, m, v0, w0 = 0.2, 1000.0, 2.355, -127.03
I = 0.4 * m * r0 * r0
vroll = (5 * v0 - 2 * w0 * r0) / 7
diss = 0.5 * m * v0 ** 2 + 0.5 * I * w0 ** 2 - (0.5 * m * vroll ** 2 + 0.5 * I * (vroll / r0) ** 2)
CHECKED = ("verlet", "symplectic_euler", "variational")
for r in tab:
    if r["status"] != "ok":
        continue
    name = "(c) %s dt %s" % (r["variant"], r["dt"])
    if r["variant"] not in CHECKED:
        print("# %s: v %s m/s (%.4f), w %s rad/s (%.3f), dissipated %s J (%.0f)" % (name, r["track.0.vx"], vroll, r["track.0.wz"], -vroll / r0, r["dissipated"], diss))
        continue
    dc.check(name + ": v_roll = (5 v0 - 2 w0 r)/7 = %.4f m/s, relative error" % vroll, abs(float(r["track.0.vx"]) / vroll - 1), 2e-3)
    dc.check(name + ": w_roll = -v_roll / r = %.3f rad/s, relative error" % (-vroll / r0), abs(float(r["track.0.wz"]) / (-vroll / r0) - 1), 2e-3)
    dc.check(name + ": dissipated = KE(0) - KE_roll = %.0f J, relative error" % diss, abs(float(r["dissipated"]) / diss - 1), 5e-3)
for name in CHECKED:
    if not any(r["status"] == "ok" and r["variant"] == name for r in tab):
        dc.not_ok("(c) %s runs" % name, "no run succeeded: %s" % [r["note"] for r in tab if r["variant"] == name])
# every integrator of the file that is registered runs (c) to the end
bad = ["%s dt %s: %s %s" % (r["variant"], r["dt"], r["status"], r["note"]) for r in tab if r["status"] not in ("ok", "skipped")]
ran = sorted(set(r["variant"] for r in tab if r["status"] == "ok"))
if bad:
    dc.not_ok("(c) every registered integrator runs", "; ".join(bad))
else:
    dc.ok("(c) every registered integrator runs at every dt: %s" % ", ".join(ran))
dc.finish()
