#!/usr/bin/env bash
# trap_input.sh - configuration errors of the keys added with integrator `trapezoid`, the
# `fields:` mapping (drag, mie) and hertz_mindlin's `tangential` stop `mmdem check` with
# "FILE:LINE:COL: key.path: message" naming what is allowed (DESIGN.md "Run description"),
# and the good description passes. The line and column are those of the offending value (or
# key, or enclosing mapping for a missing key) in the text below, counted by hand.
set -u
M=${MMDEM:-build/mmdem}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

base() {
  cat <<'EOF'
name: trap_input
materials:
  glass: {density: 2500, youngs_modulus: 1.0e7}
contact:
  - {pair: default, law: hertz_mindlin, params: {tangential: rolling_spring}}
fields:
  drag: {c_fluid: 0.1, fluid_velocity: [0, 0, 0]}
  mie: {kappa1: 1.0e-6, lambda1: 2, cutoff: 0.05}
shapes:
  bead: {type: sphere, radius: 0.005}
bodies:
  - {shape: bead, material: glass, list: [{x: [0, 0, 0.01]}, {x: [0.02, 0, 0.01]}]}
integrator: {type: trapezoid, dt: 1.0e-5, phi: 0.5, sweep: jacobi, freeze_rotations: false}
run: {steps: 10}
EOF
}

# expect NAME SED-EXPR LINE:COL TEXT: the edited description fails at LINE:COL with TEXT
expect() {
  local name=$1 expr=$2 loc=$3 text=$4 f="$T/$1.yaml"
  base | sed -e "$expr" > "$f"
  if "$M" check "$f" > "$T/out" 2> "$T/err"; then
    echo "not ok - trap_input $name: accepted"
    return
  fi
  if grep -q "$f:$loc: .*$text" "$T/err"; then echo "ok - trap_input $name: $f:$loc: ...$text"
  else echo "not ok - trap_input $name: expected '$f:$loc: ...$text', got '$(head -c 400 "$T/err")'"; fi
}

base > "$T/good.yaml"
if "$M" check "$T/good.yaml" > "$T/out" 2>&1; then echo "ok - trap_input: the good description passes"
else echo "not ok - trap_input: the good description fails: $(tail -n 2 "$T/out")"; fi
expect phi 's/phi: 0.5/phi: 1.5/' 13:48 "phi must be in \[0, 1\]"
expect sweep 's/sweep: jacobi/sweep: red_black/' 13:60 "'sweep' must be one of: gauss_seidel, jacobi"
expect tol 's/phi: 0.5,/phi: 0.5, tol: 0,/' 13:58 "tol must be in (0, 1)"
expect maxit 's/phi: 0.5,/phi: 0.5, max_iterations: 0,/' 13:69 "max_iterations must be >= 1"
expect tangential 's/tangential: rolling_spring/tangential: roll/' 5:62 "'tangential' must be one of: history, rolling_spring"
expect fields_key 's/  drag: {c_fluid/  wind: {c_fluid/' 7:3 "unknown key 'wind'; allowed: drag, mie"
expect drag_neg 's/c_fluid: 0.1/c_fluid: -0.1/' 7:19 "c_fluid must be >= 0"
expect drag_key 's/fluid_velocity/velocity/' 7:24 "unknown key 'velocity'; allowed: c_fluid, fluid_velocity"
expect mie_cutoff 's/, cutoff: 0.05//' 8:8 "missing required key 'cutoff'"
expect mie_lambda 's/lambda1: 2/lambda1: 0/' 8:34 "lambda1 must be > 0"
