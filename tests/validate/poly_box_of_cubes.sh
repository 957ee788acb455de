#!/usr/bin/env bash
# test-timeout: 3600
# 000 example 3.5: config/box_of_cubes.yaml runs to rest; active contacts over time as CSV and
# PNG; run by `make validate`. KEEP=DIR keeps the run there. Checks in poly_box.py.
# The energy 'created' at larger steps in the previous session (e_balance 10996 -> 15730 J by
# t = 1.45 s at dt = 1e-5 s) was barrier_hybrid's booking of friction, not the motion: the
# sliding work went twice into `dissipated` (tests/cases/poly_energy.sh). With it fixed the
# config runs at dt = 1e-5 s: 600000 steps, 3794 s wall at load ~20 (303 s of CPU by t = 3.6 s, ps),
# e_total + dissipated 10996.3 -> 10949.8 J (-0.4 %). Last run (session 6): 5 of 6 checks pass;
# 'at rest' fails, KE(6 s) = 0.068 J = 6.5e-6 of the released 1.04e4 J: the pack was at rest at
# 4.9 s (KE 2.2e-4 J), then crept (pe_grav -0.7 J from 4.8 s to 6 s) until two cubes (388,
# 500) tumbled off the pile edge at 5.8 s.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/poly_box.py box_of_cubes "$tmp"
