#!/usr/bin/env bash
# test-cost: 79 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# plugins.sh - plugins as shared objects (src/core/dem_plugin.h, src/core/plugin.c):
#  - the example plugins (plugins/*.c) build with the copyable plugins/Makefile
#  - loading from the command line (--plugin), from MMDEM_PLUGIN_PATH and from the YAML
#    (plugins:, relative to the YAML file); `mmdem list` shows each entry's origin; the same
#    file loaded twice is loaded once
#  - every loading error gives its message, naming the file, and a non-zero exit: not found,
#    not a shared object, no dem_plugin_init, ABI major mismatch, a name clash (naming both
#    origins), a bad MMDEM_PLUGIN_PATH directory; bad plugins are built here into a temp dir
#    from tests/cases/plugins/*.c
#  - runs with each example plugin, checked against analytic values: plugins.py
set -u
cd "$(dirname "$0")/../.."
M=${MMDEM:-build/mmdem}
PY=${PY:-/usr/bin/python3}
B=$(cd "$(dirname "$M")" && pwd)
T=$(mktemp -d)
T=$(cd "$T" && pwd -P)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok - $1"; }
nok() { echo "not ok - $1: $2"; }

# expect_error NAME SUBSTRING COMMAND...: the command must fail and print SUBSTRING
expect_error() {
  local name=$1 pat=$2 out rc
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] && grep -qF -- "$pat" <<<"$out"; then ok "$name: exit $rc: $(grep -F -- "$pat" <<<"$out" | head -n 1 | cut -c1-220)"
  else nok "$name" "exit $rc, expected '$pat', got: $(tail -n 2 <<<"$out" | tr '\n' '|' | cut -c1-400)"; fi
}

# ---- building
if make --no-print-directory -C plugins OUT="$T/ex" MMDEM_INC="$PWD/src/core" > "$T/make.log" 2>&1 && [ -f "$T/ex/cohesion.so" ] && [ -f "$T/ex/symplectic_euler.so" ]; then
  ok "plugins/Makefile builds the examples (cohesion.so, symplectic_euler.so)"
else
  nok "plugins/Makefile builds the examples" "$(tail -n 5 "$T/make.log" | tr '\n' '|')"
fi
for p in cohesion symplectic_euler; do
  [ -f "$B/plugins/$p.so" ] && ok "make built $B/plugins/$p.so" || nok "make built $B/plugins/$p.so" "missing (run make)"
