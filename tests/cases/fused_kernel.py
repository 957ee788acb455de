"""The fused sphere/sphere and sphere/plane kernels of law hooke (src/contact/hooke_fused.c:
narrow phase, law and assembly in one pass, history beside the pair list, lever arms along the
normal) against the generic pipeline (MMDEM_NO_FUSED=1: the sphere colliders fill the contact
list, hooke.c computes the law batch, forces.c assembles, and history resets go through the
touched-pair pass): two implementations of the same model, 003_9f0cdbfccae61a56.txt
eq. (20)-(25) with friction.h's tangential spring.

200 spheres (r = 0.8 .. 1.1 mm, a radius column) on a jittered lattice (2.4 mm) with random velocities
(0.3 m/s spread) and spins, periodic in x and y over a floor, under gravity; 3000 steps of
velocity Verlet, so that there are collisions, sliding and sticking contacts, pairs across the
periodic images and floor contacts. The two runs differ only in rounding (sums in another
order), which a collisional system amplifies slowly; over this short run:
  positions:  max |x_fused - x_generic| <= 1e-9 r (all bodies, bodies_final.csv)
  velocities: max |v_fused - v_generic| <= 1e-9 of the velocity spread, spins likewise
  energies:   |pe_contact|, |dissipated|, |e_balance| of every thermo row agree to 1e-9 of
              the initial energy (thermo.csv prints 12 digits)
and the bookkeeping of the fused run closes: max |e_balance(t) - e_balance(0)| <= 1e-3 of
the initial energy at this coarse dt (tc/40; val_periodic_gas checks the closure at fine dt).
Both variants of the law: gamma_n given, and gamma_n derived per contact from a restitution;
and a run whose VTK frames with contacts interleave generic-pipeline steps with fused ones.
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc
import sphere_gas as gas

tmp = sys.argv[1]
yaml = os.path.join(here, "fused_kernel.yaml")
rho, L, spread = gas.RHO, gas.L, gas.SPREAD
rows = gas.rows()
write_bodies, energy = gas.write_bodies, gas.energy
csvp = write_bodies(os.path.join(tmp, "bodies.csv"), rows)
# the first 197 bodies: 24 groups of eight or 49 of four and a scalar tail of five or one
csv197 = write_bodies(os.path.join(tmp, "bodies197.csv"), rows[:197])

E0 = energy(rows)
# (name, bodies, initial energy, fewest contacts expected at some thermo row, --set)
variants = [("gamma_n", csvp, E0, 15, []),
            ("restitution", csvp, E0, 15, [("contact.0.params", "{kn: 2.0e3, restitution: 0.5, mu: 0.4}")]),
            # law hertz through the blocked contact loop (about hooke's stiffness and damping at
            # an overlap of 2 % of r: p = sqrt(delta r*) ~ 1e-4 m). Its e_balance is not checked:
            # the tangential spring kt p stiffens with the overlap, so its stored energy is not a
            # potential and e_balance drifts by the law itself (3.4e-3 of E0 here at dt 2e-6 and
            # 3.8e-3 at 1e-6, in the generic pipeline too; 9e-6 with mu = 0)
            ("hertz", csvp, E0, 15, [("contact.0.law", "hertz"), ("contact.0.params", "{kn: 2.0e7, gamma_n: 4.0e6, mu: 0.4}")]),
            # VTK frames with the contact network: those steps take the generic pipeline in
            # the fused run too, so the fused kernel must notice the gap in its history record
            ("VTK contact frames", csvp, E0, 15, [("output.vtk_every", "7.0e-4"), ("output.contacts", "true")])]
for name, bodies, E0, mincontacts, extra in variants:
    tag = "fused kernel (%s)" % name
    res = {}
    for mode in ("fused", "generic"):
        out = os.path.join(tmp, "%s-%s" % (name, mode))
        if mode == "generic":
            os.environ["MMDEM_NO_FUSED"] = "1"
        else:
            os.environ.pop("MMDEM_NO_FUSED", None)
        okrun = dc.run(tag + " " + mode, yaml, out, [("bodies.0.file", bodies)] + extra)
        os.environ.pop("MMDEM_NO_FUSED", None)
        if not okrun:
            break
        res[mode] = (dc.read_csv(os.path.join(out, "bodies_final.csv")), dc.read_csv(os.path.join(out, "thermo.csv")))
    if len(res) != 2:
        continue
    (bf, tf), (bg, tg) = res["fused"], res["generic"]
    dx = max(abs(a[c] - b[c]) / 1e-3 for a, b in zip(bf, bg) for c in ("x", "y", "z"))
    dv = max(abs(a[c] - b[c]) / spread for a, b in zip(bf, bg) for c in ("vx", "vy", "vz"))
    dw = max(abs(a[c] - b[c]) * 1e-3 / spread for a, b in zip(bf, bg) for c in ("wx", "wy", "wz"))
    dc.check(tag + ": positions, max |x_fused - x_generic| / r", dx, 1e-9, "%d bodies" % len(bf))
    dc.check(tag + ": velocities, max |v_fused - v_generic| / spread", dv, 1e-9)
    dc.check(tag + ": spins, max |w_fused - w_generic| r / spread", dw, 1e-9)
    de = max(abs(a[c] - b[c]) / E0 for a, b in zip(tf, tg) for c in ("pe_contact", "dissipated", "e_balance"))
    contacts = max(r["contacts"] for r in tf)
    dc.check(tag + ": pe_contact, dissipated, e_balance per thermo row / E0", de, 1e-9,
             "up to %d contacts, dissipated %.2f of E0" % (contacts, tf[-1]["dissipated"] / E0))
    eb = max(abs(r["e_balance"] - tf[0]["e_balance"]) for r in tf) / E0
    if name != "hertz":
        dc.check(tag + ": fused run's bookkeeping, max |e_balance(t) - e_balance(0)| / E0", eb, 1e-3)
    if contacts < mincontacts or tf[-1]["dissipated"] < 0.1 * E0:
        dc.not_ok(tag + ": the run exercises contacts", "only %d contacts, dissipated %.3g of E0" % (contacts, tf[-1]["dissipated"] / E0))
# The hot loops' two compiled copies (src/core/dem_isa.h): the default run (AVX2+FMA where the
# processor has both) against MMDEM_ISA=generic (the baseline copy), same tolerances; the run
# header names the copy.
tag = "hot loops, MMDEM_ISA=generic against the default copy"
res = {}
for mode in ("default", "generic"):
    out = os.path.join(tmp, "isa-" + mode)
    if mode == "generic":
        os.environ["MMDEM_ISA"] = "generic"
    okrun = dc.run(tag + " " + mode, yaml, out, [("bodies.0.file", csvp)])
    os.environ.pop("MMDEM_ISA", None)
    if not okrun:
        break
    res[mode] = (dc.read_csv(os.path.join(out, "bodies_final.csv")), dc.read_csv(os.path.join(out, "thermo.csv")))
if len(res) == 2:
    (bf, tf), (bg, tg) = res["default"], res["generic"]
    dx = max(abs(a[c] - b[c]) / 1e-3 for a, b in zip(bf, bg) for c in ("x", "y", "z"))
    dv = max(abs(a[c] - b[c]) / spread for a, b in zip(bf, bg) for c in ("vx", "vy", "vz"))
    de = max(abs(a[c] - b[c]) / E0 for a, b in zip(tf, tg) for c in ("pe_contact", "dissipated", "e_balance"))
    dc.check(tag + ": positions / r", dx, 1e-9)
    dc.check(tag + ": velocities / spread", dv, 1e-9)
    dc.check(tag + ": pe_contact, dissipated, e_balance per thermo row / E0", de, 1e-9)
    import subprocess
    hdr = subprocess.run([os.environ["MMDEM"], "check", yaml, "--set", "bodies.0.file=" + csvp], env=dict(os.environ, MMDEM_ISA="generic"), capture_output=True, text=True).stdout
    if "hot loops generic" in hdr:
        dc.ok("MMDEM_ISA=generic: the run header says 'hot loops generic'")
    else:
        dc.not_ok("MMDEM_ISA=generic: the run header says 'hot loops generic'", hdr[:300])
# The AVX-512 copy of the sphere contacts (hooke_fused.c, where the processor has AVX-512) and of
# verlet's kick/drift passes (verlet.c: 200 bodies are all in 8-body groups; a second pair of
# runs with the first 197 bodies exercises the scalar tail after the last group): its
# pair filter must select the same touching pairs as the AVX2+FMA copy's scalar filter and its
# 8-lane contact blocks round as the 4-lane ones, so the default run and MMDEM_ISA=avx2 give
# bitwise the same bodies and thermo rows (wall_s aside).
import subprocess
hdr = subprocess.run([os.environ["MMDEM"], "check", yaml, "--set", "bodies.0.file=" + csvp], capture_output=True, text=True).stdout
tag = "AVX-512 sphere contacts against MMDEM_ISA=avx2"
if "AVX-512 sphere contacts" not in hdr:
    dc.ok(tag + " # SKIP: the processor has no AVX-512 (or MMDEM_ISA is set)")
elif "default" in res:
    out = os.path.join(tmp, "isa-avx2")
    os.environ["MMDEM_ISA"] = "avx2"
    okrun = dc.run(tag, yaml, out, [("bodies.0.file", csvp)])
    os.environ.pop("MMDEM_ISA", None)
    if okrun:
        same = open(os.path.join(tmp, "isa-default", "bodies_final.csv")).read() == open(os.path.join(out, "bodies_final.csv")).read()
        strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]
        same_t = strip(res["default"][1]) == strip(dc.read_csv(os.path.join(out, "thermo.csv")))
        if same and same_t:
            dc.ok(tag + ": bodies_final.csv and thermo.csv bitwise the same")
        else:
            dc.not_ok(tag + ": bodies_final.csv and thermo.csv bitwise the same", "bodies %s, thermo %s" % (same, same_t))
    outs = {}
    for mode in ("default", "avx2"):
        outs[mode] = os.path.join(tmp, "isa197-" + mode)
        if mode == "avx2":
            os.environ["MMDEM_ISA"] = "avx2"
        okrun = dc.run(tag + " (197 bodies) " + mode, yaml, outs[mode], [("bodies.0.file", csv197)])
        os.environ.pop("MMDEM_ISA", None)
        if not okrun:
            break
    else:
        same = open(os.path.join(outs["default"], "bodies_final.csv")).read() == open(os.path.join(outs["avx2"], "bodies_final.csv")).read()
        strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]
        same_t = strip(dc.read_csv(os.path.join(outs["default"], "thermo.csv"))) == strip(dc.read_csv(os.path.join(outs["avx2"], "thermo.csv")))
        if same and same_t:
            dc.ok(tag + " (197 bodies: the scalar tail): bodies_final.csv and thermo.csv bitwise the same")
        else:
            dc.not_ok(tag + " (197 bodies: the scalar tail): bodies_final.csv and thermo.csv bitwise the same", "bodies %s, thermo %s" % (same, same_t))
# verlet's AVX2+FMA passes over four bodies at a time (verlet.c, used when the processor has
# AVX2 and FMA and every body is isotropic) against its scalar AVX2+FMA loops
# (MMDEM_ISA=avx2-scalar): the same operations lane by lane and the power sums in body order,
# so bitwise the same bodies and thermo rows (wall_s aside); 200 bodies (all in 4-body groups)
# and 197 (a scalar tail of one body). Both runs use the AVX2 sphere contacts (no AVX-512).
tag = "verlet AVX2 4-body passes against MMDEM_ISA=avx2-scalar"
if "AVX2+FMA" not in hdr:
    dc.ok(tag + " # SKIP: the processor has no AVX2+FMA (or MMDEM_ISA=generic is set)")
else:
    for nb, bodies in ((200, csvp), (197, csv197)):
        outs = {}
        for mode in ("avx2", "avx2-scalar"):
            outs[mode] = os.path.join(tmp, "v3iso%d-%s" % (nb, mode))
            os.environ["MMDEM_ISA"] = mode
            okrun = dc.run("%s (%d bodies) %s" % (tag, nb, mode), yaml, outs[mode], [("bodies.0.file", bodies)])
            os.environ.pop("MMDEM_ISA", None)
            if not okrun:
                break
        else:
            same = open(os.path.join(outs["avx2"], "bodies_final.csv")).read() == open(os.path.join(outs["avx2-scalar"], "bodies_final.csv")).read()
            strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]
            tfa, tfs = dc.read_csv(os.path.join(outs["avx2"], "thermo.csv")), dc.read_csv(os.path.join(outs["avx2-scalar"], "thermo.csv"))
            same_t = strip(tfa) == strip(tfs)
            # the runs must spin and dissipate, or the Cayley rotation and the power sums go untested
            busy = tfa[-1]["dissipated"] > 0.1 * E0 and max(r["ke_rot"] for r in tfa) > 0
            if same and same_t and busy:
                dc.ok("%s (%d bodies): bodies_final.csv and thermo.csv bitwise the same" % (tag, nb))
            else:
                dc.not_ok("%s (%d bodies): bodies_final.csv and thermo.csv bitwise the same" % (tag, nb), "bodies %s, thermo %s, spinning and dissipating %s" % (same, same_t, busy))
dc.finish()
