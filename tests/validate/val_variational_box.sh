#!/usr/bin/env bash
# test-timeout: 3600
# 218 spheres settling in a 6d x 6d x 120d box (003 section 3.4, Fig. 11): an ensemble of
# variational runs (alpha 0.5, 3 time steps) against an ensemble of velocity Verlet runs
# (6 time steps), mean kinetic energy per particle and velocity fluctuation (003 eq. (35)-(36))
# over windows of 0.05 s; the criterion is stated in val_variational_box.py. Long (9 runs of
# 311000 to 423000 steps, two at a time, JOBS=1 for one): run by `make validate`. With
# PLOT=FILE.png the curves are also drawn with gnuplot (docs/img/variational_settling.png was
# made this way).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/validate/val_variational_box.py "$tmp" "${PLOT:-}"
