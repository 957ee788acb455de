/*
  newmark_mpi.h - the pieces of integrator newmark (newmark.c) on several MPI ranks
  (newmark_mpi.c, src/core/decomp.c). On one rank none of them is called.
*/
#pragma once
#include "demimpl.h"

typedef struct _n_DemNmMPI *DemNmMPI;

/* the per-body field that carries newmark's state with its body through migrations:
   DEM_NM_FIELD reals per body, at these offsets */
#define DEM_NM_FIELD 18
enum { DEM_NM_ACC = 0, DEM_NM_WACC = 3, DEM_NM_TM = 6, DEM_NM_XOLD = 9, DEM_NM_U = 12, DEM_NM_ALPHA = 15 };
#define DEM_NM_FIELD_NAME "~newmark"

PETSC_EXTERN PetscErrorCode DemNmMPICreate_Private(DemSim, DemNmMPI *);
PETSC_EXTERN PetscErrorCode DemNmMPIDestroy_Private(DemNmMPI *);
/* the field in the store (its current address: the store reallocates it) */
PETSC_EXTERN PetscReal     *DemNmMPIField_Private(DemNmMPI);
/* the field of a store, or NULL (checkpoints: the gathered store of decomp.c) */
PETSC_EXTERN PetscReal     *DemNmMPIStoreField_Private(const DemBodyStore *);
/* local rows row[] of the owned unknowns, global rows of owned and ghost bodies (kept), the
   local and global counts */
PETSC_EXTERN PetscErrorCode DemNmMPINumber_Private(DemNmMPI, PetscInt row[], PetscInt *nrows, PetscInt *nglobal);
PETSC_EXTERN const PetscInt *DemNmMPIGlobalRows_Private(DemNmMPI);
/* every rank's sorted contact keys (3 int64 each) and, if nrm, normals and gaps (4 reals
   each): on every rank, sorted, replacing the local ones */
PETSC_EXTERN PetscErrorCode DemNmKeysReserve_Private(PetscInt n, PetscInt *cap, int64_t **keys, PetscReal **nrm);
PETSC_EXTERN PetscErrorCode DemNmMPIGatherKeys_Private(DemNmMPI, PetscInt *n, PetscInt *cap, int64_t **keys, PetscReal **nrm);
/* largest value over the ranks, sum over the ranks */
PETSC_EXTERN PetscErrorCode DemNmMPIMax_Private(DemNmMPI, PetscReal *);
PETSC_EXTERN PetscErrorCode DemNmMPISumInt_Private(DemNmMPI, PetscInt *);
/* the owners' trial state into the ghosts and the ghosts' Xi(alpha), Q(alpha) */
PETSC_EXTERN PetscErrorCode DemNmMPIForwardTrial_Private(DemNmMPI, PetscReal *x, PetscReal *v, PetscReal *w, PetscReal *q, PetscReal *dx, PetscReal *da, PetscReal *Xi, PetscReal *Qd);
