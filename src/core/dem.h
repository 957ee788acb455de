/*
  dem.h - public umbrella header of mmdem, the multi-method discrete element framework.

  Plugins and applications include only this header. Objects are opaque handles with private
  ops tables (src/core/demimpl.h), in the manner of PETSc's SNES/KSP. SI units throughout;
  vectors are double[3] in the world frame; orientations are unit quaternions (w,x,y,z),
  body -> world.
*/
#pragma once
/* real builds only: keep <complex.h>'s macro I out (the store has a field named I) */
#ifndef PETSC_SKIP_COMPLEX
#define PETSC_SKIP_COMPLEX
#endif
#include <petscsys.h>
#include <petscmat.h>
#include <stdint.h>
#ifdef I
#undef I
#endif
/* PETSc 3.18 (Debian 12) predates PETSC_SUCCESS */
#if PETSC_VERSION_LT(3, 19, 0) && !defined(PETSC_SUCCESS)
#define PETSC_SUCCESS ((PetscErrorCode)0)
#endif

#define DEM_VERSION_MAJOR 0
#define DEM_VERSION_MINOR 1

/* ---- opaque handles ---- */
typedef struct _p_DemSim        *DemSim;
typedef struct _p_DemShape      *DemShape;
typedef struct _p_DemContactLaw *DemContactLaw;
typedef struct _p_DemIntegrator *DemIntegrator;
typedef struct _DemNode         *DemNode; /* a node of the YAML run description */

/* body flags */
#define DEM_FIXED      0x1u /* never moves (infinite mass for contacts) */
#define DEM_PRESCRIBED 0x2u /* moves with a prescribed velocity; infinite mass for contacts */
#define DEM_GHOST      0x4u /* MPI halo copy */
#define DEM_WALL       0x8u /* a wall body (reported in walls.csv, not bodies_final.csv) */
#define DEM_REMOVED    0x10u /* wall removed at its remove_at time: takes part in nothing */

/* Shape kinds. Built-in kinds have fixed small numbers; plugin kinds are appended. */
typedef int DemShapeKind;
#define DEM_KIND_SPHERE 0
#define DEM_KIND_PLANE  1
#define DEM_KIND_MAX    16

/* ---- body store: structure of arrays, owned bodies first, ghosts after ---- */
typedef struct {
  PetscInt   n;      /* owned bodies (including walls) */
  PetscInt   nghost; /* ghost bodies stored after the owned ones */
  PetscInt   cap;
  int64_t   *gid;
  PetscReal *x, *v, *w; /* [3n] position, velocity, angular velocity (world) */
  PetscReal *q;         /* [4n] orientation quaternion w,x,y,z (body -> world) */
  PetscReal *f, *t;     /* [3n] force, torque (world) */
  PetscReal *m, *inv_m; /* [n] mass (inv_m = 0 for fixed/prescribed) */
  PetscReal *I, *inv_I; /* [3n] principal inertia, body frame (inv 0 for fixed) */
  PetscReal *radius;    /* [n] bounding radius; for spheres the radius */
  int       *shape;     /* [n] index into sim shape table */
  int       *material;  /* [n] index into sim material table */
  unsigned  *flags;     /* [n] DEM_* flags */
  /* plugin per-body fields, registered by name */
  PetscInt   nextra;
  char      *extra_name[16];
  PetscInt   extra_ncomp[16];
  PetscReal *extra[16];
} DemBodyStore;

PETSC_EXTERN PetscErrorCode DemBodyStoreInit(DemBodyStore *);
PETSC_EXTERN PetscErrorCode DemBodyStoreFree(DemBodyStore *);
PETSC_EXTERN PetscErrorCode DemBodyStoreReserve(DemBodyStore *, PetscInt cap);
/* appends one body with zero state and identity orientation, returns its index */
PETSC_EXTERN PetscErrorCode DemBodyStoreAppend(DemBodyStore *, int64_t gid, PetscInt *idx);
PETSC_EXTERN PetscErrorCode DemBodyStoreRegisterField(DemBodyStore *, const char name[], PetscInt ncomp, PetscInt *field);
PETSC_EXTERN PetscErrorCode DemBodyStoreGetField(DemBodyStore *, const char name[], PetscReal **data, PetscInt *ncomp);

