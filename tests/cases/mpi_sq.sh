#!/usr/bin/env bash
# Superquadrics on 1 and 2 MPI ranks agree within 1e-8; a restart on 2 ranks is bitwise the uninterrupted 2-rank run (mpi_sq.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_sq.py "$tmp"
