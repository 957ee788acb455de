#!/usr/bin/env bash
# checkpoint_features.sh - restarts of runs whose contact history lives in feature slots
# (src/search/featslot.c: one history slot per (pair, feature key)), which checkpoints hold since
# format version 2 (src/core/checkpoint.c, DemNeighbourFeatureCheckpoint_Private):
#   (a) eight beads (Hooke law with friction, mu = 0.4) roll and slide down an STL plane tilted
#       by 25 degrees (written here, 4 x 10 squares split into 80 triangles, so the contacts move
#       from triangle to triangle, with friction history carried over internal edges, mesh.c),
#       one thrown downhill into another, one across the slope, two spinning;
#   (b) four 1 m cubes (polyhedra, law barrier_hybrid of 000_c57329b1a40312e0.txt eq. (49)-(58)
#       with friction, mu_s 0.5, mu_d 0.4) dropped onto the ground and onto each other, two of
#       them thrown sideways so that they slide and stick.
#   (c) superquadrics (002_a4a9ff6a3ba65368.txt, Hertz-Mindlin with friction): their contact
#       solver's warm starts and pair prefilter are in checkpoints since format version 3.
# Each is stopped by SIGTERM mid-run (MMDEM_DEBUG_SIGNAL_STEP), after neighbour rebuilds, while
# contacts with friction history are active, and restarted from the checkpoint of that step;
# the reference is the uninterrupted run: bodies_final.csv, walls.csv, track.csv, thermo.csv
# (without wall_s) and every VTK file must be identical byte for byte (DESIGN.md "Output":
# a restart continues "to the bitwise-same result as an uninterrupted run").
# The whole state is compared too: the checkpoints the restarted run writes (step+1, before the
# next neighbour rebuild, so that the feature map kept across the last rebuild counts, and the
# periodic one of step 4000) equal the uninterrupted run's byte for byte.
# Also: the interrupted state really holds friction history (contacts active at the interrupt,
# tangential/contact energy stored, bodies moving), a checkpoint of format version 1 is refused
# naming the version, and a feature slot that names a pair the checkpoint does not have (valid
# checksums) is refused.
set -u
. tests/tools/case_lib.sh

# --- (a) beads on a tilted STL plane ------------------------------------------------------
"$PY" - <<'EOF'
import math
# the plane z = -tan(25 deg) y through the origin, x in [-0.03, 0.03], y in [-0.1, 0.1]: 4 x 10
# squares, two triangles each, normals up; the beads rest on it (centre r - 1e-6 from it along
# the normal n), some thrown downhill (along d) or across, some spinning
t = math.radians(25.0)
nx, ny, r = 4, 10, 0.004
def p(i, j):
    x = -0.03 + 0.06 * i / nx
    y = -0.1 + 0.2 * j / ny
    return (x, y, -math.tan(t) * y)
with open("tilted.stl", "w") as fp:
    fp.write("solid tilted\n")
    for i in range(nx):
        for j in range(ny):
            a, b, c, d = p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1)
            for tri in ((a, b, c), (a, c, d)):
                fp.write(" facet normal 0 0 0\n  outer loop\n")
                for v in tri:
                    fp.write("   vertex %.17g %.17g %.17g\n" % v)
                fp.write("  endloop\n endfacet\n")
    fp.write("endsolid tilted\n")
n = (0.0, math.sin(t), math.cos(t))
d = (0.0, math.cos(t), -math.sin(t))
beads = [(-0.015, -0.060, (0, 0.2 * d[1], 0.2 * d[2]), (0, 0, 0)),   # catches up bead 1
         (-0.015, -0.045, (0, 0, 0), (0, 0, 0)),
         (0.000, -0.030, (0, 0, 0), (-60, 0, 0)),                    # backspin: slides first
         (0.015, -0.040, (0.1, 0, 0), (0, 0, 0)),                    # across the slope
         (0.012, -0.010, (0, 0, 0), (0, 0, 0)),
         (-0.020, 0.000, (0, 0, 0), (20 * n[0], 20 * n[1], 20 * n[2])),  # spin about the normal
         (0.000, 0.020, (0, 0, 0), (0, 0, 0)),                       # 6 and 7 side by side
         (0.0081, 0.020, (0, 0, 0), (0, 0, 0))]
