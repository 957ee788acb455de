/*
  barrier_hybrid.c - the hybrid penalty/barrier interface law of 000_c57329b1a40312e0.txt
  (section 2.4.7-2.4.8) for contacts that never overlap (polyhedra, whose colliders report the
  proximity g_n >= 0 of each pointwise contact).

  Normal, eq. (49), with the proximity g = gap (> 0) and the switch gap gg = f g_bar:
    fn = 0                              g >= g_bar
    fn = eps1 (g_bar - g)^n1            gg <= g < g_bar        (part (i): penalty-like)
    fn = eps2 g^n2 + c2                 g < gg                 (part (ii): barrier, n2 < 0)
  eps2 and c2 from the matching conditions eq. (50)-(51) (value and slope continuous at gg):
    eps2 = -eps1 n1 (g_bar - gg)^(n1 - 1) / (n2 gg^(n2 - 1)),  c2 = eps1 (g_bar - gg)^n1 - eps2 gg^n2.
  Stored energy: the potential of fn, E(g) = int_g^g_bar fn ds, in closed form per part.
  Damping, eq. (52)-(53): f_d = 2 zeta sqrt(-dfn/dg m_A m_B/(m_A + m_B)) dg/dt, and the total
  normal force is never tensile (f_d = -fn when it would be). The N pointwise contacts of one
  body pair (consecutive in the batch, as the colliders report them) share the pair's dashpot
  2 zeta sqrt(K m), K = sum of their -dfn/dg, in proportion to each one's -dfn/dg (one point:
  eq. (52) as written; see DemContactLawCompute_Barrier).
  Friction, eq. (54)-(58): tangential gap g_t (accumulated relative tangential displacement,
  carried to the new tangent plane each step, eq. (43)-(44)); trial force
  ft_tr = -eps_t g_t - c_t v_t; a sticking contact slips when |ft_tr| > mu_s fn, a sliding one
  sticks again when |ft_tr| <= mu_d fn; sliding force mu_d fn ft_tr/|ft_tr|. The elastic part
  is updated by eq. (57)-(58): when |eps_t g_t| > mu fn (mu = mu_s sticking, mu_d sliding),
  g_t <- (mu_d fn / eps_t) g_t / |g_t|.
  History (per pointwise contact, in the contact's history slot: the colliders give every
  contact of a polyhedron pair a slot of its own per feature key through the neighbour list's
  feature slots, src/search/featslot.c, which keeps them across rebuilds and in checkpoints):
  friction.h's layout, h[0..2] = g_t, h[3] = sliding flag. Written only at committed
  evaluations; an inactive contact (g >= g_bar) writes zeros, and forces.c zeroes the slots
  of contacts that were not reported (gap < activation = g_bar), so a contact that leaves
  forgets its history.

  Keys (`params:` of the contact entry):
    g_bar   activation gap [m], > 0, required
    f       switch fraction, gg = f g_bar, in (0, 1) [0.5]
    eps1    part (i) coefficient [N/m^n1], > 0, required
    n1      part (i) exponent, >= 1 [1]
    n2      barrier exponent, < 0 [-2]
    zeta    damping ratio, >= 0 [0]
    mu, or mu_s and mu_d   friction coefficients [mean of the materials' friction]
    eps_t   tangential stiffness [N/m], > 0 [the normal tangent stiffness at gg]
    c_t     tangential viscous coefficient [N s/m], >= 0 [0]
  Critical time (explicit integrators): pi sqrt(m / k(gg)) with k = -dfn/dg at the switch gap;
  contacts that come closer than gg are stiffer (000 Fig. 11): choose dt for the closest
  approach expected.
  Initial configurations must not overlap (the barrier cannot start from a penetration):
  sim.c's set-up check refuses any contact with gap <= 0 for a law with an activation gap.
*/
#include "demimpl.h"
#include "friction.h"

#define DEMCONTACTBARRIER "barrier_hybrid"

typedef struct {
  PetscReal gbar, f, eps1, n1, n2, zeta, mu_s, mu_d, eps_t, c_t;
  PetscReal gg, eps2, c2, E1gg, gmin, ggn21; /* derived; ggn21 = gg^(n2 + 1) */
} DemContactLaw_Barrier;

