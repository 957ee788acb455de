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

/* Helpers of the hot loops that are specialised per constant argument (hooke_fused.c, verlet.c,
   the laws' inline kernels) are forced inline in normal builds. Sanitizer builds (make
   SANITIZE=..., which tests/cases/sanitize.sh and tests/fuzz/run.sh use) leave them out of line:
   the same code, checked once instead of once per specialised copy; instrumenting every copy
   took gcc 12 148 s of CPU for hooke_fused.c alone under ASan+UBSan, 11 s out of line. */
#ifdef DEM_SANITIZE_BUILD
  #define DEM_HOT_INLINE static __attribute__((noinline, unused))
#else
  #define DEM_HOT_INLINE static inline __attribute__((always_inline))
#endif

/* a contact's force F on body a at arm ra and -F on body b at arm rb, into the force and torque
   columns f and t (forces.c, jacobian.c, hooke_fused.c) */
DEM_HOT_INLINE void DemPairForceApply_Private(PetscReal *restrict f, PetscReal *restrict t, PetscInt a, PetscInt b, const PetscReal ra[3], const PetscReal rb[3], const PetscReal F[3])
{
  f[3 * a] += F[0], f[3 * a + 1] += F[1], f[3 * a + 2] += F[2];
  f[3 * b] -= F[0], f[3 * b + 1] -= F[1], f[3 * b + 2] -= F[2];
  t[3 * a] += ra[1] * F[2] - ra[2] * F[1];
  t[3 * a + 1] += ra[2] * F[0] - ra[0] * F[2];
  t[3 * a + 2] += ra[0] * F[1] - ra[1] * F[0];
  t[3 * b] -= rb[1] * F[2] - rb[2] * F[1];
  t[3 * b + 1] -= rb[2] * F[0] - rb[0] * F[2];
  t[3 * b + 2] -= rb[0] * F[1] - rb[1] * F[0];
}

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
  /* optional: narrow phase + law + assembly in one pass over a batch of candidate pairs whose
     shape kinds the law knows (sets *handled); used by explicit steps when the contact list
     itself is not wanted. Must give the same forces and history as the generic pipeline.
     The fused op gets pb->pair pointing at the batch's first pair index only (forces.c: the
     pairs are consecutive in the list, and the per-pair indices are made only on demand);
     pb->shift NULL (periodic domains: the image indices sim->nl.shiftidx from that pair on). */
  PetscErrorCode (*fusedpairs)(DemContactLaw, const DemPairBatch *, PetscReal dt, PetscBool commit, DemForceOut *out, PetscBool *handled);
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
  DemSim           sim;        /* the simulation the law belongs to (sim.c); NULL for a law built
                                  on its own: laws that read per-body data (sim->inc_x) check it */
};

typedef struct _DemIntegratorOps *DemIntegratorOps;
struct _DemIntegratorOps {
  PetscErrorCode (*setfromconfig)(DemIntegrator, DemNode cfg);
  PetscErrorCode (*setup)(DemIntegrator, DemSim);
  PetscErrorCode (*step)(DemIntegrator, DemSim, PetscReal dt, DemStepInfo *info);
  PetscErrorCode (*destroy)(DemIntegrator);
  /* optional, appended (checkpoint.c): writes (write true) or reads back the integrator's
     private state between steps: whatever the next step reads that the store, the neighbour
     list, time, dt and the energy counters do not hold (warm starts, adaptive-dt counters,
     random-number state, vectors of the previous step). Reading happens after setup (which saw
     the run description's initial state), once the store and the simulation are restored; it
     must restore exactly what was written, so that a restarted run is bitwise the
     uninterrupted one. Write each item with DemCheckpointIO(), a version number of your own
     first. NULL: a restart warns that the integrator's state starts afresh; an integrator with
     no such state sets DemIntegratorCheckpointNone. */
  PetscErrorCode (*checkpoint)(DemIntegrator, FILE *fp, PetscBool write);
  /* optional, appended (output.c): the values of the integrator's own thermo.csv columns,
     named by the NULL-terminated thermo_names of the integrator (newmark.c) */
  PetscErrorCode (*thermo)(DemIntegrator, PetscReal values[]);
  /* optional, appended (decomp.c): several MPI ranks, around the serialization of a checkpoint
     on rank 0: gather true collects onto rank 0 the per-rank state that ops->checkpoint writes
     (cd.c's warm starts), gather false undoes it. Collective */
  PetscErrorCode (*mpigather)(DemIntegrator, DemSim, PetscBool gather);
  /* optional, appended (run.c, guard.c): completes whatever part of the last step the
     integrator deferred to the next one (verlet.c: the second kick, on steps after which
     nothing reads the state), so that the store holds the step's end; called before the state
     is read on a failure or a signal */
  PetscErrorCode (*sync)(DemIntegrator, DemSim);
};