done
mkdir -p "$T/bad"
cp plugins/Makefile tests/cases/plugins/*.c "$T/bad/"
if make --no-print-directory -C "$T/bad" MMDEM_INC="$PWD/src/core" > "$T/bad.log" 2>&1; then
  ok "test plugins build from tests/cases/plugins/*.c with a copy of plugins/Makefile"
else
  nok "test plugins build" "$(tail -n 5 "$T/bad.log" | tr '\n' '|')"
fi

# ---- loading
out=$("$M" list --plugin "$B/plugins/cohesion.so" --plugin "$B/plugins/symplectic_euler.so" 2>&1)
if grep -qE "^  cohesion +$B/plugins/cohesion.so$" <<<"$out" && grep -qE "^  symplectic_euler +$B/plugins/symplectic_euler.so$" <<<"$out" \
   && grep -qE "^  verlet +built-in$" <<<"$out" && grep -qE "^  cohesive_bonds +$B/plugins/cohesion.so$" <<<"$out"; then
  ok "--plugin: mmdem list shows the law, the integrator and the thermo column with the plugin file as origin"
else
  nok "--plugin: mmdem list origins" "$(tr '\n' '|' <<<"$out")"
fi
out=$(MMDEM_PLUGIN_PATH="/nonexistent-dir-x:$B/plugins" "$M" list 2>&1)
grep -qF "MMDEM_PLUGIN_PATH: cannot read directory '/nonexistent-dir-x'" <<<"$out" && ok "MMDEM_PLUGIN_PATH: a missing directory is an error naming it" \
  || nok "MMDEM_PLUGIN_PATH missing directory" "$(tr '\n' '|' <<<"$out")"
mkdir -p "$T/path1" "$T/path2"
cp "$B/plugins/cohesion.so" "$T/path1/"
cp "$B/plugins/symplectic_euler.so" "$T/path2/libse_plugin.so"
echo "not a plugin" > "$T/path2/README.txt"
out=$(MMDEM_PLUGIN_PATH="$T/path1:$T/path2" "$M" list 2>&1)
if grep -qE "^  cohesion +$T/path1/cohesion.so$" <<<"$out" && grep -qE "^  symplectic_euler +$T/path2/libse_plugin.so$" <<<"$out"; then
  ok "MMDEM_PLUGIN_PATH: every *.so of both directories loaded (other files ignored), origins shown"
else
  nok "MMDEM_PLUGIN_PATH loading" "$(tr '\n' '|' <<<"$out")"
fi
out=$("$M" list --plugin "$B/plugins/cohesion.so" --plugin "$B/plugins/../plugins/cohesion.so" --plugin "$B/plugins/cohesion.so" 2>&1)
rc=$?
n=$(grep -cE "^  cohesion +/" <<<"$out")
[ "$rc" -eq 0 ] && [ "$n" -eq 1 ] && ok "the same file given three times is loaded once (one registry entry, no clash)" \
  || nok "same file loaded once" "exit $rc, $n entries: $(tr '\n' '|' <<<"$out")"

out=$("$M" list --plugin "$T/bad/probe.so" 2>&1)
P="$T/bad/probe.so"
if grep -qE "^  probe_shape +$P$" <<<"$out" && grep -qE "^  probe_kind/sphere +$P$" <<<"$out" && grep -qE "^  probe_ncomp +$P$" <<<"$out" \
   && grep -qE "^  probe_vec\[3\] +$P$" <<<"$out" && grep -qE "^  probe 0 \(ABI 1\.0\): " <<<"$out"; then
  ok "mmdem list: a plugin's shape, collider, thermo columns and per-body field with their origin, and the plugin itself"
else
  nok "mmdem list of the probe plugin" "$(tr '\n' '|' <<<"$out")"
fi

# ---- errors
expect_error "not found" "plugin '$T/nothere.so': not found" "$M" list --plugin "$T/nothere.so"
echo "just text" > "$T/notes.txt"
expect_error "not a shared object (.txt)" "plugin '$T/notes.txt': not a loadable shared object" "$M" list --plugin "$T/notes.txt"
echo "just text" > "$T/fake.so"
expect_error "not a shared object (text named .so)" "plugin '$T/fake.so': not a loadable shared object" "$M" list --plugin "$T/fake.so"
expect_error "missing dem_plugin_init" "plugin '$T/bad/noinit.so': no symbol dem_plugin_init" "$M" list --plugin "$T/bad/noinit.so"
expect_error "ABI major mismatch" "plugin '$T/bad/badabi.so' was built for plugin ABI 99.0; this mmdem has ABI 1." "$M" list --plugin "$T/bad/badabi.so"
expect_error "name clash with a built-in" "integrator 'verlet' from $T/bad/dupverlet.so is already registered (from built-in)" "$M" list --plugin "$T/bad/dupverlet.so"
expect_error "name clash between plugins" "contact law 'cohesion' from $T/bad/dupcohesion.so is already registered (from $B/plugins/cohesion.so)" \
  "$M" list --plugin "$B/plugins/cohesion.so" --plugin "$T/bad/dupcohesion.so"
expect_error "error through MMDEM_PLUGIN_PATH names the file" "plugin '$T/bad/badabi.so' was built for plugin ABI 99.0" env MMDEM_PLUGIN_PATH="$T/bad" "$M" list
# from the YAML: relative to the YAML file, located at the list item
sed -e "s|^plugins: .*|plugins: [nothere/cohesion.so]|" tests/cases/plugin_cohesion.yaml > "$T/yaml_missing.yaml"
line=$(grep -n "^plugins:" "$T/yaml_missing.yaml" | cut -d: -f1)
expect_error "YAML plugins: not found, located, relative to the YAML file" "$T/yaml_missing.yaml:$line:11: plugins[0]: plugin '$T/nothere/cohesion.so': not found" \
  "$M" check "$T/yaml_missing.yaml"
sed -e "s|^plugins: .*|plugins: [bad/dupverlet.so]|" tests/cases/plugin_cohesion.yaml > "$T/yaml_dup.yaml"
expect_error "YAML plugins: name clash" "plugins[0]: plugin '$T/bad/dupverlet.so': dem_plugin_init failed: integrator 'verlet' from $T/bad/dupverlet.so is already registered (from built-in)" \
  "$M" check "$T/yaml_dup.yaml"
sed -e "s|^plugins: .*|plugins: oops.so|" tests/cases/plugin_cohesion.yaml > "$T/yaml_type.yaml"
expect_error "YAML plugins: must be a list" "plugins must be a list" "$M" check "$T/yaml_type.yaml"
sed -e "/^plugins:/d" tests/cases/plugin_cohesion.yaml > "$T/yaml_noplugin.yaml"
expect_error "without the plugin, law cohesion is unknown" "unknown contact law 'cohesion'" "$M" check "$T/yaml_noplugin.yaml"
out=$("$M" check "$T/yaml_noplugin.yaml" --plugin "$B/plugins/cohesion.so" 2>&1)
grep -q ": ok$" <<<"$out" && ok "with --plugin instead of plugins:, the same description checks ok" || nok "check with --plugin" "$(tr '\n' '|' <<<"$out")"

# ---- runs
"$PY" tests/cases/plugins.py "$T" "$T/bad/probe.so"
