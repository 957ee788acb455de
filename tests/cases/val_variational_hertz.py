"""Hertzian impact with the variational integrator (003: "a Hertz-Mindlin contact model can be
implemented by using V ~ 2/5 delta^(5/2)", after eq. (27)); undamped, frictionless, no gravity.

1. h = tc/100, alpha = 0.5: contact duration against Hertz's formula (001 eq. (50)),
   tc = 2.87 (m*^2 / (r* E*^2 v_rel))^(1/5), within 2 % (zero crossings of the gap in
   track.csv); restitution 1 within 1e-3.
2. Newton converges quadratically near the solution (003 eq. (17)-(19)): h = tc/8, the residual
   norms |R_n| printed by -variational_monitor; in every step with three iterations whose last
   residual is above the round-off level (1e-14 m v0), the order
   p = log(|R_2| / |R_1|) / log(|R_1| / |R_0|) >= 1.8 (2 for Newton, 1 for a linear method).
3. The Jacobian as MATSBAIJ and matrix-free (MATSHELL) gives the same trajectory as MATBAIJ
   (final velocities within 1e-12 relative), and PETSc options given in petsc_options are
   honoured (-ksp_type gmres -pc_type none -ksp_view: the KSP is reported as gmres).
4. Rejected steps: with max_iterations 2 and tol 1e-6 at h = tc/4 some steps do not converge;
   they are rejected and retried with dt/2 (thermo.csv dt < h), dt grows back to h after the
   contact, and the collision still ends with restitution 1 within 1e-2.
"""
import math
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_variational_hertz.yaml")
R, rho, E, nu, v0 = 0.005, 2500.0, 1.0e8, 0.25, 0.5
m = dc.sphere_mass(rho, R)
mstar = m / 2
rstar = R / 2
Estar = E / (2 * (1 - nu ** 2))
tc = 2.87 * (mstar ** 2 / (rstar * Estar ** 2 * 2 * v0)) ** 0.2