struct _p_DemIntegrator {
  DemIntegratorOps ops;
  void            *data;
  char            *type_name;
  const char      *classname;
  MPI_Comm         comm;
  PetscBool        setupcalled;
  /* appended: the time-step protocol of run.c (guard.c) */
  PetscInt         stability; /* DEM_INTEGRATOR_EXPLICIT: a dt above the shortest collision time
                                 is refused at set-up; DEM_INTEGRATOR_IMPLICIT: any dt;
                                 0 (undeclared): a warning */
  PetscReal        dt_min;    /* a rejected step whose suggested dt_next is below this stops the
                                 run with a diagnosis; 0: 1e-9 of the configured dt */
  const char *const *thermo_names; /* appended: extra thermo.csv columns (ops->thermo), or NULL */
  PetscBool        mpi;       /* appended: correct on more than one MPI rank (decomp.c refuses the others) */
  PetscBool        fast_forces; /* appended: its steps evaluate forces with DemForcesComputeFast and
                                   read nothing of sim->cl/cf between steps, so the set-up
                                   evaluation may use the fused kernels too (sim.c) */
};

/* ---- neighbour list (src/search) ---- */
typedef struct {
  PetscInt  n, cap;
  PetscInt *a, *b, *s; /* s: image index, stencil offset and shape-kind pair (neighbour.c) */
  PetscBool lent;      /* a, b, s lie in the history array, dead during a build (neighbour.c) */
} DemPairBuf; /* candidate pairs before grouping */

#define DEM_NOSHIFT 13 /* the image index of no periodic shift (offsets -1, 0, +1 -> 3 x 3 x 3) */
/* the periodic image shift of image index s (0 ... 26: offsets s / 9, (s / 3) % 3, s % 3 minus
   one, times the box lengths L): the one expression of the neighbour list's shift vectors and the
   fused laws' 27-entry table, so both give the same bits */
static inline void DemImageShift_Private(PetscInt s, const PetscReal L[3], PetscReal o[3])
{
  o[0] = (s / 9 - 1) * L[0];
  o[1] = ((s / 3) % 3 - 1) * L[1];
  o[2] = (s % 3 - 1) * L[2];
}

