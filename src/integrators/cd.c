/*
  cd.c - integrator `cd`: frictionless contact dynamics of rigid bodies, after
  004_66a055dbe6238b20.txt (Olsen & Kamrin, "Resolving force indeterminacy in contact
  dynamics using compatibility conditions"), sections 4, 5 and 7.

  Per step (004 Algorithm 1):
    1. contacts at q^t from the common narrow phase (DemContactsDetect: every shape pair the
       registry has a collider for), reported up to a gap `margin` ahead of touching; gap
       Phi_i (004 section 3) and its gradient B (004 eq. (15)), row i:
         B_i = [ n^T, (r_a x n)^T | -n^T, -(r_b x n)^T ]   for (v_a, w_a | v_b, w_b),
       n the unit normal from b to a, r_a, r_b the lever arms from the centres of mass to the
       contact point, so rotations are included: a flat or non-spherical body is loaded by
       moments (004 section 8.1's platform). For a sphere r x n vanishes analytically; the
       round-off of the cross product (|r x n| < 1e-12 |r|) is set to exactly 0.
    2. semi-implicit Euler, 004 eq. (13):
         M (v^{t+dt} - v^t) = dt (F_ext + B^T f),   q^{t+dt} = q^t + dt L(q^t) v^{t+dt}
       (positions x += dt v, orientations by the exponential map of dt w, as in verlet.c);
       F_ext is gravity on mobile bodies and the run's loads at t + dt. The velocity update
       changes the angular momentum at the orientation of t (no gyroscopic term there); a body
       with unequal principal inertia (superquadrics) then turns by the torque-free rotation
       of rotor.c over dt (002 eq. (5)-(7)), which updates q and w together and keeps the
       world angular momentum of a free body (the exponential map of dt w would not: tested
       in tests/cases/sq_free_top.py). Spheres and isotropic bodies use the exponential map.
    3. the LCP 0 <= f _|_ N f + p >= 0 (004 eq. (21)) with, 004 eq. (20),
         N = dt B M^-1 B^T,    p = Phi^t/dt + B v^t + dt B M^-1 F_ext,
       applied matrix-free: B and M^-1 B^T are kept as 12 numbers per contact, M^-1 per body
       (1/m and the world inverse inertia R diag(1/I) R^T), N x = dt B (M^-1 B^T x).
       Restitution variant (004 section 4.3, `restitution: true`): for a closing contact
       (B_i v^t < 0) that closes within the step (Phi_i + dt B_i u_free < 0, u_free =
       v^t + dt M^-1 F_ext), Phi_i/dt is replaced by e_i B_i v^t (plus min(Phi_i, 0)/dt, which
       pushes out a penetration left by the linearized gap); every other contact keeps
       Phi_i/dt, so contacts that have not formed do not bounce. e_i is the arithmetic mean
       of the two materials' `restitution` (the mixing rule of the built-in laws).
    4. solver `pgs`: projected Gauss-Seidel on the LCP (004 section 8; Morales et al. [19]),
       one contact at a time on the body velocities, in the order `order`: natural (the
       contact list's order), reversed, or random (a fresh permutation each step from
       `seed`). solver `apgd`: accelerated projected gradient descent on the QP 004 eq. (22)
       (Mazhar et al. 2015 [17]: Nesterov momentum, adaptive step 1/L with backtracking
       L <- 2L and L <- 0.9 L after each iteration, restart when g.(f_{k+1} - f_k) > 0, the
       iterate of smallest residual returned).
       Residual (both solvers, dimensionless): || min(f, (N f + p) ./ diag(N)) ||_inf / F,
       F = max(||f||_inf, ||max(0, -p) ./ diag(N)||_inf, the largest external force on a
       mobile body); converged when <= tol. It is reported in DemStepInfo (residual,
       iterations: sweeps or APGD iterations; thermo.csv `iterations` shows the latter). A
       step that reaches max_iterations goes on with the best iterate (counted by -cd_view).
       Warm start: each contact starts from its force of the previous step, found by
       (gid_a, gid_b, feature) in a hash map of the integrator (DemHistoryMap).
    5. `compatible: true`: 004 Algorithm 1 step 2 (cd_compat.c): F~ of 004 eq. (37), then
       the no-tension truss problem 004 eq. (36) over the contacts closed at the end of the
       step, with TAOALMM followed by Newton iterations on its KKT conditions (details and
       the reasons in cd_compat.c); the compatible forces are the ones written out.
       Velocities are those of step 4 (unique in frictionless CD).

  Output: sim->cl keeps the contacts of the step (gap: the linearized end-of-step gap
  Phi^t + dt B v^{t+dt} of 004 eq. (15)), sim->cf.fn the contact forces (compatible ones
  with `compatible`), ft = 0, energy 0; bodies' f and t hold F_ext + B^T f (for fixed bodies
  and walls: their reactions). Contacts between two immobile bodies (fixed, walls) are left
  out (no DOF to act on). pe_contact is 0 (rigid contacts store nothing); `dissipated`
  accumulates the kinetic plus gravitational energy lost over each step, which is the work
  of the contact impulses plus the O(dt) energy error of semi-implicit Euler in free flight.

  Keys (integrator: {type: cd, ...}; defaults in brackets):
    solver       apgd | pgs                                     [apgd]
    order        natural | reversed | random (pgs only)         [natural]
    seed         integer seed of the random order               [1]
    tol          LCP residual tolerance (above)                 [1e-10]
    max_iterations  PGS sweeps / APGD iterations                [10000]
    warm_start   start from the previous step's forces          [true]
    restitution  velocity-level restitution, 004 section 4.3   [false]
    margin       contacts are built up to this gap [m]          [half the search skin]
    compatible   compatibility post-solve, 004 eq. (36)-(37)    [false]
    compatible_power  2 | 2.5 | auto: p of 004 eq. (34); auto derives it from the contact
                 laws (hooke: 2, hertz_mindlin: 2.5)            [auto]
    compatible_tol  equilibrium residual of the post-solve, forces scaled by the largest CD
                 force and constraint rows by their norms [1e-10] (TAOALMM itself stops at
                 1e-3, option -cd_compat_tao_gatol; Newton steps take it the rest of the way)
    compatible_max_iterations  outer TAOALMM iterations         [200]
    compatible_every  run the post-solve every N steps and at the last step; between, the
                 CD forces are written [1]
  plus the common keys type, dt, dt_fraction, petsc_options. PETSc option -cd_view prints a
  summary of the solver statistics when the integrator is destroyed; -cd_compat_* options
  reach the TAO solver of the post-solve.
  MPI (src/core/decomp.c): a contact belongs to the rank that evaluates its pair (owner of the
  lower-id body); ghosts get u0 and, in every N x, the owners' sums of M^-1 B^T x (their parts
  added to the owners first); dot products, the residual's norms, the force scale and the
  contact count are reduced over the ranks, so apgd's iteration is the serial one up to
  round-off (tests/cases/mpi_cd.sh). pgs is a block-Jacobi + Gauss-Seidel hybrid
  (DemCDSolvePGS): each rank sweeps its own contacts in `order`, and between sweeps the
  velocities are recomputed from all ranks' forces; it agrees with one rank within tol
  (tests/cases/mpi_pgs.sh). Warm starts go with their pair when its evaluating rank changes
  at a rebuild: the map is registered with the decomposition (DemDecompPairMap_Private), which
  sends each entry point to point along with its pair's lower-id body, like the contact
  history (decomp.c DemDecompRoute; only the migrating entries travel, no rank sees the
  others' maps; MMDEM_DECOMP_VERBOSE prints the counts, tests/cases/mpi_cd.sh). A checkpoint
  written on several ranks holds every rank's warm starts (DemCDMPIGather, gathered on rank 0
  while it writes), so a restart on any number of ranks starts every pair from its warm start
  (tests/cases/mpi_cd.sh). compatible: true on
  several ranks: the post-solve's problem is a distributed PETSc problem (rows: the owned
  bodies' DOF, columns: the rank's contacts), TAOALMM and the Newton polish run on the
  communicator (cd_compat_mpi.c, tests/cases/mpi_cd_compat.sh).
*/
#include "cdimpl.h"
#include <time.h>

