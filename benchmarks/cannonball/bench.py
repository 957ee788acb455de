#!/usr/bin/env python3
"""benchmarks/cannonball/bench.py - contact dynamics (integrator cd) on the cannonball
pyramid of 004_66a055dbe6238b20.txt section 8.2 against penalty DEM (verlet).

The pyramid: EDGE spheres along the base edge (default 20: 2870 spheres), diameter 2.5 mm,
density 2000 kg/m^3, base layer fixed, layers lifted by 5 % of a radius and dropped
(tests/cases/cd_pyramid.py builds it; pyramid.yaml.in is the run description it fills).
Uniform Hooke law, kn = 1e7 N/m (frictionless).

Runs, each to rest, timed by mmdem's thermo.csv wall clock and by the process CPU time
(the machine may be shared; CPU time is the fairer number):
  cd-apgd     integrator cd, solver apgd, dt = 1e-3 s (004 8.2), T_CD simulated seconds
  cd-pgs      integrator cd, solver pgs (natural order), same
  cd-compat   cd-apgd plus the compatibility post-solve at every step (004 Algorithm 1)
  verlet      penalty DEM at dt = tc/10 (tc the collision time of the Hooke pair), critically
              damped, from the same dropped start, until the kinetic energy falls below
              1e-12 N m g r (checked every 1000 steps; its time to rest is that first time)
Printed per run: steps, simulated time, wall and CPU seconds per step and in total, LCP
iterations per step (mean, max: PGS sweeps / APGD iterations) and residual, and for the
compatibility post-solve its time per solve, TAOALMM iterations and Newton steps (from the
integrator's -cd_view summary). Results also go to cache/results.json.

Usage: bench.py [--edge N] [--mmdem PATH] [--runs cd-apgd,cd-pgs,cd-compat,verlet]
                [--t-cd SECONDS] [--tol 1e-10]
"""
import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(root, "tests", "cases"))
sys.path.insert(0, os.path.join(root, "tests", "tools"))
sys.dont_write_bytecode = True
import cd_pyramid as pyr  # noqa: E402
import demcheck as dc     # noqa: E402


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(mmdem, d, tag, integ, sets, edge, extra=()):
    os.makedirs(os.path.join(d, tag), exist_ok=True)
    yaml, nb, nm = pyr.write_case(os.path.join(d, tag), edge, "hooke", integ, 0.05)
    out = os.path.join(d, tag, "out")
    cmd = [mmdem, "run", yaml, "--out", out, "--quiet"]
    for k, v in sets:
        cmd += ["--set", "%s=%s" % (k, v)]
    cmd += list(extra)
    c0, w0 = cpu_children(), time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    cpu, wall = cpu_children() - c0, time.time() - w0
    with open(os.path.join(d, tag, "run.log"), "w") as fp:
        fp.write(p.stdout)
    if p.returncode != 0:
        print("%s: mmdem failed (%d): %s" % (tag, p.returncode, " | ".join(p.stdout.splitlines()[-4:])))
        return None
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    res = {"tag": tag, "bodies": nb + nm, "steps": int(th[-1]["step"]), "time": th[-1]["time"],
           "wall_s": wall, "cpu_s": cpu, "thermo": th, "log": p.stdout}
    m = re.search(r"cd: (\d+) steps, solver (\w+).*iterations mean ([\d.]+) max (\d+), max residual ([\d.e+-]+), (\d+) steps not converged.*solve ([\d.]+) s", p.stdout)
    if m:
        res.update(lcp_its_mean=float(m.group(3)), lcp_its_max=int(m.group(4)), lcp_res_max=float(m.group(5)),
                   lcp_unconverged=int(m.group(6)), lcp_solve_s=float(m.group(7)))
    m = re.search(r"compatibility post-solve: (\d+) solves, TAOALMM iterations mean ([\d.]+) max (\d+), Newton steps mean ([\d.]+) max (\d+), (\d+) above compatible_tol ([\d.e+-]+), max equilibrium residual ([\d.e+-]+); ([\d.]+) s", p.stdout)
    if m:
        res.update(compat_solves=int(m.group(1)), almm_its_mean=float(m.group(2)), almm_its_max=int(m.group(3)),
                   newton_mean=float(m.group(4)), newton_max=int(m.group(5)), compat_fail=int(m.group(6)),
                   compat_eqres=float(m.group(8)), compat_s=float(m.group(9)))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--edge", type=int, default=20)
    ap.add_argument("--mmdem", default=os.environ.get("MMDEM", os.path.join(root, "build", "mmdem")))
    ap.add_argument("--runs", default="cd-apgd,cd-pgs,cd-compat,verlet")
    ap.add_argument("--t-cd", type=float, default=0.11)
    ap.add_argument("--tol", default="1e-10")
    a = ap.parse_args()
    d = os.path.join(here, "cache")
    os.makedirs(d, exist_ok=True)
    runs = a.runs.split(",")
    R, M, G = pyr.R, pyr.M, pyr.G
    kn = 1.0e7
    tc = math.pi * math.sqrt(0.5 * M / kn)  # undamped collision time of two free spheres
    results = []
    cd = "integrator: {type: cd, dt: 1.0e-3}\nrun: {end_time: %g}" % a.t_cd
    view = ("-cd_view",)
    for tag, sets in (("cd-apgd", [("integrator.solver", "apgd"), ("integrator.tol", a.tol)]),
                      ("cd-pgs", [("integrator.solver", "pgs"), ("integrator.tol", a.tol)]),
                      ("cd-compat", [("integrator.solver", "apgd"), ("integrator.tol", a.tol), ("integrator.compatible", "true")])):
        if tag not in runs:
            continue
        r = run(a.mmdem, d, tag, cd, sets, a.edge, view)
        if r:
            results.append(r)
    if "verlet" in runs:
        dt = tc / 10
        t_end = 0.12
        integ = "integrator: {type: verlet, dt: %.6g}\nrun: {end_time: %g}" % (dt, t_end)
        r = run(a.mmdem, d, "verlet", integ, [("output.thermo_every", "1000")], a.edge)
        if r:
            nm = r["bodies"] - a.edge * a.edge
            scale = nm * M * G * R
            rest = next((row for row in r["thermo"] if row["step"] > 0 and (row["ke_trans"] + row["ke_rot"]) < 1e-12 * scale), None)
            r["dt"] = dt
            r["tc"] = tc
            if rest:
                frac = rest["step"] / r["steps"]
                r["rest_step"], r["rest_time"] = int(rest["step"]), rest["time"]
                r["rest_wall_s"], r["rest_cpu_s"] = r["wall_s"] * frac, r["cpu_s"] * frac
            results.append(r)
    print("cannonball pyramid, %d per edge: %d spheres (%d fixed); Hooke kn = %g N/m, tc = %.3g s" % (a.edge, results[0]["bodies"] if results else 0, a.edge * a.edge, kn, tc))
    print("%-10s %7s %9s %11s %11s %9s %9s %10s %s" % ("run", "steps", "t_sim", "wall_s", "cpu_s", "cpu/step", "LCP its", "LCP res", "compatibility"))
    for r in results:
        its = ("%.0f/%d" % (r["lcp_its_mean"], r["lcp_its_max"])) if "lcp_its_mean" in r else "-"
        rr = ("%.1e" % r["lcp_res_max"]) if "lcp_res_max" in r else "-"
        comp = ""
        if "compat_s" in r:
            comp = "%.3g s/solve (CPU share of run), ALMM its %.1f/%d, Newton %.1f/%d, eq. res %.1e" % (
                r["compat_s"] / max(r["compat_solves"], 1), r["almm_its_mean"], r["almm_its_max"], r["newton_mean"], r["newton_max"], r["compat_eqres"])
        if r["tag"] == "verlet" and "rest_step" in r:
            comp = "dt = %.3g s; at rest (KE < 1e-12 N m g r) after %d steps, t = %.4g s: %.1f s wall, %.1f s CPU" % (
                r["dt"], r["rest_step"], r["rest_time"], r["rest_wall_s"], r["rest_cpu_s"])
        print("%-10s %7d %9.4g %11.2f %11.2f %9.3g %9s %10s %s" % (r["tag"], r["steps"], r["time"], r["wall_s"], r["cpu_s"], r["cpu_s"] / max(r["steps"], 1), its, rr, comp))
    with open(os.path.join(d, "results.json"), "w") as fp:
        json.dump([{k: v for k, v in r.items() if k not in ("thermo", "log")} for r in results], fp, indent=1)


if __name__ == "__main__":
    main()
