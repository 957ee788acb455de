"""Order of accuracy of the generalized trapezoidal rule (001_558b02b5fc003581.txt eq. (40)-(45)).

Two spheres (r = 0.2 m, m = 1000 kg, E = 1e10 Pa, nu = 0.25, frictionless, no damping) meet
head-on at 0.5 m/s each, 1 mm apart at t = 0, and collide elastically (Hertz, 001 eq. (19)).
Exact solution: contact at t_c = 1 mm / (1 m/s); Hertz's collision lasts
    t_H = 2 (d_max / v_rel) sqrt(pi) Gamma(7/5) / Gamma(9/10),
    d_max = (15 m* v_rel^2 / (16 E* sqrt(r*)))^(2/5)
(the integral of d delta / sqrt(v_rel^2 - (16/15) E* sqrt(r*) delta^(5/2) / m*) over the
approach and the rebound); energy conservation returns each sphere with 0.5 m/s, so at
T = 0.01 s sphere 0 is at x = -r - 0.5 (T - t_c - t_H). The error is |x(T) - that|, for
dt = T/50 .. T/400 (the collision spans 35 .. 280 steps), with a fixed-point tolerance of
1e-12 so that only the scheme's error remains. Observed order log2(e(dt) / e(dt/2)):
phi = 0.5 in [1.8, 2.2] for every halving; phi = 0 (forward Euler) and phi = 1 (backward
Euler) in [0.9, 1.1].
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
r, m, E, nu, v, gap0, T = 0.2, 1000.0, 1.0e10, 0.25, 0.5, 1.0e-3, 0.01
rho = m / (4.0 / 3.0 * math.pi * r ** 3)
Es = E * E / (E * (1 - nu * nu) + E * (1 - nu * nu))
ms, rs, vr = m / 2, r / 2, 2 * v
dmax = (15 * ms * vr ** 2 / (16 * Es * math.sqrt(rs))) ** 0.4
tH = 2 * dmax / vr * math.sqrt(math.pi) * math.gamma(1.4) / math.gamma(0.9)
tc = gap0 / vr
xref = -r - v * (T - tc - tH)
yaml = os.path.join(tmp, "order.yaml")
with open(yaml, "w") as fp:
    fp.write("""name: trap_order
domain: {lo: [-1, -1, -1], hi: [1, 1, 1]}
gravity: [0, 0, 0]
materials:
  m: {density: %r, youngs_modulus: %r, poisson_ratio: %r, restitution: 1.0, friction: 0.0}
contact:
  - {pair: default, law: hertz_mindlin}
shapes:
  ball: {type: sphere, radius: %r}
bodies:
  - {shape: ball, material: m, list: [{x: [%r, 0, 0], v: [%r, 0, 0]}, {x: [%r, 0, 0], v: [%r, 0, 0]}]}
integrator: {type: trapezoid, dt: 2.0e-4, phi: 0.5, tol: 1.0e-12}
run: {end_time: %r}
output: {thermo_every: 1000}
""" % (rho, E, nu, r, -r - 0.5 * gap0, v, r + 0.5 * gap0, -v, T))

for phi, lo, hi in ((0.5, 1.8, 2.2), (0.0, 0.9, 1.1), (1.0, 0.9, 1.1)):
    errs = []
    for N in (50, 100, 200, 400):
        out = os.path.join(tmp, "o_%g_%d" % (phi, N))
        if not dc.run("trapezoid order phi %g dt T/%d" % (phi, N), yaml, out, [("integrator.dt", dc.fmt(T / N)), ("integrator.phi", dc.fmt(phi))]):
            break
        b = dc.read_csv(os.path.join(out, "bodies_final.csv"))
        errs.append(abs(b[0]["x"] - xref))
    if len(errs) < 4:
        continue
    for k in range(1, len(errs)):
        p = math.log2(errs[k - 1] / errs[k]) if errs[k] > 0 else float("inf")
        dc.check("trapezoid phi = %g: observed order from dt = T/%d to T/%d in [%g, %g]" % (phi, 50 * 2 ** (k - 1), 50 * 2 ** k, lo, hi),
                 0.0 if lo <= p <= hi else abs(p - 0.5 * (lo + hi)), 0.0, "order %.3f; errors %.3e -> %.3e m" % (p, errs[k - 1], errs[k]))
dc.finish()
