/*
  fields.c - field forces that every integrator sees through DemForcesCompute: viscous drag of
  a surrounding fluid and pairwise near-field (Mie) forces, 001_558b02b5fc003581.txt section
  3.2-3.3.

  Drag, 001 eq. (15), on every mobile body i:
      f_i = -c_fluid (v_i - v_fluid)
  It is a velocity-dependent force: it goes into the dissipative arrays out->fd (so that the
  integrators' energy bookkeeping counts its work as dissipated, e.g. verlet's
  -dt/2 (fd(n) + fd(n+1)).v(n+1/2)) and its power c_fluid (v_i - v_fluid).v_i into
  out->dissip_rate. With v_fluid != 0 the fluid can also feed energy in; `dissipated` then
  is the net energy given to the fluid.

  Near-field forces, 001 eq. (16)-(18), between every pair of particles (walls excluded) whose
  centres are closer than `cutoff`:
      f_ij = (kappa1 d^-lambda1 - kappa2 d^-lambda2) n_ij,  d = |x_i - x_j|,
      n_ij = (x_j - x_i) / d                                (acts on i; -f_ij on j)
  kappa1, lambda1: the attractive part; kappa2, lambda2: the repulsive part. The force is
  conservative: with F(s) = kappa1 s^-lambda1 - kappa2 s^-lambda2 it derives from the pair
  potential, shifted to zero at the cut-off,
      U(d) = -int_d^cutoff F(s) ds
           = -kappa1 (rc^(1-l1) - d^(1-l1)) / (1 - l1) + kappa2 (rc^(1-l2) - d^(1-l2)) / (1 - l2)
  (kappa ln(rc / d) for lambda = 1), which is added to out->pe_contact, so that thermo.csv's
  e_balance includes it. The force itself is truncated at the cut-off (not shifted): a pair
  that crosses the cut-off meets a force step of F(rc), whose work the potential accounts for.
  Pairs come from their own pass, a cell grid with cells no smaller than the cut-off built at
  every evaluation (the neighbour list only holds pairs within contact reach r_a + r_b + skin,
  and a near-field cut-off is usually longer); periodic directions use the nearest image and
  need a period of at least twice the cut-off. The distance is between centres, as in 001
  eq. (17); for overlapping bodies the contact law acts as well. Fixed bodies that are not
  walls take part (they receive the reaction); pairs of two fixed bodies are skipped.

  Keys (top-level `fields:`; each part optional):
    drag: {c_fluid: N s/m (>= 0, required), fluid_velocity: [vx, vy, vz] m/s [0, 0, 0]}
    mie:  {kappa1: >= 0 [0], lambda1: > 0 [1], kappa2: >= 0 [0], lambda2: > 0 [1],
           cutoff: m (> 0, required)}
  Units: kappa has units N m^lambda.
*/
#include "demimpl.h"

typedef struct _DemFields {
  PetscBool drag, mie;
  PetscReal c_fluid, vfluid[3];
  PetscReal k1, l1, k2, l2, rc;
  /* cell grid scratch of the Mie pass */
  PetscInt *head, *next, *cell;
  PetscInt  headcap, bodycap;
} DemFields;