static const char *const DemCDSolvers[] = {"apgd", "pgs", NULL};
static const char *const DemCDOrders[]  = {"natural", "reversed", "random", NULL};
static PetscClassId      DemCDClassId;    /* -log_view events CDSolve (LCP) and CDCompat */
static PetscLogEvent     DemCDEventSolve, DemCDEventCompat;

typedef struct {
  /* options */
  PetscInt  solver, order, seed, max_it, compat_every;
  PetscReal tol, margin;
  PetscBool warm, restitution, compatible;
  /* work arrays, per body (capacity nbcap) */
  PetscInt      nbcap;
  DemCDBodyInv *binv;
  PetscReal    *u, *u0, *fext, *ft, *s;   /* [6 nb] */
  PetscBool    *mobile;                   /* [6 nb] DOF in Gamma_N */
  /* per contact work (capacity in sys.cap) */
  DemCDSystem   sys;
  PetscReal    *x1, *x2, *x3, *x4, *x5, *x6; /* APGD vectors (x6: its best iterate) */
  PetscInt     *perm;
  PetscReal    *act;                    /* [nlaw] the laws' activation distances (DemCDDetect) */
  PetscInt      nactcap;
  DemHistoryMap wmap;                   /* (gid_a, gid_b, feature) -> [f, f_compatible] */
  DemHistoryMap wown;                   /* MPI: rank 0's own wmap while a checkpoint writes every rank's (DemCDMPIGather) */
  DemSim        psim;                   /* MPI: the run whose decomposition moves wmap with its pairs (DemDecompPairMap_Private) */
  uint64_t      rng;
  DemCDCompat   compat;
  PetscLogEvent ev_solve, ev_compat;
  /* statistics */
  PetscInt       nsteps, its_total, its_max, nunconverged, ncompat, compat_its_total, compat_its_max, ncompat_fail, polish_its_total, polish_its_max;
  PetscReal      res_max, compat_eqres_max;
  PetscLogDouble t_solve, t_compat;
  double         c_solve, c_compat, c0_run; /* CPU seconds */
} DemIntegrator_CD;

