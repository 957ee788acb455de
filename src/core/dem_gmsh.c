/*
  dem_gmsh.c - loads the Gmsh SDK on first use (dlopen + dlsym) and fills the function table of
  dem_gmsh.h; see that header. Nothing here runs unless a run reads a mesh or CAD file, so a
  plain sphere run never maps libgmsh (issue 11: about 35 MB less resident memory at start).
*/
#include "dem_gmsh.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DEM_GMSH_SONAME
#define DEM_GMSH_SONAME "libgmsh.so"
#endif

static DemGmshApi api_;
static int        loaded_ = 0;   /* 1: api_ is filled */
static char       loaderr_[1024]; /* why the last load failed */

static const char *DemGmshLibName(void)
{
  const char *env = getenv("MMDEM_GMSH_LIBRARY");
  return (env && env[0]) ? env : DEM_GMSH_SONAME;
}

/* 0 on success; otherwise loaderr_ says why */
static int DemGmshLoad(void)
{
  const char *name = DemGmshLibName();
  void       *h;
  DemGmshApi  t;

  if (loaded_) return 0;
  memset(&t, 0, sizeof(t));
  /* RTLD_NOW: a missing symbol of Gmsh's own dependencies is reported here, not mid-run;
     the handle stays open until exit (Gmsh is finalized at PetscFinalize) */
  h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(loaderr_, sizeof(loaderr_), "cannot load the Gmsh library %s (needed to read meshes and CAD files; MMDEM_GMSH_LIBRARY names another file): %s", name, e ? e : "unknown dlopen error");
    return 1;
  }
#define DEM_GMSH_SYM(slot, field) \
  do { \
    void *s_ = dlsym(h, "gmsh" #slot); \
    if (!s_) { \
      const char *e_ = dlerror(); \
      snprintf(loaderr_, sizeof(loaderr_), "the Gmsh library %s has no function gmsh%s: %s", name, #slot, e_ ? e_ : "not found"); \
      dlclose(h); \
      return 1; \
    } \
    memcpy(&t.field, &s_, sizeof(s_)); /* object to function pointer without a cast warning */ \
  } while (0);
#define DEM_GMSH_SYM1(slot) DEM_GMSH_SYM(slot, slot)
  DEM_GMSH_FUNCTIONS(DEM_GMSH_SYM1)
  DEM_GMSH_SYM(Initialize, Initialize)
  DEM_GMSH_SYM(Free, Free)
  DEM_GMSH_SYM(LoggerGetLastError, LoggerGetLastError)
#undef DEM_GMSH_SYM1
#undef DEM_GMSH_SYM
  api_    = t;
  loaded_ = 1;
  return 0;
}

const DemGmshApi *DemGmshApi_Private(void)
{
  if (!loaded_ && DemGmshLoad()) {
    /* unreachable through trimesh.c, which calls gmshInitialize() first and stops on its error */
    fprintf(stderr, "mmdem: %s\n", loaderr_);
    abort();
  }
  return &api_;
}

void DemGmshApiInitialize_Private(int argc, char **argv, int readConfigFiles, int *ierr)
{
  if (DemGmshLoad()) {
    if (ierr) *ierr = 1;
    return;
  }
  loaderr_[0] = '\0';
  api_.Initialize(argc, argv, readConfigFiles, ierr);
}

void DemGmshApiFree_Private(void *p)
{
  /* Gmsh allocates what it returns with malloc and its gmshFree calls free */
  if (loaded_) api_.Free(p);
  else free(p);
}

void DemGmshApiLoggerGetLastError_Private(char **error, int *ierr)
{
  if (loaded_) {
    api_.LoggerGetLastError(error, ierr);
    return;
  }
  if (ierr) *ierr = 0;
  if (error) *error = strdup(loaderr_[0] ? loaderr_ : "the Gmsh library is not loaded");
  if (error && !*error && ierr) *ierr = 1;
}

int DemGmshApiLoaded_Private(void)
{
  void *h;

  if (loaded_) return 1;
  h = dlopen(DemGmshLibName(), RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}