static PetscErrorCode DemFieldsReadReal(DemNode map, const char key[], PetscBool required, PetscReal lo, PetscBool open, PetscReal *val)
{
  DemNode kn;

  PetscFunctionBegin;
  PetscCall(DemNodeGetReal(map, key, required, val));
  PetscCall(DemNodeGet(map, key, &kn));
  if (kn) DemNodeCheck(kn, (open ? *val > lo : *val >= lo) && *val < PETSC_MAX_REAL, "%s must be %s %g (got %g)", key, open ? ">" : ">=", (double)lo, (double)*val);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemFieldsSetFromConfig_Private - reads the top-level `fields:` mapping (see the file
  comment). Collective; nothing is set when the key is absent.
*/
PetscErrorCode DemFieldsSetFromConfig_Private(DemSim sim, DemNode root)
{
  DemNode           fn, dn, mn;
  DemFields        *fl;
  const char *const fk[] = {"drag", "mie", NULL};

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "fields", &fn));
  if (!fn) PetscFunctionReturn(PETSC_SUCCESS);
  DemNodeCheck(fn, DemNodeGetType(fn) == DEM_NODE_MAP, "fields must be a mapping {drag: {...}, mie: {...}}");
  PetscCall(DemNodeAllowKeys(fn, fk));
  PetscCall(PetscNew(&fl));
  sim->fields = fl;
  PetscCall(DemNodeGet(fn, "drag", &dn));
  if (dn) {
    const char *const dk[] = {"c_fluid", "fluid_velocity", NULL};
    DemNodeCheck(dn, DemNodeGetType(dn) == DEM_NODE_MAP, "fields.drag must be a mapping {c_fluid: N s/m, fluid_velocity: [vx, vy, vz]}");
    PetscCall(DemNodeAllowKeys(dn, dk));
    PetscCall(DemFieldsReadReal(dn, "c_fluid", PETSC_TRUE, 0, PETSC_FALSE, &fl->c_fluid));
    PetscCall(DemNodeGetRealArray(dn, "fluid_velocity", PETSC_FALSE, 3, fl->vfluid));
    fl->drag = PETSC_TRUE;
  }
  PetscCall(DemNodeGet(fn, "mie", &mn));
  if (mn) {
    const char *const mk[] = {"kappa1", "lambda1", "kappa2", "lambda2", "cutoff", NULL};
    DemNodeCheck(mn, DemNodeGetType(mn) == DEM_NODE_MAP, "fields.mie must be a mapping {kappa1, lambda1, kappa2, lambda2, cutoff}");
    PetscCall(DemNodeAllowKeys(mn, mk));
    fl->l1 = fl->l2 = 1;
    PetscCall(DemFieldsReadReal(mn, "kappa1", PETSC_FALSE, 0, PETSC_FALSE, &fl->k1));
    PetscCall(DemFieldsReadReal(mn, "lambda1", PETSC_FALSE, 0, PETSC_TRUE, &fl->l1));
    PetscCall(DemFieldsReadReal(mn, "kappa2", PETSC_FALSE, 0, PETSC_FALSE, &fl->k2));
    PetscCall(DemFieldsReadReal(mn, "lambda2", PETSC_FALSE, 0, PETSC_TRUE, &fl->l2));
    PetscCall(DemFieldsReadReal(mn, "cutoff", PETSC_TRUE, 0, PETSC_TRUE, &fl->rc));
    for (int d = 0; d < 3; d++) {
      DemNode kn;
      if (!sim->periodic[d]) continue;
      PetscCall(DemNodeGet(mn, "cutoff", &kn));
      DemNodeCheck(kn, sim->hi[d] - sim->lo[d] >= 2 * fl->rc, "cutoff %g m is more than half the period along %c (%g m)", (double)fl->rc, "xyz"[d], (double)(sim->hi[d] - sim->lo[d]));
    }
    fl->mie = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemFieldsDestroy_Private(DemSim sim)
{
  DemFields *fl = sim->fields;

  PetscFunctionBegin;
  if (!fl) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree(fl->head));
  PetscCall(PetscFree2(fl->next, fl->cell));
  PetscCall(PetscFree(sim->fields));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* int_d^rc kappa s^-lambda ds */
static inline PetscReal DemMieIntegral(PetscReal kappa, PetscReal lambda, PetscReal d, PetscReal rc)
{
  if (kappa == 0) return 0;
  if (PetscAbsReal(lambda - 1) < 1e-12) return kappa * PetscLogReal(rc / d);
  return kappa * (PetscPowReal(rc, 1 - lambda) - PetscPowReal(d, 1 - lambda)) / (1 - lambda);
}

/* one pair: force on i (and its reaction on j), returns the pair potential */
static inline PetscReal DemMiePair(const DemFields *fl, const PetscReal dxij[3], PetscReal d2, PetscReal *fi, PetscReal *fj)
{
  const PetscReal d = PetscSqrtReal(d2);
  const PetscReal F = fl->k1 * PetscPowReal(d, -fl->l1) - fl->k2 * PetscPowReal(d, -fl->l2);
  /* dxij = x_j - x_i: n_ij = dxij / d */
  for (int k = 0; k < 3; k++) {
    const PetscReal c = F * dxij[k] / d;
    fi[k] += c;
    fj[k] -= c;
  }
  return -DemMieIntegral(fl->k1, fl->l1, d, fl->rc) + DemMieIntegral(fl->k2, fl->l2, d, fl->rc);
}

static inline PetscBool DemFieldsIsParticle(const DemBodyStore *bs, PetscInt i)
{
  return (bs->flags[i] & (DEM_WALL | DEM_REMOVED)) ? PETSC_FALSE : PETSC_TRUE;
}

/* nearest periodic image of dx */
static inline void DemFieldsMinImage(DemSim sim, PetscReal dx[3])
{
  for (int d = 0; d < 3; d++) {
    if (!sim->periodic[d]) continue;
    const PetscReal L = sim->hi[d] - sim->lo[d];
    dx[d] -= L * PetscFloorReal(dx[d] / L + 0.5);
  }
}

static PetscErrorCode DemFieldsMie(DemSim sim, const DemState *st, DemForceOut *out)
{
  DemFields      *fl = sim->fields;
  DemBodyStore   *bs = &sim->bodies;
  const PetscInt  nb = bs->n + bs->nghost;
  const PetscReal rc = fl->rc, rc2 = rc * rc;
  const PetscReal *x = st->x;
  PetscReal       lo[3], hi[3], cs[3], pe = 0;
  PetscInt        nc[3], ncell, np = 0;
  PetscBool       allpairs = PETSC_FALSE;

  PetscFunctionBegin;
  for (int d = 0; d < 3; d++) lo[d] = PETSC_MAX_REAL, hi[d] = -PETSC_MAX_REAL;
  for (PetscInt i = 0; i < nb; i++) {
    if (!DemFieldsIsParticle(bs, i)) continue;
    np++;
    for (int d = 0; d < 3; d++) lo[d] = PetscMin(lo[d], x[3 * i + d]), hi[d] = PetscMax(hi[d], x[3 * i + d]);
  }
  if (np < 2) PetscFunctionReturn(PETSC_SUCCESS);
  for (int d = 0; d < 3; d++) {
    if (sim->periodic[d]) lo[d] = sim->lo[d], hi[d] = sim->hi[d];
    nc[d] = PetscMax(1, (PetscInt)PetscFloorReal((hi[d] - lo[d]) / rc));
    /* wrap-around neighbour cells are distinct only with 3 or more cells per period */
    if (sim->periodic[d] && nc[d] < 3) allpairs = PETSC_TRUE;
  }
  /* at most a few cells per body (sparse, tall boxes): coarser cells */
  while ((double)nc[0] * nc[1] * nc[2] > 4.0 * np + 64) {
    int dm = 0;
    for (int d = 1; d < 3; d++)
      if (nc[d] > nc[dm]) dm = d;
    nc[dm] = PetscMax(1, nc[dm] / 2);
    if (sim->periodic[dm] && nc[dm] < 3) allpairs = PETSC_TRUE;
  }
  if (allpairs) {
    for (PetscInt i = 0; i < nb; i++) {
      if (!DemFieldsIsParticle(bs, i)) continue;
      for (PetscInt j = i + 1; j < nb; j++) {
        PetscReal dx[3], d2;
        if (!DemFieldsIsParticle(bs, j) || (bs->inv_m[i] == 0 && bs->inv_m[j] == 0)) continue;
        for (int k = 0; k < 3; k++) dx[k] = x[3 * j + k] - x[3 * i + k];
        DemFieldsMinImage(sim, dx);
        d2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2];
        if (d2 < rc2 && d2 > 0) pe += DemMiePair(fl, dx, d2, out->f + 3 * i, out->f + 3 * j);
      }
    }
    out->pe_contact += pe;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (int d = 0; d < 3; d++) cs[d] = (hi[d] - lo[d]) / nc[d];
  ncell = nc[0] * nc[1] * nc[2];
  if (ncell > fl->headcap) {
    PetscCall(PetscFree(fl->head));
    fl->headcap = PetscMax(ncell, 2 * fl->headcap);
    PetscCall(PetscMalloc1(fl->headcap, &fl->head));
  }
  if (nb > fl->bodycap) {
    PetscCall(PetscFree2(fl->next, fl->cell));
    fl->bodycap = PetscMax(nb, 2 * fl->bodycap);
    PetscCall(PetscMalloc2(fl->bodycap, &fl->next, 3 * fl->bodycap, &fl->cell));
  }
  for (PetscInt c = 0; c < ncell; c++) fl->head[c] = -1;
  for (PetscInt i = nb - 1; i >= 0; i--) {
    PetscInt *ci = fl->cell + 3 * i;
    if (!DemFieldsIsParticle(bs, i)) continue;
    for (int d = 0; d < 3; d++) {
      PetscReal y = x[3 * i + d];
      if (sim->periodic[d]) y -= (hi[d] - lo[d]) * PetscFloorReal((y - lo[d]) / (hi[d] - lo[d]));
      ci[d] = cs[d] > 0 ? PetscMin(PetscMax((PetscInt)PetscFloorReal((y - lo[d]) / cs[d]), 0), nc[d] - 1) : 0;
    }
    const PetscInt c = (ci[2] * nc[1] + ci[1]) * nc[0] + ci[0];
    fl->next[i]      = fl->head[c];
    fl->head[c]      = i;
  }
  /* each body against the bodies of higher index in its cell and the neighbouring cells:
     every pair once */
  for (PetscInt i = 0; i < nb; i++) {
    const PetscInt *ci = fl->cell + 3 * i;
    if (!DemFieldsIsParticle(bs, i)) continue;
    for (PetscInt oz = -1; oz <= 1; oz++)
      for (PetscInt oy = -1; oy <= 1; oy++)
        for (PetscInt ox = -1; ox <= 1; ox++) {
          PetscInt  cc[3] = {ci[0] + ox, ci[1] + oy, ci[2] + oz}, c;
          PetscBool skip  = PETSC_FALSE;
          for (int d = 0; d < 3; d++) {
            if (cc[d] < 0 || cc[d] >= nc[d]) {
              if (!sim->periodic[d]) skip = PETSC_TRUE;
              else cc[d] = (cc[d] + nc[d]) % nc[d];
            }
            /* one cell in a direction: its neighbours are itself */
            if (nc[d] == 1 && (d == 0 ? ox : d == 1 ? oy : oz) != 0) skip = PETSC_TRUE;
          }
          if (skip) continue;
          c = (cc[2] * nc[1] + cc[1]) * nc[0] + cc[0];
          for (PetscInt j = fl->head[c]; j >= 0; j = fl->next[j]) {
            PetscReal dx[3], d2;
            if (j <= i || (bs->inv_m[i] == 0 && bs->inv_m[j] == 0)) continue;
            for (int k = 0; k < 3; k++) dx[k] = x[3 * j + k] - x[3 * i + k];
            DemFieldsMinImage(sim, dx);
            d2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2];
            if (d2 < rc2 && d2 > 0) pe += DemMiePair(fl, dx, d2, out->f + 3 * i, out->f + 3 * j);
          }
        }
  }
  out->pe_contact += pe;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemFieldsCompute_Private - adds drag and near-field forces at state `st` (see the file
  comment) to out->f (drag also to out->fd when given), the Mie potential to out->pe_contact
  and the drag power to out->dissip_rate. Forces are central: no torque. No-op without fields.
*/
PetscErrorCode DemFieldsCompute_Private(DemSim sim, const DemState *st, DemForceOut *out)
{
  DemFields    *fl = sim->fields;
  DemBodyStore *bs = &sim->bodies;

  PetscFunctionBegin;
  if (!fl) PetscFunctionReturn(PETSC_SUCCESS);
  if (fl->drag && fl->c_fluid > 0) {
    const PetscReal c = fl->c_fluid, *u = fl->vfluid;
    PetscReal       p = 0;
    for (PetscInt i = 0; i < bs->n + bs->nghost; i++) {
      const PetscReal *v = st->v + 3 * i;
      PetscReal        F[3];
      if (bs->inv_m[i] == 0) continue;
      for (int k = 0; k < 3; k++) F[k] = -c * (v[k] - u[k]);
      for (int k = 0; k < 3; k++) out->f[3 * i + k] += F[k];
      if (out->fd)
        for (int k = 0; k < 3; k++) out->fd[3 * i + k] += F[k];
      if (i < bs->n) p -= F[0] * v[0] + F[1] * v[1] + F[2] * v[2];
    }
    out->dissip_rate += p;
  }
  if (fl->mie) PetscCall(DemFieldsMie(sim, st, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}
