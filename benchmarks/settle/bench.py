#!/usr/bin/env python3
"""
benchmarks/settle/bench.py - the settle benchmark of `make bench` (benchmarks/run.sh).

N equal spheres fall onto a frictional floor, periodic in x and y: Hookean contacts with a
tangential history spring (mmdem `hooke`, LAMMPS gran/hooke/history + fix wall/gran
hooke/history + fix nve/sphere), friction 0.5, dt = tc/50. Four cases:

  lattice-8k   8000 bodies (20 x 20 x 20) falling from a lattice, 4000 steps
  lattice-64k  64000 bodies (40 x 80 x 20) falling from a lattice, 500 steps
  bed-8k       the same 8000 bodies settled into a packed bed (contact-bound), 4000 steps
  bed-64k      that bed tiled 2 x 4 across the periodic box (64000 bodies), 500 steps

Each case runs in mmdem and, where `lmp` is installed, in LAMMPS with the same physics,
dt, skin, steps and neighbour policy (rebuild when a body moved more than skin/2). Printed:
particle-steps per second of the time loop (mmdem: wall_s of thermo.csv between the first and
the last timed step; LAMMPS: "Loop time" of the timed run), the ratio mmdem/LAMMPS, peak
resident memory (/usr/bin/time -v) per particle, contacts per particle, and a check that the
two codes agree physically at the end of the timed steps.

The packed bed is made once by mmdem (a jittered lattice with small random velocities settles
for 28000 steps) and cached under benchmarks/settle/cache/ with a key of every parameter; both
codes load its final positions (bodies_final.csv; LAMMPS: a read_data file) with zero
velocities and time it at once. A bed at rest under gravity overlaps at every contact (here by
up to ~2 % of the radius); mmdem accepts initial overlaps up to 5 % of the smaller radius
(docs/input.md). Should `mmdem check` refuse the bed, both codes load it in a just-touching form
instead (deoverlap.c moves bodies apart, ~2 % of a diameter on average) and ramp gravity from
0 to g over RAMP steps, hold HOLD steps, then time: the bed is loaded quasi-statically and is
again at rest and contact-bound when the clock starts.

Usage: bench.py [--quick] [--repeat N] [--cases a,b] [--mmdem PATH] [--no-lammps] [--touching] [--law hooke|hertz]
"""
import argparse
import csv
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(HERE, "cache")
VERSION = 1  # bump when the bed recipe changes

# ---- physics, SI; both codes get exactly these numbers ----
R = 1.0e-3                      # radius [m]
D = 2 * R
RHO = 2500.0                    # density [kg/m^3]
KN = 400.0                      # normal stiffness [N/m]
KT = 2.0 / 7.0 * KN             # tangential stiffness [N/m]
GN = 2800.0                     # normal damping [1/s]: F = kn delta - m_eff gamma_n v_n
GT = GN / 2                     # tangential damping [1/s]
MU = 0.5                        # friction
G = 9.81                        # gravity [m/s^2], along -z
SPACING = 1.1 * D               # lattice spacing; the periodic box is a whole number of them
SKIN = 0.2 * D                  # neighbour skin [m]
MASS = RHO * 4.0 / 3.0 * math.pi * R ** 3
MEFF = 0.5 * MASS               # particle-particle effective mass
TC = math.pi / math.sqrt(KN / MEFF - (0.5 * GN) ** 2)
# --law hertz: mmdem `hertz` / LAMMPS gran/hertz/history, every spring and dashpot scaled by
# sqrt(delta r_eff); its kn, kt [N/m^2] and gamma_n, gamma_t [1/(s m)] chosen so that a
# particle pair at an overlap of 1 % of the radius has hooke's stiffness and damping (the
# bed's overlaps are 0.5-2 % of the radius): the same dt = tc/50 of the hooke law
HZ_SCALE = 1.0 / math.sqrt(0.5 * R * 0.01 * R)
LAWS = dict(hooke=dict(name="hooke", kn=KN, kt=KT, gn=GN, gt=GT, lmp="hooke"),
            hertz=dict(name="hertz", kn=KN * HZ_SCALE, kt=KT * HZ_SCALE, gn=GN * HZ_SCALE, gt=GT * HZ_SCALE,
                       lmp="hertz"))
LAW = LAWS["hooke"]             # the timed runs' law (main: --law); the bed is always made with hooke
DT = TC / 50
LATTICE_Z0 = 6 * D              # lowest lattice layer of the falling cases: no floor contact
                                # within the timed steps
THERMO = 500

FULL = dict(base=(20, 20, 20), settle_steps=28000, ramp=2000, hold=500,
            cases=[("lattice-8k", "lattice", (1, 1), 4000), ("lattice-64k", "lattice", (2, 4), 500),
                   ("bed-8k", "bed", (1, 1), 4000), ("bed-64k", "bed", (2, 4), 500)])
