#!/usr/bin/env bash
# test-timeout: 3600
# Experiment (b) of issue 10 as it is: `mmdem compare config/experiments/pile_settling.yaml`
# (128 beads, six integrators, two dt_fractions; cd at 10 times the others' dt). Every run
# finishes, the final floor reaction is 128 m g = 0.013149 N within 0.1 %, time_to_rest is a
# time inside the run. Checks in tests/cases/compare_pile.py. A few minutes on an idle
# 2-core machine (the implicit penalty integrators take most of it).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the plugin built beside $MMDEM (the file names ../../build/plugins/symplectic_euler.so)
plug=()
se="$(cd "$(dirname "$MMDEM")" && pwd)/plugins/symplectic_euler.so"
[ -f "$se" ] && plug=(--set "plugins=[$se]")
t0=$(date +%s)
if "$MMDEM" compare config/experiments/pile_settling.yaml "${plug[@]}" --out "$tmp/b" > "$tmp/b.log" 2>&1; then
  echo "ok - (b) pile_settling: mmdem compare ran ($(( $(date +%s) - t0 )) s wall)"
else
  echo "not ok - (b) pile_settling: mmdem compare: exit $?: $(tail -n 4 "$tmp/b.log" | tr '\n' '|')"
fi
[ -f "$tmp/b/compare.csv" ] && sed 's/^/# /' "$tmp/b/compare.csv" | cut -c1-250
"$PY" tests/cases/compare_pile.py "$tmp/b" 128 0.6 2 "(b) 128 beads"
