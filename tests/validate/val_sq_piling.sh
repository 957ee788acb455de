#!/usr/bin/env bash
# test-timeout: 3600
# Piling (002 section "Piling of particles"): superquadrics a = b = 2 mm, c = 1 mm, n1 = n2 = 4
# poured from a funnel onto a plate with a rough base form a steeper heap than volume-equivalent
# spheres (002: 40 vs 31 deg). Long (2-core machine shared with ~8 other jobs, load ~14: 16
# to 45 min of wall time for the superquadrics, 8 min for the spheres): run by `make validate`.
# KEEP=DIR keeps the runs there; SQ_PILING_REUSE=1 with KEEP evaluates the runs kept there again;
# SQ_PILING_ONLY=superquadrics|spheres runs one of the two; SQ_PILING_N (bodies, 1100) and
# SQ_PILING_T (end time, 2.2 s) change the set-up; SQ_PILING_MU (friction, 0.5), SQ_PILING_SEED
# (lattice offsets and orientations, 11) and SQ_PILING_BLOCKINESS (n1 = n2, 4) are for
# sensitivity runs (the checks are meant for the defaults). Checks in val_sq_piling.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/validate/val_sq_piling.py "$tmp"
