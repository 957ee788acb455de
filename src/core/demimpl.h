/*
  demimpl.h - private structures of mmdem: ops tables, object structs, the simulation.
  Implementations (src/shapes, src/contact, src/integrators, plugins) include this header;
  applications use only dem.h.
*/
#pragma once
#include "dem.h"
#include <petscsnes.h>

/* Registration marker (STYLE.md item 6): a line `DEM_STYLE(kind, "name", CreateFn)` at file
   scope in an implementation file is collected by the Makefile into build/styles.inc, which
   src/core/registry.c includes with DEM_STYLE defined as a registration call. Elsewhere it
   expands to nothing. kind: shape, contact, integrator, or collider (then name is "kindA/kindB"
   and CreateFn a DemCollideFn). */
#ifndef DEM_STYLE
#define DEM_STYLE(kind, name, fn)
#endif

/* PETSc-style dispatch: a required slot raises an error naming the class and type */
#define DemUseMethod(obj, OP, ...) \
  do { \
    PetscCheck((obj)->ops->OP, PETSC_COMM_SELF, PETSC_ERR_SUP, "No method %s for %s of type %s", #OP, (obj)->classname, (obj)->type_name ? (obj)->type_name : "(unset)"); \
    PetscCall((*(obj)->ops->OP)((obj), __VA_ARGS__)); \
  } while (0)
#define DemTryMethod(obj, OP, ...) \
  do { \
    if ((obj)->ops->OP) PetscCall((*(obj)->ops->OP)((obj), __VA_ARGS__)); \
  } while (0)

/* a triangulated surface for output (VTK) */
typedef struct {
  PetscInt   npoints, ntri;
  PetscReal *points; /* [3 npoints], body frame */
  PetscInt  *tri;    /* [3 ntri] */
} DemSurface;
PETSC_EXTERN PetscErrorCode DemSurfaceFree(DemSurface *);

typedef struct _DemShapeOps *DemShapeOps;
struct _DemShapeOps {
  PetscErrorCode (*setfromconfig)(DemShape, DemNode cfg);
  PetscErrorCode (*massproperties)(DemShape, PetscReal rho, PetscReal *m, PetscReal I[3]);
  PetscErrorCode (*boundingradius)(DemShape, PetscReal *r);
  PetscErrorCode (*tessellate)(DemShape, DemSurface *out);
  PetscErrorCode (*destroy)(DemShape);
};

struct _p_DemShape {
  DemShapeOps  ops;
  void        *data;
  char        *type_name;
  const char  *classname;
  MPI_Comm     comm;
  DemShapeKind kind;      /* set by the constructor */
  PetscBool    unbounded; /* planes: not put in the cell grid, tested against every body */
  char         name[64];  /* the key under shapes: in the YAML */
};

typedef struct _DemContactLawOps *DemContactLawOps;
struct _DemContactLawOps {
  PetscErrorCode (*setfromconfig)(DemContactLaw, DemNode cfg, const DemMaterialPair *);
  PetscErrorCode (*compute)(DemContactLaw, const DemContactBatch *, PetscReal dt, PetscBool commit, DemContactForces *out);
  PetscErrorCode (*criticaldt)(DemContactLaw, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt);
  PetscErrorCode (*destroy)(DemContactLaw);
};

struct _p_DemContactLaw {
  DemContactLawOps ops;
  void            *data;
  char            *type_name;
  const char      *classname;
  MPI_Comm         comm;
  PetscInt         histsize;   /* history reals per contact, set by the constructor */
  PetscReal        activation; /* contacts are reported by colliders when gap < activation */
  DemMaterialPair  mp;
};

typedef struct _DemIntegratorOps *DemIntegratorOps;
struct _DemIntegratorOps {
  PetscErrorCode (*setfromconfig)(DemIntegrator, DemNode cfg);
  PetscErrorCode (*setup)(DemIntegrator, DemSim);
  PetscErrorCode (*step)(DemIntegrator, DemSim, PetscReal dt, DemStepInfo *info);
  PetscErrorCode (*destroy)(DemIntegrator);
};

struct _p_DemIntegrator {
  DemIntegratorOps ops;
  void            *data;
  char            *type_name;
  const char      *classname;
  MPI_Comm         comm;
  PetscBool        setupcalled;
};

/* ---- neighbour list (src/search) ---- */
typedef struct {
  PetscInt  n, cap;
  PetscInt *a, *b, *s, *g;
} DemPairBuf; /* candidate pairs before grouping */

typedef struct {
  PetscInt   npairs, cap;
  PetscInt  *a, *b;      /* body indices; a < b for body pairs; b is the wall for wall pairs */
  PetscInt  *shiftidx;   /* periodic image index 0..26 (13 = none) */
  PetscReal *history;    /* [sim->histsize * histcap] contact history per pair (feature 0) */
  PetscInt   histcap;    /* capacity of history, in pairs */
  DemPairBuf pb;
  /* pairs grouped by shape-kind pair: group g covers [gstart[g], gstart[g+1]) */
  PetscInt   ngroups;
  DemShapeKind gka[DEM_KIND_MAX * DEM_KIND_MAX], gkb[DEM_KIND_MAX * DEM_KIND_MAX];
  PetscInt   gstart[DEM_KIND_MAX * DEM_KIND_MAX + 1];
  PetscReal *shift;      /* [3 * npairs] expanded shift vectors (NULL when not periodic) */
  PetscInt  *pairidx;    /* identity 0..npairs-1, the `pair` column of batches */
  /* positions at the last build */
  PetscReal *x0;
  PetscInt   x0cap;
  PetscInt   nbuilds;
  /* cell grid scratch */
  PetscInt  *cellhead, *cellnext, ncells, cellcap;
  PetscInt   nc[3];
  PetscReal  cell[3];
} DemNeighbourList;

/* history hash: (gid_a, gid_b, feature) -> history values; survives rebuilds */
typedef struct {
  PetscInt  cap, count, histsize;
  int64_t  *ka, *kb, *kf;
  unsigned char *used;
  PetscReal *val;
} DemHistoryMap;
PETSC_EXTERN PetscErrorCode DemHistoryMapInit(DemHistoryMap *, PetscInt histsize);
PETSC_EXTERN PetscErrorCode DemHistoryMapFree(DemHistoryMap *);
PETSC_EXTERN PetscErrorCode DemHistoryMapClear(DemHistoryMap *);
PETSC_EXTERN PetscErrorCode DemHistoryMapPut(DemHistoryMap *, int64_t a, int64_t b, int64_t f, const PetscReal *val);
/* returns a pointer to the stored values or NULL */
PETSC_EXTERN PetscReal *DemHistoryMapGet(DemHistoryMap *, int64_t a, int64_t b, int64_t f);

PETSC_EXTERN PetscErrorCode DemNeighbourBuild_Private(DemSim, const PetscReal *x);
PETSC_EXTERN PetscErrorCode DemNeighbourFree_Private(DemNeighbourList *);

/* ---- walls, loads, output ---- */
typedef struct {
  PetscInt  body;        /* index in the store */
  PetscReal velocity[3]; /* constant velocity */
  PetscReal remove_at;   /* time of removal (< 0: never) */
  char      name[64];
} DemWall;

typedef struct {
  PetscInt *ids, nids;   /* body ids (gid) */
  PetscReal force[3], moment[3], point[3];
  PetscBool haspoint;
  PetscReal ramp[2];     /* linear ramp 0 -> 1 over [ramp0, ramp1]; ramp1 <= ramp0: constant */
} DemLoad;

typedef struct {
  char      dir[PETSC_MAX_PATH_LEN];
  PetscReal vtk_every;   /* simulated seconds; <= 0: none */
  PetscInt  thermo_every;/* steps */
  PetscBool contacts;    /* write contact network */
  PetscInt *track, ntrack;
  PetscBool quiet;
} DemOutputConfig;

/* ---- the simulation ---- */
struct _p_DemSim {
  MPI_Comm     comm;
  PetscMPIInt  rank, size;
  char         name[128];
  char         file[PETSC_MAX_PATH_LEN];
  /* domain */
  PetscReal    lo[3], hi[3];
  PetscBool    periodic[3];
  PetscInt     dim;
  PetscReal    gravity[3];
  /* tables */
  PetscInt     nmat;
  DemMaterial *mat;
  PetscInt     nshape;
  DemShape    *shapes;
  PetscInt     nlaw;
  DemContactLaw *laws;
  PetscInt    *pairlaw;  /* [nmat*nmat] -> law index */
  PetscInt     histsize; /* max over laws */
  /* bodies */
  DemBodyStore bodies;
  PetscInt     nparticles; /* bodies that are not walls */
  PetscInt     nsets;      /* body sets of the YAML */
  DemNode     *setnode;    /* [nsets] their nodes, for messages */
  PetscInt    *setfirst;   /* [nsets] index of the first body of each set */
  PetscInt    *bodyset;    /* [n] set of each body (-1 for walls) */
  PetscInt     bodysetcap;
  DemNode      root;       /* the run description (owned by the caller) */
  PetscInt     nwall;
  DemWall     *walls;
  PetscInt     nload;
  DemLoad     *loads;
  /* search */
  PetscReal    skin;
  PetscBool    skin_set;
  DemNeighbourList nl;
  DemHistoryMap    hmap;
  /* contacts of the last committed force evaluation */
  DemContactList   cl;
  DemContactForces cf;
  PetscInt         cfcap;
  PetscReal       *vrel, *meff;   /* scratch columns */
  PetscInt        *order, *lawstart; /* contacts sorted by law */
  char            *touched;          /* [npairs] scratch: pair in contact this evaluation */
  PetscInt         touchcap;
  /* integrator and time */
  DemIntegrator integ;
  PetscReal    dt, dt_fraction, tc_min;
  PetscBool    dt_auto;
  PetscReal    time, end_time;
  PetscInt     step, max_steps;
  /* energy bookkeeping */
  PetscReal    pe_contact, dissipated, dissip_rate_prev;
  PetscInt     ncontacts, iterations;
  /* output */
  DemOutputConfig out;
  void        *outstate; /* open files of a running simulation (output.c) */
  PetscBool    setupcalled;
  PetscLogDouble wall0;
  /* plugin-registered */
  PetscInt     nplugins;
};

/* narrow phase only: contact points at a state into sim->cl, grouped by law (forces.c) */
PETSC_EXTERN PetscErrorCode DemContactsDetect(DemSim, const DemState *);
/* helpers shared between core files */
PETSC_EXTERN PetscErrorCode DemRecordErrorHandler(MPI_Comm, int, const char *, const char *, PetscErrorCode, PetscErrorType, const char *, void *);
PETSC_EXTERN PetscErrorCode DemIntegratorAllowKeys_Private(DemNode cfg, const char *const own[]);
PETSC_EXTERN PetscErrorCode DemSimEnergies_Private(DemSim, PetscReal *ke_t, PetscReal *ke_r, PetscReal *pe_g);
PETSC_EXTERN PetscErrorCode DemSimApplyWalls_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemOutputOpen_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemOutputStep_Private(DemSim, PetscBool force_vtk);
PETSC_EXTERN PetscErrorCode DemOutputClose_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemCriticalDt_Private(DemSim, PetscReal *tc);

/* ---- registry internals ---- */
PETSC_EXTERN PetscErrorCode DemColliderGet_Private(DemShapeKind a, DemShapeKind b, DemCollideFn *fn, PetscBool *swapped);
PETSC_EXTERN PetscErrorCode DemShapeRegistryNames_Private(char *buf, size_t len);
PETSC_EXTERN PetscErrorCode DemRegistryNames_Private(const char cls[], char *buf, size_t len);
PETSC_EXTERN PetscErrorCode DemShapeFind_Private(const char name[], DemShapeCreateFn *fn);
PETSC_EXTERN PetscErrorCode DemContactLawFind_Private(const char name[], DemContactLawCreateFn *fn);
PETSC_EXTERN PetscErrorCode DemIntegratorFind_Private(const char name[], DemIntegratorCreateFn *fn);
PETSC_EXTERN const char    *DemShapeKindName(DemShapeKind);

/* sphere-plane and sphere-sphere colliders (src/shapes) */
PETSC_EXTERN PetscErrorCode DemShapeCreate_Sphere(DemShape);
PETSC_EXTERN PetscErrorCode DemShapeCreate_Plane(DemShape);
PETSC_EXTERN PetscErrorCode DemCollide_SphereSphere(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PETSC_EXTERN PetscErrorCode DemCollide_SpherePlane(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
/* plane data accessor: world normal and point of a plane body */
PETSC_EXTERN PetscErrorCode DemPlaneGetNormal(DemShape, PetscReal n[3]);
PETSC_EXTERN PetscErrorCode DemPlaneSetDisplaySize(DemShape, PetscReal halfsize);

PETSC_EXTERN PetscErrorCode DemContactLawCreate_Hooke(DemContactLaw);
PETSC_EXTERN PetscErrorCode DemContactLawCreate_HertzMindlin(DemContactLaw);
PETSC_EXTERN PetscErrorCode DemIntegratorCreate_Verlet(DemIntegrator);