/* process CPU time: the machines running the benchmarks are shared */
static double DemCDCPUTime(void)
{
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)) return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline uint64_t DemCDRandNext(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static PetscErrorCode DemIntegratorSetFromConfig_CD(DemIntegrator ig, DemNode cfg)
{
  DemIntegrator_CD *cd     = (DemIntegrator_CD *)ig->data;
  const char *const keys[] = {"solver", "order", "seed", "tol", "max_iterations", "warm_start", "restitution", "margin", "compatible", "compatible_power", "compatible_tol", "compatible_max_iterations", "compatible_every", NULL};
  DemNode           kn;

  PetscFunctionBegin;
  PetscCall(DemIntegratorAllowKeys_Private(cfg, keys));
  if (!cfg) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeGetChoice(cfg, "solver", DemCDSolvers, PETSC_FALSE, &cd->solver));
  PetscCall(DemNodeGetChoice(cfg, "order", DemCDOrders, PETSC_FALSE, &cd->order));
  PetscCall(DemNodeGetInt(cfg, "seed", PETSC_FALSE, &cd->seed));
  PetscCall(DemNodeGetReal(cfg, "tol", PETSC_FALSE, &cd->tol));
  PetscCall(DemNodeGet(cfg, "tol", &kn));
  DemNodeCheck(kn ? kn : cfg, cd->tol > 0 && cd->tol < 1, "tol must be in (0, 1) (got %g)", (double)cd->tol);
  PetscCall(DemNodeGetInt(cfg, "max_iterations", PETSC_FALSE, &cd->max_it));
  PetscCall(DemNodeGet(cfg, "max_iterations", &kn));
  DemNodeCheck(kn ? kn : cfg, cd->max_it >= 1, "max_iterations must be >= 1 (got %" PetscInt_FMT ")", cd->max_it);
  PetscCall(DemNodeGetBool(cfg, "warm_start", PETSC_FALSE, &cd->warm));
  PetscCall(DemNodeGetBool(cfg, "restitution", PETSC_FALSE, &cd->restitution));
  PetscCall(DemNodeGetReal(cfg, "margin", PETSC_FALSE, &cd->margin));
  PetscCall(DemNodeGet(cfg, "margin", &kn));
  DemNodeCheck(kn ? kn : cfg, !kn || cd->margin >= 0, "margin must be >= 0 m (got %g)", (double)cd->margin);
  PetscCall(DemNodeGetBool(cfg, "compatible", PETSC_FALSE, &cd->compatible));
  PetscCall(DemNodeGet(cfg, "compatible_power", &kn));
  if (kn) {
    const char *s = DemNodeScalar(kn);
    if (s && !strcmp(s, "auto")) cd->compat.power = 0;
    else {
      PetscCall(DemNodeAsReal(kn, &cd->compat.power));
      DemNodeCheck(kn, cd->compat.power == 2.0 || cd->compat.power == 2.5, "compatible_power must be 2 (Hooke), 2.5 (Hertz) or auto (got %g)", (double)cd->compat.power);
    }
  }
  PetscCall(DemNodeGetReal(cfg, "compatible_tol", PETSC_FALSE, &cd->compat.tol));
  PetscCall(DemNodeGet(cfg, "compatible_tol", &kn));
  DemNodeCheck(kn ? kn : cfg, cd->compat.tol > 0 && cd->compat.tol < 1, "compatible_tol must be in (0, 1) (got %g)", (double)cd->compat.tol);
  PetscCall(DemNodeGetInt(cfg, "compatible_max_iterations", PETSC_FALSE, &cd->compat.max_it));
  PetscCall(DemNodeGet(cfg, "compatible_max_iterations", &kn));
  DemNodeCheck(kn ? kn : cfg, cd->compat.max_it >= 1, "compatible_max_iterations must be >= 1 (got %" PetscInt_FMT ")", cd->compat.max_it);
  PetscCall(DemNodeGetInt(cfg, "compatible_every", PETSC_FALSE, &cd->compat_every));
  PetscCall(DemNodeGet(cfg, "compatible_every", &kn));
  DemNodeCheck(kn ? kn : cfg, cd->compat_every >= 1, "compatible_every must be >= 1 step (got %" PetscInt_FMT ")", cd->compat_every);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorSetUp_CD(DemIntegrator ig, DemSim sim)
{
  DemIntegrator_CD *cd = (DemIntegrator_CD *)ig->data;

  PetscFunctionBegin;
  if (cd->margin < 0) cd->margin = 0.5 * sim->skin;
  if (cd->margin > sim->skin) {
    DemNode in, kn;
    PetscCall(DemNodeGet(sim->root, "integrator", &in));
    PetscCall(DemNodeGet(in, "margin", &kn));
    return DemNodeError(kn ? kn : in, "margin (%g m) must not exceed the search skin (%g m): pairs farther apart are not in the neighbour list; raise search.skin", (double)cd->margin, (double)sim->skin);
  }
  cd->rng = (uint64_t)cd->seed * 0x2545F4914F6CDD1Dull + 12345u; /* a restart overwrites it */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCDReserveBodies(DemIntegrator_CD *cd, PetscInt nb)
{
  PetscFunctionBegin;
  if (nb <= cd->nbcap) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree(cd->binv));
  PetscCall(PetscFree5(cd->u, cd->u0, cd->fext, cd->ft, cd->s));
  PetscCall(PetscFree(cd->mobile));
  cd->nbcap = PetscMax(nb, 2 * cd->nbcap);
  PetscCall(PetscMalloc1(cd->nbcap, &cd->binv));
  PetscCall(PetscMalloc5(6 * cd->nbcap, &cd->u, 6 * cd->nbcap, &cd->u0, 6 * cd->nbcap, &cd->fext, 6 * cd->nbcap, &cd->ft, 6 * cd->nbcap, &cd->s));
  PetscCall(PetscMalloc1(6 * cd->nbcap, &cd->mobile));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCDReserveContacts(DemIntegrator_CD *cd, PetscInt nc)
{
  DemCDSystem *sys = &cd->sys;

  PetscFunctionBegin;
  if (nc <= sys->cap) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree3(sys->a, sys->b, sys->src));
  PetscCall(PetscFree5(sys->J, sys->W, sys->diag, sys->gap, sys->rhs));
  PetscCall(PetscFree5(sys->f, sys->fc, sys->kt, sys->gend, sys->fw));
  PetscCall(PetscFree6(cd->x1, cd->x2, cd->x3, cd->x4, cd->x5, cd->x6));
  PetscCall(PetscFree(cd->perm));
  sys->cap = PetscMax(nc, 2 * sys->cap);
  PetscCall(PetscMalloc3(sys->cap, &sys->a, sys->cap, &sys->b, sys->cap, &sys->src));
  PetscCall(PetscMalloc5(12 * sys->cap, &sys->J, 12 * sys->cap, &sys->W, sys->cap, &sys->diag, sys->cap, &sys->gap, sys->cap, &sys->rhs));
  PetscCall(PetscMalloc5(sys->cap, &sys->f, sys->cap, &sys->fc, sys->cap, &sys->kt, sys->cap, &sys->gend, sys->cap, &sys->fw));
  PetscCall(PetscMalloc6(sys->cap, &cd->x1, sys->cap, &cd->x2, sys->cap, &cd->x3, sys->cap, &cd->x4, sys->cap, &cd->x5, sys->cap, &cd->x6));
  PetscCall(PetscMalloc1(sys->cap, &cd->perm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M^-1 of every body at the current orientation; DOF mobility (Gamma_N) */
static PetscErrorCode DemCDBodies(DemIntegrator_CD *cd, DemSim sim)
{
  DemBodyStore  *bs = &sim->bodies;
  const PetscInt nb = bs->n + bs->nghost; /* MPI: ghosts too (their contacts) */

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nb; i++) {
    DemCDBodyInv    *bi = &cd->binv[i];
    const PetscReal *iI = bs->inv_I + 3 * i;
    bi->im              = bs->inv_m[i];
    bi->planar          = sim->dim == 2 ? PETSC_TRUE : PETSC_FALSE;
    for (int k = 0; k < 9; k++) bi->iI[k] = 0;
    if (iI[0] == iI[1] && iI[1] == iI[2]) bi->iI[0] = bi->iI[4] = bi->iI[8] = iI[0];
    else { /* R diag(1/I) R^T */
      PetscReal R[9];
      DemQuatToMatrix(bs->q + 4 * i, R);
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) bi->iI[3 * r + c] = R[3 * r] * iI[0] * R[3 * c] + R[3 * r + 1] * iI[1] * R[3 * c + 1] + R[3 * r + 2] * iI[2] * R[3 * c + 2];
    }
    for (int d = 0; d < 6; d++) cd->mobile[6 * i + d] = (d < 3 ? bi->im > 0 : iI[d - 3] > 0) ? PETSC_TRUE : PETSC_FALSE;
    if ((bs->flags[i] & (DEM_FIXED | DEM_REMOVED)) && !(bi->im > 0)) for (int d = 0; d < 6; d++) cd->mobile[6 * i + d] = PETSC_FALSE;
    if (bi->planar) cd->mobile[6 * i + 2] = cd->mobile[6 * i + 3] = cd->mobile[6 * i + 4] = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* external loads F_ext (force, torque per body) at time t: gravity on mobile bodies, loads */
static PetscErrorCode DemCDExternal(DemIntegrator_CD *cd, DemSim sim, PetscReal t)
{
  DemBodyStore    *bs = &sim->bodies;
  const PetscReal *g  = sim->gravity;
  PetscReal       *F  = cd->fext;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 6 * bs->nghost; i++) F[6 * bs->n + i] = 0; /* MPI: ghosts' loads act on their owners */
  for (PetscInt i = 0; i < bs->n; i++) {
    for (int d = 0; d < 6; d++) F[6 * i + d] = 0;
    if (!(bs->inv_m[i] > 0)) continue;
    for (int d = 0; d < 3; d++) F[6 * i + d] = bs->m[i] * g[d];
  }
  for (PetscInt l = 0; l < sim->nload; l++) {
    const DemLoad *ld = &sim->loads[l];
    PetscReal      s  = 1.0;
    if (ld->ramp[1] > ld->ramp[0]) s = t <= ld->ramp[0] ? 0.0 : (t >= ld->ramp[1] ? 1.0 : (t - ld->ramp[0]) / (ld->ramp[1] - ld->ramp[0]));
    for (PetscInt k = 0; k < ld->nids; k++) {
      PetscInt  i    = ld->ids[k];
      PetscReal f[3] = {s * ld->force[0], s * ld->force[1], s * ld->force[2]}, r[3] = {0, 0, 0};
      if (ld->haspoint) DemQuatRotate(bs->q + 4 * i, ld->point, r);
      for (int d = 0; d < 3; d++) F[6 * i + d] += f[d];
      F[6 * i + 3] += r[1] * f[2] - r[2] * f[1] + s * ld->moment[0];
      F[6 * i + 4] += r[2] * f[0] - r[0] * f[2] + s * ld->moment[1];
      F[6 * i + 5] += r[0] * f[1] - r[1] * f[0] + s * ld->moment[2];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPI: the warm starts of map m as records of 5 reals (gid a, gid b, feature, f,
   f_compatible; the ids' bits copied into reals), and one record back: its keys */
static void DemCDWarmPack(const DemHistoryMap *m, PetscReal *sb)
{
  PetscInt e = 0;
  for (PetscInt i = 0; i < m->cap; i++) {
    if (!m->used[i]) continue;
    memcpy(&sb[5 * e], &m->ka[i], sizeof(int64_t));
    memcpy(&sb[5 * e + 1], &m->kb[i], sizeof(int64_t));
    memcpy(&sb[5 * e + 2], &m->kf[i], sizeof(int64_t));
    sb[5 * e + 3] = m->val[2 * i], sb[5 * e + 4] = m->val[2 * i + 1];
    e++;
  }
}
static void DemCDWarmKeys(const PetscReal *r, int64_t *ka, int64_t *kb, int64_t *kf)
{
  memcpy(ka, &r[0], sizeof(int64_t));
  memcpy(kb, &r[1], sizeof(int64_t));
  memcpy(kf, &r[2], sizeof(int64_t));
}

/* MPI, around a checkpoint's serialization on rank 0 (decomp.c, ops->mpigather): with gather
   true every rank's warm starts go into rank 0's map (its own kept aside in wown), so that the
   checkpoint holds them all, with false rank 0's own map comes back. A restart on any number
   of ranks then starts every pair from its warm start: each rank reads the whole map and looks
   up its own pairs (the map is rebuilt from the rank's contacts after the first step).
   Collective. */
static PetscErrorCode DemCDMPIGather(DemIntegrator ig, DemSim sim, PetscBool gather)
{
  DemIntegrator_CD *cd = (DemIntegrator_CD *)ig->data;
  DemHistoryMap    *m  = &cd->wmap;
  PetscMPIInt       mine = 5 * (PetscMPIInt)m->count, *cnt = NULL, *off = NULL, tot = 0;
  PetscReal        *sb, *rb = NULL;

  PetscFunctionBegin;
  PetscCall(DemCDCompatMPIGather_Private(sim, &cd->compat, gather)); /* the compatibility displacements likewise (cd_compat_mpi.c) */
  if (!gather) {
    if (sim->rank == 0 && cd->wown.cap) {
      PetscCall(DemHistoryMapFree(&cd->wmap));
      cd->wmap = cd->wown;
      PetscCall(PetscMemzero(&cd->wown, sizeof(cd->wown)));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(mine + 1, &sb));
  DemCDWarmPack(m, sb);
  if (sim->rank == 0) PetscCall(PetscMalloc2(sim->size, &cnt, sim->size, &off));
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, sim->comm));
  if (sim->rank == 0) {
    off[0] = 0;
    for (PetscMPIInt r = 1; r < sim->size; r++) off[r] = off[r - 1] + cnt[r - 1];
    tot = off[sim->size - 1] + cnt[sim->size - 1];
    PetscCall(PetscMalloc1(tot + 1, &rb));
  }
  PetscCallMPI(MPI_Gatherv(sb, mine, MPIU_REAL, rb, cnt, off, MPIU_REAL, 0, sim->comm));
  if (sim->rank == 0) {
    cd->wown = cd->wmap;
    PetscCall(DemHistoryMapInit(&cd->wmap, 2));
    for (PetscInt k = 0; k < tot / 5; k++) {
      int64_t ka, kb, kf;
      DemCDWarmKeys(&rb[5 * k], &ka, &kb, &kf);
      PetscCall(DemHistoryMapPut(&cd->wmap, ka, kb, kf, &rb[5 * k + 3]));
    }
  }
  PetscCall(PetscFree(sb));
  PetscCall(PetscFree(rb));
  PetscCall(PetscFree2(cnt, off));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* contacts at the current state, up to gap `margin` (the laws' activation is raised for the
   call only) */
static PetscErrorCode DemCDDetect(DemIntegrator_CD *cd, DemSim sim)
{
  DemBodyStore     *bs = &sim->bodies;
  DemNeighbourList *nl = &sim->nl;
  DemState          st = {bs->x, bs->v, bs->w, bs->q};
  PetscReal        *act, lim = 0.5 * (sim->skin - cd->margin), mx = 0;

  PetscFunctionBegin;
  /* MPI: the warm starts go with their pairs at every rebuild (decomp.c) */
  if (DemDecompActive_Private(sim) && cd->warm && !cd->psim) {
    cd->psim = sim;
    PetscCall(DemDecompPairMap_Private(sim, &cd->wmap));
  }
  /* the list holds every pair within the skin at its build; a pair within `margin` now is
     guaranteed to be in it while no body moved more than (skin - margin)/2 */
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_FALSE));
  if (nl->x0 && nl->x0cap >= 3 * bs->n) {
    for (PetscInt i = 0; i < bs->n; i++) {
      PetscReal d0 = bs->x[3 * i] - nl->x0[3 * i], d1 = bs->x[3 * i + 1] - nl->x0[3 * i + 1], d2 = bs->x[3 * i + 2] - nl->x0[3 * i + 2];
      mx = PetscMax(mx, d0 * d0 + d1 * d1 + d2 * d2);
    }
    PetscInt again = mx > lim * lim;
    if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &again, 1, MPIU_INT, MPI_MAX, sim->comm)); /* MPI: collective */
    if (again) PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
  }
  if (sim->nlaw + 1 > cd->nactcap) { /* once: no allocation per step */
    PetscCall(PetscFree(cd->act));
    cd->nactcap = sim->nlaw + 1;
    PetscCall(PetscMalloc1(cd->nactcap, &cd->act));
  }
  act = cd->act;
  for (PetscInt l = 0; l < sim->nlaw; l++) {
    act[l]                   = sim->laws[l]->activation;
    sim->laws[l]->activation = PetscMax(act[l], cd->margin);
  }
  PetscCall(DemContactsDetect(sim, &st));
  for (PetscInt l = 0; l < sim->nlaw; l++) sim->laws[l]->activation = act[l];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rows of B and M^-1 B^T; skips contacts between immobile bodies */
static PetscErrorCode DemCDAssemble(DemIntegrator_CD *cd, DemSim sim)
{
  DemContactList *cl  = &sim->cl;
  DemCDSystem    *sys = &cd->sys;

  PetscFunctionBegin;
  PetscCall(DemCDReserveContacts(cd, cl->n));
  sys->nc = 0;
  for (PetscInt c = 0; c < cl->n; c++) {
    const PetscInt   a = cl->a[c], b = cl->b[c], k = sys->nc;
    const PetscReal *n = cl->nrm + 3 * c, *ra = cl->ra + 3 * c, *rb = cl->rb + 3 * c;
    PetscReal       *J = sys->J + 12 * k, *W = sys->W + 12 * k, ca[3], cb[3], la, lb, dg;
    PetscBool        ma = PETSC_FALSE, mb = PETSC_FALSE;
    for (int d = 0; d < 6; d++) ma = ma || cd->mobile[6 * a + d], mb = mb || cd->mobile[6 * b + d];
    if (!ma && !mb) continue;
    ca[0] = ra[1] * n[2] - ra[2] * n[1];
    ca[1] = ra[2] * n[0] - ra[0] * n[2];
    ca[2] = ra[0] * n[1] - ra[1] * n[0];
    cb[0] = rb[1] * n[2] - rb[2] * n[1];
    cb[1] = rb[2] * n[0] - rb[0] * n[2];
    cb[2] = rb[0] * n[1] - rb[1] * n[0];
    la    = PetscSqrtReal(ra[0] * ra[0] + ra[1] * ra[1] + ra[2] * ra[2]);
    lb    = PetscSqrtReal(rb[0] * rb[0] + rb[1] * rb[1] + rb[2] * rb[2]);
    /* a normal through the centre (spheres) exerts no moment: drop the round-off */
    if (PetscSqrtReal(ca[0] * ca[0] + ca[1] * ca[1] + ca[2] * ca[2]) <= 1e-12 * la) ca[0] = ca[1] = ca[2] = 0;
    if (PetscSqrtReal(cb[0] * cb[0] + cb[1] * cb[1] + cb[2] * cb[2]) <= 1e-12 * lb) cb[0] = cb[1] = cb[2] = 0;
    for (int d = 0; d < 3; d++) {
      J[d]     = n[d];
      J[3 + d] = ca[d];
      J[6 + d] = -n[d];
      J[9 + d] = -cb[d];
    }
    DemCDApplyMinv(&cd->binv[a], J, W);
    DemCDApplyMinv(&cd->binv[b], J + 6, W + 6);
    dg = 0;
    for (int d = 0; d < 12; d++) dg += J[d] * W[d];
    if (!(dg > 0)) continue; /* e.g. a normal out of the plane of a planar run */
    sys->a[k]    = a;
    sys->b[k]    = b;
    sys->src[k]  = c;
    sys->diag[k] = dg;
    sys->gap[k]  = cl->gap[c];
    sys->nc++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscReal DemCDRow(const PetscReal *J, const PetscReal *ua, const PetscReal *ub)
{
  return J[0] * ua[0] + J[1] * ua[1] + J[2] * ua[2] + J[3] * ua[3] + J[4] * ua[4] + J[5] * ua[5] + J[6] * ub[0] + J[7] * ub[1] + J[8] * ub[2] + J[9] * ub[3] + J[10] * ub[4] + J[11] * ub[5];
}

/* s = M^-1 B^T x (6 per body) */
static void DemCDMinvBt(const DemCDSystem *sys, PetscInt nb, const PetscReal *x, PetscReal *s)
{
  for (PetscInt j = 0; j < 6 * nb; j++) s[j] = 0;
  for (PetscInt k = 0; k < sys->nc; k++) {
    const PetscReal *W = sys->W + 12 * k, xk = x[k];
    PetscReal       *sa = s + 6 * sys->a[k], *sb = s + 6 * sys->b[k];
    if (xk == 0) continue;
    for (int d = 0; d < 6; d++) sa[d] += W[d] * xk, sb[d] += W[6 + d] * xk;
  }
}

/* s = M^-1 B^T x of every body; MPI: the ghosts' parts summed into their owners, the sums
   copied back into the ghosts (two exchanges, decomp.c) */
static PetscErrorCode DemCDMinvBtAll(DemSim sim, const DemCDSystem *sys, PetscInt nb, const PetscReal *x, PetscReal *s)
{
  PetscFunctionBegin;
  DemCDMinvBt(sys, nb, x, s);
  if (sim->decomp) {
    PetscCall(DemDecompReverseAddArray_Private(sim, s, 6));
    PetscCall(DemDecompForwardArray_Private(sim, s, 6));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* y = N x = dt B M^-1 B^T x */
static PetscErrorCode DemCDMatMult(DemIntegrator_CD *cd, DemSim sim, PetscInt nb, PetscReal dt, const PetscReal *x, PetscReal *y)
{
  const DemCDSystem *sys = &cd->sys;

  PetscFunctionBegin;
  PetscCall(DemCDMinvBtAll(sim, sys, nb, x, cd->s));
  for (PetscInt k = 0; k < sys->nc; k++) y[k] = dt * DemCDRow(sys->J + 12 * k, cd->s + 6 * sys->a[k], cd->s + 6 * sys->b[k]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the largest of n values over the ranks (MPI), in place */
static PetscErrorCode DemCDMax(DemSim sim, PetscReal *v, PetscMPIInt n)
{
  PetscFunctionBegin;
  if (sim->decomp) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPIU_REAL, MPIU_MAX, sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* natural residual || min(f, g ./ diag N) ||_inf / F (see the file header) */
static PetscReal DemCDResidual(const DemCDSystem *sys, PetscReal dt, const PetscReal *f, const PetscReal *g, PetscReal fp)
{
  PetscReal r = 0, fm = fp;
  for (PetscInt k = 0; k < sys->nc; k++) {
    PetscReal m = PetscMin(f[k], g[k] / (dt * sys->diag[k]));
    r           = PetscMax(r, PetscAbsReal(m));
    fm          = PetscMax(fm, f[k]);
  }
  return fm > 0 ? r / fm : 0.0;
}

/* the residual of DemCDResidual over the contacts of every rank (MPI) */
static PetscErrorCode DemCDResidualAll(DemSim sim, const DemCDSystem *sys, PetscReal dt, const PetscReal *f, const PetscReal *g, PetscReal fp, PetscReal *res)
{
  PetscReal v[2] = {0, fp};

  PetscFunctionBegin;
  for (PetscInt k = 0; k < sys->nc; k++) {
    v[0] = PetscMax(v[0], PetscAbsReal(PetscMin(f[k], g[k] / (dt * sys->diag[k]))));
    v[1] = PetscMax(v[1], f[k]);
  }
  PetscCall(DemCDMax(sim, v, 2));
  *res = v[1] > 0 ? v[0] / v[1] : 0.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* projected Gauss-Seidel on the body velocities u = u0 + dt M^-1 B^T f. MPI: a block-Jacobi +
   Gauss-Seidel hybrid: each rank sweeps its own contacts (the pairs whose lower-id body it
   owns) in the order `order` (natural: its contact list's order), its velocity updates,
   ghosts' included, seen at once by its next contacts (Gauss-Seidel); after every sweep the
   velocities are recomputed from all ranks' forces, u = u0 + dt M^-1 B^T f with the ghosts'
   parts summed into their owners and copied back (two exchanges, DemCDMinvBtAll), so the
   other ranks' updates of a sweep are seen at the next one (Jacobi). The residual is then
   that of the whole system (a reduction), so every rank stops at the same sweep. */
static PetscErrorCode DemCDSolvePGS(DemIntegrator_CD *cd, DemSim sim, PetscReal dt, PetscReal fp, PetscReal b[], PetscInt *its, PetscReal *res)
{
  DemCDSystem   *sys = &cd->sys;
  const PetscInt nc = sys->nc, nb = sim->bodies.n + sim->bodies.nghost; /* MPI: ghosts too */
  PetscReal     *f = sys->f, *u = cd->u, *g = cd->x1;
  PetscInt      *perm = cd->perm;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nc; k++) perm[k] = cd->order == 1 ? nc - 1 - k : k;
  if (cd->order == 2)
    for (PetscInt k = nc - 1; k > 0; k--) {
      PetscInt j = (PetscInt)(DemCDRandNext(&cd->rng) % (uint64_t)(k + 1)), t = perm[k];
      perm[k] = perm[j], perm[j] = t;
    }
  PetscCall(DemCDMinvBtAll(sim, sys, nb, f, u)); /* MPI: with the other ranks' warm starts */
  for (PetscInt j = 0; j < 6 * nb; j++) u[j] = cd->u0[j] + dt * u[j];
  *res = PETSC_MAX_REAL;
  for (*its = 0; *its < cd->max_it;) {
    for (PetscInt kk = 0; kk < nc; kk++) {
      const PetscInt   k = perm[kk];
      const PetscReal *J = sys->J + 12 * k, *W = sys->W + 12 * k;
      PetscReal       *ua = u + 6 * sys->a[k], *ub = u + 6 * sys->b[k];
      PetscReal        r = DemCDRow(J, ua, ub) + b[k], fn = PetscMax(0.0, f[k] - r / (dt * sys->diag[k])), df = fn - f[k];
      if (df == 0) continue;
      f[k] = fn;
      for (int d = 0; d < 6; d++) ua[d] += dt * W[d] * df, ub[d] += dt * W[6 + d] * df;
    }
    (*its)++;
    if (sim->decomp) { /* MPI: the Jacobi exchange between the ranks' sweeps (above) */
      PetscCall(DemCDMinvBtAll(sim, sys, nb, f, u));
      for (PetscInt j = 0; j < 6 * nb; j++) u[j] = cd->u0[j] + dt * u[j];
    }
    for (PetscInt k = 0; k < nc; k++) g[k] = DemCDRow(sys->J + 12 * k, u + 6 * sys->a[k], u + 6 * sys->b[k]) + b[k];
    if (sim->decomp) PetscCall(DemCDResidualAll(sim, sys, dt, f, g, fp, res));
    else *res = DemCDResidual(sys, dt, f, g, fp);
    if (*res <= cd->tol) break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* APGD on min 1/2 f.N f + f.p, f >= 0 (Mazhar et al. 2015, as summarized in the header) */
static PetscErrorCode DemCDSolveAPGD(DemIntegrator_CD *cd, DemSim sim, PetscReal dt, PetscReal fp, PetscInt *its, PetscReal *res)
{
  DemCDSystem    *sys = &cd->sys;
  const PetscInt  nc = sys->nc, nb = sim->bodies.n + sim->bodies.nghost;
  const PetscReal *p = sys->rhs;
  PetscReal      *gam = sys->f, *y = cd->x1, *Ny = cd->x2, *gn = cd->x3, *Ngn = cd->x4, *Ng = cd->x5;
  PetscReal      *best = cd->x6, L, t, theta = 1, rbest = PETSC_MAX_REAL;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nc; k++) gam[k] = PetscMax(gam[k], 0.0), best[k] = gam[k];
  /* L from N applied to gamma - 1 (Mazhar et al.: gamma_hat_0 = 1) */
  {
    PetscReal nd = 0, nn = 0;
    PetscReal dots[2];
    for (PetscInt k = 0; k < nc; k++) gn[k] = gam[k] - 1.0;
    PetscCall(DemCDMatMult(cd, sim, nb, dt, gn, Ngn));
    for (PetscInt k = 0; k < nc; k++) nd += gn[k] * gn[k], nn += Ngn[k] * Ngn[k];
    dots[0] = nd, dots[1] = nn; /* MPI: global dot products (decomp.c) */
    PetscCall(DemDecompSum_Private(sim, dots, 2));
    nd = dots[0], nn = dots[1];
    L  = nd > 0 ? PetscSqrtReal(nn / nd) : 0;
    if (!(L > 0)) {
      for (PetscInt k = 0; k < nc; k++) L = PetscMax(L, dt * sys->diag[k]);
      PetscCall(DemCDMax(sim, &L, 1));
    }
  }
  t = 1.0 / L;
  PetscCall(DemCDMatMult(cd, sim, nb, dt, gam, Ng));
  for (PetscInt k = 0; k < nc; k++) y[k] = gam[k], Ny[k] = Ng[k];
  *res = PETSC_MAX_REAL;
  for (*its = 0; *its < cd->max_it;) {
    PetscReal thn, beta, gd = 0, r;
    /* projected step from y, backtracking until f(gn) <= f(y) + g.d + L/2 |d|^2 */
    for (;;) {
      PetscReal dNd = 0, dd = 0, dots[2];
      for (PetscInt k = 0; k < nc; k++) gn[k] = PetscMax(0.0, y[k] - t * (Ny[k] + p[k]));
      PetscCall(DemCDMatMult(cd, sim, nb, dt, gn, Ngn));
      for (PetscInt k = 0; k < nc; k++) {
        PetscReal d = gn[k] - y[k];
        dNd += d * (Ngn[k] - Ny[k]);
        dd += d * d;
      }
      dots[0] = dNd, dots[1] = dd;
      PetscCall(DemDecompSum_Private(sim, dots, 2));
      dNd = dots[0], dd = dots[1];
      if (dNd <= L * dd * (1 + 1e-12) || dd == 0) break;
      L *= 2;
      t = 1.0 / L;
    }
    (*its)++;
    thn  = 0.5 * (-theta * theta + theta * PetscSqrtReal(theta * theta + 4));
    beta = theta * (1 - theta) / (theta * theta + thn);
    for (PetscInt k = 0; k < nc; k++) gd += (Ny[k] + p[k]) * (gn[k] - gam[k]);
    PetscCall(DemDecompSum_Private(sim, &gd, 1));
    /* residual at the new iterate; keep the best */
    {
      PetscReal rr[2] = {0, fp};
      for (PetscInt k = 0; k < nc; k++) {
        PetscReal m = PetscMin(gn[k], (Ngn[k] + p[k]) / (dt * sys->diag[k]));
        rr[0]       = PetscMax(rr[0], PetscAbsReal(m));
        rr[1]       = PetscMax(rr[1], gn[k]);
      }
      PetscCall(DemCDMax(sim, rr, 2));
      r = rr[1] > 0 ? rr[0] / rr[1] : 0.0;
    }
    if (r < rbest) {
      rbest = r;
      for (PetscInt k = 0; k < nc; k++) best[k] = gn[k];
    }
    if (r <= cd->tol) break;
    if (gd > 0) { /* restart */
      thn  = 1;
      beta = 0;
    }
    for (PetscInt k = 0; k < nc; k++) {
      PetscReal yk  = gn[k] + beta * (gn[k] - gam[k]);
      PetscReal Nyk = Ngn[k] + beta * (Ngn[k] - Ng[k]);
      y[k]          = yk;
      Ny[k]         = Nyk;
      gam[k]        = gn[k];
      Ng[k]         = Ngn[k];
    }
    theta = thn;
    L *= 0.9;
    t = 1.0 / L;
  }
  for (PetscInt k = 0; k < nc; k++) gam[k] = best[k];
  *res = rbest;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorStep_CD(DemIntegrator ig, DemSim sim, PetscReal dt, DemStepInfo *info)
{
  DemIntegrator_CD *cd  = (DemIntegrator_CD *)ig->data;
  DemCDSystem      *sys = &cd->sys;
  DemBodyStore     *bs  = &sim->bodies;
  DemContactList   *cl  = &sim->cl;
  DemContactForces *cf  = &sim->cf;
  PetscInt          nb, nall; /* owned bodies; with the ghosts (MPI) */
  PetscReal         ke0, kr0, pg0, ke1, kr1, pg1, fp = 0, res = 0, *fout;
  PetscInt          its = 0, ncg;
  PetscBool         docompat;
  PetscLogDouble    t0, t1;
  double            c0;

  PetscFunctionBegin;
  PetscCall(DemSimEnergies_Private(sim, &ke0, &kr0, &pg0));
  PetscCall(DemCDDetect(cd, sim)); /* MPI: may migrate bodies */
  nb   = bs->n;
  nall = bs->n + bs->nghost;
  PetscCall(DemCDReserveBodies(cd, nall));
  PetscCall(DemCDBodies(cd, sim));
  PetscCall(DemCDAssemble(cd, sim));
  PetscCall(DemCDExternal(cd, sim, sim->time + dt));
  /* u0 = v^t + dt M^-1 F_ext */
  for (PetscInt i = 0; i < nb; i++) {
    PetscReal y[6], *u0 = cd->u0 + 6 * i;
    DemCDApplyMinv(&cd->binv[i], cd->fext + 6 * i, y);
    for (int d = 0; d < 3; d++) {
      u0[d]     = bs->v[3 * i + d] + dt * y[d];
      u0[3 + d] = bs->w[3 * i + d] + dt * y[3 + d];
    }
  }
  if (sim->decomp) PetscCall(DemDecompForwardArray_Private(sim, cd->u0, 6)); /* MPI: the ghosts' u0 (decomp.c) */
  /* force scale of the residual: at least the largest external load on a mobile body, so
     that round-off forces (bodies in free flight, touching) do not set the scale */
  for (PetscInt i = 0; i < nb; i++)
    if (bs->inv_m[i] > 0) fp = PetscMax(fp, PetscSqrtReal(cd->fext[6 * i] * cd->fext[6 * i] + cd->fext[6 * i + 1] * cd->fext[6 * i + 1] + cd->fext[6 * i + 2] * cd->fext[6 * i + 2]));
  /* p of 004 eq. (20), or its restitution variant (004 section 4.3); warm start */
  for (PetscInt k = 0; k < sys->nc; k++) {
    const PetscInt   a = sys->a[k], b = sys->b[k];
    const PetscReal *J = sys->J + 12 * k, phi = sys->gap[k];
    PetscReal        va[6], vb[6], bk, vfree = DemCDRow(J, cd->u0 + 6 * a, cd->u0 + 6 * b);
    for (int d = 0; d < 3; d++) {
      va[d] = bs->v[3 * a + d], va[3 + d] = bs->w[3 * a + d];
      vb[d] = bs->v[3 * b + d], vb[3 + d] = bs->w[3 * b + d];
    }
    bk = phi / dt;
    if (cd->restitution) {
      PetscReal vn = DemCDRow(J, va, vb);
      if (vn < 0 && phi + dt * vfree < 0) {
        PetscReal e = 0.5 * (sim->mat[bs->material[a]].restitution + sim->mat[bs->material[b]].restitution);
        bk          = e * vn + PetscMin(phi, 0.0) / dt;
      }
    }
    sys->rhs[k] = bk + vfree; /* p_k */
    fp          = PetscMax(fp, PetscMax(0.0, -sys->rhs[k]) / (dt * sys->diag[k]));
    sys->f[k]   = 0;
    sys->fw[k]  = -1;
    if (cd->warm) {
      const PetscReal *h = DemHistoryMapGet(&cd->wmap, bs->gid[a], bs->gid[b], cl->feature[sys->src[k]]);
      if (h) sys->f[k] = h[0], sys->fw[k] = h[1];
    }
  }
  ncg = sys->nc;
  if (sim->decomp) { /* MPI: the force scale and the contact count over the ranks */
    PetscCall(DemCDMax(sim, &fp, 1));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ncg, 1, MPIU_INT, MPI_SUM, sim->comm));
  }
  if (!cd->nsteps) cd->c0_run = DemCDCPUTime();
  c0 = DemCDCPUTime();
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(cd->ev_solve, 0, 0, 0, 0));
  if (ncg) {
    if (cd->solver == 1) {
      /* PGS works with b = p - B u0 against the current velocities */
      PetscReal *bb = cd->x2;
      for (PetscInt k = 0; k < sys->nc; k++) bb[k] = sys->rhs[k] - DemCDRow(sys->J + 12 * k, cd->u0 + 6 * sys->a[k], cd->u0 + 6 * sys->b[k]);
      PetscCall(DemCDSolvePGS(cd, sim, dt, fp, bb, &its, &res));
    } else PetscCall(DemCDSolveAPGD(cd, sim, dt, fp, &its, &res));
  }
  PetscCall(PetscLogEventEnd(cd->ev_solve, 0, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  cd->t_solve += t1 - t0;
  cd->c_solve += DemCDCPUTime() - c0;
  /* v^{t+dt} = u0 + dt M^-1 B^T f (004 eq. (13)) */
  PetscCall(DemCDMinvBtAll(sim, sys, nall, sys->f, cd->u));
  for (PetscInt j = 0; j < 6 * nall; j++) cd->u[j] = cd->u0[j] + dt * cd->u[j];
  for (PetscInt k = 0; k < sys->nc; k++) sys->gend[k] = sys->gap[k] + dt * DemCDRow(sys->J + 12 * k, cd->u + 6 * sys->a[k], cd->u + 6 * sys->b[k]);
  /* compatibility post-solve, 004 Algorithm 1 step 2 */
  docompat = cd->compatible;
  if (docompat && cd->compat_every > 1) {
    PetscBool last = (sim->max_steps > 0 && sim->step + 1 >= sim->max_steps) || (sim->max_steps <= 0 && sim->end_time > 0 && sim->time + dt >= sim->end_time - 1e-9 * dt);
    docompat       = ((sim->step + 1) % cd->compat_every == 0 || last) ? PETSC_TRUE : PETSC_FALSE;
  }
  fout = sys->f;
  if (docompat) {
    PetscReal power;
    c0 = DemCDCPUTime();
    PetscCall(PetscTime(&t0));
    PetscCall(PetscLogEventBegin(cd->ev_compat, 0, 0, 0, 0));
    /* F~ = M (v^{t+dt} - v^t)/dt - F_ext, 004 eq. (37), on the mobile DOF */
    for (PetscInt i = 0; i < nb; i++) {
      const PetscReal *u = cd->u + 6 * i, *F = cd->fext + 6 * i;
      PetscReal       *Ft = cd->ft + 6 * i, dw[3], Iw[3] = {0, 0, 0};
      for (int d = 0; d < 3; d++) {
        Ft[d] = cd->mobile[6 * i + d] ? bs->m[i] * (u[d] - bs->v[3 * i + d]) / dt - F[d] : 0;
        dw[d] = (u[3 + d] - bs->w[3 * i + d]) / dt;
      }
      if (bs->inv_I[3 * i] > 0) { /* I_world dw = R diag(I) R^T dw */
        PetscReal wb[3];
        DemQuatRotateInv(bs->q + 4 * i, dw, wb);
        for (int d = 0; d < 3; d++) wb[d] *= bs->I[3 * i + d];
        DemQuatRotate(bs->q + 4 * i, wb, Iw);
      }
      for (int d = 0; d < 3; d++) Ft[3 + d] = cd->mobile[6 * i + 3 + d] ? Iw[d] - F[3 + d] : 0;
    }
    PetscCall(DemCDRelativeStiffness_Private(sim, sys, cd->compat.power, &power));
    if (sim->decomp) PetscCall(DemCDCompatSolveMPI_Private(sim, sys, cd->mobile, cd->ft, cd->fext, power, &cd->compat)); /* MPI: solved on rank 0 */
    else PetscCall(DemCDCompatSolve_Private(sim->bodies.n, sim->bodies.gid, sim->cl.reff, sys, cd->mobile, cd->ft, cd->fext, power, &cd->compat));
    PetscCall(PetscLogEventEnd(cd->ev_compat, 0, 0, 0, 0));
    PetscCall(PetscTime(&t1));
    cd->t_compat += t1 - t0;
    cd->c_compat += DemCDCPUTime() - c0;
    cd->ncompat++;
    cd->compat_its_total += cd->compat.its;
    cd->compat_its_max = PetscMax(cd->compat_its_max, cd->compat.its);
    cd->compat_eqres_max = PetscMax(cd->compat_eqres_max, cd->compat.eqres);
    if (cd->compat.res > cd->compat.tol) cd->ncompat_fail++;
    cd->polish_its_total += cd->compat.polish_its;
    cd->polish_its_max = PetscMax(cd->polish_its_max, cd->compat.polish_its);
    PetscCall(PetscInfo(NULL, "cd step %" PetscInt_FMT ": compatibility post-solve p = %g, %" PetscInt_FMT " contacts, %" PetscInt_FMT " constraints, %" PetscInt_FMT " TAOALMM iterations (reason %d, residual %g), %" PetscInt_FMT " Newton steps, equilibrium residual %g\n", sim->step + 1, (double)power, cd->compat.nvars, cd->compat.nrows, cd->compat.its, cd->compat.reason, (double)cd->compat.res_almm, cd->compat.polish_its, (double)cd->compat.eqres));
    fout = sys->fc;
  }
  /* warm-start map for the next step */
  PetscCall(DemHistoryMapClear(&cd->wmap));
  for (PetscInt k = 0; k < sys->nc; k++) {
    PetscReal h[2] = {sys->f[k], docompat ? sys->fc[k] : sys->fw[k]};
    if (h[0] > 0 || h[1] > 0) PetscCall(DemHistoryMapPut(&cd->wmap, bs->gid[sys->a[k]], bs->gid[sys->b[k]], cl->feature[sys->src[k]], h));
  }
  /* contact output: forces, linearized end-of-step gaps (004 eq. (15)) */
  for (PetscInt c = 0; c < cl->n; c++) {
    cf->fn[c] = cf->dfn_dgap[c] = cf->cn[c] = cf->kt[c] = cf->energy[c] = cf->dissip[c] = cf->eslip[c] = 0;
    cf->slip[c] = 0;
    for (int d = 0; d < 3; d++) cf->ft[3 * c + d] = cf->fdamp[3 * c + d] = 0;
  }
  sim->ncontacts = 0;
  for (PetscInt k = 0; k < sys->nc; k++) {
    PetscInt c = sys->src[k];
    cf->fn[c]  = fout[k];
    cl->gap[c] = sys->gend[k];
    if (fout[k] > 0) sim->ncontacts++;
  }
  /* body forces F_ext + B^T f (reactions on fixed bodies and walls) */
  for (PetscInt i = 0; i < nall; i++)
    for (int d = 0; d < 3; d++) bs->f[3 * i + d] = cd->fext[6 * i + d], bs->t[3 * i + d] = cd->fext[6 * i + 3 + d];
  for (PetscInt k = 0; k < sys->nc; k++) {
    const PetscReal *J = sys->J + 12 * k;
    PetscInt         a = sys->a[k], b = sys->b[k];
    for (int d = 0; d < 3; d++) {
      bs->f[3 * a + d] += J[d] * fout[k];
      bs->t[3 * a + d] += J[3 + d] * fout[k];
      bs->f[3 * b + d] += J[6 + d] * fout[k];
      bs->t[3 * b + d] += J[9 + d] * fout[k];
    }
  }
  if (sim->decomp) { /* MPI: ghosts' reactions to their owners, walls' and contact counts summed (decomp.c) */
    DemForceOut fo = {0};
    fo.f         = bs->f;
    fo.t         = bs->t;
    fo.ncontacts = sim->ncontacts;
    PetscCall(DemDecompReverseForces_Private(sim, &fo));
    sim->ncontacts = fo.ncontacts;
  }
  if (sim->dim == 2) PetscCall(DemSimConstrain(sim, bs->f, bs->t));
  /* update: v, w of mobile DOF; x, q of every moving body (004 eq. (13)) */
  for (PetscInt i = 0; i < nb; i++) {
    const PetscReal *u = cd->u + 6 * i;
    PetscReal       *w = bs->w + 3 * i;
    if (bs->inv_m[i] > 0)
      for (int d = 0; d < 3; d++) bs->v[3 * i + d] = u[d];
    if (bs->inv_I[3 * i] > 0 || bs->inv_I[3 * i + 1] > 0 || bs->inv_I[3 * i + 2] > 0)
      for (int d = 0; d < 3; d++) w[d] = u[3 + d];
    if (bs->inv_m[i] == 0 && !(bs->flags[i] & DEM_PRESCRIBED)) continue;
    for (int d = 0; d < 3; d++) bs->x[3 * i + d] += dt * bs->v[3 * i + d];
    if (bs->inv_m[i] > 0 && bs->inv_I[3 * i] > 0 && (bs->I[3 * i] != bs->I[3 * i + 1] || bs->I[3 * i + 1] != bs->I[3 * i + 2])) {
      if (w[0] != 0 || w[1] != 0 || w[2] != 0) DemRigidRotorStep_Private(bs->I + 3 * i, dt, bs->q + 4 * i, w); /* aspherical */
    } else if (w[0] != 0 || w[1] != 0 || w[2] != 0) {
      PetscReal th[3] = {dt * w[0], dt * w[1], dt * w[2]}, dq[4], qn[4];
      DemQuatFromRotationVector(th, dq);
      DemQuatMul(dq, bs->q + 4 * i, qn);
      DemQuatNormalize(qn);
      for (int j = 0; j < 4; j++) bs->q[4 * i + j] = qn[j];
    }
  }
  PetscCall(DemSimConstrain(sim, bs->v, bs->w));
  sim->time += dt;
  PetscCall(DemSimApplyWalls_Private(sim));
  /* energy: rigid contacts store none; what the step lost is booked as dissipated */
  PetscCall(DemSimEnergies_Private(sim, &ke1, &kr1, &pg1));
  sim->pe_contact = 0;
  sim->dissipated += (ke0 + kr0 + pg0) - (ke1 + kr1 + pg1);
  /* statistics */
  cd->nsteps++;
  cd->its_total += its;
  cd->its_max = PetscMax(cd->its_max, its);
  cd->res_max = PetscMax(cd->res_max, res);
  if (res > cd->tol) cd->nunconverged++;
  info->iterations = its;
  info->residual   = res;
  info->converged  = res <= cd->tol ? PETSC_TRUE : PETSC_FALSE;
  info->accepted   = PETSC_TRUE;
  info->dt_next    = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* state between steps: the warm-start forces, the compatibility displacements, the random
   order's generator (a restart then continues bitwise like an uninterrupted run) */
static PetscErrorCode DemIntegratorCheckpoint_CD(DemIntegrator ig, FILE *fp, PetscBool write)
{
  DemIntegrator_CD *cd      = (DemIntegrator_CD *)ig->data;
  int32_t           version = 1;

  PetscFunctionBegin;
  PetscCall(DemCheckpointIO(fp, write, &version, sizeof(version), "cd version"));
  PetscCheck(version == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: cd state version %d, expected 1", (int)version);
  PetscCall(DemCheckpointIO(fp, write, &cd->rng, sizeof(cd->rng), "cd random order state"));
  PetscCall(DemCheckpointIO(fp, write, &cd->compat.fs_prev, sizeof(PetscReal), "cd force scale"));
  PetscCall(DemHistoryMapCheckpoint_Private(&cd->wmap, fp, write, "cd warm-start forces")); /* history.c */
  PetscCall(DemHistoryMapCheckpoint_Private(&cd->compat.umap, fp, write, "cd compatibility displacements"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemIntegratorDestroy_CD(DemIntegrator ig)
{
  DemIntegrator_CD *cd  = (DemIntegrator_CD *)ig->data;
  DemCDSystem      *sys = &cd->sys;
  PetscBool         view = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cd_view", &view, NULL));
  if (view && cd->nsteps) {
    double c_all = DemCDCPUTime() - cd->c0_run;
    PetscCall(PetscPrintf(ig->comm, "cd: %" PetscInt_FMT " steps, solver %s (order %s), iterations mean %.1f max %" PetscInt_FMT ", max residual %.3g, %" PetscInt_FMT " steps not converged to tol %g; solve %.4f s wall, %.4f s CPU (%.3g s CPU/step); whole steps %.4f s CPU (%.3g s/step)\n", cd->nsteps, DemCDSolvers[cd->solver], DemCDOrders[cd->order], (double)cd->its_total / cd->nsteps, cd->its_max, (double)cd->res_max, cd->nunconverged, (double)cd->tol, (double)cd->t_solve, cd->c_solve, cd->c_solve / cd->nsteps, c_all, c_all / cd->nsteps));
    if (cd->ncompat) { /* MPI: each rank's share of the last solve and its residual */
      PetscMPIInt size, rank;
      PetscCallMPI(MPI_Comm_size(ig->comm, &size));
      PetscCallMPI(MPI_Comm_rank(ig->comm, &rank));
      if (size > 1) {
        PetscCall(PetscSynchronizedPrintf(ig->comm, "cd: compatibility post-solve on rank %d: last solve %" PetscInt_FMT " of %" PetscInt_FMT " rows, %" PetscInt_FMT " of %" PetscInt_FMT " contacts on this rank; max equilibrium residual on its bodies %.3g; loaded-cluster rounds max %" PetscInt_FMT "\n", (int)rank, cd->compat.nrows_local, cd->compat.nrows, cd->compat.nvars_local, cd->compat.nvars, (double)cd->compat.eqres_rank_max, cd->compat.rounds_max));
        PetscCall(PetscSynchronizedFlush(ig->comm, PETSC_STDOUT));
      }
    }
    if (cd->ncompat) PetscCall(PetscPrintf(ig->comm, "cd: compatibility post-solve: %" PetscInt_FMT " solves, TAOALMM iterations mean %.1f max %" PetscInt_FMT ", Newton steps mean %.1f max %" PetscInt_FMT ", %" PetscInt_FMT " TAOALMM errors, %" PetscInt_FMT " above compatible_tol %g, max equilibrium residual %.3g; %.4f s wall, %.4f s CPU (%.3g s CPU/solve)\n", cd->ncompat, (double)cd->compat_its_total / cd->ncompat, cd->compat_its_max, (double)cd->polish_its_total / cd->ncompat, cd->polish_its_max, cd->compat.almm_failed, cd->ncompat_fail, (double)cd->compat.tol, (double)cd->compat_eqres_max, (double)cd->t_compat, cd->c_compat, cd->c_compat / cd->ncompat));
  }
  PetscCall(PetscFree(cd->binv));
  PetscCall(PetscFree5(cd->u, cd->u0, cd->fext, cd->ft, cd->s));
  PetscCall(PetscFree(cd->mobile));
  PetscCall(PetscFree3(sys->a, sys->b, sys->src));
  PetscCall(PetscFree5(sys->J, sys->W, sys->diag, sys->gap, sys->rhs));
  PetscCall(PetscFree5(sys->f, sys->fc, sys->kt, sys->gend, sys->fw));
  PetscCall(PetscFree6(cd->x1, cd->x2, cd->x3, cd->x4, cd->x5, cd->x6));
  PetscCall(PetscFree(cd->perm));
  PetscCall(PetscFree(cd->act));
  if (cd->psim) PetscCall(DemDecompPairMap_Private(cd->psim, NULL));
  PetscCall(DemHistoryMapFree(&cd->wmap));
  if (cd->wown.cap) PetscCall(DemHistoryMapFree(&cd->wown));
  PetscCall(DemHistoryMapFree(&cd->compat.umap));
  PetscCall(PetscFree(ig->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemIntegratorCreate_CD - constructor of the `cd` integrator: fills the ops and the defaults
  of the keys listed in the file header.
*/
PetscErrorCode DemIntegratorCreate_CD(DemIntegrator ig)
{
  DemIntegrator_CD *cd;

  PetscFunctionBegin;
  PetscCall(PetscNew(&cd));
  cd->solver         = 0;
  cd->order          = 0;
  cd->seed           = 1;
  cd->tol            = 1e-10;
  cd->max_it         = 10000;
  cd->warm           = PETSC_TRUE;
  cd->margin         = -1;
  cd->compat_every   = 1;
  cd->compat.power   = 0;
  cd->compat.tol     = 1e-10;
  cd->compat.max_it  = 200;
  cd->compat.almm_tol = 1e-3;
  PetscCall(DemHistoryMapInit(&cd->wmap, 2));
  PetscCall(DemHistoryMapInit(&cd->compat.umap, 1));
  if (!DemCDClassId) {
    PetscCall(PetscClassIdRegister("DemIntegratorCD", &DemCDClassId));
    PetscCall(PetscLogEventRegister("CDSolve", DemCDClassId, &DemCDEventSolve));
    PetscCall(PetscLogEventRegister("CDCompat", DemCDClassId, &DemCDEventCompat));
  }
  cd->ev_solve  = DemCDEventSolve;
  cd->ev_compat = DemCDEventCompat;
  ig->data               = cd;
  ig->ops->setfromconfig = DemIntegratorSetFromConfig_CD;
  ig->ops->setup         = DemIntegratorSetUp_CD;
  ig->ops->step          = DemIntegratorStep_CD;
  ig->ops->destroy       = DemIntegratorDestroy_CD;
  ig->ops->checkpoint    = DemIntegratorCheckpoint_CD;
  ig->ops->mpigather     = DemCDMPIGather; /* MPI: every rank's warm starts in a checkpoint */
  ig->stability          = DEM_INTEGRATOR_IMPLICIT; /* rigid contacts: no collision time to resolve */
  ig->mpi                = PETSC_TRUE;              /* several MPI ranks (decomp.c): apgd, pgs (block Jacobi), compatible (solved on rank 0) */
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(integrator, "cd", DemIntegratorCreate_CD)
