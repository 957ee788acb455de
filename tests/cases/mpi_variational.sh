#!/usr/bin/env bash
# variational on 1 and 2 MPI ranks: dynamic (baij), checkpoints across rank counts, quasi-static (baij) (mpi_variational.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_variational.py "$tmp" baij restart qs