/* ---- materials ---- */
typedef struct {
  char      name[64];
  PetscReal density, E, nu, restitution, mu_s, mu_d;
} DemMaterial;

typedef struct {
  const DemMaterial *a, *b;
} DemMaterialPair;

/* ---- a state at which forces are evaluated (implicit integrators pass trial states) ---- */
typedef struct {
  const PetscReal *x, *v, *w, *q; /* arrays laid out as in the store */
} DemState;

/* ---- candidate pairs from the search, grouped by shape-kind pair ---- */
typedef struct {
  DemShapeKind     ka, kb; /* kind of a, kind of b (ka <= kb by convention of the collider table) */
  PetscInt         n;
  const PetscInt  *a, *b;    /* body indices */
  const PetscInt  *pair;     /* index of the pair in the neighbour list (history slot) */
  const PetscReal *shift;    /* [3n] periodic image shift added to x_b, may be NULL (no shift) */
  DemSim           sim;
  const DemState  *state;
} DemPairBatch;

/* ---- contact points, as columns ---- */
typedef struct {
  PetscInt   n, cap;
  PetscInt  *a, *b;      /* body indices */
  int64_t   *feature;    /* 0 for smooth shapes */
  PetscInt  *hist;       /* history slot index (into DemSim history array) or -1 */
  PetscInt  *law;        /* contact-law index for this contact */
  PetscReal *p;          /* [3n] contact point (world) */
  PetscReal *nrm;        /* [3n] unit normal, from b to a */
  PetscReal *gap;        /* [n] signed gap; < 0 overlap */
  PetscReal *reff;       /* [n] effective radius of curvature */
  PetscReal *ra, *rb;    /* [3n] lever arms from the centres of mass of a and b to p */
} DemContactList;

PETSC_EXTERN PetscErrorCode DemContactListReserve(DemContactList *, PetscInt cap);
PETSC_EXTERN PetscErrorCode DemContactListFree(DemContactList *);
/* appends one contact and returns its slot; grows geometrically */
PETSC_EXTERN PetscErrorCode DemContactListAppend(DemContactList *, PetscInt *slot);

/* a contiguous range of contacts that share one law, with what a law needs to read */
typedef struct {
  PetscInt         n;
  const PetscInt  *a, *b, *hist;
  const int64_t   *feature;
  const PetscReal *nrm, *gap, *reff, *ra, *rb;
  const PetscReal *vrel;     /* [3n] relative velocity of a w.r.t. b at the contact point */
  const PetscReal *meff;     /* [n] effective mass */
  PetscReal       *history;  /* base of the history array; slot s at history + s*histsize */
  PetscInt         histsize;
  const DemMaterialPair *mp; /* the material pair of this law */
} DemContactBatch;

/* per contact results of a contact law, as columns */
typedef struct {
  PetscReal *fn;        /* [n] normal force magnitude (> 0 pushes a away from b) */
  PetscReal *ft;        /* [3n] tangential force on a (world) */
  PetscReal *dfn_dgap;  /* [n] d fn / d gap (<= 0 for repulsive laws) */
  PetscReal *cn;        /* [n] normal damping coefficient: fn_damp = -cn * vn */
  PetscReal *kt;        /* [n] tangential stiffness */
  PetscReal *energy;    /* [n] stored elastic energy after this evaluation */
  PetscReal *dissip;    /* [n] dissipated energy rate (power, W) at this evaluation */
  int       *slip;      /* [n] 1 when at the Coulomb limit */
  PetscReal *fdamp;     /* [3n] the velocity-dependent (dissipative) part of the force on a,
                           normal and tangential dashpots; included in fn and ft */
  PetscReal *eslip;     /* [n] elastic energy removed by the Coulomb return mapping at this
                           evaluation (J); 0 without commit */
} DemContactForces;

/* ---- forces at a state ---- */
typedef struct {
  PetscReal *f, *t;       /* [3n] output force and torque arrays (zeroed by the call) */
  PetscReal *fd, *td;     /* optional [3n]: the dissipative part of f and t (energy bookkeeping) */
  PetscReal  eslip;       /* energy removed by friction return mappings (J) */
  PetscReal  pe_contact;  /* stored elastic contact energy */
  PetscReal  dissip_rate; /* total dissipation power (W); the fused kernels leave their contacts
                             out of it in committed evaluations that ask for fd and td (verlet,
                             which books dissipation from those) */
  PetscInt   ncontacts;   /* active contacts */
  Mat        J;           /* with want_jacobian: 6x6-block matrix to add contact blocks to */
} DemForceOut;

