/*
  trapezoid.c - integrator `trapezoid`: the generalized trapezoidal rule of
  001_558b02b5fc003581.txt section 4, eq. (40)-(49), solved in every step by fixed-point
  iteration (001 Algorithm 1, Remark 5-6).

  Scheme, per mobile body i, step h from t to t + h, phi in [0, 1] (0 explicit forward Euler,
  1/2 the trapezoidal rule (second order), 1 backward Euler):
      v(t+h)      = v(t) + h/m [phi f(t+h) + (1 - phi) f(t)]                       eq. (42)
      L(t+h)      = L(t) + h [phi m(t+h) + (1 - phi) m(t)]                         eq. (42)
      x(t+h)      = x(t) + h [phi v(t+h) + (1 - phi) v(t)]                         eq. (45)
      alpha_D     = h [phi w(t+h) + (1 - phi) w(t)]                                eq. (45)
      q(t+h)      = q(alpha_D) q(t)                                                eq. (47)
  f, m: total force and moment (contacts, gravity, loads, fields) at the state
  (x, v, w, orientation) of t+h, eq. (46). Rotations, for any inertia: 001 eq. (12) writes
  j w' = m for spheres; here the rule is applied to the world-frame angular momentum
  L = R I R^T w (I the principal inertia in the body frame, R the rotation of q), and
  w(t+h) = R(t+h) I^-1 R(t+h)^T L(t+h), which is 001 eq. (42) for isotropic inertia and
  keeps L exactly for a torque-free body of any inertia. alpha_D is the incremental Rodrigues
  vector (001 eq. (9), (45)); the total orientation is composed with it, eq. (47), and stored
  as the quaternion q(alpha_D) q(t) (the same composition as eq. (11), Remark 2; the store
  never holds a total Rodrigues vector, which is singular at pi).

  Solution (Algorithm 1): predictor = the forward Euler step (f(t+h) := f(t)); then sweeps
  of: evaluate f, m at the current iterate (DemForcesCompute, no history commit, with the
  increments x - x(t) and alpha_D published in sim->inc_x / inc_alpha for laws that map
  rolling), update v, L, w, x, alpha_D, q from eq. (42), (45), (47). Converged when every error
  measure of eq. (48) is <= tol, for a = x, v, w, alpha_D:
      err(a) = sum_i |a_i(K+1) - a_i(K)| / sum_i |a_i(K+1) - a_i(t)|
  with eq. (49), denominator sum_i |a_i(K+1)|, where that of (48) vanishes, and for alpha_D,
  whose value at t is zero, eq. (48) and (49) coincide. "Vanishes": below a floor of
  1e-12 per body in units of r_min, r_min / h, 1 / h and 1 rad for x, v, w, alpha_D (r_min the
  smallest mobile body's radius); the denominator is never below that floor, so that bodies
  at rest (both denominators at round-off) do not stall the iteration. phi = 0 needs no
  iteration (the predictor is the step).
  Sweeps (Remark 5):
    gauss_seidel  bodies are updated one after another with the latest values of the others.
                  On top of DemForcesCompute (which evaluates every contact at once) this is
                  done by colours: the bodies are coloured greedily (index order) so that no
                  two bodies of a colour can interact during the step (neighbour-list pairs
                  whose bounding spheres are closer than 2 h (|v_a| + |v_b|), and bonded
                  pairs), and a sweep evaluates the forces once per colour and updates that
                  colour. Bodies of one colour do not act on each other, so updating them
                  together is the same as one after another: this is Gauss-Seidel in the
                  order of the colours, exactly, with (number of colours) evaluations per
                  sweep instead of one per body. Near-field (Mie) pairs are not in the graph:
                  within a colour they are coupled Jacobi-wise.
    jacobi        one evaluation per sweep, every body updated with the previous iterate
                  (Algorithm 1 as printed).
  What Gauss-Seidel gains (measured, benchmarks/trapezoid/README.md): linearized, a Jacobi
  sweep multiplies the error by -h phi M^-1 (C + h phi K) (C, K the contact damping and
  stiffness matrices), and Remark 5's sweep (body i with the new values of the bodies before
  it, its own old value) removes only the neighbour (off-diagonal) part of that matrix; the
  part from a body's own contacts stays. On a column of spheres (a chain: bipartite, every
  contact between two mobile bodies) the contraction per sweep halves (0.75 -> 0.39 at
  dt = 0.4 tc, 28.6 -> 10.9 sweeps per step); in a dense 3-d bed (triangles, floor contacts)
  it falls by only a quarter (0.059 -> 0.044 at 0.05 tc), and at the usual dt (tc/50, about
  0.02 per sweep) both need the same 3 sweeps to reach tol 1e-4. A sweep costs (number of
  colours) force evaluations here, so on beds jacobi is the cheaper sweep; gauss_seidel stays
  the default named by DESIGN.md.
  `iterations` in thermo.csv counts sweeps.
  MPI (src/core/decomp.c): every evaluation first sends the owners' iterate to the ghosts; the
  error measures and the rebuild decision are global. jacobi is the serial iteration; with
  gauss_seidel each rank colours its own bodies (pairs across ranks Jacobi-wise), so results
  agree with one rank within tol (tests/cases/mpi_implicit.sh).
  After convergence the state is stored, and one evaluation with history commit at the new
  state gives f(t+h), m(t+h) for the next step (the tangential springs are updated from the
  committed state to the new one).

  Step control: a step that does not converge within max_iterations (or whose iterate is not
  finite) is rejected: the state is left as it was and the run retries with h/2 (DemStepInfo
  accepted = false, run.c; thermo.csv counts them in `rejected`). With adapt, a step is
  rejected as soon as its error measures predict that it will not converge: from sweep 3, the
  contraction rate is taken as the larger of the last two ratios of the largest error measure,
  and a rate >= 1 (a cycle) or one too slow to reach tol by max_iterations ends the step. The
  cycles come from laws whose force jumps at zero overlap: the Hookean dashpot force jumps from
  0 to m_eff gamma_n |v_n| when a contact closes, so the fixed-point map is discontinuous and a
  step in which a contact opens or closes may have no fixed point at all; the iterates then
  cycle (period 2 with jacobi, period = number of colours with gauss_seidel) until the step is
  small enough (measured: no rejected step at all with gamma_n = 0 at dt = 0.2 tc on the
  benchmark bed, 179 of 2869 with gamma_n = 2800). Stopping those steps early saved about 40 %
  of the force evaluations on that bed at dt = 0.2 tc. With adapt, after 10
  consecutive steps of at most n_low sweeps, h doubles again, up to the configured dt;
  n_low = floor(ln(tol) / ln(rho)), rho = tol^(1/max_iterations) / 4: the fixed-point
  contraction grows about as h^2, so at 2h a step that took n_low sweeps still converges
  within max_iterations. A dt below 2^-40 of the configured one stops the run. Without adapt a
  step that does not converge stops the run.

  Energy bookkeeping: the scheme changes the kinetic energy by exactly
      1/2 m (v1^2 - v0^2) = h [phi f1 + (1 - phi) f0] . (v0 + v1)/2
  (and for spheres the same for the rotation with m, w), so the work of the dissipative
  forces (dashpots, drag: the fd/td arrays of DemForcesCompute) in the scheme is
      -h sum_i [phi fd1 + (1 - phi) fd0] . (v0 + v1)/2 + [phi td1 + (1 - phi) td0] . (w0 + w1)/2
  which is added to `dissipated`, plus the energy the friction return mappings remove (eslip
  of the committed evaluation). For phi = 1/2 the balance then closes up to the trapezoid
  error of the conservative forces' work (O(h^3) per step); phi > 1/2 damps numerically and
  phi < 1/2 adds energy, which shows in e_balance (not counted as dissipated). fd1 is taken at
  the accepted state, the update used the last iterate: the difference is within tol.
  With the default tangential spring of friction.h the spring grows by vt(t+h) h (backward
  Euler in the spring only); hertz_mindlin's `tangential: rolling_spring` uses the scheme's
  own increments (eq. (25)-(29)).

  Keys: type, dt, dt_fraction, petsc_options, and
    phi               [0.5], in [0, 1]
    tol               [1e-4], > 0: tolerance of the error measures eq. (48)-(49)
    max_iterations    [50], >= 1: sweeps per step
    sweep             gauss_seidel | jacobi [gauss_seidel]
    adapt             [true]: halve dt on failure, grow it back
    freeze_rotations  [false]: no rotational degrees of freedom (w = 0, orientation fixed;
                      001 section 5.3's comparison run)
*/
#include "demimpl.h"

