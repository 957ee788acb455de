/*
  cd_compat.c - the compatibility post-solve of the `cd` integrator (cd.c):
  004_66a055dbe6238b20.txt (Olsen & Kamrin), section 6.3-7, Algorithm 1, step 2.

  Given the CD solution of a step, the generalized body force F~ of 004 eq. (37) is known
  (velocities are unique in frictionless CD even when forces are not), and the compatible
  contact forces solve the no-tension truss problem of 004 eq. (36):

      min_f  sum_i (p-1)/p k~_i^(1/(1-p)) f_i^(p/(p-1))
      s.t.   (B^T f)_j = F~_j   for every DOF j in Gamma_N,   f_i >= 0,

  for power-law contacts w_e(c) = k c^p / p (004 eq. (34)): p = 2 Hooke, p = 5/2 Hertz.
  Gamma_N holds the DOF of mobile bodies (fixed bodies, walls and, in dimension 2, v_z, w_x,
  w_y are Gamma_D) that some contact touches: a DOF no contact touches has an all-zero row
  of B^T (and F~_j = 0); such rows, e.g. the rotations of frictionless spheres whose normals
  pass through the centre, would make the constraint Jacobian rank deficient, so they are
  left out.

  Solved with PETSc TAO, TAOALMM (augmented Lagrangian, default subsolver BQNLS, which handles
  the bounds), on a scaled problem: forces in units of the largest CD force, each constraint
  row divided by its 2-norm, k~ normalized to a largest value of 1. The start is the CD
  solution, which is feasible. Options with prefix -cd_compat_ reach the TAO object (e.g.
  petsc_options: "-cd_compat_tao_almm_mu_init 100").

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

typedef struct {
  Mat        A;     /* scaled B^T restricted to the rows of Gamma_N */
  Mat        A2;    /* A with squared entries (diagonal of the Newton matrix) */
  Vec        rhs;   /* scaled F~ */
  PetscReal *w;     /* objective weights (p-1)/p k~^(1/(1-p)) */
  PetscReal  q;     /* p/(p-1) */
  Vec        d, t;  /* Newton: dx/dc per contact; work (contacts) */
  PetscReal  shift; /* Newton: Tikhonov shift of A D A^T */
} DemCDCompatCtx;

/* the dual of 004 eq. (36), i.e. the potential-energy form 004 eq. (32) in the multipliers
   y (the scaled joint displacements): stationarity of (36) gives, per contact, with the
   compression c = (A^T y)_i,  x_i(c) = (c / (q w_i))^(1/(q-1)) for c > 0, else 0 (the
   power law f = k c^(p-1) of 004 eq. (31), scaled); psi_i(c) = (q-1) w_i x_i^q is the
   stored energy and phi(y) = sum_i psi_i - rhs.y is convex with gradient A x(y) - rhs */
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
    x[i] = xi;
    if (dx) dx[i] = di;
  }
  if (psi) *psi = s;
}

static PetscErrorCode DemCDCompatJacMult(Mat J, Vec Y, Vec Z)
{
  DemCDCompatCtx *cc;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(J, &cc));
  PetscCall(MatMultTranspose(cc->A, Y, cc->t));
  PetscCall(VecPointwiseMult(cc->t, cc->t, cc->d));
  PetscCall(MatMult(cc->A, cc->t, Z));
  PetscCall(VecAXPY(Z, cc->shift, Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCDCompatJacDiag(Mat J, Vec D)
{
  DemCDCompatCtx *cc;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(J, &cc));
  PetscCall(MatMult(cc->A2, cc->d, D));
  PetscCall(VecShift(D, cc->shift));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Newton iterations on the dual phi(y) above, from the TAOALMM multipliers, to drive the
  equilibrium residual A x(y) - rhs of 004 eq. (36) to `tol`: x(y) >= 0, stationarity and
  complementarity hold by construction, so a zero residual is the exact optimum of (36).
  Each step solves (A D A^T + shift I) dy = -(A x - rhs), D = dx/dc, by CG with Jacobi, and
  backtracks on phi. Returns the final residual (inf-norm) in *res and the solution in X.
*/
static PetscErrorCode DemCDCompatPolish(DemCDCompatCtx *cc, Vec Y, Vec X, PetscReal tol, PetscInt *its, PetscReal *res)
{
  PetscInt  m, n;
  Vec       C, R, dY, Yt, Xt;
  Mat       J;
  KSP       ksp;
  PC        pc;
  PetscReal phi, r0;

  PetscFunctionBegin;
  PetscCall(MatGetSize(cc->A, &m, &n));
  PetscCall(VecDuplicate(X, &C));
  PetscCall(VecDuplicate(X, &Xt));
  PetscCall(VecDuplicate(Y, &R));
  PetscCall(VecDuplicate(Y, &dY));
  PetscCall(VecDuplicate(Y, &Yt));
  PetscCall(MatCreateShell(PETSC_COMM_SELF, m, m, m, m, cc, &J));
  PetscCall(MatShellSetOperation(J, MATOP_MULT, (void (*)(void))DemCDCompatJacMult));
  PetscCall(MatShellSetOperation(J, MATOP_GET_DIAGONAL, (void (*)(void))DemCDCompatJacDiag));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, "cd_compat_polish_"));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 1e-300, PETSC_DEFAULT, 10000));
  PetscCall(KSPSetFromOptions(ksp));
  /* phi and the residual at y */
