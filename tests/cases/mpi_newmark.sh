#!/usr/bin/env bash
# newmark on 1 and 2 MPI ranks: settling with dt cuts, checkpoints across rank counts, night owls across the rank boundary (mpi_newmark.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_newmark.py "$tmp"
