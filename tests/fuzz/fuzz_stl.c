/*
  fuzz_stl.c - libFuzzer target: the input is a surface mesh file read through the Gmsh SDK
  (src/core/trimesh.c): an STL file (ASCII or binary), or a Gmsh .msh file when it starts with
  "$MeshFormat". A mesh that loads goes on through everything the mesh wall and the polyhedron
  shape do with it: the closedness checks, mass properties, edges and orientation. Every error is
  an expected outcome (a message); only crashes and sanitizer reports are findings. Gmsh picks
  the reader by the file name's extension, so the input goes to a file in $TMPDIR (/tmp) named
  .stl or .msh. Seeds: tests/fuzz/corpus/stl.
*/
#include "fuzz_common.h"
#include "trimesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char stl[PETSC_MAX_PATH_LEN], msh[PETSC_MAX_PATH_LEN];
  static int  ready = 0;
  const char *path;
  FILE       *fp;
  DemTriMesh  m;

  if (!ready) {
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    if (DemFuzzInit()) abort();
    snprintf(stl, sizeof(stl), "%s/mmdem_fuzz_%d.stl", tmp, (int)getpid());
    snprintf(msh, sizeof(msh), "%s/mmdem_fuzz_%d.msh", tmp, (int)getpid());
    ready = 1;
  }
  if (size > (1 << 20)) return 0;
  path = (size >= 11 && !memcmp(data, "$MeshFormat", 11)) ? msh : stl;
  fp   = fopen(path, "wb");
  if (!fp) abort();
  if (size && fwrite(data, 1, size, fp) != size) abort();
  if (fclose(fp)) abort();
  DemSetLastError("%s", "");
  if (!DemTriMeshLoadFile(path, 1.0, &m)) {
    PetscReal mass, com[3], J[9];
    PetscInt  ne, *ev, *te, *et, flipped;
    if (!DemTriMeshEdges(&m, &ne, &ev, &te, &et)) (void)PetscFree3(ev, te, et);
    (void)DemTriMeshOrient(&m, &flipped);
    if (!DemTriMeshCheckClosed(&m, "fuzz")) (void)DemTriMeshMassProperties(&m, 1000.0, &mass, com, J);
    (void)DemTriMeshDestroy(&m);
  }
  remove(path);
  return 0;
}