with open("mesh.yaml", "w") as fp:
    fp.write("""name: ckpt_mesh
domain: {lo: [-0.04, -0.12, -0.06], hi: [0.04, 0.12, 0.06]}
gravity: [0, 0, -9.81]
materials:
  glass: {density: 2500}
contact:
  - {pair: default, law: hooke, params: {kn: 1.0e4, gamma_n: 2000, mu: 0.4}}
shapes:
  bead: {type: sphere, radius: %r}
bodies:
  - shape: bead
    material: glass
    list:
""" % r)
    for x, y, v, w in beads:
        c = [x + (r - 1e-6) * n[0], y + (r - 1e-6) * n[1], -math.tan(t) * y + (r - 1e-6) * n[2]]
        fp.write("      - {x: [%r, %r, %r], v: [%r, %r, %r], w: [%r, %r, %r]}\n" % tuple(c + list(v) + list(w)))
    fp.write("""walls:
  - {type: mesh, name: slope, point: [0, 0, 0], material: glass, file: tilted.stl}
search: {skin: 0.0004}
integrator: {type: verlet, dt: 2.0e-5}
run: {steps: 4500}
output: {vtk_every: 0.03, thermo_every: 100, contacts: true, track: [0, 5], checkpoint_every: 2000}
""")
EOF

# --- (b) cubes with barrier_hybrid ----------------------------------------------------------
cat > cubes.yaml <<'EOF'
name: ckpt_cubes
domain: {lo: [-3, -3, -0.5], hi: [3, 3, 6]}
gravity: [0, 0, -9.81]
materials:
  block: {density: 1000}
contact:
  - {pair: default, law: barrier_hybrid, params: {g_bar: 0.01, f: 0.5, eps1: 1.0e9, n1: 1, n2: -2, zeta: 0.7, mu_s: 0.5, mu_d: 0.4, eps_t: 1.0e7, c_t: 1.0e4}}
shapes:
  cube: {type: polyhedron, box: [1, 1, 1]}
bodies:
  - shape: cube
    material: block
    list:
      - {x: [0.00, 0.00, 0.52], q: [1, 0, 0, 0.02], v: [0.6, 0, 0]}
      - {x: [0.25, -0.10, 1.56], q: [1, 0, 0, -0.15], v: [-0.4, 0.3, 0]}
      - {x: [-1.30, 0.40, 0.53], q: [1, 0.01, 0, 0.3], w: [0, 0, 1.5]}
      - {x: [1.40, 1.20, 0.58], q: [1, 0, 0.02, -0.2], v: [0, -0.8, 0]}
walls:
  - {type: plane, name: ground, point: [0, 0, 0], normal: [0, 0, 1], material: block}
search: {skin: 0.02}
integrator: {type: verlet, dt: 5.0e-5}
run: {steps: 4500}
output: {vtk_every: 0.1, thermo_every: 100, contacts: true, track: [0, 1], checkpoint_every: 2000}
EOF