typedef struct {
  PetscInt   npairs, cap;
  PetscInt  *a, *b;      /* body indices; a < b for body pairs; b is the wall for wall pairs */
  PetscInt  *shiftidx;   /* periodic image index 0..26 (DEM_NOSHIFT = 13: none) */
  PetscReal *history;    /* [sim->histsize * histcap] contact history per pair (feature 0) */
  PetscInt   histcap;    /* capacity of history, in pairs */
  DemPairBuf pb;
  /* pairs grouped by shape-kind pair: group g covers [gstart[g], gstart[g+1]) */
  PetscInt   ngroups;
  DemShapeKind gka[DEM_KIND_MAX * DEM_KIND_MAX], gkb[DEM_KIND_MAX * DEM_KIND_MAX];
  PetscInt   gstart[DEM_KIND_MAX * DEM_KIND_MAX + 1];
  PetscBool  noshift_first; /* in every group the pairs without an image shift (13) come first
                               (neighbour.c; kept by checks of restored lists): fused kernels
                               then test the shift once per group, not per pair */
  /* made on demand, not by the build (DemNeighbourShifts_Private, DemNeighbourPairIdx_Private,
     the only readers): the fused laws read neither (the image index and the batch's first pair
     index), and the two are 28 of the bytes per candidate pair (chute: 135687 pairs, capacity
     152711, 4.3 MB; its peak RSS over 300 steps 64.4 -> 61.3 MB). Either is NULL or holds cap
     entries: whatever reallocates the list frees them */
  PetscReal *shift;       /* [3 * cap] the image shift vectors of shiftidx, when shift_valid */
  PetscInt  *pairidx;     /* [cap] identity 0..cap-1, the `pair` column of batches */
  PetscBool  shift_valid; /* shift is shiftidx's: cleared by whatever writes the pairs */
  /* positions at the last build */
  PetscReal *x0;
  PetscInt   x0cap;
  PetscInt   nbuilds;
  /* cell grid scratch: the bodies of cell c are cellbody[cellstart[c] .. cellstart[c + 1]),
     in ascending index (a counting sort) */
  PetscInt  *cellstart, *cellbody, ncells, cellcap;
  PetscInt   nc[3];
  PetscReal  cell[3];
  /* appended: history slots of contacts with a feature key, at npairs + s (featslot.c) */
  PetscInt   nfeat, featcap, fhashcap, fbuild; /* fbuild: nbuilds + 1 of the build they belong to */
  PetscInt  *fpair, *fhash;
  int64_t   *fkey;
  void      *fmap;   /* DemHistoryMap of the feature slots' values kept across the last build */
  PetscInt   built_nb; /* bodies at the last serial build (its pairs' indices are valid then) */
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
/* writes (write) or reads back a map's entries through DemCheckpointIO (history.c) */
PETSC_EXTERN PetscErrorCode DemHistoryMapCheckpoint_Private(DemHistoryMap *, FILE *, PetscBool write, const char what[]);

PETSC_EXTERN PetscErrorCode DemNeighbourBuild_Private(DemSim, const PetscReal *x);
/* the list's image shift vectors [3 * npairs] (made from shiftidx on first demand after each
   change of the list) and pair indices [npairs] (the identity) */
PETSC_EXTERN PetscErrorCode DemNeighbourShifts_Private(DemSim, const PetscReal **shift);
/* the shift vectors of pairs [k0, k1) into a caller's buffer of 3 (k1 - k0) */
PETSC_EXTERN PetscErrorCode DemNeighbourShiftsFill_Private(DemSim, PetscInt k0, PetscInt k1, PetscReal *shift);
PETSC_EXTERN PetscErrorCode DemNeighbourPairIdx_Private(DemSim, const PetscInt **pair);
/* spatial reordering of the store along a Hilbert curve at neighbour builds (src/search/sort.c) */
#define DEM_SORT_EVERY_DEFAULT 0 /* search.sort_every when absent: off (benchmarks/settle/README.md, session 11: no gain measured on the benchmarks; serial results then stay those of the id order) */
PETSC_EXTERN uint64_t       DemHilbertKey_Private(const uint32_t c[3], int bits);
PETSC_EXTERN PetscErrorCode DemBodyStorePermute_Private(DemBodyStore *, const PetscInt perm[]);
PETSC_EXTERN PetscErrorCode DemSimPermuteBodies_Private(DemSim, const PetscInt perm[]);
PETSC_EXTERN PetscBool      DemSimSortDue_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemSimSortBodies_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemSortSetFromConfig_Private(DemSim, DemNode root);
PETSC_EXTERN PetscErrorCode DemSimGidOrder_Private(DemSim, PetscInt **order);
PETSC_EXTERN PetscErrorCode DemSimUpdateNeighboursMoved_Private(DemSim, PetscInt moved); /* neighbour.c */
PETSC_EXTERN PetscErrorCode DemNeighbourFree_Private(DemNeighbourList *);
/* feature slots (featslot.c): the history slot of (pair, feature != 0), made on first use after
   a build (create) or looked up; at a rebuild the nonzero ones go into nl->fmap, which keeps them
   for the slots of the next build; forces.c zeroes untouched ones */
PETSC_EXTERN PetscErrorCode DemNeighbourFeatureSlot_Private(DemSim, PetscInt pair, int64_t feature, PetscBool create, PetscInt *slot, PetscBool *fresh);
PETSC_EXTERN PetscErrorCode DemNeighbourFeatureSave_Private(DemSim);
PETSC_EXTERN PetscInt       DemNeighbourFeatureCount_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemNeighbourFeatureFree_Private(DemNeighbourList *);
/* the feature slots and map by global ids around a rebuild that must keep them (a restart's distribution, decomp.c) */
PETSC_EXTERN PetscErrorCode DemNeighbourFeatureExport_Private(DemSim, DemHistoryMap *all);
PETSC_EXTERN PetscErrorCode DemNeighbourFeatureImport_Private(DemSim, DemHistoryMap *all);
/* the feature slots, their history rows and the feature map in a checkpoint (featslot.c) */
PETSC_EXTERN PetscErrorCode DemNeighbourFeatureCheckpoint_Private(DemSim, FILE *, PetscBool write, PetscBool apply, PetscInt npairs, size_t avail);

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
/* bits of DemSim's slip_mode per history slot (friction.h DemFrictionSpringMode_Private) */
#define DEM_SLIP_IMPOSED 1
#define DEM_SLIP_WRONG   2
#define DEM_SLIP_UNSET   4
#define DEM_SLIP_FREE    8

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
  PetscReal   *fd, *td;  /* [3 nb] dissipative part of the body forces and torques at the last
                            committed evaluation (energy bookkeeping of the integrators) */
  PetscInt     fdcap;
  PetscInt     ncontacts, iterations;
  /* output */
  DemOutputConfig out;
  void        *outstate; /* open files of a running simulation (output.c) */
  PetscBool    record_contacts; /* the next force evaluation must leave every contact in cl/cf */
  PetscBool    defer_sums;      /* MPI, verlet: this evaluation's sums over the ranks (energies, counts,
                                   wall reactions) are not needed: skipped (decomp.c) */
  PetscReal    dissip_pending;  /* MPI, verlet: this rank's dissipation of such steps, summed at the
                                   next step that is read (verlet.c) */
  PetscBool    output_idle;     /* set by the run loop: energy_idle, and no VTK frame after the step */
  PetscBool    prezeroed;       /* the owned bodies' f (= m g), t, fd and td were reset for the next
                                   force evaluation by the integrator's pass (verlet.c); that
                                   evaluation skips its own reset and clears the flag (forces.c) */
  PetscBool    energy_idle;     /* set by the run loop (run.c): no output after the next step reads
                                   pe_contact (not a thermo, checkpoint or last step) */
  PetscBool    skip_pe;         /* set by an integrator around one committed force evaluation when
                                   energy_idle: fused kernels may leave pe_contact out (verlet.c) */
  PetscBool    no_fused;        /* debugging and tests: never use fused kernels (env MMDEM_NO_FUSED) */
  PetscBool    setupcalled;
  PetscLogDouble wall0;
  /* plugin-registered */
  PetscInt     nplugins;
  struct _DemBondList *bonds; /* bonded pairs (src/core/bonds.c), NULL without a bonds: key */
  /* increments from the last committed state to the state being evaluated, [3 nb] each:
     position and incremental Rodrigues rotation (001 eq. (45)). Set by integrators that know
     them (trapezoid.c) around their DemForcesCompute calls, NULL otherwise; laws that map
     rolling (hertz_mindlin tangential: rolling_spring) read them, else use vrel dt */
  const PetscReal *inc_x, *inc_alpha;
  /* the stick/slip active set of an implicit solve (newmark.c), per history slot (< nslip_mode),
     NULL otherwise: friction.h DemFrictionSpringMode_Private reads and writes it */
  signed char *slip_mode;
  PetscInt     nslip_mode;
  struct _DemFields *fields; /* drag and near-field forces, 001 eq. (15)-(18) (fields.c); NULL
                                without a fields: key */
  PetscInt     rejected;     /* steps rejected by the integrator so far (run.c; thermo.csv) */
  /* checkpoints and run guards (checkpoint.c, guard.c) */
  PetscInt     checkpoint_every; /* output.checkpoint_every, steps; 0: none */
  char         restart[PETSC_MAX_PATH_LEN]; /* --restart CHECKPOINT; empty for a fresh run */
  void        *guard;            /* state of the guards of a running simulation (guard.c) */
  struct _DemDecomp *decomp;     /* MPI domain decomposition (decomp.c); NULL on one rank */
  /* appended: spatial reordering of the store (src/search/sort.c) */
  PetscInt     sort_every;       /* search.sort_every: reorder at every this many-th neighbour build; 0: never */
  PetscBool    reordered;        /* the store has been reordered: it may not be in global-id order */
};

