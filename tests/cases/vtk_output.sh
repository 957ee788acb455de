#!/usr/bin/env bash
# vtk_output.sh - the VTK output of a real run, read back with VTK itself (DESIGN.md "Output").
#
# A small run with three plane walls, two materials, two contact laws, bodies from lists (some
# with their own radius) and from a lattice, contacts from the first step, VTK every 50 steps
# and thermo every step. Every written .vtp is read with VTK's XML readers
# (tests/tools/vtk_read.py, /usr/bin/python3, no numpy) and every .pvd with xml.etree, and
# compared with what the run description says (counts, radii, materials, initial positions and
# velocities, wall geometry), with bodies_final.csv (last frame) and with thermo.csv
# (contact counts, frame times).
set -u
M=${MMDEM:-build/mmdem}
PY=${PY:-/usr/bin/python3}
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

cat > "$T/vtk.yaml" <<'EOF'
name: vtkcase
domain: {lo: [0, -0.05, 0], hi: [0.1, 0.05, 0.1]}
gravity: [0, 0, -9.81]
materials:
  glass: {density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25, restitution: 0.8, friction: 0.3}
  steel: {density: 7800, youngs_modulus: 2.0e7, poisson_ratio: 0.3, restitution: 0.6, friction: 0.2}
contact:
  - {pair: default, law: hertz_mindlin}
  - {pair: [steel, steel], law: hooke, params: {kn: 2000, restitution: 0.7, mu: 0.4}}
shapes:
  bead: {type: sphere, radius: 0.005}
  ball: {type: sphere, radius: 0.004}
bodies:
  - shape: bead
    material: glass
    list:
      - {x: [0.005, 0, 0.005], v: [0, 0, -0.2]}
      - {x: [0.02, 0, 0.006], radius: 0.006, v: [-0.3, 0, -0.1]}
      - {x: [0.04, 0, 0.004], radius: 0.004, v: [0.2, 0, -0.1], w: [0, 5, 0]}
  - shape: ball
    material: steel
    list:
      - {x: [0.0485, 0, 0.004], v: [-0.2, 0, 0]}
      - {x: [0.0701, 0, 0.0045], radius: 0.0045, v: [0.1, 0, -0.1]}
      - {x: [0.0955, 0, 0.02], radius: 0.0045, v: [0.3, 0, 0]}
  - {shape: ball, material: steel, lattice: {lo: [0.02, -0.03, 0.05], hi: [0.08, -0.01, 0.05], spacing: 0.02}}
walls:
  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: glass}
  - {type: plane, point: [0, 0, 0], normal: [1, 0, 0], material: steel, name: left}
  - {type: plane, point: [0.1, 0, 0], normal: [-1, 0, 0], material: steel}
integrator: {type: verlet, dt: 1.0e-5}
run: {steps: 400}
output: {vtk_every: 0.0005, thermo_every: 1, contacts: true}
EOF

if ! "$M" run "$T/vtk.yaml" --out "$T/out" --quiet > "$T/log" 2>&1; then
  echo "not ok - vtk_output: run failed: $(tail -n 5 "$T/log" | tr '\n' '|')"
  exit 1
fi
echo "ok - vtk_output: run"

"$PY" - "$T/out" "$TOOLS" <<'EOF'
import csv, glob, math, os, sys
out, tools = sys.argv[1], sys.argv[2]
sys.path.insert(0, tools)
import vtk_read

nfail = 0
def check(name, cond, detail=""):
    global nfail
    if cond:
        print("ok - %s" % name)
    else:
        nfail += 1
        print("not ok - %s: %s" % (name, detail))

# a check made on every frame (or on one named frame) is reported once, with the frames where
# it failed
frame_checks = {}
def fcheck(f, name, cond, detail=""):
    frame_checks.setdefault(name, [])
    if not cond:
        frame_checks[name].append("%s: %s" % (f, detail))
