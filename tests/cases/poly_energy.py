"""Energy bookkeeping of law barrier_hybrid (000_c57329b1a40312e0.txt eq. (49)-(58)) between
polyhedra, under verlet (dt = 1e-6 s, far below the collision time at the closest approach):
  (a) two cubes collide in general poses, spinning, without damping or friction
      (poly_energy.yaml): kinetic + barrier energy (e_total) conserved within 1e-4 of its
      initial value at every sample, nothing booked as dissipated (|dissipated| < 1e-12 J), and
      the impact reached the barrier part of eq. (49) (stored energy above
      eps1 (g_bar - f g_bar)^2 / 2 = 12.5 J at some sample);
  (b) the same with Coulomb friction mu = 0.3, eps_t = 1e7 N/m: e_balance (e_total +
      dissipated) conserved within 1e-3 of the initial energy, and friction did dissipate
      (> 10 % of it);
  (c) a cube sliding on a fixed slab with mu = 0.4 from v0 = (0.5, 0.2, 0) m/s, no damping
      (poly_slide.yaml): it stops after v0^2 / (2 mu g) (Coulomb, analytic) within 1 %, the
      dissipated energy equals m v0^2 / 2 within 1 %, and e_balance is conserved within 1e-4 of
      m v0^2 / 2.
Before the fix of barrier_hybrid's booking of eq. (57)-(58) (sliding work counted twice, and
eps_t |v_t dt|^2 / 2 per step even with mu = 0; the motion was the same) four checks failed:
(a) 0.485 J booked as dissipated, (b) e_balance off by 4.57 J of 36.1 J, (c) 0.555 J dissipated
instead of 0.145 J and e_balance off by 0.41 J.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "poly_energy.yaml")
for name, mu in (("a", 0.0), ("b", 0.3)):
    out = os.path.join(tmp, name)
    if not dc.run("poly_energy(%s) run" % name, yaml, out, [("contact.0.params.mu", dc.fmt(mu))]):
        continue
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    e0 = th[0]["e_total"]
    pemax = max(r["pe_contact"] for r in th)
    if mu == 0:
        dev = max(abs(r["e_total"] - e0) for r in th)
        dc.check("poly_energy(a) two cubes without friction: e_total conserved within 1e-4", dev / e0, 1e-4, "max |E - E0| = %.3g J, E0 = %.6g J" % (dev, e0))
        dmax = max(abs(r["dissipated"]) for r in th)
        dc.check("poly_energy(a) nothing booked as dissipated without damping or friction", dmax, 1e-12, "max |dissipated| = %.3g J" % dmax)
        dc.check("poly_energy(a) the impact reached the barrier part (pe_contact > 12.5 J)", 0 if pemax > 12.5 else 1, 0, "max pe_contact %.4g J" % pemax)
    else:
        dev = max(abs(r["e_balance"] - e0) for r in th)
        dc.check("poly_energy(b) two cubes with friction: e_balance conserved within 1e-3", dev / e0, 1e-3, "max |e_balance - E0| = %.3g J, E0 = %.6g J, dissipated %.4g J" % (dev, e0, th[-1]["dissipated"]))
        dc.check("poly_energy(b) friction dissipated > 10 % of the energy", 0 if th[-1]["dissipated"] > 0.1 * e0 else 1, 0, "dissipated %.4g J" % th[-1]["dissipated"])

m, g, mu, v0 = 1.0, 9.81, 0.4, (0.5, 0.2)
out = os.path.join(tmp, "slide")
if dc.run("poly_energy(c) run", os.path.join(here, "poly_slide.yaml"), out):
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    k0 = 0.5 * m * (v0[0] ** 2 + v0[1] ** 2)
    d = math.hypot(tr[-1]["x"] - tr[0]["x"], tr[-1]["y"] - tr[0]["y"])
    dexp = (v0[0] ** 2 + v0[1] ** 2) / (2 * mu * g)
    dc.check("poly_energy(c) sliding cube stops after v0^2/(2 mu g) within 1 %", abs(d - dexp) / dexp, 1e-2, "%.6g m, expected %.6g m" % (d, dexp))
    dc.check("poly_energy(c) dissipated = m v0^2/2 within 1 %", abs(th[-1]["dissipated"] - k0) / k0, 1e-2, "%.6g J, expected %.6g J" % (th[-1]["dissipated"], k0))
    dev = max(abs(r["e_balance"] - th[0]["e_balance"]) for r in th)
    dc.check("poly_energy(c) e_balance conserved within 1e-4 of m v0^2/2", dev / k0, 1e-4, "max |e_balance - e_balance(0)| = %.3g J" % dev)
dc.finish()