/* ---- MPI domain decomposition (src/core/decomp.c); every hook is skipped on one rank ---- */
PETSC_EXTERN PetscBool      DemDecompActive_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemDecompSetFromConfig_Private(DemSim, DemNode root);
PETSC_EXTERN PetscErrorCode DemDecompDistribute_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemDecompUpdateNeighbours_Private(DemSim, const PetscReal *x, PetscBool force, PetscInt moved);
PETSC_EXTERN PetscErrorCode DemDecompReverseForces_Private(DemSim, DemForceOut *);
PETSC_EXTERN PetscErrorCode DemDecompGatherBodies_Private(DemSim, DemBodyStore *all);
PETSC_EXTERN PetscErrorCode DemDecompDestroy_Private(DemSim);
/* sums two per-rank powers (an integrator's dissipation bookkeeping) over the ranks */
PETSC_EXTERN PetscErrorCode DemDecompSumPowers_Private(DemSim, PetscReal *p0, PetscReal *p1);
PETSC_EXTERN PetscErrorCode DemDecompSumPowersPending_Private(DemSim, PetscReal *p0, PetscReal *p1, PetscReal *pending);
PETSC_EXTERN PetscErrorCode DemDecompFlushPending_Private(DemSim);
/* *any = some rank has `failed`; msg becomes the message of the lowest such rank */
PETSC_EXTERN PetscErrorCode DemDecompAgree_Private(DemSim, PetscBool failed, PetscBool *any, char msg[], size_t len);
/* output.track's bodies on rank 0 (x v w q f t: 19 reals each, in output.track's order), NULL elsewhere */
PETSC_EXTERN PetscErrorCode DemDecompTrackRows_Private(DemSim, const PetscReal **rows);
/* the owners' values of trial-state arrays (store layout; NULL: skipped) into their ghosts:
   implicit integrators, before every evaluation at an iterate */
