"""Periodic box without gravity: conservation of linear momentum, and the energy
bookkeeping closes.

64 spheres (r = 1 mm) in a 10 mm box periodic in x, y and z, on a jittered 4x4x4 lattice
with random velocities (0.1 m/s spread plus a common drift), no gravity; Hooke law with
normal and tangential damping (restitution 0.7) and friction mu = 0.3
(003_9f0cdbfccae61a56.txt eq. (20)-(25)). Every force acts in equal and opposite pairs
(003 eq. (24)), so
  momentum:  |sum m v (bodies_final.csv) - sum m v (initial, as written here)|
             / sum m |v| (initial) <= 1e-12;
and the energy lost from kinetic + contact energy is what the contact laws dissipated:
  energy:    max over the run |e_balance(t) - e_balance(0)| <= 1e-6 e_total(0),
             e_balance = ke_trans + ke_rot + pe_grav + pe_contact + dissipated (thermo.csv),
             e_total(0) = sum m v^2 / 2 computed here from the initial velocities.
The run is long enough for several collisions per sphere (dissipated / e_total(0) is
reported, about 0.75). dt = tc/2000: the bookkeeping error of velocity Verlet is second order
in dt at best (contact onsets, Coulomb-limit kinks), measured 1.3e-6 at tc/1000 and 5.5e-7
at tc/2000 with a dissipation sum consistent with the half-step velocities the contact
forces are evaluated with.
"""
import math
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "val_periodic_gas.yaml")
R, rho, L = 0.001, 2500.0, 0.01            # as in the YAML
kn, e = 1.0e3, 0.7
m = dc.sphere_mass(rho, R)
le = math.log(e)
zeta = -le / math.sqrt(math.pi ** 2 + le ** 2)
tc = math.pi / (math.sqrt(2 * kn / m) * math.sqrt(1 - zeta ** 2))   # sphere-sphere, meff = m/2
frac = float(os.environ.get("VAL_DTFRAC", "0.0005"))   # dt = tc / 2000
dt = frac * tc
t_end = float(os.environ.get("VAL_TEND", "0.05"))

rng = random.Random(12345)
drift = (0.05, -0.03, 0.02)
rows = []
n1 = 4
h = L / n1
for k in range(n1):
    for j in range(n1):
        for i in range(n1):
            x = [(i + 0.5) * h, (j + 0.5) * h, (k + 0.5) * h]
            x = [c + rng.uniform(-0.09, 0.09) * h for c in x]
            v = [drift[c] + rng.gauss(0, 0.1) for c in range(3)]
            rows.append(x + v)
csvp = os.path.join(tmp, "bodies.csv")
with open(csvp, "w") as fp:
    fp.write("x,y,z,vx,vy,vz\n")
    for r in rows:
        fp.write(",".join(repr(c) for c in r) + "\n")
p0 = [sum(m * r[3 + c] for r in rows) for c in range(3)]
pabs = sum(m * math.sqrt(r[3] ** 2 + r[4] ** 2 + r[5] ** 2) for r in rows)
E0 = sum(0.5 * m * (r[3] ** 2 + r[4] ** 2 + r[5] ** 2) for r in rows)

tag = "periodic gas"
out = os.path.join(tmp, "out")
sets = [("bodies.0.file", csvp), ("integrator.dt", dc.fmt(dt)), ("run.end_time", dc.fmt(t_end))]
if dc.run(tag, yaml, out, sets):
    fin = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    p1 = [sum(m * b[c] for b in fin) for c in ("vx", "vy", "vz")]
    dp = math.sqrt(sum((a - b) ** 2 for a, b in zip(p0, p1)))
    dc.check(tag + ": linear momentum, |P(end) - P(0)| / sum m|v|", dp / pabs, 1e-12,
             "%d bodies" % len(fin))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    # thermo.csv prints 12 significant digits
    dc.check(tag + ": e_total(0) vs sum m v^2 / 2 of the initial velocities", abs(th[0]["e_total"] - E0) / E0, 1e-10)
    eb0 = th[0]["e_balance"]
    err = max(abs(r["e_balance"] - eb0) for r in th) / E0
    coll = sum(1 for a, b in zip(th, th[1:]) if b["contacts"] > a["contacts"])
    dc.check(tag + ": energy bookkeeping, max |e_balance(t) - e_balance(0)| / e_total(0)", err, 1e-6,
             "dt = %.3g tc, dissipated %.3f of e_total(0), ke(end) %.3f of e_total(0)" %
             (frac, th[-1]["dissipated"] / E0, (th[-1]["ke_trans"] + th[-1]["ke_rot"]) / E0))
dc.finish()
