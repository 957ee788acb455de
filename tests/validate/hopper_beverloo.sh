#!/usr/bin/env bash
# test-timeout: 3600
# Hopper discharge (config/hopper.yaml as it is: 2904 beads through a conical hopper built with
# Gmsh's OpenCASCADE kernel, orifice opened at 0.4 s, 1.4 s simulated; 3.5 minutes of CPU on this
# machine): the discharge rate against Beverloo's correlation, statics before the opening, mass
# accounting and a PNG plot (KEEP=DIR keeps the run and DIR/hopper_full.png). Checks and
# constants in tests/cases/hopper_beverloo.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/cases/hopper_beverloo.py full "$tmp"
