/*
  cohesion.c - example plugin: contact law `cohesion`, a linear normal spring with a constant
  adhesive pull-off force (a simplified JKR/DMT model), frictionless. Built by `make` into
  build/plugins/cohesion.so; load it with `plugins: [...]` or `--plugin`.

  Model, per contact with signed gap g (< 0 overlap, delta = -g), unit normal n (b to a),
  normal relative velocity vn (< 0 approaching), effective mass m; fn > 0 pushes a from b:

    overlap          g <= 0:        fn = kn delta - Fc - m gamma_n vn
    attraction       0 < g < rc:    fn = -Fc (1 - g / rc)
    free             g >= rc:       fn = 0

  The force is continuous (-Fc at g = 0 from both sides, 0 at g = rc) and derives from the
  potential (stored energy, which may be negative)

    U(g) = 1/2 kn delta^2 - Fc delta - 1/2 Fc rc     (g <= 0)
    U(g) = -1/2 Fc (rc - g)^2 / rc                   (0 < g < rc),   U = 0 beyond.

  Pull-off, analytically (undamped): the largest attractive force is Fc, so a static pull
  larger than Fc separates the pair (the JKR pull-off force when Fc = 3/2 pi w R*, w the work
  of adhesion [J/m^2], R* the effective radius: key surface_energy). At rest the pair sits at
  delta_eq = Fc / kn, in a well of depth W = Fc^2 / (2 kn) + Fc rc / 2. Dynamically a pair
  with normal relative speed v at gap g0 separates for good iff 1/2 m v^2 + U(g0) > 0; from
  touching (g0 = 0) that is

    v > v_c = sqrt(Fc rc / m),   and then it leaves with v_inf = sqrt(v^2 - v_c^2);

  below v_c it stops at g_max = rc (1 - sqrt(1 - v^2 / v_c^2)) and comes back.

  Keys (`params:` of the contact entry):
    kn              normal stiffness [N/m], > 0, required
    pull_off        Fc [N], > 0; or
    surface_energy  w [J/m^2], > 0: Fc = 3/2 pi w R* per contact (one of the two required)
    range           rc [m], >= 0 [Fc / kn, the equilibrium overlap; required with
                    surface_energy]; 0: attraction only while overlapping (the force then
                    drops from -Fc to 0 at g = 0). Keep it below the neighbour skin
                    (search.skin), or pairs farther apart than the skin are not seen.
    gamma_n         normal damping while overlapping [1/s], >= 0 [0]: force -m gamma_n vn
                    (the LAMMPS convention of hooke)
  Critical time: pi sqrt(m / kn), the undamped half period of the spring.
  Thermo column (registered by the plugin): cohesive_bonds, the number of contacts of this
  law within range (g < rc) at the last force evaluation.
*/
#include <demimpl.h>
#include <dem_plugin.h>

static const DemHostAPI *api; /* the host table, kept by dem_plugin_init */

typedef struct {
  PetscReal kn, Fc, w, rc, gamma_n;
  PetscBool from_w;   /* Fc from the surface energy, per contact */
  PetscBool rc_given; /* else rc = Fc / kn */
} Cohesion;

static void CohesionParams(const Cohesion *c, PetscReal reff, PetscReal *Fc, PetscReal *rc)
{
  *Fc = c->from_w ? 1.5 * PETSC_PI * c->w * reff : c->Fc;
  *rc = c->rc_given ? c->rc : *Fc / c->kn;
}

