#!/usr/bin/env python3
"""
benchmarks/chute/bench.py - the chute-flow benchmark of `make bench` (issue: performance).

32000 spheres on a rough inclined chute, periodic in x and y, like LAMMPS's bench/in.chute:
a base layer of 1936 fixed spheres (a 44 x 44 square grid of spacing d, heights jittered by
+-15 % of r: the roughness) and 30064 flowing spheres above it; gravity tilted by 26 degrees
in the x-z plane; Hookean contacts with a tangential history spring, friction 0.5, the
physics of benchmarks/settle (d = 2 mm, kn = 400 N/m, gamma_n = 2800 1/s, dt = tc/50).
mmdem `hooke` + verlet against LAMMPS gran/hooke/history + fix nve/sphere + fix gravity
chute + fix freeze-like base (a group not integrated, base-base pairs excluded).

The flow is developed once by mmdem (DEVELOP steps from a jittered lattice at rest) and
cached under benchmarks/chute/cache/ with a key of every parameter; both codes load its
final positions, velocities and angular velocities (contact history starts at zero in
both) and run STEPS timed steps. The flowing layer is still accelerating after DEVELOP
steps (a dense, collisional flow, about 1.4 contacts per body, not the fully developed steady
state of bench/in.chute's data file): the per-step work is that of a dense chute flow.
Printed: particle-steps per second of the time loop (mmdem: wall_s of thermo.csv between
steps 0 and STEPS; LAMMPS: "Loop time"), the ratio, peak RSS per particle, and whether the
two codes agree at the end (mean down-slope velocity and mean height of the flowing bodies).

Usage: bench.py [--mmdem PATH] [--lmp PATH] [--no-lammps] [--repeat N] [--steps N]
"""
import argparse
import csv
import hashlib
import json
import math
import os
import random
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "settle"))
sys.dont_write_bytecode = True
import bench as B  # noqa: E402  (the settle benchmark: physics constants and run helpers)

CACHE = os.path.join(HERE, "cache")
VERSION = 1
ANGLE = 26.0                     # chute inclination [degrees]
NBASE_SIDE = 44                  # base grid: NBASE_SIDE^2 fixed spheres at spacing d
NTOTAL = 32000
LX = LY = NBASE_SIDE * B.D
FLOW_SPACING = 1.1 * B.D
NFLOW_SIDE = int(LX / FLOW_SPACING + 1e-9)  # 40 lattice sites per side
Z0 = B.D + 0.6 * B.D             # lowest flowing layer: clear of the base's bumps
LZ = 80 * B.D
DEVELOP = 20000
THERMO = 500
GX = B.G * math.sin(math.radians(ANGLE))
GZ = -B.G * math.cos(math.radians(ANGLE))


def log(msg):
    print(msg, flush=True)


def initial_state():
    rnd = random.Random(2026)
    base = [((i + 0.5) * B.D, (j + 0.5) * B.D, B.R * (1 + 0.15 * (2 * rnd.random() - 1)))
            for j in range(NBASE_SIDE) for i in range(NBASE_SIDE)]
    nflow = NTOTAL - len(base)
    flow = []
    k = 0
    while len(flow) < nflow:
        for j in range(NFLOW_SIDE):
            for i in range(NFLOW_SIDE):
                if len(flow) < nflow:
                    flow.append(((i + 0.5) * FLOW_SPACING + 0.02 * B.D * (2 * rnd.random() - 1),
                                 (j + 0.5) * FLOW_SPACING + 0.02 * B.D * (2 * rnd.random() - 1),
                                 Z0 + k * FLOW_SPACING))
        k += 1
    return base, flow