/* elastic normal force, its derivative d fn / d g and the stored energy at proximity g */
static inline void DemBarrierNormal(const DemContactLaw_Barrier *bh, PetscReal g, PetscReal *fn, PetscReal *dfn, PetscReal *E)
{
  if (g >= bh->gbar) {
    *fn = *dfn = *E = 0;
    return;
  }
  if (g >= bh->gg) {
    PetscReal d = bh->gbar - g, dn1 = bh->n1 == 1 ? d : bh->n1 == 2 ? d * d : PetscPowReal(d, bh->n1); /* the usual exponents without pow */
    *fn  = bh->eps1 * dn1;
    *dfn = -bh->eps1 * bh->n1 * dn1 / d;
    *E   = bh->eps1 * dn1 * d / (bh->n1 + 1);
    return;
  }
  if (g < bh->gmin) g = bh->gmin; /* a penetrated contact (dt too large): the closest gap resolved */
  {
    PetscReal gn2 = bh->n2 == -2 ? 1 / (g * g) : bh->n2 == -1 ? 1 / g : PetscPowReal(g, bh->n2);
    *fn  = bh->eps2 * gn2 + bh->c2;
    *dfn = bh->eps2 * bh->n2 * gn2 / g;
    /* E1(gg) + int_g^gg (eps2 s^n2 + c2) ds */
    if (bh->n2 == -1) *E = bh->E1gg + bh->eps2 * PetscLogReal(bh->gg / g) + bh->c2 * (bh->gg - g);
    else *E = bh->E1gg + bh->eps2 * (bh->ggn21 - gn2 * g) / (bh->n2 + 1) + bh->c2 * (bh->gg - g);
  }
}