QUICK = dict(base=(10, 10, 10), settle_steps=8000, ramp=1000, hold=500,
             cases=[("lattice-1k", "lattice", (1, 1), 500), ("lattice-8k", "lattice", (2, 4), 100),
                    ("bed-1k", "bed", (1, 1), 500), ("bed-8k", "bed", (2, 4), 100)])


def log(msg):
    print(msg, flush=True)


def fmt(v):
    return "%.17g" % v


# ------------------------------------------------------------------ running programs

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """user+sys CPU seconds of a running process (10 ms ticks), or None"""
    try:
        fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def child_pid(pid):
    try:
        kids = open("/proc/%d/task/%d/children" % (pid, pid)).read().split()
        return int(kids[0]) if kids else None
    except (OSError, ValueError):
        return None


def run_timed(cmd, cwd, out_path, env=None, marks=()):
    """runs cmd, stdout+stderr to out_path; returns (returncode, peak RSS in bytes or None,
    CPU seconds user+sys of the whole process or None, {mark: CPU seconds when it was seen}).
    marks: (name, predicate) pairs polled every 10 ms while the program runs; the CPU time of
    the program is recorded when a predicate first holds"""
    tfile = out_path + ".time"
    wrapped = os.access("/usr/bin/time", os.X_OK)
    full = (["/usr/bin/time", "-v", "-o", tfile] + cmd) if wrapped else cmd
    seen = {}
    with open(out_path, "w") as fo:
        p = subprocess.Popen(full, cwd=cwd, stdout=fo, stderr=subprocess.STDOUT, env=env)
        prog = None
        while p.poll() is None:
            if prog is None:
                prog = child_pid(p.pid) if wrapped else p.pid
            for name, pred in marks:
                if name not in seen and prog and pred():
                    c = proc_cpu(prog)
                    if c is not None:
                        seen[name] = c
            time.sleep(0.01)
        rc = p.returncode
    rss = cpu = None
    if os.path.exists(tfile):
        txt = open(tfile).read()
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", txt)
        if m:
            rss = int(m.group(1)) * 1024
        u, s = re.search(r"User time \(seconds\): ([0-9.]+)", txt), re.search(r"System time \(seconds\): ([0-9.]+)", txt)
        if u and s:
            cpu = float(u.group(1)) + float(s.group(1))
    return rc, rss, cpu, seen


def thermo_row_seen(thermo, step):
    """a mark predicate for run_timed: the thermo.csv at `thermo` has the row of `step`"""
    def pred():
        try:
            return any(ln.startswith("%d," % step) for ln in open(thermo))
        except OSError:
            return False
    return pred


def tail(path, n=15):
    try:
        return "".join(open(path).readlines()[-n:])
    except OSError:
        return ""


# ------------------------------------------------------------------ geometry

def lattice_points(nx, ny, nz, z0):
    """the points of mmdem's lattice source: lo + (i, j, k) spacing, x fastest, then y, then z"""
    lo = (0.5 * SPACING, 0.5 * SPACING, z0)
    return [(lo[0] + i * SPACING, lo[1] + j * SPACING, lo[2] + k * SPACING)
            for k in range(nz) for j in range(ny) for i in range(nx)]


def write_csv(path, pts, vel=None):
    with open(path, "w") as f:
        f.write("x,y,z,vx,vy,vz\n" if vel else "x,y,z\n")
        for n, p in enumerate(pts):
            if vel:
                f.write("%s,%s,%s,%s,%s,%s\n" % tuple(fmt(c) for c in (p + vel[n])))
            else:
                f.write("%s,%s,%s\n" % tuple(fmt(c) for c in p))


def read_xyz(path):
    with open(path) as f:
        rd = csv.DictReader(f)
        return [(float(r["x"]), float(r["y"]), float(r["z"])) for r in rd]


def wrap(v, L):
    v = math.fmod(v, L)
    if v < 0:
        v += L
    return 0.0 if v >= L else v


def tile(pts, base, tiles):
    """copies of a bed periodic in (Lx, Ly) side by side; ordered like a lattice (layer of the
    original, then global row, then global column) so that memory order stays spatial"""
    nx, ny, _ = base
    Lx, Ly = nx * SPACING, ny * SPACING
    tx, ty = tiles
    out = []
    for idx, p in enumerate(pts):
        k, j, i = idx // (nx * ny), (idx // nx) % ny, idx % nx
        for a in range(tx):
            for b in range(ty):
                key = (k, b * ny + j, a * nx + i)
                out.append((key, (wrap(p[0], Lx) + a * Lx, wrap(p[1], Ly) + b * Ly, p[2])))
    out.sort(key=lambda e: e[0])
    return [p for _, p in out]


