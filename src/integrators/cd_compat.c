/*
  cd_compat.c - the compatibility post-solve of the `cd` integrator (cd.c):
  004_66a055dbe6238b20.txt (Olsen & Kamrin), sections 6.3-7, Algorithm 1 step 2.

  Given the CD solution of a step, the generalized body force F~ of 004 eq. (37) is known
  (velocities are unique in frictionless CD even when forces are not), and the compatible
  contact forces solve the no-tension truss problem 004 eq. (36):

      min_f  sum_i (p-1)/p k~_i^(1/(1-p)) f_i^(p/(p-1))
      s.t.   (B^T f)_j = F~_j   for every DOF j in Gamma_N,   f_i >= 0,

  for power-law contacts w_e(c) = k c^p / p (004 eq. (34)): p = 2 Hooke, p = 5/2 Hertz.

  Which contacts and DOF take part:
   - only contacts that are closed at the end of the step, Phi^t + dt B_i v^{t+dt} <=
     1e-6 r_eff: a compatible force must still solve the CD step, whose complementarity
     (004 eq. (14), (21)) forbids force on a contact that is open at t + dt (the LCP
     residual N f + p = B v^{t+dt} + Phi^t/dt is the same for every f with the same B^T f);
   - Gamma_N: the DOF of mobile bodies (fixed bodies, walls and, in dimension 2, v_z, w_x,
     w_y are Gamma_D) that a closed contact touches with a nonzero coefficient; an untouched
     DOF is a zero row of B^T (e.g. the rotations of frictionless spheres, whose normals pass
     through the centre);
   - clusters of mobile bodies linked by closed contacts on which F~ vanishes (bodies in
     free flight) carry no force (f = 0 is their unique optimum) and are left out.

  Solution, on a scaled problem (forces in units of the largest CD force, each constraint row
  divided by its 2-norm, k~ normalized to a largest value of 1):
   1. PETSc TAO, TAOALMM (augmented Lagrangian, PHR, subsolver BQNLS for the bounds), from the
      previous step's compatible forces and multipliers where the contact/DOF existed (the CD
      forces otherwise), to the tolerance 1e-3 (option -cd_compat_tao_gatol). Its first-order
      subsolver stalls near 1e-6 and diverged at tighter tolerances on the 2870-sphere
      pyramid, so TAOALMM is used to find the set of loaded contacts and the multipliers.
   2. Newton iterations on the KKT conditions of (36) from the TAOALMM multipliers y (the
      scaled joint displacements of the truss, u of 004 eq. (32)): with the compression
      c = A^T y of each contact, stationarity gives x_i(c) = (c/(q w_i))^(1/(q-1)) for c > 0,
      else 0 (004 eq. (31)), so x >= 0, stationarity and complementarity hold by
      construction and only the equilibrium A x(y) = rhs remains; it is the gradient of the
      convex dual phi(y) = sum_i (q-1) w_i x_i^q - rhs.y (the potential energy of 004 eq.
      (32)). Each step factors A D A^T (D = dx/dc, plus a 1e-12 relative shift for
      unloaded mechanisms), solved by CG with incomplete Cholesky (relative tolerance
      1e-12; should it fail, sparse direct Cholesky, MUMPS when PETSc has it; option prefix
      -cd_compat_polish_), and backtracks on phi. A zero residual is the
      exact optimum of (36); `compatible_tol` bounds the scaled residual.
  The forces reported are those of stage 2 when it lowered the residual below stage 1's.
  Stages 1 and 2 (DemCDCompatCore_Private) run on the communicator of the constraint matrix:
  one process here (DemCDCompatSolve_Private), every rank of a decomposed run with the problem
  distributed by cd_compat_mpi.c. There the objective and phi sum over the ranks, the
  failure tests are agreed, CG is preconditioned by block Jacobi with incomplete Cholesky
  (positive-definite shift) on each rank's block (-cd_compat_polish_sub_* options) and the
  direct fallback is MUMPS' parallel Cholesky (PCREDUNDANT without MUMPS). On one process
  the operations are those of the serial code before the split (bitwise the same results).

  Relative stiffness (004 eq. (35)): k~_i comes from the contact law of contact i itself,
  evaluated (without damping: zero relative velocity) at two trial overlaps delta0 and
  2 delta0, delta0 = 1e-6 r_eff: k_i = fn(delta0) / delta0^(p-1). With compatible_power: auto
  the exponent p - 1 = log2(fn(2 delta0)/fn(delta0)) is measured too and must be 1 (hooke) or
  3/2 (hertz_mindlin) for every contact. So the material pair enters exactly as the penalty
  law would use it (hooke's kn of the pair; Hertz's 4/3 E* sqrt(r*), which holds the Young's
  moduli and the radii).
*/
#include "cdimpl.h"
#include <petsctao.h>

