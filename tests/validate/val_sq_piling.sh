#!/usr/bin/env bash
# test-timeout: 3600
# Piling (002 section "Piling of particles"): superquadrics a = b = 2 mm, c = 1 mm, n1 = n2 = 4
# poured onto a plate form a steeper heap than volume-equivalent spheres (002: 40 vs 31 deg).
# Long (measured on a 2-core machine under load ~17: 67 min of wall time for the superquadrics, 6 min for
# the spheres): run by `make validate`. KEEP=DIR keeps the runs there. Checks in
# val_sq_piling.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/val_sq_piling.py "$tmp"
