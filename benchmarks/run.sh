#!/usr/bin/env bash
# benchmarks/run.sh - what `make bench` runs (after `make all`): the performance harness.
#   benchmarks/settle/   N spheres fall onto a frictional floor, lattice and packed bed,
#                        mmdem against LAMMPS (see benchmarks/settle/README.md), with laws
#                        hooke (gran/hooke/history) and hertz (gran/hertz/history)
#   benchmarks/chute/    32000 spheres flowing down a rough inclined periodic chute, mmdem
#                        against LAMMPS (like LAMMPS's bench/in.chute)
#   benchmarks/stream/   memory bandwidth (STREAM-like) and the roofline estimate of the
#                        settle cases (bytes per particle-step x rate vs bandwidth)
#   benchmarks/stiff_pile/  time to rest of STIFF_PILE_N (2000; 0 skips it) stiff glass spheres,
#                        newmark against verlet (issue 5), each run stopped after
#                        STIFF_PILE_TIMEOUT (1800) s; table in benchmarks/stiff_pile/results.txt
# The peers are installed here, not by `make deps` (BUILD-NOTES.md): when `lmp` or
# /usr/bin/time is missing and we are root with apt-get, `apt-get install lammps time`;
# otherwise the LAMMPS side (or the memory column) is skipped.
# Arguments are passed to benchmarks/settle/bench.py (--quick, --repeat N, --cases a,b,
# --no-lammps); BENCH_REPEAT=N in the environment sets --repeat.
set -u
cd "$(dirname "$0")/.."

need=()
command -v lmp > /dev/null 2>&1 || need+=(lammps)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get > /dev/null 2>&1; then
    echo "bench: installing ${need[*]} (benchmark peers; not part of make deps)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${need[@]}" > /tmp/mmdem-bench-apt.log 2>&1 ||
      { apt-get update -q >> /tmp/mmdem-bench-apt.log 2>&1 &&
        apt-get install -y -q --no-install-recommends "${need[@]}" >> /tmp/mmdem-bench-apt.log 2>&1; } ||
      echo "bench: could not install ${need[*]} (see /tmp/mmdem-bench-apt.log); going on without"
  else
    echo "bench: ${need[*]} not installed and not root: the LAMMPS comparison (or the memory column) is skipped"
  fi
fi

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# memory bandwidth (benchmarks/stream/stream.c) for the roofline estimate after the settle cases
stream_out=$(mktemp); stream_bin=$(mktemp)
if cc -O2 -o "$stream_bin" benchmarks/stream/stream.c 2> /dev/null && "$stream_bin" 256 3 > "$stream_out"; then
  echo "memory bandwidth (benchmarks/stream/stream.c, one thread):"; sed 's/^/  /' "$stream_out"
fi
"$PY" benchmarks/settle/bench.py "$@"
rc=$?
[ -s "$stream_out" ] && [ -f benchmarks/settle/cache/results.json ] && "$PY" benchmarks/stream/roofline.py benchmarks/settle/cache/results.json "$stream_out"
rm -f "$stream_out" "$stream_bin"
# the same cases with law hertz (LAMMPS gran/hertz/history); cases named NAME-hertz
"$PY" benchmarks/settle/bench.py --law hertz "$@" || rc=1
# chute flow: 32000 spheres on a rough 26-degree chute (benchmarks/chute/bench.py)
"$PY" benchmarks/chute/bench.py || rc=1
if [ "${STIFF_PILE_N:-2000}" != 0 ]; then
  echo "stiff_pile (benchmarks/stiff_pile/bench.py, N = ${STIFF_PILE_N:-2000}):"
  "$PY" benchmarks/stiff_pile/bench.py --mmdem "${BUILD:-build}/mmdem" --n "${STIFF_PILE_N:-2000}" \
    --timeout "${STIFF_PILE_TIMEOUT:-1800}" || rc=1
fi
exit $rc
