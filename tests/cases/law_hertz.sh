#!/usr/bin/env bash
# Law `hertz` (hooke.c / hooke.h: law hooke's springs and dashpots scaled by sqrt(delta r_eff),
# LAMMPS gran/hertz/history): head-on impacts of two spheres and of a sphere on a plane wall
# against the closed-form Hertz collision (undamped) and an independent RK4 integration of
# the contact ODE (damped); the fused kernel against the generic pipeline. Checks in
# law_hertz.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/law_hertz.py "$tmp"