# case NAME YAML STEP: uninterrupted run, SIGTERM at STEP, restart, compare; checks that the
# interrupted state holds active contacts and moving bodies
case_() {
  local name=$1 y=$2 step=$3 rc
  "$M" run "$y" --out "$name-A" --quiet > "$name-A.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then nok "$name: uninterrupted run" "exit $rc: $(tail -n 2 "$name-A.log" | tr '\n' '|')"; return; fi
  MMDEM_DEBUG_SIGNAL_STEP=$step "$M" run "$y" --out "$name-B" --quiet > "$name-B.log" 2>&1
  rc=$?
  if [ $rc -eq 143 ] && grep -qF "interrupted by SIGTERM at step $step" "$name-B.log" && [ -f "$name-B/checkpoints/step-$step.ckpt" ]; then
    ok "$name: SIGTERM at step $step: exit 143, checkpoint step-$step.ckpt"
  else nok "$name: SIGTERM at step $step" "exit $rc: $(tail -n 2 "$name-B.log" | tr '\n' '|')"; return; fi
  # the state at the interrupt (the thermo row before it): contacts active, contact energy
  # stored, bodies moving
  awk -F, -v s=$step -v what="$name: at the last thermo row before step $step contacts are active, contact energy stored and bodies moving" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $1 == s - s % 100 { n = $c["contacts"]; e = $c["pe_contact"]; k = $c["ke_trans"] + $c["ke_rot"]; f = 1 }
    END { if (f && n > 0 && e > 0 && k > 0) printf "ok - %s (%d contacts, pe_contact %.3g J, ke %.3g J)\n", what, n, e, k
          else printf "not ok - %s: row %s, contacts %s, pe_contact %s, ke %s\n", what, f ? "found" : "missing", n, e, k }' "$name-A/thermo.csv"
  "$M" run "$y" --out "$name-B" --quiet --restart "$name-B/checkpoints/step-$step.ckpt" > "$name-R.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -qF "continuing from $name-B/checkpoints/step-$step.ckpt at step $step" "$name-R.log"; then ok "$name: restart from step $step"
  else nok "$name: restart from step $step" "exit $rc: $(tail -n 2 "$name-R.log" | tr '\n' '|')"; return; fi
  same_output "$name-A" "$name-B" "$name: SIGTERM at $step + restart"
  # the whole state: the checkpoints written after the restart (the periodic one of step 4000,
  # and one of step+1, before the next neighbour rebuild, so that the feature map kept across
  # the last rebuild is compared too) equal the uninterrupted run's byte for byte
  MMDEM_DEBUG_SIGNAL_STEP=$((step + 1)) "$M" run "$y" --out "$name-C" --quiet > "$name-C.log" 2>&1
  MMDEM_DEBUG_SIGNAL_STEP=$((step + 1)) "$M" run "$y" --out "$name-D" --quiet --restart "$name-B/checkpoints/step-$step.ckpt" > "$name-D.log" 2>&1
  if cmp -s "$name-A/checkpoints/step-4000.ckpt" "$name-B/checkpoints/step-4000.ckpt" && [ -f "$name-C/checkpoints/step-$((step + 1)).ckpt" ] &&
    cmp -s "$name-C/checkpoints/step-$((step + 1)).ckpt" "$name-D/checkpoints/step-$((step + 1)).ckpt"; then
    ok "$name: checkpoints of steps $((step + 1)) and 4000 written after the restart are identical to the uninterrupted run's ($(stat -c %s "$name-C/checkpoints/step-$((step + 1)).ckpt") bytes)"
  else nok "$name: checkpoints after the restart" "differ from the uninterrupted run's: $(cmp "$name-A/checkpoints/step-4000.ckpt" "$name-B/checkpoints/step-4000.ckpt" 2>&1 | head -n 1), $(cmp "$name-C/checkpoints/step-$((step + 1)).ckpt" "$name-D/checkpoints/step-$((step + 1)).ckpt" 2>&1 | head -n 1)"; fi
}

# --- (c) superquadrics: a row of blocky bodies on the floor, two pills dropped onto it, a bead
# thrown into its end. The contact solver of superquadric pairs starts from each pair's warm
# start (its last solution) and the prefilter decides which pairs are solved again; both are in
# checkpoints since format version 3 (section SQWS): without them the restarted run converges to
# other points within the solver's tolerance (bodies_final.csv differed from the 5th digit on
# before; this case is that check)
cat > sq.yaml <<'EOF'
name: ckpt_sq
domain: {lo: [-0.03, -0.02, -0.01], hi: [0.04, 0.02, 0.03]}
gravity: [0, 0, -9.81]
materials:
  grain: {density: 2500, youngs_modulus: 5.0e7, poisson_ratio: 0.3, restitution: 0.3, friction: 0.4}
contact:
  - {pair: default, law: hertz_mindlin}
shapes:
  box: {type: superquadric, half_axes: [0.003, 0.0025, 0.002], blockiness: [6, 6]}
  pill: {type: superquadric, half_axes: [0.0035, 0.002, 0.002], blockiness: [2, 4]}
  bead: {type: sphere, radius: 0.002}
