#!/usr/bin/env bash
# examples.sh - every config/*.yaml runs in a quick mode (DESIGN.md "Layout": each example runs
# in `make test`), and each run is checked against numbers that do not come from the program:
# the body count of its YAML, analytic values, and the energy balance with a tolerance set by
# the time step.
#
# Energy: thermo.csv's e_balance = kinetic + potential + contact energy + dissipated must stay
# at its initial value. Velocity Verlet keeps a shadow energy: on a linear contact of
# collision time tc (omega = pi / tc) the energy oscillates by at most (omega dt)^2 / 4 of the
# energy in the contact, and returns when the contact opens. Dashpots and friction are
# evaluated with the half-step velocity (the LAMMPS convention), which makes the dissipated
# energy first order: its error is O(dt / tc) of the energy dissipated. Tolerances:
#   elastic (impact):    max |e_balance - e0| <= (omega dt)^2 / 2 * e0
#   dissipative:         |e_balance - e0| <= 2 (dt / tc) * dissipated + (omega dt)^2 / 2 * KE_max
# with dt / tc = the YAML's integrator.dt_fraction (dt: auto).
#
# A config/*.yaml without a case below is still run (100 steps) and checked for a clean exit,
# but reported "not ok": add its quick mode and its numbers here.
set -u
M=${MMDEM:-build/mmdem}
PY=${PY:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

for f in config/*.yaml; do
  name=$(basename "$f" .yaml)
  case $name in
    impact) quick=(--set run.end_time=0.002) ;;             # the collision is over at 0.78 ms
    settle) quick=(--set run.end_time=0.05) ;;              # the lowest beads have landed
    rolling) quick=(--set run.end_time=0.15) ;;             # rolling from 0.097 s on
    compress) quick=(--set run.end_time=0.035) ;;           # the whole run: 35 load steps
    container2d) quick=(--set run.end_time=0.6) ;;          # the first spheres land at 0.5 s
    hopper) quick=(--set 'bodies.0.lattice.hi=[0.0225, 0.0225, 0.0625]' --set run.end_time=0.08) ;; # 6 of 24 layers; the lowest land at 0.06 s
    box_of_cubes) quick=(--set run.end_time=0.004) ;;       # free fall: the lowest cubes land at 0.05 s
    box_of_tetrapods) quick=(--set 'run={steps: 10}') ;;    # free fall: the lowest land at 0.1 s
    newmark_impact) quick=() ;;                             # the whole run: 217 steps
    *) quick=(--set 'run={steps: 100}') ;;
  esac
  t0=$(date +%s%N)
  if ! "$M" run "$f" --out "$T/$name" --quiet "${quick[@]}" > "$T/$name.log" 2>&1; then
    echo "not ok - $name: quick run failed: $(tail -n 3 "$T/$name.log" | tr '\n' '|')"
    continue
  fi
  echo "ok - $name: quick run (${quick[*]}, $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
  "$PY" - "$name" "$T/$name" <<'EOF'
import csv, math, os, sys
name, out = sys.argv[1], sys.argv[2]
PI = math.pi

def check(what, cond, detail=""):
    print(("ok - %s: %s" % (name, what)) if cond else ("not ok - %s: %s: %s" % (name, what, detail)))

def rows(f):
    return list(csv.DictReader(open(os.path.join(out, f))))

thermo, final = rows("thermo.csv"), rows("bodies_final.csv")
head = open(os.path.join(out, "thermo.csv")).readline().strip().split(",")
contract = "step,time,dt,ke_trans,ke_rot,pe_grav,pe_contact,dissipated,contacts,iterations,wall_s".split(",")
check("thermo.csv header", head[:len(contract)] == contract and "e_balance" in head, "%s" % head)
e = [float(r["e_balance"]) for r in thermo]
ke = [float(r["ke_trans"]) + float(r["ke_rot"]) for r in thermo]
diss = float(thermo[-1]["dissipated"])
check("e_balance finite", all(math.isfinite(x) for x in e), "")

def energy(frac, elastic):
    w2 = (PI * frac) ** 2
    if elastic:
        err, tol = max(abs(x - e[0]) for x in e), 0.5 * w2 * abs(e[0])
        check("max |e_balance - e0| = %.3g J <= (omega dt)^2/2 e0 = %.3g J" % (err, tol), err <= tol, "e0 = %.6g J" % e[0])
    else:
        err, tol = abs(e[-1] - e[0]), 2 * frac * abs(diss) + 0.5 * w2 * max(ke)
        check("|e_balance - e0| = %.3g J <= 2 (dt/tc) dissipated + (omega dt)^2/2 KE_max = %.3g J" % (err, tol),
              err <= tol, "e0 = %.6g J, dissipated %.6g J, KE_max %.6g J" % (e[0], diss, max(ke)))

if name == "impact":
    # two beads of the YAML's list, head-on at +-0.5 m/s, gamma_n = 0: an elastic collision
    check("2 bodies in bodies_final.csv", len(final) == 2, "%d" % len(final))
    frac = 0.00625
    energy(frac, True)
    v = sorted(float(r["vx"]) for r in final)
    check("velocities reversed, -0.5 and +0.5 m/s within dt/tc", all(abs(abs(x) - 0.5) <= frac * 0.5 for x in v) and v[0] < 0 < v[1], "%s" % v)
    check("the collision happened (contacts > 0 at some step)", any(int(r["contacts"]) > 0 for r in thermo), "")
elif name == "settle":
    # random: {count: 4000} beads of radius 1.8..2.2 mm, floor z = 0, side walls at 0 and 0.1 m
    rmax = 0.0022
    check("4000 bodies in bodies_final.csv", len(final) == 4000, "%d" % len(final))
    z = min(float(r["z"]) for r in final)
    check("no bead below the floor: z_min = %.4g m >= 0.5 r_max" % z, z >= 0.5 * rmax, "")
    xy = [float(r[c]) for r in final for c in ("x", "y")]
    check("no bead through a side wall", min(xy) >= 0.5 * rmax and max(xy) <= 0.1 - 0.5 * rmax, "%g %g" % (min(xy), max(xy)))
    check("beads have landed (contacts at the end)", int(thermo[-1]["contacts"]) > 0, thermo[-1]["contacts"])
    energy(0.02, False)
elif name == "rolling":
    # v0 = 1 m/s, mu = 0.3, g = 9.81, r = 0.01 m, m = 7800 * 4/3 pi r^3
    v0, mu, g, r = 1.0, 0.3, 9.81, 0.01
    m = 7800 * 4.0 / 3.0 * PI * r ** 3
    check("1 body in bodies_final.csv", len(final) == 1, "%d" % len(final))
    b = final[0]
    vx, wy, z = float(b["vx"]), float(b["wy"]), float(b["z"])
    check("rolls at 5/7 v0: v = %.6g m/s" % vx, abs(vx / (5.0 / 7.0 * v0) - 1) <= 5e-3, "expected %.6g" % (5.0 / 7.0 * v0))
    check("rolling without slip: |v - w r| = %.3g m/s <= 1e-3 v0" % abs(vx - wy * r), abs(vx - wy * r) <= 1e-3 * v0, "w = %g" % wy)
    d0 = m * g / 1.0e5  # static overlap m g / kn
    check("rests on the plane at its static overlap m g/kn = %.4g m (got %.4g)" % (d0, r - z), abs((r - z) / d0 - 1) <= 0.01, "")
    tr = rows("track.csv")
    slip = [(float(t["time"]), float(t["vx"]) - float(t["wy"]) * r) for t in tr]
    tstop = next((t for t, s in slip if abs(s) <= 1e-3 * v0), None)
    tan = 2 * v0 / (7 * mu * g)
    check("slipping stops at 2 v0/(7 mu g) = %.5g s (got %s)" % (tan, tstop), tstop is not None and abs(tstop / tan - 1) <= 0.02, "")
    kf = ke[-1]
    check("final kinetic energy 5/14 m v0^2 = %.5g J (got %.5g)" % (5.0 / 14 * m * v0 ** 2, kf), abs(kf / (5.0 / 14 * m * v0 ** 2) - 1) <= 1e-2, "")
    check("dissipated = m v0^2/7 = %.5g J within 2 dt/tc (got %.5g)" % (m * v0 ** 2 / 7, diss), abs(diss / (m * v0 ** 2 / 7) - 1) <= 2 * 0.02, "")
    energy(0.02, False)
elif name == "compress":
    # quasi-static (variational, quasi_static: true): 27 beads, simple cubic, kn = 1e5 N/m, piston
    # at -0.01 m/s; gaps per column c0 = 3e-4 m; after them F = 9 kn (c - c0) / 4, energy
    # 9 kn (c - c0)^2 / 8 (9 columns of 4 springs in series), the floor carries -F
    kn, vp, c0 = 1.0e5, 0.01, 3.0e-4
    check("27 bodies in bodies_final.csv", len(final) == 27, "%d" % len(final))
    w = rows("walls.csv")
    piston = [r for r in w if int(r["wall"]) == 32]
    floor = {r["step"]: float(r["fz"]) for r in w if int(r["wall"]) == 27}
    ef = ee = eq = 0.0
    for r in piston:
        c = vp * float(r["time"])
        F = 9 * kn * max(c - c0, 0.0) / 4
        ef = max(ef, abs(float(r["fz"]) - F))
        eq = max(eq, abs(float(r["fz"]) + floor[r["step"]]))
    for r in thermo:
        c = vp * float(r["time"])
        ee = max(ee, abs(float(r["pe_contact"]) - 9 * kn * max(c - c0, 0.0) ** 2 / 8))
    Fmax, Emax = 9 * kn * (vp * 0.035 - c0) / 4, 9 * kn * (vp * 0.035 - c0) ** 2 / 8
    check("piston force = 9 kn (c - c0) / 4 at every load step: max error %.3g N <= 1e-9 F_max" % ef, ef <= 1e-9 * Fmax, "F_max %.6g N" % Fmax)
    check("floor reaction = -piston force (equilibrium): max %.3g N <= 1e-9 F_max" % eq, eq <= 1e-9 * Fmax, "")
    check("contact energy = 9 kn (c - c0)^2 / 8: max error %.3g J <= 1e-9 E_max" % ee, ee <= 1e-9 * Emax, "E_max %.6g J" % Emax)
    check("load steps reached the end: t = %s" % thermo[-1]["time"], abs(float(thermo[-1]["time"]) - 0.035) < 1e-9, "")
elif name == "container2d":
    # 001 example 5.3 (integrator trapezoid): 230 spheres r = 0.1 m in the x-y plane fall from
    # y >= 2.2 m onto the incline y = -x (floor y = 0, wall x = 3); by 0.6 s the lowest have
    # landed (a free fall of about 1.2 m takes 0.5 s), the highest still fall freely with
    # v = -g t up to the drag c t / (2 m) = 1.4e-4
    r, g, c, m = 0.1, 9.81, 0.005, 2500 * 4.0 / 3.0 * PI * 0.1 ** 3
    check("230 bodies in bodies_final.csv", len(final) == 230, "%d" % len(final))
    check("dimension 2: every centre in z = 0", all(abs(float(b["z"])) < 1e-12 for b in final), "")
    inside = all(float(b["y"]) >= 0.5 * r and (float(b["x"]) + float(b["y"])) / 2 ** 0.5 >= 0.5 * r and float(b["x"]) <= 3 - 0.5 * r for b in final)
    check("no sphere through the floor, the incline or the wall", inside, "")
    check("the lowest spheres have landed (contacts at the end)", int(thermo[-1]["contacts"]) > 0, thermo[-1]["contacts"])
    top = max(final, key=lambda b: float(b["y"]))
    t = float(thermo[-1]["time"])
    check("the highest sphere falls freely: vy = -g t within 2e-4 + c t / m at t = %.4g s (got %s)" % (t, top["vy"]), abs(float(top["vy"]) / (-g * t) - 1) <= 2e-4 + c * t / m, "")
    energy(0.05, False)
elif name == "hopper":
    # lattice of 11 x 11 x 6 beads (quick: 6 of the 24 layers; r 1.9..2.1 mm) in a cone +
    # cylinder funnel (mesh wall, Gmsh OCC; cylinder radius 35 mm above z = 0.03 m), orifice
    # plate at z = 0 until 0.4 s: by 0.08 s the lowest beads rest on the cone, none has left
    check("726 bodies in bodies_final.csv", len(final) == 726, "%d" % len(final))
    rr = max(math.hypot(float(b["x"]), float(b["y"])) for b in final)
    check("every bead inside the funnel: r_max = %.4g m <= 0.035 - 0.0019" % rr, rr <= 0.035 - 0.0019, "")
    check("no bead through the orifice plate (z > 0)", min(float(b["z"]) for b in final) > 0, "")
    wl = [r for r in rows("walls.csv") if int(r["wall"]) == 726]
    check("beads rest on the mesh wall: its fz < 0 at the end", float(wl[-1]["fz"]) < 0, wl[-1]["fz"])
    energy(0.02, False)
elif name in ("box_of_cubes", "box_of_tetrapods"):
    # 000 examples 3.5, 3.6 (polyhedra, barrier_hybrid): the lattice of the CSV falls freely
    # until the lowest bodies reach the ground: v_z = -g t for every body, no contact yet
    nb, g = (564, 9.81) if name == "box_of_cubes" else (1005, 9.81)
    check("%d bodies in bodies_final.csv" % nb, len(final) == nb, "%d" % len(final))
    t = float(thermo[-1]["time"])
    err = max(abs(float(b["vz"]) + g * t) for b in final)
    check("free fall: max |v_z + g t| = %.3g m/s <= 1e-9 g t at t = %.4g s" % (err, t), err <= 1e-9 * g * t, "")
    check("no contact yet", int(thermo[-1]["contacts"]) == 0, thermo[-1]["contacts"])
    check("contact columns contacts_bb, contacts_bw in thermo.csv", "contacts_bb" in head and "contacts_bw" in head, "%s" % head)
elif name == "newmark_impact":
    # newmark, beta 1/4, gamma 1/2 (average acceleration: no numerical damping), elastic Hooke
    # contact, dt = tc/20: the velocities reverse and the energy is that of the start after the
    # collision (within the contact onset/end error of O(dt/tc)^2: 1e-2 of e0)
    check("2 bodies in bodies_final.csv", len(final) == 2, "%d" % len(final))
    v = sorted(float(r["vx"]) for r in final)
    check("velocities reversed, -0.5 and +0.5 m/s within 1 %", all(abs(abs(x) - 0.5) <= 0.005 for x in v) and v[0] < 0 < v[1], "%s" % v)
    err = abs(e[-1] - e[0])
    check("energy after the collision |e - e0| = %.3g J <= 1e-2 e0" % err, err <= 1e-2 * abs(e[0]), "e0 %.6g J" % e[0])
    check("the collision happened (contacts > 0 at some step)", any(int(r["contacts"]) > 0 for r in thermo), "")
    check("Newton iterations counted (newton_total > 0)", float(thermo[-1]["newton_total"]) > 0, thermo[-1]["newton_total"])
else:
    check("has a quick-mode check in tests/cases/examples.sh", False, "add its quick mode and the numbers it must meet")
EOF
done