/* evaluates every contact, gravity, loads and field forces at `state`; history is updated
   only when commit is true. Collective. */
PETSC_EXTERN PetscErrorCode DemForcesCompute(DemSim, const DemState *, PetscBool want_jacobian, PetscBool commit, DemForceOut *);

/* ---- integrator step info ---- */
typedef struct {
  PetscInt  iterations;
  PetscReal residual;
  PetscBool converged, accepted;
  PetscReal dt_next; /* suggested next dt (0: keep) */
  /* appended (optional; zeroed before the step): checks the integrator made on its way, which
     spare run.c passes of its own over the bodies */
  PetscInt  finite;  /* 1: every x, v, w, q of the owned bodies is finite after the step;
                        -1: some is not; 0: not checked */
  PetscBool bounded; /* every body lies within half the skin of its position at the last
                        neighbour build (the step moved bodies only under DemSimUpdateNeighbours) */
} DemStepInfo;

/* ---- ops signatures ---- */
typedef PetscErrorCode (*DemCollideFn)(DemShapeKind a, DemShapeKind b, const DemPairBatch *, PetscReal skin, DemContactList *out);

/* ---- registry ---- */
typedef PetscErrorCode (*DemShapeCreateFn)(DemShape);
typedef PetscErrorCode (*DemContactLawCreateFn)(DemContactLaw);
typedef PetscErrorCode (*DemIntegratorCreateFn)(DemIntegrator);

PETSC_EXTERN PetscErrorCode DemRegisterAll(void);
PETSC_EXTERN PetscErrorCode DemShapeRegister(const char name[], DemShapeCreateFn, const char origin[]);
PETSC_EXTERN PetscErrorCode DemContactLawRegister(const char name[], DemContactLawCreateFn, const char origin[]);
PETSC_EXTERN PetscErrorCode DemIntegratorRegister(const char name[], DemIntegratorCreateFn, const char origin[]);
/* colliders are registered per pair of shape kinds; the registry keeps them symmetric */
PETSC_EXTERN PetscErrorCode DemColliderRegister(DemShapeKind a, DemShapeKind b, DemCollideFn, const char origin[]);
PETSC_EXTERN PetscErrorCode DemShapeKindRegister(const char name[], DemShapeKind *kind);
PETSC_EXTERN PetscErrorCode DemRegistryView(FILE *);
PETSC_EXTERN PetscErrorCode DemRegistryFinalize(void);

/* ---- objects ---- */
PETSC_EXTERN PetscErrorCode DemShapeCreate(MPI_Comm, DemShape *);
PETSC_EXTERN PetscErrorCode DemShapeSetType(DemShape, const char type[]);
PETSC_EXTERN PetscErrorCode DemShapeSetFromConfig(DemShape, DemNode);
PETSC_EXTERN PetscErrorCode DemShapeGetKind(DemShape, DemShapeKind *);
PETSC_EXTERN PetscErrorCode DemShapeMassProperties(DemShape, PetscReal rho, PetscReal *m, PetscReal I[3]);
PETSC_EXTERN PetscErrorCode DemShapeBoundingRadius(DemShape, PetscReal *r);
PETSC_EXTERN PetscErrorCode DemShapeDestroy(DemShape *);

PETSC_EXTERN PetscErrorCode DemContactLawCreate(MPI_Comm, DemContactLaw *);
PETSC_EXTERN PetscErrorCode DemContactLawSetType(DemContactLaw, const char type[]);
PETSC_EXTERN PetscErrorCode DemContactLawSetFromConfig(DemContactLaw, DemNode, const DemMaterialPair *);
PETSC_EXTERN PetscErrorCode DemContactLawCompute(DemContactLaw, const DemContactBatch *, PetscReal dt, PetscBool commit, DemContactForces *);
PETSC_EXTERN PetscErrorCode DemContactLawCriticalDt(DemContactLaw, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt);
PETSC_EXTERN PetscErrorCode DemContactLawGetHistorySize(DemContactLaw, PetscInt *);
PETSC_EXTERN PetscErrorCode DemContactLawDestroy(DemContactLaw *);

