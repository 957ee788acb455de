#!/usr/bin/env bash
# resident.sh - the clean library pages touched at start-up are handed back (src/core/resident.c,
# issue 11: memory per particle). One run of 4000 spheres settling on a floor (periodic in x
# and y, contacts with tangential history, list rebuilds), 300 steps, twice: as is, and with
# MMDEM_KEEP_PAGES=1 (nothing handed back). Checks:
#   1. the two runs give the same results, bitwise: every column of thermo.csv but wall_s, and
#      bodies_final.csv, walls.csv;
#   2. the peak resident size (/usr/bin/time's or getrusage's ru_maxrss) is at least 8 MB lower
#      (measured 13.9 MB on benchmarks/settle bed-8k, 13.6 MB on the chute: the ~26 MB of
#      clean library pages of a started process less the pages the run reads again);
#   3. two ranks (mpirun -n 2) run it and agree with one rank's contacts count at the end.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/bed.yaml" <<'EOF'
name: resident
domain: {lo: [0, 0, 0], hi: [0.04, 0.04, 0.05], periodic: [true, true, false]}
gravity: [0, 0, -9.81]
materials:
  glass: {density: 2500, friction: 0.5}
contact:
  - {pair: default, law: hooke, params: {kn: 400, kt: 114.29, gamma_n: 2800, gamma_t: 1400, mu: 0.5}}
shapes:
  bead: {type: sphere, radius: 0.001}
bodies:
  - {shape: bead, material: glass, lattice: {lo: [0.001, 0.001, 0.001], hi: [0.039, 0.039, 0.02], spacing: 0.002}}
walls:
  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: glass}
search: {skin: 0.0004}
integrator: {type: verlet, dt: 7.0e-6}
run: {steps: 300}
output: {vtk_every: -1, thermo_every: 50}
EOF
check() { # name status message
  if [ "$2" -eq 0 ]; then echo "ok - resident: $1"; else echo "not ok - resident: $1: $3"; fi
}
# run NAME [env...]: peak RSS in kB into $tmp/NAME.rss
run() {
  local n=$1; shift
  env OMP_NUM_THREADS=1 "$@" "$PY" -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1] + ".log", "w"), stderr=subprocess.STDOUT)
open(sys.argv[1] + ".rss", "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$tmp/$n" "$MMDEM" run "$tmp/bed.yaml" --out "$tmp/$n" --quiet
}
run release
rc1=$?
run keep MMDEM_KEEP_PAGES=1
rc2=$?
"$PY" - "$tmp" "$rc1" "$rc2" <<'EOF'
import csv, os, sys
tmp, rc1, rc2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def say(name, ok, msg):
    print(("ok - resident: %s" % name) if ok else ("not ok - resident: %s: %s" % (name, msg)))
say("both runs succeed", rc1 == 0 and rc2 == 0, "exit %d and %d" % (rc1, rc2))
if rc1 == 0 and rc2 == 0:
    t = [list(csv.DictReader(open(os.path.join(tmp, n, "thermo.csv")))) for n in ("release", "keep")]
    diff = [(r["step"], k) for r, s in zip(*t) for k in r if k != "wall_s" and r[k] != s[k]]
    say("thermo.csv the same, bitwise, but wall_s (%d rows, %s contacts at the end)" % (len(t[0]), t[0][-1]["contacts"]),
        len(t[0]) == len(t[1]) == 7 and not diff and int(t[0][-1]["contacts"]) > 1000, "rows %d/%d, differences %s" % (len(t[0]), len(t[1]), diff[:5]))
    for f in ("bodies_final.csv", "walls.csv"):
        a, b = (open(os.path.join(tmp, n, f)).read() for n in ("release", "keep"))
        say("%s the same, bitwise" % f, a == b and len(a) > 0, "files differ")
    r1, r2 = (int(open(os.path.join(tmp, n + ".rss")).read()) for n in ("release", "keep"))
    say("peak RSS at least 8 MB lower (%.1f MB against %.1f MB)" % (r1 / 1024, r2 / 1024), r2 - r1 >= 8 * 1024, "%d kB less" % (r2 - r1))
EOF
if command -v mpirun > /dev/null; then
  OMP_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1 timeout 300 mpirun --allow-run-as-root -n 2 "$MMDEM" run "$tmp/bed.yaml" --out "$tmp/mpi" --quiet > "$tmp/mpi.log" 2>&1
  rc=$?
  c1=$(tail -n 1 "$tmp/release/thermo.csv" | cut -d, -f9)
  c2=$(tail -n 1 "$tmp/mpi/thermo.csv" 2>/dev/null | cut -d, -f9)
  [ $rc -eq 0 ] && [ "$c1" = "$c2" ]
  check "two ranks run with the pages handed back, $c2 contacts at the end as on one rank ($c1)" $? "exit $rc, contacts $c2 vs $c1: $(tail -n 3 "$tmp/mpi.log" | tr '\n' '|')"
fi
