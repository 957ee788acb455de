#!/usr/bin/env bash
# test-timeout: 1500
# sanitize.sh - AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer inside `make test`
# (CI runs exactly `make deps` and `make test`). Builds mmdem with SANITIZE=address,undefined into
# its own directory ($BUILD-address-undefined, the directory `make test SANITIZE=address,undefined`
# uses; incremental) and runs there, through tests/run.sh (its sanitizer options and third-party
# suppressions, tests/*.supp), every C unit test and a set of case scripts that walks each
# integrator, both laws, walls, periodic images, checkpoints and restarts, failure handling and
# the fuzz regressions. The whole suite under the sanitizers is `make test SANITIZE=address,undefined`
# (about 10x the time of make test, too long for every CI run). One check per test program or
# script: all its checks passed with no sanitizer report (reports are fatal: halt_on_error).
# SANITIZE_CASES="..." replaces the list of case scripts.
set -u
cd "$(dirname "$0")/../.."
M=${MMDEM:-build/mmdem}
if ldd "$M" 2>/dev/null | grep -q 'libasan\|libubsan'; then echo "ok - sanitize: this build is a sanitizer build already"; exit 0; fi
B=${BUILD:-$(dirname "$M")}
case "$B" in /*) ;; *) B=$PWD/$B ;; esac
SB=${SANITIZE_BUILD:-$B-address-undefined}
cases=${SANITIZE_CASES:-"val_impact_hooke val_slide_roll val_static_pile val_periodic_gas val_trap_spin val_variational_bond cd_restitution fuzz_regressions"}
log=$(mktemp -d); trap 'rm -rf "$log"' EXIT
if ! make --no-print-directory -j2 BUILD="$SB" SANITIZE=address,undefined > "$log/build.txt" 2>&1; then
  echo "not ok - sanitize: the ASan+UBSan build failed: $(grep -m 3 -i 'error' "$log/build.txt" | tr '\n' '|')"; exit 1
fi
units=$(for t in "$SB"/tests/*; do [ -f "$t" ] && [ -x "$t" ] && basename "$t"; done | tr '\n' ' ')
ONLY="$units $cases" BUILD="$SB" MMDEM="$SB/mmdem" bash tests/run.sh quick > "$log/run.txt" 2>&1
n=0
while IFS= read -r line; do
  name=$(echo "$line" | sed -n 's/^== \([^:]*\):.*/\1/p')
  [ -n "$name" ] || continue
  n=$((n + 1))
  if echo "$line" | grep -q 'failed'; then
    echo "not ok - sanitize $name: $line"
    awk -v n="$name" '$0 ~ "^== "n":" {f = 1; next} /^== / {f = 0} f' "$log/run.txt" | head -n 20
  else echo "ok - sanitize $name under ASan+UBSan: ${line#== }"; fi
done < "$log/run.txt"
want=$(( $(echo $units | wc -w) + $(echo $cases | wc -w) ))
[ $n -eq $want ] || echo "not ok - sanitize: $n of $want test programs and scripts ran"