#define DEM_CD_EVAL(YY, XX, PHI, RR)   do {     const PetscScalar *c_;     PetscScalar       *x_, *d_;     PetscReal          psi_;     PetscScalar        by_;     PetscCall(MatMultTranspose(cc->A, YY, C));     PetscCall(VecGetArrayRead(C, &c_));     PetscCall(VecGetArray(XX, &x_));     PetscCall(VecGetArray(cc->d, &d_));     DemCDCompatForces(cc, n, c_, x_, d_, &psi_);     PetscCall(VecRestoreArray(cc->d, &d_));     PetscCall(VecRestoreArray(XX, &x_));     PetscCall(VecRestoreArrayRead(C, &c_));     PetscCall(VecDot(cc->rhs, YY, &by_));     PHI = psi_ - PetscRealPart(by_);     PetscCall(MatMult(cc->A, XX, RR));     PetscCall(VecAXPY(RR, -1.0, cc->rhs));   } while (0)
  DEM_CD_EVAL(Y, X, phi, R);
  PetscCall(VecNorm(R, NORM_INFINITY, res));
  r0 = *res;
  for (*its = 0; *its < 50 && *res > tol; (*its)++) {
    PetscReal   alpha = 1, phit = 0, dmax;
    PetscScalar slope;
    PetscBool   ok = PETSC_FALSE;
    PetscCall(VecMax(cc->d, NULL, &dmax));
    cc->shift = 1e-12 * PetscMax(dmax, 1e-300);
    PetscCall(KSPSetOperators(ksp, J, J));
    PetscCall(VecScale(R, -1.0));
    PetscCall(KSPSolve(ksp, R, dY));
    PetscCall(VecScale(R, -1.0));
    PetscCall(VecDot(R, dY, &slope));
    if (!(PetscRealPart(slope) < 0)) break;
    for (int ls = 0; ls < 40; ls++) {
      PetscCall(VecWAXPY(Yt, alpha, dY, Y));
      DEM_CD_EVAL(Yt, Xt, phit, R);
      if (phit <= phi + 1e-4 * alpha * PetscRealPart(slope)) {
        ok = PETSC_TRUE;
        break;
      }
      alpha *= 0.5;
    }
    if (!ok) { /* no descent left at round-off level: restore the last iterate */
      DEM_CD_EVAL(Y, X, phi, R);
      break;
    }
    PetscCall(VecCopy(Yt, Y));
    PetscCall(VecCopy(Xt, X));
    phi = phit;
    PetscCall(VecNorm(R, NORM_INFINITY, res));
  }
