/*
  cdimpl.h - private to the contact-dynamics integrator (cd.c) and its compatibility
  post-solve (cd_compat.c); 004_66a055dbe6238b20.txt (Olsen & Kamrin) throughout.

  The contact system of one step is kept as sparse rows: contact k couples two bodies a, b
  with 6 generalized velocities each (v, w in the world frame), so row k of the gap gradient
  B (004 eq. (15)) is 12 numbers and M^-1 B^T (M block diagonal, 004 eq. (9)) is 12 more.
  N = dt B M^-1 B^T (004 eq. (20)) is never formed: N x = dt B (M^-1 B^T x).
*/
#pragma once
#include "demimpl.h"

typedef struct {
  PetscInt   nc, cap; /* contacts in the system */
  PetscInt  *a, *b;   /* body indices */
  PetscInt  *src;     /* index of the contact in sim->cl */
  PetscReal *J;       /* [12 nc] row k of B: J[12k..12k+5] for (v_a, w_a), J[12k+6..] for (v_b, w_b) */
  PetscReal *W;       /* [12 nc] the blocks of M^-1 B^T for the same columns */
  PetscReal *diag;    /* [nc] (B M^-1 B^T)_kk = N_kk / dt */
  PetscReal *gap;     /* [nc] Phi^t */
  PetscReal *gend;    /* [nc] linearized gap at the end of the step, Phi^t + dt B v^{t+dt} (004 eq. (15)) */
  PetscReal *fw;      /* [nc] previous step's compatible force of the contact, -1 if none */
  PetscReal *rhs;     /* [nc] p of 004 eq. (20) */
  PetscReal *f;       /* [nc] contact forces of the LCP (004 eq. (21)) */
  PetscReal *fc;      /* [nc] compatible forces (004 eq. (36)) */
  PetscReal *kt;      /* [nc] relative stiffness k~ (004 eq. (35)) */
} DemCDSystem;

/* options and statistics of the compatibility post-solve */
typedef struct {
  PetscReal power;    /* p of 004 eq. (34): 2 (Hooke) or 2.5 (Hertz); 0: from the contact laws */
  PetscReal tol;      /* final equilibrium residual of the scaled problem (compatible_tol) */
  PetscReal almm_tol; /* TAOALMM gradient and constraint tolerance (scaled problem) */
  PetscInt  max_it;   /* outer ALMM iterations */
  /* last solve */
  PetscInt  its;      /* TAO iterations (outer) */
  PetscInt  polish_its; /* Newton steps of the polish */
  PetscReal res_almm; /* scaled equilibrium residual after TAOALMM, before the polish */
  PetscReal res;      /* final scaled equilibrium residual (converged: <= tol) */
  PetscInt  nrows;    /* equality constraints (DOF in Gamma_N touched by a contact) */
  PetscInt  nvars;    /* contacts in the problem (closed, in loaded clusters) */
  PetscReal eqres;    /* ||B^T f - F~||_inf over the mobile DOF / max(||F~||_inf, ||F_ext||_inf) */
  PetscReal power_used;
  int       reason;   /* TaoConvergedReason */
  PetscInt  almm_failed; /* TAOALMM solves that stopped with an error (counted over the run) */
  /* warm start: displacements u per (body gid, DOF) of the last solve, its force scale */
  DemHistoryMap umap;
  PetscReal     fs_prev;
  /* MPI (cd_compat_mpi.c): this rank's share of the last solve (rows, contacts), the largest
     equilibrium residual on its owned bodies over the run (scaled like eqres), rank 0's own
     umap while a checkpoint holds every rank's */
  PetscInt      nrows_local, nvars_local;
  PetscInt      rounds_max; /* most rounds of the loaded-cluster flags' exchange in one solve */
  PetscReal     eqres_rank_max;
  DemHistoryMap uown;
} DemCDCompat;

/* the scaled problem of the post-solve (cd_compat.c): constraint matrix, right-hand side,
   objective weights of this process's columns, exponent; the communicator is A's */
typedef struct {
  Mat         A;    /* scaled B^T restricted to the rows of Gamma_N and the closed contacts */
  Vec         rhs;  /* scaled F~ */
  PetscReal  *w;    /* objective weights (p-1)/p k~^(1/(1-p)) */
  PetscReal   q;    /* p/(p-1) */
  MPI_Comm    comm; /* set by DemCDCompatCore_Private */
  PetscMPIInt size;
} DemCDCompatCtx;