def write_lammps_data(path, pts, lx, ly, lz, title):
    with open(path, "w") as f:
        f.write("%s\n\n%d atoms\n1 atom types\n\n" % (title, len(pts)))
        f.write("0 %s xlo xhi\n0 %s ylo yhi\n0 %s zlo zhi\n\nAtoms # sphere\n\n" % (fmt(lx), fmt(ly), fmt(lz)))
        for n, p in enumerate(pts):
            f.write("%d 1 %s %s %s %s %s\n" % (n + 1, fmt(D), fmt(RHO), fmt(wrap(p[0], lx)), fmt(wrap(p[1], ly)), fmt(p[2])))


def mmdem_yaml(path, out, lx, ly, lz, source, steps, gz=-G, loads="", law=LAWS["hooke"]):
    txt = open(os.path.join(HERE, "settle.yaml.in")).read()
    rep = dict(LX=fmt(lx), LY=fmt(ly), LZ=fmt(lz), GZ=fmt(gz), RHO=fmt(RHO), MU=fmt(MU), LAW=law["name"],
               KN=fmt(law["kn"]), KT=fmt(law["kt"]), GN=fmt(law["gn"]), GT=fmt(law["gt"]), R=fmt(R), SOURCE=source, LOADS=loads, SKIN=fmt(SKIN), DT=fmt(DT),
               STEPS=str(steps), OUT=out, THERMO=str(THERMO))
    for k, v in rep.items():
        txt = txt.replace("@%s@" % k, v)
    assert not re.search(r"@[A-Z]+@", txt), "unfilled field in settle.yaml.in"
    with open(path, "w") as f:
        f.write(txt)


def gravity_ramp_loads(n, ramp_steps):
    """mmdem: gravity as a load on every body, ramped from 0 to m g over ramp_steps"""
    return ("loads:\n  - {bodies: [%s], force: [0, 0, %s], ramp: [0, %s]}"
            % (", ".join(str(i) for i in range(n)), fmt(-MASS * G), fmt(ramp_steps * DT)))


def count_contacts(pts, lx, ly):
    return contacts_and_depth(pts, lx, ly)[0]


def contacts_and_depth(pts, lx, ly):
    """body-body pairs closer than d (periodic in x, y) plus bodies below z = r: the contacts
    with overlap, counted the same way for both codes from their final positions; and the
    deepest overlap"""
    deep = max([0.0] + [R - p[2] for p in pts])
    cells = {}
    nx, ny = max(3, int(lx / D)), max(3, int(ly / D))
    cx, cy = lx / nx, ly / ny
    for i, (x, y, z) in enumerate(pts):
        cells.setdefault((int(wrap(x, lx) / cx) % nx, int(wrap(y, ly) / cy) % ny, int(z / D)), []).append(i)
    pairs = 0
    d2 = D * D
    for (ix, iy, iz), lst in cells.items():
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dz in (-1, 0, 1):
                    other = cells.get(((ix + dx) % nx, (iy + dy) % ny, iz + dz))
                    if not other:
                        continue
                    for i in lst:
                        xi, yi, zi = pts[i]
                        for j in other:
                            if j <= i:
                                continue
                            xj, yj, zj = pts[j]
                            ex = xi - xj
                            ex -= lx * round(ex / lx)
                            ey = yi - yj
                            ey -= ly * round(ey / ly)
                            r2 = ex * ex + ey * ey + (zi - zj) ** 2
                            if r2 < d2:
                                pairs += 1
                                deep = max(deep, D - math.sqrt(r2))
    return pairs + sum(1 for p in pts if p[2] < R), deep


# ------------------------------------------------------------------ the packed bed

def cache_key(cfg):
    keys = dict(v=VERSION, R=R, RHO=RHO, KN=KN, KT=KT, GN=GN, GT=GT, MU=MU, G=G, S=SPACING, SKIN=SKIN,
                DT=DT, base=cfg["base"], settle=cfg["settle_steps"])
    return hashlib.sha1(json.dumps(keys, sort_keys=True).encode()).hexdigest()[:12]


