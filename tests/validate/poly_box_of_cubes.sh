#!/usr/bin/env bash
# test-timeout: 3600
# 000 example 3.5: config/box_of_cubes.yaml runs to rest; active contacts over time as CSV and
# PNG. Very long (hours of CPU at the present speed: see benchmarks/tetrapods/README.md); run by
# `make validate`. KEEP=DIR keeps the run there. Checks in poly_box.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/poly_box.py box_of_cubes "$tmp"
