/*
  newmark.c - integrator `newmark`: the Newmark scheme for rigid bodies of
  000_c57329b1a40312e0.txt (Gay Neto and Wriggers) sections 2.1-2.3 and 2.6, solved in every
  step by Newton's method through PETSc SNES, with adaptive time steps (000 sections 3.5-3.6),
  the penetration test of 000 section 2.4.7 and night-owl contacts (000 section 2.6.3).

  Unknowns (000 eq. (59)): per mobile body the incremental displacement u of its centre of
  mass (the pole P = G, so 000 eq. (18) reduces to eq. (19)) and the incremental Rodrigues
  rotation alpha (000 eq. (6)); block row of 6 per body, (u, alpha). With the constants
  a1 = 1/(beta h^2), a2 = 1/(beta h), a3 = (1 - 2 beta)/(2 beta), a4 = gamma/(beta h),
  a5 = 1 - gamma/beta, a6 = (1 - gamma/(2 beta)) h of 000 eq. (21):
      acc(i+1)   = a1 u - a2 v(i) - a3 acc(i)                              eq. (20)-(21)
      v(i+1)     = a4 u + a5 v(i) + a6 acc(i)
      wdot(i+1)  = Q(alpha) [a1 alpha - a2 w(i) - a3 wdot(i)] = Q c         eq. (22)
      w(i+1)     = Q(alpha) [a4 alpha + a5 w(i) + a6 wdot(i)] = Q b
      x(i+1) = x(i) + u,  orientation q(i+1) = q(alpha) q(i)                eq. (3), (5)
  Q(alpha) the Rodrigues rotation of 000 eq. (6) (DemRodriguesToMatrix), J(i+1) = Q J(i) Q^T
  (000 eq. (15), J(i) = R(q(i)) diag(I) R(q(i))^T). Residual per body, 000 eq. (61)-(63):
      r_f  = m acc(i+1) - F(i+1)                                            eq. (19), (24)
      r_mu = Xi^T (m_t(i+1) - M(i+1))                                       eq. (17), (24)
  F, M: every force and moment at the state of i+1 (contacts, gravity (000 eq. (25): with the
  pole at G the weight has no pseudo-moment), loads, fields; DemForcesCompute), Xi of 000
  eq. (9) with alpha. The inertial moment m_t(i+1) is the discrete balance of angular
  momentum L = J w written the way Newmark's eq. (20) balances linear momentum,
      L(i+1) - L(i) = h [(1 - gamma) M(i) + gamma M(i+1)],  L(i+1) = J(i+1) w(i+1) = Q J(i) b,
      m_t(i+1) = (Q J(i) b - J(i) w(i)) / (gamma h) - (1 - gamma)/gamma M(i),
  (M(i): the moments of the accepted step i, tm[]). For translation this is the same equation
  as m acc(i+1) = F(i+1); for rotation it is not: the pointwise form of eq. (19),
  m_t = w x J w + J wdot = Q (b x J(i) b + J(i) c), leaves a torque-free body an error
  L(i+1) - L(i) = (Q - I) J(i) b - h [(1 - gamma) w(i) x J(i) w(i) + gamma b x J(i) b] of
  O(h^3) per step. For beta 1/4, gamma 1/2 (alpha = h (w(i) + b)/2): conservation needs
  J(i)(b - w(i)) + (h/4)(w(i) + b) x J(i)(w(i) + b) = 0 (Cayley form of Q), eq. (19) solves
  J(i)(b - w(i)) + (h/2)(w(i) x J(i) w(i) + b x J(i) b) = 0; they differ by
  (h/4)(b - w(i)) x J(i)(b - w(i))). 000 section 2.2 says that eq. (22) circumvents Newmark's
  lack of momentum conservation; with eq. (22)'s kinematics the momentum balance must be this
  discrete one (Simo and Wong's momentum-conserving Newmark for rigid bodies) for the spatial
  angular momentum of a torque-free body to be conserved exactly (to the SNES tolerance).
  wdot(i+1), which enters only the next predictor and eq. (22) of the next step, is taken from
  the equation of motion at the accepted state, J(i+1) wdot = M(i+1) - w x J(i+1) w: the
  pointwise eq. (19) makes eq. (22)'s kinematic Q c equal to it, but under the discrete balance
  Q c - J^-1 M carries a mode that gamma = 1/2 leaves undamped (e(i+1) = -e(i)), which rocked
  resting piles step by step (see the accept block).
  Jacobian (consistent linearization, 000 section 2.6.2, written by hand): per body
      d r_f / d u        = m a1 I
      d r_mu / d alpha   = d(Xi^T)/d alpha [m_t - M]
                           + Xi^T (a1 Q J(i) - [Q J(i) b]x Xi / (gamma h))   (a4/(gamma h) = a1)
  with d(Xi y)/d alpha = -(s^2/2)(y + alpha x y/2) alpha^T - (s/2)[y]x, s = 4/(4 + alpha.alpha),
  and per contact the 12x12 stiffness K = -dF/dq and damping C = -dF/dv blocks, mapped to
  the unknowns: a spatial rotation variation is dtheta = Xi dalpha (000 eq. (8)), the
  velocities vary as dv = a4 du and dw = (a4 Q - [w]x Xi) dalpha, and the moment rows are
  multiplied by Xi^T:
      J_ab += T_a (K_ab P_b + C_ab V_b),  T = diag(I, Xi^T), P = diag(I, Xi),
                                          V = diag(a4 I, a4 Q - [w]x Xi)
  With G = [I, -[ra]x, -I, [rb]x] (relative displacement of the contact point) and the law's
  own tangent dF/dgap, dF/dvrel at the evaluation (DemNmLawTangent: central differences of
  the law, any law, built-in or plugin; the gap column from the law's dfn_dgap where the two
  agree to 1e-7, which keeps a linear law's tangent exact):
      K = -G^T (dF/dgap) n^T G + K_geo,   C = -G^T (dF/dvrel) G
  K_geo the turn of the normal between two spheres from jacobian.c
  (DemForcesJacobianBlock_Private with its law part taken out). The law tangent holds what
  the laws' dfn_dgap, cn, kt columns do not: the overlap dependence of a Hertzian dashpot
  cn ~ delta^(1/4) and of kt ~ delta^(1/2), and a sliding contact's Coulomb force mu fn t
  (its growth with fn and its turn with vt); the tangential spring grows by vt h (the laws
  see the step h), so it acts through the velocity. Without it, Newton stalled on stiff
  frictional Hertz piles at 50x the explicit critical dt (tests/cases/val_newmark_pile.sh).
  Not linearized (they cost Newton iterations, not accuracy): the loads' moment arms, field
  forces, the turn of the normal in the dashpot's vn and of the stored spring into the new
  tangent plane (jacobian.c). Assembled in a MATBAIJ of block size 6 preallocated from
  the neighbour list (DemJacobianCreate_Private), rebuilt with the list.
  Solver: PETSc SNES (prefix none: every -snes_*, -ksp_*, -pc_* option is honoured, e.g.
  -snes_monitor, -snes_test_jacobian, -snes_rtol); defaults newtonls with the line search
  DemNmLineSearch, KSP GMRES preconditioned on the right (its residual norm is the true one,
  in force units) by ILU(0) on the Jacobian's block pattern (DemNmJacobianPattern: the pairs
  that may touch in the step, or with `jacobian_pattern: list` every pair of the neighbour list),
  -ksp_rtol 1e-10 and -ksp_atol 1e-2 of the SNES's absolute tolerance, SNES rtol 1e-8, max_it
  from max_iterations, and an absolute tolerance of 1e-12 r_min times the inertial force scale
  m_min / (beta h^2) (a residual that moves no body by more than ~1e-12 of the smallest
  radius). The KSP's absolute tolerance: ILU(0) without pivoting between blocks is far from
  exact on these matrices (condition ~1e5-1e6: contact stiffness against inertia, alpha
  columns 1/r smaller than u columns), GMRES stagnates near 1e-6 of a small right-hand side,
  and a relative 1e-10 alone made it break down (DIVERGED_LINEAR_SOLVE) on residuals of
  1e-11 N, 10x the SNES tolerance, in the settled stiff pile: 18 cut steps and a final dt of
  37.5 dt_c in tests/validate/val_newmark_pile.sh; a linear residual below 1e-2 of the
  nonlinear tolerance is solved. The moment rows are divided by the body's
  bounding radius, so that the residual's norm weighs forces and moments alike. Predictor: acc(i+1) = acc(i)
  (u = h v + h^2/2 acc, alpha = h w + h^2/2 wdot).

  After convergence:
    penetration test (000 section 2.4.7): every contact present at i and at i+1 (same body
      pair and feature) must have n(i) . n(i+1) >= 0, and (for the penalty laws, whose
      converged step may also be a spurious solution with a deep overlap) no overlap may
      grow in the step by more than max_overlap of the smaller particle radius (a contact
      new in the step by its whole overlap); otherwise the step is rejected. The overlap
      itself is not limited: soft contacts at rest or in an impact may overlap deeply;
    night owls (000 section 2.6.3): the neighbour list was (re)built at the step's start so
      that it holds for the expected displacement h |v| + h^2/2 |acc| of the fastest body
      (its bounding volumes inflated by that much within the skin); if a converged body moved
      further than the list can vouch for (half the skin since the build), the search runs
      again at the new positions, and a contact that the Newton solve did not see is a night
      owl: the step is solved again with it (warm start from the converged increments).
      thermo.csv column `night_owls` counts them (cumulative).
  Step control (adapt): a step whose SNES solve diverges (any negative SNESConvergedReason, a
  stall (DemNmConverged) or a non-finite residual), that converged to a spurious root with a
  body turned by more than 1 rad (Rodrigues |alpha| > 1: the pseudo-moment residual stays
  bounded as |alpha| grows) or that fails the penetration test is rejected and retried with
  dt/2 (DemStepInfo accepted = false; thermo.csv `rejected`), and every cut is logged with its
  reason (a line on stdout unless --quiet; thermo.csv columns `dt_cuts_snes`,
  `dt_cuts_penetration`); after `grow_after` consecutive steps of at most `easy_iterations`
  Newton iterations dt grows by `grow`, within [dt_min, dt_max]. A cut below dt_min stops the
  run with a diagnosis (guard.c). `iterations` in thermo.csv: Newton iterations of the step
  (with its night-owl re-solves); `newton_total`: cumulative.

  History: Newton evaluations do not commit; after acceptance one evaluation at the new state
  with commit stores the springs and gives the store's forces. Energy: `dissipated` gets the
  dashpots' work over the step's displacement, -(F_d(i) + F_d(i+1))/2 . (u, theta(alpha)),
  plus the friction return mappings' eslip (see the accept block); Newmark's own numerical
  dissipation (gamma > 1/2) and its energy term (beta - 1/4) h^2 |F|^2 / (2 m) show in e_balance.
  Contacts that open inside a step: DemNmRelease (their force at i weighted by the part of the
  step before the opening; without it newmark gained energy in every unresolved impact).

  MPI (newmark_mpi.c, src/core/decomp.c): the unknowns are the owned mobile bodies, renumbered
  after every rebuild (global rows rank after rank); the Jacobian is a MATMPIBAIJ whose blocks
  of a contact with a ghost go to the ghost's owner (MatSetValuesBlockedLocal through the
  body -> global row mapping); every evaluation first forwards the owners' trial state to the
  ghosts (DemNmTrialState); acc, wdot and M at i travel with their body in a per-body field;
  the step's decisions (reach, rotation and penetration tests, night owls) are reductions, the
  contacts at i are gathered on every rank; PC block Jacobi (ILU(0) per rank) instead of ILU(0)
  (tests/cases/mpi_newmark.sh).

  Keys: type, dt, dt_fraction, petsc_options, and
    beta [0.3] in (0, 0.5], gamma [0.5] in [0.5, 1]  (000 section 2.2; 2 beta >= gamma >= 1/2)
    adapt [true], dt_min [1e-9 dt], dt_max [dt], grow [1.5] > 1, grow_after [3] >= 1,
    easy_iterations [3] >= 1, max_iterations [50] >= 1 (SNES iterations per solve),
    max_overlap [0.05] > 0 (fraction of the smaller radius; an overlap growing more in one
      step rejects it)
    stall_iterations [6] 0 or >= 3: with adapt, a solve whose |R| stopped falling (DemNmConverged)
      is cut from this iteration on (0: only after max_iterations)
    active_set [false]: contacts sticking at i are held sticking during the solve (friction.h
      DemFrictionSpringMode_Private, hertz_mindlin); one whose trial force leaves the Coulomb
      cone at the solution is released to the law's own switching and the step solved again
      (DemNmActiveSetCheck); the accepted state is evaluated with the law's own switching
    freeze_cycles [true]: a contact whose stick/slip state flips back, or whose sliding
      direction reverses, between the Newton iterates of a solve is held sticking and the solve
      restarts from the iterate (at most 4 times per step); after convergence a held contact
      outside its Coulomb cone is released and the step solved again, and the solution is
      verified with the laws' own switching (DemNmFreezeWatch, DemNmFreezeVerify; thermo.csv
      freeze_held, freeze_released, freeze_law_ratio); false: the solver of before
    jacobian_pattern [near]: the Jacobian's block pattern, so ILU(0)'s (DemNmJacobianPattern):
      near, made at each step, the pairs that may touch in it (gap below 0.01 (r_a + r_b) plus
      twice the two bodies' expected displacements; a pair outside it that touches is added);
      list, made at each build of the neighbour list, every pair of the list (the solver of
      before). On several ranks always list
    onset_transform [true]: an opening Newton step of a closed contact whose normal force is
      concave in the overlap (the Hertzian dashpot at a first contact) is taken in the variable
      overlap^p, p the law's local exponent (DemNmOnsetExponent, DemNmOnsetScale);
      false: the solver of before
    coulomb_secant [false], onset_secant [false]: the Jacobian of contacts that cycle between
      the Newton iterates of a step (DemNmCycleWatch): a sliding direction that reversed gets
      the Coulomb secant (DemNmSlipSecant), a contact seen open and closed the onset secant
      (F(gap) - F(0)) / gap where it is stiffer than the tangent; the residual is unchanged,
      but Newton may reach another of its roots (tests/cases/newmark_secant.sh; off by
      default, see DemNmCycleWatch)
*/
#include "demimpl.h"
#include "newmark_mpi.h" /* several MPI ranks (newmark_mpi.c) */
#include <petscsnes.h>

#define DEMINTEGRATORNEWMARK "newmark"
#define DEM_NM_REL           19 /* reals per contact of DemNmReleaseRecord */

typedef struct {
  /* configuration */
  PetscReal beta, gamma, dtmin, dtmax, grow, max_overlap;
  PetscBool adapt, dtmax_set, dtmin_set;
  PetscInt  easy_its, grow_after, max_it, stall_its;
  /* solver */
  DemSim    sim;
  SNES      snes;
  Mat       J;
  Vec       X, R, Xlast;
  PetscInt *row, nrows, nb, cap, nlbuild;
  PetscInt  pattern, patstep; /* jacobian_pattern: 0 near (made at each step), 1 list (at each list build); the step of the last near one */
  DemNmMPI  mpi; /* several MPI ranks (newmark_mpi.c); NULL on one */
  PetscInt  nglobal, mpibuild; /* MPI: unknowns over the ranks, the list build of the numbering */
  PetscBool atol_user, katol_user, lastvalid, stalled;
  PetscReal *fh; /* [max_it + 1] |R| of the solve's iterations (DemNmConverged) */
  /* the step: h, Newmark constants, state at i */
  PetscReal h, a1, a2, a3, a4, a5, a6, tn;
  PetscReal *acc, *wacc;      /* [3 nb] acceleration and angular acceleration at i (world) */
  PetscReal *tm;              /* [3 nb] moment M(i) on each body at i (world) */
  PetscBool  accvalid;
  PetscReal *Ji;              /* [9 nb] world inertia at i */
  /* trial state and per-body quantities of the last evaluation */
  PetscReal *x, *v, *w, *q, *dx, *da;
  PetscReal *f, *t, *fd, *td, *fdn, *tdn;
  PetscReal *Xi, *Qd, *bb, *cc; /* [9 nb], [9 nb], [3 nb], [3 nb] */
  /* contacts present at i: keys (gid a, gid b, feature), sorted, and normals */
  PetscInt   npen, pencap;
  int64_t   *pk;  /* [3 npen] */
  PetscReal *pn;  /* [4 npen] normal and gap */
  /* contacts seen by the last Newton evaluation (night owls) */
  PetscInt   nseen, seencap;
  int64_t   *sk;  /* [3 nseen] sorted */
  int64_t   *ctmp; /* [4 ctcap] scratch of the sort */
  PetscReal *ctn;  /* [4 ctcap] */
  PetscInt   ctcap;
  /* step control and counters */
  PetscReal dt0;
  PetscInt  nok, night_owls, cuts_snes, cuts_pen, newton_total, nevals, ksp_total;
  PetscReal rmin, mmin;
  PetscReal *rs; /* [nb] 1 / radius: the moment rows of the residual are scaled to forces */
  /* the stick/slip active set (friction.h DemFrictionSpringMode_Private): per history slot */
  PetscBool    active_set;
  signed char *smode;
  PetscInt     smodecap, as_passes;
  /* the cycle freeze (DemNmFreezeWatch): per history slot the states of the last two checks */
  PetscBool      freeze, refreeze;
  unsigned char *fzs;
  PetscReal     *fzt; /* [3 fzcap] the sliding direction at the last check */
  PetscInt      *fzseen, fzcheck; /* [fzcap] the check that last saw the slot in the contact list */
  PetscInt       fzcap, fzbuild, fz_restarts, fz_pending, fz_frozen, fz_released;
  PetscReal      fz_rlaw; /* the largest |R| of the laws' own switching at a verified solution over the solve's */
  /* the laws' tangent by differences (DemNmLawTangent): scratch of ltcap contacts */
  PetscInt   ltcap;
  PetscReal *lgap, *lv, *lfn, *lft, *ldfn, *lcn, *lkt, *len, *ldis, *lfd, *les, *leg, *lev, *ltg, *ltv, *lfn2, *lft2;
  int       *lslip;
  /* the Coulomb secant of sliding contacts (DemNmSlipSecant): stick imposed per history slot */
  PetscBool    secant, onset;
  unsigned char *cw;   /* [cwcap] per history slot, DemNmCycleWatch: what the step's Jacobians saw */
  PetscReal     *cwt;  /* [3 cwcap] the sliding direction of the last Jacobian (0: sticking) */
  PetscInt       cwcap, cwbuild, ncw;
  PetscReal   *lsg; /* [3 ltcap] the onset secant (F(gap) - F(0)) / gap of closed contacts */
  /* the onset transform (DemNmOnsetScale): per contact of the last Jacobian the local exponent
     p of its normal force in the overlap (0: not concave), per body the step's scale */
  PetscBool  onset_tf;
  PetscReal *onp, *onl, *ony; /* [oncap], [onlcap], [6 onlcap] */
  PetscInt   oncap, onlcap, oneval;
  signed char *stick;
  PetscInt     stickcap;
  /* the contacts closed at i and their forces there (DemNmRelease; one rank): bodies, and
     gap, normal, arms, elastic and dashpot force on a (16 reals) per contact */
  PetscInt   nrel, relcap, relbuild, gmcap;
  PetscInt  *rab;  /* [2 nrel] local indices of the bodies (DemNmReleaseMap; -1: not here) */
  PetscReal *rel;  /* [DEM_NM_REL nrel] key (gid a < gid b, feature; 3 int64 stored bitwise) and 16 reals */
  int64_t   *gm;   /* [2 gmcap] (gid, local index) of the owned and ghost bodies, sorted */
  PetscMPIInt *relcnt, *reloff; /* [size], [size + 1] DemNmReleaseRecord's gather on several ranks */
  PetscReal   *relall;          /* [relallcap] its receive buffer, kept between steps */
  PetscInt     relallcap;
  PetscReal *accE, *waccE, *tmE, *fdE, *tdE; /* [3 nb] acc, wdot, M, dashpot force and torque at i
                                               with the release weights of the trial state */
  PetscReal *rdl;  /* [12 nb] scratch of DemNmRelease */
} DemIntegrator_Newmark;

static const char *const DemNewmarkThermoNames[] = {"night_owls", "dt_cuts_snes", "dt_cuts_penetration", "newton_total", "ksp_total", "freeze_held", "freeze_released", "freeze_law_ratio", NULL};