PETSC_EXTERN PetscErrorCode DemDecompForwardState_Private(DemSim, PetscReal *x, PetscReal *v, PetscReal *w, PetscReal *q, PetscReal *dx, PetscReal *alpha);
/* --restart on several ranks: distributes the applied checkpoint (checkpoint.c) */
PETSC_EXTERN PetscErrorCode DemDecompRestored_Private(DemSim);
/* one array of `width` reals per body: owners -> ghosts; ghosts added to their owners */
PETSC_EXTERN PetscErrorCode DemDecompForwardArray_Private(DemSim, PetscReal *a, PetscInt width);
PETSC_EXTERN PetscErrorCode DemDecompReverseAddArray_Private(DemSim, PetscReal *a, PetscInt width);
/* per-pair state outside the neighbour list's history that the decomposition moves with its
   pair: the superquadrics' warm starts (src/shapes/superquadric.c; 0 reals for other shapes) */
PETSC_EXTERN PetscInt       DemShapeSuperquadricWarmReals_Private(DemShape);
PETSC_EXTERN PetscInt       DemShapeSuperquadricWarmSlots_Private(DemShape, DemSim);
PETSC_EXTERN PetscBool      DemShapeSuperquadricWarmGet_Private(DemShape, PetscInt k, int64_t *ga, int64_t *gb, PetscReal v[]);
PETSC_EXTERN PetscErrorCode DemShapeSuperquadricCheckpoint_Private(DemShape, DemSim, FILE *, PetscBool write); /* warm starts, prefilter, counters */
PETSC_EXTERN PetscErrorCode DemShapeSuperquadricWarmPut_Private(DemShape, DemSim, int64_t ga, int64_t gb, const PetscReal v[]);
/* a decomposed run's checkpoints and restarts (superquadric.c): a rank's records by global ids
   (DEM_SQ_EXPORT_REALS(s) reals each) and counters; rank 0 writes every rank's in the serial
   layout; a restart on several ranks holds the applied checkpoint's records over the
   distribution and places them in the slots of each rank's new list */
#define DEM_SQ_COUNTERS 8
#define DEM_SQ_EXPORT_REALS(s) (3 + DemShapeSuperquadricWarmReals_Private(s))
PETSC_EXTERN PetscErrorCode DemShapeSuperquadricExport_Private(DemShape, DemSim, PetscInt *n, PetscReal **r, PetscInt64 cnt[DEM_SQ_COUNTERS]);
PETSC_EXTERN PetscErrorCode DemShapeSuperquadricGathered_Private(DemShape, DemSim, PetscInt n, const PetscReal *r, const PetscInt64 cnt[DEM_SQ_COUNTERS], PetscBool begin);
PETSC_EXTERN PetscErrorCode DemShapeSuperquadricHold_Private(DemShape, DemSim);
PETSC_EXTERN PetscErrorCode DemShapeSuperquadricPlace_Private(DemShape, DemSim);
/* n reals summed over the ranks, in place */
PETSC_EXTERN PetscErrorCode DemDecompSum_Private(DemSim, PetscReal *v, PetscInt n);
/* a per-body field registered after the distribution travels with its body from the next rebuild on */
PETSC_EXTERN PetscErrorCode DemDecompFieldsChanged_Private(DemSim);
/* an integrator's per-pair map (gid a, gid b, feature) that migrates with its pairs at every rebuild (cd's warm starts); NULL: none */
PETSC_EXTERN PetscErrorCode DemDecompPairMap_Private(DemSim, DemHistoryMap *);

/* forces with the laws' fused kernels where possible (explicit integrators; forces.c) */
PETSC_EXTERN PetscErrorCode DemForcesComputeFast(DemSim, const DemState *, PetscBool commit, DemForceOut *);
/* the batch of law l's contacts in sim->cl with the given gap and vrel columns; returns its
   length (forces.c) */