PETSC_EXTERN PetscErrorCode DemIntegratorCreate(MPI_Comm, DemIntegrator *);
PETSC_EXTERN PetscErrorCode DemIntegratorSetType(DemIntegrator, const char type[]);
PETSC_EXTERN PetscErrorCode DemIntegratorSetFromConfig(DemIntegrator, DemNode);
PETSC_EXTERN PetscErrorCode DemIntegratorSetUp(DemIntegrator, DemSim);
PETSC_EXTERN PetscErrorCode DemIntegratorStep(DemIntegrator, DemSim, PetscReal dt, DemStepInfo *);
PETSC_EXTERN PetscErrorCode DemIntegratorDestroy(DemIntegrator *);

/* ---- YAML run description (src/core/config.c) ---- */
typedef enum { DEM_NODE_NONE, DEM_NODE_SCALAR, DEM_NODE_SEQ, DEM_NODE_MAP } DemNodeType;

/* parses FILE (collective: every rank parses); errors carry file:line:col */
PETSC_EXTERN PetscErrorCode DemConfigLoad(const char file[], DemNode *root);
/* --set key.path=value: replaces or adds the scalar at a dotted path (sequence index as a
   number: bodies.0.shape) */
PETSC_EXTERN PetscErrorCode DemConfigSet(DemNode root, const char assignment[]);
PETSC_EXTERN PetscErrorCode DemConfigDestroy(DemNode *root);

PETSC_EXTERN DemNodeType    DemNodeGetType(DemNode);
PETSC_EXTERN const char    *DemNodePath(DemNode);     /* e.g. "integrator.dt" */
PETSC_EXTERN const char    *DemNodeFile(DemNode);
PETSC_EXTERN PetscErrorCode DemNodeLocation(DemNode, int *line, int *col); /* 1-based */
/* refuses any key of a mapping not in the NULL-terminated list, naming the allowed ones */
PETSC_EXTERN PetscErrorCode DemNodeAllowKeys(DemNode map, const char *const keys[]);
/* child of a mapping by key; *child = NULL if absent */
PETSC_EXTERN PetscErrorCode DemNodeGet(DemNode map, const char key[], DemNode *child);
PETSC_EXTERN PetscErrorCode DemNodeSeqLength(DemNode seq, PetscInt *n);
PETSC_EXTERN PetscErrorCode DemNodeSeqItem(DemNode seq, PetscInt i, DemNode *item);
PETSC_EXTERN PetscErrorCode DemNodeMapLength(DemNode map, PetscInt *n);
PETSC_EXTERN PetscErrorCode DemNodeMapItem(DemNode map, PetscInt i, const char **key, DemNode *value);
PETSC_EXTERN const char    *DemNodeScalar(DemNode); /* NULL if not a scalar */
/* typed getters on a mapping: `required` false leaves *val untouched when absent */
PETSC_EXTERN PetscErrorCode DemNodeGetReal(DemNode map, const char key[], PetscBool required, PetscReal *val);
PETSC_EXTERN PetscErrorCode DemNodeGetInt(DemNode map, const char key[], PetscBool required, PetscInt *val);
PETSC_EXTERN PetscErrorCode DemNodeGetBool(DemNode map, const char key[], PetscBool required, PetscBool *val);
PETSC_EXTERN PetscErrorCode DemNodeGetString(DemNode map, const char key[], PetscBool required, const char **val);
/* a fixed-length list of reals, e.g. [0, 0, -9.81] */
PETSC_EXTERN PetscErrorCode DemNodeGetRealArray(DemNode map, const char key[], PetscBool required, PetscInt n, PetscReal val[]);
PETSC_EXTERN PetscErrorCode DemNodeGetBoolArray(DemNode map, const char key[], PetscBool required, PetscInt n, PetscBool val[]);
/* a choice among NULL-terminated names; returns the index */
PETSC_EXTERN PetscErrorCode DemNodeGetChoice(DemNode map, const char key[], const char *const choices[], PetscBool required, PetscInt *idx);
PETSC_EXTERN PetscErrorCode DemNodeAsReal(DemNode scalar, PetscReal *val);
/* raises PETSC_ERR_USER_INPUT with "file:line:col: path: message" */
PETSC_EXTERN PetscErrorCode DemNodeError(DemNode, const char fmt[], ...) PETSC_ATTRIBUTE_FORMAT(2, 3);
/* the last user-facing error message (config errors); empty if none */
PETSC_EXTERN const char *DemLastError(void);
PETSC_EXTERN void        DemSetLastError(const char fmt[], ...) PETSC_ATTRIBUTE_FORMAT(1, 2);

