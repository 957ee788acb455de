#!/usr/bin/env bash
# test-timeout: 21600
# Piling (002 section "Piling of particles"): superquadrics a = b = 2 mm, c = 1 mm, n1 = n2 = 4
# poured from a funnel onto a plate with a rough base form a steeper heap than volume-equivalent
# spheres (002: 40 vs 31 deg). Three independent heaps of each (seeds 11, 12, 13) of 002's size,
# 4680 bodies (since session 9; SQ_PILING_LARGE=0: the quicker 1100-body heaps, whose
# superquadric check is our own earlier value, not 002's); the angle of repose of a heap from its
# surface envelope, the mean over the heaps with its standard error.
# 002's Table 4 is not in our text: the friction (1.0) is calibrated on the sphere heap (002's
# 31 deg) and the superquadric heap is the prediction (docstring of val_sq_piling.py, "Calibration").
# Long: session 9, friction 1.0, seed 11, nice 19 on the shared 2-core machine (load 9-15): the
# 4680-body superquadric heap 38.2 deg in 1604 s of CPU (88 min of wall time), the sphere heap
# 28.1 deg in 438 s (49 min); the default three seeds of each are ~1.7 hours of CPU, several
# hours of wall time on a busy machine: run by `make validate`. Session 10 (new machine, nice 19):
# superquadric seeds 12, 13: 38.1, 37.1 deg (77 and 75 min of wall time), sphere seed 13 28.2 deg
# (16 min); three-seed means 37.8 +- 0.35 (superquadrics, check ok) and 28.5 +- 0.4 (spheres,
# the 31 +- 2 check fails: the funnel's dense feed, see the docstring's "Session 10").
# KEEP=DIR keeps the runs there (DIR/seedS/NAME); SQ_PILING_REUSE=1 with KEEP evaluates the runs
# kept there again; SQ_PILING_SEEDS ("11 12 13") chooses the heaps; SQ_PILING_ONLY=
# superquadrics|spheres runs one of the two; SQ_PILING_N (bodies), SQ_PILING_T (end time),
# SQ_PILING_MU (friction, 1.0), SQ_PILING_REST (restitution, 0.5), SQ_PILING_BLOCKINESS (n1 = n2,
# 4), SQ_PILING_R_PLATE (plate radius), SQ_PILING_Z_OUT (outlet height) and SQ_PILING_R_OUT
# (outlet radius) are for sensitivity
# runs (the checks are meant for the defaults). Checks in val_sq_piling.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/val_sq_piling.py "$tmp"
