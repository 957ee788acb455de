#!/usr/bin/env python3
"""
benchmarks/trapezoid/bench.py - the integrator `trapezoid` (001 eq. (40)-(49), fixed-point
iterations) against `verlet` on a settle workload.

Workload: the physics of benchmarks/settle (spheres d = 2 mm, rho 2500 kg/m^3, Hookean normal
spring kn = 400 N/m with dashpot gamma_n = 2800 1/s, tangential history spring kt = 2/7 kn,
gamma_t = gamma_n / 2, friction 0.5, periodic in x and y, a floor at z = 0), with
NX x NY x NZ spheres falling from a jittered lattice of spacing 1.1 d whose lowest layer
starts just above the floor, over T seconds: the lattice hits the floor, piles up and
settles, so the runs see free flight, impacts and a dense bed. --law hertz: the same with
hertz_mindlin (E = 5e6 Pa, nu = 0.25, restitution 0.5, friction 0.5; 001's law, whose normal
damping vanishes at zero overlap, while the Hookean dashpot force jumps to m_eff gamma_n |v_n|
there). tc: the shortest collision time mmdem reports (`mmdem check`).

1. Cost per step at the same dt = tc / 50: wall time per step (thermo.csv wall_s at the end /
   steps) of verlet (with the fused Hooke kernel it uses by default, and with MMDEM_NO_FUSED=1,
   the generic pipeline that trapezoid also uses), trapezoid phi 0.5 with sweep gauss_seidel
   and with sweep jacobi (tol 1e-4, max_iterations 50, adapt: true); the trapezoid rows also
   give the mean sweeps per step and the steps rejected (retried with dt/2: the fixed point
   does not converge when a Hookean contact opens or closes within the step, since its
   dashpot force jumps from 0 to m_eff gamma_n |v_n| at zero overlap).
2. Largest stable dt, as a fraction of tc: each integrator runs the workload at
   dt = f tc for f = 0.02 * 1.5^k upwards until a run fails, then bisects (4 times) between the
   last stable and the first unstable f. Stable: the run finishes (no guard stop: state not
   finite, a body leaving the domain, an explicit integrator refusing dt > tc at set-up) and
   its energy balance error |e_balance(end) - e_balance(0)| stays below 5 % of the potential
   energy released, pe_grav(0) - pe_grav(end). trapezoid runs with adapt: true (a step whose
   fixed point does not converge is retried with dt/2), so the scan also prints the fraction
   of steps rejected and the mean dt actually taken, and a second threshold is reported: the
   largest f at which at most 1 % of the steps were rejected.

Usage: bench.py [--mmdem PATH] [--n NX,NY,NZ] [--time T] [--law hooke|hertz] [--out DIR] [--no-scan]
                [--gamma-n G] [--mu MU] (hooke only: dashpot and friction of the variant runs)
Defaults: build/mmdem, 6,6,6 (216 spheres), T = 0.06 s, --repeat 3. Prints a table; writes
DIR/results.json (default out/bench_trapezoid/, ignored by git).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

R = 1.0e-3
D = 2 * R
RHO = 2500.0
KN = 400.0
KT = 2.0 / 7.0 * KN
GN = 2800.0
GT = GN / 2
MU = 0.5
G = 9.81
SPACING = 1.1 * D
SKIN = 0.2 * D
MASS = RHO * 4.0 / 3.0 * math.pi * R ** 3
MEFF = 0.5 * MASS
LAWS = {"hooke": "{pair: default, law: hooke, params: {kn: %r, kt: %r, gamma_n: %r, gamma_t: %r, mu: %r}}" % (KN, KT, GN, GT, MU),
        "hertz": "{pair: default, law: hertz_mindlin, params: {youngs_modulus: 5.0e6, poisson_ratio: 0.25, restitution: 0.5, friction: %r}}" % MU}
LAW = "hooke"


def yaml_text(n, T, out, integ):
    nx, ny, nz = n
    lx, ly = nx * SPACING, ny * SPACING
    lz = (nz + 4) * SPACING + 0.02
    z0 = R * 1.05
    return """name: bench_trapezoid
domain: {lo: [0, 0, 0], hi: [%r, %r, %r], periodic: [true, true, false]}
gravity: [0, 0, %r]
materials:
  glass: {density: %r, friction: %r}
contact:
  - %s
shapes:
  bead: {type: sphere, radius: %r}
bodies:
  - {shape: bead, material: glass, lattice: {lo: [%r, %r, %r], hi: [%r, %r, %r], spacing: %r, jitter: 0.05}}
