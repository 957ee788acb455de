#!/usr/bin/env bash
# Small hopper discharge (config/hopper.yaml with 726 beads, about 8 s of CPU): the discharge
# rate against Beverloo's correlation, statics before the opening, mass accounting, a PNG plot.
# Checks and constants in hopper_beverloo.py; the full case is tests/validate/hopper_beverloo.sh.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/hopper_beverloo.py quick "$tmp"
