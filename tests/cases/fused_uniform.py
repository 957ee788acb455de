"""The fused sphere kernel's blocks with uniform masses and radii (src/contact/hooke_fused.c,
DemFusedUniform): when every contact of a block of DEM_VB has 1/m_a + 1/m_b equal to 2/m0, 1/m0
(a fixed partner) or 0 and, for law hertz, both radii r0, the blocked loop takes
1/(1/m_a + 1/m_b) and r_eff = r0 r0 / (r0 + r0) from constants computed once per batch instead of
dividing per contact. The constants are the quotients the general form computes from the same
values, so the results must be bitwise the same as with the general form everywhere
(MMDEM_NO_UNIFORM=1): bodies_final.csv and thermo.csv (wall_s aside).

A gas of 200 spheres (tests/tools/sphere_gas.py's lattice and velocities, lifted by 2.2 mm) falls
onto 25 fixed spheres on the floor, so that contacts pair mobile bodies with each other and with
fixed ones (the two constants). Cases: law hooke and law hertz, with every radius 1 mm (every
block uniform: the -info line of the law reports as many uniform blocks as blocks) and with one
body in seven of radius 0.9 mm (blocks of both kinds: some but not all uniform). The switch
itself: with MMDEM_NO_UNIFORM=1 the law reports no uniform block. The runs must collide and
dissipate (at least 15 contacts at some thermo row, dissipated > 10 % of the kinetic energy).
"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc
import sphere_gas as gas

tmp = sys.argv[1]
yaml = os.path.join(here, "fused_uniform.yaml")
R0 = 1.0e-3


def gas_rows(mixed):
    out = []
    for k, r in enumerate(gas.rows()):
        r = list(r)
        r[2] += 2.2e-3
        r[9] = 0.9e-3 if (mixed and k % 7 == 3) else R0
        r[6:9] = [c * 1e-3 / r[9] for c in r[6:9]]  # spins of the same surface speed as sphere_gas's
        out.append(r)
    return out


def write_base(path):
    h = gas.L / 5
    with open(path, "w") as fp:
        fp.write("x,y,z,radius\n")
        for j in range(5):
            for i in range(5):
                fp.write("%r,%r,%r,%r\n" % ((i + 0.5) * h, (j + 0.5) * h, R0, R0))
    return path


base = write_base(os.path.join(tmp, "base.csv"))
laws = {"hooke": [], "hertz": [("contact.0.law", "hertz"), ("contact.0.params", "{kn: 2.0e7, gamma_n: 4.0e6, mu: 0.4}")]}


def blocks(log):
    """(blocks, uniform blocks) from the law's -info line"""
    with open(log) as fp:
        m = re.search(r"fused kernel: (\d+) contact blocks, (\d+) with uniform", fp.read())
    return (int(m.group(1)), int(m.group(2))) if m else None


def same(o1, o2):
    b = open(os.path.join(o1, "bodies_final.csv")).read() == open(os.path.join(o2, "bodies_final.csv")).read()
    strip = lambda rs: [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]
    t = strip(dc.read_csv(os.path.join(o1, "thermo.csv"))) == strip(dc.read_csv(os.path.join(o2, "thermo.csv")))
    return b, t


