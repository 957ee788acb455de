#!/usr/bin/env bash
# bad_input.sh - configuration errors stop `mmdem run` before anything is written (DESIGN.md
# "Run description": "file:line:column: message naming what is allowed"; STYLE.md item 8).
#
# Each case writes a small run description whose offending token sits at a position counted
# by hand from the text below (the column is noted next to the line), runs
#   mmdem run FILE --out TMP/out/NAME
# and checks: the exit status is non-zero; stderr is exactly one line
#   "mmdem: FILE:LINE:COL: key.path: message"
# at the expected line and column and with the expected key path; the message says what is
# allowed where there is a choice; and neither TMP/out/NAME nor TMP/out exists afterwards.
# Values given with --set have no line in the file: their location is "--set key.path".
# Also: `mmdem check` on a good file exits 0 and creates no file; `mmdem list` names the
# built-ins; `mmdem` without arguments exits non-zero.
# Run from the repository root: MMDEM=build/mmdem bash tests/cases/bad_input.sh
set -u
M=${MMDEM:-build/mmdem}
case $M in /*) ;; *) M=$PWD/$M ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/cwd"

ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }

# the base description, 15 lines, valid as it stands ("good.yaml" below); each case edits a
# line of it with sed, so the line numbers in the cases are those of this text
base() {
  cat <<'EOF'
name: bad
materials:
  glass: {density: 2500, youngs_modulus: 1.0e7}
contact:
  - {pair: default, law: hertz_mindlin}
shapes:
  bead: {type: sphere, radius: 0.005}
bodies:
  - shape: bead
    material: glass
    list:
      - {x: [0, 0, 0.01]}
      - {x: [0.02, 0, 0.01]}
integrator: {type: verlet, dt: 1.0e-5}
run: {steps: 10}
EOF
}

# expect_error NAME FILE LOC KEYPATH [--must TEXT]... [-- EXTRA ARGS]
#   LOC "LINE:COL" for a file location, or "--set key.path"; KEYPATH "" when none is expected
#   (a YAML syntax error has no key path yet).
expect_error() {
  local name=$1 file=$2 loc=$3 kpath=$4
  shift 4
  local must=() extra=()
  while [ $# -gt 0 ]; do
    case $1 in
      --must) must+=("$2"); shift 2 ;;
      --) shift; extra=("$@"); break ;;
      *) echo "bad_input.sh: bad argument $1" >&2; exit 2 ;;
    esac
  done
  local out="$T/out/$name" rc lines msg prefix
  (cd "$T/cwd" && "$M" run "$file" --out "$out" "${extra[@]}" > "$T/stdout" 2> "$T/stderr")
  rc=$?
  if [ "$rc" -eq 0 ]; then nok "$name: exit status" "0 for a bad run description"; else ok "$name: exit status $rc"; fi
  lines=$(grep -c . "$T/stderr")
  msg=$(grep . "$T/stderr" | head -n 1)
  if [ "$lines" -ne 1 ]; then nok "$name: one message" "stderr has $lines lines: $(head -c 600 "$T/stderr" | tr '\n' '|')"
  else ok "$name: one message"; fi
  case $loc in
    --set*) prefix="mmdem: $loc: " ;;
    *) if [ -n "$kpath" ]; then prefix="mmdem: $file:$loc: $kpath: "; else prefix="mmdem: $file:$loc: "; fi ;;
  esac
  if [[ "$msg" == "$prefix"* ]]; then ok "$name: location and key path"
  else nok "$name: location and key path" "expected '$prefix...', got '$msg'"; fi
  for m in "${must[@]}"; do
    if [[ "$msg" == *"$m"* ]]; then ok "$name: message names '$m'"
    else nok "$name: message names '$m'" "got '$msg'"; fi
  done
  if [ -e "$out" ] || [ -e "$T/out" ]; then nok "$name: nothing written" "$(cd "$T" && find out | head -n 5 | tr '\n' ' ')"
  else ok "$name: nothing written"; fi
  if [ -n "$(ls -A "$T/cwd")" ]; then nok "$name: nothing in the working directory" "$(ls -A "$T/cwd" | tr '\n' ' ')"; rm -rf "${T:?}/cwd"/*; fi
}

# 1. YAML syntax error: line 15 "run: {steps: [10}" - the '}' at column 17 closes a flow
#    sequence that was never closed
f=$T/syntax.yaml
base | sed '15s/.*/run: {steps: [10}/' > "$f"
expect_error syntax "$f" 15:17 "" --must "YAML syntax error" --must "']'"

# 2. unknown key: line 3 "  glass: {density: 2500, youngs_modulus: 1.0e7, colour: red}";
#    'colour' starts at column 49
f=$T/unknown_key.yaml
base | sed '3s/.*/  glass: {density: 2500, youngs_modulus: 1.0e7, colour: red}/' > "$f"
expect_error unknown_key "$f" 3:49 materials.glass --must "unknown key 'colour'" \
  --must "allowed: density, youngs_modulus, poisson_ratio, restitution, friction, friction_dynamic"

# 3. wrong type: a word where a number belongs; line 3 "  glass: {density: heavy, ...}",
#    'heavy' at column 20
f=$T/wrong_type.yaml
base | sed '3s/density: 2500/density: heavy/' > "$f"
expect_error wrong_type "$f" 3:20 materials.glass.density --must "expected a number" --must "'heavy'"

# 3b. wrong type: a number where a list of three belongs; line 2 "gravity: -9.81" at column 10
f=$T/wrong_type_list.yaml
base | sed '2s/^/gravity: -9.81\n/' > "$f"
expect_error wrong_type_list "$f" 2:10 gravity --must "expected a list of 3 numbers" --must "'-9.81'"

# 4. negative radius: line 7 "  bead: {type: sphere, radius: -0.005}", '-0.005' at column 32
f=$T/negative_radius.yaml
base | sed '7s/radius: 0.005/radius: -0.005/' > "$f"
expect_error negative_radius "$f" 7:32 shapes.bead.radius --must "radius must be > 0" --must "-0.005"

# 5. unknown contact law: line 5 "  - {pair: default, law: hertzian}", 'hertzian' at column 26
f=$T/unknown_law.yaml
base | sed '5s/law: hertz_mindlin/law: hertzian/' > "$f"
expect_error unknown_law "$f" 5:26 "contact[0].law" --must "unknown contact law 'hertzian'" \
  --must "hertz_mindlin" --must "hooke" --must "hertz"

# 5b. law hertz refuses restitution (no closed form for the damped Hertz contact): line 5
#     "  - {pair: default, law: hertz, params: {kn: 1.0e9, restitution: 0.9}}", the value 0.9
#     at column 66
f=$T/hertz_restitution.yaml
base | sed '5s/.*/  - {pair: default, law: hertz, params: {kn: 1.0e9, restitution: 0.9}}/' > "$f"
expect_error hertz_restitution "$f" 5:66 "contact[0].params.restitution" --must "restitution is not accepted" --must "gamma_n"

# 6. unknown shape type: line 7 "  bead: {type: cube, radius: 0.005}", 'cube' at column 16
f=$T/unknown_shape.yaml
base | sed '7s/type: sphere/type: cube/' > "$f"
expect_error unknown_shape "$f" 7:16 shapes.bead.type --must "unknown shape type 'cube'" --must "sphere"

# 7. unknown integrator: line 14 "integrator: {type: euler, dt: 1.0e-5}", 'euler' at column 20
f=$T/unknown_integrator.yaml
base | sed '14s/type: verlet/type: euler/' > "$f"
expect_error unknown_integrator "$f" 14:20 integrator.type --must "unknown integrator 'euler'" --must "verlet"

# 8. missing CSV body file: lines 11-13 become "    file: nothere.csv" (line 11), the file
#    name at column 11; relative names are taken relative to the YAML file's directory
f=$T/missing_file.yaml
base | sed '11s/.*/    file: nothere.csv/; 12,13d' > "$f"
expect_error missing_file "$f" 11:11 "bodies[0].file" --must "cannot open '$T/nothere.csv'" \
  --must "No such file"

# 9. overlapping bodies in a list: line 13 "      - {x: [0.008, 0, 0.01]}" is 0.008 m from the
#    first body, 0.002 m closer than two radii. The message is located at the list item of
#    the body placed later (bodies[0].list[1], line 13, the flow mapping at column 9) and
#    names both bodies, the overlap and the centres.
f=$T/overlap.yaml
base | sed '13s/0.02, 0, 0.01/0.008, 0, 0.01/' > "$f"
expect_error overlap "$f" 13:9 "bodies[0].list[1]" --must "bodies 0 and 1 overlap" --must "by 0.002 m" \
  --must "[0.008, 0, 0.01]"

# 10. periodic domain shorter than two particle diameters: line 2
#     "domain: {lo: [0, 0, 0], hi: [0.015, 0.1, 0.1], periodic: [true, false, false]}",
#     the periodic list at column 58; 0.015 m < 2 x 0.01 m
f=$T/periodic.yaml
#     (the one body, line 13, sits inside the domain)
base | sed '1a domain: {lo: [0, 0, 0], hi: [0.015, 0.1, 0.1], periodic: [true, false, false]}' |
  sed '14d; 13s/.*/      - {x: [0.0075, 0.05, 0.05]}/' > "$f"
expect_error periodic "$f" 2:58 domain.periodic --must "periodic length along x (0.015 m)" \
  --must "at least two particle diameters (0.02 m)"

# 11. --set with a bad value: no line in the file, the location is the assignment
f=$T/good.yaml
base > "$f"
expect_error set_not_a_number "$f" "--set integrator.dt" "" --must "expected a number, got 'abc'" \
  -- --set integrator.dt=abc
expect_error set_out_of_range "$f" "--set shapes.bead.radius" "" --must "radius must be > 0 (got -1)" \
  -- --set shapes.bead.radius=-1
expect_error set_unknown_key "$f" "--set run.step" "" --must "unknown key 'step'" \
  --must "allowed: end_time, steps" -- --set run.step=5

# mmdem check on a good file: exit 0, creates no file (the default output dir would be out/bad)
before=$(find "$T" ! -name stdout ! -name stderr | sort)
(cd "$T/cwd" && "$M" check "$f" > "$T/stdout" 2> "$T/stderr")
rc=$?
after=$(find "$T" ! -name stdout ! -name stderr | sort)
if [ "$rc" -eq 0 ]; then ok "check good file: exit status 0"; else nok "check good file: exit status 0" "got $rc: $(head -c 400 "$T/stderr")"; fi
if [ "$before" = "$after" ]; then ok "check good file: nothing written"
else nok "check good file: nothing written" "$(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"; fi
if grep -q ": ok$" "$T/stdout"; then ok "check good file: says ok"; else nok "check good file: says ok" "$(head -c 400 "$T/stdout")"; fi

# mmdem check on a bad file fails the same way as run
(cd "$T/cwd" && "$M" check "$T/overlap.yaml" > "$T/stdout" 2> "$T/stderr")
rc=$?
if [ "$rc" -ne 0 ] && grep -q "^mmdem: $T/overlap.yaml:13:9: bodies\[0\].list\[1\]: " "$T/stderr"; then ok "check bad file: fails with location"
else nok "check bad file: fails with location" "exit $rc, $(head -c 400 "$T/stderr")"; fi

# mmdem list
"$M" list > "$T/stdout" 2> "$T/stderr"
rc=$?
if [ "$rc" -eq 0 ]; then ok "list: exit status 0"; else nok "list: exit status 0" "got $rc"; fi
for n in sphere plane hooke hertz_mindlin verlet; do
  if grep -Eq "^ +$n +" "$T/stdout"; then ok "list: names $n"; else nok "list: names $n" "$(tr '\n' '|' < "$T/stdout")"; fi
done

# mmdem without arguments, with an unknown command, with a missing file
"$M" > "$T/stdout" 2> "$T/stderr"
rc=$?
if [ "$rc" -ne 0 ] && grep -q usage "$T/stderr"; then ok "no arguments: usage, exit $rc"; else nok "no arguments: usage and non-zero exit" "exit $rc"; fi
"$M" frobnicate > "$T/stdout" 2> "$T/stderr"
rc=$?
if [ "$rc" -ne 0 ]; then ok "unknown command: exit $rc"; else nok "unknown command: non-zero exit" "exit 0"; fi
"$M" run "$T/nothere.yaml" --out "$T/out/nofile" > "$T/stdout" 2> "$T/stderr"
rc=$?
if [ "$rc" -ne 0 ] && [ "$(grep -c . "$T/stderr")" -eq 1 ] && grep -q "^mmdem: $T/nothere.yaml: cannot open: No such file" "$T/stderr" && [ ! -e "$T/out" ]; then
  ok "missing run description: one message, nothing written"
else nok "missing run description: one message, nothing written" "exit $rc, $(head -c 400 "$T/stderr")"; fi
