#!/usr/bin/env bash
# Settling beads on 1 and 2 MPI ranks agree within 1e-8; VTK pieces per rank (mpi_settle.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_settle.py "$tmp"