PETSC_EXTERN PetscInt DemContactBatchOfLaw_Private(DemSim, PetscInt l, const PetscReal *gap, const PetscReal *vrel, DemContactBatch *);
/* output columns offset to contact c0 (forces.c) */
PETSC_EXTERN void     DemContactForcesOffset_Private(const DemContactForces *cols, PetscInt c0, DemContactForces *);
/* narrow phase only: contact points at a state into sim->cl, grouped by law (forces.c) */
PETSC_EXTERN PetscErrorCode DemContactsDetect(DemSim, const DemState *);
/* helpers shared between core files */
PETSC_EXTERN PetscErrorCode DemSimReserveDissipative_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemRecordErrorHandler(MPI_Comm, int, const char *, const char *, PetscErrorCode, PetscErrorType, const char *, void *);
PETSC_EXTERN PetscErrorCode DemIntegratorAllowKeys_Private(DemNode cfg, const char *const own[]);
PETSC_EXTERN PetscErrorCode DemSimEnergies_Private(DemSim, PetscReal *ke_t, PetscReal *ke_r, PetscReal *pe_g);
PETSC_EXTERN PetscErrorCode DemSimApplyWalls_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemOutputOpen_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemOutputStep_Private(DemSim, PetscBool force_vtk);
PETSC_EXTERN PetscErrorCode DemOutputClose_Private(DemSim);
PETSC_EXTERN PetscBool      DemOutputVTKDue_Private(DemSim, PetscReal t, PetscBool last);
PETSC_EXTERN PetscErrorCode DemCriticalDt_Private(DemSim, PetscReal *tc);
PETSC_EXTERN PetscErrorCode DemShortestCollision_Private(DemSim, PetscReal *tc, PetscInt *ma, PetscInt *mb, PetscReal *vchar);

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

/* ---- plugins (src/core/plugin.c) ---- */
/* forgets the registry entries whose origin is `origin` (registry.c) */
PETSC_EXTERN PetscErrorCode DemRegistryForget_Private(const char origin[]);
/* MMDEM_PLUGIN_PATH, the run description's plugins: list, and per-body fields (sim.c) */
PETSC_EXTERN PetscErrorCode DemPluginsSetUpSim_Private(DemSim, DemNode root);
PETSC_EXTERN PetscErrorCode DemPluginsLoadFromConfig_Private(DemNode root, PetscInt *nloaded);
/* extra thermo.csv columns registered by plugins (output.c) */
PETSC_EXTERN PetscInt       DemThermoExtraCount_Private(void);
PETSC_EXTERN const char    *DemThermoExtraName_Private(PetscInt);
PETSC_EXTERN PetscErrorCode DemThermoExtraEval_Private(DemSim, PetscInt, PetscReal *);
/* contact dynamics, 004 (src/integrators/cd.c) */
PETSC_EXTERN PetscErrorCode DemIntegratorCreate_CD(DemIntegrator);

/* ---- bonded pairs, 003 section 3.3 (src/core/bonds.c, law src/contact/bond.c) ---- */
typedef struct _DemBondList {
  PetscInt   n;
  PetscInt  *a, *b;        /* [n] bonded bodies, in the colliders' order of shape kinds */
  int64_t   *key;          /* [n] min(a,b) * nbodies + max(a,b), ascending (a, b follow it) */
  PetscInt  *best;         /* [n] scratch: the contact of each bond at this evaluation */
  PetscInt  *ia, *ib;      /* [n] scratch */
  PetscReal *shift;        /* [3n] scratch */
  char      *mark;         /* [n] scratch */
  char      *hasbond;      /* [nbodies] 1 for a body with a bond */
  PetscInt   law;          /* index of the bonds' law in sim->laws */
  PetscReal  threshold;    /* m; <= 0: 0.01 (r_a + r_b) per pair */
  DemNode    node;         /* the bonds: mapping, for messages */
} DemBondList;
PETSC_EXTERN PetscErrorCode DemBondsSetFromConfig_Private(DemSim, DemNode root);
PETSC_EXTERN PetscErrorCode DemBondsSetUp_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemBondsDetect_Private(DemSim, const DemState *);
PETSC_EXTERN PetscErrorCode DemBondsDestroy_Private(DemSim);
/* contact c of sim->cl is a bond */
static inline PetscBool DemContactIsBond_Private(DemSim sim, PetscInt c)
{
  return (sim->bonds && sim->cl.law[c] == sim->bonds->law) ? PETSC_TRUE : PETSC_FALSE;
}
PETSC_EXTERN PetscErrorCode DemContactLawCreate_Bond(DemContactLaw);

