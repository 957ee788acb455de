#!/usr/bin/env bash
# failure.sh - a run that goes wrong stops with a diagnosis, leaves whole, readable files and
# the checkpoint of its last good state, and exits non-zero (src/core/guard.c, run.c); what
# would not run is refused before step 0 (dt above the collision time, memory).
#
#   - NaN (MMDEM_DEBUG_NAN_STEP=230 puts one in body 0's velocity after step 230): message
#     naming step 230, body 0, its values, and the checkpoint of step 200 (the last thermo
#     step); thermo.csv, bodies_final.csv and every VTK file whole and read back by VTK; the
#     restart from step 200 ends equal to the uninterrupted run (bodies_final.csv, thermo);
#   - a diverging run (failure_diverge.yaml: dt = 0.97 tc, energy grows at each bounce): a
#     ball leaves the domain; diagnosis, files intact; restarted from the last good state with
#     a smaller dt (integrator settings may change on restart), it runs to the end;
#   - dt above the collision time with an explicit integrator: refused at set-up, naming dt,
#     tc, the law and the materials, at the --set location; nothing written;
#   - the rejected-step protocol, with the test plugin integrator `stubborn`
#     (tests/cases/guard_plugins): retries with dt/2 until below dt_min, then a diagnosis
#     (step, dt, dt_next, dt_min, iterations, residual) and the last good checkpoint; the
#     default dt_min (1e-9 of the configured dt) stops endless halving; a rejection without a
#     smaller dt; an error raised inside a step keeps its message and saves the last good state;
#   - an integrator with private state between steps (stubborn wobble: its dt depends on a
#     counter): through its checkpoint method the restart equals the uninterrupted run;
#     without it the restart warns (and here differs);
#   - memory: a 1e9-body lattice is refused by `mmdem check` at once with the estimate and the
#     default limit; MMDEM_MEMORY_LIMIT and run.memory_limit set the limit; a malformed limit
#     is an error at its location;
#   - without a domain: key bodies may fly anywhere.
set -u
Y=$PWD/tests/cases/checkpoint.yaml
D=$PWD/tests/cases/failure_diverge.yaml
. tests/tools/case_lib.sh
# expect NAME RC GOT LOG TEXT...: exit status, each TEXT in LOG, and the error printed once
expect() {
  local name=$1 want=$2 got=$3 log=$4
  shift 4
  local miss=""
  for t in "$@"; do grep -qF -- "$t" "$log" || miss="$miss [$t]"; done
  if [ "$got" = "$want" ] && [ -z "$miss" ]; then ok "$name"
  else nok "$name" "exit $got (want $want), missing:$miss; output: $(tail -n 3 "$log" | tr '\n' '|')"; fi
}

# 1. NaN
"$M" run "$Y" --out A --quiet > A.log 2>&1 || nok "reference run" "$(tail -n 2 A.log)"
MMDEM_DEBUG_NAN_STEP=230 "$M" run "$Y" --out N --quiet > N.log 2>&1
expect "NaN after step 230: diagnosis, last good checkpoint, exit 1" 1 $? N.log \
  "mmdem: the state is no longer finite at step 230" "body 0 x = [" "v = [nan" "The last good state, step 200, is in N/checkpoints/step-200.ckpt"
[ "$(grep -c '^mmdem:' N.log)" = 1 ] && ok "NaN: the error is printed once" || nok "NaN: the error is printed once" "$(grep -c '^mmdem:' N.log) lines"
[ "$(tail -n 1 N/thermo.csv | cut -d, -f1)" = 230 ] && ok "NaN: thermo.csv ends with the row of step 230" || nok "NaN: last thermo row" "$(tail -n 1 N/thermo.csv | cut -c1-60)"
"$PY" "$R/tests/tools/intact.py" "NaN run" N 320
"$M" run "$Y" --out N --quiet --restart N/checkpoints/step-200.ckpt > N2.log 2>&1
rc=$?
if [ $rc -eq 0 ] && cmp -s A/bodies_final.csv N/bodies_final.csv && cmp -s <(nowall A/thermo.csv) <(nowall N/thermo.csv); then
  ok "NaN: restarted from the last good state (step 200), the run ends equal to the uninterrupted one"
else nok "NaN: restart from the last good state" "exit $rc; $(tail -n 2 N2.log | tr '\n' '|')"; fi

# 1b. NaN in a force (MMDEM_DEBUG_NAN_WHAT=force, after step 230): step 231's kick makes it a
#     velocity, found by verlet's own check on its passes over the bodies (run.c then skips its
#     scan), with the same diagnosis one step later
MMDEM_DEBUG_NAN_STEP=230 MMDEM_DEBUG_NAN_WHAT=force "$M" run "$Y" --out NF --quiet > NF.log 2>&1
expect "NaN in a force after step 230: found at step 231 by the integrator's check, diagnosis, exit 1" 1 $? NF.log \
  "mmdem: the state is no longer finite at step 231" "body 0 x = [" "v = [nan" "The last good state, step 200, is in NF/checkpoints/step-200.ckpt"
