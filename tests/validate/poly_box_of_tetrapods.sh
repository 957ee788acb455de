#!/usr/bin/env bash
# test-timeout: 14400
# 000 example 3.6: config/box_of_tetrapods.yaml runs to rest; active contacts over time as CSV and
# PNG. Very long: verlet at the config's dt 2e-5 s to t = 2.5 s (125000 steps, the fill's impacts),
# then from that checkpoint at dt 8e-5 s to 15 s (156250 steps; benchmarks/tetrapods/README.md:
# about 57 s of CPU per simulated second at rest, 200 in the collapse); poly_box.py allows
# POLY_BOX_TIMEOUT seconds per stage, default 4 h; run by `make validate`. KEEP=DIR keeps the run
# there. Checks in poly_box.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/poly_box.py box_of_tetrapods "$tmp"
