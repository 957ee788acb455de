#!/usr/bin/env bash
# test-cost: 26 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# cd (apgd) on 1 and 2 MPI ranks agrees within 1e-8, with identical iteration counts (warm starts migrate with their pairs; mpi_implicit.py).
# The warm starts travel point to point with their pairs (decomp.c DemDecompRoute): from the
# MMDEM_DECOMP_VERBOSE counts of the 2-rank run, every entry sent is received (sums equal,
# some sent), and each rank's traffic (sent + received) stays below the entries held over all
# ranks, which is what the former all-gather delivered to every rank at every rebuild.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_implicit.py "$tmp" cd
log=$tmp/cd_apgd_2.log
if [ -s "$log" ]; then
  awk '/^decomp: rank [0-9]+: integrator pair map:/ { h += $7; s += $14; r += $17; t = $14 + $17; if (t > mx) mx = t; n++ }
    END {
      if (n != 2) { print "not ok - mpi_cd warm-start traffic: " n " rank lines (want 2)"; exit }
      if (s == r && s > 0 && mx < h) printf "ok - mpi_cd warm-start traffic: %d entries held over the rebuilds on both ranks, %d sent = %d received, at most %d per rank (%.4f of the all-gather)\n", h, s, r, mx, mx / h
      else printf "not ok - mpi_cd warm-start traffic: held %d, sent %d, received %d, per rank max %d\n", h, s, r, mx
    }' "$log"
else
  echo "not ok - mpi_cd warm-start traffic: no 2-rank log"
fi