[ "$(tail -n 1 NF/thermo.csv | cut -d, -f1)" = 231 ] && ok "NaN in a force: thermo.csv ends with the row of step 231" || nok "NaN in a force: last thermo row" "$(tail -n 1 NF/thermo.csv | cut -c1-60)"

# 2. a diverging run
"$M" run "$D" --out V --quiet > V.log 2>&1
expect "diverging run (dt = 0.97 tc): a ball leaves the domain, diagnosis and checkpoint" 1 $? V.log \
  "left the domain at step" "beyond hi z = 0.008 m" "dt = 0.00035 s is 0.974 of the shortest collision time" "The last good state, step" "V/checkpoints/step-"
"$PY" "$R/tests/tools/intact.py" "diverging run" V 2
ck=$(sed -n 's/.*is in \(V\/checkpoints\/step-[0-9]*\.ckpt\).*/\1/p' V.log)
"$M" run "$D" --out V --quiet --restart "$ck" --set integrator.dt=1e-4 > V2.log 2>&1
rc=$?
s=${ck##*step-}; s=${s%.ckpt}
# the ball has gained its energy by then: with the smaller dt it flies out later, or not
if { [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && grep -q "warning: other integrator settings" V2.log && grep -qF "continuing from $ck at step $s" V2.log &&
  [ "$(awk -F, -v s=$s 'NR > 1 && $1 > s {print $3; exit}' V/thermo.csv)" = 0.0001 ]; then
  ok "diverging run: restarted from $ck with --set integrator.dt=1e-4 (a warning), it continues at step $s with dt = 1e-4 s"
else nok "diverging run: restart with a smaller dt" "exit $rc; $(tail -n 2 V2.log | tr '\n' '|')"; fi

# 3. dt above tc, explicit integrator
"$M" run "$D" --out W --quiet --set integrator.dt=5e-4 > W.log 2>&1
expect "dt = 5e-4 s > tc refused at set-up for verlet" 1 $? W.log \
  "mmdem: --set integrator.dt: dt = 0.0005 s exceeds the shortest collision time tc = 0.000359348 s (law hooke between materials steel and steel" "explicit integrator verlet is unstable"
[ ! -e W ] && ok "dt > tc: nothing written" || nok "dt > tc: nothing written" "W exists"

# 4. the rejected-step protocol
make --no-print-directory -C "$R/tests/cases/guard_plugins" -f "$R/plugins/Makefile" OUT="$T/gp" MMDEM_INC="$R/src/core" > make.log 2>&1
P=(--plugin "$T/gp/stubborn.so" --set integrator.type=stubborn --set run.steps=100)
if [ -f gp/stubborn.so ]; then
  "$M" run "$Y" --out S1 --quiet "${P[@]}" --set integrator.reject_from=40 --set integrator.dt_min=1e-7 > S1.log 2>&1
  expect "rejections down to dt_min: diagnosis and last good checkpoint (step 0)" 1 $? S1.log \
    "integrator stubborn cannot converge at step 40" "not converged, 7 iterations, residual 0.25" "is below dt_min = 1e-07 s" "The last good state, step 0, is in S1/checkpoints/step-0.ckpt"
  "$PY" - S1/thermo.csv <<'EOF'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))
# dt auto = 1.2268e-5 s halved 6 times (to 1.92e-7 s) is retried; the 7th half, 9.6e-8 s, is
# below dt_min: 6 retries in the rejected column
print("ok - rejected steps counted in thermo.csv: %s" % r[-1]["rejected"] if int(r[-1]["rejected"]) == 6 else "not ok - rejected column: %s (want 6)" % r[-1]["rejected"])
EOF
  "$M" run "$Y" --out S2 --quiet "${P[@]}" --set integrator.reject_from=40 > S2.log 2>&1
  expect "default dt_min (1e-9 of the configured dt) ends the halving" 1 $? S2.log "is below dt_min =" "(1e-9 of the configured dt)"
  "$M" run "$Y" --out S3 --quiet "${P[@]}" --set integrator.reject_from=40 --set integrator.no_smaller=true > S3.log 2>&1
  expect "a rejection without a smaller dt" 1 $? S3.log "integrator stubborn rejected step 40" "without suggesting a smaller dt (dt_next = 0" "S3/checkpoints/step-0.ckpt"
  "$M" run "$Y" --out S4 --quiet "${P[@]}" --set integrator.error_at=25 --set output.thermo_every=10 > S4.log 2>&1
  expect "an error inside a step: its message, the last good checkpoint" 1 $? S4.log "stubborn: a failure inside step 25 (error_at)" "The last good state, step 20, is in S4/checkpoints/step-20.ckpt"
  "$PY" "$R/tests/tools/intact.py" "error inside a step" S4 320
  # private state through the checkpoint method
  Q=("${P[@]}" --set integrator.wobble=0.1)
  "$M" run "$Y" --out Q0 --quiet "${Q[@]}" > Q0.log 2>&1
  MMDEM_DEBUG_SIGNAL_STEP=31 "$M" run "$Y" --out Q1 --quiet "${Q[@]}" > Q1.log 2>&1
  "$M" run "$Y" --out Q1 --quiet "${Q[@]}" --restart Q1/checkpoints/step-31.ckpt > Q1r.log 2>&1
  rc=$?
  if [ $rc -eq 0 ] && ! grep -q warning Q1r.log && cmp -s Q0/bodies_final.csv Q1/bodies_final.csv && cmp -s <(nowall Q0/thermo.csv) <(nowall Q1/thermo.csv); then
    ok "an integrator's private state (adaptive dt counter) through its checkpoint method: restart bitwise equal"
  else nok "integrator checkpoint method" "exit $rc; $(tail -n 2 Q1r.log | tr '\n' '|')"; fi
  MMDEM_DEBUG_SIGNAL_STEP=31 "$M" run "$Y" --out Q2 --quiet "${Q[@]}" --set integrator.checkpoint=false > Q2.log 2>&1
  "$M" run "$Y" --out Q2 --quiet "${Q[@]}" --set integrator.checkpoint=false --restart Q2/checkpoints/step-31.ckpt > Q2r.log 2>&1
  if grep -q "integrator stubborn has no checkpoint method" Q2r.log && ! cmp -s Q0/bodies_final.csv Q2/bodies_final.csv; then
    ok "without a checkpoint method: the restart warns, and the private state is lost (results differ)"
  else nok "without a checkpoint method" "$(tail -n 2 Q2r.log | tr '\n' '|')"; fi
else nok "build the test plugin stubborn" "$(tail -n 5 make.log | tr '\n' '|')"; fi

# 5. memory
cat > big.yaml <<'EOF'
name: big
materials: {glass: {density: 2500, youngs_modulus: 5.0e7}}
contact: [{pair: default, law: hertz_mindlin}]
shapes: {bead: {type: sphere, radius: 0.0004}}
bodies:
  - {shape: bead, material: glass, lattice: {lo: [0, 0, 0], hi: [0.999, 0.999, 0.999], spacing: 0.001}}
integrator: {type: verlet, dt: auto}
run: {steps: 10}
EOF
t0=$(date +%s%N)
"$M" check big.yaml > big.log 2>&1
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect "1e9 bodies refused by mmdem check with the estimate ($ms ms)" 1 $rc big.log \
  "big.yaml:6:45: bodies[0].lattice: these bodies would need about" "(1e+09 bodies x" "per body: store" "more than the limit of" "(80 % of the physical memory)"
[ $ms -lt 20000 ] && ok "refused before allocating ($ms ms)" || nok "refused before allocating" "$ms ms"
MMDEM_MEMORY_LIMIT=100K "$M" check "$Y" > mem1.log 2>&1
expect "MMDEM_MEMORY_LIMIT=100K refuses 320 bodies" 1 $? mem1.log "bodies[0].lattice: these bodies would need about" "320 bodies x" "more than the limit of 100 KiB (MMDEM_MEMORY_LIMIT)"
MMDEM_MEMORY_LIMIT=100K "$M" check "$Y" --set run.memory_limit=1G > mem2.log 2>&1
expect "run.memory_limit takes precedence over MMDEM_MEMORY_LIMIT" 0 $? mem2.log ": ok"
"$M" check "$Y" --set run.memory_limit=50K > mem3.log 2>&1
expect "run.memory_limit=50K refuses them" 1 $? mem3.log "more than the limit of 50 KiB (run.memory_limit)"
"$M" check "$Y" --set run.memory_limit=lots > mem4.log 2>&1
expect "a malformed run.memory_limit is an error at its location" 1 $? mem4.log "--set run.memory_limit: memory_limit must be a number of bytes"
MMDEM_MEMORY_LIMIT=50% "$M" check "$Y" > mem5.log 2>&1
expect "MMDEM_MEMORY_LIMIT=50% (of the physical memory) accepts them" 0 $? mem5.log ": ok"

# 6. no domain: key, no domain check
sed -e '/^domain:/d' "$D" > free.yaml
"$M" run free.yaml --out F --quiet --set integrator.dt=1e-4 --set 'bodies.0.list.0.v=[0, 0, 3]' --set run.end_time=0.2 > F.log 2>&1
expect "without a domain: key a ball thrown up 3 m/s flies freely" 0 $? F.log "done:"
