#!/usr/bin/env bash
# cd with compatible: true on 1 and 2 MPI ranks: the post-solve distributed over the ranks
# (no rank holds the whole problem) gives the 1-rank floor reactions within the solver
# tolerances, identical contact counts, equilibrium B^T f = F~ on each rank's bodies, and
# agrees with the penalty-DEM reference on both (004 Table 1); checkpoints restart 2 -> 1 and
# 1 -> 2 ranks; a loaded chain across the ranks gives its analytic reaction. Checks in
# mpi_cd_compat.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_cd_compat.py "$tmp"