#define DemNodeCheck(node, cond, ...) \
  do { \
    if (PetscUnlikely(!(cond))) return DemNodeError(node, __VA_ARGS__); \
  } while (0)

/* ---- simulation ---- */
PETSC_EXTERN PetscErrorCode DemSimCreate(MPI_Comm, DemSim *);
/* reads the whole run description; nothing is written and nothing runs on error */
PETSC_EXTERN PetscErrorCode DemSimSetFromConfig(DemSim, DemNode root);
PETSC_EXTERN PetscErrorCode DemSimSetOutputDir(DemSim, const char dir[]);
PETSC_EXTERN PetscErrorCode DemSimSetUp(DemSim);
PETSC_EXTERN PetscErrorCode DemSimRun(DemSim);
PETSC_EXTERN PetscErrorCode DemSimView(DemSim, FILE *);
PETSC_EXTERN PetscErrorCode DemSimDestroy(DemSim *);
PETSC_EXTERN PetscErrorCode DemSimGetBodies(DemSim, DemBodyStore **);
PETSC_EXTERN PetscErrorCode DemSimGetTime(DemSim, PetscReal *t, PetscInt *step);
PETSC_EXTERN PetscErrorCode DemSimGetGravity(DemSim, PetscReal g[3]);
PETSC_EXTERN PetscErrorCode DemSimGetDimension(DemSim, PetscInt *dim);
/* runs the neighbour search if any body moved more than half the skin (or force) */
PETSC_EXTERN PetscErrorCode DemSimUpdateNeighbours(DemSim, const PetscReal *x, PetscBool force);
/* projects out motion outside the plane for dimension 2 (v_z, w_x, w_y; f_z, t_x, t_y) */
PETSC_EXTERN PetscErrorCode DemSimConstrain(DemSim, PetscReal *v, PetscReal *w);

/* ---- rotation math (src/core/rotation.c) ---- */
PETSC_EXTERN void DemQuatMul(const PetscReal a[4], const PetscReal b[4], PetscReal ab[4]);
PETSC_EXTERN void DemQuatNormalize(PetscReal q[4]);
PETSC_EXTERN void DemQuatToMatrix(const PetscReal q[4], PetscReal R[9]); /* row-major */
PETSC_EXTERN void DemQuatRotate(const PetscReal q[4], const PetscReal v[3], PetscReal out[3]);
PETSC_EXTERN void DemQuatRotateInv(const PetscReal q[4], const PetscReal v[3], PetscReal out[3]);
PETSC_EXTERN void DemQuatFromRotationVector(const PetscReal theta[3], PetscReal q[4]);
PETSC_EXTERN void DemQuatToRotationVector(const PetscReal q[4], PetscReal theta[3]);
PETSC_EXTERN void DemQuatFromRodrigues(const PetscReal alpha[3], PetscReal q[4]);  /* 001 eq. (9) */
PETSC_EXTERN void DemRodriguesFromQuat(const PetscReal q[4], PetscReal alpha[3]);  /* singular at pi */
PETSC_EXTERN void DemRodriguesToMatrix(const PetscReal alpha[3], PetscReal Q[9]);  /* 001 eq. (10), 000 eq. (6) */
PETSC_EXTERN void DemRodriguesCompose(const PetscReal a1[3], const PetscReal a2[3], PetscReal a12[3]); /* 001 eq. (11): Q2 Q1 */
PETSC_EXTERN void DemRodriguesXi(const PetscReal alpha[3], PetscReal Xi[9]); /* 000 eq. (9) */
PETSC_EXTERN void DemSkew(const PetscReal v[3], PetscReal S[9]);