/* MPI: a sum over this process's columns completed over the communicator */
static PetscErrorCode DemCDCompatSum(const DemCDCompatCtx *cc, PetscReal *s)
{
  PetscFunctionBegin;
  if (cc->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s, 1, MPIU_REAL, MPIU_SUM, cc->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPI: a failure seen on any process, on every process */
static PetscErrorCode DemCDCompatAny(const DemCDCompatCtx *cc, PetscBool *b)
{
  PetscFunctionBegin;
  if (cc->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPIU_BOOL, MPI_LOR, cc->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCDCompatObjGrad(Tao tao, Vec X, PetscReal *obj, Vec G, void *ctx)
{
  DemCDCompatCtx    *cc = (DemCDCompatCtx *)ctx;
  const PetscScalar *x;
  PetscScalar       *g;
  PetscInt           n;
  PetscReal          s = 0, q = cc->q;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(X, &n));
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(G, &g));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal xi = PetscMax(PetscRealPart(x[i]), 0.0), xq1 = (q == 2.0) ? xi : PetscPowReal(xi, q - 1);
    s += cc->w[i] * xi * xq1;
    g[i] = q * cc->w[i] * xq1;
  }
  PetscCall(VecRestoreArray(G, &g));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(DemCDCompatSum(cc, &s));
  *obj = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCDCompatEq(Tao tao, Vec X, Vec C, void *ctx)
{
  DemCDCompatCtx *cc = (DemCDCompatCtx *)ctx;

  PetscFunctionBegin;
  PetscCall(MatMult(cc->A, X, C));
  PetscCall(VecAXPY(C, -1.0, cc->rhs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCDCompatEqJac(Tao tao, Vec X, Mat J, Mat Jpre, void *ctx)
{
  PetscFunctionBegin; /* linear constraints: the matrix is assembled once per solve */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x(c), dx/dc and sum psi(c) of the dual (file header, stage 2) */
static void DemCDCompatForces(const DemCDCompatCtx *cc, PetscInt n, const PetscScalar *c, PetscScalar *x, PetscScalar *dx, PetscReal *psi)
{
  const PetscReal q = cc->q, e = 1.0 / (q - 1);
  PetscReal       s = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscReal ci = PetscRealPart(c[i]), xi = 0, di = 0;
    if (ci > 0) {
      PetscReal a = ci / (q * cc->w[i]);
      xi          = (q == 2.0) ? a : PetscPowReal(a, e);
      di          = (q == 2.0) ? 1.0 / (q * cc->w[i]) : e * xi / ci;
      s += (q - 1) * cc->w[i] * xi * ((q == 2.0) ? xi : PetscPowReal(xi, q - 1));
    }
    x[i]  = xi;
    dx[i] = di;
  }
  *psi = s;
}

/* phi(y), x(y), D(y) and the residual A x - rhs */
static PetscErrorCode DemCDCompatDual(DemCDCompatCtx *cc, Vec Y, Vec C, Vec X, Vec D, Vec R, PetscReal *phi)
{
  const PetscScalar *c;
  PetscScalar       *x, *d, by;
  PetscReal          psi;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(MatMultTranspose(cc->A, Y, C));
  PetscCall(VecGetLocalSize(C, &n));
  PetscCall(VecGetArrayRead(C, &c));
  PetscCall(VecGetArray(X, &x));
  PetscCall(VecGetArray(D, &d));
  DemCDCompatForces(cc, n, c, x, d, &psi);
  PetscCall(VecRestoreArray(D, &d));
  PetscCall(VecRestoreArray(X, &x));
  PetscCall(VecRestoreArrayRead(C, &c));
  PetscCall(DemCDCompatSum(cc, &psi));
  PetscCall(VecDot(cc->rhs, Y, &by));
  *phi = psi - PetscRealPart(by);
  PetscCall(MatMult(cc->A, X, R));
  PetscCall(VecAXPY(R, -1.0, cc->rhs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* stage 2 of the file header: Newton on the dual from Y; X receives x(Y) */
static PetscErrorCode DemCDCompatPolish(DemCDCompatCtx *cc, Vec Y, Vec X, PetscReal tol, PetscInt *its, PetscReal *res)
{
  Vec       C, D, R, dY, Yt, Xt, Dt, Rt, sd;
  KSP       ksp;
  PC        pc;
  PetscReal phi, r0;
  PetscBool direct = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(X, &C));
  PetscCall(VecDuplicate(X, &D));
  PetscCall(VecDuplicate(X, &Xt));
  PetscCall(VecDuplicate(X, &Dt));
  PetscCall(VecDuplicate(X, &sd));
  PetscCall(VecDuplicate(Y, &R));
  PetscCall(VecDuplicate(Y, &Rt));
  PetscCall(VecDuplicate(Y, &dY));
  PetscCall(VecDuplicate(Y, &Yt));
  PetscCall(KSPCreate(cc->comm, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, "cd_compat_polish_"));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  if (cc->size == 1) {
    PetscCall(PCSetType(pc, PCICC));
    PetscCall(PCFactorSetShiftType(pc, MAT_SHIFT_POSITIVE_DEFINITE));
  } else { /* MPI: block Jacobi, incomplete Cholesky (positive-definite shift) on each rank's block */
    PetscBool set;
    PetscCall(PCSetType(pc, PCBJACOBI));
    PetscCall(PetscOptionsHasName(NULL, "cd_compat_polish_", "-sub_pc_type", &set));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, "-cd_compat_polish_sub_pc_type", "icc"));
    PetscCall(PetscOptionsHasName(NULL, "cd_compat_polish_", "-sub_pc_factor_shift_type", &set));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, "-cd_compat_polish_sub_pc_factor_shift_type", "positive_definite"));
  }
  PetscCall(KSPSetTolerances(ksp, 1e-12, 1e-300, PETSC_DEFAULT, 10000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(DemCDCompatDual(cc, Y, C, X, D, R, &phi));
  PetscCall(VecNorm(R, NORM_INFINITY, res));
  r0 = *res;
  for (*its = 0; *its < 50 && *res > tol; (*its)++) {
    PetscReal          alpha = 1, phit = 0, dmax, shift, r2;
    PetscScalar        slope;
    PetscBool          ok = PETSC_FALSE, failed;
    Mat                Ad, K;
    PCFailedReason     pcr;
    KSPConvergedReason kr;
    /* K = A D A^T + shift I */
    PetscCall(VecCopy(D, sd));
    PetscCall(VecSqrtAbs(sd));
    PetscCall(MatDuplicate(cc->A, MAT_COPY_VALUES, &Ad));
    PetscCall(MatDiagonalScale(Ad, NULL, sd));
    PetscCall(MatMatTransposeMult(Ad, Ad, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &K));
    PetscCall(MatDestroy(&Ad));
    PetscCall(VecMax(D, NULL, &dmax));
    shift = 1e-12 * PetscMax(dmax, 1e-300);
    PetscCall(MatShift(K, shift));
    PetscCall(MatSetOption(K, MAT_SPD, PETSC_TRUE));
    PetscCall(KSPSetOperators(ksp, K, K));
    PetscCall(VecScale(R, -1.0));
    PetscCall(KSPSolve(ksp, R, dY));
    PetscCall(PCGetFailedReason(pc, &pcr));
    PetscCall(KSPGetConvergedReason(ksp, &kr));
    failed = (pcr != PC_NOERROR || kr < 0) ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(DemCDCompatAny(cc, &failed));
    if (failed && !direct) {
      /* CG with incomplete Cholesky did not make it: sparse direct Cholesky from now on
         (MPI: MUMPS across the ranks; without MUMPS the matrix is factored on every rank,
         PCREDUNDANT) */
      PetscBool mumps;
      PetscCall(PetscInfo(NULL, "cd compatibility polish: CG/ICC failed (%s), switching to Cholesky\n", KSPConvergedReasons[kr]));
      PetscCall(KSPSetType(ksp, KSPPREONLY));
      PetscCall(PetscHasExternalPackage("mumps", &mumps));
      if (cc->size > 1 && !mumps) PetscCall(PCSetType(pc, PCREDUNDANT));
      else {
        PetscCall(PCSetType(pc, PCCHOLESKY));
        if (mumps) PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
        else PetscCall(PCFactorSetMatOrderingType(pc, MATORDERINGND));
      }
      direct = PETSC_TRUE;
      PetscCall(KSPSetOperators(ksp, K, K));
      PetscCall(KSPSolve(ksp, R, dY));
      PetscCall(PCGetFailedReason(pc, &pcr));
    }
    PetscCall(VecScale(R, -1.0));
    PetscCall(MatDestroy(&K));
    failed = pcr != PC_NOERROR ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(DemCDCompatAny(cc, &failed));
    if (failed) break;
    PetscCall(VecDot(R, dY, &slope));
    if (!(PetscRealPart(slope) < 0)) break;
    PetscCall(VecNorm(R, NORM_2, &r2));
    for (int ls = 0; ls < 60; ls++) {
      PetscReal r2t;
      PetscCall(VecWAXPY(Yt, alpha, dY, Y));
      PetscCall(DemCDCompatDual(cc, Yt, C, Xt, Dt, Rt, &phit));
      PetscCall(VecNorm(Rt, NORM_2, &r2t));
      /* Armijo on phi; near the solution phi's decrease (~ residual^2) drowns in its
         round-off, so a step that shrinks the residual is accepted as well */
      if (phit <= phi + 1e-4 * alpha * PetscRealPart(slope) || r2t <= (1 - 1e-4 * alpha) * r2) {
        ok = PETSC_TRUE;
        break;
      }
      alpha *= 0.5;
    }
    if (!ok) break; /* no descent left at round-off level */
    PetscCall(VecCopy(Yt, Y));
    PetscCall(VecCopy(Xt, X));
    PetscCall(VecCopy(Dt, D));
    PetscCall(VecCopy(Rt, R));
    phi = phit;
    PetscCall(VecNorm(R, NORM_INFINITY, res));
  }
  PetscCall(PetscInfo(NULL, "cd compatibility polish: %" PetscInt_FMT " Newton steps, residual %g -> %g\n", *its, (double)r0, (double)*res));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&C));
  PetscCall(VecDestroy(&D));
  PetscCall(VecDestroy(&Xt));
  PetscCall(VecDestroy(&Dt));
  PetscCall(VecDestroy(&sd));
  PetscCall(VecDestroy(&R));
  PetscCall(VecDestroy(&Rt));
  PetscCall(VecDestroy(&dY));
  PetscCall(VecDestroy(&Yt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemCDCompatClusters_Private - the contacts of the post-solve and the clusters they join:
  closed[k] for a contact closed at t + dt (a contact the inexactly converged CD solution loads
  is kept too, so that its F~ = B^T f stays feasible); par[], union-find parents over the n
  bodies, joins the mobile bodies of every closed contact; loaded[root] is set for the cluster
  of each mobile DOF of the first nb bodies with |F~| > Fcut (the serial and the distributed
  solve: n = nb on one rank, owned + ghost bodies on several).
*/
void DemCDCompatClusters_Private(const DemCDSystem *sys, const PetscReal *reff_src, const PetscBool *mobile, const PetscReal *Ft, PetscReal Fcut, PetscInt n, PetscInt nb, PetscInt *par, PetscBool *closed, PetscBool *loaded)
{
  for (PetscInt i = 0; i < n; i++) par[i] = i, loaded[i] = PETSC_FALSE;
  for (PetscInt k = 0; k < sys->nc; k++) {
    PetscReal reff = reff_src[sys->src[k]];
    closed[k]      = (sys->gend[k] <= 1e-6 * (reff > 0 ? reff : 1e-3) || sys->f[k] > 0) ? PETSC_TRUE : PETSC_FALSE;
    if (closed[k]) {
      PetscBool ma = PETSC_FALSE, mb = PETSC_FALSE;
      for (int d = 0; d < 6; d++) ma = ma || mobile[6 * sys->a[k] + d], mb = mb || mobile[6 * sys->b[k] + d];
      if (ma && mb) {
        PetscInt ra = DemCDFind(par, sys->a[k]), rb = DemCDFind(par, sys->b[k]);
        if (ra != rb) par[ra] = rb;
      }
    }
  }
  for (PetscInt j = 0; j < 6 * nb; j++)
    if (mobile[j] && PetscAbsReal(Ft[j]) > Fcut) loaded[DemCDFind(par, j / 6)] = PETSC_TRUE;
}

/* the post-solve's vectors and scaled problem freed (the serial and the distributed solve) */
PetscErrorCode DemCDCompatFree_Private(DemCDCompatCtx *cc, Vec *X, Vec *Xf, Vec *Yw, Vec *Y, Vec *C)
{
  PetscFunctionBegin;
  PetscCall(VecDestroy(X));
  PetscCall(VecDestroy(Xf));
  PetscCall(VecDestroy(Yw));
  PetscCall(VecDestroy(Y));
  PetscCall(VecDestroy(C));
  PetscCall(VecDestroy(&cc->rhs));
  PetscCall(MatDestroy(&cc->A));
  PetscCall(PetscFree(cc->w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* r (6 per body, zeroed by the caller) += B^T f_c over the system's contacts */
void DemCDCompatAddBtF_Private(const DemCDSystem *sys, PetscReal *r)
{
  for (PetscInt k = 0; k < sys->nc; k++)
    for (int d = 0; d < 6; d++) {
      r[6 * sys->a[k] + d] += sys->J[12 * k + d] * sys->fc[k];
      r[6 * sys->b[k] + d] += sys->J[12 * k + 6 + d] * sys->fc[k];
    }
}

/*
  DemCDCompatCore_Private - stages 1 and 2 of the file header on the scaled problem cc, on the
  communicator of cc->A (one process, or every rank of a decomposed run: cd_compat_mpi.c).
  X: the start (in) and the forces (out); Xf the start should TAOALMM fail; Yw the warm
  multipliers (PHR sign, -u); Y receives u. Statistics in cp.
*/
PetscErrorCode DemCDCompatCore_Private(DemCDCompatCtx *cc, Vec C, Vec X, Vec Xf, Vec Yw, Vec Y, DemCDCompat *cp)
{
  Tao tao;
  Vec XL, XU, Ym;

  PetscFunctionBegin;
  cc->comm = PetscObjectComm((PetscObject)cc->A);
  PetscCallMPI(MPI_Comm_size(cc->comm, &cc->size));
  PetscCall(VecDuplicate(X, &XL));
  PetscCall(VecDuplicate(X, &XU));
  PetscCall(VecSet(XL, 0.0));
  PetscCall(VecSet(XU, PETSC_INFINITY));
  PetscCall(TaoCreate(cc->comm, &tao));
  PetscCall(TaoSetType(tao, TAOALMM));
  PetscCall(TaoSetOptionsPrefix(tao, "cd_compat_"));
  PetscCall(TaoSetSolution(tao, X));
  PetscCall(TaoSetVariableBounds(tao, XL, XU));
  PetscCall(TaoSetObjectiveAndGradient(tao, NULL, DemCDCompatObjGrad, cc));
  PetscCall(TaoSetEqualityConstraintsRoutine(tao, C, DemCDCompatEq, cc));
  PetscCall(TaoSetJacobianEqualityRoutine(tao, cc->A, cc->A, DemCDCompatEqJac, cc));
  PetscCall(TaoSetTolerances(tao, PetscMax(cp->tol, cp->almm_tol), 0.0, 0.0));
  PetscCall(TaoSetConstraintTolerances(tao, PetscMax(cp->tol, cp->almm_tol), 0.0));
  PetscCall(TaoSetMaximumIterations(tao, cp->max_it));
  {
    PetscBool set;
    /* the penalty of an ALMM that cannot reduce the constraint violation grows by 10 per
       outer iteration up to 1e20; beyond 1e12 the scaled subproblem is hopeless anyway */
    PetscCall(PetscOptionsHasName(NULL, "cd_compat_", "-tao_almm_mu_max", &set));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, "-cd_compat_tao_almm_mu_max", "1e12"));
  }
  PetscCall(TaoSetFromOptions(tao));
  PetscCall(TaoSetRecycleHistory(tao, PETSC_TRUE));
  PetscCall(TaoSetUp(tao));
  PetscCall(TaoALMMGetMultipliers(tao, &Ym));
  PetscCall(VecCopy(Yw, Ym));
  {
    PetscErrorCode ierr;
    /* a failing TAOALMM (e.g. an overflow at a huge penalty) must not end the run: its
       result is replaced by the start, and the Newton stage takes over */
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = TaoSolve(tao);
    PetscCall(PetscPopErrorHandler());
    if (ierr) {
      PetscCall(PetscInfo(NULL, "cd compatibility: TAOALMM failed (error %d); the Newton stage starts from the CD forces\n", (int)ierr));
      PetscCall(VecCopy(Xf, X));
      PetscCall(TaoALMMGetMultipliers(tao, &Ym));
      PetscCall(VecSet(Ym, 0.0));
      cp->almm_failed++;
    }
  }
  {
    TaoConvergedReason reason;
    PetscInt           its;
    Vec                Xp, R;
    PetscReal          rp;
    PetscCall(TaoGetIterationNumber(tao, &its));
    PetscCall(TaoGetConvergedReason(tao, &reason));
    cp->its    = its;
    cp->reason = (int)reason;
    PetscCall(VecDuplicate(C, &R));
    PetscCall(MatMult(cc->A, X, R));
    PetscCall(VecAXPY(R, -1.0, cc->rhs));
    PetscCall(VecNorm(R, NORM_INFINITY, &cp->res_almm));
    PetscCall(VecDestroy(&R));
    cp->res = cp->res_almm;
    PetscCall(TaoALMMGetMultipliers(tao, &Ym));
    PetscCall(VecAXPBY(Y, -1.0, 0.0, Ym));
    if (cp->res_almm > cp->tol) {
      PetscCall(VecDuplicate(X, &Xp));
      PetscCall(DemCDCompatPolish(cc, Y, Xp, cp->tol, &cp->polish_its, &rp));
      if (rp < cp->res_almm) {
        PetscCall(VecCopy(Xp, X));
        cp->res = rp;
      }
      PetscCall(VecDestroy(&Xp));
    }
  }
  PetscCall(TaoDestroy(&tao));
  PetscCall(VecDestroy(&XL));
  PetscCall(VecDestroy(&XU));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the law's normal force at overlaps delta (zero velocity, history untouched) */
static PetscErrorCode DemCDLawForces(DemSim sim, DemContactLaw law, PetscInt n, const PetscInt *idx, const DemCDSystem *sys, const PetscReal *delta, PetscReal *fn)
{
  DemContactList  *cl = &sim->cl;
  DemContactBatch  cb;
  DemContactForces o;
  PetscInt        *a, *b, *hist;
  int64_t         *feat;
  PetscReal       *nrm, *gap, *reff, *ra, *rb, *vrel, *meff, *ft, *dfn, *cn, *kt, *en, *dis, *fd, *es;
  int             *slip;

  PetscFunctionBegin;
  PetscCall(PetscMalloc5(n, &a, n, &b, n, &hist, n, &feat, n, &slip));
  PetscCall(PetscMalloc5(3 * n, &nrm, n, &gap, n, &reff, 3 * n, &ra, 3 * n, &rb));
  PetscCall(PetscMalloc5(3 * n, &vrel, n, &meff, 3 * n, &ft, n, &dfn, n, &cn));
  PetscCall(PetscMalloc5(n, &kt, n, &en, n, &dis, 3 * n, &fd, n, &es));
  for (PetscInt j = 0; j < n; j++) {
    PetscInt c = sys->src[idx[j]];
    a[j]       = cl->a[c];
    b[j]       = cl->b[c];
    hist[j]    = -1;
    feat[j]    = cl->feature[c];
    gap[j]     = -delta[j];
    reff[j]    = cl->reff[c];
    meff[j]    = 1.0;
    for (int d = 0; d < 3; d++) {
      nrm[3 * j + d]  = cl->nrm[3 * c + d];
      ra[3 * j + d]   = cl->ra[3 * c + d];
      rb[3 * j + d]   = cl->rb[3 * c + d];
      vrel[3 * j + d] = 0;
    }
  }
  cb.n        = n;
  cb.a        = a;
  cb.b        = b;
  cb.hist     = hist;
  cb.feature  = feat;
  cb.nrm      = nrm;
  cb.gap      = gap;
  cb.reff     = reff;
  cb.ra       = ra;
  cb.rb       = rb;
  cb.vrel     = vrel;
  cb.meff     = meff;
  cb.history  = NULL;
  cb.histsize = sim->histsize;
  cb.mp       = &law->mp;
  o.fn        = fn;
  o.ft        = ft;
  o.dfn_dgap  = dfn;
  o.cn        = cn;
  o.kt        = kt;
  o.energy    = en;
  o.dissip    = dis;
  o.slip      = slip;
  o.fdamp     = fd;
  o.eslip     = es;
  PetscCall(DemContactLawCompute(law, &cb, sim->dt, PETSC_FALSE, &o));
  PetscCall(PetscFree5(a, b, hist, feat, slip));
  PetscCall(PetscFree5(nrm, gap, reff, ra, rb));
  PetscCall(PetscFree5(vrel, meff, ft, dfn, cn));
  PetscCall(PetscFree5(kt, en, dis, fd, es));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemCDRelativeStiffness_Private(DemSim sim, DemCDSystem *sys, PetscReal power_in, PetscReal *power_out)
{
  PetscInt  *idx;
  PetscReal *d0, *d1, *f0, *f1, kmax = 0, pfound = power_in;
  PetscBool  bad = PETSC_FALSE; /* a contact law that is no usable power law: message in why */
  char       why[512];

  PetscFunctionBegin;
  *power_out = power_in > 0 ? power_in : 2.0;
  if (!sys->nc && !sim->decomp) PetscFunctionReturn(PETSC_SUCCESS); /* MPI: every rank takes part in the reductions below */
  PetscCall(PetscMalloc5(sys->nc, &idx, sys->nc, &d0, sys->nc, &d1, sys->nc, &f0, sys->nc, &f1));
  for (PetscInt l = 0; l < sim->nlaw && !bad; l++) {
    PetscInt n = 0;
    for (PetscInt k = 0; k < sys->nc; k++)
      if (sim->cl.law[sys->src[k]] == l) idx[n++] = k;
    if (!n) continue;
    for (PetscInt j = 0; j < n; j++) {
      PetscReal r = sim->cl.reff[sys->src[idx[j]]];
      d0[j]       = 1e-6 * (r > 0 ? r : 1e-3);
      d1[j]       = 2 * d0[j];
    }
    PetscCall(DemCDLawForces(sim, sim->laws[l], n, idx, sys, d0, f0));
    PetscCall(DemCDLawForces(sim, sim->laws[l], n, idx, sys, d1, f1));
    for (PetscInt j = 0; j < n && !bad; j++) {
      PetscReal pm, p = 0;
      if (!(f0[j] > 0 && f1[j] > f0[j])) {
        PetscCall(PetscSNPrintf(why, sizeof(why), "integrator cd, compatible: contact law '%s' gives no repulsive force that grows with the overlap (fn = %g N at %g m, %g N at %g m); the compatibility post-solve needs a power law", sim->laws[l]->type_name, (double)f0[j], (double)d0[j], (double)f1[j], (double)d1[j]));
        bad = PETSC_TRUE;
        break;
      }
      pm = 1.0 + PetscLog2Real(f1[j] / f0[j]);
      if (power_in > 0) p = power_in;
      else {
        if (PetscAbsReal(pm - 2.0) < 1e-3) p = 2.0;
        else if (PetscAbsReal(pm - 2.5) < 1e-3) p = 2.5;
        else {
          PetscCall(PetscSNPrintf(why, sizeof(why), "integrator cd, compatible: contact law '%s' behaves like a power law with exponent p = %g (004 eq. (34)); only p = 2 (hooke) and p = 5/2 (hertz_mindlin) are derived automatically; set compatible_power: 2 or 2.5", sim->laws[l]->type_name, (double)pm));
          bad = PETSC_TRUE;
          break;
        }
        if (!(pfound <= 0 || pfound == p)) {
          PetscCall(PetscSNPrintf(why, sizeof(why), "integrator cd, compatible: the contact laws mix power laws p = %g and p = %g; 004 eq. (36) takes one p; set compatible_power", (double)pfound, (double)p));
          bad = PETSC_TRUE;
          break;
        }
        pfound = p;
      }
      sys->kt[idx[j]] = f0[j] / PetscPowReal(d0[j], p - 1);
      kmax            = PetscMax(kmax, sys->kt[idx[j]]);
    }
  }
  /* MPI: a rank's finding stops every rank with its message (the lowest such rank's) */
  if (sim->decomp) PetscCall(DemDecompAgree_Private(sim, bad, &bad, why, sizeof(why)));
  if (bad) {
    PetscCall(PetscFree5(idx, d0, d1, f0, f1));
    SETERRQ(sim->comm, PETSC_ERR_SUP, "%s", why);
  }
  if (sim->decomp) { /* MPI: one scale and one p over the ranks' contacts (k~ normalized like serial) */
    PetscReal v[3] = {kmax, pfound > 0 ? pfound : 0.0, pfound > 0 ? -pfound : PETSC_MIN_REAL};
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPIU_REAL, MPIU_MAX, sim->comm));
    PetscCheck(v[1] <= 0 || v[1] == -v[2], sim->comm, PETSC_ERR_SUP, "integrator cd, compatible: the contact laws mix power laws p = %g and p = %g; 004 eq. (36) takes one p; set compatible_power", (double)-v[2], (double)v[1]);
    kmax = v[0];
    if (power_in <= 0 && v[1] > 0) pfound = v[1];
  }
  for (PetscInt k = 0; k < sys->nc; k++) sys->kt[k] /= kmax;
  *power_out = pfound > 0 ? pfound : 2.0;
  PetscCall(PetscFree5(idx, d0, d1, f0, f1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemCDCompatSolve_Private(PetscInt nb, const int64_t *gid, const PetscReal *reff_src, DemCDSystem *sys, const PetscBool *mobile, const PetscReal *Ft, const PetscReal *Fext, PetscReal power, DemCDCompat *cp)
{
  const PetscInt nc = sys->nc;
  PetscInt      *row, *nnz, *var, *par, m = 0, nv = 0;
  PetscReal     *rnorm, fs = 0, Fmax = 0, Fref = 0, Fcut;
  PetscBool     *loaded, *closed;
  DemCDCompatCtx cc;
  Vec            X, Xf, Yw, Y, C;
  Mat            A;

  PetscFunctionBegin;
  cp->its        = 0;
  cp->polish_its = 0;
  cp->nrows      = 0;
  cp->nvars      = 0;
  cp->eqres      = 0;
  cp->res_almm   = 0;
  cp->res        = 0;
  cp->reason     = 0;
  cp->power_used = power;
  for (PetscInt k = 0; k < nc; k++) sys->fc[k] = 0, fs = PetscMax(fs, sys->f[k]);
  for (PetscInt j = 0; j < 6 * nb; j++)
    if (mobile[j]) Fmax = PetscMax(Fmax, PetscAbsReal(Ft[j])), Fref = PetscMax(Fref, PetscAbsReal(Fext[j]));
  /* force scale: the larger of F~ and the external loads; 1e-9 of it is the round-off of
     F~ = M dv/dt - F_ext in free flight, not a load */
  Fref = PetscMax(Fref, Fmax);
  Fcut = 1e-9 * Fref;
  if (!nc || fs == 0 || Fmax <= Fcut) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc4(6 * nb, &row, 6 * nb, &rnorm, 6 * nb, &nnz, nc, &var));
  PetscCall(PetscMalloc3(nb, &par, nb, &loaded, nc, &closed));
  /* closed contacts; clusters of mobile bodies joined by them (union-find); loaded clusters */
  DemCDCompatClusters_Private(sys, reff_src, mobile, Ft, Fcut, nb, nb, par, closed, loaded);
  /* variables: closed contacts touching a loaded cluster */
  for (PetscInt k = 0; k < nc; k++) {
    PetscBool ma = PETSC_FALSE, mb = PETSC_FALSE, on = PETSC_FALSE;
    var[k] = -1;
    if (!closed[k]) continue;
    for (int d = 0; d < 6; d++) ma = ma || mobile[6 * sys->a[k] + d], mb = mb || mobile[6 * sys->b[k] + d];
    if (ma && loaded[DemCDFind(par, sys->a[k])]) on = PETSC_TRUE;
    if (mb && loaded[DemCDFind(par, sys->b[k])]) on = PETSC_TRUE;
    if (on) var[k] = nv++;
  }
  /* rows of Gamma_N touched by a variable, and their 2-norms */
  for (PetscInt j = 0; j < 6 * nb; j++) rnorm[j] = 0, nnz[j] = 0;
  for (PetscInt k = 0; k < nc; k++) {
    const PetscReal *J = sys->J + 12 * k;
    if (var[k] < 0) continue;
    for (int d = 0; d < 6; d++) {
      PetscInt ja = 6 * sys->a[k] + d, jb = 6 * sys->b[k] + d;
      if (mobile[ja] && J[d] != 0) rnorm[ja] += J[d] * J[d], nnz[ja]++;
      if (mobile[jb] && J[6 + d] != 0) rnorm[jb] += J[6 + d] * J[6 + d], nnz[jb]++;
    }
  }
  for (PetscInt j = 0; j < 6 * nb; j++) {
    row[j] = -1;
    if (rnorm[j] > 0) {
      rnorm[j] = PetscSqrtReal(rnorm[j]);
      nnz[m]   = nnz[j]; /* m <= j: compacting in place */
      row[j]   = m++;
    }
  }
  cp->nrows = m;
  cp->nvars = nv;
  if (!m || !nv) goto done;
  /* A = S B_N^T (rows scaled by 1/rnorm), rhs = S F~ / fs, x = f / fs */
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, nv, 0, nnz, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (PetscInt k = 0; k < nc; k++) {
    const PetscReal *J = sys->J + 12 * k;
    if (var[k] < 0) continue;
    for (int s = 0; s < 2; s++) {
      PetscInt body = s ? sys->b[k] : sys->a[k];
      for (int d = 0; d < 6; d++) {
        PetscInt j = 6 * body + d;
        if (row[j] < 0 || J[6 * s + d] == 0) continue;
        PetscCall(MatSetValue(A, row[j], var[k], J[6 * s + d] / rnorm[j], ADD_VALUES));
      }
    }
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &C));
  PetscCall(VecDuplicate(C, &cc.rhs));
  {
    PetscScalar *r;
    PetscCall(VecGetArray(cc.rhs, &r));
    for (PetscInt j = 0; j < 6 * nb; j++)
      if (row[j] >= 0) r[row[j]] = Ft[j] / (rnorm[j] * fs);
    PetscCall(VecRestoreArray(cc.rhs, &r));
  }
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nv, &X));
  PetscCall(VecDuplicate(X, &Xf));
  PetscCall(PetscMalloc1(nv, &cc.w));
  cc.q = power / (power - 1);
  cc.A = A;
  {
    PetscScalar *x, *xf;
    PetscCall(VecGetArray(X, &x));
    PetscCall(VecGetArray(Xf, &xf));
    for (PetscInt k = 0; k < nc; k++) {
      if (var[k] < 0) continue;
      x[var[k]]    = PetscMax(sys->fw[k] >= 0 ? sys->fw[k] : sys->f[k], 0.0) / fs;
      xf[var[k]]   = PetscMax(sys->f[k], 0.0) / fs;
      cc.w[var[k]] = (power - 1) / power * PetscPowReal(sys->kt[k], 1.0 / (1.0 - power));
    }
    PetscCall(VecRestoreArray(Xf, &xf));
    PetscCall(VecRestoreArray(X, &x));
  }
  /* warm multipliers: the previous step's displacements of these DOF (PHR: y = -u) */
  PetscCall(VecDuplicate(C, &Yw));
  PetscCall(VecDuplicate(C, &Y));
  {
    PetscScalar *y;
    PetscReal    sc = PetscPowReal(cp->fs_prev > 0 ? cp->fs_prev / fs : 1.0, cc.q - 1);
    PetscCall(VecGetArray(Yw, &y));
    for (PetscInt j = 0; j < 6 * nb; j++) {
      const PetscReal *u;
      if (row[j] < 0) continue;
      u         = DemHistoryMapGet(&cp->umap, gid[j / 6], j % 6, 0);
      y[row[j]] = u ? -u[0] * sc * rnorm[j] : 0.0;
    }
    PetscCall(VecRestoreArray(Yw, &y));
  }
  PetscCall(DemCDCompatCore_Private(&cc, C, X, Xf, Yw, Y, cp));
  /* keep the displacements for the next step */
  {
    const PetscScalar *y;
    PetscCall(DemHistoryMapClear(&cp->umap));
    PetscCall(VecGetArrayRead(Y, &y));
    for (PetscInt j = 0; j < 6 * nb; j++) {
      PetscReal u;
      if (row[j] < 0) continue;
      u = PetscRealPart(y[row[j]]) / rnorm[j];
      PetscCall(DemHistoryMapPut(&cp->umap, gid[j / 6], j % 6, 0, &u));
    }
    PetscCall(VecRestoreArrayRead(Y, &y));
    cp->fs_prev = fs;
  }
  {
    const PetscScalar *x;
    PetscCall(VecGetArrayRead(X, &x));
    for (PetscInt k = 0; k < nc; k++)
      if (var[k] >= 0) sys->fc[k] = fs * PetscMax(PetscRealPart(x[var[k]]), 0.0);
    PetscCall(VecRestoreArrayRead(X, &x));
  }
  PetscCall(DemCDCompatFree_Private(&cc, &X, &Xf, &Yw, &Y, &C));
done:
  /* unscaled equilibrium residual over every mobile DOF: B^T f_c - F~ */
  {
    PetscReal *r;
    PetscCall(PetscCalloc1(6 * nb, &r));
    DemCDCompatAddBtF_Private(sys, r);
    PetscInt worst = -1;
    for (PetscInt j = 0; j < 6 * nb; j++)
      if (mobile[j] && PetscAbsReal(r[j] - Ft[j]) > cp->eqres) cp->eqres = PetscAbsReal(r[j] - Ft[j]), worst = j;
    cp->eqres /= Fref;
    if (worst >= 0 && cp->eqres > 1e-8) {
      PetscInt nopen = 0, nclosed = 0;
      PetscReal fo = 0;
      for (PetscInt k = 0; k < nc; k++)
        if (sys->a[k] == worst / 6 || sys->b[k] == worst / 6) {
          if (closed[k]) nclosed++;
          else nopen++, fo = PetscMax(fo, sys->f[k]);
        }
      PetscCall(PetscInfo(NULL, "cd compatibility: worst equilibrium at body %" PetscInt_FMT " DOF %d: F~ = %g, B^T f_c = %g (row %" PetscInt_FMT ", cluster loaded %d); contacts on it: %" PetscInt_FMT " closed, %" PetscInt_FMT " open (largest CD force on an open one %g)\n", (PetscInt)gid[worst / 6], (int)(worst % 6), (double)Ft[worst], (double)r[worst], row[worst], (int)loaded[DemCDFind(par, worst / 6)], nclosed, nopen, (double)fo));
    }
    PetscCall(PetscFree(r));
  }
  PetscCall(PetscFree4(row, rnorm, nnz, var));
  PetscCall(PetscFree3(par, loaded, closed));
  PetscFunctionReturn(PETSC_SUCCESS);
}