#define DEMINTEGRATORTRAPEZOID "trapezoid"

typedef struct {
  /* configuration */
  PetscReal phi, tol;
  PetscInt  max_it, sweep;
  PetscBool adapt, freeze;
  /* step control */
  PetscReal dt0;
  PetscInt  nlow, nlow_max;
  /* per-body scratch */
  PetscInt   cap;
  PetscReal *xn, *vn, *wn, *qn, *Ln; /* the state at t, world angular momentum at t */
  PetscReal *x, *v, *w, *q, *a;      /* the iterate; a = alpha_D */
  PetscReal *xp, *vp, *wp, *ap;      /* the previous iterate */
  PetscReal *dx;                     /* x - x(t) */
  PetscReal *f, *t;                  /* forces at the iterate */
  PetscReal *fdn, *tdn;              /* dissipative forces at t */
  /* colours of the Gauss-Seidel sweep: bodies corder[cstart[c] .. cstart[c+1]) */
  PetscInt  *colour, *corder, *cstart, *deg, *adjoff, *adj, *mark;
  PetscInt   adjcap, ncolour;
  PetscInt   nevals; /* force evaluations of the last step */
} DemIntegrator_Trapezoid;

static const char *const DemTrapSweepNames[] = {"gauss_seidel", "jacobi", NULL};

