#!/usr/bin/env python3
"""benchmarks/cannonball/bench.py - contact dynamics (integrator cd) on the cannonball
pyramid of 004_66a055dbe6238b20.txt section 8.2 against penalty DEM (verlet).

The pyramid: EDGE spheres along the base edge (default 20: 2870 spheres), diameter 2.5 mm,
density 2000 kg/m^3, base layer fixed, layers lifted by 5 % of a radius and dropped
(pyramid.yaml is the run description; this script writes its body files cache/base.csv and
cache/mobile.csv with the lattice of tests/cases/cd_pyramid.py). Uniform Hooke law,
kn = 1e7 N/m, frictionless, critically damped between two free spheres.

Runs, each to rest, timed by mmdem's thermo.csv wall clock and by the process CPU time
(the machine may be shared; CPU time is the fairer number):
  cd-apgd     integrator cd, solver apgd, dt = 1e-3 s (004 8.2), T_CD simulated seconds
  cd-pgs      integrator cd, solver pgs (natural order), same
  cd-compat   cd-apgd plus the compatibility post-solve at every step (004 Algorithm 1)
  verlet      penalty DEM at dt = tc/10 (tc the undamped collision time of two spheres),
              critically damped, from the same dropped start, for T_DEM simulated seconds
Time to rest: the first thermo row from which the kinetic energy stays below 1e-6 (and
1e-12) N m g r (CD rows every step, verlet every 1000 steps), and the wall (thermo wall_s)
and CPU time (pro rata) spent to get there.
Printed per run: steps, simulated time, wall and CPU seconds per step and in total, LCP
iterations per step (mean, max: PGS sweeps / APGD iterations) and residual, and for the
compatibility post-solve its time per solve, TAOALMM iterations and Newton steps (from the
integrator's -cd_view summary). Results also go to cache/results.json.

Usage: bench.py [--edge N] [--mmdem PATH] [--runs cd-apgd,cd-pgs,cd-compat,verlet]
                [--t-cd SECONDS] [--t-dem SECONDS] [--tol 1e-10]
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


def write_bodies(edge):
    """cache/base.csv (fixed base layer) and cache/mobile.csv for pyramid.yaml"""
    layers = pyr.lattice(edge, 0.05)
    os.makedirs(os.path.join(here, "cache"), exist_ok=True)
    for name, pts in (("base.csv", layers[0]), ("mobile.csv", [p for l in layers[1:] for p in l])):
        with open(os.path.join(here, "cache", name), "w") as fp:
            fp.write("x,y,z\n")
            for p in pts:
                fp.write("%.17g,%.17g,%.17g\n" % p)
    return len(layers[0]), sum(len(l) for l in layers[1:])


def run(mmdem, d, tag, sets, edge, extra=()):
    out = os.path.join(d, tag)
    span, R = 2 * edge * pyr.R, pyr.R
    cmd = [mmdem, "run", os.path.join(here, "pyramid.yaml"), "--out", out, "--quiet",
           "--set", "domain.hi.0=%r" % span, "--set", "domain.hi.1=%r" % span, "--set", "domain.hi.2=%r" % ((edge + 1) * 2 * R)]
    for k, v in sets:
        cmd += ["--set", "%s=%s" % (k, v)]
    cmd += list(extra)
    c0, w0 = cpu_children(), time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    cpu, wall = cpu_children() - c0, time.time() - w0
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "run.log"), "w") as fp:
        fp.write(p.stdout)
    if p.returncode != 0:
        print("%s: mmdem failed (%d): %s" % (tag, p.returncode, " | ".join(p.stdout.splitlines()[-4:])))
        return None
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    res = {"tag": tag, "bodies": edge * (edge + 1) * (2 * edge + 1) // 6, "steps": int(th[-1]["step"]), "time": th[-1]["time"],
           "wall_s": wall, "cpu_s": cpu, "thermo": th, "log": p.stdout}
    m = re.search(r"cd: (\d+) steps, solver (\w+) \(order \w+\), iterations mean ([\d.]+) max (\d+), max residual ([\d.e+-]+), (\d+) steps not converged to tol [\d.e+-]+; solve ([\d.]+) s wall, ([\d.]+) s CPU", p.stdout)
    if m:
        res.update(lcp_its_mean=float(m.group(3)), lcp_its_max=int(m.group(4)), lcp_res_max=float(m.group(5)),
                   lcp_unconverged=int(m.group(6)), lcp_solve_wall_s=float(m.group(7)), lcp_solve_cpu_s=float(m.group(8)))
    m = re.search(r"compatibility post-solve: (\d+) solves, TAOALMM iterations mean ([\d.]+) max (\d+), Newton steps mean ([\d.]+) max (\d+), \d+ TAOALMM errors, (\d+) above compatible_tol ([\d.e+-]+), max equilibrium residual ([\d.e+-]+); ([\d.]+) s wall, ([\d.]+) s CPU", p.stdout)
    if m:
        res.update(compat_solves=int(m.group(1)), almm_its_mean=float(m.group(2)), almm_its_max=int(m.group(3)),
                   newton_mean=float(m.group(4)), newton_max=int(m.group(5)), compat_fail=int(m.group(6)),
                   compat_eqres=float(m.group(8)), compat_wall_s=float(m.group(9)), compat_cpu_s=float(m.group(10)))
    return res


def rest_time(r, edge):
    """for each threshold (1e-6 and 1e-12 of N m g r): the first thermo row from which the
    kinetic energy stays below it, and the wall (thermo wall_s) and CPU time (pro rata) spent
    to get there. Frictionless DEM keeps a little undamped motion (spheres rocking in their
    pockets, tangential to every contact, where no dashpot acts), so the strict threshold may
    never be reached by verlet."""
    nm = r["bodies"] - edge * edge
    th = r["thermo"]
    r["rest"] = {}
    for eps in (1e-6, 1e-12):
        lim = eps * nm * pyr.M * pyr.G * pyr.R
        k = len(th)
        while k > 0 and th[k - 1]["ke_trans"] + th[k - 1]["ke_rot"] < lim:
            k -= 1
        if k < len(th) and th[k]["step"] > 0:
            row = th[k]
            r["rest"]["%g" % eps] = {"step": int(row["step"]), "time": row["time"], "wall_s": row["wall_s"],
                                     "cpu_s": r["cpu_s"] * row["step"] / r["steps"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--edge", type=int, default=20)
    ap.add_argument("--mmdem", default=os.environ.get("MMDEM", os.path.join(root, "build", "mmdem")))
    ap.add_argument("--runs", default="cd-apgd,cd-pgs,cd-compat,verlet")
    ap.add_argument("--t-cd", type=float, default=0.11)
    ap.add_argument("--t-dem", type=float, default=0.08)
    ap.add_argument("--tol", default="1e-10")
    a = ap.parse_args()
    d = os.path.join(here, "cache")
    os.makedirs(d, exist_ok=True)
    runs = a.runs.split(",")
    R, M, G = pyr.R, pyr.M, pyr.G
    kn = 1.0e7
    tc = math.pi * math.sqrt(0.5 * M / kn)  # undamped collision time of two free spheres
    results = []
    write_bodies(a.edge)
    for tag, sets in (("cd-apgd", [("integrator.solver", "apgd"), ("integrator.tol", a.tol)]),
                      ("cd-pgs", [("integrator.solver", "pgs"), ("integrator.tol", a.tol)]),
                      ("cd-compat", [("integrator.solver", "apgd"), ("integrator.tol", a.tol), ("integrator.compatible", "true")])):
        if tag not in runs:
            continue
        r = run(a.mmdem, d, tag, sets + [("run.end_time", repr(a.t_cd))], a.edge, ("-cd_view",))
        if r:
            rest_time(r, a.edge)
            results.append(r)
    if "verlet" in runs:
        dt = tc / 10
        r = run(a.mmdem, d, "verlet", [("integrator.type", "verlet"), ("integrator.dt", "%.6g" % dt), ("run.end_time", repr(a.t_dem)),
                                       ("output.thermo_every", "1000")], a.edge)
        if r:
            r["dt"] = dt
            r["tc"] = tc
            rest_time(r, a.edge)
            results.append(r)
    print("cannonball pyramid, %d per edge: %d spheres (%d fixed); Hooke kn = %g N/m, tc = %.3g s" % (a.edge, results[0]["bodies"] if results else 0, a.edge * a.edge, kn, tc))
    print("%-10s %7s %9s %10s %10s %10s %12s %9s %s" % ("run", "steps", "t_sim", "wall_s", "cpu_s", "cpu/step", "LCP cpu/step", "LCP its", "LCP res / compatibility / rest"))
    for r in results:
        its = ("%.0f/%d" % (r["lcp_its_mean"], r["lcp_its_max"])) if "lcp_its_mean" in r else "-"
        lcp = ("%.3g" % (r["lcp_solve_cpu_s"] / max(r["steps"], 1))) if "lcp_solve_cpu_s" in r else "-"
        parts = []
        if "lcp_res_max" in r:
            parts.append("max res %.1e (%d steps above tol)" % (r["lcp_res_max"], r["lcp_unconverged"]))
        if "compat_cpu_s" in r:
            parts.append("post-solve %.3g s CPU/solve, TAOALMM its %.1f/%d, Newton %.1f/%d, %d above tol, eq. res %.1e" % (
                r["compat_cpu_s"] / max(r["compat_solves"], 1), r["almm_its_mean"], r["almm_its_max"], r["newton_mean"],
                r["newton_max"], r["compat_fail"], r["compat_eqres"]))
        if "dt" in r:
            parts.append("dt = %.3g s (tc/10)" % r["dt"])
        for eps in ("1e-06", "1e-12"):
            q = r.get("rest", {}).get(eps)
            if q:
                parts.append("KE < %s N m g r from step %d (t = %.4g s): %.1f s wall, %.1f s CPU" % (
                    eps, q["step"], q["time"], q["wall_s"], q["cpu_s"]))
            else:
                parts.append("KE < %s N m g r: not by t = %.4g s" % (eps, r["time"]))
        print("%-10s %7d %9.4g %10.2f %10.2f %10.3g %12s %9s %s" % (r["tag"], r["steps"], r["time"], r["wall_s"], r["cpu_s"],
                                                                r["cpu_s"] / max(r["steps"], 1), lcp, its, "; ".join(parts)))
    with open(os.path.join(d, "results.json"), "w") as fp:
        json.dump([{k: v for k, v in r.items() if k not in ("thermo", "log")} for r in results], fp, indent=1)


if __name__ == "__main__":
    main()
