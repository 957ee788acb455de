#!/usr/bin/env bash
# 218 spheres settling in a 6d x 6d box (003 section 3.4, Fig. 11): variational against
# velocity Verlet, mean kinetic energy per particle and velocity fluctuation (003 eq. (35)-(36))
# over time windows. Long (about 3 minutes): run by `make validate`. With PLOT=FILE.png the two
# curves are also drawn with gnuplot (docs/img/variational_settling.png was made this way).
# Checks in val_variational_box.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/validate/val_variational_box.py "$tmp" "${PLOT:-}"