static PetscErrorCode DemIntegratorSetFromConfig_Trapezoid(DemIntegrator ig, DemNode cfg)
{
  DemIntegrator_Trapezoid *tz    = (DemIntegrator_Trapezoid *)ig->data;
  const char *const        own[] = {"phi", "tol", "max_iterations", "sweep", "adapt", "freeze_rotations", NULL};
  DemNode                  kn;

  PetscFunctionBegin;
  if (!cfg) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemIntegratorAllowKeys_Private(cfg, own));
  PetscCall(DemNodeGetReal(cfg, "phi", PETSC_FALSE, &tz->phi));
  PetscCall(DemNodeGet(cfg, "phi", &kn));
  DemNodeCheck(kn ? kn : cfg, tz->phi >= 0 && tz->phi <= 1, "phi must be in [0, 1] (0 forward Euler, 0.5 trapezoidal rule, 1 backward Euler) (got %g)", (double)tz->phi);
  PetscCall(DemNodeGetReal(cfg, "tol", PETSC_FALSE, &tz->tol));
  PetscCall(DemNodeGet(cfg, "tol", &kn));
  DemNodeCheck(kn ? kn : cfg, tz->tol > 0 && tz->tol < 1, "tol must be in (0, 1) (got %g)", (double)tz->tol);
  PetscCall(DemNodeGetInt(cfg, "max_iterations", PETSC_FALSE, &tz->max_it));
  PetscCall(DemNodeGet(cfg, "max_iterations", &kn));
  DemNodeCheck(kn ? kn : cfg, tz->max_it >= 1, "max_iterations must be >= 1 (got %" PetscInt_FMT ")", tz->max_it);
  PetscCall(DemNodeGetChoice(cfg, "sweep", DemTrapSweepNames, PETSC_FALSE, &tz->sweep));
  PetscCall(DemNodeGetBool(cfg, "adapt", PETSC_FALSE, &tz->adapt));
  PetscCall(DemNodeGetBool(cfg, "freeze_rotations", PETSC_FALSE, &tz->freeze));
  /* phi = 0 is forward Euler: explicit, refused above the collision time (guard.c) */
  ig->stability = tz->phi > 0 ? DEM_INTEGRATOR_IMPLICIT : DEM_INTEGRATOR_EXPLICIT;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the state between steps that the store does not hold: the configured dt and the count of
   cheap steps towards the next doubling of dt (checkpoint.c) */
