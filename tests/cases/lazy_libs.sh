#!/usr/bin/env bash
# lazy_libs.sh - Gmsh and VTK are loaded only when a run needs them (issue 11, memory per
# particle): libgmsh (with OpenCASCADE, FLTK, GL...) by src/core/dem_gmsh.c on the first mesh or
# CAD read, VTK through the shim libmmdem_vtk.so by src/core/dem_vtk_load.c on the first VTK
# write. Checks, on one sphere falling for 10 steps, with the dynamic loader's own record of the
# files it maps (LD_DEBUG=files):
#   1. no mesh, no VTK: neither libgmsh nor any libvtk / libmmdem_vtk is mapped;
#   2. VTK output: libmmdem_vtk.so and VTK's XML writer are mapped, libgmsh is not, the .vtp is written;
#   3. an OCC box mesh wall: libgmsh is mapped, VTK is not;
#   4. a Gmsh or VTK library that cannot be loaded is a clear error naming the file and dlerror();
#   5. the memory saved: peak RSS of run 1 against the same run with libgmsh and the VTK shim
#      preloaded (what linking them did before) is at least 20 MB lower (measured 54 MB on
#      `mmdem --help`, 51 MB on benchmarks/settle bed-64k).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
B=$(dirname "$MMDEM")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/one.yaml" <<'EOF'
name: lazy_libs
domain: {lo: [-0.02, -0.02, -0.02], hi: [0.02, 0.02, 0.02]}
gravity: [0, 0, -9.81]
materials:
  glass: {density: 2500}
contact:
  - {pair: default, law: hooke, params: {kn: 1.0e3, gamma_n: 0, gamma_t: 0, mu: 0}}
shapes:
  bead: {type: sphere, radius: 0.005}
bodies:
  - {shape: bead, material: glass, list: [{x: [0, 0, 0]}]}
integrator: {type: verlet, dt: 1.0e-5}
run: {steps: 10}
output: {thermo_every: 10, vtk_every: -1}
EOF
MESH='walls=[{type: mesh, name: floor, material: glass, point: [0, 0, 0], occ: [{box: {corner: [-0.01, -0.01, -0.02], size: [0.02, 0.02, 0.01]}}]}]'

# run NAME [mmdem args...]: LD_DEBUG=files log in $tmp/NAME.log, exit status in rc
run() {
  local n=$1; shift
  LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/$n.ld" "$MMDEM" run "$tmp/one.yaml" --out "$tmp/$n" --quiet "$@" > "$tmp/$n.log" 2>&1
  rc=$?
  cat "$tmp/$n".ld.* > "$tmp/$n.ld" 2>/dev/null
}
maps() { grep -c "file=[^ ]*$2" "$tmp/$1.ld"; }
check() { # name condition-status message
  if [ "$2" -eq 0 ]; then echo "ok - lazy_libs: $1"; else echo "not ok - lazy_libs: $1: $3"; fi
}

run plain
g=$(maps plain 'libgmsh'); v=$(maps plain 'vtk')
[ $rc -eq 0 ] && [ "$g" -eq 0 ] && [ "$v" -eq 0 ]
check "a run without mesh and VTK maps neither libgmsh nor VTK" $? "exit $rc, $g libgmsh and $v vtk mappings: $(grep -m 2 'gmsh\|vtk' "$tmp/plain.ld" | tr '\n' '|')"

run vtk --set output.vtk_every=5
g=$(maps vtk 'libgmsh'); s=$(maps vtk 'libmmdem_vtk.so'); x=$(maps vtk 'libvtkIOXML')
nv=$(ls "$tmp"/vtk/vtk/*.vtp 2>/dev/null | wc -l)
[ $rc -eq 0 ] && [ "$g" -eq 0 ] && [ "$s" -gt 0 ] && [ "$x" -gt 0 ] && [ "$nv" -gt 0 ]
check "VTK output loads libmmdem_vtk.so and VTK, not libgmsh ($nv .vtp files)" $? "exit $rc, libgmsh $g, shim $s, libvtkIOXML $x, $nv .vtp: $(tail -n 2 "$tmp/vtk.log" | tr '\n' '|')"

run mesh --set "$MESH"
g=$(maps mesh 'libgmsh'); v=$(maps mesh 'vtk')
[ $rc -eq 0 ] && [ "$g" -gt 0 ] && [ "$v" -eq 0 ]
check "a mesh wall loads libgmsh, not VTK" $? "exit $rc, libgmsh $g, vtk $v: $(tail -n 2 "$tmp/mesh.log" | tr '\n' '|')"

MMDEM_GMSH_LIBRARY=$tmp/nonexistent/libgmsh.so run nogmsh --set "$MESH"
grep -q "cannot load the Gmsh library $tmp/nonexistent/libgmsh.so.*cannot open shared object file" "$tmp/nogmsh.log"; found=$?
[ $rc -ne 0 ] && [ $found -eq 0 ]
check "a Gmsh library that cannot be loaded is an error naming it" $? "exit $rc: $(head -n 3 "$tmp/nogmsh.log" | tr '\n' '|')"

MMDEM_VTK_LIBRARY=$tmp/nonexistent/libmmdem_vtk.so run novtk --set output.vtk_every=5
grep -q "cannot load the VTK output library $tmp/nonexistent/libmmdem_vtk.so.*cannot open shared object file" "$tmp/novtk.log"; found=$?
[ $rc -ne 0 ] && [ $found -eq 0 ]
check "a VTK shim that cannot be loaded is an error naming it" $? "exit $rc: $(head -n 3 "$tmp/novtk.log" | tr '\n' '|')"

# 5. peak RSS (ru_maxrss of the child) without and with the two libraries preloaded
if ldd "$MMDEM" 2>/dev/null | grep -q 'libasan\|libubsan'; then
  echo "ok - lazy_libs: memory check skipped in a sanitizer build (preloading before the ASan runtime is refused)"
else
  gl=$(ldconfig -p 2>/dev/null | sed -n 's/^\s*\(libgmsh\.so\.[0-9.]*\) .*/\1/p' | head -n 1)
  out=$("$PY" - "$MMDEM" "$tmp/one.yaml" "$tmp/rss" "${gl:-libgmsh.so}" "$B/libmmdem_vtk.so" <<'EOF'
import os, resource, subprocess, sys
mmdem, yaml, out, gmsh, shim = sys.argv[1:]
def peak(preload):
    env = dict(os.environ)
    if preload: env["LD_PRELOAD"] = preload
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1); os.dup2(fd, 2)
        os.execve(mmdem, [mmdem, "run", yaml, "--out", out, "--quiet"], env)
    _, status, ru = os.wait4(pid, 0)
    return (status, ru.ru_maxrss / 1024.0)
s0, lazy = peak(None)
s1, eager = peak(gmsh + " " + shim)
print(s0, s1, "%.1f %.1f %.1f" % (lazy, eager, eager - lazy))
EOF
)
  set -- $out
  awk -v a="${1:-1}" -v b="${2:-1}" -v d="${5:-0}" 'BEGIN { exit !(a == 0 && b == 0 && d >= 20) }'
  check "peak RSS ${3:-?} MB lazily vs ${4:-?} MB with libgmsh and VTK preloaded: ${5:-?} MB saved (>= 20)" $? "exit statuses ${1:-?} ${2:-?}"
fi