#undef DEM_CD_EVAL
  PetscCall(PetscInfo(NULL, "cd compatibility polish: %" PetscInt_FMT " Newton steps, residual %g -> %g\n", *its, (double)r0, (double)*res));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&J));
  PetscCall(VecDestroy(&C));
  PetscCall(VecDestroy(&Xt));
  PetscCall(VecDestroy(&R));
  PetscCall(VecDestroy(&dY));
  PetscCall(VecDestroy(&Yt));
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

  PetscFunctionBegin;
  *power_out = power_in > 0 ? power_in : 2.0;
  if (!sys->nc) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc5(sys->nc, &idx, sys->nc, &d0, sys->nc, &d1, sys->nc, &f0, sys->nc, &f1));
  for (PetscInt l = 0; l < sim->nlaw; l++) {
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
    for (PetscInt j = 0; j < n; j++) {
      PetscReal pm, p;
      PetscCheck(f0[j] > 0 && f1[j] > f0[j], sim->comm, PETSC_ERR_SUP, "integrator cd, compatible: contact law '%s' gives no repulsive force that grows with the overlap (fn = %g N at %g m, %g N at %g m); the compatibility post-solve needs a power law", sim->laws[l]->type_name, (double)f0[j], (double)d0[j], (double)f1[j], (double)d1[j]);
      pm = 1.0 + PetscLog2Real(f1[j] / f0[j]);
      if (power_in > 0) p = power_in;
      else {
        if (PetscAbsReal(pm - 2.0) < 1e-3) p = 2.0;
        else if (PetscAbsReal(pm - 2.5) < 1e-3) p = 2.5;
        else SETERRQ(sim->comm, PETSC_ERR_SUP, "integrator cd, compatible: contact law '%s' behaves like a power law with exponent p = %g (004 eq. (34)); only p = 2 (hooke) and p = 5/2 (hertz_mindlin) are derived automatically; set compatible_power: 2 or 2.5", sim->laws[l]->type_name, (double)pm);
        PetscCheck(pfound <= 0 || pfound == p, sim->comm, PETSC_ERR_SUP, "integrator cd, compatible: the contact laws mix power laws p = %g and p = %g; 004 eq. (36) takes one p; set compatible_power", (double)pfound, (double)p);
        pfound = p;
      }
      sys->kt[idx[j]] = f0[j] / PetscPowReal(d0[j], p - 1);
      kmax            = PetscMax(kmax, sys->kt[idx[j]]);
    }
  }
  for (PetscInt k = 0; k < sys->nc; k++) sys->kt[k] /= kmax;
  *power_out = pfound > 0 ? pfound : 2.0;
  PetscCall(PetscFree5(idx, d0, d1, f0, f1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemCDCompatSolve_Private(DemSim sim, DemCDSystem *sys, const DemCDBodyInv *binv, const PetscBool *mobile, const PetscReal *Ft, PetscReal power, DemCDCompat *cp)
{
  const PetscInt nb = sim->bodies.n, nc = sys->nc;
  PetscInt      *row, *nnz, m = 0;
  PetscReal     *rnorm, fs = 0, Fmax = 0;
  DemCDCompatCtx cc;
  Tao            tao;
  Vec            X, XL, XU, C;
  Mat            A;

  PetscFunctionBegin;
  (void)binv;
  cp->its        = 0;
  cp->nrows      = 0;
  cp->eqres      = 0;
  cp->reason     = 0;
  cp->power_used = power;
  for (PetscInt k = 0; k < nc; k++) fs = PetscMax(fs, sys->f[k]);
  if (!nc || fs == 0) {
    for (PetscInt k = 0; k < nc; k++) sys->fc[k] = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* rows of Gamma_N touched by a contact, and their 2-norms */
  PetscCall(PetscMalloc3(6 * nb, &row, 6 * nb, &rnorm, 6 * nb, &nnz));
  for (PetscInt j = 0; j < 6 * nb; j++) rnorm[j] = 0, nnz[j] = 0;
  for (PetscInt k = 0; k < nc; k++) {
    const PetscReal *J = sys->J + 12 * k;
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
      Fmax     = PetscMax(Fmax, PetscAbsReal(Ft[j]));
    }
  }
  cp->nrows = m;
  if (!m) { /* nothing mobile is touched: no force is needed */
    for (PetscInt k = 0; k < nc; k++) sys->fc[k] = 0;
    PetscCall(PetscFree3(row, rnorm, nnz));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* A = S B_N^T / 1 (scaled rows), rhs = S F~ / fs, x = f / fs */
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, nc, 0, nnz, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  for (PetscInt k = 0; k < nc; k++) {
    const PetscReal *J = sys->J + 12 * k;
    for (int s = 0; s < 2; s++) {
      PetscInt body = s ? sys->b[k] : sys->a[k];
      for (int d = 0; d < 6; d++) {
        PetscInt j = 6 * body + d;
        if (row[j] < 0 || J[6 * s + d] == 0) continue;
        PetscCall(MatSetValue(A, row[j], k, J[6 * s + d] / rnorm[j], ADD_VALUES));
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
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nc, &X));
  PetscCall(VecDuplicate(X, &XL));
  PetscCall(VecDuplicate(X, &XU));
  PetscCall(VecSet(XL, 0.0));
  PetscCall(VecSet(XU, PETSC_INFINITY));
  PetscCall(PetscMalloc1(nc, &cc.w));
  cc.q = power / (power - 1);
  cc.A = A;
  {
    PetscScalar *x;
    PetscCall(VecGetArray(X, &x));
    for (PetscInt k = 0; k < nc; k++) {
      x[k]    = PetscMax(sys->f[k], 0.0) / fs;
      cc.w[k] = (power - 1) / power * PetscPowReal(sys->kt[k], 1.0 / (1.0 - power));
    }
    PetscCall(VecRestoreArray(X, &x));
  }
  PetscCall(TaoCreate(PETSC_COMM_SELF, &tao));
  PetscCall(TaoSetType(tao, TAOALMM));
  PetscCall(TaoSetOptionsPrefix(tao, "cd_compat_"));
  PetscCall(TaoSetSolution(tao, X));
  PetscCall(TaoSetVariableBounds(tao, XL, XU));
  PetscCall(TaoSetObjectiveAndGradient(tao, NULL, DemCDCompatObjGrad, &cc));
  PetscCall(TaoSetEqualityConstraintsRoutine(tao, C, DemCDCompatEq, &cc));
  PetscCall(TaoSetJacobianEqualityRoutine(tao, A, A, DemCDCompatEqJac, &cc));
  PetscCall(TaoSetTolerances(tao, PetscMax(cp->tol, cp->almm_tol), 0.0, 0.0));
  PetscCall(TaoSetConstraintTolerances(tao, PetscMax(cp->tol, cp->almm_tol), 0.0));
  PetscCall(TaoSetMaximumIterations(tao, cp->max_it));
  PetscCall(TaoSetFromOptions(tao));
  PetscCall(TaoSolve(tao));
  {
    TaoConvergedReason reason;
    PetscInt           its;
    Vec                Ym, Y, Xp, R;
    PetscReal          rp;
    PetscCall(TaoGetIterationNumber(tao, &its));
    PetscCall(TaoGetConvergedReason(tao, &reason));
    cp->its    = its;
    cp->reason = (int)reason;
    PetscCall(VecDuplicate(C, &R));
    PetscCall(MatMult(A, X, R));
    PetscCall(VecAXPY(R, -1.0, cc.rhs));
    PetscCall(VecNorm(R, NORM_INFINITY, &cp->res_almm));
    PetscCall(VecDestroy(&R));
    /* Newton polish of the KKT conditions from the ALMM multipliers (PHR convention
       L = f + y.c: the displacements are -y) */
    cp->polish_its = 0;
    if (cp->res_almm > cp->tol) {
      PetscCall(TaoALMMGetMultipliers(tao, &Ym));
      PetscCall(VecDuplicate(Ym, &Y));
      PetscCall(VecAXPBY(Y, -1.0, 0.0, Ym));
      PetscCall(VecDuplicate(X, &Xp));
      PetscCall(VecDuplicate(X, &cc.d));
      PetscCall(VecDuplicate(X, &cc.t));
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &cc.A2));
      {
        PetscScalar *v;
        PetscCall(MatSeqAIJGetArray(cc.A2, &v));
        {
          MatInfo info;
          PetscCall(MatGetInfo(cc.A2, MAT_LOCAL, &info));
          for (PetscInt k = 0; k < (PetscInt)info.nz_used; k++) v[k] = v[k] * v[k];
        }
        PetscCall(MatSeqAIJRestoreArray(cc.A2, &v));
      }
      PetscCall(DemCDCompatPolish(&cc, Y, Xp, cp->tol, &cp->polish_its, &rp));
      if (rp < cp->res_almm) PetscCall(VecCopy(Xp, X));
      PetscCall(VecDestroy(&Y));
      PetscCall(VecDestroy(&Xp));
      PetscCall(VecDestroy(&cc.d));
      PetscCall(VecDestroy(&cc.t));
      PetscCall(MatDestroy(&cc.A2));
    }
  }
  {
    const PetscScalar *x;
    PetscReal         *r;
    PetscCall(VecGetArrayRead(X, &x));
    for (PetscInt k = 0; k < nc; k++) sys->fc[k] = fs * PetscMax(PetscRealPart(x[k]), 0.0);
    PetscCall(VecRestoreArrayRead(X, &x));
    /* unscaled equilibrium residual of the result over Gamma_N */
    PetscCall(PetscCalloc1(6 * nb, &r));
    for (PetscInt k = 0; k < nc; k++)
      for (int d = 0; d < 6; d++) {
        r[6 * sys->a[k] + d] += sys->J[12 * k + d] * sys->fc[k];
        r[6 * sys->b[k] + d] += sys->J[12 * k + 6 + d] * sys->fc[k];
      }
    for (PetscInt j = 0; j < 6 * nb; j++)
      if (row[j] >= 0) cp->eqres = PetscMax(cp->eqres, PetscAbsReal(r[j] - Ft[j]));
    cp->eqres /= Fmax > 0 ? Fmax : 1.0;
    PetscCall(PetscFree(r));
  }
  PetscCall(TaoDestroy(&tao));
  PetscCall(VecDestroy(&X));
  PetscCall(VecDestroy(&XL));
  PetscCall(VecDestroy(&XU));
  PetscCall(VecDestroy(&C));
  PetscCall(VecDestroy(&cc.rhs));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFree(cc.w));
  PetscCall(PetscFree3(row, rnorm, nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}