def run(tag, dt, t_end, extra=(), args=()):
    out = os.path.join(tmp, tag.replace(" ", "_").replace("/", "_").replace("=", ""))
    cmd = [dc.MMDEM, "run", yaml, "--out", out, "--quiet", "--set", "integrator.dt=%r" % dt,
           "--set", "run.end_time=%r" % t_end] + list(args)
    for k, v in extra:
        cmd += ["--set", "%s=%s" % (k, v)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        dc.not_ok(tag, "mmdem exited with %d: %s" % (p.returncode, (p.stdout + p.stderr)[-600:]))
        return None, None
    return out, p.stdout


# 1. contact duration and restitution
dt = tc / 100
out, _ = run("hertz h=tc/100", dt, 1.5 * tc)
if out:
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    b0 = [r for r in tr if r["id"] == 0]
    b1 = [r for r in tr if r["id"] == 1]
    gaps = [(r1["step"] * dt, r1["x"] - r0["x"] - 2 * R) for r0, r1 in zip(b0, b1)]
    cross = [ta + (tb - ta) * ga / (ga - gb) for (ta, ga), (tb, gb) in zip(gaps, gaps[1:]) if (ga >= 0) != (gb >= 0)]
    if len(cross) != 2:
        dc.not_ok("hertz impact variational h=tc/100: contact duration", "%d gap sign changes" % len(cross))
    else:
        dc.check("hertz impact variational alpha=0.5 h=tc/100: contact duration vs 001 eq. (50)", abs(cross[1] - cross[0] - tc) / tc, 0.02,
                 "t = %.5e s, tc = %.5e s" % (cross[1] - cross[0], tc))
    e = (b1[-1]["vx"] - b0[-1]["vx"]) / (b0[0]["vx"] - b1[0]["vx"])
    dc.check("hertz impact variational alpha=0.5 h=tc/100: restitution 1 (undamped)", abs(e - 1), 1e-3, "e = %.7f" % e)

# 2. quadratic convergence
out, log = run("hertz h=tc/8 monitor", tc / 8, 1.5 * tc, args=["-variational_monitor"])
if out:
    its = {}
    for line in log.splitlines():
        mm = re.match(r"variational: step (\d+) iteration (\d+) \|R\| (\S+)", line)
        if mm:
            its.setdefault(int(mm.group(1)), []).append(float(mm.group(3)))
    floor = 1e-14 * m * v0
    orders = []
    for st, r in sorted(its.items()):
        if len(r) >= 3 and r[2] > floor and r[1] < r[0]:
            orders.append((st, math.log(r[2] / r[1]) / math.log(r[1] / r[0]), r[:3]))
    for st, p, r in orders:
        print("# step %d: |R| %.3e %.3e %.3e, order %.3f" % (st, r[0], r[1], r[2], p))
    if len(orders) < 2:
        dc.not_ok("hertz h=tc/8: Newton convergence order", "only %d steps with three residuals above round-off" % len(orders))
    else:
        worst = min(p for _, p, _ in orders)
        name = "hertz impact variational h=tc/8: Newton converges quadratically, log(R2/R1)/log(R1/R0) >= 1.8 in all %d steps" % len(orders)
        if worst >= 1.8:
            dc.ok(name, "min order %.3f" % worst)
        else:
            dc.not_ok(name, "min order %.3f" % worst)

# 3. Jacobian variants and PETSc options
finals = {}
for jac in ("baij", "sbaij", "matrix_free"):
    out, _ = run("hertz h=tc/20 jacobian=%s" % jac, tc / 20, 1.5 * tc, [("integrator.jacobian", jac)])
    if out:
        finals[jac] = [r["vx"] for r in dc.read_csv(os.path.join(out, "bodies_final.csv"))]
if "baij" in finals:
    for jac in ("sbaij", "matrix_free"):
        if jac in finals:
            err = max(abs(a - b) for a, b in zip(finals[jac], finals["baij"])) / v0
            dc.check("hertz impact variational: jacobian %s gives the trajectory of baij, max |v - v_baij| / v0" % jac, err, 1e-12)
out, log = run("hertz petsc_options", tc / 20, 1.5 * tc, [("integrator.petsc_options", '"-ksp_type gmres -pc_type none -ksp_view"')])
if out:
    kt = re.findall(r"KSP Object.*\n\s*type: (\w+)", log)
    pt = re.findall(r"PC Object.*\n\s*type: (\w+)", log)
    ok = kt and all(t == "gmres" for t in kt) and pt and all(t == "none" for t in pt)
    v = [r["vx"] for r in dc.read_csv(os.path.join(out, "bodies_final.csv"))]
    err = max(abs(a - b) for a, b in zip(v, finals.get("baij", v))) / v0
    if ok and err <= 1e-10:
        dc.ok("hertz impact variational: petsc_options -ksp_type gmres -pc_type none honoured (%d solves), same trajectory (%.1e)" % (len(kt), err))
    else:
        dc.not_ok("hertz impact variational: petsc_options honoured", "KSP types %s, PC types %s, trajectory difference %.3e" % (sorted(set(kt)), sorted(set(pt)), err))

# 4. rejected steps
h = tc / 4
out, _ = run("hertz h=tc/4 max_iterations=2", h, 2 * tc, [("integrator.max_iterations", "2"), ("integrator.tol", "1e-6")])
if out:
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    dts = [r["dt"] for r in th]
    b = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    e = (b[1]["vx"] - b[0]["vx"]) / (2 * v0)
    halved = min(dts) <= 0.5 * h * (1 + 1e-9)
    back = abs(dts[-1] - h) <= 1e-9 * h  # thermo.csv: 10 digits
    if halved and back and abs(e - 1) <= 1e-2 and 2 * tc - 1e-9 * h <= th[-1]["time"] <= 2 * tc + h * (1 + 1e-6):
        dc.ok("hertz impact variational h=tc/4, max_iterations 2: steps rejected and retried with dt down to %.3g h, back to h after the contact, restitution %.5f" % (min(dts) / h, e))
    else:
        dc.not_ok("hertz impact variational: rejected steps", "min dt %.3g h, last dt %.3g h, e = %.5f, end time %.4g (expected %.4g)" % (min(dts) / h, dts[-1] / h, e, th[-1]["time"], 2 * tc))
dc.finish()
