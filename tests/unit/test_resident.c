/*
  test_resident.c - unit test of src/core/resident.c (clean pages of library files handed back).

  The function's own count of the bytes it released (summed from /proc/self/smaps) is checked
  against the kernel's separate accounting in /proc/self/status (RssFile before and after), and
  what must not change is checked against values computed here: anonymous memory (RssAnon, and
  a heap buffer's contents against the formula that filled it), and a PETSc computation after
  the release (the 2-norm of the vector 0, 1, ..., n-1 against sqrt((n-1) n (2n-1) / 6)), which
  runs code, relocated function pointers and read-only data of libraries whose pages were given
  back. MMDEM_KEEP_PAGES turns it off.
*/
#include <petscvec.h>
#undef I
#include "demimpl.h"
#include "dem_test.h"

/* the value of a field of /proc/self/status in kB, or -1 */
static long StatusKB(const char *field)
{
  char  line[256];
  long  kb = -1;
  FILE *fp = fopen("/proc/self/status", "r");
  size_t len = strlen(field);

  while (fp && fgets(line, sizeof(line), fp))
    if (!strncmp(line, field, len) && line[len] == ':') kb = strtol(line + len + 1, NULL, 10);
  if (fp) fclose(fp);
  return kb;
}

static PetscErrorCode VecNormRamp(PetscInt n, PetscReal *nrm)
{
  Vec          v;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &v));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = (PetscScalar)i;
  PetscCall(VecRestoreArray(v, &a));
  PetscCall(VecNorm(v, NORM_2, nrm));
  PetscCall(VecDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const PetscInt n = 100000;
  const size_t   nbuf = (size_t)4 << 20; /* 4 MiB of heap, written before the release */
  const double   ref = sqrt((double)(n - 1) * n * (2.0 * n - 1) / 6);
  unsigned char *buf;
  PetscReal      nrm0, nrm1;
  long           file0, file1, anon0, anon1, file2;
  size_t         rel, rel_keep, bad = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  unsetenv("MMDEM_KEEP_PAGES");
  buf = (unsigned char *)malloc(nbuf);
  for (size_t k = 0; k < nbuf; k++) buf[k] = (unsigned char)((k * 2654435761u) >> 13);
  PetscCall(VecNormRamp(n, &nrm0));

  file0 = StatusKB("RssFile");
  anon0 = StatusKB("RssAnon");
  rel   = DemReleaseCleanPages_Private();
  file1 = StatusKB("RssFile");
  anon1 = StatusKB("RssAnon");
  printf("# released %.1f MB; RssFile %ld -> %ld kB, RssAnon %ld -> %ld kB\n", rel / 1048576.0, file0, file1, anon0, anon1);
  /* PETSc's libraries alone map far more than 2 MB of clean pages once loaded */
  DEM_CHECK("releases the clean pages of the loaded libraries (> 2 MB)", rel > ((size_t)2 << 20), "released %zu bytes", rel);
  /* the kernel's count, RssFile: it fell by no more than what was released (nothing else gives
     pages back), and what was released but is resident again (code the release itself and the
     reading of the status file ran after dropping it) is part of RssFile now; 64 kB for the
     stdio of StatusKB */
  DEM_CHECK("RssFile before - after <= released <= RssFile before", file0 >= 0 && file1 >= 0 && (double)(file0 - file1) <= rel / 1024.0 + 64 && rel / 1024.0 <= (double)file0 + 64, "RssFile %ld -> %ld kB, released %zu kB", file0, file1, rel / 1024);
  DEM_CHECK("anonymous memory untouched (RssAnon within 256 kB)", anon0 >= 0 && labs(anon1 - anon0) <= 256, "RssAnon %ld -> %ld kB", anon0, anon1);
  for (size_t k = 0; k < nbuf; k++) bad += buf[k] != (unsigned char)((k * 2654435761u) >> 13);
  DEM_CHECK("a heap buffer written before keeps its contents", bad == 0, "%zu of %zu bytes differ", bad, nbuf);
  PetscCall(VecNormRamp(n, &nrm1));
  DEM_CHECK_REL("PETSc after the release: |0..n-1|_2 = sqrt((n-1) n (2n-1)/6)", nrm1, ref, 1e-14);
  DEM_CHECK("PETSc after the release: the same norm, bitwise, as before it", nrm1 == nrm0, "%.17g vs %.17g", (double)nrm1, (double)nrm0);

  setenv("MMDEM_KEEP_PAGES", "1", 1);
  PetscCall(VecNormRamp(n, &nrm1)); /* pages back in */
  file1    = StatusKB("RssFile");
  rel_keep = DemReleaseCleanPages_Private();
  file2    = StatusKB("RssFile");
  DEM_CHECK("MMDEM_KEEP_PAGES: nothing released, RssFile does not fall", rel_keep == 0 && file2 >= file1, "released %zu, RssFile %ld -> %ld kB", rel_keep, file1, file2);
  unsetenv("MMDEM_KEEP_PAGES");
  free(buf);
  PetscCall(PetscFinalize());
  return dem_test_failed;
}
