/*
  variational.c - integrator `variational`: the discrete Lagrange-d'Alembert integrator for
  DEM of 003_9f0cdbfccae61a56.txt (De Klerk et al.), section 2, with the Newton solution of
  its Algorithm 1.

  Unknowns (003 eq. (26)): six per mobile sphere, the increment over the step
  dq = (dx, dtheta) of its position and of its rotation vector (world frame); mass blocks
  M_i = diag(m, m, m, I, I, I). Orientations stay quaternions: q_{k+1} = exp(dtheta) q_k.
  Discrete Lagrangian 003 eq. (2), (28), with q_{k+alpha} = q_k + alpha dq:
      L_d = dq^T M dq / (2h) - h V(q_{k+alpha})
  Every force is evaluated at the trial state S = (q_k + alpha dq, velocity dq / h) and split
  into F, the conservative forces (-dV/dq: elastic contact forces, gravity, loads), and Q,
  the dissipative ones (the dashpots, DemForcesDissipative_Private). The discrete
  Lagrange-d'Alembert equation 003 eq. (12), with the forcing terms of eq. (5)-(6),
      Q^-_d(q_k, q_{k+1}) = h/2 Q(q_{k+alpha}, dq / h),  Q^+_d(q_k, q_{k+1}) = h/2 Q(q_{k+1-alpha}, dq / h),
  is solved with the momentum of the forced discrete Legendre transform,
  p_k = D2 L_d(q_{k-1}, q_k) + Q^+_d(q_{k-1}, q_k) (the store's velocity is p_k / M):
      R(dq) = p_k - M dq / h + h (1 - alpha) F(S) + h/2 Q(S)                   (eq. (15), (29))
      p_{k+1} = M dq / h + h alpha F(S) + h/2 Q(q_{k+1-alpha}, dq / h)          (eq. (16), (31))
  For alpha = 1/2 both Q terms are h/2 Q(S): the implicit midpoint rule for the whole force,
  p_{k+1} = p_k + h (F + Q)(S), second order also with damping. For alpha = 0 the last term is
  Q at the new position with velocity dq / h, from an evaluation there. (003 eq. (14) instead
  takes p_k = D2 L_d and replaces Q^+_d by Q^p_d = h/2 Q(q_k, p_k / M): exact for alpha = 0,
  but for alpha = 1/2 that Q sits half a step late, which made the damped scheme first order:
  on config/experiments/impact_dt.yaml with restitution 0.8 the energy-balance error fell as
  dt^1.12, 0.0156 ... 7.1e-4 at dt = 2e-5 ... 1.25e-6 s; with Q^+_d of eq. (6), as dt^1.96,
  0.0021 ... 9.2e-6. Q is the force of the dashpots, which opposes the motion; 003 eq. (29)
  prints the Q terms with the opposite sign, i.e. for the resistance -Q.)
  Newton, 003 eq. (17)-(19), (30): A delta = R, dq += delta, with the tangent
      A = -dR/ddq = M / h + alpha (1 - alpha) h K + C / 2
  (K = -dF/dq, C = -dQ/dv of the contacts: DemForcesJacobian, src/core/jacobian.c, which
  lists its approximations; for alpha = 0 and 1/2 the tangential spring's term is exact),
  solved with PETSc KSP: CG preconditioned with Jacobi by default (A is dominated by M / h);
  -ksp_type, -pc_type, -ksp_rtol [1e-12] ... are honoured. Predictor
  dq = h v_k + (1 - alpha) h^2 a_k (003 Algorithm 1 uses h v_k). Stop: 003 Algorithm 1's
  increment criterion,
      |delta| <= tol (|dq| + 1e-6 r_min)
  (2-norms over all unknowns; rotations as arc lengths, times the body's radius); when the
  increment estimated as h M^-1 R is already below 0.01 of that, the solve is skipped. A step that
  does not converge within max_iterations, whose linear solve fails or whose residual is not
  finite is rejected: the state is left as it was and the run retries with dt / 2
  (DemStepInfo accepted = false, dt_next; run.c); after 4 accepted steps dt grows again by 2
  up to the configured dt, and a dt below 2^-30 of the configured one stops the run (nhalve is
  that depth: a run that keeps rejecting one step in a few at dt0 / 2 and growing back to it
  is not stopped however often that happens).
  alpha = 0: first order (003's Algorithm 1), elastic forces explicit, R linear in dq (one
  Newton step plus the check); alpha = 1/2: second order, the implicit midpoint rule.

  History and bookkeeping: the Newton evaluations do not commit, and the laws see the time
  step alpha h, so that a tangential spring grows by vt alpha h, the displacement of the
  evaluation state (friction.h). After convergence one evaluation at S with time step h
  commits the spring s_{k+1} = s_k + vt h. A last evaluation at the new state
  (q_{k+1}, p_{k+1} / M), time step 0, gives the store's forces, the contact energy and
  Q(q_{k+1}, p_{k+1} / M) for the next step. Dissipated energy: h times the laws'
  dissipation power at the commit evaluation (the dashpots' power at S plus the return
  mapping's loss, friction.h: not negative but for a spring that one step's motion overruns
  at the limit); a rejected step leaves it as it was. For alpha = 1/2 the dashpot part is
  exactly the work of h/2 Q(S) + h/2 Q(S) (003 eq. (5)-(6)) over dq, so that
  e_total + dissipated moves only by the midpoint rule's error in the elastic forces
  (tests/cases/val_variational_energy.sh). With Coulomb sliding the count is only first
  order in h (mu = 0.3, kt = 2/7 kn, 20 spheres settling: e_balance moves by 3.9 % of the
  dissipated energy at h = tc/20, 1.5 % at tc/50; verlet 0.1 %, 0.02 %), probably because the
  commit caps the force of the time step h while the iterations capped the one of alpha h.

  Quasi-static mode (quasi_static: true; 003 section 1: without inertia the scheme is
  energy minimisation): inertia and dashpots are dropped and each step is a load step to
  t_{k+1} (walls, load ramps) that minimises the incremental potential
      Phi(dq) = V_contact(q_k + dq) - f_ext . dq
  (law time step h and velocity dq / h, so that tangential springs grow by the tangential
  displacement) with PETSc TAO: TAOBNLS (bounded Newton line search; -tao_type ... honoured),
  gradient -(F - Q), Hessian K (cstiff 1, cdamp 0) plus 1e-10 of its largest diagonal entry,
  so that bodies without stiffness in some direction (frictionless rotations, rattlers) do
  not move in it. Bounds: no translation beyond half the search skin in a load step (the
  neighbour list must see every contact the minimiser can reach; reaching the bound rejects
  the load step). Converged on the increment criterion above applied to the minimiser's
  iterates (with the gradient below sqrt(tol) of its scale), or when the gradient is below
  tol times its scale max(|gradient(predictor)|, |f_ext|, max fn, the weight of the lightest body, a
  contact of the shortest collision time compressed by 1e-6 r_min); not converged: the load
  step is halved as above. Needs every body held by contacts or walls when gravity or loads
  act on it. The store's forces are the elastic ones; `dissipated` is not updated.

  Checkpoints (checkpoint.c): the configured dt and the halving/regrowth counters (the
  store's velocities already include Q^+_d), so that a restart is bitwise the uninterrupted run. Bonds are not
  integrator state: they are found at set-up from the run description's initial state, which
  the checkpoint pins.

  MPI (src/core/decomp.c): the unknowns are the owned mobile bodies, renumbered after every
  rebuild in global-id order rank after rank (DemVarDistribute; jacobian.c's
  DemJacobianNumberingGlobal_Private gives the ghosts their owners' global rows); R, D, the
  bounds, the matrix (MATMPIBAIJ / MATMPISBAIJ from DemJacobianCreateGlobal_Private, the blocks
  of a pair with a ghost added with global indices, or the shell with the ghosts' entries
  exchanged), KSP and TAO live on the communicator and are re-created then. Every evaluation
  first sends the owners' trial state to the ghosts; the dashpot parts come back like the
  forces (the walls' summed); the increment norms, the skip estimate, the quasi-static force
  scales and every branch are global. CG + Jacobi does not depend on the order of the unknowns:
  the Newton iterates and iteration counts are the one-rank run's up to round-off
  (tests/cases/mpi_variational.sh).

  Spheres only: 003 eq. (26)'s kinetic energy is that of isotropic bodies; other shapes are
  refused at set-up. Bonded pairs (003 section 3.3) come in through the `bond` law.

  Keys: type, dt, dt_fraction, petsc_options, and
    alpha           0 (first order) or 0.5 (second order) [0.5]
    tol             increment tolerance of the Newton iterations, > 0 [1e-10]
    max_iterations  Newton (or TAO) iterations per step, >= 1 [20]
    quasi_static    energy minimisation per load step [false]
    jacobian        baij | sbaij | matrix_free [baij]: assembled per-contact 12x12 blocks in a
                    MATBAIJ or MATSBAIJ (block size 6), or a MATSHELL that applies them
  PETSc option -variational_monitor prints |R|, |delta| and |dq| at every Newton iteration.
*/
#include "demimpl.h"
#include <petscksp.h>
#include <petsctao.h>

