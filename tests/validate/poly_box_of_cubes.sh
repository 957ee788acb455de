#!/usr/bin/env bash
# test-timeout: 3600
# 000 example 3.5: config/box_of_cubes.yaml runs to rest; active contacts over time as CSV and
# PNG. Very long (hours of CPU at the present speed: see benchmarks/tetrapods/README.md); run by
# `make validate`. KEEP=DIR keeps the run there. Checks in poly_box.py.
# Larger steps measured (2026-11-22, helper "poly"): verlet dt = 1e-5 s gains energy (the balance
# e_total + dissipated grew from 10996 J to 15730 J by t = 1.45 s, kinetic energy still ~120 J:
# no rest), dt = 5e-6 s gains 2400 J by t = 0.6 s (1e-5: 3500 J), i.e. first order in dt, as from
# force jumps when pointwise contacts switch features; newmark (dt 1e-4, dt_max 5e-4) cut dt to
# 3e-6 - 1e-4 s in the impacts (353 of 2340 steps rejected by SNES failures by t = 0.185 s).
# The config's dt = 2e-6 s stays.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/poly_box.py box_of_cubes "$tmp"