def report_frame_checks():
    for name, fails in frame_checks.items():
        check(name, not fails, "; ".join(fails[:3]) + (" (and %d more frames)" % (len(fails) - 3) if len(fails) > 3 else ""))
    frame_checks.clear()

# ---- what the run description above says (computed here, not read from the program) ----
# (shape radius, material index, x, v, w) per body in YAML order; materials: glass 0, steel 1
bodies = [
    (0.005, 0, (0.005, 0, 0.005), (0, 0, -0.2), (0, 0, 0)),
    (0.006, 0, (0.02, 0, 0.006), (-0.3, 0, -0.1), (0, 0, 0)),
    (0.004, 0, (0.04, 0, 0.004), (0.2, 0, -0.1), (0, 5, 0)),
    (0.004, 1, (0.0485, 0, 0.004), (-0.2, 0, 0), (0, 0, 0)),
    (0.0045, 1, (0.0701, 0, 0.0045), (0.1, 0, -0.1), (0, 0, 0)),
    (0.0045, 1, (0.0955, 0, 0.02), (0.3, 0, 0), (0, 0, 0)),
]
lo, hi, h = (0.02, -0.03, 0.05), (0.08, -0.01, 0.05), 0.02
n = [int(math.floor((hi[d] - lo[d]) / h * (1 + 1e-12))) + 1 for d in range(3)]
for k in range(n[2]):
    for j in range(n[1]):
        for i in range(n[0]):
            bodies.append((0.004, 1, (lo[0] + i * h, lo[1] + j * h, lo[2] + k * h), (0, 0, 0), (0, 0, 0)))
NB = len(bodies)  # 6 + 4 x 2 x 1 = 14
walls = [((0, 0, 0), (0, 0, 1)), ((0, 0, 0), (1, 0, 0)), ((0.1, 0, 0), (-1, 0, 0))]
NW = len(walls)
dt, steps, vtk_every = 1.0e-5, 400, 0.0005
nframes = int(round(steps * dt / vtk_every)) + 1  # frames at t = 0, 0.0005, ..., 0.004

def read(path):
    try:
        return vtk_read.read_pvd(path) if path.endswith(".pvd") else vtk_read.read_polydata(path)
    except SystemExit:
        return None

def arrays(d, key):
    return {a["name"]: a for a in d[key]}

def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))

thermo = list(csv.DictReader(open(os.path.join(out, "thermo.csv"))))
final = {int(r["id"]): r for r in csv.DictReader(open(os.path.join(out, "bodies_final.csv")))}
vdir = os.path.join(out, "vtk")

def thermo_row(t):
    best = min(thermo, key=lambda r: abs(float(r["time"]) - t))
    return best if abs(float(best["time"]) - t) < 0.5 * dt else None

# ---- the .pvd collections ----
times = None
for kind in ("bodies", "walls", "contacts"):
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(vdir, kind + "_*.vtp")))
    check("%s: %d frames written" % (kind, nframes), len(files) == nframes, "found %d: %s" % (len(files), files[:3]))
    pvd = read(os.path.join(vdir, kind + ".pvd"))
    check("%s.pvd parses" % kind, pvd is not None, "xml.etree could not read it")
    if pvd is None:
        continue
    listed = [s["file"] for s in pvd["datasets"]]
    ts = [s["timestep"] for s in pvd["datasets"]]
    check("%s.pvd lists every .vtp" % kind, sorted(listed) == files and all(s["exists"] for s in pvd["datasets"]),
          "listed %s, on disk %s" % (listed, files))
    check("%s.pvd times increase" % kind, all(b > a for a, b in zip(ts, ts[1:])) and ts and ts[0] == 0, "%s" % ts)
    check("%s.pvd times are thermo times" % kind, all(thermo_row(t) is not None for t in ts) and
          close(ts[-1], float(thermo[-1]["time"]), 1e-9), "%s vs last thermo time %s" % (ts, thermo[-1]["time"]))
    if kind == "bodies":
        times = (listed, ts)

