/*
  bond.c - contact law `bond`: a linear spring-dashpot that acts in tension as in compression,
  the "simple bonded particle model" of 003_9f0cdbfccae61a56.txt section 3.3: between bonded
  particles the potential V = k_B delta^2 / 2 (003 eq. (27) with k_B for k_n) holds "even when
  particles were separated", i.e. for either sign of the overlap delta = -gap.

  Per contact with signed gap g (< 0: overlap), unit normal n (b to a), relative velocity v of
  a w.r.t. b at the contact point, vn = v . n, vt = v - vn n, effective mass m:
    normal      fn = -kn g - m gamma_n vn           (> 0 pushes a away from b; < 0 pulls)
    tangential  Ft = -m gamma_t vt                   (003 eq. (21) without the tangential
                                                      overlap, as in 003 section 3)
    energy      kn g^2 / 2;  dissipation power m gamma_n vn^2 + m gamma_t |vt|^2
  No history, no Coulomb limit, no breakage: a bond lasts the whole run.
  Bonds are made by src/core/bonds.c (top-level `bonds:` key), which hands every bonded pair
  to this law at any distance. Used as the law of a material pair (`contact:` entry), it acts
  only where the colliders report contacts, i.e. on overlapping pairs.

  Keys (`params:`): kn [N/m] (> 0, required), gamma_n [1/s] (>= 0) [0], gamma_t [1/s] (>= 0)
  [gamma_n / 2].
  Critical time: the half period pi / sqrt(kn/m - gamma_n^2/4) (undamped value if overdamped).
*/
#include "demimpl.h"

#define DEMCONTACTBOND "bond"

typedef struct {
  PetscReal kn, gamma_n, gamma_t;
} DemContactLaw_Bond;

static PetscErrorCode DemContactLawSetFromConfig_Bond(DemContactLaw law, DemNode cfg, const DemMaterialPair *mp)
{
  DemContactLaw_Bond *bd     = (DemContactLaw_Bond *)law->data;
  const char *const   keys[] = {"kn", "gamma_n", "gamma_t", NULL};
  DemNode             kn;
  PetscBool           has_gt;

  PetscFunctionBegin;
  if (!cfg) return DemNodeError(NULL, "kn is required for law bond: add params: {kn: ...} (bond stiffness, N/m)");
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemNodeGet(cfg, "kn", &kn));
  DemNodeCheck(cfg, kn, "kn is required for law bond (bond stiffness, N/m, > 0)");
  PetscCall(DemNodeGetReal(cfg, "kn", PETSC_TRUE, &bd->kn));
  DemNodeCheck(kn, bd->kn > 0 && bd->kn < PETSC_MAX_REAL, "contact.bond.kn must be > 0 N/m (got %g)", (double)bd->kn);
  bd->gamma_n = 0;
  PetscCall(DemNodeGetReal(cfg, "gamma_n", PETSC_FALSE, &bd->gamma_n));
  PetscCall(DemNodeGet(cfg, "gamma_n", &kn));
  DemNodeCheck(kn ? kn : cfg, bd->gamma_n >= 0, "contact.bond.gamma_n must be >= 0 1/s (got %g)", (double)bd->gamma_n);
  PetscCall(DemNodeGet(cfg, "gamma_t", &kn));
  has_gt = kn ? PETSC_TRUE : PETSC_FALSE;
  bd->gamma_t = 0.5 * bd->gamma_n;
  PetscCall(DemNodeGetReal(cfg, "gamma_t", PETSC_FALSE, &bd->gamma_t));
  DemNodeCheck(has_gt ? kn : cfg, bd->gamma_t >= 0, "contact.bond.gamma_t must be >= 0 1/s (got %g)", (double)bd->gamma_t);
  law->mp = *mp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawCompute_Bond(DemContactLaw law, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  const DemContactLaw_Bond *bd = (const DemContactLaw_Bond *)law->data;
  const PetscReal           kn = bd->kn;

  PetscFunctionBegin;
  (void)dt;
  (void)commit;
  for (PetscInt i = 0; i < batch->n; i++) {
    const PetscReal *n = batch->nrm + 3 * i, *v = batch->vrel + 3 * i;
    const PetscReal  g = batch->gap[i], m = batch->meff[i];
    const PetscReal  cn = m * bd->gamma_n, ct = m * bd->gamma_t;
    const PetscReal  vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
    PetscReal        vt[3], vt2;
    for (int j = 0; j < 3; j++) vt[j] = v[j] - vn * n[j];
    vt2              = vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2];
    out->fn[i]       = -kn * g - cn * vn;
    out->dfn_dgap[i] = -kn;
    out->cn[i]       = cn;
    out->kt[i]       = 0;
    out->energy[i]   = 0.5 * kn * g * g;
    out->dissip[i]   = cn * vn * vn + ct * vt2;
    out->slip[i]     = 0;
    for (int j = 0; j < 3; j++) out->ft[3 * i + j] = -ct * vt[j];
    if (out->fdamp)
      for (int j = 0; j < 3; j++) out->fdamp[3 * i + j] = -cn * vn * n[j] - ct * vt[j];
    if (out->eslip) out->eslip[i] = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawCriticalDt_Bond(DemContactLaw law, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt)
{
  const DemContactLaw_Bond *bd = (const DemContactLaw_Bond *)law->data;
  PetscReal                 w2, d;

  PetscFunctionBegin;
  (void)r_eff;
  (void)v_rel;
  PetscCheck(m_eff > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "law bond: effective mass must be > 0, got %g", (double)m_eff);
  w2  = bd->kn / m_eff;
  d   = w2 - 0.25 * bd->gamma_n * bd->gamma_n;
  *dt = d > 0 ? PETSC_PI / PetscSqrtReal(d) : PETSC_PI / PetscSqrtReal(w2);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawDestroy_Bond(DemContactLaw law)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(law->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemContactLawCreate_Bond - constructor of the "bond" law: no history, activation 0.
*/
PetscErrorCode DemContactLawCreate_Bond(DemContactLaw law)
{
  DemContactLaw_Bond *bd;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bd));
  law->data               = bd;
  law->ops->setfromconfig = DemContactLawSetFromConfig_Bond;
  law->ops->compute       = DemContactLawCompute_Bond;
  law->ops->criticaldt    = DemContactLawCriticalDt_Bond;
  law->ops->destroy       = DemContactLawDestroy_Bond;
  law->histsize           = 0;
  law->activation         = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_STYLE(contact, "bond", DemContactLawCreate_Bond)