static PetscErrorCode DemContactLawSetFromConfig_Barrier(DemContactLaw law, DemNode cfg, const DemMaterialPair *mp)
{
  DemContactLaw_Barrier *bh     = (DemContactLaw_Barrier *)law->data;
  const char *const      keys[] = {"g_bar", "f", "eps1", "n1", "n2", "zeta", "mu", "mu_s", "mu_d", "eps_t", "c_t", NULL};
  PetscBool              set;

  PetscFunctionBegin;
  if (!cfg) return DemNodeError(NULL, "law barrier_hybrid needs params: {g_bar: ..., eps1: ...} (activation gap in m, part (i) coefficient)");
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "g_bar", 0, PETSC_TRUE, PETSC_MAX_REAL, PETSC_FALSE, &bh->gbar, &set));
  DemNodeCheck(cfg, set, "g_bar is required for law barrier_hybrid (activation gap, m, > 0)");
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "eps1", 0, PETSC_TRUE, PETSC_MAX_REAL, PETSC_FALSE, &bh->eps1, &set));
  DemNodeCheck(cfg, set, "eps1 is required for law barrier_hybrid (part (i) coefficient, N/m^n1, > 0)");
  bh->f = 0.5, bh->n1 = 1, bh->n2 = -2, bh->zeta = 0, bh->c_t = 0;
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "f", 0, PETSC_TRUE, 1, PETSC_TRUE, &bh->f, &set));
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "n1", 1, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &bh->n1, &set));
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "n2", -PETSC_MAX_REAL, PETSC_FALSE, 0, PETSC_TRUE, &bh->n2, &set));
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "zeta", 0, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &bh->zeta, &set));
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "c_t", 0, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &bh->c_t, &set));
  PetscCall(DemLawFriction_Private(cfg, DEMCONTACTBARRIER, "mu", mp, &bh->mu_s, &bh->mu_d));
  /* derived: eq. (51) */
  bh->gg   = bh->f * bh->gbar;
  bh->eps2 = -bh->eps1 * bh->n1 * PetscPowReal(bh->gbar - bh->gg, bh->n1 - 1) / (bh->n2 * PetscPowReal(bh->gg, bh->n2 - 1));
  bh->c2   = bh->eps1 * PetscPowReal(bh->gbar - bh->gg, bh->n1) - bh->eps2 * PetscPowReal(bh->gg, bh->n2);
  bh->E1gg = bh->eps1 * PetscPowReal(bh->gbar - bh->gg, bh->n1 + 1) / (bh->n1 + 1);
  bh->gmin = 1e-6 * bh->gg;
  bh->ggn21 = PetscPowReal(bh->gg, bh->n2 + 1);
  bh->eps_t = bh->eps1 * bh->n1 * PetscPowReal(bh->gbar - bh->gg, bh->n1 - 1);
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTBARRIER, "eps_t", 0, PETSC_TRUE, PETSC_MAX_REAL, PETSC_FALSE, &bh->eps_t, &set));
  law->activation = bh->gbar;
  law->mp         = *mp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawCompute_Barrier(DemContactLaw law, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  DemContactLaw_Barrier *bh = (DemContactLaw_Barrier *)law->data;

  PetscInt               run1 = 0, nrun = 0; /* the run of contacts of one body pair: [.., run1) */
  PetscReal              Krun = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < batch->n; i++) {
    if (i >= run1) { /* a new body pair: its consecutive contacts, and with several their summed tangent stiffness */
      for (run1 = i + 1; run1 < batch->n && batch->a[run1] == batch->a[i] && batch->b[run1] == batch->b[i]; run1++) { }
      nrun = run1 - i;
      Krun = 0;
      for (PetscInt k = i; nrun > 1 && k < run1; k++) {
        PetscReal fe1, dfe1, E1;
        DemBarrierNormal(bh, batch->gap[k], &fe1, &dfe1, &E1);
        Krun += PetscMax(-dfe1, 0);
      }
    }
    const PetscReal *n = batch->nrm + 3 * i, *vr = batch->vrel + 3 * i;
    PetscReal       *h = batch->hist[i] >= 0 ? batch->history + batch->hist[i] * batch->histsize : NULL;
    PetscReal        fe, dfe, E, vn, vt[3], cn, fn, gt[3] = {0, 0, 0}, go[3], gtr[3], fet[3], fdt[3], ftr[3], ntr, ft[3], m = batch->meff[i];
    int              slid = 0, slip;

    DemBarrierNormal(bh, batch->gap[i], &fe, &dfe, &E);
    vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
    for (int j = 0; j < 3; j++) vt[j] = vr[j] - vn * n[j];
    /* eq. (52)-(53): dashpot from the tangent stiffness, total normal force compressive. The N
       pointwise contacts of one body pair (a face-face contact is N points, 000 Fig. 4c) act in
       parallel: eq. (52) at each point would give the pair the dashpot N 2 zeta sqrt(k m), a
       damping ratio sqrt(N) zeta, and with explicit steps a dashpot beyond c dt / m = 1 flips
       the velocity's sign every step (a cube stack at zeta 0.7, dt 1e-5 s: the ground reaction
       oscillated +-3.8 % of the weight with period 2 steps and the top cube crept,
       tests/cases/poly_stack.sh). The pair's dashpot is 2 zeta sqrt(K m), K = sum of the points'
       tangent stiffnesses k_i, shared in proportion to k_i: c_i = 2 zeta k_i sqrt(m / K); one
       point: eq. (52) as written. */
    if (!(m < PETSC_MAX_REAL)) m = 0; /* two bodies that never move */
    if (nrun > 1 && Krun > 0) cn = 2 * bh->zeta * PetscMax(-dfe, 0) * PetscSqrtReal(m / Krun);
    else cn = 2 * bh->zeta * PetscSqrtReal(PetscMax(-dfe, 0) * m);
    fn = fe - cn * vn;
    if (fn < 0) fn = 0;
    /* eq. (43)-(44): the previous tangential gap, turned into the new tangent plane, plus the
       relative tangential displacement of this step */
    if (h) {
      PetscReal l0 = PetscSqrtReal(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]), gn = h[0] * n[0] + h[1] * n[1] + h[2] * n[2], l1;
      for (int j = 0; j < 3; j++) gt[j] = h[j] - gn * n[j];
      l1 = PetscSqrtReal(gt[0] * gt[0] + gt[1] * gt[1] + gt[2] * gt[2]);
      if (l1 > 0)
        for (int j = 0; j < 3; j++) gt[j] *= l0 / l1;
      slid = h[3] != 0;
    }
    for (int j = 0; j < 3; j++) go[j] = gt[j]; /* g_t of the last commit, in this tangent plane */
    for (int j = 0; j < 3; j++) gt[j] += vt[j] * dt;
    /* eq. (54)-(56) */
    for (int j = 0; j < 3; j++) {
      fet[j] = -bh->eps_t * gt[j];
      fdt[j] = -bh->c_t * vt[j];
      ftr[j] = fet[j] + fdt[j];
    }
    ntr = PetscSqrtReal(ftr[0] * ftr[0] + ftr[1] * ftr[1] + ftr[2] * ftr[2]);
    if (fe == 0 && fn == 0) { /* outside the activation gap: no friction, history forgotten */
      ft[0] = ft[1] = ft[2] = 0;
      slip  = 0;
    } else if (ntr <= (slid ? bh->mu_d : bh->mu_s) * fn) {
      for (int j = 0; j < 3; j++) ft[j] = ftr[j];
      slip = 0;
    } else {
      for (int j = 0; j < 3; j++) ft[j] = ntr > 0 ? bh->mu_d * fn * ftr[j] / ntr : 0;
      slip = 1;
    }
    for (int j = 0; j < 3; j++) gtr[j] = gt[j];
    /* eq. (57)-(58): the elastic part keeps only its recoverable share */
    if (fe == 0 && fn == 0) gt[0] = gt[1] = gt[2] = 0;
    else {
      PetscReal ne = bh->eps_t * PetscSqrtReal(gt[0] * gt[0] + gt[1] * gt[1] + gt[2] * gt[2]);
      PetscReal mu = slip ? bh->mu_d : bh->mu_s;
      if (ne > mu * fn && ne > 0) {
        PetscReal sc = bh->mu_d * fn / ne;
        for (int j = 0; j < 3; j++) gt[j] *= sc;
      }
    }
    /* energy: the applied ft splits into the spring's part -eps_t g_t (g_t after eq. (57)-(58))
       and a dissipative rest fd = ft + eps_t g_t (the viscous part when sticking, the sliding
       force's excess over the spring when sliding); the spring's work over the step
       (trapezoid between the last commit's g_old and g_t) minus the change of its energy is
       what eq. (57)-(58) removed, es = eps_t/2 (g_old + g_t).(g_trial - g_t) (>= 0 unless one
       step reverses the old g_t), as in friction.h. Booking the whole sliding force as
       dissipative and E(g_trial) - E(g_t) as removed counted the sliding work twice (a growing
       e_balance with friction, and eps_t |v_t dt|^2 / 2 per step even with mu = 0). */
    {
      PetscReal es = 0, e2 = gt[0] * gt[0] + gt[1] * gt[1] + gt[2] * gt[2], fdn = fn - fe, pt = 0;
      for (int j = 0; j < 3; j++) es += (go[j] + gt[j]) * (gtr[j] - gt[j]);
      es *= 0.5 * bh->eps_t;
      for (int j = 0; j < 3; j++) {
        PetscReal dtj = ft[j] + bh->eps_t * gt[j];
        if (out->fdamp) out->fdamp[3 * i + j] = fdn * n[j] + dtj;
        pt -= dtj * vt[j];
      }
      if (out->eslip) out->eslip[i] = commit ? es : 0;
      out->energy[i] = E + 0.5 * bh->eps_t * e2;
      out->dissip[i] = -fdn * vn + pt + (dt > 0 ? es / dt : 0);
    }
    out->fn[i]       = fn;
    out->dfn_dgap[i] = dfe;
    out->cn[i]       = (fe - cn * vn < 0) ? 0 : cn;
    out->kt[i]       = slip ? 0 : bh->eps_t;
    out->slip[i]     = slip;
    for (int j = 0; j < 3; j++) out->ft[3 * i + j] = ft[j];
    if (commit && h) { /* inactive (fe = fn = 0): gt = 0 and slip = 0 were set above */
      for (int j = 0; j < 3; j++) h[j] = gt[j];
      h[3] = slip;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawCriticalDt_Barrier(DemContactLaw law, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt)
{
  const DemContactLaw_Barrier *bh = (const DemContactLaw_Barrier *)law->data;
  PetscReal                    fe, dfe, E;

  PetscFunctionBegin;
  (void)r_eff, (void)v_rel;
  PetscCheck(m_eff > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "law barrier_hybrid: effective mass must be > 0, got %g", (double)m_eff);
  DemBarrierNormal(bh, bh->gg, &fe, &dfe, &E);
  *dt = PETSC_PI * PetscSqrtReal(m_eff / -dfe);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawDestroy_Barrier(DemContactLaw law)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(law->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode DemContactLawCreate_Barrier(DemContactLaw);
PetscErrorCode DemContactLawCreate_Barrier(DemContactLaw law)
{
  DemContactLaw_Barrier *bh;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bh));
  law->data               = bh;
  law->ops->setfromconfig = DemContactLawSetFromConfig_Barrier;
  law->ops->compute       = DemContactLawCompute_Barrier;
  law->ops->criticaldt    = DemContactLawCriticalDt_Barrier;
  law->ops->destroy       = DemContactLawDestroy_Barrier;
  law->histsize           = DEM_FRICTION_HISTSIZE; /* g_t[3], sliding flag (friction.h's layout) */
  law->activation         = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_STYLE(contact, "barrier_hybrid", DemContactLawCreate_Barrier)
