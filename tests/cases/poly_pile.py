"""000_c57329b1a40312e0.txt example 3.2: ten 1 m cubes (1000 kg each) stacked with gaps, small
offsets and turns (poly_pile.yaml) fall, collide with damping (zeta 0.7) and friction, and come
to rest as a pile on the ground.
Checked against numbers computed here:
  - at rest (the last 0.5 s of 3 s) the vertical reaction of the ground (walls.csv, fz) equals
    the total weight 10 m g = 98100 N within 0.1 % (000: "the magnitude of reaction in z
    direction equals the total weight"), averaged over the samples of that interval;
  - the pile is nearly at rest: kinetic energy below 1e-4 of the potential energy of one cube
    lifted by its own height (m g L = 9810 J; a slow rocking on the tangential springs remains,
    0.1-0.2 J at 3-4 s);
  - the cubes did pile up: the top cube's centre is at 9.5 m + 10 g_bar = 9.6 m within 1 mm
    (ten unit cubes, the bottom one centred at 0.5 m; every contact rests in the law's skin
    just below g_bar = 1 cm: part (i) deflects by fn/eps1 < 1e-4 m under the whole pile);
  - VTK (000 Fig. 17, contact points with force vectors): the last vtk/contact_points_*.vtp,
    read with VTK (tests/tools/vtk_read.py), has one point per active contact (thermo.csv's
    count) and the forces of the contacts with the ground (b = the wall's id 10) add up to
    the weight within 0.1 %; the true surfaces (bodies_surf) hold 10 x 12 triangles;
  - every cube kept at least 3 pointwise contacts with its neighbours (face-face contacts are
    represented by the vertices and edge crossings of 000 Fig. 4c): more than 30 contacts.
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "poly_pile.yaml")
m, g, n = 1000.0, 9.81, 10
out = os.path.join(tmp, "pile")
if dc.run("3.2 pile run", yaml, out, [("run.end_time", "3.0"), ("output.contacts", "true"), ("output.vtk_every", "1.5")]):
    w = [r for r in dc.read_csv(os.path.join(out, "walls.csv")) if r["time"] >= 2.5]
    fz = sum(r["fz"] for r in w) / len(w)
    W = n * m * g
    dc.check("3.2 ground reaction = total weight within 0.1 %", abs(abs(fz) - W) / W, 1e-3, "fz %.6g N, weight %.6g N (%d samples)" % (fz, W, len(w)))
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    ke = th[-1]["ke_trans"] + th[-1]["ke_rot"]
    dc.check("3.2 pile at rest: kinetic energy < 1e-4 m g L", ke / (m * g), 1e-4, "ke %.3g J" % ke)
    bf = dc.read_csv(os.path.join(out, "bodies_final.csv"))
    ztop = max(r["z"] for r in bf)
    dc.check("3.2 top cube centre at 9.5 m + 10 g_bar within 1 mm", abs(ztop - 9.6), 1e-3, "z %.6g m" % ztop)
    nc = int(th[-1]["contacts"])
    import glob, json, subprocess
    vr = os.path.join(here, "..", "tools", "vtk_read.py")
    last = sorted(glob.glob(os.path.join(out, "vtk", "contact_points_*.vtp")))[-1]
    d = json.loads(subprocess.run([os.environ.get("PY", "/usr/bin/python3"), vr, last, "--json"], capture_output=True, text=True).stdout)
    pdat = {a["name"]: a for a in d["pointdata"]}
    npts = d["points"]
    fz = sum(pdat["force"]["values"][3 * i + 2] for i in range(npts) if int(pdat["b"]["values"][i]) == 10)
    dc.check("3.2 VTK contact points: one per active contact", abs(npts - nc), 0, "%d points, %d contacts" % (npts, nc))
    dc.check("3.2 VTK contact forces on the ground add up to the weight within 0.1 %", abs(fz - W) / W, 1e-3, "sum fz %.6g N" % fz)
    ls = sorted(glob.glob(os.path.join(out, "vtk", "bodies_surf_*.vtp")))[-1]
    ds = json.loads(subprocess.run([os.environ.get("PY", "/usr/bin/python3"), vr, ls, "--json"], capture_output=True, text=True).stdout)
    dc.check("3.2 VTK true surfaces: 10 cubes x 12 triangles", abs(ds["polys"] - 120), 0, "%s polys" % ds["polys"])
    dc.check("3.2 more than 30 pointwise contacts in the pile", 0 if nc > 30 else 1, 0, "%d contacts" % nc)
dc.finish()
