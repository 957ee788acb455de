/*
  dem_vtk.h - the VTK output shim: plain C declarations of the writers implemented in C++ by
  dem_vtk.cxx on top of VTK's XML writers (the one C++ file in the tree, DESIGN.md "Output").

  Files are VTK XML PolyData, binary appended data, zlib compressed. With one rank a writer
  produces the serial file PATH (which must end in ".vtp"). With more than one rank in the
  communicator, every rank passes its own piece and the writer produces PATH with ".vtp"
  replaced by ".pvtp" (the summary) plus one piece file per non-empty rank, BASE_<rank>.vtp
  beside it, where BASE is PATH without ".vtp". A rank whose piece has no points and no cells
  writes no piece file (and removes a stale one), and the summary does not list it.

  Every file a reader may open appears atomically: serial files and the .pvtp summary are written
  under a temporary name and renamed into place; the summary is written after all pieces.

  Every function returns 0 on success and nonzero on failure, with a message in err[errlen]
  (err may be NULL when errlen is 0; on success err is set to ""). C++ exceptions never leave
  the shim. The writers are collective over fcomm when it has more than one rank: every rank
  returns the same status, and on failure every rank receives the message of the first rank
  that failed. The pvd writer is not collective: call it on one rank only.

  The header needs neither MPI nor PETSc; include <mpi.h> only to convert a communicator:
    DemVtkWritePoints(MPI_Comm_c2f(comm), ...)
  (fcomm is an MPI_Fint, which is int in OpenMPI and MPICH). When MPI is not initialized, or
  is already finalized, fcomm is ignored and the serial file is written.
*/
#ifndef DEM_VTK_H
#define DEM_VTK_H

#include <stddef.h>

/*
  Loading (issue 11, memory): VTK is not linked into libmmdem. dem_vtk.cxx is built alone into
  the shared object libmmdem_vtk.so (linked with VTK), installed beside libmmdem.so; the
  functions below, as libmmdem exports them, are small wrappers (dem_vtk_load.c) that dlopen it
  on the first call: the file named by the environment variable MMDEM_VTK_LIBRARY when set,
  else libmmdem_vtk.so in the directory libmmdem.so was loaded from. A run that writes no VTK
  never maps VTK. If it cannot be loaded, a call fails with a message naming the file and
  dlerror() (on every rank that fails to load it). dem_vtk.cxx defines DEM_VTK_SHIM, under
  which the writers it defines are named DemVtkShim* (what the wrappers look up with dlsym), so
  the two sets of names never interpose.
*/
#ifdef DEM_VTK_SHIM
#define DemVtkWritePoints  DemVtkShimWritePoints
#define DemVtkWriteLines   DemVtkShimWriteLines
#define DemVtkWriteSurface DemVtkShimWriteSurface
#define DemVtkWritePvd     DemVtkShimWritePvd
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* element types of DemVtkArray.type */
#define DEM_VTK_DOUBLE 0 /* double,  written as Float64 */
#define DEM_VTK_INT64  1 /* int64_t, written as Int64 */
#define DEM_VTK_INT32  2 /* int32_t, written as Int32 */

/* A data array of ntuples x ncomp values, tuple-major (the ncomp values of a tuple are
   adjacent). ntuples is the number of points or cells of the call it is passed to. name must
   be non-empty and unique within one call; data may be NULL only when ntuples is 0. Under MPI
   every rank must pass the same names, types and ncomp, in the same order. */
typedef struct {
  const char *name;
  int         ncomp;
  int         type; /* DEM_VTK_DOUBLE, DEM_VTK_INT64 or DEM_VTK_INT32 */
  const void *data;
} DemVtkArray;

/*
  DemVtkWritePoints - writes n points (bodies) with point-data arrays; each point is also a
  vertex cell, so ParaView's Glyph filter and point rendering work directly.

  Collective on fcomm.
  Input:  fcomm - MPI_Comm_c2f() of the communicator; path - ends in ".vtp"; n >= 0 points;
          xyz[3n] coordinates; narr arrays arr[narr], one tuple per point.
  Output: err[errlen] - the message on failure.
  See also: DemVtkWriteLines(), DemVtkWriteSurface(), DemVtkWritePvd()
*/
int DemVtkWritePoints(int fcomm, const char *path, long n, const double *xyz, int narr, const DemVtkArray *arr, char *err, size_t errlen);

/*
  DemVtkWriteLines - writes a line network (the contact network): npts points, nlines
  segments conn[2 nlines] (0-based indices into this rank's points), cell-data arrays with one
  tuple per line.

  Collective on fcomm. Indices out of [0, npts) are an error.
  See also: DemVtkWritePoints()
*/
int DemVtkWriteLines(int fcomm, const char *path, long npts, const double *xyz, long nlines, const long *conn, int ncarr, const DemVtkArray *carr, char *err, size_t errlen);

/*
  DemVtkWriteSurface - writes a triangle surface (walls, true surfaces of bodies): npts points,
  ntri triangles tri[3 ntri] (0-based indices into this rank's points), cell-data arrays with
  one tuple per triangle.

  Collective on fcomm. Indices out of [0, npts) are an error.
  See also: DemVtkWritePoints()
*/
int DemVtkWriteSurface(int fcomm, const char *path, long npts, const double *xyz, long ntri, const long *tri, int ncarr, const DemVtkArray *carr, char *err, size_t errlen);

/*
  DemVtkWritePvd - writes a ParaView collection file (.pvd, plain XML) listing n datasets:
  files[i] at time times[i], in the given order. File names are written as given (XML-escaped);
  ParaView resolves relative names against the directory of the .pvd file. times must be
  finite.

  Not collective: call it on one rank.
  See also: DemVtkWritePoints()
*/
int DemVtkWritePvd(const char *path, int n, const double *times, const char *const *files, char *err, size_t errlen);

/*
  DemVtkCall - turns a failed shim call into a PETSc error carrying the shim's message
  (STYLE.md item 2), in the manner of PetscCallMPI(). Pass DEM_VTK_ERR as the last two
  arguments of the call:
    DemVtkCall(comm, DemVtkWritePoints(MPI_Comm_c2f(comm), path, n, xyz, na, arr, DEM_VTK_ERR));
  Needs petscsys.h where it is expanded. The writers fail on all ranks together, so the
  resulting error is collective.
*/
#define DEM_VTK_ERR dem_vtk_err_, sizeof(dem_vtk_err_)
#define DemVtkCall(comm, call) \
  do { \
    char dem_vtk_err_[1024]; \
    dem_vtk_err_[0] = '\0'; \
    PetscCheck((call) == 0, (comm), PETSC_ERR_FILE_WRITE, "VTK output: %s", dem_vtk_err_); \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif /* DEM_VTK_H */