static PetscErrorCode CohesionSetFromConfig(DemContactLaw law, DemNode cfg, const DemMaterialPair *mp)
{
  Cohesion         *c      = (Cohesion *)law->data;
  const char *const keys[] = {"kn", "pull_off", "surface_energy", "range", "gamma_n", NULL};
  DemNode           n;

  PetscFunctionBegin;
  if (!cfg) return api->node_error(NULL, "law cohesion needs params: {kn: N/m, pull_off: N} (or surface_energy: J/m^2 instead of pull_off)");
  PetscCall(api->node_allow_keys(cfg, keys));
  PetscCall(api->node_get_real(cfg, "kn", PETSC_TRUE, &c->kn));
  PetscCall(api->node_get(cfg, "kn", &n));
  if (!(c->kn > 0)) return api->node_error(n, "kn must be > 0 N/m (got %g)", (double)c->kn);
  PetscCall(api->node_get(cfg, "pull_off", &n));
  if (n) {
    PetscCall(api->node_get_real(cfg, "pull_off", PETSC_TRUE, &c->Fc));
    if (!(c->Fc > 0)) return api->node_error(n, "pull_off must be > 0 N (got %g)", (double)c->Fc);
  }
  {
    DemNode wn;
    PetscCall(api->node_get(cfg, "surface_energy", &wn));
    if (wn && n) return api->node_error(wn, "give pull_off or surface_energy, not both");
    if (!wn && !n) return api->node_error(cfg, "law cohesion needs pull_off (N) or surface_energy (J/m^2)");
    if (wn) {
      PetscCall(api->node_get_real(cfg, "surface_energy", PETSC_TRUE, &c->w));
      if (!(c->w > 0)) return api->node_error(wn, "surface_energy must be > 0 J/m^2 (got %g)", (double)c->w);
      c->from_w = PETSC_TRUE;
    }
  }
  PetscCall(api->node_get(cfg, "range", &n));
  if (n) {
    PetscCall(api->node_get_real(cfg, "range", PETSC_TRUE, &c->rc));
    if (!(c->rc >= 0)) return api->node_error(n, "range must be >= 0 m (got %g)", (double)c->rc);
    c->rc_given = PETSC_TRUE;
  } else if (c->from_w) return api->node_error(cfg, "law cohesion with surface_energy needs range (m): the attraction range cannot default to Fc / kn when Fc differs per contact");
  PetscCall(api->node_get_real(cfg, "gamma_n", PETSC_FALSE, &c->gamma_n));
  PetscCall(api->node_get(cfg, "gamma_n", &n));
  if (!(c->gamma_n >= 0)) return api->node_error(n, "gamma_n must be >= 0 1/s (got %g)", (double)c->gamma_n);
  /* the colliders report pairs up to the largest activation distance of all laws */
  law->activation = c->rc_given ? c->rc : c->Fc / c->kn;
  law->mp         = *mp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CohesionCompute(DemContactLaw law, const DemContactBatch *b, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  const Cohesion *c = (const Cohesion *)law->data;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < b->n; i++) {
    const PetscReal *n = b->nrm + 3 * i, *v = b->vrel + 3 * i;
    const PetscReal  g = b->gap[i], m = b->meff[i];
    PetscReal        Fc, rc, fn = 0, dfn = 0, cn = 0, e = 0, p = 0, vn;
    CohesionParams(c, b->reff[i], &Fc, &rc);
    vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
    if (g <= 0) {
      const PetscReal delta = -g;
      cn  = m * c->gamma_n;
      fn  = c->kn * delta - Fc - cn * vn;
      dfn = -c->kn;
      e   = 0.5 * c->kn * delta * delta - Fc * delta - 0.5 * Fc * rc;
      p   = cn * vn * vn;
    } else if (g < rc) {
      fn  = -Fc * (1 - g / rc);
      dfn = Fc / rc;
      e   = -0.5 * Fc * (rc - g) * (rc - g) / rc;
    }
    out->fn[i]       = fn;
    out->dfn_dgap[i] = dfn;
    out->cn[i]       = cn;
    out->kt[i]       = 0;
    out->energy[i]   = e;
    out->dissip[i]   = p;
    out->slip[i]     = 0;
    for (int d = 0; d < 3; d++) out->ft[3 * i + d] = 0, out->fdamp[3 * i + d] = -cn * vn * n[d];
    out->eslip[i] = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CohesionCriticalDt(DemContactLaw law, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt)
{
  const Cohesion *c = (const Cohesion *)law->data;

  PetscFunctionBegin;
  PetscCheck(m_eff > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "law cohesion: effective mass must be > 0, got %g", (double)m_eff);
  *dt = PETSC_PI * PetscSqrtReal(m_eff / c->kn);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CohesionDestroy(DemContactLaw law)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(law->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CohesionCreate(DemContactLaw law)
{
  Cohesion *c;

  PetscFunctionBegin;
  PetscCall(PetscNew(&c));
  law->data               = c;
  law->ops->setfromconfig = CohesionSetFromConfig;
  law->ops->compute       = CohesionCompute;
  law->ops->criticaldt    = CohesionCriticalDt;
  law->ops->destroy       = CohesionDestroy;
  law->histsize           = 0;
  law->activation         = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* thermo column cohesive_bonds: contacts of this law within range */
static PetscErrorCode CohesionBonds(DemSim sim, void *ctx, PetscReal *value)
{
  const DemContactList   *cl;
  const DemContactForces *cf;
  PetscReal               n = 0;

  PetscFunctionBegin;
  PetscCall(api->sim_get_contacts(sim, &cl, &cf));
  for (PetscInt k = 0; k < cl->n; k++) {
    DemContactLaw law;
    PetscReal     Fc, rc;
    PetscCall(api->sim_get_contact_law(sim, cl->law[k], &law));
    if (law->ops->compute != CohesionCompute) continue;
    CohesionParams((const Cohesion *)law->data, cl->reff[k], &Fc, &rc);
    if (cl->gap[k] < rc || cl->gap[k] <= 0) n += 1;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPIU_REAL, MPIU_SUM, api->sim_get_comm(sim)));
  *value = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_PLUGIN_DEFINE("cohesion", "1.0", "contact law cohesion: linear spring with a constant pull-off force");

PetscErrorCode dem_plugin_init(const DemHostAPI *host, DemPlugin self)
{
  PetscFunctionBegin;
  PetscCheck(host->abi_major == DEM_PLUGIN_ABI_MAJOR, PETSC_COMM_SELF, PETSC_ERR_LIB, "cohesion: host plugin ABI %u, built for %d", (unsigned)host->abi_major, DEM_PLUGIN_ABI_MAJOR);
  api = host;
  PetscCall(api->register_contact_law(self, "cohesion", CohesionCreate));
  PetscCall(api->register_thermo(self, "cohesive_bonds", CohesionBonds, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}