static PetscErrorCode DemIntegratorSetFromConfig_Newmark(DemIntegrator ig, DemNode cfg)
{
  DemIntegrator_Newmark *nm    = (DemIntegrator_Newmark *)ig->data;
  const char *const      own[] = {"beta", "gamma", "adapt", "dt_min", "dt_max", "grow", "grow_after", "easy_iterations", "max_iterations", "max_overlap", "active_set", "coulomb_secant", "onset_secant", "stall_iterations", "freeze_cycles", "onset_transform", "jacobian_pattern", NULL};
  DemNode                kn;

  PetscFunctionBegin;
  if (!cfg) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemIntegratorAllowKeys_Private(cfg, own));
  PetscCall(DemNodeGetReal(cfg, "beta", PETSC_FALSE, &nm->beta));
  PetscCall(DemNodeGet(cfg, "beta", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->beta > 0 && nm->beta <= 0.5, "beta must be in (0, 0.5] (000 eq. (20); 0.25 average acceleration, 0.3 the paper's choice) (got %g)", (double)nm->beta);
  PetscCall(DemNodeGetReal(cfg, "gamma", PETSC_FALSE, &nm->gamma));
  PetscCall(DemNodeGet(cfg, "gamma", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->gamma >= 0.5 && nm->gamma <= 1, "gamma must be in [0.5, 1] (000 eq. (20); 0.5: no numerical damping of first order) (got %g)", (double)nm->gamma);
  DemNodeCheck(kn ? kn : cfg, 2 * nm->beta >= nm->gamma, "Newmark needs 2 beta >= gamma for unconditional stability (got beta %g, gamma %g)", (double)nm->beta, (double)nm->gamma);
  PetscCall(DemNodeGetBool(cfg, "adapt", PETSC_FALSE, &nm->adapt));
  PetscCall(DemNodeGet(cfg, "dt_min", &kn));
  if (kn) {
    PetscCall(DemNodeGetReal(cfg, "dt_min", PETSC_TRUE, &nm->dtmin));
    DemNodeCheck(kn, nm->dtmin > 0, "dt_min must be > 0 s (got %g)", (double)nm->dtmin);
    nm->dtmin_set = PETSC_TRUE;
  }
  PetscCall(DemNodeGet(cfg, "dt_max", &kn));
  if (kn) {
    PetscCall(DemNodeGetReal(cfg, "dt_max", PETSC_TRUE, &nm->dtmax));
    DemNodeCheck(kn, nm->dtmax > 0, "dt_max must be > 0 s (got %g)", (double)nm->dtmax);
    DemNodeCheck(kn, !nm->dtmin_set || nm->dtmax >= nm->dtmin, "dt_max (%g s) must be >= dt_min (%g s)", (double)nm->dtmax, (double)nm->dtmin);
    nm->dtmax_set = PETSC_TRUE;
  }
  PetscCall(DemNodeGetReal(cfg, "grow", PETSC_FALSE, &nm->grow));
  PetscCall(DemNodeGet(cfg, "grow", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->grow > 1 && nm->grow <= 10, "grow must be in (1, 10] (got %g)", (double)nm->grow);
  PetscCall(DemNodeGetInt(cfg, "grow_after", PETSC_FALSE, &nm->grow_after));
  PetscCall(DemNodeGet(cfg, "grow_after", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->grow_after >= 1, "grow_after must be >= 1 (got %" PetscInt_FMT ")", nm->grow_after);
  PetscCall(DemNodeGetInt(cfg, "easy_iterations", PETSC_FALSE, &nm->easy_its));
  PetscCall(DemNodeGet(cfg, "easy_iterations", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->easy_its >= 1, "easy_iterations must be >= 1 (got %" PetscInt_FMT ")", nm->easy_its);
  PetscCall(DemNodeGetBool(cfg, "active_set", PETSC_FALSE, &nm->active_set));
  PetscCall(DemNodeGetBool(cfg, "freeze_cycles", PETSC_FALSE, &nm->freeze));
  PetscCall(DemNodeGetBool(cfg, "onset_transform", PETSC_FALSE, &nm->onset_tf));
  {
    const char *const pat[] = {"near", "list", NULL};
    PetscCall(DemNodeGetChoice(cfg, "jacobian_pattern", pat, PETSC_FALSE, &nm->pattern));
  }
  PetscCall(DemNodeGetBool(cfg, "coulomb_secant", PETSC_FALSE, &nm->secant));
  PetscCall(DemNodeGetBool(cfg, "onset_secant", PETSC_FALSE, &nm->onset));
  PetscCall(DemNodeGetReal(cfg, "max_overlap", PETSC_FALSE, &nm->max_overlap));
  PetscCall(DemNodeGet(cfg, "max_overlap", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->max_overlap > 0, "max_overlap must be > 0 (a fraction of the smaller radius) (got %g)", (double)nm->max_overlap);
  PetscCall(DemNodeGetInt(cfg, "max_iterations", PETSC_FALSE, &nm->max_it));
  PetscCall(DemNodeGet(cfg, "max_iterations", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->max_it >= 1, "max_iterations must be >= 1 (got %" PetscInt_FMT ")", nm->max_it);
  PetscCall(DemNodeGetInt(cfg, "stall_iterations", PETSC_FALSE, &nm->stall_its));
  PetscCall(DemNodeGet(cfg, "stall_iterations", &kn));
  DemNodeCheck(kn ? kn : cfg, nm->stall_its == 0 || nm->stall_its >= 3, "stall_iterations must be 0 (never) or >= 3 (got %" PetscInt_FMT ")", nm->stall_its);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorThermo_Newmark(DemIntegrator ig, PetscReal val[])
{
  DemIntegrator_Newmark *nm = (DemIntegrator_Newmark *)ig->data;

  PetscFunctionBegin;
  val[0] = (PetscReal)nm->night_owls;
  val[1] = (PetscReal)nm->cuts_snes;
  val[2] = (PetscReal)nm->cuts_pen;
  val[3] = (PetscReal)nm->newton_total;
  val[4] = (PetscReal)nm->ksp_total;
  val[5] = (PetscReal)nm->fz_frozen; /* the cycle freeze (DemNmFreezeWatch; since the run's start or restart) */
  val[6] = (PetscReal)nm->fz_released;
  val[7] = nm->fz_rlaw;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the state between steps the store does not hold (checkpoint.c): the configured dt, the
   step-control counters, the accelerations at i and the normals of the contacts at i */
static PetscErrorCode DemNmReleaseReserve(DemIntegrator_Newmark *, PetscInt);
static PetscErrorCode DemNmReleaseMap(DemIntegrator_Newmark *);

static PetscErrorCode DemIntegratorCheckpoint_Newmark(DemIntegrator ig, FILE *fp, PetscBool write)
{
  DemIntegrator_Newmark *nm      = (DemIntegrator_Newmark *)ig->data;
  PetscInt               version = 5, nb = nm->nb, acc = nm->accvalid ? 1 : 0, nrel = nm->nrel;
  PetscInt               cnt[7]  = {nm->nok, nm->night_owls, nm->cuts_snes, nm->cuts_pen, nm->newton_total, nm->npen, nm->ksp_total};
  PetscReal             *fl = nm->mpi ? DemNmMPIStoreField_Private(&nm->sim->bodies) : NULL; /* MPI: the store (written: gathered on rank 0, decomp.c) carries the accelerations */
  const PetscInt         nbs = fl ? nm->sim->bodies.n + nm->sim->bodies.nghost : nm->nb;

  PetscFunctionBegin;
  if (fl) nb = nbs;
  PetscCall(DemCheckpointIO(fp, write, &version, sizeof(version), "newmark checkpoint version"));
  PetscCheck(version >= 2 && version <= 5, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "integrator newmark: checkpoint version %" PetscInt_FMT ", this build reads versions 2 to 5", version);
  PetscCall(DemCheckpointIO(fp, write, &nm->dt0, sizeof(nm->dt0), "newmark configured dt"));
  /* version 3: the KSP iteration counter after the six of version 2 */
  PetscCall(DemCheckpointIO(fp, write, cnt, (version == 2 ? 6 : 7) * sizeof(PetscInt), "newmark counters"));
  if (version == 2) cnt[6] = 0;
  PetscCall(DemCheckpointIO(fp, write, &nb, sizeof(nb), "newmark body count"));
  PetscCheck(nb == nbs, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "integrator newmark: checkpoint for %" PetscInt_FMT " bodies, the run has %" PetscInt_FMT, nb, nbs);
  PetscCall(DemCheckpointIO(fp, write, &acc, sizeof(acc), "newmark acceleration flag"));
  if (acc && fl && write) { /* MPI: from the field of the gathered store, the serial layout */
    for (int o = 0; o < 2; o++)
      for (PetscInt i = 0; i < nb; i++) PetscCall(DemCheckpointIO(fp, write, fl + DEM_NM_FIELD * i + (o ? DEM_NM_WACC : DEM_NM_ACC), 3 * sizeof(PetscReal), o ? "newmark angular accelerations" : "newmark accelerations"));
  } else if (acc) {
    PetscCall(DemCheckpointIO(fp, write, nm->acc, 3 * (size_t)nb * sizeof(PetscReal), "newmark accelerations"));
    PetscCall(DemCheckpointIO(fp, write, nm->wacc, 3 * (size_t)nb * sizeof(PetscReal), "newmark angular accelerations"));
  }
  if (!write) {
    nm->nok = cnt[0], nm->night_owls = cnt[1], nm->cuts_snes = cnt[2], nm->cuts_pen = cnt[3], nm->newton_total = cnt[4], nm->ksp_total = cnt[6];
    nm->accvalid = acc ? PETSC_TRUE : PETSC_FALSE;
    /* the moments at i: the store's torques, written by the accepted step's evaluation */
    PetscCall(PetscArraycpy(nm->tm, nm->sim->bodies.t, 3 * nb));
    if (fl) /* MPI: every rank holds every body until the distribution (decomp.c): the field carries them */
      for (PetscInt i = 0; i < nb; i++)
        for (int k = 0; k < 3; k++) fl[DEM_NM_FIELD * i + DEM_NM_ACC + k] = nm->acc[3 * i + k], fl[DEM_NM_FIELD * i + DEM_NM_WACC + k] = nm->wacc[3 * i + k], fl[DEM_NM_FIELD * i + DEM_NM_TM + k] = nm->tm[3 * i + k];
    PetscCheck(cnt[5] >= 0 && cnt[5] < (PetscInt)1 << 28, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "integrator newmark: checkpoint with %" PetscInt_FMT " contact normals", cnt[5]);
    if (cnt[5] > nm->pencap) {
      PetscCall(PetscFree2(nm->pk, nm->pn));
      nm->pencap = cnt[5];
      PetscCall(PetscMalloc2(3 * nm->pencap + 3, &nm->pk, 4 * nm->pencap + 4, &nm->pn));
    }
    nm->npen = cnt[5];
  }
  if (nm->npen) {
    PetscCall(DemCheckpointIO(fp, write, nm->pk, 3 * (size_t)nm->npen * sizeof(int64_t), "newmark contact keys"));
    PetscCall(DemCheckpointIO(fp, write, nm->pn, 4 * (size_t)nm->npen * sizeof(PetscReal), "newmark contact normals and gaps"));
  }
  /* version 4: the contacts closed at i for the release weights (DemNmRelease), keyed by gids */
  if (version >= 4) PetscCall(DemCheckpointIO(fp, write, &nrel, sizeof(nrel), "newmark closed contacts"));
  else nrel = 0;
  if (!write) {
    PetscCheck(nrel >= 0 && nrel < (PetscInt)1 << 28, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "integrator newmark: checkpoint with %" PetscInt_FMT " closed contacts", nrel);
    PetscCall(DemNmReleaseReserve(nm, nrel));
    nm->nrel     = nrel;
    nm->relbuild = -1; /* the bodies' local indices anew (DemNmReleaseMap) */
  }
  if (nrel) PetscCall(DemCheckpointIO(fp, write, nm->rel, DEM_NM_REL * (size_t)nrel * sizeof(PetscReal), "newmark closed contacts"));
  /* version 5: the cycle freeze's counters (thermo.csv freeze_held, freeze_released, freeze_law_ratio) */
  if (version >= 5) {
    PetscInt fc[2] = {nm->fz_frozen, nm->fz_released};
    PetscCall(DemCheckpointIO(fp, write, fc, sizeof(fc), "newmark freeze counters"));
    PetscCall(DemCheckpointIO(fp, write, &nm->fz_rlaw, sizeof(nm->fz_rlaw), "newmark freeze law ratio"));
    if (!write) nm->fz_frozen = fc[0], nm->fz_released = fc[1];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* R(q) diag(d) R(q)^T, row-major */
static void DemNmWorldInertia(const PetscReal q[4], const PetscReal d[3], PetscReal J[9])
{
  PetscReal R[9];
  DemQuatToMatrix(q, R);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) J[3 * i + j] = R[3 * i] * d[0] * R[3 * j] + R[3 * i + 1] * d[1] * R[3 * j + 1] + R[3 * i + 2] * d[2] * R[3 * j + 2];
}

static inline void DemNmMatVec(const PetscReal A[9], const PetscReal x[3], PetscReal y[3])
{
  for (int i = 0; i < 3; i++) y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}

static inline void DemNmMatTVec(const PetscReal A[9], const PetscReal x[3], PetscReal y[3])
{
  for (int i = 0; i < 3; i++) y[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
}

static inline void DemNmCross(const PetscReal a[3], const PetscReal b[3], PetscReal c[3])
{
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* C = A B (3x3, row-major) */
static inline void DemNmMatMat(const PetscReal A[9], const PetscReal B[9], PetscReal C[9])
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* d(Xi(alpha) y)/d alpha for a fixed y (see the file comment) */
static void DemNmDXi(const PetscReal al[3], const PetscReal y[3], PetscReal D[9])
{
  const PetscReal s = 4.0 / (4.0 + al[0] * al[0] + al[1] * al[1] + al[2] * al[2]);
  PetscReal       ay[3], z[3], Y[9];
  DemNmCross(al, y, ay);
  for (int k = 0; k < 3; k++) z[k] = y[k] + 0.5 * ay[k];
  DemSkew(y, Y);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) D[3 * i + j] = -0.5 * s * s * z[i] * al[j] - 0.5 * s * Y[3 * i + j];
}

static PetscErrorCode DemNmReserve(DemIntegrator_Newmark *nm, PetscInt nb)
{
  PetscFunctionBegin;
  if (nb <= nm->cap) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree6(nm->x, nm->v, nm->w, nm->q, nm->dx, nm->da));
  PetscCall(PetscFree6(nm->f, nm->t, nm->fd, nm->td, nm->fdn, nm->tdn));
  PetscCall(PetscFree5(nm->Xi, nm->Qd, nm->bb, nm->cc, nm->Ji));
  PetscCall(PetscFree5(nm->accE, nm->waccE, nm->tmE, nm->fdE, nm->tdE));
  PetscCall(PetscFree(nm->rdl));
  PetscCall(PetscMalloc5(3 * nb, &nm->accE, 3 * nb, &nm->waccE, 3 * nb, &nm->tmE, 3 * nb, &nm->fdE, 3 * nb, &nm->tdE));
  PetscCall(PetscMalloc1(12 * nb, &nm->rdl));
  PetscCall(PetscMalloc6(3 * nb, &nm->x, 3 * nb, &nm->v, 3 * nb, &nm->w, 4 * nb, &nm->q, 3 * nb, &nm->dx, 3 * nb, &nm->da));
  PetscCall(PetscMalloc6(3 * nb, &nm->f, 3 * nb, &nm->t, 3 * nb, &nm->fd, 3 * nb, &nm->td, 3 * nb, &nm->fdn, 3 * nb, &nm->tdn));
  PetscCall(PetscMalloc5(9 * nb, &nm->Xi, 9 * nb, &nm->Qd, 3 * nb, &nm->bb, 3 * nb, &nm->cc, 9 * nb, &nm->Ji));
  nm->cap = nb;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmRelease - the release weights of the contacts closed at i, at the trial increments.
  Newmark (000 eq. (20)) applies each force as if it varied linearly over the step: the force
  of i enters the step through acc(i), wdot(i) and M(i) with the weights (1 - gamma) h
  (velocity) and (1/2 - beta) h^2 (position). A contact that opens inside the step (gap
  g0 < 0 at i, g1 > 0 at i + 1) pushes, however, only until it opens, at about the fraction
  s = -g0 / (g1 - g0) of the step (the gap linear in time). Its elastic force S(i) falls to
  zero there: Newmark credits it with the work (S(i) / 2) (g1 - g0) instead of the energy
  S(i) (-g0) / 2 it stored (a linear spring), (1 - s) / s times too much. In a step longer
  than the contact time (an impact that closes at the end of one step and opens in the next)
  the carried impulse (1 - gamma) h F(i) is the larger part: a sphere that hits a rigid floor
  at speed V stops at the step's end, u = 0, acc(i+1) = V / (beta h); it leaves that step at
  V (gamma / beta - 1) and, with the carry, the next one at V (1 - beta) / beta = 2.33 V for
  beta 0.3 (5.4 times its kinetic energy). The dashpot part D(i) of the force, carried over a
  step much longer than the damping time m / c, reverses the velocity it should stop: an
  impulse (1 - gamma) h D(i) of ~ c h / m times m v (a sphere at dt = 28 tc then left the
  floor's step at -0.97 V, tests/cases/newmark_energy.sh).
  Here the contact's elastic force at i (its force less the dashpot part fdamp) is weighted by
  s and its dashpot force by min(1, s / (1 - gamma)) in acc(i), M(i) and so wdot(i) (and in
  the dashpot bookkeeping): the elastic impulse is then about s h S(i) / 2 and its work the
  stored S(i) (-g0) / 2, the dashpot's impulse about s h D(i) (a dashpot that acts until the
  contact opens; law hooke's does not vanish there: weighting it by s as the elastic part
  moved the restitution at dt = tc/40 by 1.5 %). g1 is the gap of i linearized in the
  increments, g0 + n . (d_a - d_b), d = u + (Q(alpha) - I) r at the contact point (the contact
  list at i + 1 holds no open pairs); the weights are continuous in the increments (1 while
  the contact stays closed): a contact that stays closed, or a step that ends where it opens,
  is plain Newmark. Their derivatives are in the Jacobian (DemNmReleaseJacobian). The list of
  contacts at i (DemNmReleaseRecord) is keyed by the bodies' gids and, on several ranks,
  gathered on every rank (as the penetration test's); a contact is weighted on the rank that
  owns its first particle (DemNmReleaseHere), the ghost's share sent to its owner.
  Out: accE, waccE, tmE, fdE, tdE: acc, wdot, M and the dashpot force and torque at i (fdn,
  tdn) with the weights applied.
*/

/* the linearized gap g1 of closed contact r at the trial increments and the reductions
   wS = 1 - s, wD = 1 - min(1, s / (1 - gamma)) of its elastic and dashpot forces with their
   derivatives by g1 (all 0 while g1 <= 0) */
static PetscReal DemNmReleaseWeights(const DemIntegrator_Newmark *nm, PetscInt r, PetscReal *wS, PetscReal *wD, PetscReal *dS, PetscReal *dD)
{
  const PetscReal *o = nm->rel + DEM_NM_REL * r + 3, g0 = o[0], *n = o + 1;
  PetscReal        g1 = g0, s;
  for (int e = 0; e < 2; e++) {
    const PetscInt   i   = nm->rab[2 * r + e];
    const PetscReal *arm = o + 4 + 3 * e, *Q = nm->Qd + 9 * i, *u = nm->dx + 3 * i;
    PetscReal        Qr[3];
    DemNmMatVec(Q, arm, Qr);
    for (int k = 0; k < 3; k++) g1 += (e ? -1 : 1) * n[k] * (u[k] + Qr[k] - arm[k]);
  }
  *wS = *wD = *dS = *dD = 0;
  if (!(g1 > 0)) return g1;
  s   = -g0 / (g1 - g0);
  *wS = 1 - s;
  *dS = -g0 / ((g1 - g0) * (g1 - g0));
  if (s < 1 - nm->gamma) {
    *wD = 1 - s / (1 - nm->gamma);
    *dD = *dS / (1 - nm->gamma);
  }
  return g1;
}

/* whether this rank weights contact r: the owner of its first body that is not a wall (the
   other body is then here too, as a ghost: the contact was closed at i); on one rank, always */
static inline PetscBool DemNmReleaseHere(const DemIntegrator_Newmark *nm, PetscInt r)
{
  const DemBodyStore *bs = &nm->sim->bodies;
  const PetscInt      a = nm->rab[2 * r], b = nm->rab[2 * r + 1];
  if (a < 0 || b < 0) return PETSC_FALSE;
  return ((bs->flags[a] & DEM_WALL) ? b : a) < bs->n ? PETSC_TRUE : PETSC_FALSE;
}

static PetscErrorCode DemNmRelease(DemIntegrator_Newmark *nm)
{
  DemSim              sim = nm->sim;
  const DemBodyStore *bs  = &sim->bodies;
  const PetscInt      nb  = nm->nb;
  PetscReal          *d   = nm->rdl; /* per body: force, moment, dashpot force, dashpot moment removed */

  PetscFunctionBegin;
  PetscCall(DemNmReleaseMap(nm));
  PetscCall(PetscArraycpy(nm->accE, nm->acc, 3 * nb));
  PetscCall(PetscArraycpy(nm->waccE, nm->wacc, 3 * nb));
  PetscCall(PetscArraycpy(nm->tmE, nm->tm, 3 * nb));
  PetscCall(PetscArraycpy(nm->fdE, nm->fdn, 3 * nb));
  PetscCall(PetscArraycpy(nm->tdE, nm->tdn, 3 * nb));
  if (!nm->nrel) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscArrayzero(d, 12 * nb));
  for (PetscInt r = 0; r < nm->nrel; r++) {
    const PetscReal *o = nm->rel + DEM_NM_REL * r + 3, *S = o + 10, *D = o + 13;
    PetscReal        wS, wD, dS, dD, F[3];
    if (!DemNmReleaseHere(nm, r) || !(DemNmReleaseWeights(nm, r, &wS, &wD, &dS, &dD) > 0)) continue;
    for (int k = 0; k < 3; k++) F[k] = wS * S[k] + wD * D[k];
    for (int e = 0; e < 2; e++) {
      const PetscInt  i  = nm->rab[2 * r + e];
      const PetscReal sg = e ? 1 : -1, *arm = o + 4 + 3 * e; /* the force on b is -F: its reduction + */
      PetscReal       dM[3], dT[3], *di = d + 12 * i;
      DemNmCross(arm, F, dM);
      DemNmCross(arm, D, dT);
      for (int k = 0; k < 3; k++) di[k] += sg * F[k], di[3 + k] += sg * dM[k], di[6 + k] += sg * wD * D[k], di[9 + k] += sg * wD * dT[k];
    }
  }
  if (nm->mpi) PetscCall(DemDecompReverseAddArray_Private(sim, d, 12)); /* MPI: the ghosts' share to their owners (nrel: the same on every rank) */
  for (PetscInt i = 0; i < (nm->mpi ? bs->n : nb); i++) {
    const PetscReal *di = d + 12 * i;
    PetscReal        b[3], dw[3];
    for (int k = 0; k < 3; k++) nm->fdE[3 * i + k] += di[6 + k], nm->tdE[3 * i + k] += di[9 + k];
    if (nm->row[i] < 0) continue;
    for (int k = 0; k < 3; k++) nm->accE[3 * i + k] += di[k] * bs->inv_m[i], nm->tmE[3 * i + k] += di[3 + k];
    /* wdot = J^-1 (M - w x J w): J(i)^-1 of the moment's change */
    DemQuatRotateInv(bs->q + 4 * i, di + 3, b);
    for (int k = 0; k < 3; k++) b[k] *= bs->inv_I[3 * i + k];
    DemQuatRotate(bs->q + 4 * i, b, dw);
    for (int k = 0; k < 3; k++) nm->waccE[3 * i + k] += dw[k];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline void DemNmKey(DemSim, PetscInt, int64_t[3], PetscReal *);
static int         DemNmCmpKey(const void *, const void *);

static PetscErrorCode DemNmReleaseReserve(DemIntegrator_Newmark *nm, PetscInt n)
{
  PetscFunctionBegin;
  if (n <= nm->relcap) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree2(nm->rab, nm->rel));
  nm->relcap = n + n / 8 + 16;
  PetscCall(PetscMalloc2(2 * nm->relcap, &nm->rab, DEM_NM_REL * nm->relcap, &nm->rel));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int DemNmCmpPair(const void *x, const void *y)
{
  const int64_t *a = (const int64_t *)x, *b = (const int64_t *)y;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : (a[1] > b[1]);
}

static int DemNmCmpRel(const void *x, const void *y)
{
  int64_t a[3], b[3];
  memcpy(a, x, sizeof(a));
  memcpy(b, y, sizeof(b));
  return DemNmCmpKey(a, b);
}

/* the local indices of the bodies of the contacts at i, after every build of the neighbour
   list (several ranks: bodies migrate; a ghost image of a body serves as well as another) */
static PetscErrorCode DemNmReleaseMap(DemIntegrator_Newmark *nm)
{
  DemSim              sim = nm->sim;
  const DemBodyStore *bs  = &sim->bodies;
  const PetscInt      nb  = bs->n + bs->nghost;

  PetscFunctionBegin;
  if (nm->relbuild == sim->nl.nbuilds) PetscFunctionReturn(PETSC_SUCCESS);
  if (nb > nm->gmcap) {
    PetscCall(PetscFree(nm->gm));
    nm->gmcap = nb + nb / 8 + 16;
    PetscCall(PetscMalloc1(2 * nm->gmcap, &nm->gm));
  }
  for (PetscInt i = 0; i < nb; i++) nm->gm[2 * i] = bs->gid[i], nm->gm[2 * i + 1] = i;
  if (nb > 1) qsort(nm->gm, (size_t)nb, 2 * sizeof(int64_t), DemNmCmpPair); /* by gid, then index: the owned copy first */
  for (PetscInt r = 0; r < nm->nrel; r++) {
    int64_t k[3];
    memcpy(k, nm->rel + DEM_NM_REL * r, sizeof(k));
    for (int e = 0; e < 2; e++) {
      PetscInt lo = 0, hi = nb - 1, f = -1;
      while (lo <= hi) { /* the first entry of gid k[e] */
        const PetscInt mid = (lo + hi) / 2;
        if (nm->gm[2 * mid] < k[e]) lo = mid + 1;
        else {
          if (nm->gm[2 * mid] == k[e]) f = mid;
          hi = mid - 1;
        }
      }
      nm->rab[2 * r + e] = f < 0 ? -1 : (PetscInt)nm->gm[2 * f + 1];
    }
  }
  nm->relbuild = sim->nl.nbuilds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the contacts closed at i for DemNmRelease, from the last evaluation (sim->cl, sim->cf):
   records of DEM_NM_REL reals, the key (gid a < gid b, feature) and, oriented from b to a of
   the key, gap, normal, arms r_a, r_b, elastic force on a, dashpot force on a; sorted by key,
   on several ranks every rank's, each contact once */
static PetscErrorCode DemNmReleaseRecord(DemIntegrator_Newmark *nm)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;
  PetscInt              m   = 0;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < cl->n; c++) m += cl->gap[c] < 0;
  PetscCall(DemNmReleaseReserve(nm, m));
  nm->nrel = 0;
  for (PetscInt c = 0; c < cl->n; c++) {
    PetscReal *rec = nm->rel + DEM_NM_REL * nm->nrel, *o = rec + 3, sg;
    int64_t    k[3];
    if (!(cl->gap[c] < 0)) continue;
    DemNmKey(sim, c, k, &sg);
    memcpy(rec, k, sizeof(k));
    o[0] = cl->gap[c];
    for (int j = 0; j < 3; j++) {
      const PetscReal D = sim->cf.fdamp ? sim->cf.fdamp[3 * c + j] : 0;
      o[1 + j]  = sg * cl->nrm[3 * c + j];
      o[4 + j]  = sg > 0 ? cl->ra[3 * c + j] : cl->rb[3 * c + j];
      o[7 + j]  = sg > 0 ? cl->rb[3 * c + j] : cl->ra[3 * c + j];
      o[10 + j] = sg * (sim->cf.fn[c] * cl->nrm[3 * c + j] + sim->cf.ft[3 * c + j] - D);
      o[13 + j] = sg * D;
    }
    nm->nrel++;
  }
  if (nm->mpi) { /* every rank's */
    PetscMPIInt mine = (PetscMPIInt)(DEM_NM_REL * nm->nrel), *cnt, *off;
    PetscInt    tot;
    if (!nm->relcnt) PetscCall(PetscMalloc2(sim->size, &nm->relcnt, sim->size + 1, &nm->reloff));
    cnt = nm->relcnt, off = nm->reloff;
    PetscCallMPI(MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, sim->comm));
    off[0] = 0;
    for (PetscMPIInt r = 0; r < sim->size; r++) off[r + 1] = off[r] + cnt[r];
    tot = off[sim->size] / DEM_NM_REL;
    if (DEM_NM_REL * tot + 1 > nm->relallcap) { /* grown, not allocated per step */
      PetscCall(PetscFree(nm->relall));
      nm->relallcap = DEM_NM_REL * (tot + tot / 8 + 16) + 1;
      PetscCall(PetscMalloc1(nm->relallcap, &nm->relall));
    }
    PetscCallMPI(MPI_Allgatherv(nm->rel, mine, MPIU_REAL, nm->relall, cnt, off, MPIU_REAL, sim->comm));
    PetscCall(DemNmReleaseReserve(nm, tot));
    PetscCall(PetscArraycpy(nm->rel, nm->relall, DEM_NM_REL * tot));
    nm->nrel = tot;
  }
  if (nm->nrel > 1) { /* sorted, each contact once (a contact across ranks is on both) */
    PetscInt u = 1;
    qsort(nm->rel, (size_t)nm->nrel, DEM_NM_REL * sizeof(PetscReal), DemNmCmpRel);
    for (PetscInt r = 1; r < nm->nrel; r++)
      if (DemNmCmpRel(nm->rel + DEM_NM_REL * r, nm->rel + DEM_NM_REL * (u - 1))) PetscCall(PetscArraycpy(nm->rel + DEM_NM_REL * u++, nm->rel + DEM_NM_REL * r, DEM_NM_REL));
    nm->nrel = u;
  }
  nm->relbuild = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the trial state of the increments X (u, alpha per row); also Xi, Q(alpha), b, c per body */
static PetscErrorCode DemNmTrialState(DemIntegrator_Newmark *nm, Vec X)
{
  DemSim             sim = nm->sim;
  DemBodyStore      *bs  = &sim->bodies;
  const PetscScalar *xx;
  const PetscReal    h   = nm->h;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(X, &xx));
  for (PetscInt i = 0; i < (nm->mpi ? bs->n : nm->nb); i++) { /* MPI: the owned bodies; the ghosts below */
    const PetscInt r = nm->row[i];
    PetscReal     *Xi = nm->Xi + 9 * i, *Qd = nm->Qd + 9 * i;
    if (r >= 0) {
      const PetscReal *u = xx + 6 * r, *al = xx + 6 * r + 3;
      PetscReal        s = 4.0 / (4.0 + al[0] * al[0] + al[1] * al[1] + al[2] * al[2]), dq[4]; /* velocities: below, after the release weights */
      for (int k = 0; k < 3; k++) {
        nm->dx[3 * i + k] = u[k];
        nm->da[3 * i + k] = al[k];
        nm->x[3 * i + k]  = bs->x[3 * i + k] + u[k];
      }
      DemRodriguesToMatrix(al, Qd);
      /* Xi = s (I + A/2), 000 eq. (9) */
      Xi[0] = Xi[4] = Xi[8] = s;
      Xi[1] = -0.5 * s * al[2], Xi[2] = 0.5 * s * al[1];
      Xi[3] = 0.5 * s * al[2], Xi[5] = -0.5 * s * al[0];
      Xi[6] = -0.5 * s * al[1], Xi[7] = 0.5 * s * al[0];
      DemQuatFromRodrigues(al, dq);
      DemQuatMul(dq, bs->q + 4 * i, nm->q + 4 * i);
      DemQuatNormalize(nm->q + 4 * i);
    } else {
      const PetscBool moving = (bs->flags[i] & DEM_PRESCRIBED) ? PETSC_TRUE : PETSC_FALSE;
      PetscReal       a[3];
      for (int k = 0; k < 3; k++) {
        nm->dx[3 * i + k] = moving ? h * bs->v[3 * i + k] : 0;
        a[k] = nm->da[3 * i + k] = moving ? h * bs->w[3 * i + k] : 0;
        nm->x[3 * i + k] = bs->x[3 * i + k] + nm->dx[3 * i + k];
        nm->v[3 * i + k] = bs->v[3 * i + k];
        nm->w[3 * i + k] = bs->w[3 * i + k];
      }
      for (int k = 0; k < 4; k++) nm->q[4 * i + k] = bs->q[4 * i + k];
      if (a[0] != 0 || a[1] != 0 || a[2] != 0) {
        PetscReal dq[4];
        DemQuatFromRodrigues(a, dq);
        DemQuatMul(dq, bs->q + 4 * i, nm->q + 4 * i);
        DemQuatNormalize(nm->q + 4 * i);
      }
      for (int k = 0; k < 9; k++) Xi[k] = Qd[k] = (k % 4 == 0) ? 1 : 0;
    }
  }
  PetscCall(VecRestoreArrayRead(X, &xx));
  /* MPI: the ghosts' increments for the release weights (nrel is the same on every rank) */
  if (nm->mpi && nm->nrel) PetscCall(DemNmMPIForwardTrial_Private(nm->mpi, nm->x, nm->v, nm->w, nm->q, nm->dx, nm->da, nm->Xi, nm->Qd));
  PetscCall(DemNmRelease(nm));
  for (PetscInt i = 0; i < (nm->mpi ? bs->n : nm->nb); i++) {
    const PetscReal *u = nm->dx + 3 * i, *al = nm->da + 3 * i;
    const PetscReal *vi = bs->v + 3 * i, *wi = bs->w + 3 * i, *ai = nm->accE + 3 * i, *di = nm->waccE + 3 * i;
    if (nm->row[i] < 0) continue;
    for (int k = 0; k < 3; k++) {
      nm->v[3 * i + k]  = nm->a4 * u[k] + nm->a5 * vi[k] + nm->a6 * ai[k];
      nm->bb[3 * i + k] = nm->a4 * al[k] + nm->a5 * wi[k] + nm->a6 * di[k];
      nm->cc[3 * i + k] = nm->a1 * al[k] - nm->a2 * wi[k] - nm->a3 * di[k];
    }
    DemNmMatVec(nm->Qd + 9 * i, nm->bb + 3 * i, nm->w + 3 * i);
  }
  if (nm->mpi) PetscCall(DemNmMPIForwardTrial_Private(nm->mpi, nm->x, nm->v, nm->w, nm->q, nm->dx, nm->da, nm->Xi, nm->Qd)); /* MPI: the ghosts' trial state from their owners */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* forces at the trial state (time t_i + h, the laws' step h, no commit unless asked) */
static PetscErrorCode DemNmEval(DemIntegrator_Newmark *nm, PetscBool commit, PetscReal *f, PetscReal *t, PetscReal *fd, PetscReal *td, DemForceOut *fo)
{
  DemSim   sim = nm->sim;
  DemState st  = {nm->x, nm->v, nm->w, nm->q};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(fo, sizeof(*fo)));
  fo->f          = f;
  fo->t          = t;
  fo->fd         = fd;
  fo->td         = td;
  sim->time      = nm->tn + nm->h;
  sim->inc_x     = nm->dx;
  sim->inc_alpha = nm->da;
  PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, commit, fo));
  sim->inc_x     = NULL;
  sim->inc_alpha = NULL;
  nm->nevals++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dimension 2: u_z, alpha_x, alpha_y are not unknowns (identity rows) */
static inline PetscBool DemNmFrozen(DemSim sim, int k)
{
  return (sim->dim == 2 && (k == 2 || k == 3 || k == 4)) ? PETSC_TRUE : PETSC_FALSE;
}

/* y = m_t(i+1) - M(i+1) of body i at the trial state: the inertial moment of the discrete
   balance of angular momentum (see the file comment),
   m_t(i+1) = (Q J(i) b - J(i) w(i)) / (gamma h) - (1 - gamma)/gamma M(i) */
static void DemNmMomentImbalance(DemIntegrator_Newmark *nm, PetscInt i, PetscReal y[3])
{
  const PetscReal *Ji = nm->Ji + 9 * i, *Qd = nm->Qd + 9 * i, *b = nm->bb + 3 * i, *wi = nm->sim->bodies.w + 3 * i;
  const PetscReal  gh = 1.0 / (nm->gamma * nm->h), k = (1 - nm->gamma) / nm->gamma;
  PetscReal        Jb[3], QJb[3], Jw[3];
  DemNmMatVec(Ji, b, Jb);
  DemNmMatVec(Qd, Jb, QJb);
  DemNmMatVec(Ji, wi, Jw);
  for (int c = 0; c < 3; c++) y[c] = gh * (QJb[c] - Jw[c]) - k * nm->tmE[3 * i + c] - nm->t[3 * i + c];
}

/* the angular acceleration of body i of the store from its equation of motion,
   wdot = J^-1 (M - w x J w) (world frame, J = R(q) diag(I) R(q)^T), M = t[3 i..] */
static void DemNmDynamicWdot(const DemBodyStore *bs, PetscInt i, const PetscReal *t, PetscReal wd[3])
{
  PetscReal Jw[3], wJw[3], rhs[3], b[3];
  DemQuatRotateInv(bs->q + 4 * i, bs->w + 3 * i, b);
  for (int k = 0; k < 3; k++) b[k] *= bs->I[3 * i + k];
  DemQuatRotate(bs->q + 4 * i, b, Jw);
  DemNmCross(bs->w + 3 * i, Jw, wJw);
  for (int k = 0; k < 3; k++) rhs[k] = t[3 * i + k] - wJw[k];
  DemQuatRotateInv(bs->q + 4 * i, rhs, b);
  for (int k = 0; k < 3; k++) b[k] *= bs->inv_I[3 * i + k];
  DemQuatRotate(bs->q + 4 * i, b, wd);
}

static PetscErrorCode DemNmFunction(SNES snes, Vec X, Vec Rv, void *ctx)
{
  DemIntegrator_Newmark *nm  = (DemIntegrator_Newmark *)ctx;
  DemSim                 sim = nm->sim;
  DemBodyStore          *bs  = &sim->bodies;
  DemForceOut            fo;
  PetscScalar           *r;
  const PetscScalar     *xx;

  PetscFunctionBegin;
  PetscCall(DemNmTrialState(nm, X));
  PetscCall(DemNmEval(nm, PETSC_FALSE, nm->f, nm->t, NULL, NULL, &fo));
  PetscCall(VecCopy(X, nm->Xlast));
  nm->lastvalid = PETSC_TRUE;
  PetscCall(VecGetArray(Rv, &r));
  PetscCall(VecGetArrayRead(X, &xx));
  for (PetscInt i = 0; i < nm->nb; i++) {
    const PetscInt   rr = nm->row[i];
    PetscReal y[3], xy[3];
    if (rr < 0) continue;
    for (int k = 0; k < 3; k++) r[6 * rr + k] = bs->m[i] * (nm->a1 * nm->dx[3 * i + k] - nm->a2 * bs->v[3 * i + k] - nm->a3 * nm->accE[3 * i + k]) - nm->f[3 * i + k];
    DemNmMomentImbalance(nm, i, y);
    DemNmMatTVec(nm->Xi + 9 * i, y, xy);
    for (int k = 0; k < 3; k++) r[6 * rr + 3 + k] = xy[k] * nm->rs[i];
    for (int k = 0; k < 6; k++)
      if (DemNmFrozen(sim, k)) r[6 * rr + k] = xx[6 * rr + k];
  }
  PetscCall(VecRestoreArrayRead(X, &xx));
  PetscCall(VecRestoreArray(Rv, &r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B += G^T M G for contact c, G = [I, -[ra]x, -I, [rb]x] (3x12), M a 3x3 matrix (row-major) */
static void DemNmAddGtMG(DemSim sim, PetscInt c, const PetscReal M[9], PetscReal B[144])
{
  const PetscReal *ra = sim->cl.ra + 3 * c, *rb = sim->cl.rb + 3 * c;
  PetscReal        G[36], Xa[9], Xb[9], MG[36];

  DemSkew(ra, Xa);
  DemSkew(rb, Xb);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      G[12 * i + j]     = i == j ? 1 : 0;
      G[12 * i + 3 + j] = -Xa[3 * i + j];
      G[12 * i + 6 + j] = i == j ? -1 : 0;
      G[12 * i + 9 + j] = Xb[3 * i + j];
    }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 12; j++) MG[12 * i + j] = M[3 * i] * G[j] + M[3 * i + 1] * G[12 + j] + M[3 * i + 2] * G[24 + j];
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) B[12 * i + j] += G[i] * MG[j] + G[12 + i] * MG[12 + j] + G[24 + i] * MG[24 + j];
}

static PetscErrorCode DemNmOnsetExponent(DemIntegrator_Newmark *);

static PetscErrorCode DemNmLawReserve(DemIntegrator_Newmark *nm, PetscInt n)
{
  PetscFunctionBegin;
  if (n <= nm->ltcap) PetscFunctionReturn(PETSC_SUCCESS);
  n = PetscMax(n, 2 * nm->ltcap);
  PetscCall(PetscFree4(nm->lgap, nm->lv, nm->lfn, nm->lft));
  PetscCall(PetscFree6(nm->ldfn, nm->lcn, nm->lkt, nm->len, nm->ldis, nm->lfd));
  PetscCall(PetscFree6(nm->les, nm->leg, nm->lev, nm->ltg, nm->ltv, nm->lslip));
  PetscCall(PetscFree2(nm->lfn2, nm->lft2));
  PetscCall(PetscFree(nm->lsg));
  PetscCall(PetscMalloc2(n, &nm->lfn2, 3 * n, &nm->lft2));
  PetscCall(PetscMalloc1(3 * n, &nm->lsg));
  PetscCall(PetscMalloc4(n, &nm->lgap, 3 * n, &nm->lv, n, &nm->lfn, 3 * n, &nm->lft));
  PetscCall(PetscMalloc6(n, &nm->ldfn, n, &nm->lcn, n, &nm->lkt, n, &nm->len, n, &nm->ldis, 3 * n, &nm->lfd));
  PetscCall(PetscMalloc6(n, &nm->les, n, &nm->leg, n, &nm->lev, 3 * n, &nm->ltg, 9 * n, &nm->ltv, n, &nm->lslip));
  nm->ltcap = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the smaller bounding radius of the particles of contact c (walls do not count) */
static PetscReal DemNmContactRadius(DemSim sim, PetscInt c)
{
  const DemBodyStore *bs = &sim->bodies;
  const PetscInt      a = sim->cl.a[c], b = sim->cl.b[c];
  PetscReal           r = PETSC_MAX_REAL;
  if (!(bs->flags[a] & DEM_WALL)) r = PetscMin(r, bs->radius[a]);
  if (!(bs->flags[b] & DEM_WALL)) r = PetscMin(r, bs->radius[b]);
  return r;
}

/* every law on its batch of the contact list, at the gaps lgap and relative velocities lv */
static PetscErrorCode DemNmLawEval(DemIntegrator_Newmark *nm, PetscReal *fn, PetscReal *ft)
{
  DemSim                 sim  = nm->sim;
  const DemContactForces cols = {.fn = fn, .ft = ft, .dfn_dgap = nm->ldfn, .cn = nm->lcn, .kt = nm->lkt, .energy = nm->len, .dissip = nm->ldis, .slip = nm->lslip, .fdamp = nm->lfd, .eslip = nm->les};

  PetscFunctionBegin;
  for (PetscInt l = 0; l < sim->nlaw; l++) {
    DemContactBatch  cb;
    DemContactForces o;
    if (!DemContactBatchOfLaw_Private(sim, l, nm->lgap, nm->lv, &cb)) continue;
    DemContactForcesOffset_Private(&cols, sim->lawstart[l], &o);
    PetscCall(DemContactLawCompute(sim->laws[l], &cb, sim->dt, PETSC_FALSE, &o));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmCycleWatch - which contacts cycle between Newton iterates of this step (the Jacobians'
  evaluations; per history slot of the neighbour list, reset at each step and list build):
  a sliding contact whose sliding direction reversed since the last Jacobian (t . t_prev < 0)
  gets the Coulomb secant (DemNmSlipSecant) and a contact seen both open and closed gets the
  onset secant (DemNmJacobian) for the rest of the step. Only these: the secants trade Newton's
  quadratic convergence for monotone steps, which on every sliding or closed contact cost more
  Newton iterations than the cycles they break (stiff_pile N = 100 to t = 0.05 s: 12504 steps
  and 78092 Newton iterations with the Coulomb secant on every sliding contact, against 7158
  and 32299 without it). With the watch, to t = 0.05 s: 4934 steps, 23316 Newton iterations,
  278 cut steps (benchmarks/stiff_pile/README.md). Off by default (keys coulomb_secant,
  onset_secant): the frictional residual has several roots at large dt, and on the static
  pile of tests/validate/val_newmark_pile.sh (4 spheres, beta 0.3025, gamma 0.6, 38-50 dt_c)
  Newton with the secants often ends in roots where the pile does not come to rest (KE
  ~1e-9 J instead of ~1e-32 J at 0.1 s, e_total 3-4 % below the start: the top sphere slid
  off, 41-78 cut steps instead of 8-16): with both, 6 of 8 runs (50 dt_c, and 5 of the 7 runs
  at 38-49 dt_c); at 38, 44 and 50 dt_c the Coulomb secant alone 2 of 3, the onset secant
  alone 1 of 3 (254 cut steps at 44 dt_c); without them 0 of 3.
*/
#define DEM_NM_CW_OPEN   1
#define DEM_NM_CW_CLOSED 2
#define DEM_NM_CW_SECANT 4
#define DEM_NM_CW_ONSET  8
#define DEM_NM_CW_NOW    16 /* closed at this Jacobian (scratch) */
static PetscErrorCode DemNmCycleWatch(DemIntegrator_Newmark *nm, PetscBool reset)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;
  const PetscInt        hc  = sim->nl.histcap;

  PetscFunctionBegin;
  if (!nm->secant && !nm->onset) PetscFunctionReturn(PETSC_SUCCESS);
  if (hc > nm->cwcap) {
    PetscCall(PetscFree(nm->cw));
    PetscCall(PetscFree(nm->cwt));
    nm->cwcap = PetscMax(hc, 2 * nm->cwcap);
    PetscCall(PetscMalloc1(nm->cwcap, &nm->cw));
    PetscCall(PetscMalloc1(3 * nm->cwcap, &nm->cwt));
    reset = PETSC_TRUE;
  }
  if (reset || nm->cwbuild != sim->nl.nbuilds) {
    PetscCall(PetscArrayzero(nm->cw, nm->cwcap));
    PetscCall(PetscArrayzero(nm->cwt, 3 * nm->cwcap));
    nm->cwbuild = sim->nl.nbuilds;
    nm->ncw     = 0;
  }
  if (reset) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt c = 0; c < cl->n; c++) {
    const PetscInt   k  = cl->hist[c];
    const PetscReal *ft = sim->cf.ft + 3 * c;
    PetscReal       *tp, a;
    unsigned char    w;
    if (k < 0 || k >= nm->cwcap) continue;
    w  = nm->cw[k];
    tp = nm->cwt + 3 * k;
    if (cl->gap[c] < 0) w |= DEM_NM_CW_CLOSED | DEM_NM_CW_NOW;
    else w |= DEM_NM_CW_OPEN;
    if (nm->onset && (w & DEM_NM_CW_OPEN) && (w & DEM_NM_CW_CLOSED)) w |= DEM_NM_CW_ONSET;
    a = sim->cf.slip[c] ? PetscSqrtReal(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]) : 0;
    if (a > 0) {
      if (nm->secant && ft[0] * tp[0] + ft[1] * tp[1] + ft[2] * tp[2] < 0) w |= DEM_NM_CW_SECANT;
      for (int j = 0; j < 3; j++) tp[j] = ft[j] / a;
    } else tp[0] = tp[1] = tp[2] = 0;
    if ((w & (DEM_NM_CW_SECANT | DEM_NM_CW_ONSET)) && !(nm->cw[k] & (DEM_NM_CW_SECANT | DEM_NM_CW_ONSET))) nm->ncw++;
    nm->cw[k] = w;
  }
  /* a slot closed at an earlier Jacobian and not closed at this one (open, or out of the list) */
  for (PetscInt k = 0; k < nm->cwcap; k++) {
    unsigned char w = nm->cw[k];
    if (!(w & DEM_NM_CW_NOW)) {
      if (w & DEM_NM_CW_CLOSED) w |= DEM_NM_CW_OPEN;
      if (nm->onset && (w & DEM_NM_CW_CLOSED) && !(w & DEM_NM_CW_ONSET)) w |= DEM_NM_CW_ONSET, nm->ncw++;
    }
    nm->cw[k] = w & (unsigned char)~DEM_NM_CW_NOW;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the watch's flag f for contact c */
static inline PetscBool DemNmCycles(DemIntegrator_Newmark *nm, PetscInt c, unsigned char f)
{
  const PetscInt k = nm->sim->cl.hist[c];
  return (k >= 0 && k < nm->cwcap && (nm->cw[k] & f)) ? PETSC_TRUE : PETSC_FALSE;
}

/*
  DemNmSlipSecant - the Coulomb secant of a sliding contact, added to its velocity tangent
  ltv. At the cap the force is Ft = mu fn t, t = Ft_trial / |Ft_trial|, whose consistent
  derivative along t is zero: Newton then sees no friction along the sliding direction, and a
  contact near stick (the solution inside or at the cone) jumps from sliding one way to sliding
  the other way and back (a 2-cycle of |R|, measured on stiff_pile N = 100 at t = 0.0166 s:
  |R| 0.485 / 0.126 N for 15 iterations, the relative tangential velocity of one sliding pair
  flipping sign each iteration, at every dt down to tc/4). The secant of the radial return
  along t, c dFt_trial/dvt with c = |Ft| / |Ft_trial| (the cap's scale), is the slope from
  the origin of the trial force to the capped one: from either side the Newton step lands near
  the cone instead of across it (in one dimension, r(v) = A v + mu fn sign(v), b = 0, it lands
  on the root in one step where the consistent tangent cycles between -2 mu fn / A and +2 mu fn / A).
  The trial force's slope is the law's own, by differences with the stick imposed (friction.h
  DemFrictionSpringMode_Private, mode 0: never capped) along t; contacts without a history
  slot keep the consistent tangent. Converged solutions are the same (only the Jacobian changes).
*/
static PetscErrorCode DemNmSlipSecant(DemIntegrator_Newmark *nm)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;
  const PetscInt        n   = cl->n, hc = sim->nl.histcap;
  signed char          *sm  = sim->slip_mode;
  const PetscInt        nsm = sim->nslip_mode;
  PetscInt              nsl = 0;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < n; c++)
    if (sim->cf.slip[c] && DemNmCycles(nm, c, DEM_NM_CW_SECANT)) nsl++;
  if (!nsl) PetscFunctionReturn(PETSC_SUCCESS);
  if (hc > nm->stickcap) {
    PetscCall(PetscFree(nm->stick));
    nm->stickcap = PetscMax(hc, 2 * nm->stickcap);
    PetscCall(PetscMalloc1(nm->stickcap, &nm->stick));
  }
  PetscCall(PetscArrayzero(nm->stick, nm->stickcap));
  sim->slip_mode  = nm->stick;
  sim->nslip_mode = nm->stickcap;
  PetscCall(PetscArraycpy(nm->lgap, cl->gap, n));
  /* the trial force at vrel (lft, uncapped), and at vrel -+ e t (lfd scratch, lft2) */
  PetscCall(PetscArraycpy(nm->lv, sim->vrel, 3 * n));
  PetscCall(DemNmLawEval(nm, nm->lfn, nm->lft));
  for (PetscInt c = 0; c < n; c++) {
    const PetscReal *ft = sim->cf.ft + 3 * c;
    const PetscReal  a  = PetscSqrtReal(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]);
    for (int k = 0; k < 3; k++) nm->lv[3 * c + k] = sim->vrel[3 * c + k] - (a > 0 ? nm->lev[c] * ft[k] / a : 0);
  }
  PetscCall(DemNmLawEval(nm, nm->lfn2, nm->lft2));
  for (PetscInt c = 0; c < n; c++) { /* lft2 -> les: F(vrel - e t) . t */
    const PetscReal *ft = sim->cf.ft + 3 * c;
    const PetscReal  a  = PetscSqrtReal(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]);
    nm->leg[c] = a > 0 ? (nm->lft2[3 * c] * ft[0] + nm->lft2[3 * c + 1] * ft[1] + nm->lft2[3 * c + 2] * ft[2]) / a : 0;
    for (int k = 0; k < 3; k++) nm->lv[3 * c + k] = sim->vrel[3 * c + k] + (a > 0 ? nm->lev[c] * ft[k] / a : 0);
  }
  PetscCall(DemNmLawEval(nm, nm->lfn2, nm->lft2));
  sim->slip_mode  = sm;
  sim->nslip_mode = nsm;
  for (PetscInt c = 0; c < n; c++) {
    const PetscReal *ft = sim->cf.ft + 3 * c, *tr = nm->lft + 3 * c;
    const PetscReal  a = PetscSqrtReal(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]), b = PetscSqrtReal(tr[0] * tr[0] + tr[1] * tr[1] + tr[2] * tr[2]);
    PetscReal        st, sc;
    if (!sim->cf.slip[c] || !DemNmCycles(nm, c, DEM_NM_CW_SECANT) || !(a > 0) || !(b > a)) continue;
    st = ((nm->lft2[3 * c] * ft[0] + nm->lft2[3 * c + 1] * ft[1] + nm->lft2[3 * c + 2] * ft[2]) / a - nm->leg[c]) / (2 * nm->lev[c]);
    if (!(st < 0)) continue; /* a trial force that does not oppose the sliding */
    sc = (a / b) * st;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) nm->ltv[9 * c + 3 * i + j] += sc * ft[i] * ft[j] / (a * a);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The laws' own tangent at the last evaluation, for every contact c: F = fn n + ft (the force
  on a) as a function of the gap and of the relative velocity vrel the law sees,
      ltg[3c..]  = dF/dgap,   ltv[9c..] = dF/dvrel (row-major),
  by central differences of the law itself (one batch call per law and perturbation). This is
  the consistent tangent of whatever the law computes: the overlap dependence of a Hertzian
  dashpot (cn ~ delta^(1/4)) and of kt, the tangential spring (s + vt h) and dashpot, and the
  Coulomb cap of a sliding contact (mu fn along the trial direction: its turn with vt and its
  growth with fn), for any law, built-in or plugin, without derivative outputs. Steps:
  6e-6 ~ eps^(1/3) of |gap| (at least 6e-14 of the radius) and of |vrel| (at least 6e-9
  radius / h), so that truncation and round-off errors are both ~1e-10 relative (a linear law
  such as hooke is then linearized to ~1e-10, and Newton on it converges as with the exact
  tangent); a contact within a step of its onset (gap + step >= 0) is differenced one-sided,
  towards more overlap. The history is read, never written. A law that takes the sliding from
  the bodies' increments (hertz_mindlin's rolling_spring) is differenced through its velocity
  form (sim->inc_x is NULL here: ds = vt h).
*/
static PetscErrorCode DemNmLawTangent(DemIntegrator_Newmark *nm)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;
  const PetscInt        n   = cl->n;

  PetscFunctionBegin;
  PetscCall(DemNmLawReserve(nm, n + 1));
  for (PetscInt c = 0; c < n; c++) {
    const PetscReal *v = sim->vrel + 3 * c, R = DemNmContactRadius(sim, c);
    nm->leg[c] = 6e-6 * PetscMax(PetscAbsReal(cl->gap[c]), 1e-8 * R);
    nm->lev[c] = 6e-6 * PetscMax(PetscSqrtReal(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 1e-3 * R / nm->h);
  }
  /* the gap: F(g + e) - F(g - e) over 2e, or F(g) - F(g - e) over e at the onset */
  PetscCall(PetscArraycpy(nm->lv, sim->vrel, 3 * n));
  for (PetscInt c = 0; c < n; c++) nm->lgap[c] = cl->gap[c] - nm->leg[c];
  PetscCall(DemNmLawEval(nm, nm->lfn, nm->lft));
  for (PetscInt c = 0; c < n; c++) nm->lgap[c] = cl->gap[c] + nm->leg[c] < 0 ? cl->gap[c] + nm->leg[c] : cl->gap[c];
  PetscCall(DemNmLawEval(nm, nm->lfn2, nm->lft2));
  for (PetscInt c = 0; c < n; c++) {
    const PetscReal *nr = cl->nrm + 3 * c, dg = nm->lgap[c] - (cl->gap[c] - nm->leg[c]);
    for (int k = 0; k < 3; k++) nm->ltg[3 * c + k] = ((nm->lfn2[c] - nm->lfn[c]) * nr[k] + nm->lft2[3 * c + k] - nm->lft[3 * c + k]) / dg;
  }
  /* the onset secant of closed contacts: (F(gap) - F(0)) / gap, F(0) the law at the onset */
  if (nm->onset && nm->ncw) {
    for (PetscInt c = 0; c < n; c++) nm->lgap[c] = cl->gap[c] < 0 ? 0 : cl->gap[c];
    PetscCall(DemNmLawEval(nm, nm->lfn, nm->lft));
    for (PetscInt c = 0; c < n; c++) {
      const PetscReal *nr = cl->nrm + 3 * c;
      for (int k = 0; k < 3; k++) nm->lsg[3 * c + k] = cl->gap[c] < 0 ? ((sim->cf.fn[c] - nm->lfn[c]) * nr[k] + sim->cf.ft[3 * c + k] - nm->lft[3 * c + k]) / cl->gap[c] : 0;
    }
  }
  /* each component of the relative velocity */
  PetscCall(PetscArraycpy(nm->lgap, cl->gap, n));
  for (int j = 0; j < 3; j++) {
    PetscCall(PetscArraycpy(nm->lv, sim->vrel, 3 * n));
    for (PetscInt c = 0; c < n; c++) nm->lv[3 * c + j] -= nm->lev[c];
    PetscCall(DemNmLawEval(nm, nm->lfn, nm->lft));
    for (PetscInt c = 0; c < n; c++) nm->lv[3 * c + j] += 2 * nm->lev[c];
    PetscCall(DemNmLawEval(nm, nm->lfn2, nm->lft2));
    for (PetscInt c = 0; c < n; c++) {
      const PetscReal *nr = cl->nrm + 3 * c;
      for (int k = 0; k < 3; k++) nm->ltv[9 * c + 3 * k + j] = ((nm->lfn2[c] - nm->lfn[c]) * nr[k] + nm->lft2[3 * c + k] - nm->lft[3 * c + k]) / (2 * nm->lev[c]);
    }
  }
  if (nm->secant && nm->ncw) PetscCall(DemNmSlipSecant(nm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* maps a 6x6 sub-block K (rows of body k, columns of body l) of generalized stiffness and
   damping to the unknowns: out = T_k (K P_l + C V_l) (see the file comment) */
static void DemNmMapBlock(DemIntegrator_Newmark *nm, PetscInt k, PetscInt l, const PetscReal K[144], const PetscReal C[144], int bk, int bl, PetscReal out[36])
{
  const PetscReal *Xk = nm->Xi + 9 * k, *Xl = nm->Xi + 9 * l, *Ql = nm->Qd + 9 * l, *wl = nm->w + 3 * l;
  PetscReal        Pl[9], Vl[9], W[9], WX[9], tmp[36];

  /* rotation columns of body l: P = Xi, V = a4 Q - [w]x Xi */
  for (int i = 0; i < 9; i++) Pl[i] = Xl[i];
  DemSkew(wl, W);
  DemNmMatMat(W, Xl, WX);
  for (int i = 0; i < 9; i++) Vl[i] = nm->a4 * Ql[i] - WX[i];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      const PetscReal *Kr = K + 12 * (6 * bk + i) + 6 * bl, *Cr = C + 12 * (6 * bk + i) + 6 * bl;
      PetscReal        s  = 0;
      if (j < 3) s = Kr[j] + nm->a4 * Cr[j];
      else
        for (int m = 0; m < 3; m++) s += Kr[3 + m] * Pl[3 * m + j - 3] + Cr[3 + m] * Vl[3 * m + j - 3];
      tmp[6 * i + j] = s;
    }
  /* moment rows of body k times Xi^T */
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      if (i < 3) out[6 * i + j] = tmp[6 * i + j];
      else out[6 * i + j] = Xk[i - 3] * tmp[6 * 3 + j] + Xk[3 + i - 3] * tmp[6 * 4 + j] + Xk[6 + i - 3] * tmp[6 * 5 + j];
    }
}

static void DemNmFreezeBlock(DemSim sim, PetscReal B[36], PetscBool diag)
{
  if (sim->dim != 2) return;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++)
      if (DemNmFrozen(sim, i) || DemNmFrozen(sim, j)) B[6 * i + j] = (diag && i == j) ? 1 : 0;
}

/*
  DemNmReleaseJacobian - the release weights' part of the Jacobian (DemNmRelease), a rank-one
  12x12 block per contact opening in the step: the reductions wS, wD change the residual by
  wS S + wD D times fixed factors, with dwS/dg1 = -g0 / (g1 - g0)^2 (DemNmReleaseWeights) and dg1 = n . (du_a +
  [Q r_a]x^T Xi_a dalpha_a - du_b - ...) (a spatial rotation dtheta = Xi dalpha turns Q r).
  Per unit force F = wS S + wD D the force rows of body k change by -a3 sigma_k F =
  (1 - 1/(2 beta)) sigma_k F (sigma_a = -1, sigma_b = +1), the moment imbalance y (world)
  by (a6 / (gamma h) Q - (1 - gamma) / gamma) sigma_k (r_k x F) (through M(i) and, by wdot(i),
  b), the rows times Xi^T and the radius scale. Without it Newton stalls: a sphere that hit a
  floor at dt = 28 tc did not converge in 50 iterations in the step that released it.
*/
static PetscErrorCode DemNmReleaseJacobian(DemIntegrator_Newmark *nm, Mat P)
{
  const PetscReal  cf = 1 - 0.5 / nm->beta, cm = (1 - nm->gamma / (2 * nm->beta)) / nm->gamma, km = (1 - nm->gamma) / nm->gamma;
  const PetscInt  *mr = nm->mpi ? DemNmMPIGlobalRows_Private(nm->mpi) : nm->row;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < nm->nrel; r++) {
    const PetscInt   body[2] = {nm->rab[2 * r], nm->rab[2 * r + 1]};
    const PetscReal *o = nm->rel + DEM_NM_REL * r + 3, *n = o + 1, *S = o + 10, *D = o + 13;
    PetscReal        row[2][6], col[2][6], wS, wD, dS, dD, F[3];
    if (!DemNmReleaseHere(nm, r)) continue;
    if (!(DemNmReleaseWeights(nm, r, &wS, &wD, &dS, &dD) > 0)) continue;
    for (int k = 0; k < 3; k++) F[k] = dS * S[k] + dD * D[k]; /* d(wS S + wD D)/dg1 */
    for (int e = 0; e < 2; e++) {
      const PetscInt   i = body[e];
      const PetscReal *arm = o + 4 + 3 * e, *Q = nm->Qd + 9 * i, *Xi = nm->Xi + 9 * i, sg = e ? 1 : -1;
      PetscReal        Qr[3], pn[3], M[3], y[3];
      /* columns: dg1/du = -sg n, dg1/dalpha = -sg (Q r x n)^T Xi */
      DemNmMatVec(Q, arm, Qr);
      DemNmCross(Qr, n, pn);
      for (int k = 0; k < 3; k++) col[e][k] = -sg * n[k];
      for (int k = 0; k < 3; k++) col[e][3 + k] = -sg * (pn[0] * Xi[k] + pn[1] * Xi[3 + k] + pn[2] * Xi[6 + k]);
      /* rows per unit g1 */
      DemNmCross(arm, F, M);
      DemNmMatVec(Q, M, y);
      for (int k = 0; k < 3; k++) y[k] = sg * (cm * y[k] - km * M[k]);
      for (int k = 0; k < 3; k++) row[e][k] = cf * sg * F[k];
      for (int k = 0; k < 3; k++) row[e][3 + k] = (Xi[k] * y[0] + Xi[3 + k] * y[1] + Xi[6 + k] * y[2]) * nm->rs[i];
    }
    for (int ek = 0; ek < 2; ek++)
      for (int el = 0; el < 2; el++) {
        PetscReal blk[36];
        if (mr[body[ek]] < 0 || mr[body[el]] < 0) continue; /* MPI: a ghost's rows go to its owner */
        for (int p = 0; p < 6; p++)
          for (int q = 0; q < 6; q++) blk[6 * p + q] = row[ek][p] * col[el][q];
        DemNmFreezeBlock(nm->sim, blk, PETSC_FALSE);
        PetscCall(MatSetValuesBlockedLocal(P, 1, &body[ek], 1, &body[el], blk, ADD_VALUES));
      }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemNmJacobian(SNES snes, Vec X, Mat A, Mat P, void *ctx)
{
  DemIntegrator_Newmark *nm  = (DemIntegrator_Newmark *)ctx;
  DemSim                 sim = nm->sim;
  DemBodyStore          *bs  = &sim->bodies;
  PetscBool              same = PETSC_FALSE;
  const PetscInt        *mr;

  PetscFunctionBegin;
  if (nm->lastvalid) PetscCall(VecEqual(X, nm->Xlast, &same));
  if (!same) { /* the contacts and per-body quantities at X */
    DemForceOut fo;
    PetscCall(DemNmTrialState(nm, X));
    PetscCall(DemNmEval(nm, PETSC_FALSE, nm->f, nm->t, NULL, NULL, &fo));
    PetscCall(VecCopy(X, nm->Xlast));
    nm->lastvalid = PETSC_TRUE;
  }
  PetscCall(DemNmCycleWatch(nm, PETSC_FALSE));
  PetscCall(MatZeroEntries(P));
  /* bodies: inertia and the pseudo-moments' dependence on alpha */
  for (PetscInt i = 0; i < nm->nb; i++) {
    const PetscInt   r = nm->row[i];
    const PetscReal *Xi = nm->Xi + 9 * i, *Ji = nm->Ji + 9 * i, *Qd = nm->Qd + 9 * i, *b = nm->bb + 3 * i, *al = nm->da + 3 * i;
    const PetscReal  nal[3] = {-al[0], -al[1], -al[2]};
    PetscReal        blk[36], y[3], Jb[3], QJb[3], LX[9], LXXi[9], QJ[9], inner[9], XI[9], DY[9];
    if (r < 0) continue;
    PetscCall(PetscArrayzero(blk, 36));
    for (int k = 0; k < 3; k++) blk[7 * k] = bs->m[i] * nm->a1;
    /* d(Xi^T y)/d alpha at fixed y: Xi^T(alpha) = Xi(-alpha) */
    DemNmMomentImbalance(nm, i, y);
    DemNmDXi(nal, y, DY);
    /* d(Q J(i) b)/d alpha = a4 Q J(i) - [Q J(i) b]x Xi (a spatial variation dtheta = Xi dalpha
       turns Q J(i) b); a4 / (gamma h) = a1 */
    DemNmMatVec(Ji, b, Jb);
    DemNmMatVec(Qd, Jb, QJb);
    DemSkew(QJb, LX);
    DemNmMatMat(LX, Xi, LXXi);
    DemNmMatMat(Qd, Ji, QJ);
    for (int k = 0; k < 9; k++) inner[k] = nm->a1 * QJ[k] - LXXi[k] / (nm->gamma * nm->h);
    for (int p = 0; p < 3; p++)
      for (int s = 0; s < 3; s++) XI[3 * p + s] = Xi[p] * inner[s] + Xi[3 + p] * inner[3 + s] + Xi[6 + p] * inner[6 + s];
    for (int p = 0; p < 3; p++)
      for (int s = 0; s < 3; s++) blk[6 * (3 + p) + 3 + s] = (-DY[3 * p + s] + XI[3 * p + s]) * nm->rs[i];
    DemNmFreezeBlock(sim, blk, PETSC_TRUE);
    PetscCall(MatSetValuesBlockedLocal(P, 1, &i, 1, &i, blk, ADD_VALUES)); /* body -> row (MPI: global row) */
  }
  /* contacts: K P + C V, moment rows times Xi^T. K: jacobian.c's block (cstiff 1) with its
     law part G^T S_K G (S_K = -dfn_dgap n n^T + kt (I - n n^T)) replaced by the law's own
     tangent, -G^T (dF/dgap) n^T G (dgap = n . G dq); what remains of it is the turn of the
     normal between two spheres. C = -G^T (dF/dvrel) G: dashpots, and the tangential spring
     and Coulomb cap, which see vt h (the laws' step h) */
  PetscCall(DemNmLawTangent(nm));
  PetscCall(DemNmOnsetExponent(nm));
  mr = nm->mpi ? DemNmMPIGlobalRows_Private(nm->mpi) : nm->row; /* MPI: ghosts' blocks too, to their owners' rows */
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    const PetscInt   a = sim->cl.a[c], b = sim->cl.b[c], body[2] = {a, b};
    const PetscReal *n = sim->cl.nrm + 3 * c, *fd = nm->ltg + 3 * c, *fv = nm->ltv + 9 * c, *vr = sim->vrel + 3 * c;
    const PetscReal  knn = -sim->cf.dfn_dgap[c], kt = sim->cf.slip[c] ? 0 : sim->cf.kt[c], cn = sim->cf.cn[c];
    PetscReal        K[144], C[144], MK[9], MC[9], z = 0, tga[3], tva[9], ct = 0, vn, vt[3], e1 = 0, s1 = 0, e2 = 0, s2 = 0;
    const PetscReal *tg = fd, *tv = fv;
    PetscBool        anyk;
    if (mr[a] < 0 && mr[b] < 0) continue;
    /* the tangent the law's columns give (dfn_dgap, cn, kt, ct read from fdamp as jacobian.c
       does; a sticking spring through vt h): exact for a linear law such as hooke, used when
       the gap column of the differences agrees with it to 1e-7, so that Newton on a linear
       law keeps its exact one-step convergence instead of the differences' ~1e-10; the
       velocity block is always the differences' (the law's columns miss the Coulomb cap) */
    vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
    for (int k = 0; k < 3; k++) vt[k] = vr[k] - vn * n[k];
    if (sim->cf.fdamp && !sim->cf.slip[c]) {
      const PetscReal *D  = sim->cf.fdamp + 3 * c;
      PetscReal        Dn = D[0] * n[0] + D[1] * n[1] + D[2] * n[2], vt2 = vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2], Dv = 0;
      for (int k = 0; k < 3; k++) Dv += (D[k] - Dn * n[k]) * vt[k];
      if (vt2 > 0 && -Dv > 0) ct = -Dv / vt2;
    }
    for (int i = 0; i < 3; i++) {
      tga[i] = -knn * n[i];
      e1     = PetscMax(e1, PetscAbsReal(fd[i] - tga[i]));
      s1     = PetscMax(s1, PetscAbsReal(tga[i]));
      for (int j = 0; j < 3; j++) {
        tva[3 * i + j] = -cn * n[i] * n[j] - (ct + kt * nm->h) * ((i == j ? 1 : 0) - n[i] * n[j]);
        e2             = PetscMax(e2, PetscAbsReal(fv[3 * i + j] - tva[3 * i + j]));
        s2             = PetscMax(s2, PetscAbsReal(tva[3 * i + j]));
      }
    }
    /* an open contact (no force, no stiffness: gap >= 0) keeps the zero tangent of its side of
       the onset, as a contact outside the list has */
    if (sim->cf.fn[c] == 0 && knn == 0 && cn == 0 && sim->cf.ft[3 * c] == 0 && sim->cf.ft[3 * c + 1] == 0 && sim->cf.ft[3 * c + 2] == 0) e1 = e2 = 0;
    if (e1 <= 1e-7 * PetscMax(s1, s2 / nm->h)) tg = tga; /* k ~ c / h */
    /* DemNmOnset: the onset secant where it is stiffer along n than the tangent */
    if (nm->onset && sim->cl.gap[c] < 0 && DemNmCycles(nm, c, DEM_NM_CW_ONSET)) {
      const PetscReal *sg = nm->lsg + 3 * c;
      if (sg[0] * n[0] + sg[1] * n[1] + sg[2] * n[2] < tg[0] * n[0] + tg[1] * n[1] + tg[2] * n[2]) tg = sg;
    }
    (void)e2, (void)s2, (void)tva;
    for (int k = 0; k < 3; k++) z += PetscAbsReal(tg[k]);
    for (int k = 0; k < 9; k++) z += PetscAbsReal(tv[k]);
    PetscCall(DemForcesJacobianBlock_Private(sim, c, 1, 0, K, &anyk));
    if (!anyk && z == 0) continue;
    if (!anyk) PetscCall(PetscArrayzero(K, 144));
    PetscCall(PetscArrayzero(C, 144));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        MK[3 * i + j] = -tg[i] * n[j] - ((i == j ? kt : 0) + (knn - kt) * n[i] * n[j]);
        MC[3 * i + j] = -tv[3 * i + j];
      }
    DemNmAddGtMG(sim, c, MK, K);
    DemNmAddGtMG(sim, c, MC, C);
    for (int bk = 0; bk < 2; bk++)
      for (int bl = 0; bl < 2; bl++) {
        PetscInt  rk = mr[body[bk]], rl = mr[body[bl]];
        PetscReal out[36];
        if (rk < 0 || rl < 0) continue;
        DemNmMapBlock(nm, body[bk], body[bl], K, C, bk, bl, out);
        for (int p = 18; p < 36; p++) out[p] *= nm->rs[body[bk]]; /* moment rows, scaled */
        DemNmFreezeBlock(sim, out, PETSC_FALSE);
        PetscCall(MatSetValuesBlockedLocal(P, 1, &body[bk], 1, &body[bl], out, ADD_VALUES));
      }
  }
  PetscCall(DemNmReleaseJacobian(nm, P));
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  if (A != P) {
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmOnsetExponent, DemNmOnsetScale - the onset transform (key onset_transform): a Newton step
  in the variable s = delta^p for the closed contacts whose normal force is concave in the
  overlap delta = -gap (0 < p < 1, p = delta (dfn/ddelta) / fn the local exponent of the law's
  own normal force at the iterate, from the law tangent's gap column; a Hertzian dashpot
  d* delta^(1/4) (-vn) that carries the force has p = 1/4, a Hertz spring 3/2). At a
  sphere's first contact the root lies at overlaps of 1e-9 ... 3e-7 m where the dashpot carries
  the force: Newton in delta, from the closed side, follows the concave law's tangent across
  the onset (for F = C delta^(1/4) it lands at -3 delta), from the open side (no force, no
  stiffness) at the free-flight overlap, and the iterates alternate open and closed
  (benchmarks/stiff_pile/README.md, session 10). In s the law is convex (C s; the inertia
  K delta = K s^4 and the spring k s^6 convex too), so Newton from the closed side decreases
  monotonically to the root and from the free-flight overlap lands closed again. Newton in a
  transformed variable is the same linear solve followed by a nonlinear update: the step in
  s is ds = (ds/d delta) d delta = p s x, x = d delta / delta the relative change of the
  overlap in the Newton step (its gap linearized in the increments), i.e. the overlap's new
  value is delta (1 + p x)^(1/p). For an opening step (x < 0) with 1 + p x > 0 this is a
  shorter step, the fraction lambda = ((1 + p x)^(1/p) - 1) / x in (0, 1] of the Newton step
  along the contact's gap; 1 + p x <= 0 (Newton in s opens the contact too) and closing steps
  keep the full step. Each body's Newton direction is scaled by the smallest lambda of its
  contacts (the two bodies of a contact alike, so that its gap moves by lambda d delta). Only
  the step changes: the residual, the Jacobian and the converged solution are the law's. On
  several MPI ranks the ghosts' rows of the direction come from their owners (one forward
  exchange per Newton iteration) and each rank scales its owned bodies.
*/
static PetscErrorCode DemNmOnsetExponent(DemIntegrator_Newmark *nm)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;

  PetscFunctionBegin;
  nm->oneval = -1;
  if (!nm->onset_tf) PetscFunctionReturn(PETSC_SUCCESS);
  if (cl->n > nm->oncap) {
    PetscCall(PetscFree(nm->onp));
    nm->oncap = PetscMax(cl->n, 2 * nm->oncap);
    PetscCall(PetscMalloc1(nm->oncap, &nm->onp));
  }
  for (PetscInt c = 0; c < cl->n; c++) {
    const PetscReal *n = cl->nrm + 3 * c, *tg = nm->ltg + 3 * c, fn = sim->cf.fn[c], d = -cl->gap[c];
    const PetscReal  p = fn > 0 && d > 0 ? d * -(tg[0] * n[0] + tg[1] * n[1] + tg[2] * n[2]) / fn : 0;
    nm->onp[c] = p > 0 && p < 1 ? p : 0;
  }
  nm->oneval = nm->nevals; /* the contact list of this evaluation (the iterate X) */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemNmOnsetScale(DemIntegrator_Newmark *nm, Vec Y)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;
  const PetscInt        nown = nm->mpi ? sim->bodies.n : nm->nb;
  const PetscInt       *mr   = nm->mpi ? DemNmMPIGlobalRows_Private(nm->mpi) : nm->row; /* mobile: >= 0 (MPI: ghosts too) */
  PetscScalar          *y;
  PetscReal            *yb;

  PetscFunctionBegin;
  if (!nm->onset_tf || nm->oneval != nm->nevals) PetscFunctionReturn(PETSC_SUCCESS);
  if (nm->nb > nm->onlcap) {
    PetscCall(PetscFree2(nm->onl, nm->ony));
    nm->onlcap = PetscMax(nm->nb, 2 * nm->onlcap);
    PetscCall(PetscMalloc2(nm->onlcap, &nm->onl, 6 * nm->onlcap, &nm->ony));
  }
  yb = nm->ony;
  PetscCall(VecGetArray(Y, &y));
  for (PetscInt i = 0; i < nm->nb; i++) { /* the direction per body (store layout) */
    const PetscInt r = i < nown ? nm->row[i] : -1;
    nm->onl[i]       = 1;
    for (int k = 0; k < 6; k++) yb[6 * i + k] = r >= 0 ? y[6 * r + k] : 0;
  }
  if (nm->mpi) PetscCall(DemDecompForwardArray_Private(sim, yb, 6)); /* MPI: the ghosts' rows from their owners */
  for (PetscInt c = 0; c < cl->n; c++) {
    const PetscInt   body[2] = {cl->a[c], cl->b[c]};
    const PetscReal *n = cl->nrm + 3 * c, p = nm->onp[c], d = -cl->gap[c];
    PetscReal        dg = 0, x, lam;
    if (!(p > 0)) continue;
    for (int e = 0; e < 2; e++) { /* the contact point's displacement along the direction -Y */
      const PetscInt   i   = body[e];
      const PetscReal *arm = e ? cl->rb + 3 * c : cl->ra + 3 * c, *Xi = nm->Xi + 9 * i, *yi = yb + 6 * i;
      PetscReal        th[3], tr[3];
      if (mr[i] < 0) continue;
      DemNmMatVec(Xi, yi + 3, th);
      DemNmCross(th, arm, tr);
      for (int k = 0; k < 3; k++) dg += (e ? 1 : -1) * n[k] * (yi[k] + tr[k]);
    }
    x = -dg / d; /* the overlap's relative change (gap + dg) */
    if (!(x < 0) || !(1 + p * x > 0)) continue;
    lam = (PetscPowReal(1 + p * x, 1 / p) - 1) / x;
    for (int e = 0; e < 2; e++) nm->onl[body[e]] = PetscMin(nm->onl[body[e]], lam);
  }
  for (PetscInt i = 0; i < nown; i++) {
    const PetscInt r = nm->row[i];
    if (r < 0 || nm->onl[i] == 1) continue;
    for (int k = 0; k < 6; k++) y[6 * r + k] *= nm->onl[i];
  }
  PetscCall(VecRestoreArray(Y, &y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The line search (SNESLINESEARCHSHELL; -snes_linesearch_type bt, l2, ... replace it): the full
  Newton step X - Y when it halves |R|; otherwise the step lambda of PETSc's l2 line search (one
  secant step: the minimizer of the parabola through phi(lambda) = |R(X - lambda Y)|^2 at
  lambda = 0, 1/2, 1, downhill from 1), taken even if |R| grows - unless the full step reduced
  |R| and the parabola's step does worse (|R| at round-off, where the parabola is noise): then
  the full step. Measured on the stiff frictional pile (tests/validate/val_newmark_pile.sh at
  dt = 34 ... 50.5 dt_c, 16 runs; at rest after 0.1 s with the final dt >= 0.9 of the first):
  backtracking (PETSc bt, the default of newtonls and of this file before) 3 of 13 runs, its
  sufficient-decrease steps converge to roots that pump energy into the pile (e_total grows, the
  top sphere is thrown off); l2 14 of 16, but its lambda differs from 1 by O(|R|) near a root,
  so Newton stops at the tolerance instead of at round-off (tests/unit/test_newmark.c, tight
  free rotation: |dL|/|L| 8.6e-10); this search 16 of 16 (with DemNmJacobianPattern; 15 of 16
  before it) and round-off (2e-14). Each iteration costs one residual evaluation when the full
  step halves |R|, three or four otherwise.
*/
static PetscErrorCode DemNmLineSearch(SNESLineSearch ls, void *ctx)
{
  SNES      snes;
  Vec       X, F, Y, W, G;
  PetscReal xnorm, fnorm, ynorm, g1, gm, gl, lam = 1, f0, d1, dm, a, b;

  PetscFunctionBegin;
  PetscCall(SNESLineSearchGetSNES(ls, &snes));
  PetscCall(SNESLineSearchGetVecs(ls, &X, &F, &Y, &W, &G));
  PetscCall(SNESLineSearchGetNorms(ls, &xnorm, &fnorm, NULL));
  PetscCall(DemNmOnsetScale((DemIntegrator_Newmark *)ctx, Y));
  PetscCall(VecNorm(Y, NORM_2, &ynorm));
  PetscCall(VecWAXPY(W, -1.0, Y, X));
  PetscCall(SNESComputeFunction(snes, W, G));
  PetscCall(VecNorm(G, NORM_2, &g1));
  if (!(g1 <= 0.5 * fnorm)) {
    PetscCall(VecWAXPY(W, -0.5, Y, X));
    PetscCall(SNESComputeFunction(snes, W, G));
    PetscCall(VecNorm(G, NORM_2, &gm));
    f0 = fnorm * fnorm;
    d1 = (PetscIsInfOrNanReal(g1) ? PETSC_MAX_REAL : g1 * g1) - f0;
    dm = gm * gm - f0;
    a  = 2 * d1 - 4 * dm; /* phi = f0 + b lam + a lam^2 through the three points */
    b  = 4 * dm - d1;
    /* downhill from lam = 1: phi'(1) = 2 a + b, phi'' = 2 a */
    lam = a > 0 ? 1 - (2 * a + b) / (2 * a) : 1 + (2 * a + b) / (2 * a);
    if (PetscIsInfOrNanReal(lam)) lam = 0.5;
    if (lam < 1e-12) lam = 0.5;
    PetscCall(VecWAXPY(W, -lam, Y, X));
    PetscCall(SNESComputeFunction(snes, W, G));
    PetscCall(VecNorm(G, NORM_2, &gl));
    if (g1 < fnorm && !(gl <= g1)) { /* the parabola misled (|R| at round-off): the full step */
      lam = 1;
      PetscCall(VecWAXPY(W, -1.0, Y, X));
      PetscCall(SNESComputeFunction(snes, W, G));
      PetscCall(VecNorm(G, NORM_2, &gl));
    }
    g1 = gl;
  }
  PetscCall(VecCopy(W, X));
  PetscCall(VecCopy(G, F));
  PetscCall(VecNorm(X, NORM_2, &xnorm));
  PetscCall(SNESLineSearchSetLambda(ls, lam));
  PetscCall(SNESLineSearchSetNorms(ls, xnorm, g1, ynorm)); /* the Newton step: -snes_stol judges it, not a short lambda */
  PetscCall(SNESLineSearchSetReason(ls, PetscIsInfOrNanReal(g1) ? SNES_LINESEARCH_FAILED_DOMAIN : SNES_LINESEARCH_SUCCEEDED));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmDistribute - several MPI ranks (newmark_mpi.c), after a rebuild of the neighbour list
  (bodies migrated, new ghosts): the rows (DemJacobianNumberingGlobal_Private), the vectors and
  the solver for the new sizes, and newmark's state of the owned bodies (acc, wdot, M at i) from
  their per-body field. Collective; nothing on one rank or without a rebuild.
*/
static PetscErrorCode DemNmDistribute(DemIntegrator_Newmark *nm)
{
  DemSim           sim = nm->sim;
  DemBodyStore    *bs  = &sim->bodies;
  const PetscInt   nb  = bs->n + bs->nghost;
  const PetscReal *fl;

  PetscFunctionBegin;
  if (!nm->mpi || !DemDecompActive_Private(sim) || nm->mpibuild == sim->nl.nbuilds) PetscFunctionReturn(PETSC_SUCCESS);
  if (nb > nm->cap) {
    const PetscInt cap = nb + nb / 4 + 16;
    PetscCall(PetscFree5(nm->row, nm->acc, nm->wacc, nm->rs, nm->tm));
    PetscCall(PetscMalloc5(cap + 1, &nm->row, 3 * cap + 1, &nm->acc, 3 * cap + 1, &nm->wacc, cap + 1, &nm->rs, 3 * cap + 1, &nm->tm));
    PetscCall(DemNmReserve(nm, cap));
  }
  nm->nb = nb;
  PetscCall(DemNmMPINumber_Private(nm->mpi, nm->row, &nm->nrows, &nm->nglobal));
  fl = DemNmMPIField_Private(nm->mpi);
  for (PetscInt i = 0; i < nb; i++) {
    nm->rs[i] = bs->radius[i] > 0 ? 1.0 / bs->radius[i] : 1.0;
    for (int k = 0; k < 3; k++) {
      nm->acc[3 * i + k]  = i < bs->n ? fl[DEM_NM_FIELD * i + DEM_NM_ACC + k] : 0;
      nm->wacc[3 * i + k] = i < bs->n ? fl[DEM_NM_FIELD * i + DEM_NM_WACC + k] : 0;
      nm->tm[3 * i + k]   = i < bs->n ? fl[DEM_NM_FIELD * i + DEM_NM_TM + k] : 0;
    }
  }
  PetscCall(VecDestroy(&nm->X));
  PetscCall(VecDestroy(&nm->R));
  PetscCall(VecDestroy(&nm->Xlast));
  PetscCall(VecCreateMPI(sim->comm, 6 * nm->nrows, PETSC_DETERMINE, &nm->X));
  PetscCall(VecSetBlockSize(nm->X, 6));
  PetscCall(VecDuplicate(nm->X, &nm->R));
  PetscCall(VecDuplicate(nm->X, &nm->Xlast));
  PetscCall(SNESReset(nm->snes)); /* vectors and matrices of other sizes follow */
  PetscCall(SNESSetFunction(nm->snes, nm->R, DemNmFunction, nm));
  PetscCall(MatDestroy(&nm->J));
  nm->lastvalid = PETSC_FALSE;
  nm->mpibuild  = sim->nl.nbuilds;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPI: newmark's state of the owned bodies into their per-body field (newmark_mpi.h): between
   steps acc, wdot, M at i; with trial also x at i and the increments of the last iterate */
static void DemNmMPISave(DemIntegrator_Newmark *nm, PetscBool trial)
{
  const DemBodyStore *bs = &nm->sim->bodies;
  PetscReal          *fl = DemNmMPIField_Private(nm->mpi);

  for (PetscInt i = 0; i < bs->n; i++)
    for (int k = 0; k < 3; k++) {
      PetscReal *o = fl + DEM_NM_FIELD * i + k;
      o[DEM_NM_ACC] = nm->acc[3 * i + k], o[DEM_NM_WACC] = nm->wacc[3 * i + k], o[DEM_NM_TM] = nm->tm[3 * i + k];
      if (trial) o[DEM_NM_XOLD] = bs->x[3 * i + k], o[DEM_NM_U] = nm->dx[3 * i + k], o[DEM_NM_ALPHA] = nm->da[3 * i + k];
    }
}

/*
  DemNmMPIResearch - the night-owl search (000 section 2.6.3) on several MPI ranks: the list is
  rebuilt at the converged positions, which may migrate bodies, so the positions at i and the
  converged increments travel in the per-body field and the iterate is rebuilt in the new
  layout (the same increments, the same trial state, forwarded to the new ghosts). A body that
  the rebuild wrapped across a periodic boundary keeps its position at i on the same side.
*/
static PetscErrorCode DemNmMPIResearch(DemIntegrator_Newmark *nm)
{
  DemSim           sim = nm->sim;
  DemBodyStore    *bs  = &sim->bodies;
  const PetscReal *fl;
  PetscScalar     *xx;

  PetscFunctionBegin;
  DemNmMPISave(nm, PETSC_TRUE);
  PetscCall(PetscArraycpy(bs->x, nm->x, 3 * bs->n));
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
  PetscCall(DemNmDistribute(nm));
  fl = DemNmMPIField_Private(nm->mpi);
  for (PetscInt i = 0; i < bs->n + bs->nghost; i++)
    for (int k = 0; k < 3; k++) {
      const PetscReal *o = fl + DEM_NM_FIELD * i + k, L = sim->hi[k] - sim->lo[k];
      PetscReal        xo = o[DEM_NM_XOLD];
      if (sim->periodic[k] && !(bs->flags[i] & DEM_WALL)) xo += L * PetscFloorReal((bs->x[3 * i + k] - (o[DEM_NM_XOLD] + o[DEM_NM_U])) / L + 0.5);
      bs->x[3 * i + k] = xo;
    }
  PetscCall(VecGetArray(nm->X, &xx));
  for (PetscInt i = 0; i < bs->n; i++) {
    const PetscInt r = nm->row[i];
    if (r < 0) continue;
    for (int k = 0; k < 3; k++) xx[6 * r + k] = fl[DEM_NM_FIELD * i + DEM_NM_U + k], xx[6 * r + 3 + k] = fl[DEM_NM_FIELD * i + DEM_NM_ALPHA + k];
    DemNmWorldInertia(bs->q + 4 * i, bs->I + 3 * i, nm->Ji + 9 * i);
  }
  PetscCall(VecRestoreArray(nm->X, &xx));
  PetscCall(DemNmTrialState(nm, nm->X));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmConverged - SNES's default test, and (adapt: true, stall_iterations > 0) a stalled solve
  ends as not converged: from iteration stall_iterations on, when the smallest |R| of the last
  three iterations is not below half the smallest before them. Newton on the contacts' kinks
  (Coulomb's cap, the Hertzian dashpot's onset) cycles with period 2 or 3 at |R| far above
  the tolerance (benchmarks/stiff_pile/README.md, session 9: 0.260 / 0.155 / 0.101 N for 15
  iterations at dt = 0.57 tc), and such a solve was cut anyway, after max_iterations; a solve
  that converges at least linearly with a ratio below 0.79 per iteration halves |R| in three.
  Measured (stiff_pile N = 100, restarts of one run, the same windows): t = 0.031 -> 0.040 s
  10524 -> 8631 Newton iterations (2157 -> 2178 steps), t = 0.066 -> 0.075 s 10555 -> 9794
  (2193 -> 2214 steps); with stall_iterations: 0 the runs are bitwise those of before.
*/
static PetscErrorCode DemNmFreezeWatch(DemIntegrator_Newmark *, PetscInt *);
static void           DemNmFreezeApply(DemIntegrator_Newmark *);
#define DEM_NM_FZ_MAX_RESTARTS 4 /* freezes per step */

static PetscErrorCode DemNmConverged(SNES snes, PetscInt it, PetscReal xn, PetscReal sn, PetscReal fn, SNESConvergedReason *reason, void *ctx)
{
  DemIntegrator_Newmark *nm = (DemIntegrator_Newmark *)ctx;

  PetscFunctionBegin;
  PetscCall(SNESConvergedDefault(snes, it, xn, sn, fn, reason, NULL));
  if (it == 0) nm->stalled = PETSC_FALSE;
  if (it > nm->max_it) PetscFunctionReturn(PETSC_SUCCESS);
  nm->fh[it] = fn;
  if (*reason == SNES_CONVERGED_ITERATING && nm->freeze && nm->fz_restarts < DEM_NM_FZ_MAX_RESTARTS) {
    PetscInt nnew;
    PetscCall(DemNmFreezeWatch(nm, &nnew));
    nm->fz_pending += nnew; /* held at once: holding them only when the solve stalls (at
                               stall_iterations) measured worse, pour window of
                               benchmarks/stiff_pile/README.md: 9044 against 6900 Newton */
    if (nm->fz_pending) {
      DemNmFreezeApply(nm);
      nm->fz_frozen += nm->fz_pending; /* over the ranks */
      nm->fz_pending = 0;
      nm->refreeze   = PETSC_TRUE;
      *reason        = SNES_DIVERGED_MAX_IT;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  if (*reason == SNES_CONVERGED_ITERATING && nm->adapt && nm->stall_its > 0 && it >= nm->stall_its) {
    PetscReal before = PETSC_MAX_REAL, recent = PETSC_MAX_REAL;
    for (PetscInt k = 0; k <= it - 3; k++) before = PetscMin(before, nm->fh[k]);
    for (PetscInt k = it - 2; k <= it; k++) recent = PetscMin(recent, nm->fh[k]);
    if (!(recent < 0.5 * before)) {
      nm->stalled = PETSC_TRUE;
      *reason     = SNES_DIVERGED_MAX_IT;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorSetUp_Newmark(DemIntegrator ig, DemSim sim)
{
  DemIntegrator_Newmark *nm = (DemIntegrator_Newmark *)ig->data;
  DemBodyStore          *bs = &sim->bodies;
  const PetscInt         nb = bs->n + bs->nghost;
  KSP                    ksp;
  PC                     pc;
  SNESLineSearch         ls;

  PetscFunctionBegin;
  nm->sim = sim;
  if (sim->size > 1) PetscCall(DemNmMPICreate_Private(sim, &nm->mpi)); /* several ranks (newmark_mpi.c) */
  nm->mpibuild = -1;
  nm->nb  = nb;
  nm->dt0 = sim->dt;
  if (!nm->dtmax_set) nm->dtmax = sim->dt;
  if (!nm->dtmin_set) nm->dtmin = 1e-9 * sim->dt;
  ig->dt_min = nm->dtmin;
  PetscCall(DemNmReserve(nm, nb));
  PetscCall(PetscMalloc5(nb + 1, &nm->row, 3 * nb + 1, &nm->acc, 3 * nb + 1, &nm->wacc, nb + 1, &nm->rs, 3 * nb + 1, &nm->tm));
  PetscCall(DemJacobianNumbering_Private(sim, nm->row, &nm->nrows));
  for (PetscInt i = 0; i < nb; i++) nm->rs[i] = bs->radius[i] > 0 ? 1.0 / bs->radius[i] : 1.0;
  nm->rmin = nm->mmin = PETSC_MAX_REAL;
  for (PetscInt i = 0; i < nb; i++)
    if (nm->row[i] >= 0) nm->rmin = PetscMin(nm->rmin, bs->radius[i]), nm->mmin = PetscMin(nm->mmin, bs->m[i]);
  if (nm->mpi) { /* over the ranks; the vectors follow the distribution (DemNmDistribute) */
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nm->rmin, 1, MPIU_REAL, MPIU_MIN, sim->comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nm->mmin, 1, MPIU_REAL, MPIU_MIN, sim->comm));
  }
  if (nm->rmin == PETSC_MAX_REAL) nm->rmin = nm->mmin = 1;
  if (!nm->mpi) {
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, 6 * nm->nrows, &nm->X));
    PetscCall(VecSetBlockSize(nm->X, 6));
    PetscCall(VecDuplicate(nm->X, &nm->R));
    PetscCall(VecDuplicate(nm->X, &nm->Xlast));
  }
  PetscCall(SNESCreate(nm->mpi ? sim->comm : PETSC_COMM_SELF, &nm->snes));
  PetscCall(SNESSetType(nm->snes, SNESNEWTONLS));
  PetscCall(SNESGetLineSearch(nm->snes, &ls));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHSHELL));
  PetscCall(SNESLineSearchShellSetUserFunc(ls, DemNmLineSearch, nm));
  PetscCall(SNESSetFunction(nm->snes, nm->R, DemNmFunction, nm));
  PetscCall(SNESSetTolerances(nm->snes, PETSC_DEFAULT, 1e-8, PETSC_DEFAULT, nm->max_it, PETSC_DEFAULT));
  PetscCall(PetscMalloc1(nm->max_it + 1, &nm->fh));
  PetscCall(SNESSetConvergenceTest(nm->snes, DemNmConverged, nm, NULL));
  PetscCall(SNESGetKSP(nm->snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, nm->mpi ? PCBJACOBI : PCILU)); /* MPI: ILU(0) of each rank's diagonal block */
  PetscCall(KSPSetTolerances(ksp, 1e-10, 1e-300, PETSC_DEFAULT, 1000));
  PetscCall(SNESSetFromOptions(nm->snes));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-snes_atol", &nm->atol_user));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-ksp_atol", &nm->katol_user));
  nm->nlbuild = -1;
  nm->patstep = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* keys of the contacts in sim->cl: (gid a, gid b, feature) with gid a < gid b; sign +-1 */
static inline void DemNmKey(DemSim sim, PetscInt c, int64_t k[3], PetscReal *sign)
{
  int64_t ga = sim->bodies.gid[sim->cl.a[c]], gb = sim->bodies.gid[sim->cl.b[c]];
  *sign = 1;
  if (ga > gb) {
    int64_t s = ga;
    ga = gb, gb = s, *sign = -1;
  }
  k[0] = ga, k[1] = gb, k[2] = sim->cl.feature[c];
}

static int DemNmCmpKey(const void *x, const void *y)
{
  const int64_t *a = (const int64_t *)x, *b = (const int64_t *)y;
  for (int k = 0; k < 3; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

/* sorted keys (and optionally normals and gaps, 4 per contact) of every contact in sim->cl */
static PetscErrorCode DemNmCollect(DemIntegrator_Newmark *nm, PetscInt *n, PetscInt *cap, int64_t **keys, PetscReal **nrm)
{
  DemSim         sim = nm->sim;
  const PetscInt m   = sim->cl.n;

  PetscFunctionBegin;
  PetscCall(DemNmKeysReserve_Private(m, cap, keys, nrm));
  if (nrm) {
    /* sort an index (stored in the 4th slot of a scratch) by key: keys and normals together */
    int64_t   *tmp;
    PetscReal *tn;
    if (m > nm->ctcap) {
      PetscCall(PetscFree2(nm->ctmp, nm->ctn));
      nm->ctcap = PetscMax(m, 2 * nm->ctcap);
      PetscCall(PetscMalloc2(4 * nm->ctcap + 4, &nm->ctmp, 4 * nm->ctcap + 4, &nm->ctn));
    }
    tmp = nm->ctmp, tn = nm->ctn;
    for (PetscInt c = 0; c < m; c++) {
      PetscReal s;
      DemNmKey(sim, c, tmp + 4 * c, &s);
      tmp[4 * c + 3] = c;
      for (int j = 0; j < 3; j++) tn[4 * c + j] = s * sim->cl.nrm[3 * c + j];
      tn[4 * c + 3] = sim->cl.gap[c];
    }
    if (m > 1) qsort(tmp, (size_t)m, 4 * sizeof(int64_t), DemNmCmpKey); /* tmp is NULL for m = 0 */
    for (PetscInt c = 0; c < m; c++) {
      const PetscInt o = (PetscInt)tmp[4 * c + 3];
      for (int j = 0; j < 3; j++) (*keys)[3 * c + j] = tmp[4 * c + j];
      for (int j = 0; j < 4; j++) (*nrm)[4 * c + j] = tn[4 * o + j];
    }
  } else {
    for (PetscInt c = 0; c < m; c++) {
      PetscReal s;
      DemNmKey(sim, c, *keys + 3 * c, &s);
    }
    if (m > 1) qsort(*keys, (size_t)m, 3 * sizeof(int64_t), DemNmCmpKey);
  }
  *n = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscInt DemNmFind(const int64_t *keys, PetscInt n, const int64_t k[3])
{
  PetscInt lo = 0, hi = n - 1;
  while (lo <= hi) {
    PetscInt mid = (lo + hi) / 2;
    int      c   = DemNmCmpKey(keys + 3 * mid, k);
    if (!c) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* a rejected step: the state stays, the run retries with h/2 */
static PetscErrorCode DemNmReject(DemIntegrator ig, DemSim sim, const char why[], PetscInt its, PetscReal res, DemStepInfo *info)
{
  DemIntegrator_Newmark *nm = (DemIntegrator_Newmark *)ig->data;

  PetscFunctionBegin;
  sim->time      = nm->tn;
  sim->inc_x     = NULL;
  sim->inc_alpha = NULL;
  sim->slip_mode = NULL;
  PetscCheck(nm->adapt, sim->comm, PETSC_ERR_NOT_CONVERGED, "integrator newmark: step %" PetscInt_FMT " at t = %g s (dt = %g s): %s; set adapt: true or reduce dt", sim->step + 1, (double)nm->tn, (double)nm->h, why);
  if (!sim->out.quiet) PetscCall(PetscPrintf(sim->comm, "newmark: step %" PetscInt_FMT " t = %.10g s: dt cut %g -> %g s: %s\n", sim->step + 1, (double)nm->tn, (double)nm->h, (double)(0.5 * nm->h), why));
  nm->nok          = 0;
  info->accepted   = PETSC_FALSE;
  info->converged  = PETSC_FALSE;
  info->dt_next    = 0.5 * nm->h;
  info->iterations = its;
  info->residual   = res;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the accelerations at the store's state: F/m and J^-1 (M - w x J w) */
static PetscErrorCode DemNmInitialAcceleration(DemIntegrator_Newmark *nm)
{
  DemSim        sim = nm->sim;
  DemBodyStore *bs  = &sim->bodies;
  DemForceOut   fo;
  DemState      st  = {bs->x, bs->v, bs->w, bs->q};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&fo, sizeof(fo)));
  fo.f = nm->f;
  fo.t = nm->t;
  PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, PETSC_FALSE, &fo));
  PetscCall(PetscArraycpy(nm->tm, nm->t, 3 * nm->nb));
  for (PetscInt i = 0; i < nm->nb; i++) {
    PetscReal Jw[3], wJw[3], rhs[3], b[3];
    for (int k = 0; k < 3; k++) nm->acc[3 * i + k] = nm->wacc[3 * i + k] = 0;
    if (nm->row[i] < 0) continue;
    for (int k = 0; k < 3; k++) nm->acc[3 * i + k] = nm->f[3 * i + k] * bs->inv_m[i];
    DemQuatRotateInv(bs->q + 4 * i, bs->w + 3 * i, b);
    for (int k = 0; k < 3; k++) b[k] *= bs->I[3 * i + k];
    DemQuatRotate(bs->q + 4 * i, b, Jw);
    DemNmCross(bs->w + 3 * i, Jw, wJw);
    for (int k = 0; k < 3; k++) rhs[k] = nm->t[3 * i + k] - wJw[k];
    DemQuatRotateInv(bs->q + 4 * i, rhs, b);
    for (int k = 0; k < 3; k++) b[k] *= bs->inv_I[3 * i + k];
    DemQuatRotate(bs->q + 4 * i, b, nm->wacc + 3 * i);
    if (sim->dim == 2) nm->acc[3 * i + 2] = nm->wacc[3 * i] = nm->wacc[3 * i + 1] = 0;
  }
  /* the contacts at i for the penetration test and the release weights */
  PetscCall(DemNmReleaseRecord(nm));
  PetscCall(DemNmCollect(nm, &nm->npen, &nm->pencap, &nm->pk, &nm->pn));
  if (nm->mpi) { /* MPI: every rank's; the accelerations into the per-body field */
    PetscCall(DemNmMPIGatherKeys_Private(nm->mpi, &nm->npen, &nm->pencap, &nm->pk, &nm->pn));
    DemNmMPISave(nm, PETSC_FALSE);
  }
  nm->accvalid = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a body's expected displacement in a step of h from i, h |v| + h^2 |acc| / 2 (000 section
   2.6.3): the neighbour list's margin (DemIntegratorStep_Newmark) and the near pattern's */
static inline PetscReal DemNmReach(const DemIntegrator_Newmark *nm, PetscInt i, PetscReal h)
{
  const PetscReal *v = nm->sim->bodies.v + 3 * i, *g = nm->acc + 3 * i;
  PetscReal        v2 = 0, a2 = 0;

  for (int k = 0; k < 3; k++) v2 += PetscSqr(v[k]), a2 += PetscSqr(g[k]);
  return h * PetscSqrtReal(v2) + 0.5 * h * h * PetscSqrtReal(a2);
}

/* the nonzero pattern of the Jacobian, fixed at its creation: a zero block for every body, bond
   and pair of the neighbour list (`jacobian_pattern: list`, made at each build of the list), or
   (`near`, the default on one rank, made at the start of each step) of the pairs that may touch
   in the step: those of two spheres whose gap at i is below 0.01 (r_a + r_b) plus twice the
   two bodies' expected displacements h |v| + h^2 |acc| / 2 (the neighbour list's own measure,
   000 section 2.6.3), and every pair of other shapes. A pair outside it that touches after all
   is added by the assembly (MAT_NEW_NONZERO_ALLOCATION_ERR is off), the same way in a run and in
   its restart. PETSc squeezes the unused preallocation out at the first assembly, so that the
   pattern (and ILU(0), and the last bits of Newton's solution) would otherwise depend on the
   contacts of the first evaluation - which a restart from a checkpoint does not reproduce.
   The list's pattern holds every candidate pair: in the stiff_pile pour (N = 2000, t = 0.051 s,
   skin 0.5 mm) 7927 pairs for ~800 contacts, and ILU(0), its triangular solves and the
   products of GMRES scale with it */
static PetscErrorCode DemNmJacobianPattern(DemIntegrator_Newmark *nm, PetscBool near)
{
  DemSim           sim = nm->sim;
  DemNeighbourList *nl = &sim->nl;
  DemBodyStore     *bs = &sim->bodies;
  const PetscInt   nbond = sim->bonds ? sim->bonds->n : 0;
  const PetscReal  h = nm->h, L[3] = {sim->hi[0] - sim->lo[0], sim->hi[1] - sim->lo[1], sim->hi[2] - sim->lo[2]};
  PetscReal        zero[36] = {0};

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nm->nb; i++)
    if (nm->row[i] >= 0) PetscCall(MatSetValuesBlocked(nm->J, 1, &nm->row[i], 1, &nm->row[i], zero, ADD_VALUES));
  for (PetscInt k = 0; k < nl->npairs + nbond; k++) {
    const PetscInt a = k < nl->npairs ? nl->a[k] : sim->bonds->a[k - nl->npairs];
    const PetscInt b = k < nl->npairs ? nl->b[k] : sim->bonds->b[k - nl->npairs];
    const PetscInt ra = nm->row[a], rb = nm->row[b];
    if (ra < 0 || rb < 0 || ra == rb) continue;
    if (near && k < nl->npairs && sim->shapes[bs->shape[a]]->kind == DEM_KIND_SPHERE && sim->shapes[bs->shape[b]]->kind == DEM_KIND_SPHERE) {
      PetscReal d2 = 0, sh[3]; /* the image shift from the pair's image index: no whole-list shift vectors */
      DemImageShift_Private(nl->shiftidx[k], L, sh);
      for (int j = 0; j < 3; j++) d2 += PetscSqr(bs->x[3 * a + j] - bs->x[3 * b + j] - sh[j]);
      if (PetscSqrtReal(d2) - bs->radius[a] - bs->radius[b] > 0.01 * (bs->radius[a] + bs->radius[b]) + 2 * (DemNmReach(nm, a, h) + DemNmReach(nm, b, h))) continue;
    }
    PetscCall(MatSetValuesBlocked(nm->J, 1, &ra, 1, &rb, zero, ADD_VALUES));
    PetscCall(MatSetValuesBlocked(nm->J, 1, &rb, 1, &ra, zero, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(nm->J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(nm->J, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the active set of the solve (friction.h): a contact sticking at i is held sticking (never
   capped: a smooth, linear tangential force), one sliding at i keeps the law's own switching
   (DEM_SLIP_FREE); set at each slot's first evaluation from its committed state. Slots are the
   neighbour list's pairs (and feature slots), so this follows every rebuild of the list.
   Imposing the slip too (Ft = mu fn along the trial force) was measured worse: stiff_pile
   N = 100, beta 0.3, gamma 0.5, to t = 0.05 s: 11199 steps, 49727 Newton iterations, 11.5 s
   CPU, against 7158, 32299, 7.9 s without an active set and 6946, 32313, 7.6 s with this one
   (299 instead of 513 cut steps): a sliding contact whose trial force turns through zero
   (a rebound) has no smooth direction. Over the longer pour the re-solves cost more than they
   save: to t = 0.09 s 114320 Newton iterations against 78701 without an active set
   (benchmarks/stiff_pile/README.md), so active_set is off by default */
static PetscErrorCode DemNmActiveSetReset(DemIntegrator_Newmark *nm)
{
  DemSim         sim = nm->sim;
  const PetscInt n   = sim->nl.histcap;

  PetscFunctionBegin;
  if (!nm->active_set && !nm->freeze) PetscFunctionReturn(PETSC_SUCCESS);
  if (n > nm->smodecap) {
    PetscCall(PetscFree(nm->smode));
    PetscCall(PetscFree3(nm->fzs, nm->fzt, nm->fzseen));
    nm->smodecap = nm->fzcap = PetscMax(n, 2 * nm->smodecap);
    PetscCall(PetscMalloc1(nm->smodecap, &nm->smode));
    PetscCall(PetscMalloc3(nm->fzcap, &nm->fzs, 3 * nm->fzcap, &nm->fzt, nm->fzcap, &nm->fzseen));
  }
  /* the cycle freeze: every slot free (the law's own switching) until it cycles */
  for (PetscInt k = 0; k < nm->smodecap; k++) nm->smode[k] = nm->active_set ? DEM_SLIP_UNSET | DEM_SLIP_FREE : DEM_SLIP_FREE;
  PetscCall(PetscArrayzero(nm->fzs, nm->fzcap));
  PetscCall(PetscArrayzero(nm->fzt, 3 * nm->fzcap));
  PetscCall(PetscArrayzero(nm->fzseen, nm->fzcap));
  nm->fzcheck = 0;
  nm->fzbuild   = nm->sim->nl.nbuilds;
  nm->as_passes = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmFreezeWatch - the cycle freeze (key freeze_cycles): Newton on the Coulomb cap cycles
  when a contact's trial force jumps across the cone between iterates (a stiff tangential
  spring, kt h >> the inertia, leaves a stick region narrower than the Newton step; in one
  dimension r(v) = A v + clamp(kt h v + F0, +-mu fn) from the sliding side lands on the
  other sliding side and back). Called at every iterate of a solve (DemNmConverged, the
  contacts of the last evaluation, which is at the iterate): per history slot the state
  (closed, sliding) of the last two iterates; a sliding state that flipped back (stick ->
  slide -> stick, slide -> stick -> slide) or a sliding direction that reversed between two
  iterates (t . t_prev < 0) marks the slot: *nnew counts them. DemNmFreezeApply holds the
  marked slots sticking (friction.h mode 0: never capped, a linear tangential force), the
  solve restarts from the iterate, and after convergence DemNmActiveSetCheck releases every
  held contact whose trial force is outside its cone (the law's own switching again, never
  held again in the step) and solves again - a primal-dual active set on the Coulomb state,
  started only where the consistent Newton cycles. The accepted state is evaluated with the
  law's own switching, which at a verified set gives the same force (friction.h
  DEM_SLIP_TOL), so the converged residual is the law's (DemNmFreezeVerify checks it). Onset
  cycles (closed -> open -> closed: the Hertzian dashpot's cn ~ overlap^(1/4), whose root lies
  at a tiny overlap) are not treated here: holding such a contact open or closed does not give
  the law's root (benchmarks/stiff_pile/README.md, session 10); DemNmOnsetScale treats them.
*/
#define DEM_NM_FZ_CLOSED   1
#define DEM_NM_FZ_SLIP     2
#define DEM_NM_FZ_HAS1     16 /* the state of the last check is set (bits 0-1), */
#define DEM_NM_FZ_HAS2     32 /* and of the one before it (bits 2-3) */
#define DEM_NM_FZ_RELEASED 64 /* released after a verification: not held again in this step */
#define DEM_NM_FZ_MARK     128
static PetscErrorCode DemNmFreezeWatch(DemIntegrator_Newmark *nm, PetscInt *nnew)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;

  PetscFunctionBegin;
  *nnew = 0;
  if (!nm->freeze || !sim->slip_mode || nm->fzbuild != sim->nl.nbuilds) PetscFunctionReturn(PETSC_SUCCESS);
  nm->fzcheck++;
  for (PetscInt c = 0; c < cl->n; c++) {
    const PetscInt   k  = cl->hist[c];
    const PetscReal *ft = sim->cf.ft + 3 * c;
    unsigned char    w, st, p1, p2;
    PetscReal       *tp, a;
    PetscBool        flip;
    if (k < 0 || k >= nm->fzcap) continue;
    nm->fzseen[k] = nm->fzcheck;
    w  = nm->fzs[k];
    tp = nm->fzt + 3 * k;
    st = (unsigned char)((cl->gap[c] < 0 ? DEM_NM_FZ_CLOSED : 0) | (sim->cf.slip[c] ? DEM_NM_FZ_SLIP : 0));
    p1 = w & 3, p2 = (w >> 2) & 3;
    flip = ((w & DEM_NM_FZ_HAS2) && (st & DEM_NM_FZ_CLOSED) && (p1 & DEM_NM_FZ_CLOSED) && (p2 & DEM_NM_FZ_CLOSED) && st == p2 && st != p1) ? PETSC_TRUE : PETSC_FALSE;
    a    = sim->cf.slip[c] ? PetscSqrtReal(ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2]) : 0;
    if (a > 0 && (w & DEM_NM_FZ_HAS1) && (p1 & DEM_NM_FZ_SLIP) && ft[0] * tp[0] + ft[1] * tp[1] + ft[2] * tp[2] < 0) flip = PETSC_TRUE;
    for (int j = 0; j < 3; j++) tp[j] = a > 0 ? ft[j] / a : 0;
    w = (unsigned char)((w & (DEM_NM_FZ_RELEASED | DEM_NM_FZ_MARK)) | st | (p1 << 2) | DEM_NM_FZ_HAS1 | ((w & DEM_NM_FZ_HAS1) ? DEM_NM_FZ_HAS2 : 0));
    if (flip && !(w & (DEM_NM_FZ_RELEASED | DEM_NM_FZ_MARK)) && (nm->smode[k] & DEM_SLIP_FREE)) {
      w |= DEM_NM_FZ_MARK;
      (*nnew)++;
    }
    nm->fzs[k] = w;
  }
  for (PetscInt k = 0; k < nm->fzcap; k++) { /* a slot not in the list is open */
    unsigned char w = nm->fzs[k], p1 = w & 3;
    if (nm->fzseen[k] == nm->fzcheck || !(w & DEM_NM_FZ_HAS1)) continue;
    nm->fzs[k] = (unsigned char)((w & (DEM_NM_FZ_RELEASED | DEM_NM_FZ_MARK)) | (p1 << 2) | DEM_NM_FZ_HAS1 | DEM_NM_FZ_HAS2);
    nm->fzt[3 * k] = nm->fzt[3 * k + 1] = nm->fzt[3 * k + 2] = 0;
  }
  if (sim->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, nnew, 1, MPIU_INT, MPI_SUM, sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the marked slots held sticking (DemNmFreezeWatch) */
static void DemNmFreezeApply(DemIntegrator_Newmark *nm)
{
  for (PetscInt k = 0; k < nm->fzcap; k++)
    if ((nm->fzs[k] & DEM_NM_FZ_MARK) && (nm->smode[k] & DEM_SLIP_FREE)) nm->smode[k] = 0;
}

/*
  DemNmActiveSetCheck - after a converged solve with the stick/slip active set: a contact held
  sticking whose trial force left the Coulomb cone at the solution is released to the law's own
  switching; *again: solve the step again (warm start from the solution). After 8 passes with
  changes the step is solved once more with the law's own switching everywhere. Collective.
*/
static PetscErrorCode DemNmActiveSetCheck(DemIntegrator_Newmark *nm, PetscBool *again)
{
  DemSim                sim = nm->sim;
  const DemContactList *cl  = &sim->cl;
  PetscInt              nw  = 0;

  PetscFunctionBegin;
  *again = PETSC_FALSE;
  if (!sim->slip_mode) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt c = 0; c < cl->n; c++) {
    const PetscInt k = cl->hist[c];
    if (k < 0 || k >= sim->nslip_mode || !(cl->gap[c] < 0) || !(nm->smode[k] & DEM_SLIP_WRONG)) continue;
    nm->smode[k] = DEM_SLIP_FREE;
    if (nm->freeze && k < nm->fzcap) nm->fzs[k] |= DEM_NM_FZ_RELEASED;
    nw++;
  }
  if (sim->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nw, 1, MPIU_INT, MPI_SUM, sim->comm));
  if (!nw) PetscFunctionReturn(PETSC_SUCCESS);
  if (nm->freeze) nm->fz_released += nw;
  if (++nm->as_passes > 8) sim->slip_mode = NULL;
  *again = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmFreezeVerify - after a converged solve with contacts held sticking (DemNmFreezeWatch) and
  verified in their cones (DemNmActiveSetCheck): the residual of 000 eq. (61)-(63) with the
  laws' own switching everywhere at the solution, which must be below the solve's own (the
  larger of the absolute tolerance and twice the converged |R|); otherwise every held contact
  is released and *again asks for another solve. Records the largest ratio (fz_rlaw).
  Collective.
*/
static PetscErrorCode DemNmFreezeVerify(DemIntegrator_Newmark *nm, PetscReal fnorm, PetscBool *again)
{
  DemSim       sim  = nm->sim;
  signed char *mode = sim->slip_mode;
  PetscInt     held = 0;
  PetscReal    atol, rl;
  Vec          W;

  PetscFunctionBegin;
  *again = PETSC_FALSE;
  if (!nm->freeze || !mode) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; k < nm->fzcap; k++) held += (nm->fzs[k] & DEM_NM_FZ_MARK) && !(nm->smode[k] & DEM_SLIP_FREE);
  if (sim->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &held, 1, MPIU_INT, MPI_SUM, sim->comm));
  if (!held) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SNESGetTolerances(nm->snes, &atol, NULL, NULL, NULL, NULL));
  PetscCall(SNESGetSolutionUpdate(nm->snes, &W)); /* scratch of the size of X */
  sim->slip_mode = NULL;
  PetscCall(DemNmFunction(nm->snes, nm->X, W, nm));
  sim->slip_mode = mode;
  PetscCall(VecNorm(W, NORM_2, &rl));
  nm->fz_rlaw = PetscMax(nm->fz_rlaw, rl / PetscMax(atol, fnorm));
  if (rl <= PetscMax(atol, 2 * fnorm)) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; k < nm->fzcap; k++)
    if ((nm->fzs[k] & DEM_NM_FZ_MARK) && !(nm->smode[k] & DEM_SLIP_FREE)) nm->smode[k] = DEM_SLIP_FREE, nm->fzs[k] |= DEM_NM_FZ_RELEASED;
  nm->fz_released += held;
  *again = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorStep_Newmark(DemIntegrator ig, DemSim sim, PetscReal h, DemStepInfo *info)
{
  DemIntegrator_Newmark *nm = (DemIntegrator_Newmark *)ig->data;
  DemBodyStore          *bs = &sim->bodies;
  PetscInt               nb = bs->n + bs->nghost; /* MPI: changes at a rebuild (DemNmDistribute) */
  const PetscReal        be = nm->beta, ga = nm->gamma;
  DemForceOut            fo;
  PetscReal              reach = 0, fnorm = 0, pn, pnew;
  PetscInt               its_total = 0, pass, its_as = 0; /* its_as: of the active set's re-solves */
  PetscBool              asresolve = PETSC_FALSE;
  SNESConvergedReason    reason;
  PetscScalar           *xx;
  char                   why[512];

  PetscFunctionBegin;
  PetscCall(DemNmDistribute(nm)); /* MPI: a rebuild since the last step (set-up, a restart) */
  nb = bs->n + bs->nghost;
  PetscCheck(nb == nm->nb, sim->comm, PETSC_ERR_SUP, "integrator newmark: the number of bodies changed (%" PetscInt_FMT " -> %" PetscInt_FMT ")", nm->nb, nb);
  PetscCheck(h > 0 && !PetscIsInfOrNanReal(h), sim->comm, PETSC_ERR_ARG_OUTOFRANGE, "integrator newmark: step %" PetscInt_FMT " with dt = %g s", sim->step + 1, (double)h);
  if (!(nm->dt0 > 0)) nm->dt0 = h;
  nm->h  = h;
  nm->tn = sim->time;
  nm->a1 = 1 / (be * h * h);
  nm->a2 = 1 / (be * h);
  nm->a3 = (1 - 2 * be) / (2 * be);
  nm->a4 = ga / (be * h);
  nm->a5 = 1 - ga / be;
  nm->a6 = (1 - ga / (2 * be)) * h;
  PetscCall(DemSimReserveDissipative_Private(sim));
  if (!nm->accvalid) PetscCall(DemNmInitialAcceleration(nm));
  /* the neighbour list must hold for the expected displacement of the step (000 2.6.3) */
  for (PetscInt i = 0; i < bs->n; i++) { /* MPI: the owned bodies, then over the ranks */
    if (nm->row[i] < 0 && !(bs->flags[i] & DEM_PRESCRIBED)) continue;
    reach = PetscMax(reach, DemNmReach(nm, i, h));
  }
  if (nm->mpi) PetscCall(DemNmMPIMax_Private(nm->mpi, &reach));
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_FALSE));
  PetscCall(DemNmDistribute(nm)); /* MPI: after a rebuild */
  nb = nm->nb;
  if (sim->nl.x0 && sim->skin > 0) {
    PetscReal mx = 0;
    for (PetscInt i = 0; i < bs->n; i++) {
      PetscReal d2 = 0;
      for (int k = 0; k < 3; k++) d2 += PetscSqr(bs->x[3 * i + k] - sim->nl.x0[3 * i + k]);
      mx = PetscMax(mx, d2);
    }
    if (nm->mpi) PetscCall(DemNmMPIMax_Private(nm->mpi, &mx));
    if (PetscSqrtReal(mx) + reach > 0.5 * sim->skin) {
      PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
      PetscCall(DemNmDistribute(nm)); /* MPI */
      nb = nm->nb;
    }
  }
  for (PetscInt i = 0; i < nb; i++)
    if (nm->row[i] >= 0) DemNmWorldInertia(bs->q + 4 * i, bs->I + 3 * i, nm->Ji + 9 * i);
  PetscCall(PetscArraycpy(nm->fdn, sim->fd, 3 * nb));
  PetscCall(PetscArraycpy(nm->tdn, sim->td, 3 * nb));
  /* predictor: acc(i+1) = acc(i) */
  PetscCall(VecGetArray(nm->X, &xx));
  for (PetscInt i = 0; i < nb; i++) {
    const PetscInt r = nm->row[i];
    if (r < 0) continue;
    for (int k = 0; k < 3; k++) {
      xx[6 * r + k]     = h * bs->v[3 * i + k] + 0.5 * h * h * nm->acc[3 * i + k];
      xx[6 * r + 3 + k] = h * bs->w[3 * i + k] + 0.5 * h * h * nm->wacc[3 * i + k];
    }
    for (int k = 0; k < 6; k++)
      if (DemNmFrozen(sim, k)) xx[6 * r + k] = 0;
  }
  PetscCall(VecRestoreArray(nm->X, &xx));
  if (!nm->atol_user) {
    PetscReal atol = 1e-12 * nm->rmin * nm->mmin / (be * h * h) * PetscSqrtReal((PetscReal)PetscMax(1, nm->mpi ? nm->nglobal : nm->nrows));
    PetscCall(SNESSetTolerances(nm->snes, atol, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  }
  if (!nm->katol_user) { /* a linear residual below 1e-2 of the SNES's absolute tolerance is solved */
    KSP       ksp;
    PetscReal atol;
    PetscCall(SNESGetTolerances(nm->snes, &atol, NULL, NULL, NULL, NULL));
    PetscCall(SNESGetKSP(nm->snes, &ksp));
    PetscCall(KSPSetTolerances(ksp, PETSC_DEFAULT, 1e-2 * atol, PETSC_DEFAULT, PETSC_DEFAULT));
  }
  PetscCall(DemNmActiveSetReset(nm));
  PetscCall(DemNmCycleWatch(nm, PETSC_TRUE));
  sim->slip_mode  = nm->active_set || nm->freeze ? nm->smode : NULL;
  sim->nslip_mode = nm->active_set || nm->freeze ? nm->smodecap : 0;
  nm->fz_restarts = nm->fz_pending = 0;
  nm->refreeze    = PETSC_FALSE;
  for (pass = 0;; pass++) {
    PetscInt  its, nnew = 0;
    PetscBool moved = PETSC_FALSE, again;
    if (!nm->J || nm->nlbuild != sim->nl.nbuilds || (!nm->mpi && nm->pattern == 0 && nm->patstep != sim->step)) {
      PetscCall(MatDestroy(&nm->J));
      if (nm->mpi) PetscCall(DemJacobianCreateGlobal_Private(sim, MATBAIJ, DemNmMPIGlobalRows_Private(nm->mpi), nm->nrows, &nm->J)); /* MPI: its pattern assembled with zeros (jacobian.c) */
      else {
        PetscCall(DemJacobianCreate_Private(sim, MATBAIJ, nm->row, nm->nrows, &nm->J));
        PetscCall(DemNmJacobianPattern(nm, nm->pattern == 0 ? PETSC_TRUE : PETSC_FALSE));
      }
      PetscCall(SNESSetJacobian(nm->snes, nm->J, nm->J, DemNmJacobian, nm));
      nm->nlbuild = sim->nl.nbuilds;
      nm->patstep = sim->step;
    }
    nm->lastvalid = PETSC_FALSE;
    PetscCall(SNESSolve(nm->snes, NULL, nm->X));
    PetscCall(SNESGetConvergedReason(nm->snes, &reason));
    PetscCall(SNESGetIterationNumber(nm->snes, &its));
    PetscCall(SNESGetFunctionNorm(nm->snes, &fnorm));
    its_total += its;
    if (asresolve) its_as += its;
    nm->newton_total += its;
    {
      PetscInt lits;
      PetscCall(SNESGetLinearSolveIterations(nm->snes, &lits));
      nm->ksp_total += lits;
    }
    if (reason <= 0 && nm->refreeze && !PetscIsInfOrNanReal(fnorm)) { /* contacts held sticking (DemNmFreezeWatch): again from the iterate */
      nm->refreeze = PETSC_FALSE;
      nm->fz_restarts++;
      continue;
    }
    nm->refreeze = PETSC_FALSE;
    if (reason <= 0 || PetscIsInfOrNanReal(fnorm)) {
      if (nm->stalled) PetscCall(PetscSNPrintf(why, sizeof(why), "SNES stalled (|R| not halved in 3 iterations, %" PetscInt_FMT " iterations, |R| %g)", its, (double)fnorm));
      else PetscCall(PetscSNPrintf(why, sizeof(why), "SNES did not converge (%s, %" PetscInt_FMT " iterations, |R| %g)", SNESConvergedReasons[reason], its, (double)fnorm));
      nm->cuts_snes++;
      PetscCall(DemNmReject(ig, sim, why, its_total, fnorm, info));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    /* the contacts the solution saw: those of the last evaluation when it was at the solution
       (always with newmark's line search: one residual evaluation less per solve), else anew */
    {
      PetscBool same = PETSC_FALSE;
      if (nm->lastvalid) PetscCall(VecEqual(nm->X, nm->Xlast, &same));
      if (!same) {
        PetscCall(DemNmTrialState(nm, nm->X));
        PetscCall(DemNmEval(nm, PETSC_FALSE, nm->f, nm->t, NULL, NULL, &fo));
      }
    }
    nm->lastvalid = PETSC_FALSE;
    /* the stick/slip active set: a contact on the wrong side of its Coulomb test is flipped
       and the step solved again */
    PetscCall(DemNmActiveSetCheck(nm, &again));
    asresolve = again;
    if (again) continue;
    PetscCall(DemNmFreezeVerify(nm, fnorm, &again));
    if (again) continue;
    /* night owls: can the list still vouch for every contact at the new positions? */
    if (sim->nl.x0 && sim->skin > 0) {
      PetscReal mx = 0;
      for (PetscInt i = 0; i < bs->n; i++) {
        PetscReal d2 = 0;
        for (int k = 0; k < 3; k++) d2 += PetscSqr(nm->x[3 * i + k] - sim->nl.x0[3 * i + k]);
        mx = PetscMax(mx, d2);
      }
      if (nm->mpi) PetscCall(DemNmMPIMax_Private(nm->mpi, &mx));
      moved = PetscSqrtReal(mx) > 0.5 * sim->skin ? PETSC_TRUE : PETSC_FALSE;
    }
    if (!moved) break;
    PetscCall(DemNmCollect(nm, &nm->nseen, &nm->seencap, &nm->sk, NULL));
    if (nm->mpi) { /* every rank's (a pair may change rank), the search, the iterate in the new layout */
      PetscCall(DemNmMPIGatherKeys_Private(nm->mpi, &nm->nseen, &nm->seencap, &nm->sk, NULL));
      PetscCall(DemNmMPIResearch(nm));
      nb = nm->nb;
    } else {
      /* the search at the new positions (the list builder reads the store's positions) */
      PetscCall(PetscArraycpy(nm->fd, bs->x, 3 * nb));
      PetscCall(PetscArraycpy(bs->x, nm->x, 3 * nb));
      PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
      PetscCall(PetscArraycpy(bs->x, nm->fd, 3 * nb));
    }
    if (sim->slip_mode) { /* the list's slots changed: the active set anew */
      PetscCall(DemNmActiveSetReset(nm));
      sim->slip_mode  = nm->smode;
      sim->nslip_mode = nm->smodecap;
    }
    PetscCall(DemNmEval(nm, PETSC_FALSE, nm->f, nm->t, NULL, NULL, &fo));
    for (PetscInt c = 0; c < sim->cl.n; c++) {
      int64_t   k[3];
      PetscReal s;
      DemNmKey(sim, c, k, &s);
      if (DemNmFind(nm->sk, nm->nseen, k) < 0) nnew++;
    }
    if (nm->mpi) PetscCall(DemNmMPISumInt_Private(nm->mpi, &nnew));
    if (!nnew) break;
    nm->night_owls += nnew;
    if (!sim->out.quiet) PetscCall(PetscPrintf(sim->comm, "newmark: step %" PetscInt_FMT " t = %.10g s: %" PetscInt_FMT " night-owl contact(s), solving the step again\n", sim->step + 1, (double)nm->tn, nnew));
    PetscCheck(pass < 20, sim->comm, PETSC_ERR_NOT_CONVERGED, "integrator newmark: step %" PetscInt_FMT ": night-owl contacts keep appearing after 20 solves", sim->step + 1);
  }
  sim->slip_mode = NULL; /* the accepted state is evaluated with the laws' own switching */
  /* a spurious root: the residual of eq. (17) stays bounded as |alpha| grows (Xi ~ 4/|alpha|^2),
     so Newton may converge to a rotation near pi; no step of a DEM body turns by > 1 rad */
  for (PetscInt i = 0; i < nb || nm->mpi; i++) { /* MPI: until the first failure on any rank (i = nb: none here) */
    const PetscReal *al = nm->da + 3 * PetscMin(i, nb - 1), a = i < nb ? PetscSqrtReal(al[0] * al[0] + al[1] * al[1] + al[2] * al[2]) : 0;
    PetscBool        bad = (i < nb && nm->row[i] >= 0 && !(a <= 1.0)) ? PETSC_TRUE : PETSC_FALSE;
    if (bad) PetscCall(PetscSNPrintf(why, sizeof(why), "body %" PetscInt_FMT " turns by %.3g rad in one step (Rodrigues |alpha| %.3g > 1)", (PetscInt)bs->gid[i], (double)(2 * PetscAtanReal(0.5 * a)), (double)a));
    if (nm->mpi && (bad || i >= nb)) PetscCall(DemDecompAgree_Private(sim, bad, &bad, why, sizeof(why)));
    if (bad) {
      nm->cuts_snes++;
      PetscCall(DemNmReject(ig, sim, why, its_total, fnorm, info));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (i >= nb) break; /* MPI: no rank failed */
  }
  /* penetration test, 000 section 2.4.7: n(i) . n(i+1) >= 0 for every contact present at both,
     and no overlap grows by more than max_overlap of the smaller radius in one step (a
     spurious root deep in a penalty contact); a deep overlap reached gradually (soft
     contacts, an impact) is physical and accepted */
  for (PetscInt c = 0; c < sim->cl.n || nm->mpi; c++) { /* MPI: as the rotation test above */
    int64_t   k[3];
    PetscReal s, d, grow;
    PetscInt  o;
    if (c >= sim->cl.n) {
      PetscBool bad = PETSC_FALSE;
      PetscCall(DemDecompAgree_Private(sim, PETSC_FALSE, &bad, why, sizeof(why)));
      if (!bad) break;
      nm->cuts_pen++;
      PetscCall(DemNmReject(ig, sim, why, its_total, fnorm, info));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    DemNmKey(sim, c, k, &s);
    o    = DemNmFind(nm->pk, nm->npen, k);
    d    = o < 0 ? 1 : s * (sim->cl.nrm[3 * c] * nm->pn[4 * o] + sim->cl.nrm[3 * c + 1] * nm->pn[4 * o + 1] + sim->cl.nrm[3 * c + 2] * nm->pn[4 * o + 2]);
    grow = PetscMax(0, -sim->cl.gap[c]) - (o < 0 ? 0 : PetscMax(0, -nm->pn[4 * o + 3]));
    if (d < 0 || grow > nm->max_overlap * DemNmContactRadius(sim, c)) {
      if (d < 0) PetscCall(PetscSNPrintf(why, sizeof(why), "penetration: the normal of the contact of bodies %" PetscInt_FMT " and %" PetscInt_FMT " turned over (n(i) . n(i+1) = %.3g, 000 section 2.4.7)", (PetscInt)k[0], (PetscInt)k[1], (double)d));
      else PetscCall(PetscSNPrintf(why, sizeof(why), "penetration: the overlap of bodies %" PetscInt_FMT " and %" PetscInt_FMT " grows by %.3g of the smaller radius in one step (> max_overlap %g)", (PetscInt)k[0], (PetscInt)k[1], (double)(grow / DemNmContactRadius(sim, c)), (double)nm->max_overlap));
      if (nm->mpi) { /* MPI: the other ranks agree on it (the lowest failing rank's message) */
        PetscBool any;
        PetscCall(DemDecompAgree_Private(sim, PETSC_TRUE, &any, why, sizeof(why)));
      }
      nm->cuts_pen++;
      PetscCall(DemNmReject(ig, sim, why, its_total, fnorm, info));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  /* accept: accelerations of eq. (21)-(22), the new state, forces with history commit */
  for (PetscInt i = 0; i < nb; i++) {
    if (nm->row[i] < 0) continue;
    for (int k = 0; k < 3; k++) nm->acc[3 * i + k] = nm->a1 * nm->dx[3 * i + k] - nm->a2 * bs->v[3 * i + k] - nm->a3 * nm->accE[3 * i + k];
    DemNmMatVec(nm->Qd + 9 * i, nm->cc + 3 * i, nm->wacc + 3 * i);
    if (sim->dim == 2) nm->acc[3 * i + 2] = nm->wacc[3 * i] = nm->wacc[3 * i + 1] = 0;
  }
  for (PetscInt k = 0; k < 3 * nb; k++) nm->fdn[k] = sim->fd[k], nm->tdn[k] = sim->td[k];
  {
    PetscReal *vold = nm->fd, *wold = nm->td; /* velocities at i, for the mean velocities */
    PetscCall(PetscArraycpy(vold, bs->v, 3 * nb));
    PetscCall(PetscArraycpy(wold, bs->w, 3 * nb));
    PetscCall(PetscArraycpy(bs->x, nm->x, 3 * nb));
    PetscCall(PetscArraycpy(bs->v, nm->v, 3 * nb));
    PetscCall(PetscArraycpy(bs->w, nm->w, 3 * nb));
    PetscCall(PetscArraycpy(bs->q, nm->q, 4 * nb));
    sim->time = nm->tn + h;
    PetscCall(DemSimApplyWalls_Private(sim));
    PetscCall(DemNmEval(nm, PETSC_TRUE, bs->f, bs->t, sim->fd, sim->td, &fo));
    /* the dashpots' work over the step's displacement (u, and the rotation vector of alpha):
       trapezoidal in the force, -(F_d(i) + F_d(i+1))/2 . u. For a linear spring-dashpot the
       energy error of a step is then -(beta - 1/4) h^2 (|F(i+1)|^2 - |F(i)|^2) / (2 m), which
       telescopes (the Newmark energy of gamma = 1/2); the power at the mean velocity,
       -h (P_d(i) + P_d(i+1)) / 2, the same for beta = 1/4, drifts instead by about
       (beta - 1/4) (w h)^2 of the dissipated energy (w the contact's frequency; measured in
       tests/cases/newmark_energy.sh); F_d(i) with the release weights (DemNmRelease) */
    (void)vold, (void)wold;
    pn = pnew = 0;
    for (PetscInt i = 0; i < bs->n; i++) {
      const PetscReal *al = nm->da + 3 * i, a = PetscSqrtReal(al[0] * al[0] + al[1] * al[1] + al[2] * al[2]);
      const PetscReal  th = a > 0 ? 2 * PetscAtanReal(0.5 * a) / a : 1; /* |theta| = 2 atan(|alpha| / 2), 000 eq. (6) */
      for (int k = 0; k < 3; k++) {
        const PetscInt j = 3 * i + k;
        pn += nm->fdE[j] * nm->dx[j] + nm->tdE[j] * th * al[k];
        pnew += sim->fd[j] * nm->dx[j] + sim->td[j] * th * al[k];
      }
    }
    if (nm->mpi) PetscCall(DemDecompSumPowers_Private(sim, &pn, &pnew)); /* MPI: over the ranks */
  }
  PetscCall(PetscArraycpy(nm->tm, bs->t, 3 * nb));
  /* wdot(i+1) from the equation of motion at the accepted state, J(i+1) wdot = M(i+1) -
     w x J(i+1) w, which the paper's pointwise balance (000 eq. (17), (19)) makes equal to eq.
     (22)'s Q c: with the discrete momentum balance above, Q c and M/J differ by a mode that
     gamma = 1/2 leaves undamped, wdot(i) - M(i)/J = -(wdot(i-1) - M(i-1)/J), so a wdot(i)
     of eq. (22) carries it into eq. (22)'s b (a6 wdot(i)) and alpha of every later step: a
     resting pile then rocked by an alternating rotation of ~0.1 h^2 |e| per step, and the
     predictor, off by 2 e, started each Newton solve far outside the Coulomb cones
     (measured: stiff_pile N = 100 at rest, t = 0.195 s: |R(predictor)| 4.6e-3 N, 6 Newton
     iterations per step at dt = 4.7 us, dt never grew; benchmarks/stiff_pile/README.md) */
  for (PetscInt i = 0; i < nb; i++) {
    if (nm->row[i] < 0) continue;
    DemNmDynamicWdot(bs, i, nm->tm, nm->wacc + 3 * i);
    if (sim->dim == 2) nm->wacc[3 * i] = nm->wacc[3 * i + 1] = 0;
  }
  sim->time             = nm->tn + h;
  sim->dissipated      += -0.5 * (pn + pnew) + fo.eslip;
  sim->dissip_rate_prev = fo.dissip_rate;
  sim->pe_contact       = fo.pe_contact;
  sim->ncontacts        = fo.ncontacts;
  PetscCall(DemNmReleaseRecord(nm));
  PetscCall(DemNmCollect(nm, &nm->npen, &nm->pencap, &nm->pk, &nm->pn));
  if (nm->mpi) { /* MPI: every rank's contacts at i; the state at i into the per-body field */
    PetscCall(DemNmMPIGatherKeys_Private(nm->mpi, &nm->npen, &nm->pencap, &nm->pk, &nm->pn));
    DemNmMPISave(nm, PETSC_FALSE);
  }
  info->accepted   = PETSC_TRUE;
  info->converged  = PETSC_TRUE;
  info->iterations = its_total;
  info->residual   = fnorm;
  info->dt_next    = 0;
  if (nm->adapt) {
    /* the active set's re-solves (warm, from a converged state) do not make a step hard */
    nm->nok = its_total - its_as <= nm->easy_its ? nm->nok + 1 : 0;
    if (nm->nok >= nm->grow_after && h < nm->dtmax) {
      info->dt_next = PetscMin(nm->grow * h, nm->dtmax);
      nm->nok       = 0;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorDestroy_Newmark(DemIntegrator ig)
{
  DemIntegrator_Newmark *nm = (DemIntegrator_Newmark *)ig->data;

  PetscFunctionBegin;
  PetscCall(SNESDestroy(&nm->snes));
  PetscCall(PetscFree(nm->fh));
  PetscCall(PetscFree3(nm->fzs, nm->fzt, nm->fzseen));
  PetscCall(DemNmMPIDestroy_Private(&nm->mpi));
  PetscCall(MatDestroy(&nm->J));
  PetscCall(VecDestroy(&nm->X));
  PetscCall(VecDestroy(&nm->R));
  PetscCall(VecDestroy(&nm->Xlast));
  PetscCall(PetscFree5(nm->row, nm->acc, nm->wacc, nm->rs, nm->tm));
  PetscCall(PetscFree6(nm->x, nm->v, nm->w, nm->q, nm->dx, nm->da));
  PetscCall(PetscFree6(nm->f, nm->t, nm->fd, nm->td, nm->fdn, nm->tdn));
  PetscCall(PetscFree5(nm->Xi, nm->Qd, nm->bb, nm->cc, nm->Ji));
  PetscCall(PetscFree5(nm->accE, nm->waccE, nm->tmE, nm->fdE, nm->tdE));
  PetscCall(PetscFree(nm->rdl));
  PetscCall(PetscFree2(nm->rab, nm->rel));
  PetscCall(PetscFree2(nm->relcnt, nm->reloff));
  PetscCall(PetscFree(nm->relall));
  PetscCall(PetscFree(nm->gm));
  PetscCall(PetscFree2(nm->pk, nm->pn));
  PetscCall(PetscFree(nm->sk));
  PetscCall(PetscFree2(nm->ctmp, nm->ctn));
  PetscCall(PetscFree4(nm->lgap, nm->lv, nm->lfn, nm->lft));
  PetscCall(PetscFree6(nm->ldfn, nm->lcn, nm->lkt, nm->len, nm->ldis, nm->lfd));
  PetscCall(PetscFree6(nm->les, nm->leg, nm->lev, nm->ltg, nm->ltv, nm->lslip));
  PetscCall(PetscFree2(nm->lfn2, nm->lft2));
  PetscCall(PetscFree(nm->lsg));
  PetscCall(PetscFree(nm->onp));
  PetscCall(PetscFree2(nm->onl, nm->ony));
  PetscCall(PetscFree(nm->smode));
  PetscCall(PetscFree(nm->stick));
  PetscCall(PetscFree(nm->cw));
  PetscCall(PetscFree(nm->cwt));
  PetscCall(PetscFree(ig->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemIntegratorCreate_Newmark - constructor of the "newmark" integrator (000): beta 0.3,
  gamma 0.5, adapt true, dt_max the configured dt, dt_min 1e-9 of it, grow 1.5 after 3 steps
  of at most 3 Newton iterations, max_iterations 50, max_overlap 0.05.
*/
PetscErrorCode DemIntegratorCreate_Newmark(DemIntegrator ig)
{
  DemIntegrator_Newmark *nm;

  PetscFunctionBegin;
  PetscCall(PetscNew(&nm));
  nm->beta               = 0.3;
  nm->gamma              = 0.5;
  nm->adapt              = PETSC_TRUE;
  nm->grow               = 1.5;
  nm->grow_after         = 3;
  nm->easy_its           = 3;
  nm->max_it             = 50;
  nm->stall_its          = 6;
  nm->freeze             = PETSC_TRUE;
  nm->onset_tf           = PETSC_TRUE;
  nm->max_overlap        = 0.05;
  nm->secant             = PETSC_FALSE; /* opt-in: see DemNmCycleWatch */
  nm->onset              = PETSC_FALSE;
  ig->data               = nm;
  ig->ops->setfromconfig = DemIntegratorSetFromConfig_Newmark;
  ig->ops->setup         = DemIntegratorSetUp_Newmark;
  ig->ops->step          = DemIntegratorStep_Newmark;
  ig->ops->destroy       = DemIntegratorDestroy_Newmark;
  ig->ops->checkpoint    = DemIntegratorCheckpoint_Newmark;
  ig->ops->thermo        = DemIntegratorThermo_Newmark;
  ig->thermo_names       = DemNewmarkThermoNames;
  ig->stability          = DEM_INTEGRATOR_IMPLICIT;
  ig->mpi                = PETSC_TRUE; /* several MPI ranks: distributed Vec/Mat, ghosts refreshed every evaluation (newmark_mpi.c) */
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(integrator, "newmark", DemIntegratorCreate_Newmark)
