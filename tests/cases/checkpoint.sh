#!/usr/bin/env bash
# test-cost: 22 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# checkpoint.sh - checkpoints and restart (DESIGN.md "Output": output.checkpoint_every and
# `mmdem run FILE --restart CHECKPOINT` continue "to the bitwise-same result as an uninterrupted
# run"; src/core/checkpoint.c, src/core/guard.c).
#
# The reference is the uninterrupted run of the same description, and the comparison is byte
# for byte: bodies_final.csv (%.17g), walls.csv, track.csv, every VTK file and .pvd series, and
# thermo.csv without its wall_s column (wall-clock seconds). Cases (tests/cases/checkpoint.yaml:
# periodic sides, friction history, a moving piston removed at step ~734):
#   - a run stopped by SIGTERM at step 577 (MMDEM_DEBUG_SIGNAL_STEP) exits 143 with a message
#     naming its checkpoint; restarted from it, the files equal the uninterrupted run's;
#   - restarts from the periodic checkpoints (step 800: after the piston's removal; 1200) into a
#     copy of the finished run's directory cut the rows after the checkpoint and end equal;
#   - SIGINT exits 130; a real `kill -TERM` at an unknown step, restarted, equals an
#     uninterrupted run of the same length;
#   - refused with a message naming the file and the fault, leaving the output untouched: a
#     changed model (--set materials.glass.density), another integrator type, a truncated, a
#     corrupted (payload or header), a foreign, a newer-version and an inconsistent (valid
#     checksums) checkpoint, a missing file (an older version: checkpoint_features.sh);
#     changed integrator settings are accepted with a warning; `mmdem check --restart` reads
#     and checks without running;
#   - every registered integrator: interrupted and restarted, bitwise equal when it has a
#     checkpoint method; one without gets a warning at restart (reported, with whether the
#     result happened to match).
set -u
Y=$PWD/tests/cases/checkpoint.yaml
. tests/tools/case_lib.sh

# expect_rc NAME RC LOG TEXT...: exit status RC and every TEXT in LOG
expect() {
  local name=$1 want=$2 got=$3 log=$4
  shift 4
  local miss=""
  for t in "$@"; do grep -qF -- "$t" "$log" || miss="$miss [$t]"; done
  if [ "$got" = "$want" ] && [ -z "$miss" ]; then ok "$name"
  else nok "$name" "exit $got (want $want), missing:$miss; output: $(tail -n 3 "$log" | tr '\n' '|')"; fi
}

# 1. the reference
"$M" run "$Y" --out A --quiet > A.log 2>&1
rc=$?
expect "uninterrupted run" 0 $rc A.log "done: 1500 steps"
ls A/checkpoints/step-400.ckpt A/checkpoints/step-800.ckpt A/checkpoints/step-1200.ckpt > /dev/null 2>&1 &&
  ! ls A/checkpoints | grep -q tmp && ok "checkpoint_every: 400 wrote step-400, -800, -1200.ckpt and no temporary file" ||
  nok "checkpoint_every" "$(ls A/checkpoints)"

# 2. SIGTERM at step 577, the end of that step
MMDEM_DEBUG_SIGNAL_STEP=577 "$M" run "$Y" --out B --quiet > B.log 2>&1
rc=$?
expect "SIGTERM at step 577: exit 143, message naming the checkpoint" 143 $rc B.log "interrupted by SIGTERM at step 577" "B/checkpoints/step-577.ckpt" "--restart"
"$PY" - B/thermo.csv <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
n = len(lines[0].split(","))
rows = [l for l in lines[1:] if l]
whole = all(len(l.split(",")) == n for l in rows) and open(sys.argv[1]).read().endswith("\n")
last = int(rows[-1].split(",")[0])
what = "interrupted thermo.csv: whole rows, the last at step 577"
print("ok - %s" % what if whole and last == 577 else "not ok - %s: last step %d, whole %s" % (what, last, whole))
EOF
"$M" check "$Y" --restart B/checkpoints/step-577.ckpt > check.log 2>&1
expect "mmdem check --restart: reads and checks the checkpoint" 0 $? check.log "step-577.ckpt: ok"
"$M" run "$Y" --out B --quiet --restart B/checkpoints/step-577.ckpt > B2.log 2>&1
rc=$?
expect "restart from step 577" 0 $rc B2.log "continuing from B/checkpoints/step-577.ckpt at step 577" "done: 1500 steps"
same_output A B "SIGTERM at 577 + restart"