walls:
  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: glass}
search: {skin: %r}
integrator: %s
run: {end_time: %r}
output: {dir: %s, vtk_every: -1, thermo_every: 200}
""" % (lx, ly, lz, -G, RHO, MU, LAWS[LAW], R, 0.5 * SPACING, 0.5 * SPACING, z0,
       0.5 * SPACING + (nx - 1 + 1e-6) * SPACING, 0.5 * SPACING + (ny - 1 + 1e-6) * SPACING, z0 + (nz - 1 + 1e-6) * SPACING,
       SPACING, SKIN, integ, T, out)


def run(mmdem, work, tag, n, T, integ, env=None):
    out = os.path.join(work, tag)
    path = out + ".yaml"
    with open(path, "w") as fp:
        fp.write(yaml_text(n, T, out, integ))
    t0 = time.time()
    p = subprocess.run([mmdem, "run", path, "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    wall = time.time() - t0
    res = {"ok": p.returncode == 0, "wall": wall, "log": p.stdout[-600:]}
    th = os.path.join(out, "thermo.csv")
    if os.path.exists(th):
        rows = list(csv.DictReader(open(th)))
        if rows:
            last, first = rows[-1], rows[0]
            res["steps"] = int(last["step"])
            res["time"] = float(last["time"])
            res["wall_s"] = float(last["wall_s"])
            res["e_err"] = abs(float(last["e_balance"]) - float(first["e_balance"]))
            res["pe_released"] = float(first["pe_grav"]) - float(last["pe_grav"])
            res["ke_end"] = float(last["ke_trans"]) + float(last["ke_rot"])
            its = [int(r["iterations"]) for r in rows[1:]]
            res["sweeps"] = sum(its) / len(its) if its else 0
            res["rejected"] = int(last.get("rejected", 0) or 0)
    res["stable"] = bool(res["ok"] and res.get("steps", 0) > 0 and res.get("time", 0) >= T * (1 - 1e-9) and
                         res.get("e_err", 1e300) <= 0.05 * max(res.get("pe_released", 0), 1e-300))
    res["few_rejected"] = bool(res["stable"] and res.get("rejected", 0) <= 0.01 * res.get("steps", 0))
    return res


def collision_time(mmdem, work, n, T):
    """the shortest collision time mmdem reports for the workload"""
    path = os.path.join(work, "tc.yaml")
    with open(path, "w") as fp:
        fp.write(yaml_text(n, T, os.path.join(work, "tc"), "{type: verlet, dt: 1.0e-9}"))
    p = subprocess.run([mmdem, "check", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in p.stdout.splitlines():
        if "shortest collision time tc = " in line:
            return float(line.split("shortest collision time tc = ")[1].split()[0])
    raise SystemExit("cannot read tc from mmdem check: " + p.stdout[-400:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mmdem", default=os.path.join(ROOT, "build", "mmdem"))
    ap.add_argument("--n", default="6,6,6")
    ap.add_argument("--time", type=float, default=0.06)
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench_trapezoid"))
    ap.add_argument("--no-scan", action="store_true")
    ap.add_argument("--law", default="hooke", choices=sorted(LAWS))
    ap.add_argument("--repeat", type=int, default=3, help="cost runs per integrator; the fastest counts")
    ap.add_argument("--gamma-n", type=float, default=GN, help="hooke: normal dashpot gamma_n in 1/s (0: none; the dashpot force jumps at zero overlap)")
    ap.add_argument("--mu", type=float, default=MU, help="hooke: friction coefficient")
    a = ap.parse_args()
    global LAW
    LAW = a.law
    if a.gamma_n != GN or a.mu != MU:
        LAWS["hooke"] = "{pair: default, law: hooke, params: {kn: %r, kt: %r, gamma_n: %r, gamma_t: %r, mu: %r}}" % (KN, KT, a.gamma_n, a.gamma_n / 2, a.mu)
    n = tuple(int(x) for x in a.n.split(","))
    os.makedirs(a.out, exist_ok=True)
    nb = n[0] * n[1] * n[2]
    TC = collision_time(a.mmdem, a.out, n, a.time)
    print("trapezoid vs verlet: %d spheres (%s), law %s, T = %g s, tc = %.4g s" % (nb, a.n, a.law, a.time, TC), flush=True)
    variants = [
        ("verlet", "{type: verlet, dt: %r}", None),
        ("verlet (generic pipeline)", "{type: verlet, dt: %r}", "nofused"),
        ("trapezoid gauss_seidel", "{type: trapezoid, dt: %r, phi: 0.5, sweep: gauss_seidel}", None),
        ("trapezoid jacobi", "{type: trapezoid, dt: %r, phi: 0.5, sweep: jacobi}", None),
    ]
    env_nofused = dict(os.environ, MMDEM_NO_FUSED="1")
    results = {"n": nb, "T": a.time, "law": a.law, "tc": TC, "cost": {}, "dtmax": {}}
    dt = TC / 50
    print("\n1. cost per step at dt = tc/50 = %.4g s" % dt)
    print("%-28s %8s %12s %10s %8s %9s" % ("integrator", "steps", "ms/step", "vs verlet", "sweeps", "rejected"))
    base = None
    for name, spec, env in variants:
        rs = [run(a.mmdem, a.out, "cost_" + name.replace(" ", "_").replace("(", "").replace(")", ""), n, a.time, spec % dt, env_nofused if env else None) for _ in range(max(1, a.repeat))]
        rs = [x for x in rs if x.get("steps")] or rs
        r = min(rs, key=lambda x: x.get("wall_s", 1e300) / max(x.get("steps", 1), 1))
        if not r.get("steps"):
            print("%-28s failed: %s" % (name, r["log"].strip().splitlines()[-1:] if r["log"] else ""))
            continue
        ms = 1e3 * r["wall_s"] / r["steps"]
        base = base or ms
        results["cost"][name] = dict(ms_per_step=ms, steps=r["steps"], sweeps=r["sweeps"], rejected=r.get("rejected", 0), stable=r["stable"])
        print("%-28s %8d %12.4f %10.2f %8s %9d" % (name, r["steps"], ms, ms / base, ("%.2f" % r["sweeps"]) if name.startswith("trap") else "-", r.get("rejected", 0)), flush=True)
    if not a.no_scan:
        print("\n2. largest stable dt / tc (run finishes, |energy balance error| <= 5 % of the potential energy released)")
        for name, spec, env in variants:
            if "generic" in name:
                continue
            f, last_ok, first_bad, few, taken = 0.02, None, None, None, 0.0

            def show(f, r):
                e = r.get("e_err", 0) / max(r.get("pe_released", 1e-300), 1e-300)
                rej = "%.2f %% of %d steps rejected, mean dt %.3g tc" % (100.0 * r.get("rejected", 0) / max(r.get("steps", 1), 1), r.get("steps", 0), a.time / max(r.get("steps", 1), 1) / TC) if name.startswith("trap") else ""
                print("   %-26s dt/tc = %-8.4g %-8s energy error %.3g of released %s" % (name, f, "stable" if r["stable"] else ("unstable" if r["ok"] else "failed"), e, rej), flush=True)

            while f < 20:
                r = run(a.mmdem, a.out, "scan", n, a.time, spec % (f * TC), None)
                show(f, r)
                if r["stable"]:
                    taken = max(taken, a.time / max(r.get("steps", 1), 1) / TC)
                if r["few_rejected"]:
                    few = f
                if r["stable"]:
                    last_ok = f
                    f *= 1.5
                else:
                    first_bad = f
                    break
            if last_ok and first_bad:
                lo, hi = last_ok, first_bad
                for _ in range(4):
                    mid = 0.5 * (lo + hi)
                    r = run(a.mmdem, a.out, "scan", n, a.time, spec % (mid * TC), None)
                    show(mid, r)
                    if r["stable"]:
                        taken = max(taken, a.time / max(r.get("steps", 1), 1) / TC)
                    if r["few_rejected"] and (few is None or mid > few):
                        few = mid
                    if r["stable"]:
                        lo = mid
                    else:
                        hi = mid
                results["dtmax"][name] = dict(stable=lo, unstable=hi, few_rejected=few, mean_dt_taken=taken)
                print("%-28s largest stable dt = %.3g tc (unstable at %.3g tc)%s" % (name, lo, hi, ("; largest mean dt actually taken %.3g tc; at most 1 %% of steps rejected up to %.3g tc (of those run)" % (taken, few or 0)) if name.startswith("trap") else ""), flush=True)
            else:
                results["dtmax"][name] = dict(stable=last_ok, unstable=first_bad)
                print("%-28s scan inconclusive: last stable %s, first unstable %s" % (name, last_ok, first_bad), flush=True)
    with open(os.path.join(a.out, "results.json"), "w") as fp:
        json.dump(results, fp, indent=1)


if __name__ == "__main__":
    main()