#define DEMINTEGRATORVARIATIONAL "variational"

typedef enum {
  DEM_VAR_BAIJ,
  DEM_VAR_SBAIJ,
  DEM_VAR_SHELL
} DemVarJacobian;
static const char *const DemVarJacobianNames[] = {"baij", "sbaij", "matrix_free", NULL};

typedef struct {
  /* configuration */
  PetscReal alpha, tol;
  PetscInt  max_it;
  PetscBool qs, monitor;
  PetscInt  jac;
  /* unknowns and solvers */
  DemSim     sim;
  PetscInt  *row, nrows, nb;
  PetscInt   nlbuild; /* neighbour-list build of the matrix's preallocation */
  PetscReal *wsum; /* MPI: [6 nwall] the walls' dissipative parts summed over the ranks */
  PetscReal *su, *sz; /* MPI: [6 nb] per-body scratch of the shell's products */
  PetscInt  *grow, cap, mpibuild; /* MPI: global rows of owned and ghost bodies, scratch capacity,
                                     neighbour-list build of the numbering (DemVarDistribute) */
  Mat        J;
  Vec        R, D, XL, XU, Xprev;
  KSP        ksp;
  Tao        tao;
  PetscReal  cmass, cstiff, cdamp, creg; /* J = cmass M + cstiff K + cdamp C + creg I */
  /* per-body scratch: trial state, increment, forces */
  PetscReal *x, *v, *w, *q, *dq;
  PetscReal *f, *t, *fd, *td, *qf, *qt;
  PetscReal *vn, *wn, *fext, *text;
  PetscBool  qvalid; /* the store's forces are those of its state */
  PetscReal  dt0, rmin;
  PetscInt   nok, nhalve;
  /* quasi-static step */
  PetscReal  tk, h, g0, fscale, fref;
  PetscBool  taoset;
} DemIntegrator_Variational;

static PetscErrorCode DemIntegratorSetFromConfig_Variational(DemIntegrator ig, DemNode cfg)
{
  DemIntegrator_Variational *vi    = (DemIntegrator_Variational *)ig->data;
  const char *const          own[] = {"alpha", "tol", "max_iterations", "quasi_static", "jacobian", NULL};
  DemNode                    kn;

  PetscFunctionBegin;
  if (!cfg) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemIntegratorAllowKeys_Private(cfg, own));
  PetscCall(DemNodeGetReal(cfg, "alpha", PETSC_FALSE, &vi->alpha));
  PetscCall(DemNodeGet(cfg, "alpha", &kn));
  DemNodeCheck(kn ? kn : cfg, vi->alpha == 0 || vi->alpha == 0.5, "alpha must be 0 (first order) or 0.5 (second order, midpoint) (got %g)", (double)vi->alpha);
  PetscCall(DemNodeGetReal(cfg, "tol", PETSC_FALSE, &vi->tol));
  PetscCall(DemNodeGet(cfg, "tol", &kn));
  DemNodeCheck(kn ? kn : cfg, vi->tol > 0 && vi->tol < 1, "tol must be in (0, 1) (got %g)", (double)vi->tol);
  PetscCall(DemNodeGetInt(cfg, "max_iterations", PETSC_FALSE, &vi->max_it));
  PetscCall(DemNodeGet(cfg, "max_iterations", &kn));
  DemNodeCheck(kn ? kn : cfg, vi->max_it >= 1, "max_iterations must be >= 1 (got %" PetscInt_FMT ")", vi->max_it);
  PetscCall(DemNodeGetBool(cfg, "quasi_static", PETSC_FALSE, &vi->qs));
  PetscCall(DemNodeGet(cfg, "jacobian", &kn));
  if (kn) PetscCall(DemNodeGetChoice(cfg, "jacobian", DemVarJacobianNames, PETSC_FALSE, &vi->jac));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = (cmass M + cstiff K + cdamp C + creg I) x, the contacts' blocks applied one by one */