# 3. restarts from periodic checkpoints into a copy of the finished run
for s in 800 1200; do
  cp -r A C$s
  "$M" run "$Y" --out C$s --quiet --restart C$s/checkpoints/step-$s.ckpt > C$s.log 2>&1
  expect "restart from the periodic checkpoint of step $s" 0 $? C$s.log "at step $s"
  same_output A C$s "restart from step $s over the finished run's files"
done

# 4. SIGINT, and a real SIGTERM at an unknown step
MMDEM_DEBUG_SIGNAL=INT MMDEM_DEBUG_SIGNAL_STEP=1000 "$M" run "$Y" --out I --quiet > I.log 2>&1
expect "SIGINT at step 1000: exit 130" 130 $? I.log "interrupted by SIGINT at step 1000"
"$M" run "$Y" --out K --quiet --set run.steps=1000000 > K.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  [ -f K/thermo.csv ] && [ "$(wc -l < K/thermo.csv)" -ge 8 ] && break
  sleep 0.1
done
kill -TERM $pid
wait $pid
rc=$?
n=$(sed -n 's/.*interrupted by SIGTERM at step \([0-9]*\).*/\1/p' K.log)
expect "kill -TERM during a run: exit 143 at the end of a step" 143 $rc K.log "interrupted by SIGTERM at step" "K/checkpoints/step-$n.ckpt"
if [ -n "$n" ]; then
  steps=$((n + 300))
  "$M" run "$Y" --out K --quiet --set run.steps=$steps --restart K/checkpoints/step-$n.ckpt > K2.log 2>&1
  expect "restart after kill -TERM at step $n, run to $steps (run: may change)" 0 $? K2.log "done: $steps steps"
  "$M" run "$Y" --out KR --quiet --set run.steps=$steps > KR.log 2>&1
  same_output KR K "kill -TERM at step $n + restart"
fi

