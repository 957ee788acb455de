#!/usr/bin/env bash
# test-timeout: 7200
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
# Session 7: friction history now passes to a contact's new key (tests/cases/poly_friction_keys.sh)
# and the domain is [-4, 5] m wide (a first run lost a cube sliding past y = 3 m at 3.92 s). Run
# (nice 10, load 8-14): 2892 s wall; 5 of 6 checks pass, 'at rest' now among them (KE(6 s) =
# 8.4e-5 J = 8.1e-9 of the released 1.03e4 J, no cube tumbled); the ground reaction fails at
# 1.1 %: the last walls.csv row (t = 6.00001 s) has fz = -5472 N against W = 5533 N, the rows of
# 5.9-6 s range over -5530..-5590 N (mean since 4.8 s: -5557 N, +0.44 %): the pack vibrates, and
# it still creeps (pe_grav -0.19 J/s from 5 s to 6 s; 49 cubes moved more than 0.1 mm between
# 5.0 and 5.5 s, some sliding flat on a layer below at about 3 mm/s). Not explained.
# Session 8: explained and fixed. Every row of walls.csv was an even step, and the ground reaction
# alternated with period 2 steps (from the 5.0 s checkpoint, rows at every step for 0.02 s: mean
# 5532.838 N = W exactly, range 5462.6-5600.6 N): the dashpots of eq. (52) at every point of a
# face-face contact added up beyond c dt / m = 1 (tests/cases/poly_stack.sh, the small decisive
# case: +-3.8 % and creep there too). barrier_hybrid now shares a pair's dashpot among its points.
# From the same 5.0 s checkpoint to 6 s with the change (78 s CPU): no cube moved more than
# 0.1 mm (largest 3.9e-6 m), pe_grav constant to 1e-6 J, KE(6 s) 4.2e-12 J, the ground reaction
# at the last row -0.035 % of W (rows every 999 steps from 5.5 s: within 0.039 %).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/poly_box.py box_of_cubes "$tmp"