if times is None:
    sys.exit(1)
listed, ts = times

# ---- every bodies frame ----
kinds = set()
want = {"id": 1, "radius": 1, "velocity": 3, "angular_velocity": 3, "orientation": 4, "force": 3, "material": 1}
for k, (f, t) in enumerate(zip(listed, ts)):
    d = read(os.path.join(vdir, f))
    fcheck(f, "bodies: VTK reads it", d is not None, "vtkXMLPolyDataReader failed")
    if d is None:
        continue
    fcheck(f, "bodies: %d points, %d vertices" % (NB, NB), d["points"] == NB and d["verts"] == NB,
          "points %d, verts %d" % (d["points"], d["verts"]))
    pa = arrays(d, "pointdata")
    bad = [nm for nm, nc in want.items() if nm not in pa or pa[nm]["ncomp"] != nc or pa[nm]["ntuples"] != NB]
    fcheck(f, "bodies: arrays id, radius, velocity, angular_velocity, orientation, force, material", not bad,
          "missing or wrong size: %s (have %s)" % (bad, {a: (pa[a]["ncomp"], pa[a]["ntuples"]) for a in pa}))
    if bad:
        continue
    ids = [int(v) for v in pa["id"]["values"]]
    fcheck(f, "bodies: ids 0..%d" % (NB - 1), sorted(ids) == list(range(NB)), "%s" % ids)
    if sorted(ids) != list(range(NB)):
        continue
    rad = {ids[p]: pa["radius"]["values"][p] for p in range(NB)}
    badr = [(i, rad[i], bodies[i][0]) for i in range(NB) if rad[i] != bodies[i][0]]
    fcheck(f, "bodies: radius = the YAML's", not badr, "(id, got, YAML): %s" % badr)
    badm = [i for i in range(NB) if int(pa["material"]["values"][ids.index(i)]) != bodies[i][1]]
    fcheck(f, "bodies: material = the YAML's", not badm, "ids %s" % badm)
    q = pa["orientation"]["values"]
    fcheck(f, "bodies: unit orientations", all(abs(sum(q[4 * p + c] ** 2 for c in range(4)) - 1) < 1e-12 for p in range(NB)))
    xyz, vel, ang, frc = d["xyz"], pa["velocity"]["values"], pa["angular_velocity"]["values"], pa["force"]["values"]
    if k == 0:
        e = [i for p, i in enumerate(ids) if any(abs(xyz[3 * p + c] - bodies[i][2][c]) > 1e-15 or
                                                  abs(vel[3 * p + c] - bodies[i][3][c]) > 1e-15 or
                                                  abs(ang[3 * p + c] - bodies[i][4][c]) > 1e-15 for c in range(3))]
        fcheck(f, "bodies: positions and velocities at t = 0 are the YAML's", not e, "ids %s" % e)
    if k == len(listed) - 1:
        e = []
        for p, i in enumerate(ids):
            r = final.get(i)
            if r is None:
                e.append((i, "not in bodies_final.csv"))
                continue
            for c, ax in enumerate("xyz"):
                if abs(xyz[3 * p + c] - float(r[ax])) > 1e-12:
                    e.append((i, ax, xyz[3 * p + c], r[ax]))
                for arr, col in ((vel, "v"), (ang, "w"), (frc, "f")):
                    if not close(arr[3 * p + c], float(r[col + ax]), 1e-12):
                        e.append((i, col + ax, arr[3 * p + c], r[col + ax]))
            for c, ax in enumerate("wxyz"):
                if not close(q[4 * p + c], float(r["q" + ax]), 1e-12):
                    e.append((i, "q" + ax))
        fcheck(f, "bodies: last frame = bodies_final.csv (x to 1e-12 m; v, w, q, f)", not e and len(final) == NB,
              "%d rows in bodies_final.csv; differences %s" % (len(final), e[:5]))
    # contacts of the same frame: one line per touching pair, as many as thermo.csv counts
    fc = f.replace("bodies_", "contacts_")
    c = read(os.path.join(vdir, fc))
    fcheck(fc, "contacts: VTK reads it", c is not None, "vtkXMLPolyDataReader failed")
    if c is None:
        continue
    row = thermo_row(t)
    nc = int(row["contacts"]) if row else -1
    fcheck(fc, "contacts: number of lines = thermo.csv contacts at that step", c["lines"] == nc and c["points"] == 2 * nc,
           "lines %d, points %d, thermo %d (step %s)" % (c["lines"], c["points"], nc, row["step"] if row else "?"))
    ca = arrays(c, "celldata")
    wantc = {"fn": 1, "ft": 3, "force": 3, "normal": 3, "gap": 1, "a": 1, "b": 1}
    badc = [nm for nm, ncomp in wantc.items() if nm not in ca or ca[nm]["ncomp"] != ncomp or ca[nm]["ntuples"] != c["lines"]]
    fcheck(fc, "contacts: arrays fn, ft, force, normal, gap, a, b per line", not badc, "%s" % badc)
    if badc or not c["lines"]:
        continue
    pos = {ids[p]: xyz[3 * p:3 * p + 3] for p in range(NB)}
    e = []
    for l in range(c["lines"]):
        a, b = int(ca["a"]["values"][l]), int(ca["b"]["values"][l])
        if not (0 <= a < NB and 0 <= b < NB + NW and a != b and ca["gap"]["values"][l] < 0):
            e.append(("pair", a, b, ca["gap"]["values"][l]))
        elif any(abs(c["xyz"][6 * l + j] - pos[a][j]) > 1e-15 for j in range(3)):
            e.append(("start is not the centre of a", a))
        elif b < NB and any(abs(c["xyz"][6 * l + 3 + j] - pos[b][j]) > 1e-12 for j in range(3)):
            e.append(("end is not the centre of b", b))
    fcheck(fc, "contacts: lines from the centre of a to the centre of b (or the wall), gap < 0", not e, "%s" % e[:5])
    kinds.update("wall" if int(v) >= NB else "body" for v in ca["b"]["values"])
