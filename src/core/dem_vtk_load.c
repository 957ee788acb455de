/*
  dem_vtk_load.c - the C API of dem_vtk.h as libmmdem exports it: each writer loads the VTK shim
  libmmdem_vtk.so (dem_vtk.cxx linked with VTK) with dlopen on the first call and calls its
  DemVtkShim* function. VTK's libraries (about 10 MB resident) are mapped only by a run that
  writes VTK (issue 11, memory per particle). Which file: $MMDEM_VTK_LIBRARY when set, else
  libmmdem_vtk.so in the directory of the libmmdem.so that holds this code (dladdr), which is
  where the build and `make install` put it. The handle stays open until exit.
*/
#define _GNU_SOURCE /* dladdr */
#include "dem_vtk.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the shim's functions have exactly the prototypes of dem_vtk.h */
static struct {
  int                                  loaded;
  __typeof__(DemVtkWritePoints)       *points;
  __typeof__(DemVtkWriteLines)        *lines;
  __typeof__(DemVtkWriteSurface)      *surface;
  __typeof__(DemVtkWritePvd)          *pvd;
} vtk_;

static int DemVtkLoadError(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
  if (err && errlen) snprintf(err, errlen, fmt, a, b);
  return 1;
}

/* 0 when vtk_ is filled; else 1 with the reason in err */
static int DemVtkLoad(char *err, size_t errlen)
{
  const char *env = getenv("MMDEM_VTK_LIBRARY");
  char        path[4096];
  void       *h, *s[4];
  const char *names[4] = {"DemVtkShimWritePoints", "DemVtkShimWriteLines", "DemVtkShimWriteSurface", "DemVtkShimWritePvd"};

  if (vtk_.loaded) return 0;
  if (env && env[0]) snprintf(path, sizeof(path), "%s", env);
  else {
    Dl_info     info;
    const char *slash;

    if (!dladdr((const void *)&vtk_, &info) || !info.dli_fname) return DemVtkLoadError(err, errlen, "cannot locate libmmdem (dladdr failed) to find %s%s beside it; set MMDEM_VTK_LIBRARY", "libmmdem_vtk.so", "");
    slash = strrchr(info.dli_fname, '/');
    if (slash) snprintf(path, sizeof(path), "%.*s/libmmdem_vtk.so", (int)(slash - info.dli_fname), info.dli_fname);
    else snprintf(path, sizeof(path), "./libmmdem_vtk.so");
  }
  h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    return DemVtkLoadError(err, errlen, "cannot load the VTK output library %s (installed beside libmmdem.so; MMDEM_VTK_LIBRARY names another file): %s", path, e ? e : "unknown dlopen error");
  }
  for (int i = 0; i < 4; i++) {
    s[i] = dlsym(h, names[i]);
    if (!s[i]) {
      char what[4200];
      snprintf(what, sizeof(what), "%s has no function %s", path, names[i]);
      dlclose(h);
      return DemVtkLoadError(err, errlen, "the VTK output library %s%s", what, "");
    }
  }
  /* object to function pointers without a cast warning */
  memcpy(&vtk_.points, &s[0], sizeof(s[0]));
  memcpy(&vtk_.lines, &s[1], sizeof(s[1]));
  memcpy(&vtk_.surface, &s[2], sizeof(s[2]));
  memcpy(&vtk_.pvd, &s[3], sizeof(s[3]));
  vtk_.loaded = 1;
  return 0;
}

int DemVtkWritePoints(int fcomm, const char *path, long n, const double *xyz, int narr, const DemVtkArray *arr, char *err, size_t errlen)
{
  if (DemVtkLoad(err, errlen)) return 1;
  return vtk_.points(fcomm, path, n, xyz, narr, arr, err, errlen);
}

int DemVtkWriteLines(int fcomm, const char *path, long npts, const double *xyz, long nlines, const long *conn, int ncarr, const DemVtkArray *carr, char *err, size_t errlen)
{
  if (DemVtkLoad(err, errlen)) return 1;
  return vtk_.lines(fcomm, path, npts, xyz, nlines, conn, ncarr, carr, err, errlen);
}

int DemVtkWriteSurface(int fcomm, const char *path, long npts, const double *xyz, long ntri, const long *tri, int ncarr, const DemVtkArray *carr, char *err, size_t errlen)
{
  if (DemVtkLoad(err, errlen)) return 1;
  return vtk_.surface(fcomm, path, npts, xyz, ntri, tri, ncarr, carr, err, errlen);
}

int DemVtkWritePvd(const char *path, int n, const double *times, const char *const *files, char *err, size_t errlen)
{
  if (DemVtkLoad(err, errlen)) return 1;
  return vtk_.pvd(path, n, times, files, err, errlen);
}
