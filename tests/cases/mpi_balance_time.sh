#!/usr/bin/env bash
# Load balancing by measured work (mpi.balance_by: time) on 2 ranks, and the phase timers
# (MMDEM_MPI_TIMERS) (mpi_balance_time.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_balance_time.py "$tmp"
