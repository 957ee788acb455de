#!/usr/bin/env bash
# A run on 2 ranks interrupted by SIGTERM between thermo rows restarts to the uninterrupted
# run's result: the dissipation booked rank by rank at the steps no output reads (verlet,
# decomp.c) is summed into the checkpoint (mpi_signal.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_signal.py "$tmp"
