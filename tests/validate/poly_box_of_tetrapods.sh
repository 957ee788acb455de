#!/usr/bin/env bash
# test-timeout: 14400
# 000 example 3.6: config/box_of_tetrapods.yaml runs to rest; active contacts over time as CSV and
# PNG. Very long (verlet, dt 2e-5 s, 750000 steps: over an hour of CPU at the present speed, see
# benchmarks/tetrapods/README.md; poly_box.py allows POLY_BOX_TIMEOUT seconds, default 4 h); run
# by `make validate`. KEEP=DIR keeps the run there. Checks in poly_box.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/poly_box.py box_of_tetrapods "$tmp"