old = os.environ.get("PETSC_OPTIONS")
os.environ["PETSC_OPTIONS"] = ((old + " ") if old else "") + "-info"
for mixed in (False, True):
    rows = gas_rows(mixed)
    csv = gas.write_bodies(os.path.join(tmp, "gas-%s.csv" % ("mixed" if mixed else "mono")), rows)
    E0 = gas.energy(rows)
    for law, extra in laws.items():
        tag = "fused uniform blocks (%s, %s)" % (law, "one radius in seven 0.9 mm" if mixed else "one radius")
        outs, counts = {}, {}
        for mode in ("default", "off"):
            outs[mode] = os.path.join(tmp, "%s-%s-%s" % (law, "mixed" if mixed else "mono", mode))
            if mode == "off":
                os.environ["MMDEM_NO_UNIFORM"] = "1"
            okrun = dc.run(tag + " " + mode, yaml, outs[mode], [("bodies.0.file", csv), ("bodies.1.file", base)] + extra)
            os.environ.pop("MMDEM_NO_UNIFORM", None)
            if not okrun:
                break
            counts[mode] = blocks(outs[mode].rstrip("/") + ".log")
        else:
            b, t = same(outs["default"], outs["off"])
            tf = dc.read_csv(os.path.join(outs["default"], "thermo.csv"))
            busy = max(r["contacts"] for r in tf) >= 15 and tf[-1]["dissipated"] > 0.1 * E0
            if b and t and busy:
                dc.ok(tag + ": bodies_final.csv and thermo.csv bitwise those of MMDEM_NO_UNIFORM=1")
            else:
                dc.not_ok(tag + ": bodies_final.csv and thermo.csv bitwise those of MMDEM_NO_UNIFORM=1",
                          "bodies %s, thermo %s, colliding and dissipating %s" % (b, t, busy))
            n, u = counts["default"] or (0, -1)
            if mixed:
                dc.check(tag + ": some blocks uniform and some not (0 < uniform < blocks)", 0 if 0 < u < n else 1, 0, "%d of %d blocks uniform" % (u, n))
            else:
                dc.check(tag + ": every block uniform", 0 if n > 0 and u == n else 1, 0, "%d of %d blocks uniform" % (u, n))
            n, u = counts["off"] or (0, -1)
            dc.check(tag + ": MMDEM_NO_UNIFORM=1 takes the general form in every block", 0 if n > 0 and u == 0 else 1, 0, "%d of %d blocks uniform" % (u, n))
# software prefetches (hooke_fused.c, DemHookeFusedPfMinBytes: only for stores larger than four
# second-level caches, so never for these 225 bodies unless forced) change no value: with
# MMDEM_PREFETCH=1 (prefetches in the scalar filter of the pairs with an image shift and in the
# blocked loop) bitwise the same results
tag = "fused kernel (hooke, one radius in seven 0.9 mm): MMDEM_PREFETCH=1 against the default (no prefetches here)"
out = os.path.join(tmp, "hooke-mixed-prefetch")
os.environ["MMDEM_PREFETCH"] = "1"
okrun = dc.run(tag, yaml, out, [("bodies.0.file", csv), ("bodies.1.file", base)])
os.environ.pop("MMDEM_PREFETCH", None)
if okrun:
    b, t = same(os.path.join(tmp, "hooke-mixed-default"), out)
    if b and t:
        dc.ok(tag + ": bodies_final.csv and thermo.csv bitwise the same")
    else:
        dc.not_ok(tag + ": bodies_final.csv and thermo.csv bitwise the same", "bodies %s, thermo %s" % (b, t))
# the AVX-512 copy (8 lanes) and the AVX2+FMA copy (4 lanes) of the uniform blocks round alike,
# as those of the general form (tests/cases/fused_kernel.py): bitwise the same results
import subprocess
hdr = subprocess.run([os.environ["MMDEM"], "check", yaml, "--set", "bodies.0.file=" + csv, "--set", "bodies.1.file=" + base], capture_output=True, text=True).stdout
tag = "fused uniform blocks (hertz, one radius in seven 0.9 mm): AVX-512 against MMDEM_ISA=avx2"
if "AVX-512 sphere contacts" not in hdr:
    dc.ok(tag + " # SKIP: the processor has no AVX-512 (or MMDEM_ISA is set)")
else:
    out = os.path.join(tmp, "hertz-mixed-avx2")
    os.environ["MMDEM_ISA"] = "avx2"
    okrun = dc.run(tag, yaml, out, [("bodies.0.file", csv), ("bodies.1.file", base)] + laws["hertz"])
    os.environ.pop("MMDEM_ISA", None)
    if okrun:
        b, t = same(os.path.join(tmp, "hertz-mixed-default"), out)
        n, u = blocks(out.rstrip("/") + ".log") or (0, -1)
        if b and t and 0 < u < n:
            dc.ok(tag + ": bodies_final.csv and thermo.csv bitwise the same, %d of %d blocks uniform" % (u, n))
        else:
            dc.not_ok(tag + ": bodies_final.csv and thermo.csv bitwise the same", "bodies %s, thermo %s, %d of %d blocks uniform" % (b, t, u, n))
if old is None:
    os.environ.pop("PETSC_OPTIONS", None)
else:
    os.environ["PETSC_OPTIONS"] = old
dc.finish()
