# case_lib.sh - shared set-up of the shell case scripts (sourced from the repository root):
# M (mmdem, absolute), PY, R (the repository root), T (a temporary directory, removed at exit,
# made the current directory), ok/nok (the runner's check lines) and nowall FILE (a thermo.csv
# without its wall_s column: the one column that differs between identical runs).
M=${MMDEM:-build/mmdem}
case $M in /*) ;; *) M=$PWD/$M ;; esac
PY=${PY:-/usr/bin/python3}
R=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }
nowall() {
  local col
  col=$(head -n 1 "$1" | tr , '\n' | grep -nx wall_s | cut -d: -f1)
  cut --complement -d, -f"$col" "$1"
}