/* union-find root with path halving */
static inline PetscInt DemCDFind(PetscInt *par, PetscInt i)
{
  while (par[i] != i) i = par[i] = par[par[i]];
  return i;
}

/* y (6 per body) = M^-1 x for one body: inv_m for (v), the world inverse inertia for (w),
   with the planar projection of dimension 2 (v_z, w_x, w_y removed) */
typedef struct {
  PetscReal im;      /* 1/m, 0 when fixed or prescribed */
  PetscReal iI[9];   /* world inverse inertia, row-major, 0 when fixed */
  PetscBool planar;  /* dimension 2 */
} DemCDBodyInv;

static inline void DemCDApplyMinv(const DemCDBodyInv *bi, const PetscReal x[6], PetscReal y[6])
{
  y[0] = bi->im * x[0];
  y[1] = bi->im * x[1];
  y[2] = bi->im * x[2];
  y[3] = bi->iI[0] * x[3] + bi->iI[1] * x[4] + bi->iI[2] * x[5];
  y[4] = bi->iI[3] * x[3] + bi->iI[4] * x[4] + bi->iI[5] * x[5];
  y[5] = bi->iI[6] * x[3] + bi->iI[7] * x[4] + bi->iI[8] * x[5];
  if (bi->planar) y[2] = y[3] = y[4] = 0;
}

/* k~ and the power p of every contact from its contact law (cd_compat.c) */
PETSC_INTERN PetscErrorCode DemCDRelativeStiffness_Private(DemSim, DemCDSystem *, PetscReal power_in, PetscReal *power_out);
/* the no-tension truss problem 004 eq. (36) with TAOALMM on one process; sys->f is the start,
   sys->fc the result. nb bodies with global ids gid (the displacements' warm start is keyed by
   them), mobile, Ft, Fext 6 per body; reff[sys->src[k]] the effective radius of contact k */
PETSC_INTERN PetscErrorCode DemCDCompatSolve_Private(PetscInt nb, const int64_t *gid, const PetscReal *reff, DemCDSystem *, const PetscBool *mobile, const PetscReal *Ft, const PetscReal *Fext, PetscReal power, DemCDCompat *);
/* TAOALMM and the Newton polish of the scaled problem cc on A's communicator (cd_compat.c):
   from the forces X (Xf: the start should TAOALMM fail) and the multipliers Yw (PHR sign,
   -u); X receives the forces, Y (layout of C) the displacements' multipliers u. Collective. */
PETSC_INTERN void           DemCDCompatClusters_Private(const DemCDSystem *, const PetscReal *reff_src, const PetscBool *mobile, const PetscReal *Ft, PetscReal Fcut, PetscInt n, PetscInt nb, PetscInt *par, PetscBool *closed, PetscBool *loaded);
PETSC_INTERN PetscErrorCode DemCDCompatFree_Private(DemCDCompatCtx *, Vec *X, Vec *Xf, Vec *Yw, Vec *Y, Vec *C);
PETSC_INTERN void           DemCDCompatAddBtF_Private(const DemCDSystem *, PetscReal *r);
PETSC_INTERN PetscErrorCode DemCDCompatCore_Private(DemCDCompatCtx *, Vec C, Vec X, Vec Xf, Vec Yw, Vec Y, DemCDCompat *);
/* the same over the ranks of a decomposed run (cd_compat_mpi.c): the problem distributed by
   body and contact ownership, solved on the communicator, sys->fc of this rank's contacts.
   Collective. */
PETSC_INTERN PetscErrorCode DemCDCompatSolveMPI_Private(DemSim, DemCDSystem *, const PetscBool *mobile, const PetscReal *Ft, const PetscReal *Fext, PetscReal power, DemCDCompat *);
/* MPI, around a checkpoint's serialization on rank 0: every rank's displacements into rank 0's
   umap (gather true), rank 0's own back (false). Collective. */
PETSC_INTERN PetscErrorCode DemCDCompatMPIGather_Private(DemSim, DemCDCompat *, PetscBool gather);
