"""A stack of three 1 kg cubes at rest on the ground (poly_stack.yaml: law barrier_hybrid with
box_of_cubes' parameters, zeta 0.7, verlet dt = 1e-5 s; the middle cube turned 30 degrees, so
each face-face contact is up to 8 pointwise contacts, 000_c57329b1a40312e0.txt Fig. 4c).
The decisive small case for box_of_cubes' ground reaction and creep: with eq. (52)'s dashpot at
every point of a face-face contact, the N points in parallel give the pair N times the dashpot
of one point, c dt / m exceeded 1, and the explicit step flipped the normal velocities' sign
every step: measured before the fix, the ground reaction alternated between 0.9617 and 1.0383 W
with period 2 steps for the whole run and the top cube crept 5.45e-6 m between 0.2 and 0.5 s
(law barrier_hybrid now shares the pair's dashpot 2 zeta sqrt(K m) among its points).
Checked, from t = 0.2 s to the end (0.5 s), rows every 25 steps (odd, so consecutive rows
alternate the parity of the step and a period-2 oscillation shows in every pair of rows):
  - the ground reaction (walls.csv fz) equals the weight 3 m g = 29.43 N within 1e-6 at every
    row (static equilibrium; before: 3.8e-2);
  - no cube creeps: horizontal displacement between 0.2 s and 0.5 s below 1e-12 m (elastic
    tangential displacements here are ~1e-7 m; before: 5.45e-6 m for the top cube);
  - at rest: kinetic energy at the end below 1e-9 of m g times the edge (9.81e-1 J).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
out = os.path.join(tmp, "stack")
m, g, n = 1.0, 9.81, 3
W = n * m * g
if dc.run("poly_stack run", os.path.join(here, "poly_stack.yaml"), out):
    w = [r for r in dc.read_csv(os.path.join(out, "walls.csv")) if int(r["wall"]) == n and r["time"] >= 0.2]
    err = max(abs(-r["fz"] - W) for r in w) / W if w else 1.0
    dc.check("poly_stack ground reaction = 3 m g within 1e-6 at every row from 0.2 s", err, 1e-6, "max |fz + W| / W = %.3g over %d rows" % (err, len(w)))
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    creep = 0.0
    for i in range(n):
        t = [r for r in tr if int(r["id"]) == i]
        a = min(t, key=lambda r: abs(r["time"] - 0.2))
        b = t[-1]
        creep = max(creep, math.hypot(b["x"] - a["x"], b["y"] - a["y"]))
    dc.check("poly_stack no cube creeps: |dx(0.2 s -> 0.5 s)| < 1e-12 m", creep, 1e-12, "largest %.3g m" % creep)
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    ke = th[-1]["ke_trans"] + th[-1]["ke_rot"]
    dc.check("poly_stack at rest: KE < 1e-9 m g L", ke / (m * g * 0.1), 1e-9, "KE %.3g J" % ke)
dc.finish()