/* capacity for `need` items of an array that grows with the contacts (neighbour pairs, their
   history, the fused kernels' scratch): need plus an eighth. Doubling would leave up to half of
   the largest arrays of a run unused, which is the memory per particle of a flowing layer whose
   list grows in steps (benchmarks/chute); an eighth keeps reallocations rare (a list that
   grows by 1 % per rebuild is reallocated every ~12 rebuilds) */
static inline PetscInt DemGrowCap_Private(PetscInt need)
{
  return need + need / 8 + 64;
}

/* ---- contact Jacobian blocks for implicit integrators (src/core/jacobian.c) ---- */
/* block row of each body that is an unknown (mobile particle), -1 for the others */
PETSC_EXTERN PetscErrorCode DemJacobianNumbering_Private(DemSim, PetscInt row[], PetscInt *nrows);
/* MATBAIJ / MATSBAIJ, block size 6, preallocated from the neighbour list and the bonds, with
   the block local-to-global mapping body index -> row[] */
PETSC_EXTERN PetscErrorCode DemJacobianCreate_Private(DemSim, MatType, const PetscInt row[], PetscInt nrows, Mat *J);
/* several MPI ranks (decomp.c): local rows of the owned unknowns and global rows of owned and
   ghost unknowns; the distributed MATMPIBAIJ / MATMPISBAIJ with the mapping body -> grow[] */
PETSC_EXTERN PetscErrorCode DemJacobianNumberingGlobal_Private(DemSim, PetscInt row[], PetscInt grow[], PetscInt *nrows, PetscInt *rstart);
PETSC_EXTERN PetscErrorCode DemJacobianCreateGlobal_Private(DemSim, MatType, const PetscInt grow[], PetscInt nrows, Mat *J);
/* J += cstiff K + cdamp C over the contacts of the last DemForcesCompute (at state st):
   K = -dF/dq (normal dfn_dgap n n^T, geometric fn/dist (I - n n^T), tangential kt (I - n n^T)),
   C = -dF/dv (cn n n^T + ct (I - n n^T)); values added, not assembled */
PETSC_EXTERN PetscErrorCode DemForcesJacobian(DemSim, const DemState *st, PetscReal cstiff, PetscReal cdamp, Mat J);
/* one contact's 12x12 block (row-major; a's six DOF, then b's); *any false: nothing to add */
PETSC_EXTERN PetscErrorCode DemForcesJacobianBlock_Private(DemSim, PetscInt c, PetscReal cstiff, PetscReal cdamp, PetscReal B[144], PetscBool *any);
/* the dissipative part (dashpots) of the contact forces of the last evaluation, per body */
PETSC_EXTERN PetscErrorCode DemForcesDissipative_Private(DemSim, PetscReal *fd, PetscReal *td);
/* discrete Lagrange-d'Alembert integrator, 003 (src/integrators/variational.c) */
PETSC_EXTERN PetscErrorCode DemIntegratorCreate_Variational(DemIntegrator);

/* ---- field forces: viscous drag and near-field (Mie) pairs, 001 eq. (15)-(18) (src/core/fields.c) ---- */
/* reads the top-level fields: mapping (absent: no fields) */
PETSC_EXTERN PetscErrorCode DemFieldsSetFromConfig_Private(DemSim, DemNode root);
/* adds the field forces at `state` to out->f (and out->fd for drag), their potential (Mie) to
   out->pe_contact and the drag power to out->dissip_rate; called by DemForcesCompute */
PETSC_EXTERN PetscErrorCode DemFieldsCompute_Private(DemSim, const DemState *, DemForceOut *);
PETSC_EXTERN PetscErrorCode DemFieldsDestroy_Private(DemSim);
/* generalized trapezoidal rule, 001 eq. (40)-(49) (src/integrators/trapezoid.c) */
PETSC_EXTERN PetscErrorCode DemIntegratorCreate_Trapezoid(DemIntegrator);

/* ---- checkpoints, restart and run guards (src/core/checkpoint.c, src/core/guard.c) ---- */
#define DEM_INTEGRATOR_EXPLICIT 1
#define DEM_INTEGRATOR_IMPLICIT 2
/* reads (write false) or writes one item of an integrator's checkpoint; a short read or write
   is an error naming `what` */
