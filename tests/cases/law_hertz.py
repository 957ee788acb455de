"""Law `hertz`: head-on impacts against the Hertz contact solution.

The law (hooke.h): with overlap delta, effective radius R* and p = sqrt(delta R*),
    fn = kn p delta - meff gamma_n p vn,        vn = d(gap)/dt (< 0 approaching)
(LAMMPS gran/hertz/history). Head-on, without friction, the overlap obeys
    meff delta'' = -K delta^(3/2) - meff gamma_n sqrt(R* delta) delta',   K = kn sqrt(R*).
Undamped (gamma_n = 0), from delta = 0 at approach speed V (Hertz; e.g. Johnson, Contact
Mechanics, section 11.4):
    delta_max = (5 meff V^2 / (4 K))^(2/5),   t_c = 2 I delta_max / V,
    I = int_0^1 (1 - x^(5/2))^(-1/2) dx = sqrt(pi) Gamma(7/5) / Gamma(9/10),
and the spheres leave with their approach speed (e = 1). Damped, the restitution comes from
an RK4 integration of the ODE above written here (independent of the code), with 20000 steps
per collision time. Runs: two equal spheres (R* = R/2, meff = m/2) and a sphere on a plane
wall (R* = R, meff = m), each undamped and damped; dt = t_c / 200. The damped two-sphere
run is repeated with MMDEM_NO_FUSED=1 (the generic contact pipeline instead of the fused
sphere kernel): the same law written once (hooke.h), the tracks must agree to rounding.
The spheres start overlapped by delta0 = 5e-12 m (1e-7 of delta_max): the RK4 reference
starts from the same delta0.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import demcheck as dc

tmp = sys.argv[1]
R, rho, v0 = 0.005, 2500.0, 0.5
m = dc.sphere_mass(rho, R)
I_HERTZ = math.sqrt(math.pi) * math.gamma(1.4) / math.gamma(0.9)
KN = 1.0e9           # N/m^2


def rk4_restitution(meff, rs, V, gn, delta0):
    """post/pre normal speed, contact time and largest overlap of the damped Hertz ODE"""
    K = KN * math.sqrt(rs)

    def acc(d, dd):
        if d <= 0:
            return 0.0
        return -(K * d ** 1.5 + meff * gn * math.sqrt(rs * d) * dd) / meff

    dm = (5 * meff * V * V / (4 * K)) ** 0.4
    h = 2 * I_HERTZ * dm / V / 20000
    d, dd, t, dmax = delta0, V, 0.0, 0.0
    while True:
        k1 = (dd, acc(d, dd))
        k2 = (dd + 0.5 * h * k1[1], acc(d + 0.5 * h * k1[0], dd + 0.5 * h * k1[1]))
        k3 = (dd + 0.5 * h * k2[1], acc(d + 0.5 * h * k2[0], dd + 0.5 * h * k2[1]))
        k4 = (dd + h * k3[1], acc(d + h * k3[0], dd + h * k3[1]))
        nd = d + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        ndd = dd + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        if nd <= 0:   # left contact within this step: interpolate the exit speed
            s = d / (d - nd)
            return -(dd + s * (ndd - dd)) / V, t + s * h, dmax
        d, dd, t = nd, ndd, t + h
        dmax = max(dmax, d)


def run_case(tag, yaml, meff, rs, V, gn, track_rel, env=None):
    K = KN * math.sqrt(rs)
    dm = (5 * meff * V * V / (4 * K)) ** 0.4
    tc = 2 * I_HERTZ * dm / V
    dt = tc / 200
    steps = int(math.ceil(1.5 * tc / dt))
    out = os.path.join(tmp, tag.replace(" ", "_").replace("=", ""))
    sets = [("contact.0.params.kn", dc.fmt(KN)), ("contact.0.params.gamma_n", dc.fmt(gn)),
            ("contact.0.params.gamma_t", dc.fmt(gn / 2)), ("integrator.dt", dc.fmt(dt)),
            ("run.steps", str(steps))]
    old = dict(os.environ)
    if env:
        os.environ.update(env)
    try:
        good = dc.run(tag, os.path.join(here, yaml), out, sets)
    finally:
        os.environ.clear()
        os.environ.update(old)
    if not good:
        return None
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    return track_rel(tr), tr, th, tc, dt, dm


def rel_two(tr):
    """relative normal approach speed and overlap per step: sphere 0 at left, 1 at right"""
    b0 = [r for r in tr if r["id"] == 0]
    b1 = [r for r in tr if r["id"] == 1]
    return [(r0["step"], r0["vx"] - r1["vx"], 2 * R - (r1["x"] - r0["x"])) for r0, r1 in zip(b0, b1)]


def rel_wall(tr):
    return [(r["step"], -r["vz"], R - r["z"]) for r in tr if r["id"] == 0]


delta0 = 5e-12
V = 2 * v0
cases = [("two spheres", "law_hertz.yaml", m / 2, R / 2, V, rel_two),
         ("sphere on wall", "law_hertz_wall.yaml", m, R, v0, rel_wall)]
for name, yaml, meff, rs, vapp, rel in cases:
    # undamped: the Hertz collision in closed form
    res = run_case(name + " undamped", yaml, meff, rs, vapp, 0.0, rel)
    if res:
        series, tr, th, tc, dt, dm = res
        smax = max(s[2] for s in series)
        inside = [s for s in series if s[2] > 0]
        t_in = (inside[-1][0] - inside[0][0] + 1) * dt if inside else 0
        e_sim = -series[-1][1] / series[0][1]
        dc.check("hertz %s undamped: largest overlap vs (5 meff V^2 / (4 K))^(2/5)" % name,
                 abs(smax - dm) / dm, 2e-3, "sim %.6e m, Hertz %.6e m" % (smax, dm))
        dc.check("hertz %s undamped: contact time vs 2 I delta_max / V (+- one step)" % name,
                 abs(t_in - tc) / tc, 1.5 / 200, "sim %.6e s, Hertz %.6e s" % (t_in, tc))
        dc.check("hertz %s undamped: restitution 1" % name, abs(e_sim - 1), 1e-4, "e = %.8f" % e_sim)
        # energy: kinetic + stored (2/5 kn p delta^2) constant over the run (thermo e_balance
        # holds the bookkeeping; here the sum itself, relative to the initial kinetic energy)
        e0 = th[0]["ke_trans"] + th[0]["pe_contact"]
        drift = max(abs(r["ke_trans"] + r["pe_contact"] - e0) for r in th) / e0
        dc.check("hertz %s undamped: kinetic + contact energy conserved" % name, drift, 1e-3,
                 "max |E - E0| / E0 = %.2e" % drift)
    # damped: restitution against the RK4 reference
    gn = 5.0e6   # 1/(s m): e about 0.8
    e_ref, tc_ref, dmax_ref = rk4_restitution(meff, rs, vapp, gn, delta0)
    res = run_case(name + " damped", yaml, meff, rs, vapp, gn, rel)
    if res:
        series, tr, th, tc, dt, dm = res
        e_sim = -series[-1][1] / series[0][1]
        smax = max(s[2] for s in series)
        dc.check("hertz %s damped: restitution vs RK4 of the contact ODE" % name, abs(e_sim - e_ref), 2e-3,
                 "e_sim %.6f, RK4 %.6f (gamma_n = %g)" % (e_sim, e_ref, gn))
        dc.check("hertz %s damped: largest overlap vs RK4" % name, abs(smax - dmax_ref) / dmax_ref, 2e-3,
                 "sim %.6e, RK4 %.6e" % (smax, dmax_ref))
        if rel is rel_two:
            res2 = run_case(name + " damped generic", yaml, meff, rs, vapp, gn, rel, {"MMDEM_NO_FUSED": "1"})
            if res2:
                dv = max(abs(a["vx"] - b["vx"]) for a, b in zip(tr, res2[1])) / v0
                dc.check("hertz %s damped: fused kernel = generic pipeline (velocities / v0)" % name, dv, 1e-12)
dc.finish()