report_frame_checks()
check("contact lines with walls and between bodies were written", kinds == {"wall", "body"}, "%s" % kinds)

# ---- walls: two triangles per plane, all corners on their plane ----
for f in sorted(os.path.basename(p) for p in glob.glob(os.path.join(vdir, "walls_*.vtp"))):
    d = read(os.path.join(vdir, f))
    fcheck(f, "walls: VTK reads it", d is not None, "vtkXMLPolyDataReader failed")
    if d is None:
        continue
    ok = d["polys"] == 2 * NW and d["points"] == 4 * NW
    wid = arrays(d, "celldata").get("wall")
    ok = ok and wid is not None and [int(v) for v in wid["values"]] == [NB + w for w in range(NW) for _ in (0, 1)]
    fcheck(f, "walls: 2 triangles per plane wall, tagged with the wall's id", ok,
          "polys %d, points %d, wall %s" % (d["polys"], d["points"], wid["values"] if wid else None))
    if not ok:
        continue
    conn, xyz, e = d["polys.conn"], d["xyz"], []
    for tri in range(2 * NW):
        (px, nv) = walls[tri // 2]
        for v in conn[3 * tri:3 * tri + 3]:
            if abs(sum((xyz[3 * v + j] - px[j]) * nv[j] for j in range(3))) > 1e-12:
                e.append((tri, v))
    fcheck(f, "walls: triangle corners lie on their plane", not e, "%s" % e[:5])
    offs = d["polys.offsets"]
    fcheck(f, "walls: cells are triangles", all(b - a == 3 for a, b in zip(offs, offs[1:])), "%s" % offs)

report_frame_checks()
sys.exit(1 if nfail else 0)
EOF
