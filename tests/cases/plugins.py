"""Runs of the example plugins (tests/cases/plugins.sh): plugins/cohesion.c and
plugins/symplectic_euler.c, and the per-body field and thermo-column hooks of a test plugin.
Usage: plugins.py TMPDIR PROBE_SO

1. cohesion (loaded from the YAML's `plugins:`): two equal spheres (m* = m/2) touching at
   t = 0, separating at relative speed v. The law (plugins/cohesion.c) is linear in the
   attraction zone 0 < g < rc: fn = -Fc (1 - g/rc), potential U(g) = -Fc (rc - g)^2 / (2 rc),
   U(0) = -Fc rc / 2. Energy conservation gives the escape speed from touching
       v_c = sqrt(Fc rc / m*),
   below it the largest gap g_max = rc (1 - sqrt(1 - v^2/v_c^2)) (then they come back), above
   it the final speed v_inf = sqrt(v^2 - v_c^2).
     v = 0.8 v_c: held: g_max = 0.4 rc within 1 % of rc, gap < rc all the time, the plugin's
                  thermo column cohesive_bonds = 1 on every line
     v = 1.25 v_c: parted: v_inf = 0.75 v_c within 1e-3 (verlet, dt = tc/800), bonds 0 at the end
   Both are undamped: e_balance stays at its initial value within 1e-4 of Fc rc / 2.
2. symplectic_euler (loaded with --plugin), on the bouncing-between-walls case of
   val_bounce_walls.py (250 collisions, h = tc/50, omega h = pi / (50 sqrt 2) = 0.0444 with
   omega = sqrt(kn/m) of the sphere-wall contact). Bound, derived for the scheme
   v+ = v - h omega^2 x, x+ = x + h v+ on the linear contact spring:
   - it conserves Q = v^2 + omega^2 x^2 - h omega^2 x v exactly, and |omega x v| <= E (E =
     (v^2 + omega^2 x^2)/2 per unit mass), so during a contact |E - Q/2| <= (omega h / 2) E;
   - the step that enters the contact puts x in (0, h v] at unchanged v, which changes Q/2 by
     at most (omega h)^2 / 4 of E;
   - between collisions its positions are those of velocity Verlet (leapfrog) and so are its
     free-flight velocities: the free-flight energy is held to the no-drift tolerance of the
     Verlet case, |E_free - E0| <= 1e-3 E0.
   Hence max |E - E0| / E0 <= (1 + 1e-3) (1 + (omega h/2) / (1 - omega h/2) + (omega h)^2/4) - 1
   = 0.0248. It is first order: the band is at least a quarter of omega h (Verlet's is
   (omega h)^2/4 = 4.9e-4), which shows the plugin, not verlet, ran.
3. probe plugin (built by plugins.sh into the temp dir, loaded with --plugin): its per-body
   field probe_vec has 3 components in the store (thermo column probe_ncomp = 3), and the
   values it writes for each body are read back (probe_sum = 0 + 1 for two bodies).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp, probe = sys.argv[1], sys.argv[2]
mmdem_dir = os.path.dirname(os.path.abspath(dc.MMDEM))
se_so = os.path.join(mmdem_dir, "plugins", "symplectic_euler.so")
coh_so = os.path.join(mmdem_dir, "plugins", "cohesion.so")

# ---- 1. cohesion
yaml = os.path.join(here, "plugin_cohesion.yaml")
R, rho = 0.005, 2500.0
kn, Fc, rc = 1.0e4, 0.05, 1.0e-5                 # as in the YAML
m = dc.sphere_mass(rho, R)
ms = m / 2
vc = math.sqrt(Fc * rc / ms)
tc = math.pi * math.sqrt(ms / kn)
dt = tc / 800


def pair_rows(out):
    tr = dc.read_csv(os.path.join(out, "track.csv"))
    by = {}
    for r in tr:
        by.setdefault(r["step"], {})[int(r["id"])] = r
    rows = []
    for s in sorted(by):
        a, b = by[s][0], by[s][1]
        gap = math.sqrt(sum((b[c] - a[c]) ** 2 for c in "xyz")) - 2 * R
        rows.append((b["time"], gap, b["vx"] - a["vx"]))
    return rows


for tag, frac in (("held", 0.8), ("parted", 1.25)):
    v = frac * vc
    name = "cohesion %s (v = %.2f v_c)" % (tag, frac)
    out = os.path.join(tmp, "coh_" + tag)
    t_end = 8 * rc / vc + 4 * tc                 # several trips through the attraction zone
    sets = [("bodies.0.list.0.v", "[%r, 0, 0]" % (-v / 2)), ("bodies.0.list.1.v", "[%r, 0, 0]" % (v / 2)),
            ("integrator.dt", dc.fmt(dt)), ("run.end_time", dc.fmt(t_end)), ("output.thermo_every", "1")]
    if not dc.run(name, yaml, out, sets):
        continue
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    rows = pair_rows(out)
    gmax = max(g for _, g, _ in rows)
    eb = dc.col(th, "e_balance")
    dc.check(name + ": energy conserved, max |e_balance - e0| / (Fc rc / 2)",
             max(abs(e - eb[0]) for e in eb) / (0.5 * Fc * rc), 1e-4)
    dc.check(name + ": e_total(0) = m* v^2/2 - Fc rc/2 (pe_contact of the plugin law)",
             abs(th[0]["e_total"] - (0.5 * ms * v * v - 0.5 * Fc * rc)) / (0.5 * Fc * rc), 1e-9)
    if "cohesive_bonds" not in th[0]:
        dc.not_ok(name + ": thermo column cohesive_bonds", "missing from thermo.csv: %s" % list(th[0]))
        continue
    bonds = dc.col(th, "cohesive_bonds")
    if tag == "held":
        g_exp = rc * (1 - math.sqrt(1 - frac ** 2))
        dc.check(name + ": largest gap rc (1 - sqrt(1 - v^2/v_c^2)) = %.4g m, |g_max - g_exp| / rc" % g_exp,
                 abs(gmax - g_exp) / rc, 1e-2, "g_max = %.5g m" % gmax)
        if gmax < rc and all(b == 1 for b in bonds):
            dc.ok(name + ": stays bonded (gap < rc, cohesive_bonds = 1 on all %d lines)" % len(bonds))
        else:
            dc.not_ok(name + ": stays bonded", "g_max %.4g, rc %.4g, bonds %s..%s" % (gmax, rc, min(bonds), max(bonds)))
        back = sum(1 for (_, g1, _), (_, g2, _) in zip(rows, rows[1:]) if g1 > 0 >= g2)
        if back >= 2:
            dc.ok(name + ": comes back into overlap %d times" % back)
        else:
            dc.not_ok(name + ": comes back into overlap", "%d times" % back)
    else:
        v_inf = math.sqrt(v * v - vc * vc)
        dc.check(name + ": leaves at sqrt(v^2 - v_c^2) = %.6g m/s, relative error" % v_inf,
                 abs(rows[-1][2] - v_inf) / v_inf, 1e-3, "got %.6g m/s" % rows[-1][2])
        if rows[-1][1] > rc and bonds[-1] == 0 and bonds[0] == 1:
            dc.ok(name + ": parted (final gap %.3g m > rc, cohesive_bonds 1 -> 0)" % rows[-1][1])
        else:
            dc.not_ok(name + ": parted", "final gap %.3g, bonds %s -> %s" % (rows[-1][1], bonds[0], bonds[-1]))

# the same file from the YAML and from --plugin: loaded once, the run works
out = os.path.join(tmp, "coh_twice")
cmd_ok = dc.run("cohesion from the YAML and from --plugin", yaml, out, [("run.end_time", "0.0002")])
if cmd_ok:
    import subprocess
    # the file the YAML names (build/plugins), also when BUILD is another directory
    yaml_so = os.path.normpath(os.path.join(here, "..", "..", "build", "plugins", "cohesion.so"))
    rc_ = subprocess.call([dc.MMDEM, "run", yaml, "--out", out, "--quiet", "--plugin", yaml_so,
                           "--set", "run.end_time=0.0002"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    if rc_ == 0:
        dc.ok("cohesion from the YAML and from --plugin: the same file is loaded once")
    else:
        dc.not_ok("cohesion from the YAML and from --plugin", "exit status %d" % rc_)

# ---- 2. symplectic_euler between walls
yaml = os.path.join(here, "val_bounce_walls.yaml")
R, v0 = 0.005, 0.1
d = 2 * R
free = 0.01 * d
m = dc.sphere_mass(rho, R)
kn = 195000.0 * m * dc.G / d
tc = math.pi * math.sqrt(m / (2 * kn))
t_w = math.pi * math.sqrt(m / kn)
omega = math.sqrt(kn / m)
ncoll = 250
t_end = (ncoll + 2) * (free / v0 + t_w)
for h_div in (50,):
    h = tc / h_div
    wh = omega * h
    tag = "symplectic_euler between walls (h = tc/%d, omega h = %.4f)" % (h_div, wh)
    out = os.path.join(tmp, "se_%d" % h_div)
    import subprocess
    cmd = [dc.MMDEM, "run", yaml, "--out", out, "--quiet", "--plugin", se_so,
           "--set", "integrator.type=symplectic_euler", "--set", "contact.0.params.kn=" + dc.fmt(kn),
           "--set", "integrator.dt=" + dc.fmt(h), "--set", "run.end_time=" + dc.fmt(t_end)]
    with open(out + ".log", "w") as fp:
        st = subprocess.call(cmd, stdout=fp, stderr=subprocess.STDOUT)
    if st != 0:
        dc.not_ok(tag, "mmdem exited with status %d: %s" % (st, open(out + ".log").read()[-300:]))
        continue
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    E = dc.col(th, "e_total")
    E0 = 0.5 * m * v0 ** 2
    hits = sum(1 for a, b in zip(th, th[1:]) if a["contacts"] == 0 and b["contacts"] > 0)
    if hits >= ncoll:
        dc.ok(tag + ": %d collisions" % hits)
    else:
        dc.not_ok(tag + ": number of collisions", "%d < %d" % (hits, ncoll))
    Efree = [r["e_total"] for r in th if r["contacts"] == 0]
    dc.check(tag + ": free-flight energy, max |E - E0| / E0", max(abs(e - E0) for e in Efree) / E0, 1e-3)
    bound = (1 + 1e-3) * (1 + (wh / 2) / (1 - wh / 2) + wh * wh / 4) - 1
    dev = max(abs(e - E0) for e in E) / E0
    dc.check(tag + ": energy bounded, max |E - E0| / E0 <= derived bound", dev, bound)
    if dev >= wh / 4:
        dc.ok(tag + ": first order: band %.4g >= omega h / 4 = %.4g (verlet: (omega h)^2/4 = %.2g)" % (dev, wh / 4, wh * wh / 4))
    else:
        dc.not_ok(tag + ": first-order band", "%.4g < omega h / 4 = %.4g: is it really symplectic Euler?" % (dev, wh / 4))
    k = max(1, len(E) // 10)
    dc.check(tag + ": no drift, |mean(E, last 10 %) - mean(E, first 10 %)| / E0", abs(sum(E[-k:]) / k - sum(E[:k]) / k) / E0, 1e-3)

# ---- 3. probe: per-body field and thermo columns
yaml = os.path.join(here, "plugin_cohesion.yaml")
out = os.path.join(tmp, "probe")
with open(out + ".log", "w") as fp:
    st = subprocess.call([dc.MMDEM, "run", yaml, "--out", out, "--quiet", "--plugin", probe, "--set", "run.end_time=0.00005"],
                         stdout=fp, stderr=subprocess.STDOUT)
if st != 0:
    dc.not_ok("probe plugin run", "exit status %d: %s" % (st, open(out + ".log").read()[-300:]))
else:
    th = dc.read_csv(os.path.join(out, "thermo.csv"))
    head = open(os.path.join(out, "thermo.csv")).readline().strip().split(",")
    contract = "step,time,dt,ke_trans,ke_rot,pe_grav,pe_contact,dissipated,contacts,iterations,wall_s,e_total,e_balance".split(",")
    if head[:len(contract)] == contract and "probe_ncomp" in head[len(contract):] and "probe_sum" in head[len(contract):]:
        dc.ok("thermo.csv: built-in columns first, then the plugin columns (%s)" % ",".join(head[len(contract):]))
    else:
        dc.not_ok("thermo.csv header with plugin columns", ",".join(head))
    if "probe_ncomp" in th[0] and all(r["probe_ncomp"] == 3 for r in th):
        dc.ok("per-body field probe_vec registered with 3 components in the body store")
    else:
        dc.not_ok("per-body field probe_vec", "probe_ncomp %s" % [r.get("probe_ncomp") for r in th[:3]])
    if "probe_sum" in th[0] and all(r["probe_sum"] == 1 for r in th):
        dc.ok("per-body field values written by the plugin are read back (sum 0 + 1)")
    else:
        dc.not_ok("per-body field values", "probe_sum %s" % [r.get("probe_sum") for r in th[:3]])
dc.finish()