bodies:
  - shape: box
    material: grain
    list:
      - {x: [0.000, 0, 0.001999]}
      - {x: [0.005998, 0, 0.001999]}
      - {x: [0.011996, 0, 0.001999], q: [1, 0, 0, 0.05]}
      - {x: [0.017994, 0.0005, 0.001999]}
  - shape: pill
    material: grain
    list:
      - {x: [0.003, 0, 0.0062], v: [0, 0, -0.2], q: [1, 0.1, 0, 0.3]}
      - {x: [0.013, 0.0004, 0.0063], v: [0.05, 0, -0.25], w: [0, 20, 0]}
  - shape: bead
    material: grain
    list:
      - {x: [-0.0075, 0, 0.002], v: [0.3, 0, 0]}
walls:
  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: grain}
search: {skin: 0.0004}
integrator: {type: verlet, dt: 5.0e-6}
run: {steps: 4500}
output: {vtk_every: 0.005, thermo_every: 100, track: [0, 4], checkpoint_every: 2000}
EOF

case_ mesh mesh.yaml 3217
case_ cubes cubes.yaml 3217
case_ sq sq.yaml 3217

# a checkpoint of the old format (version 1: no feature slots) is refused, naming the versions;
# a feature slot of a pair the checkpoint does not have (checksums valid) is refused
ck=mesh-A/checkpoints/step-4000.ckpt
"$PY" - "$ck" <<'EOF'
import struct, sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
def seal(b):  # payload size, payload CRC, header CRC
    b[16:24] = struct.pack("<Q", len(b) - 48)
    b[24:28] = struct.pack("<I", zlib.crc32(bytes(b[48:])))
    b[44:48] = struct.pack("<I", zlib.crc32(bytes(b[:44])))
    return b
v = bytearray(d); v[8:12] = struct.pack("<I", 1)
open("v1.ckpt", "wb").write(seal(v))
# walk the sections to NLST; its last item is the feature blob: int64 length, then int32
# version, int64 history size, int64 count, (int64 pair, int64 key) per slot, ...
pos, nlst = 48, None
while pos < len(d):
    tag, length = bytes(d[pos:pos + 4]), struct.unpack("<Q", d[pos + 8:pos + 16])[0]
    if tag == b"NLST":
        nlst = (pos + 16, pos + 16 + length)
    pos += 16 + length
s, e = nlst
# find the blob: the int64 just before it is its length, and it runs to the end of NLST
for fl in range(28, e - s):
    if struct.unpack("<q", d[e - fl - 8:e - fl])[0] == fl:
        break
blob = e - fl
count = struct.unpack("<q", d[blob + 12:blob + 20])[0]
print("feature slots in the checkpoint of step 4000:", count)
b = bytearray(d)
if count > 0:
    b[blob + 20:blob + 28] = struct.pack("<q", 10 ** 9)
open("badslot.ckpt", "wb").write(seal(b))
EOF
for c in v1:"has format version 1; this mmdem" badslot:"feature slot 0 belongs to pair 1000000000"; do
  f=${c%%:*}.ckpt
  text=${c#*:}
  cp -r mesh-A mesh-$f
  before=$(md5sum "mesh-$f/thermo.csv" "mesh-$f/bodies_final.csv" | md5sum)
  "$M" run mesh.yaml --out "mesh-$f" --quiet --restart "$f" > "$f.log" 2>&1
  rc=$?
  if [ $rc -eq 1 ] && grep -qF -- "$text" "$f.log" && grep -qF -- "$f" "$f.log" && [ "$(md5sum "mesh-$f/thermo.csv" "mesh-$f/bodies_final.csv" | md5sum)" = "$before" ]; then
    ok "refused: $f ($(grep -m 1 '^mmdem:' "$f.log" | cut -c1-200)...), output untouched"
  else nok "refused: $f" "exit $rc, expected '$text'; output: $(tail -n 3 "$f.log" | tr '\n' '|')"; fi
done