# 5. refusals: message names the file and the fault; the output is left as it was
ck=B/checkpoints/step-577.ckpt
before=$(md5sum B/thermo.csv B/bodies_final.csv | md5sum)
refuse() { # NAME CHECKPOINT TEXT [-- EXTRA ARGS]
  local name=$1 file=$2 text=$3
  shift 3
  [ "${1:-}" = "--" ] && shift
  "$M" run "$Y" --out B --quiet --restart "$file" "$@" > R.log 2>&1
  local rc=$?
  if [ $rc -eq 1 ] && grep -qF -- "$text" R.log && grep -qF -- "$file" R.log && [ "$(md5sum B/thermo.csv B/bodies_final.csv | md5sum)" = "$before" ]; then
    ok "refused: $name ($(grep '^mmdem:' R.log | head -n 1 | cut -c1-150)...)"
  else nok "refused: $name" "exit $rc, expected '$text' and the file name; output: $(tail -n 2 R.log | tr '\n' '|')"; fi
}
refuse "another model" $ck "materials.glass.density = 2500', the run description now 'materials.glass.density = 2600'" -- --set materials.glass.density=2600
refuse "another integrator type" $ck "written by integrator verlet, the run uses trapezoid" -- --set integrator.type=trapezoid
head -c 1000 $ck > trunc.ckpt
refuse "truncated" trunc.ckpt "is truncated: 1000 bytes, its header announces"
head -c 20 $ck > trunc2.ckpt
refuse "truncated inside the header" trunc2.ckpt "is truncated: 20 bytes, shorter than its 48-byte header"
"$PY" - $ck <<'EOF'
import struct, sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
c = bytearray(d); c[len(c) // 2] ^= 0x10                       # one bit in the payload
open("corrupt.ckpt", "wb").write(c)
h = bytearray(d); h[17] ^= 0x01                                 # the payload size
open("corrupt_head.ckpt", "wb").write(h)
v = bytearray(d); v[8:12] = struct.pack("<I", 99)               # version 99, header CRC redone
v[44:48] = struct.pack("<I", zlib.crc32(bytes(v[:44])))
open("newer.ckpt", "wb").write(v)
# valid checksums, but the last section is cut short: sizes and CRCs redone
i = bytearray(d[:-8]); psize = len(i) - 48
i[16:24] = struct.pack("<Q", psize); i[24:28] = struct.pack("<I", zlib.crc32(bytes(i[48:])))
i[44:48] = struct.pack("<I", zlib.crc32(bytes(i[:44])))
open("inconsistent.ckpt", "wb").write(i)
EOF
refuse "one flipped bit in the payload" corrupt.ckpt "is corrupted: checksum mismatch"
refuse "a corrupted header" corrupt_head.ckpt "is corrupted: header checksum mismatch"
refuse "a newer format version" newer.ckpt "has format version 99; this mmdem"
refuse "valid checksums, a section cut short" inconsistent.ckpt "is inconsistent"
refuse "not a checkpoint" "$Y" "is not an mmdem checkpoint"
refuse "a missing file" nothere.ckpt "cannot open checkpoint 'nothere.ckpt'"
"$M" check "$Y" --restart corrupt.ckpt > R.log 2>&1
expect "mmdem check --restart refuses a corrupted checkpoint" 1 $? R.log "is corrupted"
cp -r A S
"$M" run "$Y" --out S --quiet --restart S/checkpoints/step-800.ckpt --set integrator.dt_fraction=0.04 > S.log 2>&1
rc=$?
dts=$(awk -F, 'NR > 1 && $1 > 800 {print $3}' S/thermo.csv | sort -u | wc -l)
if [ $rc -eq 0 ] && grep -q "warning: other integrator settings than those of checkpoint" S.log && grep -q "integrator.dt_fraction = 0.05', the run description now 'integrator.dt_fraction = 0.04'" S.log &&
  [ "$(awk -F, 'NR > 1 && $1 == 850 {print $3}' S/thermo.csv)" != "$(awk -F, 'NR > 1 && $1 == 850 {print $3}' A/thermo.csv)" ]; then
  ok "other integrator settings on restart: a warning naming them, the new dt from step 800 on"
else nok "other integrator settings on restart" "exit $rc; $(tail -n 2 S.log | tr '\n' '|')"; fi

# 6. every registered integrator
for ig in $("$M" list | awk '/^integrators:/ {f = 1; next} /^[a-z]/ {f = 0} f {print $1}'); do
  [ "$ig" = verlet ] && continue
  set_=(--set integrator.type=$ig --set run.steps=240)
  "$M" run "$Y" --out F-$ig --quiet "${set_[@]}" > F-$ig.log 2>&1
  rcf=$?
  MMDEM_DEBUG_SIGNAL_STEP=177 "$M" run "$Y" --out P-$ig --quiet "${set_[@]}" > P-$ig.log 2>&1
  rcp=$?
  "$M" run "$Y" --out P-$ig --quiet "${set_[@]}" --restart P-$ig/checkpoints/step-177.ckpt > R-$ig.log 2>&1
  rcr=$?
  if [ $rcf -ne 0 ]; then ok "integrator $ig: does not run this case ($(tail -n 1 F-$ig.log | cut -c1-120)); not tested"; continue; fi
  if [ $rcp -ne 143 ] || [ $rcr -ne 0 ]; then nok "integrator $ig: interrupt and restart" "exit $rcp, $rcr: $(tail -n 2 R-$ig.log | tr '\n' '|')"; continue; fi
  if grep -q "has no checkpoint method" R-$ig.log; then
    same=no
    cmp -s F-$ig/bodies_final.csv P-$ig/bodies_final.csv && cmp -s <(nowall F-$ig/thermo.csv) <(nowall P-$ig/thermo.csv) && same=yes
    ok "integrator $ig: no checkpoint method (ops->checkpoint): the restart warns; bitwise equal here anyway: $same"
  else
    same_output F-$ig P-$ig "integrator $ig: SIGTERM at 177 + restart"
  fi
done
