"""Feature-level Verlet lists (000_c57329b1a40312e0.txt section 2.5: inflated feature volumes,
reused while the bodies move less than a margin) of sphere/polyhedron, polyhedron/mesh and
sphere/mesh pairs against the full candidate search (PETSc option -poly_feature_lists 0: every
candidate feature examined at each evaluation). The lists only leave out pairs of features that
cannot touch, so the contacts, their order and the results must be the same bit for bit:
  - tests/cases/poly_mesh_lists.yaml (law barrier_hybrid: three cubes, a tetrapod and six spheres
    fall into an open Gmsh funnel, 0.4 s): bodies_final.csv and thermo.csv (without wall_s)
    equal; the run had contacts of each of the three pair kinds (contact_points VTK frames of
    the run with the lists);
  - config/hopper.yaml, small (726 beads, law hooke, whose reach is 0: the lists' margin is half
    the neighbour list's skin), to 0.3 s (the orifice opens at 0.25 s): bodies_final.csv and
    thermo.csv (without wall_s) equal.
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
root = os.path.abspath(os.path.join(here, "..", ".."))
PY = os.environ.get("PY", "/usr/bin/python3")


def run(label, yaml, out, sets, extra):
    cmd = [dc.MMDEM, "run", yaml, "--out", out, "--quiet"]
    for k, v in sets:
        cmd += ["--set", "%s=%s" % (k, v)]
    with open(out + ".log", "w") as fp:
        try:
            rc = subprocess.call(cmd + extra, stdout=fp, stderr=subprocess.STDOUT, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            dc.not_ok(label, "cannot run %s: %s" % (dc.MMDEM, e))
            return False
    if rc != 0:
        dc.not_ok(label, "mmdem run exited with status %d (%s)" % (rc, " ".join(cmd + extra)))
        return False
    return True


def thermo_without_wall_s(path):
    with open(path) as fp:
        rows = [l.rstrip("\n").split(",") for l in fp]
    k = rows[0].index("wall_s")
    return [r[:k] + r[k + 1:] for r in rows]


def compare(name, yaml, sets):
    outs = {}
    for tag, extra in (("lists", []), ("full", ["-poly_feature_lists", "0"])):
        o = os.path.join(tmp, "%s_%s" % (name, tag))
        outs[tag] = o if run("%s run (%s)" % (name, tag), yaml, o, sets, extra) else None
    if not outs["lists"] or not outs["full"]:
        return None
    same_b = open(os.path.join(outs["lists"], "bodies_final.csv")).read() == open(os.path.join(outs["full"], "bodies_final.csv")).read()
    dc.check("%s: bodies_final.csv with the lists bitwise equal to the full search" % name, 0 if same_b else 1, 0)
    ta, tb = thermo_without_wall_s(os.path.join(outs["lists"], "thermo.csv")), thermo_without_wall_s(os.path.join(outs["full"], "thermo.csv"))
    diff = [i for i in range(min(len(ta), len(tb))) if ta[i] != tb[i]]
    dc.check("%s: thermo.csv (without wall_s) bitwise equal" % name, 0 if (not diff and len(ta) == len(tb)) else 1, 0,
             "%d rows, first difference at row %s" % (len(ta), diff[0] if diff else "-"))
    return outs["lists"]


out = compare("funnel", os.path.join(here, "poly_mesh_lists.yaml"), [("output.contacts", "true"), ("output.vtk_every", "0.01")])
if out:
    bf = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    nb = len(bf)
    kind = {int(r["id"]): ("sphere" if r["shape"] == "ball" else "polyhedron") for r in bf}
    kind[nb], kind[nb + 1] = "mesh", "plane"  # the walls, in the file's order
    count = {}
    vtk = os.path.join(out, "vtk")
    for f in sorted(os.listdir(vtk)):
        if not f.startswith("contact_points_"):
            continue
        j = json.loads(subprocess.run([PY, os.path.join(root, "tests", "tools", "vtk_read.py"), "--json", os.path.join(vtk, f)], capture_output=True, text=True).stdout)
        pd = {p["name"]: p["values"] for p in j.get("pointdata", [])}
        for a, b in zip(pd.get("a", []), pd.get("b", [])):
            k = "/".join(sorted((kind.get(int(a), "?"), kind.get(int(b), "?"))))
            count[k] = count.get(k, 0) + 1
    for k in ("polyhedron/sphere", "mesh/polyhedron", "mesh/sphere"):
        dc.check("funnel: %s contacts in the frames (the compared paths ran)" % k, 0 if count.get(k, 0) > 0 else 1, 0, "%d contact points in 41 frames; all: %s" % (count.get(k, 0), count))

hop = [("bodies.0.lattice.hi", "[0.0225, 0.0225, 0.065]"), ("walls.1.remove_at", "0.25"), ("contact.0.params.kn", "1000"),
       ("integrator.dt_fraction", "0.05"), ("run.end_time", "0.3"), ("output.thermo_every", "200"), ("output.vtk_every", "-1")]
compare("hopper", os.path.join(root, "config", "hopper.yaml"), hop)
dc.finish()
