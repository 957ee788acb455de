"""Gauss-Seidel sweep of the trapezoid fixed point (001_558b02b5fc003581.txt Remark 5) on a
chain, where the ordering matters.

A column of 10 spheres (r = 1 mm, rho = 2500 kg/m^3) on a floor, frictionless Hooke springs
kn = 400 N/m without dashpot, each contact compressed to 1.3 times its static overlap,
released under gravity: the column oscillates about its static state, every contact stays
closed (a linear system, for which the trapezoidal rule keeps the energy). integrator trapezoid,
phi = 0.5, tol 1e-4, dt = 0.4 tc (tc = pi sqrt(m / (2 kn))), adapt off, max_iterations 200.
Linearized, a Jacobi sweep multiplies the error by -(phi dt)^2 M^-1 K; for this chain
rho_J = (phi dt)^2 lambda_max(M^-1 K) <= (0.2 tc)^2 4 kn / m = 0.16 pi^2 / 2 = 0.79. Remark 5's
sweep (the bodies before i with their new values, i's own old value) removes the neighbour
part: on a chain (tridiagonal K) its rate is rho_J / 2, so with sweeps ~ ln(tol/e1) / ln(rho):
the Gauss-Seidel sweeps per step must be below 0.6 of Jacobi's (expected ln(0.79)/ln(0.39)
= 0.25 asymptotically; the first sweeps contract faster for both). This fails if a colour's
update does not see the colours updated before it.
Also: both sweeps converge to the same step (final heights within 1e-4 r), and the trapezoidal
rule keeps the energy of the undamped column (|e_balance drift| < 1e-3 of the elastic plus
gravitational energy exchanged).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
N, R, RHO, KN = 10, 1.0e-3, 2500.0, 400.0
m = dc.sphere_mass(RHO, R)
tc = math.pi * math.sqrt(m / (2 * KN))
z, zs = 0.0, []
for k in range(N):  # contact k (k = 0 the floor) at 1.3 x its static overlap (N - k) m g / kn
    z += (2 * R if k else R) - 1.3 * (N - k) * m * 9.81 / KN
    zs.append(z)
pts = "\n".join("      - {x: [0.005, 0.005, %r]}" % zz for zz in zs)
res = {}
for sw in ("jacobi", "gauss_seidel"):
    out = os.path.join(tmp, sw)
    path = out + ".yaml"
    with open(path, "w") as fp:
        fp.write("""name: column
domain: {lo: [0, 0, 0], hi: [0.01, 0.01, %r]}
gravity: [0, 0, -9.81]
materials:
  glass: {density: %r, friction: 0.0}
contact:
  - {pair: default, law: hooke, params: {kn: %r, kt: 100.0, gamma_n: 0.0, gamma_t: 0.0, mu: 0.0}}
shapes:
  bead: {type: sphere, radius: %r}
bodies:
  - shape: bead
    material: glass
    list:
%s
walls:
  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: glass}
integrator: {type: trapezoid, dt: %r, phi: 0.5, tol: 1.0e-4, sweep: %s, adapt: false, max_iterations: 200}
run: {end_time: 0.02}
output: {vtk_every: -1, thermo_every: 1}
""" % (2 * R * N + 0.01, RHO, KN, R, pts, 0.4 * tc, sw))
    if not dc.run("trapezoid column " + sw, path, out):
        dc.finish()
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    its = [r["iterations"] for r in th[1:]]
    eb = [r["e_balance"] for r in th]
    exch = max(r["pe_grav"] + r["pe_contact"] for r in th) - min(r["pe_grav"] + r["pe_contact"] for r in th)
    fin = sorted(dc.read_csv(os.path.join(out, "bodies_final.csv")), key=lambda r: r["id"])
    res[sw] = dict(sweeps=sum(its) / len(its), steps=len(its), drift=max(abs(e - eb[0]) for e in eb) / exch, z=[r["z"] for r in fin])
J, G = res["jacobi"], res["gauss_seidel"]
ratio = G["sweeps"] / J["sweeps"]
if ratio < 0.6:
    dc.ok("trapezoid column: Gauss-Seidel sweeps per step < 0.6 x Jacobi's (Remark 5 on a chain)",
          "%.2f vs %.2f sweeps per step (ratio %.3f) over %d steps of 0.4 tc" % (G["sweeps"], J["sweeps"], ratio, J["steps"]))
else:
    dc.not_ok("trapezoid column: Gauss-Seidel sweeps per step < 0.6 x Jacobi's (Remark 5 on a chain)",
              "%.2f vs %.2f sweeps per step (ratio %.3f)" % (G["sweeps"], J["sweeps"], ratio))
dc.check("trapezoid column: Jacobi and Gauss-Seidel converge to the same steps (final heights / r)",
         max(abs(a - b) for a, b in zip(J["z"], G["z"])) / R, 1e-4)
for sw in ("jacobi", "gauss_seidel"):
    dc.check("trapezoid column (%s): energy of the undamped column kept (|e_balance drift| / energy exchanged)" % sw, res[sw]["drift"], 1e-3)
dc.finish()
