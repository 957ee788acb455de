#!/usr/bin/env bash
# test-timeout: 7200
# Piling (002 section "Piling of particles"): superquadrics a = b = 2 mm, c = 1 mm, n1 = n2 = 4
# poured from a funnel onto a plate with a rough base form a steeper heap than volume-equivalent
# spheres (002: 40 vs 31 deg). Three independent heaps of each (seeds 11, 12, 13); the angle of
# repose of a heap from its surface envelope, the mean over the heaps with its standard error.
# 002's Table 4 is not in our text: the friction (1.0) is calibrated on the sphere heap (002's
# 31 deg) and the superquadric heap is the prediction (docstring of val_sq_piling.py, "Calibration").
# Long (2-core machine shared with ~8 other jobs, load 12-26: 17-20 min of wall time per
# superquadric heap, 3-6 min per sphere heap, about 1-1.5 hours in all): run by `make validate`.
# KEEP=DIR keeps the runs there (DIR/seedS/NAME); SQ_PILING_REUSE=1 with KEEP evaluates the runs
# kept there again; SQ_PILING_SEEDS ("11 12 13") chooses the heaps; SQ_PILING_ONLY=
# superquadrics|spheres runs one of the two; SQ_PILING_N (bodies, 1100), SQ_PILING_T (end time,
# 2.2 s), SQ_PILING_MU (friction, 1.0), SQ_PILING_REST (restitution, 0.5), SQ_PILING_BLOCKINESS (n1 = n2, 4) and SQ_PILING_R_PLATE
# (0.035 m) are for sensitivity runs (the checks are meant for the defaults); SQ_PILING_LARGE=1
# pours 002's 4680 bodies onto a larger plate (about 45 min of CPU per superquadric heap). Checks
# in val_sq_piling.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/val_sq_piling.py "$tmp"
