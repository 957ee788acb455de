#!/usr/bin/env bash
# Free asymmetric top: energy and angular momentum of verlet's aspherical rotation over 10^5
# steps, and the trajectory against RK4; the same for trapezoid and cd, and variational's refusal.
# Checks in sq_free_top.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/sq_free_top.py "$tmp"