PETSC_EXTERN PetscErrorCode DemCheckpointIO(FILE *fp, PetscBool write, void *data, size_t size, const char what[]);
/* the checkpoint method of an integrator that keeps no state between steps */
PETSC_EXTERN PetscErrorCode DemIntegratorCheckpointNone(DemIntegrator, FILE *, PetscBool);
/* --restart CHECKPOINT: DemSimRun continues from it; DemSimCheckRestart only reads and checks it */
PETSC_EXTERN PetscErrorCode DemSimSetRestart(DemSim, const char file[]);
PETSC_EXTERN PetscErrorCode DemSimCheckRestart(DemSim);
/* writes DIR/checkpoints/step-<step>.ckpt of the current state (rank 0; collective) */
PETSC_EXTERN PetscErrorCode DemCheckpointWrite_Private(DemSim, char path[], size_t len);
/* restores the state of sim->restart into a set-up simulation */
PETSC_EXTERN PetscErrorCode DemCheckpointRestore_Private(DemSim);
/* what the output of a restarted run continues from (output.c) */
typedef struct {
  PetscBool  active;     /* the run continues from a checkpoint */
  PetscInt   step;       /* its step */
  PetscBool  thermo_row; /* the files have a row of that step (it was a thermo step) */
  PetscInt   nvtk;       /* VTK frames written up to it, their times, the next frame's time */
  PetscReal *vtktime, next_vtk;
} DemRestartOutput;
PETSC_EXTERN PetscErrorCode DemCheckpointRestartOutput_Private(DemSim, DemRestartOutput *);
/* on restart: DIR/NAME cut after the checkpoint's step (atomically), opened for appending */
PETSC_EXTERN PetscErrorCode DemCheckpointReopenCSV_Private(DemSim, const char dir[], const char name[], const char header[], FILE **fp);
/* the VTK series written so far (output.c) */
PETSC_EXTERN PetscErrorCode DemOutputGetSeries_Private(DemSim, PetscInt *nvtk, const PetscReal **vtktime, PetscReal *next_vtk);
/* set-up: refuses dt above the shortest collision time for explicit integrators */
PETSC_EXTERN PetscErrorCode DemGuardCheckTimeStep_Private(DemSim);
/* refuses a configuration whose memory estimate for `nbodies` bodies exceeds the limit
   (run.memory_limit, MMDEM_MEMORY_LIMIT, default 80 % of the physical memory); `at` is the node
   the message points at */
PETSC_EXTERN PetscErrorCode DemGuardCheckMemory_Private(DemSim, DemNode at, double nbodies);
/* the time loop's guards (run.c): before the loop (signals, restart), after each accepted
   step's state (bodies leaving the domain: *bad, msg), after its output (snapshots, periodic
   checkpoints, a signal: *stop, msg), on a failure (writes the last good checkpoint, names it
   in msg) and after the loop */
PETSC_EXTERN PetscErrorCode DemGuardBegin_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemGuardCheckState_Private(DemSim, PetscBool bounded, PetscBool *bad, char msg[], size_t len);
PETSC_EXTERN PetscBool      DemGuardInjectsNaN_Private(DemSim);
PETSC_EXTERN PetscErrorCode DemIntegratorSync_Private(DemSim);
PETSC_EXTERN PetscMPIInt    DemGuardSignalCaught_Private(void);
PETSC_EXTERN PetscErrorCode DemGuardSignalAgreed_Private(DemSim, PetscMPIInt);
/* a step the integrator rejected: retried with its dt_next, or *fail with a diagnosis in msg */
PETSC_EXTERN PetscErrorCode DemGuardStepRejected_Private(DemSim, const DemStepInfo *, PetscBool *fail, char msg[], size_t len);
PETSC_EXTERN PetscErrorCode DemGuardAfterOutput_Private(DemSim, PetscBool *stop, char msg[], size_t len);
PETSC_EXTERN PetscErrorCode DemGuardFailure_Private(DemSim, char msg[], size_t len);
PETSC_EXTERN PetscErrorCode DemGuardEnd_Private(DemSim);
/* the signal that interrupted the last run (SIGINT, SIGTERM), 0 if none (main.c: exit status) */
PETSC_EXTERN int            DemGuardSignal(void);

/* ---- torque-free rotation of an aspherical rigid body over dt, 002 eq. (5)-(7) (src/core/rotor.c):
   symplectic splitting; q (body -> world) and the world angular velocity w updated together ---- */
PETSC_EXTERN void DemRigidRotorStep_Private(const PetscReal I[3], PetscReal dt, PetscReal q[4], PetscReal w[3]);
