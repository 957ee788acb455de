#!/usr/bin/python3
"""mpi_bench.py - the settle benchmark on 2 MPI ranks (issue 9): parallel efficiency of mmdem
and particle-steps per second against LAMMPS on 2 ranks, on the same workload.

The workload is bench.py's (same physics, the same cached packed bed, tiled 2 x 4 for 64000
bodies, periodic x and y, floor, Hooke with tangential history, dt = tc/50, skin 0.2 d; see
README.md); this script imports bench.py and only changes how the programs are started:
  mmdem  1 rank:   mmdem run settle.yaml
  mmdem  2 ranks:  mpirun -n 2 mmdem run settle.yaml        (default grid 2 x 1 x 1)
  LAMMPS 2 ranks:  mpirun -n 2 lmp -in in.settle.lmp        (processors * * 1)
Printed: loop wall time, particle-steps/s, speedup = T(1) / T(2), parallel efficiency =
speedup / 2 (goal >= 0.85), and the ratio mmdem / LAMMPS of particle-steps/s on 2 ranks (goal
>= 1). Also CPU-based figures: the CPU seconds of the time loop summed over the ranks (read
from /proc at the thermo rows of the first and last timed step; LAMMPS: Loop time x %CPU x
ranks), whose ratio "work efficiency" = CPU(1 rank) / CPU(2 ranks) is what the parallel
version costs in extra work; on a machine where other processes compete for the 2 cores, the
wall-clock figures measure the load more than the code: trust the CPU ones then.

--balance-by-time adds a fifth way, mmdem on 2 ranks with `mpi: {balance_by: time}` (the cut
plane moved to equalise the ranks' measured work, decomp.c), run right after the default 2-rank
run in every round, and prints its efficiency beside the default's. --timers runs mmdem's 2-rank
runs with MMDEM_MPI_TIMERS=1 and prints each rank's phase times (decomp.c: the force kernel's
time per pair, the waits for the other rank) after each such run.

Usage: mpi_bench.py [--case bed-64k|bed-8k|lattice-64k] [--mmdem PATH] [--no-lammps] [--repeat N]
                    [--balance-by-time] [--timers]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import bench as B  # noqa: E402

MPIENV = dict(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
              OMPI_MCA_rmaps_base_oversubscribe="1")


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = [int(k) for k in open("/proc/%d/task/%d/children" % (p, p)).read().split()]
        except (OSError, ValueError):
            kids = []
        out += kids
        todo += kids
    return out


def comm_of(pid):
    try:
        return open("/proc/%d/comm" % pid).read().strip()
    except OSError:
        return ""


def run_ranks(cmd, cwd, log, env, prog, marks=()):
    """cmd (with mpirun when ranks > 1), output to log; at each mark the CPU seconds summed over
    the processes named prog below it. Returns (rc, {mark: cpu})"""
    seen = {}
    with open(log, "w") as fo:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=fo, stderr=subprocess.STDOUT, env=env)
        while p.poll() is None:
            for name, pred in marks:
                if name not in seen and pred():
                    pids = [q for q in [p.pid] + descendants(p.pid) if comm_of(q) == prog]
                    cpu = [B.proc_cpu(q) for q in pids]
                    if pids and None not in cpu:
                        seen[name] = sum(cpu)
            time.sleep(0.01)
    return p.returncode, seen


def run_mmdem(mmdem, case_dir, ranks, src, lx, ly, lz, steps, mpi="", timers=False):
    d = os.path.join(case_dir, "mmdem-%dr%s" % (ranks, "-" + mpi.split(":")[-1].strip(" }") if mpi else ""))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    B.mmdem_yaml(os.path.join(d, "settle.yaml"), os.path.join(d, "out"), lx, ly, lz, "file: " + src, steps)
    if mpi:  # e.g. mpi: {balance_by: time}
        with open(os.path.join(d, "settle.yaml"), "a") as f:
            f.write(mpi + "\n")
    thermo = os.path.join(d, "out", "thermo.csv")

    cmd = [mmdem, "run", "settle.yaml", "--quiet"]
    if ranks > 1:
        cmd = ["mpirun", "--allow-run-as-root", "-n", str(ranks)] + cmd
    env = dict(os.environ, **MPIENV)
    if timers and ranks > 1:
        env.update(MMDEM_MPI_TIMERS="1", MMDEM_DECOMP_VERBOSE="1")
    rc, seen = run_ranks(cmd, d, os.path.join(d, "run.log"), env, "mmdem",
                         marks=(("start", B.thermo_row_seen(thermo, 0)), ("end", B.thermo_row_seen(thermo, steps))))
    if rc != 0:
        B.log("  mmdem on %d ranks failed (exit %d):\n%s" % (ranks, rc, B.tail(os.path.join(d, "run.log"))))
        return None
    th = {int(r["step"]): r for r in B.parse_thermo(thermo)}
    if timers and ranks > 1:  # each rank's total, kernel, waits; the rebalances
        for l in open(os.path.join(d, "run.log")):
            if re.search(r"mpi timers: rank \d: ([0-9.]+ s from|kernel|fwd_wait|rev_wait|other|waits per)|rebalanced|rebalances by time", l):
                B.log("      " + l.rstrip())
    return dict(loop=float(th[steps]["wall_s"]) - float(th[0]["wall_s"]),
                loop_cpu=seen["end"] - seen["start"] if "start" in seen and "end" in seen else None,
                contacts=int(th[steps]["contacts"]), ke=float(th[steps]["ke_trans"]))


def run_lammps(lmp, case_dir, ranks, pts, lx, ly, lz, steps):
    d = os.path.join(case_dir, "lammps-%dr" % ranks)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    B.write_lammps_data(os.path.join(d, "bodies.data"), pts, lx, ly, lz, "settle benchmark, %d spheres" % len(pts))
    var = dict(data="bodies.data", model="hooke", kn=B.KN, kt=B.KT, gn=B.GN, gt=B.GT, mu=B.MU, g=B.G, skin=B.SKIN, dt=B.DT, ramp=0,
               hold=0, steps=steps, thermo=B.THERMO)
    cmd = [lmp, "-in", os.path.join(HERE, "in.settle.lmp"), "-log", "log.lammps", "-screen", "none", "-nocite"]
    for k, v in var.items():
        cmd += ["-var", k, B.fmt(v) if isinstance(v, float) else str(v)]
    if ranks > 1:
        cmd = ["mpirun", "--allow-run-as-root", "-n", str(ranks)] + cmd
    rc, _ = run_ranks(cmd, d, os.path.join(d, "run.out"), dict(os.environ, **MPIENV), "lmp")
    txt = open(os.path.join(d, "log.lammps")).read() if os.path.exists(os.path.join(d, "log.lammps")) else ""
    loops = re.findall(r"Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps", txt)
    if rc != 0 or not loops or int(loops[-1][2]) != steps:
        B.log("  LAMMPS on %d ranks failed (exit %d):\n%s" % (rc, ranks, "\n".join(txt.splitlines()[-15:])))
        return None
    pct = re.findall(r"([0-9.]+)% CPU use with (\d+) MPI tasks", txt)
    loop = float(loops[-1][0])
    return dict(loop=loop, loop_cpu=loop * float(pct[-1][0]) / 100 * ranks if pct else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", default="bed-64k", choices=["bed-64k", "bed-8k", "lattice-64k"])
    ap.add_argument("--mmdem", default=os.path.join(B.ROOT, "build", "mmdem"))
    ap.add_argument("--lmp", default=shutil.which("lmp") or "")
    ap.add_argument("--no-lammps", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--balance-by-time", action="store_true", help="also mmdem on 2 ranks with mpi: {balance_by: time}")
    ap.add_argument("--timers", action="store_true", help="MMDEM_MPI_TIMERS=1 on mmdem's 2-rank runs, phase times printed")
    args = ap.parse_args()
    mmdem = os.path.abspath(args.mmdem)
    lmp = None if args.no_lammps or not args.lmp else args.lmp
    cfg = B.FULL
    name, kind, tiles, steps = [c for c in cfg["cases"] if c[0] == args.case][0]
    nx, ny, nz = cfg["base"]
    lx, ly = tiles[0] * nx * B.SPACING, tiles[1] * ny * B.SPACING
    case_dir = os.path.join(B.CACHE, "runs-mpi", name)
    os.makedirs(case_dir, exist_ok=True)
    if kind == "bed":
        bed_dir, raw, info = B.make_bed(cfg, mmdem)
        mode, bed_csv, reason = B.bed_mode(bed_dir, raw, info, mmdem, False)
        if mode != "raw":
            sys.exit("mpi_bench: the bed needs the gravity-ramp warm-up (%s): loads do not run on several ranks yet" % reason)
        pts = B.tile(B.read_xyz(bed_csv), cfg["base"], tiles)
        lz = (nz + 2) * B.SPACING
    else:
        pts = B.lattice_points(tiles[0] * nx, tiles[1] * ny, nz, B.LATTICE_Z0)
        lz = B.LATTICE_Z0 + (nz + 2) * B.SPACING
    src = os.path.join(case_dir, "bodies.csv")
    B.write_csv(src, pts)
    n = len(pts)
    B.log("mpi settle benchmark %s: %d bodies, %d timed steps, mmdem %s, LAMMPS %s; load average %.2f" % (
        name, n, steps, mmdem, lmp or "-", os.getloadavg()[0]))
    res = {}
    for rep in range(max(1, args.repeat)):
        for key, fn in (("m1", lambda: run_mmdem(mmdem, case_dir, 1, src, lx, ly, lz, steps)),
                        ("m2", lambda: run_mmdem(mmdem, case_dir, 2, src, lx, ly, lz, steps, timers=args.timers)),
                        ("m2t", lambda: run_mmdem(mmdem, case_dir, 2, src, lx, ly, lz, steps, "mpi: {balance_by: time}", args.timers) if args.balance_by_time else None),
                        ("l2", lambda: run_lammps(lmp, case_dir, 2, pts, lx, ly, lz, steps) if lmp else None),
                        ("l1", lambda: run_lammps(lmp, case_dir, 1, pts, lx, ly, lz, steps) if lmp else None)):
            r = fn()
            if key == "m2t" and not args.balance_by_time:
                continue
            B.log("  run %d %s: %s" % (rep + 1, key, "loop %.3f s wall, %s s CPU" % (r["loop"], B.e(r["loop_cpu"], "%.2f")) if r else "-"))
            if r and (key not in res or r["loop"] < res[key]["loop"]):
                res[key] = r
    rate = lambda k: n * steps / res[k]["loop"] if k in res else None
    ratec = lambda k: n * steps / res[k]["loop_cpu"] if k in res and res[k]["loop_cpu"] else None
    B.log("")
    B.log("%-22s %12s %12s %14s %14s" % ("", "loop wall s", "loop CPU s", "p-steps/s", "p-steps/CPU-s"))
    for k, label in (("m1", "mmdem 1 rank"), ("m2", "mmdem 2 ranks"), ("m2t", "mmdem 2 r, by time"), ("l1", "LAMMPS 1 rank"), ("l2", "LAMMPS 2 ranks")):
        if k in res:
            B.log("%-22s %12.3f %12s %14s %14s" % (label, res[k]["loop"], B.e(res[k]["loop_cpu"], "%.2f"), B.e(rate(k)), B.e(ratec(k))))
    if "m1" in res and "m2" in res:
        sp = res["m1"]["loop"] / res["m2"]["loop"]
        B.log("mmdem speedup 1 -> 2 ranks %.3f, parallel efficiency %.3f (goal >= 0.85)" % (sp, sp / 2))
        if res["m1"]["loop_cpu"] and res["m2"]["loop_cpu"]:
            B.log("mmdem work efficiency CPU(1 rank) / CPU(2 ranks) = %.3f" % (res["m1"]["loop_cpu"] / res["m2"]["loop_cpu"]))
        B.log("contacts at the end: 1 rank %d, 2 ranks %d" % (res["m1"]["contacts"], res["m2"]["contacts"]))
    if "m1" in res and "m2t" in res:
        sp = res["m1"]["loop"] / res["m2t"]["loop"]
        B.log("mmdem balance_by time: speedup %.3f, parallel efficiency %.3f; work efficiency %s; contacts at the end %d" % (
            sp, sp / 2, B.e(res["m1"]["loop_cpu"] / res["m2t"]["loop_cpu"] if res["m1"]["loop_cpu"] and res["m2t"]["loop_cpu"] else None, "%.3f"), res["m2t"]["contacts"]))
    if "l1" in res and "l2" in res:
        sp = res["l1"]["loop"] / res["l2"]["loop"]
        B.log("LAMMPS speedup 1 -> 2 ranks %.3f, parallel efficiency %.3f" % (sp, sp / 2))
    if "m2" in res and "l2" in res:
        B.log("ratio mmdem / LAMMPS on 2 ranks, particle-steps/s: wall %.3f, CPU %s (goal >= 1)" % (
            rate("m2") / rate("l2"), B.e(ratec("m2") / ratec("l2") if ratec("m2") and ratec("l2") else None, "%.3f")))
    if "m2t" in res and "l2" in res:
        B.log("ratio mmdem (balance_by time) / LAMMPS on 2 ranks, particle-steps/s: wall %.3f, CPU %s" % (
            rate("m2t") / rate("l2"), B.e(ratec("m2t") / ratec("l2") if ratec("m2t") and ratec("l2") else None, "%.3f")))


if __name__ == "__main__":
    main()
