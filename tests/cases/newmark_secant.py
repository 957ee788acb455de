"""newmark's Coulomb and onset secants (src/integrators/newmark.c DemNmCycleWatch,
DemNmSlipSecant; issue 5): they change only Newton's Jacobian, never the residual, so a
converged step is the same solution of 000 eq. (61)-(63) with or without them.

Case: a glass sphere (r = 1 mm, E = 63 GPa, hertz_mindlin, friction 0.5, restitution 0.3)
resting on a floor under gravity, launched sliding at v0 = 0.02 m/s without spin, integrated
by newmark at dt = 50 explicit critical dt (2 tc / pi, tc of mmdem's check) with the paper's
beta 0.3, gamma 0.5. Analytic (a rigid sphere under Coulomb friction mu m g at the contact
point, the classical sliding-to-rolling transition): while sliding v = v0 - mu g t and
w = 5 mu g t / (2 r); rolling (v = w r) from t* = 2 v0 / (7 mu g) = 1.17e-3 s on, at
v = 5/7 v0 (the angular momentum about the contact point, m v0 r, is conserved).
The whole transition takes ~6 steps of dt_max: every step that ends it starts sliding (the
predictor) and ends sticking, the case where Newton with the consistent Coulomb tangent
(no friction along the sliding direction) jumps across the cone.
Checks, for secants on (coulomb_secant, onset_secant: true) and off (the default):
  - vx and wy r at t = 0.01 s equal 5/7 v0 within 1e-4 relative (analytic; measured ~1e-5);
  - the secant run takes fewer Newton iterations and no more cut steps than the consistent
    tangent's (measured when written: 533 against 1122 Newton iterations, 1 against 17 cut
    steps; the two runs' dt sequences differ, so their states agree only to the discretization
    error, ~1e-5 of v0, which the analytic checks bound).
Both runs cut a step only after max_iterations (stall_iterations: 0), the Newton the secants
were made for, and without newmark's cycle freeze (freeze_cycles: false; it holds the cycling
contacts sticking, which changes what the secants are compared with: measured with it, the
secants 766 against 696 Newton iterations, 1 against 2 cut steps); with newmark's default stall cut (DemNmConverged, stall_iterations 6) the
consistent tangent's cycles end early, and that run ("stall cut": the analytic checks, and
fewer Newton iterations than the consistent run without it)
took 499 Newton iterations and 7 cut steps, the secants with the stall cut 621 and 3, and
with stall_iterations: 0 the secants 699 and 2 against the consistent tangent's 892 and 8 (session 9).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
R, v0, mu, g = 0.001, 0.02, 0.5, 9.81
YAML = """name: newmark_secant
domain: {lo: [0, 0, 0], hi: [0.1, 0.01, 0.01], periodic: [true, true, false]}
gravity: [0, 0, -9.81]
""" + dc.GLASS_BEADS + """bodies:
  - {shape: bead, material: glass, list: [{x: [0.005, 0.005, 0.001], v: [0.02, 0, 0]}]}
""" + dc.FLOOR + """integrator: {type: newmark, dt: 2.1e-4, beta: 0.3, gamma: 0.5, stall_iterations: 0, freeze_cycles: false}
run: {end_time: 0.01}
output: {thermo_every: 1, vtk_every: -1, track: [0]}
"""
y = os.path.join(tmp, "slide.yaml")
open(y, "w").write(YAML)
res = {}
for name, sets in (("secants", [("integrator.coulomb_secant", "true"), ("integrator.onset_secant", "true")]), ("consistent", []),
                   ("stall cut", [("integrator.stall_iterations", "6")])):
    out = os.path.join(tmp, name)
    if not dc.run("newmark_secant: %s run" % name, y, out, sets):
        continue
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    last = tr[-1]
    res[name] = (last["vx"], last["wy"] * R, th[-1]["newton_total"], th[-1]["dt_cuts_snes"], len(th) - 1)
    vf = 5.0 / 7.0 * v0
    dc.check("newmark_secant: %s, rolling speed vx = 5/7 v0" % name, abs(last["vx"] - vf) / vf, 1e-4,
             "vx %.6g m/s, 5/7 v0 = %.6g m/s at t = %.4g s" % (last["vx"], vf, last["time"]))
    dc.check("newmark_secant: %s, rolling w r = 5/7 v0" % name, abs(last["wy"] * R - vf) / vf, 1e-4,
             "wy r %.6g m/s" % (last["wy"] * R))
if "secants" in res and "consistent" in res:
    a, b = res["secants"], res["consistent"]
    if a[2] < b[2] and a[3] <= b[3]:
        dc.ok("newmark_secant: the secants take fewer Newton iterations and no more cut steps",
              "Newton iterations %d vs %d, cut steps %d vs %d, steps %d vs %d (secants vs consistent tangent)" % (a[2], b[2], a[3], b[3], a[4], b[4]))
    else:
        dc.not_ok("newmark_secant: the secants take fewer Newton iterations and no more cut steps",
                  "Newton iterations %d vs %d, cut steps %d vs %d, steps %d vs %d (secants vs consistent tangent)" % (a[2], b[2], a[3], b[3], a[4], b[4]))
if "stall cut" in res and "consistent" in res:
    a, b = res["stall cut"], res["consistent"]
    (dc.ok if a[2] < b[2] else dc.not_ok)("newmark_secant: the stall cut (stall_iterations 6) takes fewer Newton iterations than cutting after max_iterations",
                                          "Newton iterations %d vs %d, cut steps %d vs %d, steps %d vs %d" % (a[2], b[2], a[3], b[3], a[4], b[4]))
dc.finish()
