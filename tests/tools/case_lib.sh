# case_lib.sh - shared set-up of the shell case scripts (sourced from the repository root):
# M (mmdem, absolute), PY, R (the repository root), T (a temporary directory, removed at exit,
# made the current directory), ok/nok (the runner's check lines), nowall FILE (a thermo.csv
# without its wall_s column: the one column that differs between identical runs) and
# same_output A B WHAT (the output files of run directory B equal A's, byte for byte).
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
# same_output A B WHAT: B's files equal A's (thermo without wall_s)
same_output() {
  local a=$1 b=$2 what=$3 bad="" f
  for f in bodies_final.csv walls.csv track.csv; do
    [ -f "$a/$f" ] || continue
    cmp -s "$a/$f" "$b/$f" || bad="$bad $f"
  done
  cmp -s <(nowall "$a/thermo.csv") <(nowall "$b/thermo.csv") || bad="$bad thermo.csv"
  if [ -d "$a/vtk" ]; then
    [ "$(cd "$a/vtk" && ls)" = "$(cd "$b/vtk" && ls)" ] || bad="$bad vtk-file-list"
    for f in "$a"/vtk/*; do cmp -s "$f" "$b/vtk/$(basename "$f")" || bad="$bad vtk/$(basename "$f")"; done
  fi
  if [ -z "$bad" ]; then ok "$what: bodies_final, thermo (but wall_s), walls, track and $(ls "$a/vtk" | wc -l) VTK files are identical"
  else nok "$what" "differ from the uninterrupted run:$bad"; fi
}