static PetscErrorCode DemIntegratorCheckpoint_Trapezoid(DemIntegrator ig, FILE *fp, PetscBool write)
{
  DemIntegrator_Trapezoid *tz      = (DemIntegrator_Trapezoid *)ig->data;
  PetscInt                 version = 1;

  PetscFunctionBegin;
  PetscCall(DemCheckpointIO(fp, write, &version, sizeof(version), "trapezoid checkpoint version"));
  PetscCheck(version == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "integrator trapezoid: checkpoint version %" PetscInt_FMT ", this build reads version 1", version);
  PetscCall(DemCheckpointIO(fp, write, &tz->dt0, sizeof(tz->dt0), "trapezoid configured dt"));
  PetscCall(DemCheckpointIO(fp, write, &tz->nlow, sizeof(tz->nlow), "trapezoid cheap-step count"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorSetUp_Trapezoid(DemIntegrator ig, DemSim sim)
{
  DemIntegrator_Trapezoid *tz  = (DemIntegrator_Trapezoid *)ig->data;
  DemBodyStore            *bs  = &sim->bodies;
  PetscReal                rho = PetscPowReal(tz->tol, 1.0 / tz->max_it) / 4;

  PetscFunctionBegin;
  tz->dt0      = sim->dt;
  tz->nlow_max = PetscMax(1, (PetscInt)PetscFloorReal(PetscLogReal(tz->tol) / PetscLogReal(rho)));
  if (tz->freeze) /* no rotational degrees of freedom: the spin is zero from the start */
    for (PetscInt i = 0; i < bs->n + bs->nghost; i++)
      if (bs->inv_m[i] > 0) bs->w[3 * i] = bs->w[3 * i + 1] = bs->w[3 * i + 2] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemTrapReserve(DemIntegrator_Trapezoid *tz, PetscInt nb)
{
  PetscFunctionBegin;
  if (nb <= tz->cap) PetscFunctionReturn(PETSC_SUCCESS);
  nb = PetscMax(nb, 2 * tz->cap);
  PetscCall(PetscFree5(tz->xn, tz->vn, tz->wn, tz->qn, tz->Ln));
  PetscCall(PetscFree5(tz->x, tz->v, tz->w, tz->q, tz->a));
  PetscCall(PetscFree5(tz->xp, tz->vp, tz->wp, tz->ap, tz->dx));
  PetscCall(PetscFree4(tz->f, tz->t, tz->fdn, tz->tdn));
  PetscCall(PetscFree6(tz->colour, tz->corder, tz->cstart, tz->deg, tz->adjoff, tz->mark));
  PetscCall(PetscMalloc5(3 * nb, &tz->xn, 3 * nb, &tz->vn, 3 * nb, &tz->wn, 4 * nb, &tz->qn, 3 * nb, &tz->Ln));
  PetscCall(PetscMalloc5(3 * nb, &tz->x, 3 * nb, &tz->v, 3 * nb, &tz->w, 4 * nb, &tz->q, 3 * nb, &tz->a));
  PetscCall(PetscMalloc5(3 * nb, &tz->xp, 3 * nb, &tz->vp, 3 * nb, &tz->wp, 3 * nb, &tz->ap, 3 * nb, &tz->dx));
  PetscCall(PetscMalloc4(3 * nb, &tz->f, 3 * nb, &tz->t, 3 * nb, &tz->fdn, 3 * nb, &tz->tdn));
  PetscCall(PetscMalloc6(nb, &tz->colour, nb, &tz->corder, nb + 2, &tz->cstart, nb, &tz->deg, nb + 1, &tz->adjoff, nb + 2, &tz->mark));
  tz->cap = nb;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorDestroy_Trapezoid(DemIntegrator ig)
{
  DemIntegrator_Trapezoid *tz = (DemIntegrator_Trapezoid *)ig->data;

  PetscFunctionBegin;
  PetscCall(PetscFree5(tz->xn, tz->vn, tz->wn, tz->qn, tz->Ln));
  PetscCall(PetscFree5(tz->x, tz->v, tz->w, tz->q, tz->a));
  PetscCall(PetscFree5(tz->xp, tz->vp, tz->wp, tz->ap, tz->dx));
  PetscCall(PetscFree4(tz->f, tz->t, tz->fdn, tz->tdn));
  PetscCall(PetscFree6(tz->colour, tz->corder, tz->cstart, tz->deg, tz->adjoff, tz->mark));
  PetscCall(PetscFree(tz->adj));
  PetscCall(PetscFree(ig->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a body whose motion the scheme integrates: any owned body with a finite mass (as verlet) */
static inline PetscBool DemTrapMobile(const DemBodyStore *bs, PetscInt i)
{
  return (!(bs->flags[i] & DEM_GHOST) && bs->inv_m[i] > 0) ? PETSC_TRUE : PETSC_FALSE;
}

/* out = R diag(d) R^T in, R the rotation of q (body -> world); d isotropic: no rotation */
static inline void DemTrapInertiaApply(const PetscReal q[4], const PetscReal d[3], const PetscReal in[3], PetscReal out[3])
{
  if (d[0] == d[1] && d[1] == d[2]) {
    out[0] = d[0] * in[0], out[1] = d[0] * in[1], out[2] = d[0] * in[2];
  } else {
    PetscReal b[3];
    DemQuatRotateInv(q, in, b);
    b[0] *= d[0], b[1] *= d[1], b[2] *= d[2];
    DemQuatRotate(q, b, out);
  }
}

/*
  one body's update from the forces F, T at the iterate (the predictor passes the forces at t):
  eq. (42) for v and L, w from L with the iterate's orientation, eq. (45) for x and alpha_D,
  eq. (47) for the orientation
*/
static void DemTrapUpdateBody(DemSim sim, DemIntegrator_Trapezoid *tz, PetscInt i, PetscReal h, const PetscReal F[3], const PetscReal T[3])
{
  const DemBodyStore *bs = &sim->bodies;
  const PetscReal     ph = tz->phi, im = bs->inv_m[i];
  const PetscReal    *Fn = bs->f + 3 * i, *Tn = bs->t + 3 * i;
  PetscReal          *x = tz->x + 3 * i, *v = tz->v + 3 * i, *w = tz->w + 3 * i, *a = tz->a + 3 * i;
  const PetscReal    *xn = tz->xn + 3 * i, *vn = tz->vn + 3 * i, *wn = tz->wn + 3 * i;

  for (int k = 0; k < 3; k++) v[k] = vn[k] + h * im * (ph * F[k] + (1 - ph) * Fn[k]);
  if (sim->dim == 2) v[2] = 0;
  for (int k = 0; k < 3; k++) {
    x[k]              = xn[k] + h * (ph * v[k] + (1 - ph) * vn[k]);
    tz->dx[3 * i + k] = x[k] - xn[k];
  }
  if (tz->freeze) return;
  {
    PetscReal L[3], dq[4];
    for (int k = 0; k < 3; k++) L[k] = tz->Ln[3 * i + k] + h * (ph * T[k] + (1 - ph) * Tn[k]);
    DemTrapInertiaApply(tz->q + 4 * i, bs->inv_I + 3 * i, L, w);
    if (sim->dim == 2) w[0] = w[1] = 0;
    for (int k = 0; k < 3; k++) a[k] = h * (ph * w[k] + (1 - ph) * wn[k]);
    DemQuatFromRodrigues(a, dq);
    DemQuatMul(dq, tz->qn + 4 * i, tz->q + 4 * i);
    DemQuatNormalize(tz->q + 4 * i);
  }
}

/* forces at the iterate (no commit), with the increments published for the laws */
static PetscErrorCode DemTrapEval(DemSim sim, DemIntegrator_Trapezoid *tz, PetscBool commit, PetscReal *f, PetscReal *t, PetscReal *fd, PetscReal *td, DemForceOut *fo)
{
  DemState st = {tz->x, tz->v, tz->w, tz->q};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(fo, sizeof(*fo)));
  fo->f          = f;
  fo->t          = t;
  fo->fd         = fd;
  fo->td         = td;
  sim->inc_x     = tz->dx;
  sim->inc_alpha = tz->a;
  if (sim->decomp) PetscCall(DemDecompForwardState_Private(sim, tz->x, tz->v, tz->w, tz->q, tz->dx, tz->a)); /* MPI: the owners' iterate into the ghosts (decomp.c) */
  PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, commit, fo));
  sim->inc_x     = NULL;
  sim->inc_alpha = NULL;
  tz->nevals++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  greedy colouring of the mobile bodies by the pairs that can interact within the step:
  neighbour-list pairs whose bounding spheres come closer than 2 h (|v_a| + |v_b|), and bonds
*/
static PetscErrorCode DemTrapColour(DemSim sim, DemIntegrator_Trapezoid *tz, PetscReal h)
{
  DemBodyStore     *bs = &sim->bodies;
  DemNeighbourList *nl = &sim->nl;
  const PetscInt    nb = bs->n + bs->nghost, nbond = sim->bonds ? sim->bonds->n : 0;
  const PetscBool   per = (sim->periodic[0] || sim->periodic[1] || sim->periodic[2]) ? PETSC_TRUE : PETSC_FALSE;
  PetscInt          ne = 0;
  const PetscReal  *shift = NULL;

  PetscFunctionBegin;
  if (per) PetscCall(DemNeighbourShifts_Private(sim, &shift));
  for (PetscInt i = 0; i < nb; i++) tz->deg[i] = 0;
  for (PetscInt pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      tz->adjoff[0] = 0;
      for (PetscInt i = 0; i < nb; i++) tz->adjoff[i + 1] = tz->adjoff[i] + tz->deg[i], tz->deg[i] = 0;
      if (tz->adjoff[nb] > tz->adjcap) {
        PetscCall(PetscFree(tz->adj));
        tz->adjcap = PetscMax(tz->adjoff[nb], 2 * tz->adjcap);
        PetscCall(PetscMalloc1(tz->adjcap, &tz->adj));
      }
    }
    for (PetscInt k = 0; k < nl->npairs + nbond; k++) {
      const PetscBool bond = k >= nl->npairs;
      PetscInt        ia = bond ? sim->bonds->a[k - nl->npairs] : nl->a[k], ib = bond ? sim->bonds->b[k - nl->npairs] : nl->b[k];
      if (!DemTrapMobile(bs, ia) || !DemTrapMobile(bs, ib) || ia == ib) continue;
      if (!bond) {
        PetscReal d2 = 0, sa = 0, sb = 0, reach;
        for (int j = 0; j < 3; j++) {
          PetscReal d = bs->x[3 * ia + j] - bs->x[3 * ib + j] - (per ? shift[3 * k + j] : 0);
          d2 += d * d;
          sa += bs->v[3 * ia + j] * bs->v[3 * ia + j];
          sb += bs->v[3 * ib + j] * bs->v[3 * ib + j];
        }
        reach = bs->radius[ia] + bs->radius[ib] + 2 * h * (PetscSqrtReal(sa) + PetscSqrtReal(sb)) + 1e-12 * (bs->radius[ia] + bs->radius[ib]);
        if (d2 >= reach * reach) continue;
      }
      if (pass == 1) {
        tz->adj[tz->adjoff[ia] + tz->deg[ia]] = ib;
        tz->adj[tz->adjoff[ib] + tz->deg[ib]] = ia;
      }
      tz->deg[ia]++, tz->deg[ib]++;
      ne++;
    }
  }
  /* greedy, in index order: the smallest colour no coloured neighbour has */
  tz->ncolour = 0;
  for (PetscInt i = 0; i < nb + 2; i++) tz->mark[i] = -1;
  for (PetscInt i = 0; i < nb; i++) tz->colour[i] = -1;
  for (PetscInt i = 0; i < nb; i++) {
    PetscInt c = 0;
    if (!DemTrapMobile(bs, i)) continue;
    for (PetscInt e = tz->adjoff[i]; e < tz->adjoff[i] + tz->deg[i]; e++) {
      PetscInt cj = tz->colour[tz->adj[e]];
      if (cj >= 0) tz->mark[cj] = i;
    }
    while (tz->mark[c] == i) c++;
    tz->colour[i] = c;
    tz->ncolour   = PetscMax(tz->ncolour, c + 1);
  }
  for (PetscInt c = 0; c <= tz->ncolour; c++) tz->cstart[c] = 0;
  for (PetscInt i = 0; i < nb; i++)
    if (tz->colour[i] >= 0) tz->cstart[tz->colour[i] + 1]++;
  for (PetscInt c = 0; c < tz->ncolour; c++) tz->cstart[c + 1] += tz->cstart[c];
  for (PetscInt c = 0; c < tz->ncolour; c++) tz->mark[c] = tz->cstart[c];
  for (PetscInt i = 0; i < nb; i++)
    if (tz->colour[i] >= 0) tz->corder[tz->mark[tz->colour[i]]++] = i;
  (void)ne;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every mobile body in one class (Jacobi) */
static void DemTrapOneClass(DemSim sim, DemIntegrator_Trapezoid *tz)
{
  const DemBodyStore *bs = &sim->bodies;
  PetscInt            k  = 0;
  for (PetscInt i = 0; i < bs->n + bs->nghost; i++)
    if (DemTrapMobile(bs, i)) tz->corder[k++] = i;
  tz->ncolour   = 1;
  tz->cstart[0] = 0;
  tz->cstart[1] = k;
}

/* the error measures of eq. (48)-(49) for x, v, w, alpha_D (see the file comment) */
static PetscErrorCode DemTrapErrors(DemSim sim, DemIntegrator_Trapezoid *tz, PetscReal h, PetscReal rmin, PetscReal err[4])
{
  const DemBodyStore *bs = &sim->bodies;
  PetscReal           loc[13] = {0}, glob[13], fl[4];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < bs->n; i++) {
    if (!DemTrapMobile(bs, i)) continue;
    const PetscReal *A[4] = {tz->x, tz->v, tz->w, tz->a}, *P[4] = {tz->xp, tz->vp, tz->wp, tz->ap}, *N[4] = {tz->xn, tz->vn, tz->wn, NULL};
    for (int q = 0; q < 4; q++) {
      PetscReal n2 = 0, d2 = 0, m2 = 0;
      for (int k = 0; k < 3; k++) {
        const PetscReal c = A[q][3 * i + k];
        n2 += PetscSqr(c - P[q][3 * i + k]);
        d2 += PetscSqr(c - (N[q] ? N[q][3 * i + k] : 0));
        m2 += c * c;
      }
      loc[3 * q] += PetscSqrtReal(n2);
      loc[3 * q + 1] += PetscSqrtReal(d2);
      loc[3 * q + 2] += PetscSqrtReal(m2);
    }
    loc[12] += 1;
  }
  PetscCallMPI(MPI_Allreduce(loc, glob, 13, MPIU_REAL, MPIU_SUM, sim->comm));
  fl[0] = glob[12] * 1e-12 * rmin;
  fl[1] = fl[0] / h;
  fl[2] = glob[12] * 1e-12 / h;
  fl[3] = glob[12] * 1e-12;
  for (int q = 0; q < 4; q++) {
    PetscReal D = glob[3 * q + 1] > fl[q] ? glob[3 * q + 1] : PetscMax(glob[3 * q + 2], fl[q]);
    err[q]      = glob[3 * q] / D;
  }
  if (tz->freeze) err[2] = err[3] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemTrapReject(DemSim sim, DemIntegrator_Trapezoid *tz, PetscReal h, PetscReal tn, const char why[], DemStepInfo *info)
{
  PetscFunctionBegin;
  sim->time      = tn;
  sim->inc_x     = NULL;
  sim->inc_alpha = NULL;
  PetscCheck(tz->adapt, sim->comm, PETSC_ERR_NOT_CONVERGED, "integrator trapezoid: step %" PetscInt_FMT " at t = %g s (dt = %g s): %s within max_iterations = %" PetscInt_FMT "; set adapt: true, raise max_iterations or reduce dt", sim->step + 1, (double)tn, (double)h, why, tz->max_it);
  PetscCheck(0.5 * h >= tz->dt0 * PetscPowReal(2.0, -40), sim->comm, PETSC_ERR_NOT_CONVERGED, "integrator trapezoid: step %" PetscInt_FMT " at t = %g s: %s even with dt = %g s, 2^-40 of the configured %g s", sim->step + 1, (double)tn, why, (double)h, (double)tz->dt0);
  info->accepted  = PETSC_FALSE;
  info->converged = PETSC_FALSE;
  info->dt_next   = 0.5 * h;
  tz->nlow        = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorStep_Trapezoid(DemIntegrator ig, DemSim sim, PetscReal h, DemStepInfo *info)
{
  DemIntegrator_Trapezoid *tz = (DemIntegrator_Trapezoid *)ig->data;
  DemBodyStore            *bs = &sim->bodies;
  PetscInt                 nb = bs->n + bs->nghost; /* MPI: changes at a rebuild */
  const PetscReal          ph = tz->phi, tn = sim->time;
  DemForceOut              fo;
  PetscReal                err[4] = {0, 0, 0, 0}, rmin = PETSC_MAX_REAL, vmax = 0, pn, pnew;
  PetscInt                 it = 0, ncolour;
  PetscBool                conv = PETSC_FALSE, stalled = PETSC_FALSE;
  PetscReal                emax[3] = {0, 0, 0}; /* largest error measure of the last three sweeps */

  PetscFunctionBegin;
  if (!(tz->dt0 > 0)) tz->dt0 = h;
  tz->nevals = 0;
  /* neighbour list at x(t), rebuilt early enough that it still holds at x(t+h) */
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_FALSE));
  nb = bs->n + bs->nghost;
  for (PetscInt i = 0; i < nb; i++) {
    PetscReal s = 0;
    for (int k = 0; k < 3; k++) s += bs->v[3 * i + k] * bs->v[3 * i + k];
    vmax = PetscMax(vmax, s);
    if (DemTrapMobile(bs, i) && !(bs->flags[i] & DEM_WALL) && bs->radius[i] > 0) rmin = PetscMin(rmin, bs->radius[i]);
  }
  vmax = PetscSqrtReal(vmax);
  if (sim->nl.x0 && sim->skin > 0) {
    PetscReal mx = 0;
    for (PetscInt i = 0; i < nb; i++) {
      PetscReal d2 = 0;
      for (int k = 0; k < 3; k++) d2 += PetscSqr(bs->x[3 * i + k] - sim->nl.x0[3 * i + k]);
      mx = PetscMax(mx, d2);
    }
    PetscInt again = PetscSqrtReal(mx) + 2 * h * vmax > 0.5 * sim->skin;
    if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &again, 1, MPIU_INT, MPI_MAX, sim->comm)); /* MPI: a collective decision */
    if (again) PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
  }
  if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &rmin, 1, MPIU_REAL, MPIU_MIN, sim->comm));
  if (rmin == PETSC_MAX_REAL) rmin = 1;
  nb = bs->n + bs->nghost;
  PetscCall(DemTrapReserve(tz, nb));
  PetscCall(DemSimReserveDissipative_Private(sim));
  /* the state at t, and the bodies the scheme does not integrate, at t + h */
  PetscCall(PetscArraycpy(tz->xn, bs->x, 3 * nb));
  PetscCall(PetscArraycpy(tz->vn, bs->v, 3 * nb));
  PetscCall(PetscArraycpy(tz->wn, bs->w, 3 * nb));
  PetscCall(PetscArraycpy(tz->qn, bs->q, 4 * nb));
  PetscCall(PetscArraycpy(tz->fdn, sim->fd, 3 * nb));
  PetscCall(PetscArraycpy(tz->tdn, sim->td, 3 * nb));
  PetscCall(PetscArraycpy(tz->x, bs->x, 3 * nb));
  PetscCall(PetscArraycpy(tz->v, bs->v, 3 * nb));
  PetscCall(PetscArraycpy(tz->w, bs->w, 3 * nb));
  PetscCall(PetscArraycpy(tz->q, bs->q, 4 * nb));
  for (PetscInt i = 0; i < nb; i++) {
    PetscReal *a = tz->a + 3 * i, *dx = tz->dx + 3 * i;
    a[0] = a[1] = a[2] = dx[0] = dx[1] = dx[2] = 0;
    if (DemTrapMobile(bs, i)) {
      PetscReal Ib[3] = {bs->I[3 * i], bs->I[3 * i + 1], bs->I[3 * i + 2]};
      DemTrapInertiaApply(bs->q + 4 * i, Ib, bs->w + 3 * i, tz->Ln + 3 * i);
    } else if (bs->flags[i] & DEM_PRESCRIBED) { /* constant velocity and spin */
      for (int k = 0; k < 3; k++) {
        dx[k]             = h * bs->v[3 * i + k];
        tz->x[3 * i + k] += dx[k];
        a[k]              = h * bs->w[3 * i + k];
      }
      if (a[0] != 0 || a[1] != 0 || a[2] != 0) {
        PetscReal dq[4];
        DemQuatFromRodrigues(a, dq);
        DemQuatMul(dq, bs->q + 4 * i, tz->q + 4 * i);
        DemQuatNormalize(tz->q + 4 * i);
      }
    }
  }
  /* predictor: forward Euler (f(t+h) := f(t)); for phi = 0 it is the step */
  for (PetscInt i = 0; i < nb; i++)
    if (DemTrapMobile(bs, i)) DemTrapUpdateBody(sim, tz, i, h, bs->f + 3 * i, bs->t + 3 * i);
  sim->time = tn + h; /* loads and walls of the evaluations at t + h */
  if (ph == 0) {
    conv = PETSC_TRUE;
    it   = 1;
  } else {
    if (tz->sweep == 0) PetscCall(DemTrapColour(sim, tz, h));
    else DemTrapOneClass(sim, tz);
    ncolour = tz->ncolour; /* MPI: every rank evaluates as often as the one with most colours */
    if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ncolour, 1, MPIU_INT, MPI_MAX, sim->comm));
    for (it = 1; it <= tz->max_it; it++) {
      PetscCall(PetscArraycpy(tz->xp, tz->x, 3 * nb));
      PetscCall(PetscArraycpy(tz->vp, tz->v, 3 * nb));
      PetscCall(PetscArraycpy(tz->wp, tz->w, 3 * nb));
      PetscCall(PetscArraycpy(tz->ap, tz->a, 3 * nb));
      for (PetscInt c = 0; c < ncolour; c++) {
        PetscCall(DemTrapEval(sim, tz, PETSC_FALSE, tz->f, tz->t, NULL, NULL, &fo));
        if (c >= tz->ncolour) continue;
        for (PetscInt k = tz->cstart[c]; k < tz->cstart[c + 1]; k++) {
          const PetscInt i = tz->corder[k];
          DemTrapUpdateBody(sim, tz, i, h, tz->f + 3 * i, tz->t + 3 * i);
        }
      }
      PetscCall(DemTrapErrors(sim, tz, h, rmin, err));
      if (!(err[0] == err[0] && err[1] == err[1] && err[2] == err[2] && err[3] == err[3]) || PetscIsInfOrNanReal(err[0] + err[1] + err[2] + err[3])) {
        PetscCall(DemTrapReject(sim, tz, h, tn, "the iterate is not finite", info));
        info->iterations = it;
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      if (err[0] <= tz->tol && err[1] <= tz->tol && err[2] <= tz->tol && err[3] <= tz->tol) {
        conv = PETSC_TRUE;
        break;
      }
      /* predicted non-convergence: from sweep 3 on, the contraction rate is estimated as the
         larger of the last two error ratios (a cycle of period 2 or 3 shows a ratio >= 1 in
         one of them); with adapt, a step that cannot reach tol within max_iterations at that
         rate is rejected now instead of after max_iterations sweeps */
      emax[2] = emax[1], emax[1] = emax[0];
      emax[0] = PetscMax(PetscMax(err[0], err[1]), PetscMax(err[2], err[3]));
      if (tz->adapt && it >= 3 && emax[1] > 0 && emax[2] > 0) {
        const PetscReal rate = PetscMax(emax[0] / emax[1], emax[1] / emax[2]);
        if (rate >= 1 || it + PetscLogReal(tz->tol / emax[0]) / PetscLogReal(rate) > tz->max_it) {
          stalled = PETSC_TRUE;
          break;
        }
      }
    }
  }
  if (!conv) {
    char why[256];
    PetscCall(PetscSNPrintf(why, sizeof(why), "the fixed-point iteration did not converge%s (errors x %.3g, v %.3g, w %.3g, alpha %.3g > tol %g)", stalled ? " (stopped early: contraction too slow or a cycle)" : "", (double)err[0], (double)err[1], (double)err[2], (double)err[3], (double)tz->tol));
    PetscCall(DemTrapReject(sim, tz, h, tn, why, info));
    info->iterations = PetscMin(it, tz->max_it);
    info->residual   = PetscMax(PetscMax(err[0], err[1]), PetscMax(err[2], err[3]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* accept: the new state, then f(t+h) with history commit */
  PetscCall(PetscArraycpy(bs->x, tz->x, 3 * nb));
  PetscCall(PetscArraycpy(bs->v, tz->v, 3 * nb));
  PetscCall(PetscArraycpy(bs->w, tz->w, 3 * nb));
  PetscCall(PetscArraycpy(bs->q, tz->q, 4 * nb));
  {
    const PetscInt nbuilds = sim->nl.nbuilds;
    PetscCall(DemSimApplyWalls_Private(sim));
    /* MPI: a wall removed now rebuilds the lists and migrates bodies under the step's arrays */
    PetscCheck(!sim->decomp || sim->nl.nbuilds == nbuilds, sim->comm, PETSC_ERR_SUP, "integrator trapezoid: a wall removed at t = %g s (remove_at) is not supported on several MPI ranks yet; run on one rank", (double)sim->time);
  }
  PetscCall(DemTrapEval(sim, tz, PETSC_TRUE, bs->f, bs->t, sim->fd, sim->td, &fo));
  /* dissipated: -h [phi P(fd(t+h)) + (1 - phi) P(fd(t))] at the mean velocities, + eslip */
  pn = pnew = 0;
  for (PetscInt i = 0; i < bs->n; i++)
    for (int k = 0; k < 3; k++) {
      const PetscInt  j  = 3 * i + k;
      const PetscReal vm = 0.5 * (tz->vn[j] + bs->v[j]), wm = 0.5 * (tz->wn[j] + bs->w[j]);
      pn += tz->fdn[j] * vm + tz->tdn[j] * wm;
      pnew += sim->fd[j] * vm + sim->td[j] * wm;
    }
  if (sim->decomp) PetscCall(DemDecompSumPowers_Private(sim, &pn, &pnew)); /* MPI: over the ranks (decomp.c) */
  sim->dissipated += -h * (ph * pnew + (1 - ph) * pn) + fo.eslip;
  sim->dissip_rate_prev = fo.dissip_rate;
  sim->pe_contact       = fo.pe_contact;
  sim->ncontacts        = fo.ncontacts;
  info->iterations      = it;
  info->residual        = PetscMax(PetscMax(err[0], err[1]), PetscMax(err[2], err[3]));
  /* dt back towards the configured one after a run of cheap steps */
  if (tz->adapt && h < tz->dt0) {
    tz->nlow = it <= tz->nlow_max ? tz->nlow + 1 : 0;
    if (tz->nlow >= 10) {
      info->dt_next = PetscMin(2 * h, tz->dt0);
      tz->nlow      = 0;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemIntegratorCreate_Trapezoid - constructor of the "trapezoid" integrator (defaults phi 0.5,
  tol 1e-4, max_iterations 50, sweep gauss_seidel, adapt true, freeze_rotations false).
*/
PetscErrorCode DemIntegratorCreate_Trapezoid(DemIntegrator ig)
{
  DemIntegrator_Trapezoid *tz;

  PetscFunctionBegin;
  PetscCall(PetscNew(&tz));
  tz->phi                = 0.5;
  tz->tol                = 1e-4;
  tz->max_it             = 50;
  tz->sweep              = 0;
  tz->adapt              = PETSC_TRUE;
  tz->freeze             = PETSC_FALSE;
  ig->data               = tz;
  ig->ops->setfromconfig = DemIntegratorSetFromConfig_Trapezoid;
  ig->ops->setup         = DemIntegratorSetUp_Trapezoid;
  ig->ops->step          = DemIntegratorStep_Trapezoid;
  ig->ops->destroy       = DemIntegratorDestroy_Trapezoid;
  ig->ops->checkpoint    = DemIntegratorCheckpoint_Trapezoid;
  ig->stability          = DEM_INTEGRATOR_IMPLICIT;
  ig->mpi                = PETSC_TRUE; /* several MPI ranks: ghosts refreshed every evaluation (decomp.c) */
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(integrator, "trapezoid", DemIntegratorCreate_Trapezoid)