def make_bed(cfg, mmdem):
    """settles a jittered lattice once; returns (dir, raw bed csv, info dict)"""
    nx, ny, nz = cfg["base"]
    Lx, Ly = nx * SPACING, ny * SPACING
    d = os.path.join(CACHE, "bed-%dx%dx%d-%s" % (nx, ny, nz, cache_key(cfg)))
    raw = os.path.join(d, "bed_raw.csv")
    info_path = os.path.join(d, "bed.json")
    if os.path.exists(raw) and os.path.exists(info_path):
        info = json.load(open(info_path))
        log("bed: cached %s (%s)" % (os.path.relpath(d, ROOT), info["summary"]))
        return d, raw, info
    os.makedirs(d, exist_ok=True)
    rnd = random.Random(20240611)
    pts, vel = [], []
    jit = 0.045 * D  # keeps neighbours >= 1.01 d apart
    for p in lattice_points(nx, ny, nz, R + 0.05 * D):
        pts.append(tuple(c + rnd.uniform(-jit, jit) for c in p))
        vel.append(tuple(rnd.uniform(-0.05, 0.05) for _ in range(3)))
    write_csv(os.path.join(d, "jittered.csv"), pts, vel)
    lz = (nz + 2) * SPACING
    mmdem_yaml(os.path.join(d, "settle.yaml"), os.path.join(d, "out"), Lx, Ly, lz, "file: jittered.csv",
               cfg["settle_steps"])
    log("bed: settling %d bodies for %d steps with mmdem (once; cached in %s) ..."
        % (len(pts), cfg["settle_steps"], os.path.relpath(d, ROOT)))
    t0 = time.time()
    rc, _, _, _ = run_timed([mmdem, "run", "settle.yaml", "--quiet"], d, os.path.join(d, "settle.log"))
    wall = time.time() - t0
    if rc != 0:
        sys.exit("bench: the settling run failed:\n" + tail(os.path.join(d, "settle.log")))
    last = list(csv.DictReader(open(os.path.join(d, "out", "thermo.csv"))))[-1]
    bed = [(wrap(x, Lx), wrap(y, Ly), z) for x, y, z in read_xyz(os.path.join(d, "out", "bodies_final.csv"))]
    write_csv(raw, bed)
    nc, deep = contacts_and_depth(bed, Lx, Ly)
    info = dict(n=len(bed), Lx=Lx, Ly=Ly, steps=cfg["settle_steps"], wall=wall,
                ke=float(last["ke_trans"]) + float(last["ke_rot"]), contacts=nc, deepest=deep,
                zmax=max(p[2] for p in bed))
    info["summary"] = ("%d bodies settled for %d steps in %.0f s, final kinetic energy %.2g J, %.2f contacts "
                       "per body, deepest overlap %.1f %% of r, top at %.1f mm"
                       % (info["n"], info["steps"], wall, info["ke"], info["contacts"] / info["n"],
                          100 * deep / R, 1e3 * info["zmax"]))
    json.dump(info, open(info_path, "w"), indent=1)
    log("bed: " + info["summary"])
    return d, raw, info


