#!/usr/bin/env bash
# fuzz_regressions.sh - every input in tests/fuzz/regressions (crashes, leaks and undefined
# behaviour found by `make fuzz`, fixed since) goes through mmdem as the fuzz target did:
#   *.yaml  mmdem check FILE                     (the config target)
#   *.csv   mmdem check on a run description whose body set reads FILE (the csv target)
#   *.ckpt  mmdem run on the checkpoint target's run description --restart FILE (restore, then
#           the steps left to its run.steps; tests/fuzz/fuzz_checkpoint.c)
# Each must end with exit status 0, or 1 with the error printed once ("mmdem: ..." on one line):
# no crash, no sanitizer report (under make test SANITIZE=... the sanitizers check these runs
# too: leaks and undefined behaviour are reported there).
set -u
cd "$(dirname "$0")/../.."
. tests/tools/case_lib.sh # M, PY, R, T (the current directory)
export MMDEM_MEMORY_LIMIT=${MMDEM_MEMORY_LIMIT:-8M} # as in the fuzz targets

# the checkpoint target's run description, from its source
"$PY" - "$R/tests/fuzz/fuzz_checkpoint.c" "$T/ckpt.yaml" <<'EOF'
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r'static const char fuzz_ckpt_yaml\[\] = (.*?);\n', s, re.S)
open(sys.argv[2], "w").write("".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))).encode().decode("unicode_escape"))
EOF

n=0
for f in "$R"/tests/fuzz/regressions/*; do
  [ -f "$f" ] || continue
  name=$(basename "$f")
  case $name in
    *.yaml) cmd=("$M" check "$f") ;;
    *.csv)
      printf 'name: fuzzcsv\nmaterials: {glass: {density: 2500, youngs_modulus: 1.0e7}}\ncontact: [{pair: default, law: hertz_mindlin}]\nshapes: {bead: {type: sphere, radius: 0.001}}\nbodies: [{shape: bead, material: glass, file: %s}]\nwalls: [{type: plane, point: [0, 0, -1], normal: [0, 0, 1], material: glass}]\nintegrator: {type: verlet, dt: auto}\nrun: {steps: 1}\n' "$f" > "$T/csv.yaml"
      cmd=("$M" check "$T/csv.yaml") ;;
    *.ckpt) cmd=("$M" run "$T/ckpt.yaml" --out "$T/out-$name" --restart "$f") ;;
    *) continue ;;
  esac
  n=$((n + 1))
  "${cmd[@]}" > "$T/out" 2> "$T/err"
  rc=$?
  lines=$(grep -c . "$T/err")
  # a checkpoint input must get past the header and version checks into the restore (a stale
  # format version would be refused before the code it once crashed)
  case $name in *.ckpt)
    if grep -q '^restart: continuing from' "$T/out"; then echo "ok - fuzz regression $name: restored (format version accepted)"
    else echo "not ok - fuzz regression $name: not restored: $(grep '^mmdem: ' "$T/err" | cut -c1-200)"; fi ;;
  esac
  if [ $rc -eq 0 ] || { [ $rc -eq 1 ] && [ "$lines" -ge 1 ] && [ "$(grep -c '^mmdem: ' "$T/err")" -eq 1 ] && ! grep -qE 'Sanitizer|runtime error|Caught signal' "$T/err"; }; then
    echo "ok - fuzz regression $name: exit $rc$( [ $rc -eq 1 ] && echo ", $(grep '^mmdem: ' "$T/err" | cut -c1-110)...")"
  else
    echo "not ok - fuzz regression $name: exit $rc: $(head -c 600 "$T/err" | tr '\n' '|')"
  fi
done
[ $n -gt 0 ] || echo "not ok - fuzz regressions: none found in tests/fuzz/regressions"
