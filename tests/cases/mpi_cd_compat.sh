#!/usr/bin/env bash
# cd with compatible: true on 1 and 2 MPI ranks: the post-solve gathered on rank 0 gives the
# 1-rank floor reactions within the solver tolerances, identical contact counts, and agrees
# with the penalty-DEM reference on both (004 Table 1); a 2-rank checkpoint restarts on 1
# rank. Checks in mpi_cd_compat.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_cd_compat.py "$tmp"