static PetscErrorCode DemVarShellMult(Mat A, Vec X, Vec Y)
{
  DemIntegrator_Variational *vi;
  DemSim                     sim;
  DemBodyStore              *bs;
  const PetscScalar         *x;
  PetscScalar               *y;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &vi));
  sim = vi->sim;
  bs  = &sim->bodies;
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(Y, &y));
  for (PetscInt i = 0; i < vi->nb; i++) {
    PetscInt r = vi->row[i];
    if (r < 0) continue;
    for (int j = 0; j < 3; j++) {
      y[6 * r + j]     = (vi->cmass * bs->m[i] + vi->creg) * x[6 * r + j];
      y[6 * r + 3 + j] = (vi->cmass * bs->I[3 * i] + vi->creg) * x[6 * r + 3 + j];
    }
  }
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    PetscInt  rr[2] = {vi->row[sim->cl.a[c]], vi->row[sim->cl.b[c]]};
    PetscReal B[144], u[12], z[12];
    PetscBool any;
    if (rr[0] < 0 && rr[1] < 0) continue;
    PetscCall(DemForcesJacobianBlock_Private(sim, c, vi->cstiff, vi->cdamp, B, &any));
    if (!any) continue;
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 6; j++) u[6 * k + j] = rr[k] >= 0 ? x[6 * rr[k] + j] : 0;
    for (int i = 0; i < 12; i++) {
      z[i] = 0;
      for (int j = 0; j < 12; j++) z[i] += B[12 * i + j] * u[j];
    }
    for (int k = 0; k < 2; k++)
      if (rr[k] >= 0)
        for (int j = 0; j < 6; j++) y[6 * rr[k] + j] += z[6 * k + j];
  }
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(VecRestoreArray(Y, &y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemVarShellDiagonal(Mat A, Vec Dg)
{
  DemIntegrator_Variational *vi;
  DemSim                     sim;
  DemBodyStore              *bs;
  PetscScalar               *d;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &vi));
  sim = vi->sim;
  bs  = &sim->bodies;
  PetscCall(VecGetArray(Dg, &d));
  for (PetscInt i = 0; i < vi->nb; i++) {
    PetscInt r = vi->row[i];
    if (r < 0) continue;
    for (int j = 0; j < 3; j++) {
      d[6 * r + j]     = vi->cmass * bs->m[i] + vi->creg;
      d[6 * r + 3 + j] = vi->cmass * bs->I[3 * i] + vi->creg;
    }
  }
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    PetscInt  rr[2] = {vi->row[sim->cl.a[c]], vi->row[sim->cl.b[c]]};
    PetscReal B[144];
    PetscBool any;
    if (rr[0] < 0 && rr[1] < 0) continue;
    PetscCall(DemForcesJacobianBlock_Private(sim, c, vi->cstiff, vi->cdamp, B, &any));
    if (!any) continue;
    for (int k = 0; k < 2; k++)
      if (rr[k] >= 0)
        for (int j = 0; j < 6; j++) d[6 * rr[k] + j] += B[13 * (6 * k + j)];
  }
  PetscCall(VecRestoreArray(Dg, &d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPI: the products of the shell on several ranks: per-body 6-vectors, the owners' entries of
   x sent to the ghosts, each contact's block applied on the rank that evaluates it, the
   ghosts' results added to their owners (one forward, one reverse exchange, decomp.c).
   diag: the diagonal (x unused) */
static PetscErrorCode DemVarShellApplyMPI(DemIntegrator_Variational *vi, const PetscScalar *x, PetscScalar *y, PetscBool diag)
{
  DemSim        sim = vi->sim;
  DemBodyStore *bs  = &sim->bodies;
  PetscReal    *u = vi->su, *z = vi->sz;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < vi->nb; i++) {
    const PetscInt r = i < bs->n ? vi->row[i] : -1;
    for (int j = 0; j < 6; j++) u[6 * i + j] = (!diag && r >= 0) ? x[6 * r + j] : 0, z[6 * i + j] = 0;
  }
  if (!diag) PetscCall(DemDecompForwardArray_Private(sim, u, 6));
  for (PetscInt i = 0; i < bs->n; i++) {
    if (vi->row[i] < 0) continue;
    for (int j = 0; j < 3; j++) {
      z[6 * i + j]     = (vi->cmass * bs->m[i] + vi->creg) * (diag ? 1 : u[6 * i + j]);
      z[6 * i + 3 + j] = (vi->cmass * bs->I[3 * i] + vi->creg) * (diag ? 1 : u[6 * i + 3 + j]);
    }
  }
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    const PetscInt ab[2] = {sim->cl.a[c], sim->cl.b[c]};
    PetscReal      B[144], w[12];
    PetscBool      any, on[2] = {vi->grow[ab[0]] >= 0 ? PETSC_TRUE : PETSC_FALSE, vi->grow[ab[1]] >= 0 ? PETSC_TRUE : PETSC_FALSE};
    if (!on[0] && !on[1]) continue;
    PetscCall(DemForcesJacobianBlock_Private(sim, c, vi->cstiff, vi->cdamp, B, &any));
    if (!any) continue;
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 6; j++) w[6 * k + j] = on[k] ? u[6 * ab[k] + j] : 0;
    for (int k = 0; k < 2; k++)
      if (on[k])
        for (int j = 0; j < 6; j++) {
          const PetscInt i = 6 * k + j;
          if (diag) z[6 * ab[k] + j] += B[13 * i];
          else
            for (int l = 0; l < 12; l++) z[6 * ab[k] + j] += B[12 * i + l] * w[l];
        }
  }
  PetscCall(DemDecompReverseAddArray_Private(sim, z, 6));
  for (PetscInt i = 0; i < bs->n; i++)
    if (vi->row[i] >= 0)
      for (int j = 0; j < 6; j++) y[6 * vi->row[i] + j] = z[6 * i + j];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemVarShellMultMPI(Mat A, Vec X, Vec Y)
{
  DemIntegrator_Variational *vi;
  const PetscScalar         *x;
  PetscScalar               *y;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &vi));
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(Y, &y));
  PetscCall(DemVarShellApplyMPI(vi, x, y, PETSC_FALSE));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(VecRestoreArray(Y, &y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemVarShellDiagonalMPI(Mat A, Vec Dg)
{
  DemIntegrator_Variational *vi;
  PetscScalar               *d;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &vi));
  PetscCall(VecGetArray(Dg, &d));
  PetscCall(DemVarShellApplyMPI(vi, NULL, d, PETSC_TRUE));
  PetscCall(VecRestoreArray(Dg, &d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the matrix, rebuilt (re-preallocated) when the neighbour list was rebuilt */
static PetscErrorCode DemVarEnsureMatrix(DemSim sim, DemIntegrator_Variational *vi)
{
  PetscFunctionBegin;
  if (vi->J && (vi->jac == DEM_VAR_SHELL || vi->nlbuild == sim->nl.nbuilds)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatDestroy(&vi->J));
  if (vi->jac == DEM_VAR_SHELL && vi->grow) { /* MPI */
    PetscCall(MatCreateShell(sim->comm, 6 * vi->nrows, 6 * vi->nrows, PETSC_DETERMINE, PETSC_DETERMINE, vi, &vi->J));
    PetscCall(MatShellSetOperation(vi->J, MATOP_MULT, (void (*)(void))DemVarShellMultMPI));
    PetscCall(MatShellSetOperation(vi->J, MATOP_GET_DIAGONAL, (void (*)(void))DemVarShellDiagonalMPI));
    PetscCall(MatSetOption(vi->J, MAT_SYMMETRIC, PETSC_TRUE));
  } else if (vi->jac == DEM_VAR_SHELL) {
    PetscCall(MatCreateShell(PETSC_COMM_SELF, 6 * vi->nrows, 6 * vi->nrows, 6 * vi->nrows, 6 * vi->nrows, vi, &vi->J));
    PetscCall(MatShellSetOperation(vi->J, MATOP_MULT, (void (*)(void))DemVarShellMult));
    PetscCall(MatShellSetOperation(vi->J, MATOP_GET_DIAGONAL, (void (*)(void))DemVarShellDiagonal));
    PetscCall(MatSetOption(vi->J, MAT_SYMMETRIC, PETSC_TRUE));
  } else if (vi->grow) PetscCall(DemJacobianCreateGlobal_Private(sim, vi->jac == DEM_VAR_SBAIJ ? MATSBAIJ : MATBAIJ, vi->grow, vi->nrows, &vi->J)); /* MPI (jacobian.c) */
  else PetscCall(DemJacobianCreate_Private(sim, vi->jac == DEM_VAR_SBAIJ ? MATSBAIJ : MATBAIJ, vi->row, vi->nrows, &vi->J));
  vi->nlbuild = sim->nl.nbuilds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* J = cmass M + cstiff K + cdamp C (+ creg I, with creg a fraction `reg` of the largest
   diagonal entry) at the contacts of the last force evaluation */
static PetscErrorCode DemVarAssemble(DemSim sim, DemIntegrator_Variational *vi, const DemState *st, PetscReal cmass, PetscReal cstiff, PetscReal cdamp, PetscReal reg)
{
  DemBodyStore *bs = &sim->bodies;

  PetscFunctionBegin;
  vi->cmass  = cmass;
  vi->cstiff = cstiff;
  vi->cdamp  = cdamp;
  vi->creg   = 0;
  if (vi->jac == DEM_VAR_SHELL) {
    if (reg > 0) {
      PetscReal mx;
      Vec       dg;
      PetscCall(VecDuplicate(vi->R, &dg));
      if (vi->grow) PetscCall(DemVarShellDiagonalMPI(vi->J, dg));
      else PetscCall(DemVarShellDiagonal(vi->J, dg));
      PetscCall(VecMax(dg, NULL, &mx));
      vi->creg = mx > 0 ? reg * mx : reg;
      PetscCall(VecDestroy(&dg));
    }
    PetscCall(MatAssemblyBegin(vi->J, MAT_FINAL_ASSEMBLY)); /* a new state: the preconditioner is rebuilt */
    PetscCall(MatAssemblyEnd(vi->J, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatZeroEntries(vi->J));
  for (PetscInt i = 0; i < vi->nb; i++) {
    PetscInt  r = vi->row[i];
    PetscReal blk[36];
    if (r < 0) continue;
    PetscCall(PetscArrayzero(blk, 36));
    for (int j = 0; j < 3; j++) {
      blk[7 * j]       = cmass * bs->m[i];
      blk[7 * (j + 3)] = cmass * bs->I[3 * i];
    }
    if (vi->grow) r = vi->grow[i]; /* MPI: global row (DemVarDistribute) */
    PetscCall(MatSetValuesBlocked(vi->J, 1, &r, 1, &r, blk, ADD_VALUES));
  }
  PetscCall(DemForcesJacobian(sim, st, cstiff, cdamp, vi->J));
  PetscCall(MatAssemblyBegin(vi->J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(vi->J, MAT_FINAL_ASSEMBLY));
  if (reg > 0) {
    PetscReal mx;
    PetscCall(MatGetDiagonal(vi->J, vi->R));
    PetscCall(VecMax(vi->R, NULL, &mx));
    vi->creg = mx > 0 ? reg * mx : reg;
    PetscCall(MatShift(vi->J, vi->creg));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* how far a body may move in a quasi-static load step: half the neighbour-list skin */
static PetscReal DemVarReach(DemSim sim, DemIntegrator_Variational *vi)
{
  return sim->skin > 0 ? 0.5 * sim->skin : 0.1 * vi->rmin;
}

/* the vectors of the unknowns, and the bounds of quasi-static mode: no body moves more than
   half the skin in a load step, so that the neighbour list sees every contact the minimiser can
   reach. MPI: distributed, 6 nrows entries on this rank (re-created at every rebuild) */
static PetscErrorCode DemVarCreateVecs(DemSim sim, DemIntegrator_Variational *vi)
{
  PetscFunctionBegin;
  PetscCall(VecDestroy(&vi->R));
  PetscCall(VecDestroy(&vi->D));
  PetscCall(VecDestroy(&vi->XL));
  PetscCall(VecDestroy(&vi->XU));
  PetscCall(VecDestroy(&vi->Xprev));
  if (sim->decomp) PetscCall(VecCreateMPI(sim->comm, 6 * vi->nrows, PETSC_DETERMINE, &vi->R));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, 6 * vi->nrows, &vi->R));
  PetscCall(VecSetBlockSize(vi->R, 6));
  PetscCall(VecDuplicate(vi->R, &vi->D));
  if (vi->qs) {
    PetscScalar *lo, *hi;
    PetscCall(VecDuplicate(vi->R, &vi->XL));
    PetscCall(VecDuplicate(vi->R, &vi->XU));
    PetscCall(VecGetArray(vi->XL, &lo));
    PetscCall(VecGetArray(vi->XU, &hi));
    for (PetscInt k = 0; k < 6 * vi->nrows; k++) {
      const PetscReal b = (k % 6) < 3 ? DemVarReach(sim, vi) : PETSC_INFINITY;
      lo[k] = -b, hi[k] = b;
    }
    PetscCall(VecRestoreArray(vi->XL, &lo));
    PetscCall(VecRestoreArray(vi->XU, &hi));
    PetscCall(VecDuplicate(vi->R, &vi->Xprev));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* quasi-static mode's minimiser (MPI: re-created with the vectors at every rebuild) */
static PetscErrorCode DemVarCreateTao(DemSim sim, DemIntegrator_Variational *vi)
{
  PetscFunctionBegin;
  PetscCall(TaoDestroy(&vi->tao));
  PetscCall(TaoCreate(sim->decomp ? sim->comm : PETSC_COMM_SELF, &vi->tao));
  PetscCall(TaoSetType(vi->tao, TAOBNLS));
  PetscCall(TaoSetVariableBounds(vi->tao, vi->XL, vi->XU));
  vi->taoset = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* per-body scratch for nb owned and ghost bodies (MPI: nb changes at a rebuild) */
static PetscErrorCode DemVarReserve(DemIntegrator_Variational *vi, PetscInt nb)
{
  PetscFunctionBegin;
  if (nb <= vi->cap && vi->grow) PetscFunctionReturn(PETSC_SUCCESS);
  nb = PetscMax(nb, vi->grow ? 2 * vi->cap : vi->cap); /* the first call: the numbering's grow[] */
  PetscCall(PetscFree2(vi->row, vi->q));
  PetscCall(PetscFree(vi->grow));
  PetscCall(PetscFree2(vi->su, vi->sz));
  PetscCall(PetscFree4(vi->x, vi->v, vi->w, vi->dq));
  PetscCall(PetscFree6(vi->f, vi->t, vi->fd, vi->td, vi->qf, vi->qt));
  PetscCall(PetscFree4(vi->fext, vi->text, vi->vn, vi->wn));
  PetscCall(PetscMalloc2(nb + 1, &vi->row, 4 * nb + 1, &vi->q));
  PetscCall(PetscMalloc1(nb + 1, &vi->grow));
  PetscCall(PetscMalloc2(6 * nb + 1, &vi->su, 6 * nb + 1, &vi->sz));
  PetscCall(PetscMalloc4(3 * nb + 1, &vi->x, 3 * nb + 1, &vi->v, 3 * nb + 1, &vi->w, 6 * nb + 1, &vi->dq));
  PetscCall(PetscMalloc6(3 * nb + 1, &vi->f, 3 * nb + 1, &vi->t, 3 * nb + 1, &vi->fd, 3 * nb + 1, &vi->td, 3 * nb + 1, &vi->qf, 3 * nb + 1, &vi->qt));
  PetscCall(PetscCalloc4(3 * nb + 1, &vi->fext, 3 * nb + 1, &vi->text, 3 * nb + 1, &vi->vn, 3 * nb + 1, &vi->wn));
  PetscCall(PetscArrayzero(vi->dq, 6 * nb));
  vi->cap = nb;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemVarDistribute - several MPI ranks (src/core/decomp.c), after every rebuild of the neighbour
  list (bodies migrate, ghosts change): the unknowns are the owned mobile bodies, numbered in
  global-id order on each rank and rank after rank (DemJacobianNumberingGlobal_Private: local
  rows row[], global rows grow[] of owned and ghost bodies); the vectors, the matrix
  (DemVarEnsureMatrix: MATMPIBAIJ from the owned + ghost pair graph) and the solvers are made
  for the new sizes. Collective; nothing on one rank.
*/
static PetscErrorCode DemVarDistribute(DemSim sim, DemIntegrator_Variational *vi)
{
  const PetscInt nb = sim->bodies.n + sim->bodies.nghost;
  PetscInt       rstart;

  PetscFunctionBegin;
  if (!DemDecompActive_Private(sim) || vi->mpibuild == sim->nl.nbuilds) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemVarReserve(vi, nb));
  if (!vi->wsum) PetscCall(PetscMalloc1(6 * sim->nwall + 1, &vi->wsum));
  vi->nb = nb;
  PetscCall(DemJacobianNumberingGlobal_Private(sim, vi->row, vi->grow, &vi->nrows, &rstart));
  PetscCall(DemVarCreateVecs(sim, vi));
  if (vi->ksp) PetscCall(KSPReset(vi->ksp)); /* operators of other sizes follow */
  if (vi->qs) PetscCall(DemVarCreateTao(sim, vi));
  PetscCall(MatDestroy(&vi->J));
  vi->mpibuild = sim->nl.nbuilds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorSetUp_Variational(DemIntegrator ig, DemSim sim)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ig->data;
  DemBodyStore              *bs = &sim->bodies;
  const PetscInt             nb = bs->n + bs->nghost;
  PC                         pc;

  PetscFunctionBegin;
  vi->sim = sim;
  vi->nb  = nb;
  /* spheres only (003 eq. (26)): refuse other particle shapes before step 0 */
  for (PetscInt i = 0; i < bs->n; i++) {
    DemShape s = sim->shapes[bs->shape[i]];
    if (bs->flags[i] & DEM_WALL) continue;
    if (s->kind != DEM_KIND_SPHERE || bs->I[3 * i] != bs->I[3 * i + 1] || bs->I[3 * i] != bs->I[3 * i + 2]) {
      DemNode node = (sim->bodyset && sim->bodyset[i] >= 0) ? sim->setnode[sim->bodyset[i]] : NULL;
      return DemNodeError(node, "integrator variational handles spherical particles only (003 eq. (26): six DOF per body with the isotropic kinetic energy I |w|^2 / 2); body %" PetscInt_FMT " has shape '%s' of kind %s: use integrator verlet for non-spherical shapes", (PetscInt)bs->gid[i], s->name, DemShapeKindName(s->kind));
    }
  }
  PetscCall(PetscMalloc2(nb + 1, &vi->row, 4 * nb + 1, &vi->q));
  PetscCall(PetscMalloc4(3 * nb + 1, &vi->x, 3 * nb + 1, &vi->v, 3 * nb + 1, &vi->w, 6 * nb + 1, &vi->dq));
  PetscCall(PetscMalloc6(3 * nb + 1, &vi->f, 3 * nb + 1, &vi->t, 3 * nb + 1, &vi->fd, 3 * nb + 1, &vi->td, 3 * nb + 1, &vi->qf, 3 * nb + 1, &vi->qt));
  PetscCall(PetscCalloc4(3 * nb + 1, &vi->fext, 3 * nb + 1, &vi->text, 3 * nb + 1, &vi->vn, 3 * nb + 1, &vi->wn));
  PetscCall(PetscArrayzero(vi->dq, 6 * nb));
  vi->cap      = nb;
  vi->mpibuild = sim->nl.nbuilds; /* MPI: the rows of the decomposition of set-up are local ones */
  PetscCall(DemJacobianNumbering_Private(sim, vi->row, &vi->nrows));
  if (DemDecompActive_Private(sim)) vi->mpibuild = -1; /* MPI: numbered by DemVarDistribute */
  vi->rmin = PETSC_MAX_REAL;
  for (PetscInt i = 0; i < nb; i++)
    if (vi->row[i] >= 0) vi->rmin = PetscMin(vi->rmin, bs->radius[i]);
  if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &vi->rmin, 1, MPIU_REAL, MPIU_MIN, sim->comm)); /* MPI: over the ranks */
  if (vi->rmin == PETSC_MAX_REAL) vi->rmin = 1;
  { /* a force below which gradients are noise: a contact of the shortest collision time
       compressed by 1e-6 of the smallest radius, or the weight of the lightest body */
    PetscReal mmin = PETSC_MAX_REAL, gg = PetscSqrtReal(sim->gravity[0] * sim->gravity[0] + sim->gravity[1] * sim->gravity[1] + sim->gravity[2] * sim->gravity[2]);
    for (PetscInt i = 0; i < nb; i++)
      if (vi->row[i] >= 0) mmin = PetscMin(mmin, bs->m[i]);
    if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &mmin, 1, MPIU_REAL, MPIU_MIN, sim->comm)); /* MPI: over the ranks */
    vi->fref = 0;
    if (mmin < PETSC_MAX_REAL) {
      vi->fref = mmin * gg;
      if (sim->tc_min > 0 && sim->tc_min < PETSC_MAX_REAL) vi->fref = PetscMax(vi->fref, 1e-6 * vi->rmin * mmin * PetscSqr(PETSC_PI / sim->tc_min));
    }
  }
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-variational_monitor", &vi->monitor, NULL));
  vi->dt0 = sim->dt;
  PetscCall(DemVarCreateVecs(sim, vi));
  if (vi->qs) PetscCall(DemVarCreateTao(sim, vi));
  else {
    PetscCall(KSPCreate(sim->decomp ? sim->comm : PETSC_COMM_SELF, &vi->ksp));
    PetscCall(KSPSetType(vi->ksp, KSPCG));
    PetscCall(KSPGetPC(vi->ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI)); /* A is dominated by M / h: point Jacobi is cheap and enough */
    PetscCall(KSPSetTolerances(vi->ksp, 1e-12, 1e-300, PETSC_DEFAULT, 10000));
    PetscCall(KSPSetFromOptions(vi->ksp));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the trial state: particles at q_k + a dq with velocity dq / h; prescribed walls at
   x_k + a h v; fixed bodies where they are */
static void DemVarTrialState(DemSim sim, DemIntegrator_Variational *vi, PetscReal a, PetscReal h, DemState *st)
{
  DemBodyStore *bs = &sim->bodies;

  for (PetscInt i = 0; i < vi->nb; i++) {
    const PetscReal *dq = vi->dq + 6 * i;
    for (int j = 0; j < 4; j++) vi->q[4 * i + j] = bs->q[4 * i + j];
    if (vi->row[i] >= 0) {
      for (int j = 0; j < 3; j++) {
        vi->x[3 * i + j] = bs->x[3 * i + j] + a * dq[j];
        vi->v[3 * i + j] = dq[j] / h;
        vi->w[3 * i + j] = dq[3 + j] / h;
      }
      if (a != 0 && (dq[3] != 0 || dq[4] != 0 || dq[5] != 0)) {
        PetscReal th[3] = {a * dq[3], a * dq[4], a * dq[5]}, dr[4];
        DemQuatFromRotationVector(th, dr);
        DemQuatMul(dr, bs->q + 4 * i, vi->q + 4 * i);
        DemQuatNormalize(vi->q + 4 * i);
      }
    } else {
      const PetscBool moving = (bs->flags[i] & DEM_PRESCRIBED) ? PETSC_TRUE : PETSC_FALSE;
      for (int j = 0; j < 3; j++) {
        vi->x[3 * i + j] = bs->x[3 * i + j] + (moving ? a * h * bs->v[3 * i + j] : 0);
        vi->v[3 * i + j] = bs->v[3 * i + j];
        vi->w[3 * i + j] = bs->w[3 * i + j];
      }
    }
  }
  *st = (DemState){vi->x, vi->v, vi->w, vi->q};
}

/* forces at a state with the laws' time step dt_law at time t: vi->f, vi->t (total) and
   vi->fd, vi->td (dissipative part) */
static PetscErrorCode DemVarEval(DemSim sim, DemIntegrator_Variational *vi, const DemState *st, PetscReal t, PetscReal dt_law, PetscBool commit, PetscReal *f, PetscReal *tq, PetscReal *fd, PetscReal *td, DemForceOut *fo)
{
  PetscReal t0 = sim->time, dt0 = sim->dt;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(fo, sizeof(*fo)));
  fo->f     = f;
  fo->t     = tq;
  sim->time = t;
  sim->dt   = dt_law;
  if (DemDecompActive_Private(sim)) PetscCall(DemDecompForwardState_Private(sim, (PetscReal *)st->x, (PetscReal *)st->v, (PetscReal *)st->w, (PetscReal *)st->q, NULL, NULL)); /* MPI: the owners' trial state into the ghosts (decomp.c) */
  PetscCall(DemForcesCompute(sim, st, PETSC_FALSE, commit, fo));
  sim->time = t0;
  sim->dt   = dt0;
  if (fd) PetscCall(DemForcesDissipative_Private(sim, fd, td));
  if (fd && DemDecompActive_Private(sim)) { /* MPI: the ghosts' dashpot forces to their owners */
    PetscCall(DemDecompReverseAddArray_Private(sim, fd, 3));
    PetscCall(DemDecompReverseAddArray_Private(sim, td, 3));
    for (PetscInt w = 0; w < sim->nwall; w++) /* the walls' parts are summed over the ranks, like their reactions */
      for (int j = 0; j < 3; j++) vi->wsum[6 * w + j] = fd[3 * sim->walls[w].body + j], vi->wsum[6 * w + 3 + j] = td[3 * sim->walls[w].body + j];
    PetscCall(DemDecompSum_Private(sim, vi->wsum, 6 * sim->nwall));
    for (PetscInt w = 0; w < sim->nwall; w++)
      for (int j = 0; j < 3; j++) fd[3 * sim->walls[w].body + j] = vi->wsum[6 * w + j], td[3 * sim->walls[w].body + j] = vi->wsum[6 * w + 3 + j];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 2-norm of per-body 6-vectors over the unknowns (of all ranks), rotations times the radius */
static PetscErrorCode DemVarNorm(DemSim sim, DemIntegrator_Variational *vi, const PetscReal *u, PetscBool rowlayout, PetscReal *nrm)
{
  PetscReal s = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < vi->nb; i++) {
    PetscInt         r = vi->row[i];
    const PetscReal *z;
    PetscReal        rad = sim->bodies.radius[i];
    if (r < 0) continue;
    z = u + 6 * (rowlayout ? r : i);
    s += z[0] * z[0] + z[1] * z[1] + z[2] * z[2] + rad * rad * (z[3] * z[3] + z[4] * z[4] + z[5] * z[5]);
  }
  PetscCall(DemDecompSum_Private(sim, &s, 1)); /* MPI: over the ranks */
  *nrm = PetscSqrtReal(s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the step is rejected: the state stays, the run retries with dt / 2 */
static PetscErrorCode DemVarReject(DemSim sim, DemIntegrator_Variational *vi, PetscReal h, const char *why, DemStepInfo *info)
{
  PetscFunctionBegin;
  vi->nok = 0;
  vi->nhalve++;
  PetscCheck(vi->nhalve <= 30, sim->comm, PETSC_ERR_NOT_CONVERGED, "integrator variational: %s at t = %g s even with dt = %g s (30 halvings of %g s); check the configuration (stiffness, overlaps, a body without support in quasi-static mode) or raise max_iterations", why, (double)sim->time, (double)h, (double)vi->dt0);
  if (vi->monitor) PetscCall(PetscPrintf(sim->comm, "variational: step %" PetscInt_FMT " rejected (%s): dt %g -> %g s\n", sim->step + 1, why, (double)h, (double)(0.5 * h)));
  info->accepted  = PETSC_FALSE;
  info->converged = PETSC_FALSE;
  info->dt_next   = 0.5 * h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* after an accepted step: dt grows back towards the configured one */
static void DemVarAccept(DemIntegrator_Variational *vi, PetscReal h, DemStepInfo *info)
{
  if (h < vi->dt0 && ++vi->nok >= 4) {
    info->dt_next = PetscMin(vi->dt0, 2 * h);
    vi->nok       = 0;
    if (info->dt_next >= vi->dt0) vi->nhalve = 0;
    else if (vi->nhalve > 0) vi->nhalve--; /* the depth of dt below dt0, not a count of rejections */
  }
}

/* the new state q_{k+1} = q_k + dq, time t_k + h, walls moved */
static PetscErrorCode DemVarMove(DemSim sim, DemIntegrator_Variational *vi, PetscReal h)
{
  DemBodyStore *bs = &sim->bodies;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < vi->nb; i++) {
    const PetscReal *dq = vi->dq + 6 * i;
    if (vi->row[i] >= 0) {
      for (int j = 0; j < 3; j++) bs->x[3 * i + j] += dq[j];
      if (dq[3] != 0 || dq[4] != 0 || dq[5] != 0) {
        PetscReal dr[4], qn[4];
        DemQuatFromRotationVector(dq + 3, dr);
        DemQuatMul(dr, bs->q + 4 * i, qn);
        DemQuatNormalize(qn);
        for (int j = 0; j < 4; j++) bs->q[4 * i + j] = qn[j];
      }
    } else if (bs->flags[i] & DEM_PRESCRIBED)
      for (int j = 0; j < 3; j++) bs->x[3 * i + j] += h * bs->v[3 * i + j];
  }
  sim->time += h;
  PetscCall(DemSimApplyWalls_Private(sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dimension 2: no increment out of the plane */
static void DemVarConstrainIncrement(DemSim sim, DemIntegrator_Variational *vi)
{
  if (sim->dim != 2) return;
  for (PetscInt i = 0; i < vi->nb; i++) vi->dq[6 * i + 2] = vi->dq[6 * i + 3] = vi->dq[6 * i + 4] = 0;
}

static PetscErrorCode DemVarStepDynamic(DemIntegrator ig, DemSim sim, PetscReal h, DemStepInfo *info)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ig->data;
  DemBodyStore              *bs = &sim->bodies;
  const PetscReal            al = vi->alpha, tk = sim->time;
  DemForceOut                fo;
  DemState                   st;
  PetscReal                  rnorm = 0, enorm = 0, qnorm = 0;
  PetscBool                  conv = PETSC_FALSE;
  PetscInt                   it;
  const char                *why = NULL;

  PetscFunctionBegin;
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_FALSE));
  PetscCall(DemVarDistribute(sim, vi)); /* MPI: after a rebuild (decomp.c) */
  PetscCall(DemVarEnsureMatrix(sim, vi));
  if (!vi->qvalid) { /* the forces of the store's state, for the predictor */
    st = (DemState){bs->x, bs->v, bs->w, bs->q};
    PetscCall(DemVarEval(sim, vi, &st, tk, 0, PETSC_FALSE, bs->f, bs->t, NULL, NULL, &fo));
    vi->qvalid = PETSC_TRUE;
  }
  /* predictor */
  for (PetscInt i = 0; i < vi->nb; i++) {
    PetscReal *dq = vi->dq + 6 * i;
    if (vi->row[i] < 0) {
      for (int j = 0; j < 6; j++) dq[j] = 0;
      continue;
    }
    for (int j = 0; j < 3; j++) {
      dq[j]     = h * bs->v[3 * i + j] + (1 - al) * h * h * bs->f[3 * i + j] / bs->m[i];
      dq[3 + j] = h * bs->w[3 * i + j] + (1 - al) * h * h * bs->t[3 * i + j] / bs->I[3 * i];
    }
  }
  DemVarConstrainIncrement(sim, vi);
  for (it = 0; it < vi->max_it; it++) {
    PetscScalar       *R;
    const PetscScalar *D;
    KSPConvergedReason kr;
    PetscInt           kits;
    DemVarTrialState(sim, vi, al, h, &st);
    PetscCall(DemVarEval(sim, vi, &st, tk + al * h, al * h, PETSC_FALSE, vi->f, vi->t, vi->fd, vi->td, &fo));
    /* R = p_k - M dq/h + h (1 - alpha) F(S) + h/2 Q(S), p_k with Q^+_d (003 eq. (12), (29)) */
    PetscCall(VecGetArray(vi->R, &R));
    for (PetscInt i = 0; i < vi->nb; i++) {
      const PetscInt   r = vi->row[i];
      const PetscReal  m = bs->m[i], I = bs->I[3 * i], *dq = vi->dq + 6 * i;
      if (r < 0) continue;
      for (int j = 0; j < 3; j++) {
        const PetscInt k = 3 * i + j;
        R[6 * r + j]     = m * (bs->v[k] - dq[j] / h) + h * (1 - al) * (vi->f[k] - vi->fd[k]) + 0.5 * h * vi->fd[k];
        R[6 * r + 3 + j] = I * (bs->w[k] - dq[3 + j] / h) + h * (1 - al) * (vi->t[k] - vi->td[k]) + 0.5 * h * vi->td[k];
      }
    }
    PetscCall(VecRestoreArray(vi->R, &R));
    PetscCall(VecNorm(vi->R, NORM_2, &rnorm));
    if (PetscIsInfOrNanReal(rnorm)) {
      why = "non-finite residual";
      break;
    }
    { /* the increment this iteration would make, estimated with A ~ M / h (the contacts add
         O((w h)^2) to A): when it is far below the tolerance, the solve is skipped */
      const PetscScalar *Rr;
      PetscReal          est = 0;
      PetscCall(VecGetArrayRead(vi->R, &Rr));
      for (PetscInt i = 0; i < vi->nb; i++) {
        const PetscInt r = vi->row[i];
        if (r < 0) continue;
        for (int j = 0; j < 3; j++) est += PetscSqr(h * Rr[6 * r + j] / bs->m[i]) + PetscSqr(bs->radius[i] * h * Rr[6 * r + 3 + j] / bs->I[3 * i]);
      }
      PetscCall(VecRestoreArrayRead(vi->R, &Rr));
      PetscCall(DemDecompSum_Private(sim, &est, 1)); /* MPI: over the ranks */
      est = PetscSqrtReal(est);
      if (!it) PetscCall(DemVarNorm(sim, vi, vi->dq, PETSC_FALSE, &qnorm));
      if (est <= 0.01 * vi->tol * (qnorm + 1e-6 * vi->rmin)) {
        if (vi->monitor) PetscCall(PetscPrintf(sim->comm, "variational: step %" PetscInt_FMT " iteration %" PetscInt_FMT " |R| %.6e |delta| <= %.6e (h M^-1 R) |dq| %.6e\n", sim->step + 1, it, (double)rnorm, (double)est, (double)qnorm));
        conv = PETSC_TRUE;
        it++;
        break;
      }
    }
    PetscCall(DemVarAssemble(sim, vi, &st, 1.0 / h, al * (1 - al) * h, 0.5, 0));
    PetscCall(KSPSetOperators(vi->ksp, vi->J, vi->J));
    PetscCall(KSPSolve(vi->ksp, vi->R, vi->D));
    PetscCall(KSPGetConvergedReason(vi->ksp, &kr));
    PetscCall(KSPGetIterationNumber(vi->ksp, &kits));
    if (kr < 0) {
      why = "linear solve failed";
      break;
    }
    PetscCall(VecGetArrayRead(vi->D, &D));
    for (PetscInt i = 0; i < vi->nb; i++)
      if (vi->row[i] >= 0)
        for (int j = 0; j < 6; j++) vi->dq[6 * i + j] += D[6 * vi->row[i] + j];
    PetscCall(DemVarNorm(sim, vi, D, PETSC_TRUE, &enorm));
    PetscCall(VecRestoreArrayRead(vi->D, &D));
    DemVarConstrainIncrement(sim, vi);
    PetscCall(DemVarNorm(sim, vi, vi->dq, PETSC_FALSE, &qnorm));
    if (vi->monitor) PetscCall(PetscPrintf(sim->comm, "variational: step %" PetscInt_FMT " iteration %" PetscInt_FMT " |R| %.6e |delta| %.6e |dq| %.6e ksp %" PetscInt_FMT " contacts %" PetscInt_FMT "\n", sim->step + 1, it, (double)rnorm, (double)enorm, (double)qnorm, kits, fo.ncontacts));
    if (!(enorm == enorm) || PetscIsInfOrNanReal(qnorm)) {
      why = "non-finite increment";
      break;
    }
    if (enorm <= vi->tol * (qnorm + 1e-6 * vi->rmin)) {
      conv = PETSC_TRUE;
      it++;
      break;
    }
  }
  if (!conv) {
    PetscCall(DemVarReject(sim, vi, h, why ? why : "Newton iterations did not converge", info));
    info->iterations = it;
    info->residual   = rnorm;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* p_{k+1} = D2 L_d + Q^+_d = M dq / h + h alpha F(S) + h/2 Q(q_{k+1-alpha}, dq / h)
     (003 eq. (16), (31) and (6)), with F(S), Q(S) of the last iterate; for alpha = 1/2,
     q_{k+1-alpha} = q_{k+alpha}: Q^+_d = h/2 Q(S). For alpha = 0 it is added below, after the
     evaluation at q_{k+1}. */
  for (PetscInt i = 0; i < vi->nb; i++) {
    const PetscReal *dq = vi->dq + 6 * i, qp = al > 0 ? 0.5 * h : 0;
    if (vi->row[i] < 0) continue;
    for (int j = 0; j < 3; j++) {
      const PetscInt k = 3 * i + j;
      vi->vn[k] = dq[j] / h + (h * al * (vi->f[k] - vi->fd[k]) + qp * vi->fd[k]) / bs->m[i];
      vi->wn[k] = dq[3 + j] / h + (h * al * (vi->t[k] - vi->td[k]) + qp * vi->td[k]) / bs->I[3 * i];
    }
  }
  /* commit the history at S with the laws' time step h: s_{k+1} = s_k + vt h */
  DemVarTrialState(sim, vi, al, h, &st);
  PetscCall(DemVarEval(sim, vi, &st, tk + al * h, h, PETSC_TRUE, vi->f, vi->t, NULL, NULL, &fo));
  sim->dissipated += h * fo.dissip_rate;
  PetscCall(DemVarMove(sim, vi, h));
  for (PetscInt i = 0; i < vi->nb; i++)
    if (vi->row[i] >= 0)
      for (int j = 0; j < 3; j++) bs->v[3 * i + j] = vi->vn[3 * i + j], bs->w[3 * i + j] = vi->wn[3 * i + j];
  PetscCall(DemSimConstrain(sim, bs->v, bs->w));
  /* the new state's forces and contact energy */
  st = (DemState){bs->x, bs->v, bs->w, bs->q};
  PetscCall(DemVarEval(sim, vi, &st, sim->time, 0, PETSC_FALSE, bs->f, bs->t, vi->qf, vi->qt, &fo));
  if (al == 0) { /* the store holds (q_{k+1}, dq / h): add Q^+_d = h/2 Q(q_{k+1}, dq / h) */
    PetscBool any = PETSC_FALSE;
    for (PetscInt i = 0; i < vi->nb; i++)
      if (vi->row[i] >= 0)
        for (int j = 0; j < 3; j++) {
          const PetscInt k = 3 * i + j;
          if (vi->qf[k] != 0 || vi->qt[k] != 0) any = PETSC_TRUE;
          bs->v[k] += 0.5 * h * vi->qf[k] / bs->m[i];
          bs->w[k] += 0.5 * h * vi->qt[k] / bs->I[3 * i];
        }
    if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPIU_BOOL, MPI_LOR, sim->comm)); /* MPI: a collective decision */
    if (any) { /* the store's forces at the new velocity */
      PetscCall(DemSimConstrain(sim, bs->v, bs->w));
      PetscCall(DemVarEval(sim, vi, &st, sim->time, 0, PETSC_FALSE, bs->f, bs->t, NULL, NULL, &fo));
    }
  }
  vi->qvalid            = PETSC_TRUE;
  sim->pe_contact       = fo.pe_contact;
  sim->ncontacts        = fo.ncontacts;
  sim->dissip_rate_prev = fo.dissip_rate;
  info->iterations      = it;
  info->residual        = rnorm;
  DemVarAccept(vi, h, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- quasi-static: minimise Phi(dq) = V_contact(q_k + dq) - f_ext . dq with TAO ---- */

static inline PetscReal DemVarRamp(const DemLoad *ld, PetscReal t)
{
  if (!(ld->ramp[1] > ld->ramp[0])) return 1.0;
  if (t <= ld->ramp[0]) return 0.0;
  if (t >= ld->ramp[1]) return 1.0;
  return (t - ld->ramp[0]) / (ld->ramp[1] - ld->ramp[0]);
}

static void DemVarFromVec(DemIntegrator_Variational *vi, const PetscScalar *X)
{
  for (PetscInt i = 0; i < vi->nb; i++) {
    PetscInt r = vi->row[i];
    for (int j = 0; j < 6; j++) vi->dq[6 * i + j] = r >= 0 ? X[6 * r + j] : 0;
  }
  DemVarConstrainIncrement(vi->sim, vi);
}

/* the elastic forces and the incremental potential at dq = X */
static PetscErrorCode DemVarQSEval(DemIntegrator_Variational *vi, Vec X, PetscReal *obj, DemState *st)
{
  DemSim             sim = vi->sim;
  const PetscScalar *x;
  DemForceOut        fo;
  PetscReal          w = 0;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(X, &x));
  DemVarFromVec(vi, x);
  PetscCall(VecRestoreArrayRead(X, &x));
  DemVarTrialState(sim, vi, 1, vi->h, st);
  PetscCall(DemVarEval(sim, vi, st, vi->tk + vi->h, vi->h, PETSC_FALSE, vi->f, vi->t, vi->fd, vi->td, &fo));
  for (PetscInt i = 0; i < vi->nb; i++) {
    const PetscReal *dq = vi->dq + 6 * i;
    if (vi->row[i] < 0) continue;
    for (int j = 0; j < 3; j++) w += vi->fext[3 * i + j] * dq[j] + vi->text[3 * i + j] * dq[3 + j];
  }
  PetscCall(DemDecompSum_Private(sim, &w, 1)); /* MPI: over the ranks (pe_contact is already summed) */
  if (obj) *obj = fo.pe_contact - w;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemVarQSObjGrad(Tao tao, Vec X, PetscReal *obj, Vec G, void *ctx)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ctx;
  DemState                   st;
  PetscScalar               *g;

  PetscFunctionBegin;
  PetscCall(DemVarQSEval(vi, X, obj, &st));
  PetscCall(VecGetArray(G, &g));
  for (PetscInt i = 0; i < vi->nb; i++) {
    const PetscInt r = vi->row[i];
    if (r < 0) continue;
    for (int j = 0; j < 3; j++) {
      g[6 * r + j]     = -(vi->f[3 * i + j] - vi->fd[3 * i + j]);
      g[6 * r + 3 + j] = -(vi->t[3 * i + j] - vi->td[3 * i + j]);
    }
  }
  PetscCall(VecRestoreArray(G, &g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemVarQSHessian(Tao tao, Vec X, Mat H, Mat Hpre, void *ctx)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ctx;
  DemState                   st;

  PetscFunctionBegin;
  PetscCall(DemVarQSEval(vi, X, NULL, &st));
  PetscCall(DemVarAssemble(vi->sim, vi, &st, 0, 1, 0, 1e-10));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 003 Algorithm 1's increment criterion on the minimiser's iterates, |X_n - X_{n-1}| <=
   tol (|X_n| + 1e-6 r_min), with the gradient down to sqrt(tol) of its scale (a short line-search
   step is no convergence); or the gradient alone down to tol of its scale */
static PetscErrorCode DemVarQSConverged(Tao tao, void *ctx)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ctx;
  PetscInt                   its;
  PetscReal                  f, gnorm, cnorm, xdiff, dx = PETSC_MAX_REAL, xn, gs;
  TaoConvergedReason         reason;
  Vec                        X;
  const PetscScalar         *x, *xp;

  PetscFunctionBegin;
  PetscCall(TaoGetSolutionStatus(tao, &its, &f, &gnorm, &cnorm, &xdiff, &reason));
  PetscCall(TaoGetSolution(tao, &X));
  if (its == 0) vi->g0 = gnorm;
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArrayRead(vi->Xprev, &xp));
  {
    PetscReal s = 0, t = 0;
    for (PetscInt i = 0; i < vi->nb; i++) {
      PetscInt  r = vi->row[i];
      PetscReal rad = vi->sim->bodies.radius[i];
      if (r < 0) continue;
      for (int j = 0; j < 6; j++) {
        PetscReal w = j < 3 ? 1 : rad, d = w * (x[6 * r + j] - xp[6 * r + j]);
        s += d * d;
        t += w * w * x[6 * r + j] * x[6 * r + j];
      }
    }
    if (vi->sim->decomp) {
      PetscReal st[2] = {s, t};
      PetscCall(DemDecompSum_Private(vi->sim, st, 2)); /* MPI: over the ranks */
      s = st[0], t = st[1];
    }
    if (its > 0) dx = PetscSqrtReal(s);
    xn = PetscSqrtReal(t);
  }
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(VecRestoreArrayRead(vi->Xprev, &xp));
  PetscCall(VecCopy(X, vi->Xprev));
  gs = PetscMax(PetscMax(vi->g0, vi->fscale), vi->fref);
  if (vi->monitor) PetscCall(PetscPrintf(vi->sim->comm, "variational: load step %" PetscInt_FMT " iteration %" PetscInt_FMT " Phi %.12e |gradient| %.6e |increment| %.6e |dq| %.6e\n", vi->sim->step + 1, its, (double)f, (double)gnorm, (double)(its ? dx : 0), (double)xn));
  if (PetscIsInfOrNanReal(gnorm) || PetscIsInfOrNanReal(f)) PetscCall(TaoSetConvergedReason(tao, TAO_DIVERGED_NAN));
  else if (gnorm <= vi->tol * gs || (dx <= vi->tol * (xn + 1e-6 * vi->rmin) && gnorm <= PetscSqrtReal(vi->tol) * gs)) PetscCall(TaoSetConvergedReason(tao, TAO_CONVERGED_USER));
  else if (its >= vi->max_it) PetscCall(TaoSetConvergedReason(tao, TAO_DIVERGED_MAXITS));
  else PetscCall(TaoSetConvergedReason(tao, TAO_CONTINUE_ITERATING));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemVarStepQuasiStatic(DemIntegrator ig, DemSim sim, PetscReal h, DemStepInfo *info)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ig->data;
  DemBodyStore              *bs = &sim->bodies;
  const PetscReal            tk = sim->time;
  PetscScalar               *x;
  DemForceOut                fo;
  DemState                   st;
  TaoConvergedReason         reason;
  PetscInt                   its;
  PetscReal                  fe = 0, fnmax = 0;

  PetscFunctionBegin;
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_FALSE));
  PetscCall(DemVarDistribute(sim, vi)); /* MPI: after a rebuild (decomp.c) */
  PetscCall(DemVarEnsureMatrix(sim, vi));
  vi->tk = tk;
  vi->h  = h;
  /* external forces at t_{k+1}: gravity and the load ramps, at the orientation q_k */
  for (PetscInt i = 0; i < vi->nb; i++)
    for (int j = 0; j < 3; j++) {
      vi->fext[3 * i + j] = vi->row[i] >= 0 ? bs->m[i] * sim->gravity[j] : 0;
      vi->text[3 * i + j] = 0;
    }
  for (PetscInt l = 0; l < sim->nload; l++) {
    const DemLoad *ld = &sim->loads[l];
    PetscReal      s  = DemVarRamp(ld, tk + h);
    for (PetscInt k = 0; k < ld->nids; k++) {
      PetscInt  i = ld->ids[k];
      PetscReal F[3] = {s * ld->force[0], s * ld->force[1], s * ld->force[2]}, r[3] = {0, 0, 0};
      if (ld->haspoint) DemQuatRotate(bs->q + 4 * i, ld->point, r);
      for (int j = 0; j < 3; j++) vi->fext[3 * i + j] += F[j];
      vi->text[3 * i] += r[1] * F[2] - r[2] * F[1] + s * ld->moment[0];
      vi->text[3 * i + 1] += r[2] * F[0] - r[0] * F[2] + s * ld->moment[1];
      vi->text[3 * i + 2] += r[0] * F[1] - r[1] * F[0] + s * ld->moment[2];
    }
  }
  PetscCall(DemSimConstrain(sim, vi->fext, vi->text));
  for (PetscInt k = 0; k < 3 * vi->nb; k++) fe += vi->fext[k] * vi->fext[k] + vi->text[k] * vi->text[k] / (vi->rmin * vi->rmin);
  for (PetscInt c = 0; c < sim->cl.n; c++) fnmax = PetscMax(fnmax, PetscAbsReal(sim->cf.fn[c]));
  if (sim->decomp) { /* MPI: over the ranks */
    PetscCall(DemDecompSum_Private(sim, &fe, 1));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fnmax, 1, MPIU_REAL, MPIU_MAX, sim->comm));
  }
  vi->fscale = PetscMax(PetscSqrtReal(fe), fnmax);
  /* predictor: the increment of the last load step (rate dq / h kept as the velocity) */
  PetscCall(VecGetArray(vi->D, &x));
  for (PetscInt i = 0; i < vi->nb; i++) {
    PetscInt r = vi->row[i];
    if (r < 0) continue;
    for (int j = 0; j < 3; j++) {
      x[6 * r + j]     = h * bs->v[3 * i + j];
      x[6 * r + 3 + j] = h * bs->w[3 * i + j];
    }
  }
  PetscCall(VecRestoreArray(vi->D, &x));
  PetscCall(TaoSetHessian(vi->tao, vi->J, vi->J, DemVarQSHessian, vi));
  PetscCall(TaoSetSolution(vi->tao, vi->D));
  if (!vi->taoset) {
    PetscCall(TaoSetObjectiveAndGradient(vi->tao, NULL, DemVarQSObjGrad, vi));
    PetscCall(TaoSetConvergenceTest(vi->tao, DemVarQSConverged, vi));
    PetscCall(TaoSetMaximumIterations(vi->tao, vi->max_it));
    PetscCall(TaoSetFromOptions(vi->tao));
    vi->taoset = PETSC_TRUE;
  }
  PetscCall(TaoSolve(vi->tao));
  PetscCall(TaoGetConvergedReason(vi->tao, &reason));
  PetscCall(TaoGetIterationNumber(vi->tao, &its));
  info->iterations = its;
  if (reason <= 0) {
    PetscCall(DemVarReject(sim, vi, h, TaoConvergedReasons[reason], info));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  {
    PetscReal mx;
    PetscCall(VecGetArray(vi->D, &x)); /* translations only: rotations are not bounded */
    mx = 0;
    for (PetscInt k = 0; k < 6 * vi->nrows; k++)
      if (k % 6 < 3) mx = PetscMax(mx, PetscAbsReal(x[k]));
    PetscCall(VecRestoreArray(vi->D, &x));
    if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPIU_REAL, MPIU_MAX, sim->comm)); /* MPI: over the ranks */
    if (mx >= (1 - 1e-9) * DemVarReach(sim, vi)) {
      PetscCall(DemVarReject(sim, vi, h, "a body reached half the search skin in one load step", info));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  /* commit at the minimiser, move, and keep dq / h as the velocity */
  PetscCall(VecGetArray(vi->D, &x));
  DemVarFromVec(vi, x);
  PetscCall(VecRestoreArray(vi->D, &x));
  DemVarTrialState(sim, vi, 1, h, &st);
  PetscCall(DemVarEval(sim, vi, &st, tk + h, h, PETSC_TRUE, vi->f, vi->t, NULL, NULL, &fo));
  PetscCall(DemVarMove(sim, vi, h));
  for (PetscInt i = 0; i < vi->nb; i++)
    if (vi->row[i] >= 0)
      for (int j = 0; j < 3; j++) bs->v[3 * i + j] = vi->dq[6 * i + j] / h, bs->w[3 * i + j] = vi->dq[6 * i + 3 + j] / h;
  PetscCall(DemSimConstrain(sim, bs->v, bs->w));
  st = (DemState){bs->x, bs->v, bs->w, bs->q};
  PetscCall(DemVarEval(sim, vi, &st, sim->time, 0, PETSC_FALSE, bs->f, bs->t, vi->fd, vi->td, &fo));
  for (PetscInt k = 0; k < 3 * vi->nb; k++) bs->f[k] -= vi->fd[k], bs->t[k] -= vi->td[k]; /* elastic forces */
  sim->pe_contact = fo.pe_contact;
  sim->ncontacts  = fo.ncontacts;
  DemVarAccept(vi, h, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the state between steps that the store does not hold (checkpoint.c): the configured dt,
   the counters of the dt halving and regrowth, and whether the store's forces (checkpointed)
   are those of its state (re-evaluating them after a restart could sum the contacts in
   another order, after a neighbour-list rebuild, and change the last bits) */
static PetscErrorCode DemIntegratorCheckpoint_Variational(DemIntegrator ig, FILE *fp, PetscBool write)
{
  DemIntegrator_Variational *vi      = (DemIntegrator_Variational *)ig->data;
  PetscInt                   version = 1, nb = vi->sim->bodies.n + vi->sim->bodies.nghost, qv = vi->qvalid ? 1 : 0; /* the store's count: MPI writes the gathered store (decomp.c) */
  const PetscInt             nbs = nb;

  PetscFunctionBegin;
  PetscCall(DemCheckpointIO(fp, write, &version, sizeof(version), "variational checkpoint version"));
  PetscCheck(version == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "integrator variational: checkpoint version %" PetscInt_FMT ", this build reads version 1", version);
  PetscCall(DemCheckpointIO(fp, write, &nb, sizeof(nb), "variational body count"));
  PetscCheck(nb == nbs, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "integrator variational: checkpoint for %" PetscInt_FMT " bodies, the run has %" PetscInt_FMT, nb, nbs);
  PetscCall(DemCheckpointIO(fp, write, &vi->dt0, sizeof(vi->dt0), "variational configured dt"));
  PetscCall(DemCheckpointIO(fp, write, &vi->nok, sizeof(vi->nok), "variational accepted-step count"));
  PetscCall(DemCheckpointIO(fp, write, &vi->nhalve, sizeof(vi->nhalve), "variational halving count"));
  PetscCall(DemCheckpointIO(fp, write, &qv, sizeof(qv), "variational force flag"));
  vi->qvalid = qv ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorStep_Variational(DemIntegrator ig, DemSim sim, PetscReal dt, DemStepInfo *info)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ig->data;

  PetscFunctionBegin;
  if (vi->qs) PetscCall(DemVarStepQuasiStatic(ig, sim, dt, info));
  else PetscCall(DemVarStepDynamic(ig, sim, dt, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorDestroy_Variational(DemIntegrator ig)
{
  DemIntegrator_Variational *vi = (DemIntegrator_Variational *)ig->data;

  PetscFunctionBegin;
  PetscCall(MatDestroy(&vi->J));
  PetscCall(VecDestroy(&vi->R));
  PetscCall(VecDestroy(&vi->D));
  PetscCall(VecDestroy(&vi->XL));
  PetscCall(VecDestroy(&vi->XU));
  PetscCall(VecDestroy(&vi->Xprev));
  PetscCall(KSPDestroy(&vi->ksp));
  PetscCall(TaoDestroy(&vi->tao));
  PetscCall(PetscFree2(vi->row, vi->q));
  PetscCall(PetscFree(vi->grow));
  PetscCall(PetscFree2(vi->su, vi->sz));
  PetscCall(PetscFree(vi->wsum));
  PetscCall(PetscFree4(vi->x, vi->v, vi->w, vi->dq));
  PetscCall(PetscFree6(vi->f, vi->t, vi->fd, vi->td, vi->qf, vi->qt));
  PetscCall(PetscFree4(vi->fext, vi->text, vi->vn, vi->wn));
  PetscCall(PetscFree(ig->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemIntegratorCreate_Variational - constructor of the "variational" integrator (003):
  alpha 0.5, tol 1e-10, max_iterations 20, dynamic, assembled MATBAIJ Jacobian.
*/
PetscErrorCode DemIntegratorCreate_Variational(DemIntegrator ig)
{
  DemIntegrator_Variational *vi;

  PetscFunctionBegin;
  PetscCall(PetscNew(&vi));
  vi->alpha              = 0.5;
  vi->tol                = 1e-10;
  vi->max_it             = 20;
  vi->jac                = DEM_VAR_BAIJ;
  ig->data               = vi;
  ig->ops->setfromconfig = DemIntegratorSetFromConfig_Variational;
  ig->ops->setup         = DemIntegratorSetUp_Variational;
  ig->ops->step          = DemIntegratorStep_Variational;
  ig->ops->destroy       = DemIntegratorDestroy_Variational;
  ig->ops->checkpoint    = DemIntegratorCheckpoint_Variational;
  ig->mpi                = PETSC_TRUE; /* several MPI ranks: distributed Vec/Mat, ghosts refreshed every evaluation (decomp.c) */
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(integrator, "variational", DemIntegratorCreate_Variational)