def write_bodies(path, rows, cols):
    with open(path, "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(B.fmt(v) for v in r) + "\n")


def chute_yaml(path, out, base_csv, flow_csv, steps, thermo):
    txt = open(os.path.join(HERE, "chute.yaml.in")).read()
    rep = dict(LX=B.fmt(LX), LY=B.fmt(LY), LZ=B.fmt(LZ), GX=B.fmt(GX), GZ=B.fmt(GZ), RHO=B.fmt(B.RHO),
               MU=B.fmt(B.MU), KN=B.fmt(B.KN), KT=B.fmt(B.KT), GN=B.fmt(B.GN), GT=B.fmt(B.GT), R=B.fmt(B.R),
               BASE=base_csv, FLOW=flow_csv, SKIN=B.fmt(B.SKIN), DT=B.fmt(B.DT), STEPS=str(steps), OUT=out,
               THERMO=str(thermo))
    for k, v in rep.items():
        txt = txt.replace("@%s@" % k, v)
    with open(path, "w") as f:
        f.write(txt)


def read_final(path, nbase):
    """flowing bodies of bodies_final.csv: (x, y, z, vx, vy, vz, wx, wy, wz) in id order"""
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if int(r["id"]) >= nbase:
                rows.append((int(r["id"]), tuple(float(r[c]) for c in ("x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"))))
    return [v for _, v in sorted(rows)]


def develop(mmdem):
    """the developed flow (cached): (base points, flow rows)"""
    key = dict(v=VERSION, R=B.R, RHO=B.RHO, KN=B.KN, KT=B.KT, GN=B.GN, GT=B.GT, MU=B.MU, G=B.G, A=ANGLE,
               NB=NBASE_SIDE, N=NTOTAL, S=FLOW_SPACING, Z0=Z0, LZ=LZ, SKIN=B.SKIN, DT=B.DT, W=DEVELOP)
    h = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    d = os.path.join(CACHE, "flow-%s" % h)
    base, flow = initial_state()
    done = os.path.join(d, "flow.csv")
    if not os.path.exists(done):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        write_bodies(os.path.join(d, "base.csv"), base, ("x", "y", "z"))
        write_bodies(os.path.join(d, "flow0.csv"), flow, ("x", "y", "z"))
        chute_yaml(os.path.join(d, "chute.yaml"), os.path.join(d, "out"), "base.csv", "flow0.csv", DEVELOP, 5000)
        log("chute: developing the flow (%d steps of %d bodies, once; cached) ..." % (DEVELOP, NTOTAL))
        t0 = time.time()
        rc, _, _, _ = B.run_timed([mmdem, "run", "chute.yaml", "--quiet"], d, os.path.join(d, "run.log"))
        if rc != 0:
            sys.exit("chute: mmdem failed developing the flow:\n" + B.tail(os.path.join(d, "run.log")))
        rows = read_final(os.path.join(d, "out", "bodies_final.csv"), len(base))
        write_bodies(done + ".tmp", rows, ("x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"))
        os.rename(done + ".tmp", done)
        log("chute: developed in %.0f s" % (time.time() - t0))
    rows = []
    with open(done) as f:
        for r in csv.DictReader(f):
            rows.append(tuple(float(r[c]) for c in ("x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz")))
    return base, rows, d


def run_mmdem(mmdem, d, steps):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    out = os.path.join(d, "out")
    shutil.rmtree(out, ignore_errors=True)
    chute_yaml(os.path.join(d, "chute.yaml"), out, "base.csv", "flow.csv", steps, THERMO)
    thermo = os.path.join(out, "thermo.csv")

    rc, rss, cpu, seen = B.run_timed([mmdem, "run", "chute.yaml", "--quiet"], d, os.path.join(d, "run.log"), env,
                                     marks=(("start", B.thermo_row_seen(thermo, 0)), ("end", B.thermo_row_seen(thermo, steps))))
    if rc != 0:
        log("  mmdem failed (exit %d):\n%s" % (rc, B.tail(os.path.join(d, "run.log"))))
        return None
    th = {int(r["step"]): r for r in B.parse_thermo(thermo)}
    fl = read_final(os.path.join(out, "bodies_final.csv"), NBASE_SIDE ** 2)
    n = len(fl)
    return dict(loop=float(th[steps]["wall_s"]) - float(th[0]["wall_s"]),
                loop_cpu=seen["end"] - seen["start"] if "start" in seen and "end" in seen else None, rss=rss, cpu=cpu,
                vx=sum(r[3] for r in fl) / n, z=sum(r[2] for r in fl) / n, contacts=int(th[steps]["contacts"]))


def run_lammps(lmp, d, base, flow, steps):
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ld = os.path.join(d, "lammps")
    shutil.rmtree(ld, ignore_errors=True)
    os.makedirs(ld)
    with open(os.path.join(ld, "chute.data"), "w") as f:
        f.write("chute benchmark, %d spheres\n\n%d atoms\n1 atom types\n\n" % (len(base) + len(flow), len(base) + len(flow)))
        f.write("0 %s xlo xhi\n0 %s ylo yhi\n0 %s zlo zhi\n\nAtoms # sphere\n\n" % (B.fmt(LX), B.fmt(LY), B.fmt(LZ)))
        for n, p in enumerate(base):
            f.write("%d 1 %s %s %s %s %s\n" % (n + 1, B.fmt(B.D), B.fmt(B.RHO), B.fmt(p[0]), B.fmt(p[1]), B.fmt(p[2])))
        for n, r in enumerate(flow):
            f.write("%d 1 %s %s %s %s %s\n" % (len(base) + n + 1, B.fmt(B.D), B.fmt(B.RHO), B.fmt(B.wrap(r[0], LX)),
                                              B.fmt(B.wrap(r[1], LY)), B.fmt(r[2])))
        f.write("\nVelocities\n\n")
        for n in range(len(base)):
            f.write("%d 0 0 0 0 0 0\n" % (n + 1))
        for n, r in enumerate(flow):
            f.write("%d %s\n" % (len(base) + n + 1, " ".join(B.fmt(v) for v in r[3:9])))
    var = dict(data="chute.data", nbase=len(base), kn=B.KN, kt=B.KT, gn=B.GN, gt=B.GT, mu=B.MU, g=B.G, angle=ANGLE,
               skin=B.SKIN, dt=B.DT, steps=steps, thermo=THERMO)
    cmd = [lmp, "-in", os.path.join(HERE, "in.chute.lmp"), "-log", "log.lammps", "-screen", "none", "-nocite"]
    for k, v in var.items():
        cmd += ["-var", k, B.fmt(v) if isinstance(v, float) else str(v)]
    rc, rss, cpu, _ = B.run_timed(cmd, ld, os.path.join(ld, "run.out"), env)
    txt = open(os.path.join(ld, "log.lammps")).read() if os.path.exists(os.path.join(ld, "log.lammps")) else ""
    import re
    loops = re.findall(r"Loop time of ([0-9.eE+-]+) on 1 procs for (\d+) steps", txt)
    if rc != 0 or not loops or int(loops[-1][1]) != steps:
        log("  LAMMPS failed (exit %d):\n%s" % (rc, "\n".join(txt.splitlines()[-15:])))
        return None
    pct = re.findall(r"([0-9.]+)% CPU use with 1 MPI tasks", txt)
    pts = []
    lines = open(os.path.join(ld, "final.dump")).read().splitlines()
    k = lines.index("ITEM: ATOMS id x y z vx")
    for ln in lines[k + 1:]:
        v = ln.split()
        pts.append((float(v[3]), float(v[4])))
    return dict(loop=float(loops[-1][0]), loop_cpu=float(loops[-1][0]) * float(pct[-1]) / 100 if pct else None,
                rss=rss, cpu=cpu, vx=sum(p[1] for p in pts) / len(pts), z=sum(p[0] for p in pts) / len(pts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mmdem", default=os.path.join(ROOT, "build", "mmdem"))
    ap.add_argument("--lmp", default=shutil.which("lmp") or "")
    ap.add_argument("--no-lammps", action="store_true")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "1")))
    ap.add_argument("--steps", type=int, default=2000, help="timed steps (default 2000)")
    args = ap.parse_args()
    mmdem = os.path.abspath(args.mmdem)
    if not os.access(mmdem, os.X_OK):
        sys.exit("chute: %s not found; run make first" % mmdem)
    lmp = None if args.no_lammps or not args.lmp else args.lmp
    os.makedirs(CACHE, exist_ok=True)
    log("chute benchmark: %d spheres (%d fixed base), d = %g m, chute %g degrees, kn = %g N/m, gamma_n = %g 1/s, "
        "mu = %g, dt = %.6g s, skin %g m, box %.4g x %.4g m periodic x y" % (NTOTAL, NBASE_SIDE ** 2, B.D, ANGLE, B.KN,
                                                                          B.GN, B.MU, B.DT, B.SKIN, LX, LY))
    load = os.getloadavg()[0]
    if load > 0.5:
        log("  note: load average %.2f before starting; timings are noisy" % load)
    base, flow, d = develop(mmdem)
    n = len(base) + len(flow)
    runs_m, runs_l = [], []
    for rep in range(max(1, args.repeat)):
        m = run_mmdem(mmdem, d, args.steps)
        l = run_lammps(lmp, d, base, flow, args.steps) if lmp else None
        runs_m += [m] if m else []
        runs_l += [l] if l else []
        log("  run %d: loop wall / CPU s: mmdem %s%s" % (rep + 1, "%.3f / %s" % (m["loop"], B.e(m["loop_cpu"], "%.2f")) if m else "failed",
                                                        (", LAMMPS %s" % ("%.3f / %s" % (l["loop"], B.e(l["loop_cpu"], "%.2f")) if l else "failed")) if lmp else ""))
    m, l = B.fastest(runs_m), B.fastest(runs_l)
    rate = lambda r, k="loop": n * args.steps / r[k] if r and r.get(k) else None  # noqa: E731
    rm, rl = rate(m), rate(l)
    log("chute: %d bodies, %d steps: mmdem %s p-st/s, LAMMPS %s p-st/s, ratio %s (CPU %s); memory mmdem %s, LAMMPS %s B/p"
        % (n, args.steps, B.e(rm), B.e(rl), B.e(rm / rl if rm and rl else None, "%.2f"),
           B.e(rate(m, "loop_cpu") / rate(l, "loop_cpu") if m and l and m.get("loop_cpu") and l.get("loop_cpu") else None, "%.2f"),
           B.e(m["rss"] / n if m and m["rss"] else None, "%.0f"), B.e(l["rss"] / n if l and l["rss"] else None, "%.0f")))
    if m and l:
        ok = abs(m["vx"] - l["vx"]) <= 0.01 * abs(l["vx"]) and abs(m["z"] - l["z"]) <= 0.005 * l["z"]
        log("same workload? flowing bodies at the end: mean vx %.5g vs %.5g m/s, mean z %.5g vs %.5g mm: %s "
            "(within 1 %% and 0.5 %%); mmdem contacts %d (%.2f per body)"
            % (m["vx"], l["vx"], 1e3 * m["z"], 1e3 * l["z"], "agree" if ok else "DIFFER", m["contacts"], m["contacts"] / n))
        log("target (issue: performance): mmdem/LAMMPS >= 2: %s" % ("met" if rm / rl >= 2 else "NOT met"))
    json.dump(dict(date=time.strftime("%Y-%m-%d %H:%M:%S"), n=n, steps=args.steps, mmdem=m, lammps=l,
                   mmdem_rate=rm, lammps_rate=rl), open(os.path.join(CACHE, "results.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