def bed_mode(bed_dir, raw, info, mmdem, force_touching=False):
    """'raw' if mmdem accepts the overlapping bed, else 'touching' (deoverlapped, gravity ramp)"""
    yml = os.path.join(bed_dir, "probe.yaml")
    mmdem_yaml(yml, os.path.join(bed_dir, "probe-out"), info["Lx"], info["Ly"], 0.1, "file: bed_raw.csv", 1)
    out = os.path.join(bed_dir, "probe.log")
    rc = subprocess.call([mmdem, "check", yml], cwd=bed_dir, stdout=open(out, "w"), stderr=subprocess.STDOUT)
    if rc == 0 and not force_touching:
        return "raw", raw, None
    reason = open(out).read().strip().splitlines() if rc else ["--touching"]
    reason = reason[-1] if reason else "(no message)"
    touch = os.path.join(bed_dir, "bed_touching.csv")
    if not os.path.exists(touch):
        exe = os.path.join(CACHE, "deoverlap")
        src = os.path.join(HERE, "deoverlap.c")
        if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
            cc = shutil.which("cc") or shutil.which("gcc") or "mpicc"
            if subprocess.call([cc, "-O2", "-o", exe, src, "-lm"]) != 0:
                sys.exit("bench: cannot compile %s" % src)
        res = subprocess.run([exe, raw, touch, fmt(info["Lx"]), fmt(info["Ly"]), fmt(D)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit("bench: deoverlap failed: " + res.stderr)
        open(os.path.join(bed_dir, "deoverlap.log"), "w").write(res.stdout)
    return "touching", touch, reason


# ------------------------------------------------------------------ one case in each code

def parse_thermo(path):
    return list(csv.DictReader(open(path)))


def run_mmdem(mmdem, case_dir, name, kind, pts_src, n, lx, ly, lz, steps, warm, ramp):
    d = os.path.join(case_dir, "mmdem")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    if kind == "lattice":
        nx, ny, nz = pts_src
        lo = (0.5 * SPACING, 0.5 * SPACING, LATTICE_Z0)
        hi = (lo[0] + (nx - 0.5) * SPACING, lo[1] + (ny - 0.5) * SPACING, lo[2] + (nz - 0.5) * SPACING)
        source = "lattice: {lo: [%s], hi: [%s], spacing: %s}" % (", ".join(fmt(c) for c in lo),
                                                                 ", ".join(fmt(c) for c in hi), fmt(SPACING))
    else:
        source = "file: " + pts_src
    loads, gz = "", -G
    if ramp > 0:
        loads, gz = gravity_ramp_loads(n, ramp), 0.0
    mmdem_yaml(os.path.join(d, "settle.yaml"), os.path.join(d, "out"), lx, ly, lz, source, warm + steps, gz, loads, LAW)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    thermo = os.path.join(d, "out", "thermo.csv")

    rc, rss, cpu, seen = run_timed([mmdem, "run", "settle.yaml", "--quiet"], d, os.path.join(d, "run.log"), env,
                                   marks=(("start", thermo_row_seen(thermo, warm)), ("end", thermo_row_seen(thermo, warm + steps))))
    if rc != 0:
        log("  mmdem failed (exit %d):\n%s" % (rc, tail(os.path.join(d, "run.log"))))
        return None
    th = {int(r["step"]): r for r in parse_thermo(os.path.join(d, "out", "thermo.csv"))}
    t0, t1 = float(th[warm]["wall_s"]), float(th[warm + steps]["wall_s"])
    last = th[warm + steps]
    walls = list(csv.DictReader(open(os.path.join(d, "out", "walls.csv"))))
    fz = abs(float(walls[-1]["fz"])) if walls else float("nan")
    z = read_xyz(os.path.join(d, "out", "bodies_final.csv"))
    loop_cpu = seen["end"] - seen["start"] if "start" in seen and "end" in seen else None
    return dict(loop=t1 - t0, loop_cpu=loop_cpu, rss=rss, cpu=cpu, ke=float(last["ke_trans"]), contacts=count_contacts(z, lx, ly),
                contacts_own=int(last["contacts"]), zmean=sum(p[2] for p in z) / len(z), floor_force=fz)


def run_lammps(lmp, case_dir, pts, lx, ly, lz, steps, ramp, hold):
    d = os.path.join(case_dir, "lammps")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    write_lammps_data(os.path.join(d, "bodies.data"), pts, lx, ly, lz, "settle benchmark, %d spheres" % len(pts))
    var = dict(data="bodies.data", model=LAW["lmp"], kn=LAW["kn"], kt=LAW["kt"], gn=LAW["gn"], gt=LAW["gt"], mu=MU, g=G,
               skin=SKIN, dt=DT, ramp=ramp,
               hold=hold, steps=steps, thermo=THERMO)
    cmd = [lmp, "-in", os.path.join(HERE, "in.settle.lmp"), "-log", "log.lammps", "-screen", "none", "-nocite"]
    for k, v in var.items():
        cmd += ["-var", k, fmt(v) if isinstance(v, float) else str(v)]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rc, rss, cpu, _ = run_timed(cmd, d, os.path.join(d, "run.out"), env)
    logtxt = open(os.path.join(d, "log.lammps")).read() if os.path.exists(os.path.join(d, "log.lammps")) else ""
    loops = re.findall(r"Loop time of ([0-9.eE+-]+) on 1 procs for (\d+) steps", logtxt)
    if rc != 0 or not loops or int(loops[-1][1]) != steps:
        log("  LAMMPS failed (exit %d):\n%s" % (rc, "\n".join(logtxt.splitlines()[-15:]) or tail(os.path.join(d, "run.out"))))
        return None
    # the thermo block of the last run: header line "Step Atoms KinEng ...", rows, "Loop time"
    block = logtxt.rsplit("\nStep ", 1)[1].split("Loop time")[0].splitlines()
    head = ("Step " + block[0]).split()
    row = dict(zip(head, [float(v) for v in block[-1].split()]))
    pts = []
    with open(os.path.join(d, "final.dump")) as f:
        lines = f.read().splitlines()
    k = lines.index("ITEM: ATOMS id x y z")
    for ln in lines[k + 1:]:
        v = ln.split()
        pts.append((int(v[0]), float(v[1]), float(v[2]), float(v[3])))
    pts = [p[1:] for p in sorted(pts)]
    pct = re.findall(r"([0-9.]+)% CPU use with 1 MPI tasks", logtxt)
    loop_cpu = float(loops[-1][0]) * float(pct[-1]) / 100 if pct else None
    return dict(loop=float(loops[-1][0]), loop_cpu=loop_cpu, rss=rss, cpu=cpu, ke=row["KinEng"], contacts=count_contacts(pts, lx, ly),
                zmean=row["v_zmean"], floor_force=row["c_floor[2]"])


# ------------------------------------------------------------------ main

def e(v, f="%.3g"):
    return f % v if v is not None else "-"


def fastest(runs):
    """the run with the shortest loop wall time, its loop CPU time replaced by the shortest one"""
    if not runs:
        return None
    best = dict(min(runs, key=lambda r: r["loop"]))
    cpus = [r["loop_cpu"] for r in runs if r["loop_cpu"]]
    best["loop_cpu"] = min(cpus) if cpus else None
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small cases (smoke test of the harness)")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "1")),
                    help="run each case N times and keep the fastest (default 1, env BENCH_REPEAT)")
    ap.add_argument("--cases", default="", help="comma-separated subset of the case names")
    ap.add_argument("--mmdem", default=os.path.join(ROOT, "build", "mmdem"))
    ap.add_argument("--lmp", default=shutil.which("lmp") or "")
    ap.add_argument("--no-lammps", action="store_true")
    ap.add_argument("--law", choices=sorted(LAWS), default="hooke",
                    help="contact law of the timed runs: hooke (gran/hooke/history) or hertz (gran/hertz/history); "
                         "hertz cases are named NAME-hertz")
    ap.add_argument("--touching", action="store_true",
                    help="load the bed just touching with a gravity ramp even if mmdem accepts it as it is")
    args = ap.parse_args()
    global LAW
    LAW = LAWS[args.law]
    sfx = "" if args.law == "hooke" else "-" + args.law
    cfg = QUICK if args.quick else FULL
    cfg = dict(cfg, cases=[(c[0] + sfx,) + tuple(c[1:]) for c in cfg["cases"]])
    runs_dir = "runs-quick" if args.quick else "runs"
    results_file = os.path.join(CACHE, ("results-quick%s.json" if args.quick else "results%s.json") % sfx)
    mmdem = os.path.abspath(args.mmdem)
    if not os.access(mmdem, os.X_OK):
        sys.exit("bench: %s not found; run make first" % mmdem)
    lmp = None if args.no_lammps or not args.lmp else args.lmp
    os.makedirs(CACHE, exist_ok=True)
    t_start = time.time()
    log("settle benchmark: d = %g m, density %g kg/m^3, kn = %g N/m, kt = %.6g N/m, gamma_n = %g 1/s, "
        "gamma_t = %g 1/s, mu = %g, g = %g m/s^2" % (D, RHO, KN, KT, GN, GT, MU, G))
    if args.law != "hooke":
        log("  timed runs with law %s (LAMMPS gran/%s/history): kn = %.6g N/m^2, kt = %.6g N/m^2, gamma_n = %.6g, "
            "gamma_t = %.6g 1/(s m) (hooke's values at an overlap of 1 %% of r); the bed is made with hooke"
            % (LAW["name"], LAW["lmp"], LAW["kn"], LAW["kt"], LAW["gn"], LAW["gt"]))
    log("  tc = %.6g s (pair), dt = tc/50 = %.6g s, skin = %g m (%.2g d), lattice spacing %.2g d, periodic x y, "
        "floor z = 0" % (TC, DT, SKIN, SKIN / D, SPACING / D))
    log("  mmdem: %s" % mmdem)
    log("  LAMMPS: %s" % (lmp or "not used (lmp not installed or --no-lammps): mmdem only"))
    if not os.access("/usr/bin/time", os.X_OK):
        log("  /usr/bin/time missing: no memory figures")
    load = os.getloadavg()[0]
    if load > 0.5:
        log("  note: load average %.2f before starting; other processes share the CPU and timings are noisy" % load)
    nx, ny, nz = cfg["base"]
    want = [c for c in cfg["cases"] if not args.cases or c[0] in args.cases.split(",")]
    bed = None
    if any(c[1] == "bed" for c in want):
        bed_dir, raw, info = make_bed(cfg, mmdem)
        mode, bed_csv, reason = bed_mode(bed_dir, raw, info, mmdem, args.touching)
        if mode == "raw":
            log("bed: mmdem accepts the settled (overlapping) bed: both codes start from it at rest, no warm-up")
            ramp, hold = 0, 0
        else:
            ramp, hold = cfg["ramp"], cfg["hold"]
            log("bed: not loaded as it is (%s)" % reason)
            log("     so both codes load it just touching (%s) and ramp gravity 0 -> g over %d steps, hold %d steps, "
                "then time" % (open(os.path.join(bed_dir, "deoverlap.log")).read().strip().replace("deoverlap: ", ""),
                               ramp, hold))
        bed = (read_xyz(bed_csv), ramp, hold)
    results = []
    for name, kind, tiles, steps in want:
        tx, ty = tiles
        lx, ly = tx * nx * SPACING, ty * ny * SPACING
        case_dir = os.path.join(CACHE, runs_dir, name)
        os.makedirs(case_dir, exist_ok=True)
        if kind == "lattice":
            dims = (tx * nx, ty * ny, nz)
            pts = lattice_points(*dims, LATTICE_Z0)
            lz = LATTICE_Z0 + (nz + 2) * SPACING
            ramp = hold = 0
            src = dims
        else:
            base_pts, ramp, hold = bed
            pts = tile(base_pts, cfg["base"], tiles)
            lz = (nz + 2) * SPACING
            write_csv(os.path.join(case_dir, "bodies.csv"), pts)
            src = os.path.join(case_dir, "bodies.csv")
        n = len(pts)
        warm = ramp + hold
        log("%s: %d bodies, %d timed steps%s ..." % (name, n, steps, " after %d warm-up steps" % warm if warm else ""))
        runs_m, runs_l = [], []
        for rep in range(max(1, args.repeat)):
            m = run_mmdem(mmdem, case_dir, name, kind, src, n, lx, ly, lz, steps, warm, ramp)
            l = run_lammps(lmp, case_dir, pts, lx, ly, lz, steps, ramp, hold) if lmp else None
            runs_m += [m] if m else []
            runs_l += [l] if l else []
            log("  run %d: loop wall / CPU s: mmdem %s%s" % (
                rep + 1, "%.3f / %s" % (m["loop"], e(m["loop_cpu"], "%.2f")) if m else "failed",
                (", LAMMPS %s" % ("%.3f / %s" % (l["loop"], e(l["loop_cpu"], "%.2f")) if l else "failed")) if lmp else ""))
        best_m = fastest(runs_m)
        best_l = fastest(runs_l)
        results.append(dict(name=name, kind=kind, n=n, steps=steps, warm=warm, m=best_m, l=best_l))

    # ---- the table
    def rate(r, res, key="loop"):
        return r["n"] * r["steps"] / res[key] if res and res.get(key) else None

    log("")
    log("particle-steps per second of the time loop (higher is better); ratio = mmdem / LAMMPS; "
        "memory = peak RSS / N")
    hdr = "%-12s %7s %6s %13s %13s %7s %10s %10s %10s %13s" % (
        "case", "N", "steps", "mmdem p-st/s", "LAMMPS p-st/s", "ratio", "ratio(CPU)", "mmdem B/p", "LAMMPS B/p",
        "contacts/p")
    log(hdr)
    log("-" * len(hdr))
    rows = []
    for r in results:
        rm, rl = rate(r, r["m"]), rate(r, r["l"])
        cm_, cl_ = rate(r, r["m"], "loop_cpu"), rate(r, r["l"], "loop_cpu")
        ratio = rm / rl if rm and rl else None
        ratio_cpu = cm_ / cl_ if cm_ and cl_ else None
        bm = r["m"]["rss"] / r["n"] if r["m"] and r["m"]["rss"] else None
        bl = r["l"]["rss"] / r["n"] if r["l"] and r["l"]["rss"] else None
        cm = r["m"]["contacts"] / r["n"] if r["m"] else None
        cl = r["l"]["contacts"] / r["n"] if r["l"] else None
        cp = "%s | %s" % (e(cm, "%.2f"), e(cl, "%.2f")) if lmp else e(cm, "%.2f")
        log("%-12s %7d %6d %13s %13s %7s %10s %10s %10s %13s" % (
            r["name"], r["n"], r["steps"], e(rm), e(rl), e(ratio, "%.2f"), e(ratio_cpu, "%.2f"), e(bm, "%.0f"),
            e(bl, "%.0f"), cp))
        rows.append(dict(case=r["name"], n=r["n"], steps=r["steps"], warmup=r["warm"], mmdem_rate=rm, lammps_rate=rl,
                         ratio=ratio, ratio_cpu=ratio_cpu, mmdem_rate_cpu=cm_, lammps_rate_cpu=cl_,
                         mmdem_bytes_per_particle=bm, lammps_bytes_per_particle=bl,
                         mmdem_loop_s=r["m"]["loop"] if r["m"] else None,
                         lammps_loop_s=r["l"]["loop"] if r["l"] else None,
                         mmdem_loop_cpu_s=r["m"]["loop_cpu"] if r["m"] else None,
                         lammps_loop_cpu_s=r["l"]["loop_cpu"] if r["l"] else None,
                         mmdem_process_cpu_s=r["m"]["cpu"] if r["m"] else None,
                         lammps_process_cpu_s=r["l"]["cpu"] if r["l"] else None,
                         mmdem_contacts_per_particle=cm, lammps_contacts_per_particle=cl))
    log("ratio(CPU): the same ratio from the CPU time of the time loop (mmdem: its CPU time between the thermo rows "
        "of the first and last timed step; LAMMPS: Loop time x %CPU); trust it when other processes compete for "
        "the CPU")
    log("contacts/p: contacts (body-body and floor, overlap > 0) per body at the last step, mmdem | LAMMPS")
    # marginal memory between the two bed (or lattice) sizes: without the fixed start-up cost
    for kind in ("lattice", "bed"):
        rr = [r for r in results if r["kind"] == kind]
        if len(rr) == 2 and rr[1]["n"] != rr[0]["n"]:
            dn = rr[1]["n"] - rr[0]["n"]
            part = []
            for code, key in (("mmdem", "m"), ("LAMMPS", "l")):
                if rr[0][key] and rr[1][key] and rr[0][key]["rss"] and rr[1][key]["rss"]:
                    part.append("%s %.0f" % (code, (rr[1][key]["rss"] - rr[0][key]["rss"]) / dn))
            if part:
                log("memory per additional particle (%s %d -> %d, start-up cost removed): %s bytes"
                    % (kind, rr[0]["n"], rr[1]["n"], ", ".join(part)))

    # ---- physical agreement at the end of the timed steps
    if lmp:
        log("")
        log("same workload? state at the end of the timed steps, mmdem vs LAMMPS (relative difference)")
        log("%-12s %-22s %-22s %-26s %-24s %s" % ("case", "mean z [mm]", "contacts", "floor force [N] (N m g)",
                                                  "kinetic energy [J]", "agree"))
        ok_all = True
        for r in results:
            m, l = r["m"], r["l"]
            if not m or not l:
                continue

            def rel(a, b):
                return abs(a - b) / max(abs(b), 1e-300)
            ok = rel(m["zmean"], l["zmean"]) < 5e-3 and (r["kind"] == "lattice" or rel(m["contacts"], l["contacts"]) < 0.05)
            if r["kind"] == "lattice":
                t = (r["warm"] + r["steps"]) * DT
                ke0 = 0.5 * r["n"] * MASS * (G * t) ** 2
                ok = ok and rel(m["ke"], ke0) < 1e-3 and rel(l["ke"], ke0) < 1e-3 and m["contacts"] == l["contacts"] == 0
            ok_all = ok_all and ok
            log("%-12s %-22s %-22s %-26s %-24s %s" % (
                r["name"],
                "%.4f %.4f (%.1e)" % (1e3 * m["zmean"], 1e3 * l["zmean"], rel(m["zmean"], l["zmean"])),
                "%d %d (%.1e)" % (m["contacts"], l["contacts"], rel(m["contacts"], l["contacts"]) if l["contacts"] else 0),
                "%.4g %.4g (%.4g)" % (m["floor_force"], l["floor_force"], r["n"] * MASS * G),
                "%.3g %.3g" % (m["ke"], l["ke"]), "yes" if ok else "NO"))
        log("agree: mean height within 0.5 %%, contacts within 5 %%%s; the kinetic energy of a bed at rest is "
            "noise-level and only shown" % (", free-fall kinetic energy within 0.1 % of N m (g t)^2/2" if
                                              any(r["kind"] == "lattice" for r in results) else ""))
        targets = [(r["name"], rr["ratio"], rr["ratio_cpu"]) for r, rr in zip(results, rows) if rr["ratio"]]
        if targets:
            log("")
            log("single-process target (mmdem/LAMMPS >= 1.0; wall | CPU): " + ", ".join(
                "%s %.2f | %s %s" % (nm, q, e(qc, "%.2f"), "met" if min(q, qc or q) >= 1.0 else
                                     ("NOT met" if max(q, qc or q) < 1.0 else "unclear")) for nm, q, qc in targets))
            # the performance issue's goal: twice LAMMPS's particle-steps per second, and no more memory per
            # particle (peak RSS / N) than LAMMPS's
            log("performance target (mmdem/LAMMPS >= 2.0 and mmdem B/p <= LAMMPS B/p): " + ", ".join(
                "%s %s" % (rr["case"], "met" if min(rr["ratio"], rr["ratio_cpu"] or rr["ratio"]) >= 2.0 and
                           rr["mmdem_bytes_per_particle"] and rr["lammps_bytes_per_particle"] and
                           rr["mmdem_bytes_per_particle"] <= rr["lammps_bytes_per_particle"] else "NOT met")
                for rr in rows if rr["ratio"]))
    json.dump(dict(date=time.strftime("%Y-%m-%d %H:%M:%S"), mmdem=mmdem, lammps=lmp, dt=DT, skin=SKIN, law=LAW["name"],
                   kn=LAW["kn"], gamma_n=LAW["gn"], bed_warmup=bed[1] + bed[2] if bed else None, rows=rows),
              open(results_file, "w"), indent=1)
    log("")
    log("results in %s; runs under %s; total %.0f s" % (os.path.relpath(results_file, ROOT),
                                                        os.path.relpath(os.path.join(CACHE, runs_dir), ROOT),
                                                        time.time() - t_start))
    load = os.getloadavg()[0]
    if load > 1.5:
        log("note: load average %.2f at the end: other processes competed for the CPU" % load)


if __name__ == "__main__":
    main()
