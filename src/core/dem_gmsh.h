/*
  dem_gmsh.h - the Gmsh SDK C API (gmshc.h) reached through dlopen, so that a run that reads no
  mesh or CAD file never maps libgmsh and the OpenCASCADE, FLTK, OpenGL and image libraries it
  pulls in (about 35 MB of resident memory; issue 11, "memory per particle").

  Include it after <gmshc.h> (it includes gmshc.h itself for the types and prototypes): every
  gmsh function that mmdem calls becomes a macro that calls through a table of function
  pointers, so call sites stay written as plain Gmsh calls (trimesh.c). The table is filled on
  the first call by dlopen of the Gmsh library the build linked against (DEM_GMSH_SONAME, read
  by the Makefile from the libgmsh.so symlink, e.g. "libgmsh.so.4.8") and dlsym of each
  function. The environment variable MMDEM_GMSH_LIBRARY names another file to load instead.

  Failure to load: gmshInitialize() sets *ierr = 1 and gmshLoggerGetLastError() then returns
  "cannot load the Gmsh library <name>: <dlerror()>", so the caller's usual Gmsh error path
  reports it (the table is only used after a successful gmshInitialize()). gmshFree() works
  before loading (it frees with free(), which is what Gmsh's gmshFree does).

  Add a function to mmdem's use of Gmsh by adding one X(...) line to DEM_GMSH_FUNCTIONS and
  one #define below (the name without the "gmsh" prefix is the table slot).
*/
#ifndef DEM_GMSH_H
#define DEM_GMSH_H

#include <gmshc.h>

/* the functions called through the table (not gmshInitialize, gmshFree and
   gmshLoggerGetLastError, which have wrappers that work before and without the library) */
#define DEM_GMSH_FUNCTIONS(X) \
  X(Finalize) \
  X(Open) \
  X(Write) \
  X(Clear) \
  X(OptionSetNumber) \
  X(ModelGetEntities) \
  X(ModelGetType) \
  X(ModelMeshGenerate) \
  X(ModelMeshGetNodes) \
  X(ModelMeshGetElementsByType) \
  X(ModelOccAddBox) \
  X(ModelOccAddCylinder) \
  X(ModelOccAddCone) \
  X(ModelOccAddSphere) \
  X(ModelOccFuse) \
  X(ModelOccSynchronize)

typedef struct {
#define DEM_GMSH_SLOT(name) __typeof__(gmsh##name) *name;
  DEM_GMSH_FUNCTIONS(DEM_GMSH_SLOT)
#undef DEM_GMSH_SLOT
  __typeof__(gmshInitialize)         *Initialize;
  __typeof__(gmshFree)               *Free;
  __typeof__(gmshLoggerGetLastError) *LoggerGetLastError;
} DemGmshApi;

/* the table, loading the library on first use; a load failure here (a call before a successful
   gmshInitialize()) prints the reason and aborts */
const DemGmshApi *DemGmshApi_Private(void);
/* wrappers that work whether or not the library is (or can be) loaded */
void DemGmshApiInitialize_Private(int argc, char **argv, int readConfigFiles, int *ierr);
void DemGmshApiFree_Private(void *p);
void DemGmshApiLoggerGetLastError_Private(char **error, int *ierr);
/* 1 when the library is mapped (loaded by this table or linked in) */
int DemGmshApiLoaded_Private(void);

#define gmshInitialize             DemGmshApiInitialize_Private
#define gmshFree                   DemGmshApiFree_Private
#define gmshLoggerGetLastError     DemGmshApiLoggerGetLastError_Private
#define gmshFinalize               (*DemGmshApi_Private()->Finalize)
#define gmshOpen                   (*DemGmshApi_Private()->Open)
#define gmshWrite                  (*DemGmshApi_Private()->Write)
#define gmshClear                  (*DemGmshApi_Private()->Clear)
#define gmshOptionSetNumber        (*DemGmshApi_Private()->OptionSetNumber)
#define gmshModelGetEntities       (*DemGmshApi_Private()->ModelGetEntities)
#define gmshModelGetType           (*DemGmshApi_Private()->ModelGetType)
#define gmshModelMeshGenerate      (*DemGmshApi_Private()->ModelMeshGenerate)
#define gmshModelMeshGetNodes      (*DemGmshApi_Private()->ModelMeshGetNodes)
#define gmshModelMeshGetElementsByType (*DemGmshApi_Private()->ModelMeshGetElementsByType)
#define gmshModelOccAddBox         (*DemGmshApi_Private()->ModelOccAddBox)
#define gmshModelOccAddCylinder    (*DemGmshApi_Private()->ModelOccAddCylinder)
#define gmshModelOccAddCone        (*DemGmshApi_Private()->ModelOccAddCone)
#define gmshModelOccAddSphere      (*DemGmshApi_Private()->ModelOccAddSphere)
#define gmshModelOccFuse           (*DemGmshApi_Private()->ModelOccFuse)
#define gmshModelOccSynchronize    (*DemGmshApi_Private()->ModelOccSynchronize)

#endif /* DEM_GMSH_H */
