"""newmark's consistent Jacobian and Newton's convergence (src/integrators/newmark.c).

1. -snes_test_jacobian (PETSc's finite-difference Jacobian of newmark's residual, 000 eq.
   (61)-(63)) on val_newmark_jacobian.yaml: ||J - Jfd||_F / ||J||_F at every solve of 2 steps.
   The laws enter through their own tangent (newmark.c DemNmLawTangent: differences of the
   law in the gap and the relative velocity), so the Jacobian is consistent up to what
   jacobian.c's geometric block leaves out (the turn of the normal in the dashpot's vn; the
   turn of the stored spring into the new tangent plane). Tolerances: PETSc's guide calls
   O(1e-8) correct; a wrong term of the gyroscopic or pseudo-moment blocks gives > 1e-4 here
   (the bodies have radius 1 m, so their rotational entries weigh as much as the
   translational ones). Measured (and the tangent jacobian.c alone gave, newmark.c before
   DemNmLawTangent):
     hooke, frictionless, undamped                  3e-10
     hooke, frictionless, normal dashpot            8e-7    (vn's normal turn)    tol 1e-6
     hooke, sticking friction (mu 5), dashpots      1.4e-5  (spring turn)         tol 1e-4
     hooke, sliding friction (mu 0.5), dashpots     2.2e-6  (was 1e-2)            tol 1e-5
     hertz_mindlin, frictionless (cn ~ delta^1/4)   6.3e-7  (was 1.0e-4)          tol 1e-5
     hertz_mindlin, mu 0.5 (sliding)                9.9e-7  (was 6.0e-3)          tol 1e-5
     hertz_mindlin, mu 5 (sticking; kt ~ delta^1/2) 7.2e-6  (was 5.9e-2)          tol 1e-4
2. Quadratic convergence: the Hertzian head-on impact of val_impact_hertz.yaml under newmark
   at dt = 6e-5 s (about tc/3) with -snes_rtol 1e-14 -snes_monitor: in every solve of at
   least three residuals r0, r1, r2 with r2 above round-off (1e-12 of the largest r0) the
   residual ratio shrinks
   quadratically, r2/r1 <= 1e-2 r1/r0 (a linearly converging iteration keeps the ratio),
   and the mean number of Newton iterations per step is <= 5 (issue 5).
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
yaml = os.path.join(here, "val_newmark_jacobian.yaml")


def run(out, sets, opts):
    cmd = [dc.MMDEM, "run", yaml if "hertz" not in out else os.path.join(here, "val_impact_hertz.yaml"), "--out", os.path.join(tmp, out)]
    for k, v in sets:
        cmd += ["--set", "%s=%s" % (k, v)]
    cmd += opts
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    return p.returncode, p.stdout


law = "contact.0.params."
hertz = "{youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: %g}"
cases = [("frictionless, undamped", [(law + "gamma_n", 0), (law + "gamma_t", 0), (law + "mu", 0)], 1e-6),
         ("frictionless, normal dashpot", [(law + "gamma_n", 50), (law + "gamma_t", 0), (law + "mu", 0)], 1e-6),
         ("sticking friction (mu 5) with dashpots", [(law + "gamma_n", 50), (law + "gamma_t", 25), (law + "mu", 5)], 1e-4),
         ("sliding friction (mu 0.5) with dashpots", [(law + "gamma_n", 50), (law + "gamma_t", 25), (law + "mu", 0.5)], 1e-5)]
for mu, tol in ((0, 1e-5), (0.5, 1e-5), (5, 1e-4)):
    cases.append(("hertz_mindlin, restitution 0.5, friction %g" % mu,
                  [("contact.0.law", "hertz_mindlin"), ("contact.0.params", hertz % mu)], tol))
# the stick/slip active set (newmark.c active_set): the Jacobian of the law with the sticking
# contacts held sticking (friction.h DemFrictionSpringMode_Private). The first solves hold the new
# contacts of the spinning spheres sticking, so their tangential force is the uncapped spring and
# dashpot force, as in the mu 5 case above (same tolerance; the parts newmark.c does not
# linearize, e.g. the turn of that force with the normal, grow with it): measured 2.4e-5 in the
# two solves with the contacts held sticking, 1e-6 in the solves after their release
cases.append(("hertz_mindlin, friction 0.5, active_set", [("contact.0.law", "hertz_mindlin"), ("contact.0.params", hertz % 0.5),
                                                           ("integrator.active_set", "true")], 1e-4))
for name, sets, tol in cases:
    rc, out = run("jac", sets, ["-snes_test_jacobian"])
    vals = [float(x) for x in re.findall(r"\|\|J - Jfd\|\|_F/\|\|J\|\|_F = ([0-9.eE+-]+)", out)]
    if rc != 0 or not vals:
        dc.not_ok("newmark -snes_test_jacobian, %s" % name, "exit %d, %d values: %s" % (rc, len(vals), out[-300:]))
        continue
    dc.check("newmark -snes_test_jacobian, %s: max ||J - Jfd||/||J|| over %d solves" % (name, len(vals)), max(vals), tol)

rc, out = run("hertz", [("integrator.type", "newmark"), ("integrator.dt", "6e-5"), ("run.end_time", "3e-4")],
              ["-snes_monitor", "-snes_rtol", "1e-14"])
if rc != 0:
    dc.not_ok("newmark Newton on the Hertz impact", "exit %d: %s" % (rc, out[-300:]))
else:
    solves, cur = [], None
    for line in out.splitlines():
        m = re.match(r"\s*(\d+) SNES Function norm ([0-9.eE+-]+)", line)
        if not m:
            continue
        if int(m.group(1)) == 0:
            cur = []
            solves.append(cur)
        cur.append(float(m.group(2)))
    tested, worst = 0, 0.0
    floor = 1e-12 * max(r[0] for r in solves)
    for r in solves:
        if len(r) >= 3 and r[1] > 0 and r[0] > 0 and r[2] > floor:
            tested += 1
            worst = max(worst, (r[2] / r[1]) / (r[1] / r[0]))
    its = [len(r) - 1 for r in solves]
    dc.check("newmark Newton, Hertz impact at dt ~ tc/3: quadratic, (r2/r1) / (r1/r0) over %d solves" % tested,
             worst if tested else float("nan"), 1e-2)
    dc.check("newmark Newton: mean iterations per step <= 5 (%d solves)" % len(its), sum(its) / max(1, len(its)), 5.0)
dc.finish()
