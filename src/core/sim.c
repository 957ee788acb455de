/*
  sim.c - the simulation object: reads the whole run description (DESIGN.md "Run
  description"), builds the material, shape, contact-law and body tables, checks the initial
  configuration, and drives the time loop. Nothing is written and nothing runs until every
  check has passed; every configuration error names file:line:col, the key path and what is
  allowed (STYLE.md item 8).

  Top-level keys: name, domain {lo, hi, periodic, dimension}, gravity, materials, contact,
  shapes, bodies, walls, loads, search {skin}, integrator, run {end_time | steps, memory_limit},
  output {dir, vtk_every, thermo_every, contacts, track, checkpoint_every}, plugins [files] (plugin.c),
  compare {...} (read by `mmdem compare` only, compare.c), fields {drag, mie} (fields.c).

  Material keys: density [kg/m^3, required], youngs_modulus [Pa], poisson_ratio [0.25],
  restitution [1], friction [0] (static and dynamic), friction_dynamic [= friction].
*/
#include "demimpl.h"
#include "dem_isa.h"
#include <libgen.h>
#include <errno.h>

/* ---- small deterministic random numbers (splitmix64); tests never call rand() ---- */
static inline uint64_t DemRandNext(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline PetscReal DemRandUniform(uint64_t *s)
{
  return (PetscReal)(DemRandNext(s) >> 11) * (1.0 / 9007199254740992.0);
}

PetscErrorCode DemSimCreate(MPI_Comm comm, DemSim *simp)
{
  DemSim sim;

  PetscFunctionBegin;
  PetscCall(DemRegisterAll());
  PetscCall(PetscNew(&sim));
  sim->comm = comm;
  PetscCallMPI(MPI_Comm_rank(comm, &sim->rank));
  PetscCallMPI(MPI_Comm_size(comm, &sim->size));
  PetscCall(DemBodyStoreInit(&sim->bodies));
  sim->dim              = 3;
  sim->dt_fraction      = 0.02;
  sim->end_time         = -1;
  sim->max_steps        = -1;
  sim->out.thermo_every = 100;
  sim->out.vtk_every    = -1;
  sim->no_fused         = getenv("MMDEM_NO_FUSED") ? PETSC_TRUE : PETSC_FALSE;
  *simp                 = sim;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimDestroy(DemSim *simp)
{
  DemSim sim = *simp;

  PetscFunctionBegin;
  if (!sim) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < sim->nshape; i++) PetscCall(DemShapeDestroy(&sim->shapes[i]));
  for (PetscInt i = 0; i < sim->nlaw; i++) PetscCall(DemContactLawDestroy(&sim->laws[i]));
  PetscCall(PetscFree(sim->shapes));
  PetscCall(PetscFree(sim->laws));
  PetscCall(PetscFree(sim->pairlaw));
  PetscCall(PetscFree(sim->mat));
  PetscCall(DemIntegratorDestroy(&sim->integ));
  PetscCall(DemBodyStoreFree(&sim->bodies));
  PetscCall(PetscFree(sim->walls));
  for (PetscInt l = 0; l < sim->nload; l++) PetscCall(PetscFree(sim->loads[l].ids));
  PetscCall(PetscFree(sim->loads));
  PetscCall(PetscFree(sim->out.track));
  PetscCall(PetscFree(sim->setnode));
  PetscCall(PetscFree(sim->setfirst));
  PetscCall(PetscFree(sim->bodyset));
  PetscCall(DemNeighbourFree_Private(&sim->nl));
  PetscCall(DemHistoryMapFree(&sim->hmap));
  PetscCall(DemBondsDestroy_Private(sim));
  PetscCall(DemFieldsDestroy_Private(sim));
  PetscCall(DemDecompDestroy_Private(sim));
  PetscCall(DemGuardEnd_Private(sim)); /* a run that stopped on an error (guard.c) */
  PetscCall(DemContactListFree(&sim->cl));
  PetscCall(PetscFree(sim->cf.fn));
  PetscCall(PetscFree(sim->cf.ft));
  PetscCall(PetscFree(sim->cf.dfn_dgap));
  PetscCall(PetscFree(sim->cf.cn));
  PetscCall(PetscFree(sim->cf.kt));
  PetscCall(PetscFree(sim->cf.energy));
  PetscCall(PetscFree(sim->cf.dissip));
  PetscCall(PetscFree(sim->cf.slip));
  PetscCall(PetscFree(sim->cf.fdamp)); /* found by make memcheck */
  PetscCall(PetscFree(sim->cf.eslip));
  PetscCall(PetscFree(sim->vrel));
  PetscCall(PetscFree(sim->meff));
  PetscCall(PetscFree(sim->order));
  PetscCall(PetscFree(sim->lawstart));
  PetscCall(PetscFree(sim->touched));
  PetscCall(PetscFree(sim->fd));
  PetscCall(PetscFree(sim->td));
  PetscCall(PetscFree(sim));
  *simp = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimGetBodies(DemSim sim, DemBodyStore **bs)
{
  PetscFunctionBegin;
  *bs = &sim->bodies;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimGetTime(DemSim sim, PetscReal *t, PetscInt *step)
{
  PetscFunctionBegin;
  if (t) *t = sim->time;
  if (step) *step = sim->step;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimGetGravity(DemSim sim, PetscReal g[3])
{
  PetscFunctionBegin;
  g[0] = sim->gravity[0], g[1] = sim->gravity[1], g[2] = sim->gravity[2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimGetDimension(DemSim sim, PetscInt *dim)
{
  PetscFunctionBegin;
  *dim = sim->dim;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimSetOutputDir(DemSim sim, const char dir[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(sim->out.dir, dir, sizeof(sim->out.dir)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dimension 2: motion in x-y, rotation about z only. Applied to (v, w) or to (f, t). */
PetscErrorCode DemSimConstrain(DemSim sim, PetscReal *v, PetscReal *w)
{
  PetscInt nb = sim->bodies.n + sim->bodies.nghost;

  PetscFunctionBegin;
  if (sim->dim != 2) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < nb; i++) {
    if (v) v[3 * i + 2] = 0;
    if (w) w[3 * i] = w[3 * i + 1] = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* kinetic (translational, rotational) and gravitational energy of the mobile bodies */
PetscErrorCode DemSimEnergies_Private(DemSim sim, PetscReal *ke_t, PetscReal *ke_r, PetscReal *pe_g)
{
  DemBodyStore *bs = &sim->bodies;
  PetscReal     kt = 0, kr = 0, pg = 0, loc[3], glob[3];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < bs->n; i++) {
    const PetscReal *v = bs->v + 3 * i, *w = bs->w + 3 * i;
    PetscReal        wb[3];
    if (bs->inv_m[i] == 0) continue;
    kt += 0.5 * bs->m[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    DemQuatRotateInv(bs->q + 4 * i, w, wb);
    kr += 0.5 * (bs->I[3 * i] * wb[0] * wb[0] + bs->I[3 * i + 1] * wb[1] * wb[1] + bs->I[3 * i + 2] * wb[2] * wb[2]);
    pg -= bs->m[i] * (sim->gravity[0] * bs->x[3 * i] + sim->gravity[1] * bs->x[3 * i + 1] + sim->gravity[2] * bs->x[3 * i + 2]);
  }
  loc[0] = kt, loc[1] = kr, loc[2] = pg;
  PetscCallMPI(MPI_Allreduce(loc, glob, 3, MPIU_REAL, MPIU_SUM, sim->comm));
  *ke_t = glob[0], *ke_r = glob[1], *pe_g = glob[2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* an error handler that only records the message of the error's origin (DemLastError) */
PetscErrorCode DemRecordErrorHandler(MPI_Comm comm, int line, const char *func, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  if (p == PETSC_ERROR_INITIAL && mess && mess[0] && strcmp(mess, DemLastError())) DemSetLastError("%s", mess);
  return n;
}

/* ---------------------------------------------------------------- configuration */

static PetscErrorCode DemNodeRequireMap(DemNode n)
{
  PetscFunctionBegin;
  if (DemNodeGetType(n) != DEM_NODE_MAP) return DemNodeError(n, "expected a mapping");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemFindMaterial(DemSim sim, DemNode map, const char key[], PetscInt *idx)
{
  const char *name;
  DemNode     kn;
  char        list[1024] = "";

  PetscFunctionBegin;
  PetscCall(DemNodeGetString(map, key, PETSC_TRUE, &name));
  for (PetscInt i = 0; i < sim->nmat; i++)
    if (!strcmp(sim->mat[i].name, name)) {
      *idx = i;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  for (PetscInt i = 0; i < sim->nmat; i++) {
    if (i) PetscCall(PetscStrlcat(list, ", ", sizeof(list)));
    PetscCall(PetscStrlcat(list, sim->mat[i].name, sizeof(list)));
  }
  PetscCall(DemNodeGet(map, key, &kn));
  return DemNodeError(kn, "unknown material '%s'; defined: %s", name, sim->nmat ? list : "(none)");
}

static PetscErrorCode DemFindShape(DemSim sim, DemNode map, PetscInt *idx)
{
  const char *name;
  DemNode     kn;
  char        list[1024] = "";

  PetscFunctionBegin;
  PetscCall(DemNodeGetString(map, "shape", PETSC_TRUE, &name));
  for (PetscInt i = 0; i < sim->nshape; i++)
    if (!strcmp(sim->shapes[i]->name, name)) {
      *idx = i;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  for (PetscInt i = 0; i < sim->nshape; i++) {
    if (i) PetscCall(PetscStrlcat(list, ", ", sizeof(list)));
    PetscCall(PetscStrlcat(list, sim->shapes[i]->name, sizeof(list)));
  }
  PetscCall(DemNodeGet(map, "shape", &kn));
  return DemNodeError(kn, "unknown shape '%s'; defined under shapes: %s", name, sim->nshape ? list : "(none)");
}

static PetscErrorCode DemSimReadMaterials(DemSim sim, DemNode root)
{
  DemNode mats;

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "materials", &mats));
  if (!mats) return DemNodeError(root, "missing required key 'materials'");
  PetscCall(DemNodeRequireMap(mats));
  PetscCall(DemNodeMapLength(mats, &sim->nmat));
  if (!sim->nmat) return DemNodeError(mats, "define at least one material");
  PetscCall(PetscCalloc1(sim->nmat, &sim->mat));
  for (PetscInt i = 0; i < sim->nmat; i++) {
    const char       *name;
    DemNode           mn, kn;
    DemMaterial      *m      = &sim->mat[i];
    const char *const keys[] = {"density", "youngs_modulus", "poisson_ratio", "restitution", "friction", "friction_dynamic", NULL};
    PetscReal         mu = 0, mud = -1;
    PetscCall(DemNodeMapItem(mats, i, &name, &mn));
    PetscCall(DemNodeRequireMap(mn));
    PetscCall(DemNodeAllowKeys(mn, keys));
    PetscCall(PetscStrncpy(m->name, name, sizeof(m->name)));
    m->nu          = 0.25;
    m->restitution = 1.0;
    PetscCall(DemNodeGetReal(mn, "density", PETSC_TRUE, &m->density));
    PetscCall(DemNodeGetReal(mn, "youngs_modulus", PETSC_FALSE, &m->E));
    PetscCall(DemNodeGetReal(mn, "poisson_ratio", PETSC_FALSE, &m->nu));
    PetscCall(DemNodeGetReal(mn, "restitution", PETSC_FALSE, &m->restitution));
    PetscCall(DemNodeGetReal(mn, "friction", PETSC_FALSE, &mu));
    PetscCall(DemNodeGetReal(mn, "friction_dynamic", PETSC_FALSE, &mud));
    PetscCall(DemNodeGet(mn, "density", &kn));
    DemNodeCheck(kn, m->density > 0, "density must be > 0 kg/m^3 (got %g)", (double)m->density);
    PetscCall(DemNodeGet(mn, "youngs_modulus", &kn));
    DemNodeCheck(kn ? kn : mn, !kn || m->E > 0, "youngs_modulus must be > 0 Pa (got %g)", (double)m->E);
    PetscCall(DemNodeGet(mn, "poisson_ratio", &kn));
    DemNodeCheck(kn ? kn : mn, m->nu > -1 && m->nu < 0.5, "poisson_ratio must be in (-1, 0.5) (got %g)", (double)m->nu);
    PetscCall(DemNodeGet(mn, "restitution", &kn));
    DemNodeCheck(kn ? kn : mn, m->restitution > 0 && m->restitution <= 1, "restitution must be in (0, 1] (got %g)", (double)m->restitution);
    PetscCall(DemNodeGet(mn, "friction", &kn));
    DemNodeCheck(kn ? kn : mn, mu >= 0, "friction must be >= 0 (got %g)", (double)mu);
    PetscCall(DemNodeGet(mn, "friction_dynamic", &kn));
    DemNodeCheck(kn ? kn : mn, mud < 0 || mud <= mu, "friction_dynamic must be in [0, friction] (got %g)", (double)mud);
    m->mu_s = mu;
    m->mu_d = mud >= 0 ? mud : mu;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the contact table; *entryp (scratch) is freed by the caller on every path (no leak on an
   error: LeakSanitizer, make test SANITIZE=address) */
static PetscErrorCode DemSimReadContactsTable(DemSim sim, DemNode root, PetscInt **entryp)
{
  DemNode  tab;
  PetscInt n, def = -1, *entry;
  char     names[1024];

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "contact", &tab));
  if (!tab) return DemNodeError(root, "missing required key 'contact' (a list of {pair: [m1, m2] | default, law: NAME, params: {...}})");
  if (DemNodeGetType(tab) != DEM_NODE_SEQ) return DemNodeError(tab, "expected a list of {pair, law, params} entries");
  PetscCall(DemNodeSeqLength(tab, &n));
  PetscCall(PetscMalloc1(sim->nmat * sim->nmat, entryp));
  entry = *entryp;
  for (PetscInt k = 0; k < sim->nmat * sim->nmat; k++) entry[k] = -1;
  for (PetscInt e = 0; e < n; e++) {
    DemNode           en, pn;
    const char *const keys[] = {"pair", "law", "params", NULL};
    PetscCall(DemNodeSeqItem(tab, e, &en));
    PetscCall(DemNodeRequireMap(en));
    PetscCall(DemNodeAllowKeys(en, keys));
    PetscCall(DemNodeGet(en, "pair", &pn));
    if (!pn) return DemNodeError(en, "missing required key 'pair' ([material, material] or default)");
    if (DemNodeGetType(pn) == DEM_NODE_SCALAR) {
      DemNodeCheck(pn, !strcmp(DemNodeScalar(pn), "default"), "pair must be [material, material] or default (got '%s')", DemNodeScalar(pn));
      DemNodeCheck(pn, def < 0, "a second 'pair: default' entry");
      def = e;
    } else {
      PetscInt len, mi[2];
      DemNodeCheck(pn, DemNodeGetType(pn) == DEM_NODE_SEQ, "pair must be [material, material] or default");
      PetscCall(DemNodeSeqLength(pn, &len));
      DemNodeCheck(pn, len == 2, "pair must name exactly two materials");
      for (PetscInt j = 0; j < 2; j++) {
        DemNode     it;
        const char *nm;
        PetscCall(DemNodeSeqItem(pn, j, &it));
        nm = DemNodeScalar(it);
        mi[j] = -1;
        for (PetscInt m = 0; nm && m < sim->nmat; m++)
          if (!strcmp(sim->mat[m].name, nm)) mi[j] = m;
        DemNodeCheck(it, mi[j] >= 0, "unknown material '%s'", nm ? nm : "");
      }
      DemNodeCheck(pn, entry[mi[0] * sim->nmat + mi[1]] < 0, "the pair %s/%s has a contact law already", sim->mat[mi[0]].name, sim->mat[mi[1]].name);
      entry[mi[0] * sim->nmat + mi[1]] = entry[mi[1] * sim->nmat + mi[0]] = e;
    }
  }
  /* one law instance per material pair: parameters derive from the two materials */
  PetscCall(PetscMalloc1(sim->nmat * sim->nmat, &sim->pairlaw));
  PetscCall(PetscCalloc1(sim->nmat * (sim->nmat + 1) / 2, &sim->laws));
  PetscCall(DemRegistryNames_Private("contact", names, sizeof(names)));
  for (PetscInt i = 0; i < sim->nmat; i++) {
    for (PetscInt j = i; j < sim->nmat; j++) {
      PetscInt        e = entry[i * sim->nmat + j] >= 0 ? entry[i * sim->nmat + j] : def;
      DemNode         en, ln, params;
      const char     *law;
      DemMaterialPair mp = {&sim->mat[i], &sim->mat[j]};
      DemContactLawCreateFn fn;
      DemNodeCheck(tab, e >= 0, "no contact law for the material pair %s/%s; add an entry {pair: [%s, %s], law: ...} or {pair: default, law: ...}", sim->mat[i].name, sim->mat[j].name, sim->mat[i].name, sim->mat[j].name);
      PetscCall(DemNodeSeqItem(tab, e, &en));
      PetscCall(DemNodeGetString(en, "law", PETSC_TRUE, &law));
      PetscCall(DemNodeGet(en, "law", &ln));
      {
        PetscErrorCode ierr;
        PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
        ierr = DemContactLawFind_Private(law, &fn);
        PetscCall(PetscPopErrorHandler());
        if (ierr) return DemNodeError(ln, "unknown contact law '%s'; registered: %s", law, names);
      }
      PetscCall(DemNodeGet(en, "params", &params));
      if (params) PetscCall(DemNodeRequireMap(params));
      PetscCall(DemContactLawCreate(sim->comm, &sim->laws[sim->nlaw]));
      PetscCall(DemContactLawSetType(sim->laws[sim->nlaw], law));
      sim->laws[sim->nlaw]->sim = sim;
      if (params) PetscCall(DemContactLawSetFromConfig(sim->laws[sim->nlaw], params, &mp));
      else { /* no params: a law's complaint gets the location of its contact entry */
        PetscErrorCode ierr;
        DemSetLastError("%s", "");
        PetscCall(PetscPushErrorHandler(DemRecordErrorHandler, NULL));
        ierr = DemContactLawSetFromConfig(sim->laws[sim->nlaw], NULL, &mp);
        PetscCall(PetscPopErrorHandler());
        if (ierr) return DemNodeError(en, "%s", DemLastError());
      }
      sim->histsize                     = PetscMax(sim->histsize, sim->laws[sim->nlaw]->histsize);
      sim->pairlaw[i * sim->nmat + j]   = sim->nlaw;
      sim->pairlaw[j * sim->nmat + i]   = sim->nlaw;
      sim->nlaw++;
    }
  }
  PetscCall(PetscMalloc1(sim->nlaw + 1, &sim->lawstart));
  PetscCall(DemHistoryMapInit(&sim->hmap, sim->histsize));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemSimReadContacts(DemSim sim, DemNode root)
{
  PetscInt      *entry = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  ierr = DemSimReadContactsTable(sim, root, &entry);
  PetscCall(PetscFree(entry));
  /* a law that failed to read its parameters is not counted in nlaw yet (fuzzing) */
  if (ierr && sim->laws && sim->nlaw < sim->nmat * (sim->nmat + 1) / 2) PetscCall(DemContactLawDestroy(&sim->laws[sim->nlaw]));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemSimReadShapes(DemSim sim, DemNode root)
{
  DemNode shapes;
  char    names[1024];

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "shapes", &shapes));
  if (!shapes) return DemNodeError(root, "missing required key 'shapes'");
  PetscCall(DemNodeRequireMap(shapes));
  PetscCall(DemNodeMapLength(shapes, &sim->nshape));
  PetscCall(PetscCalloc1(sim->nshape, &sim->shapes));
  PetscCall(DemRegistryNames_Private("shape", names, sizeof(names)));
  for (PetscInt i = 0; i < sim->nshape; i++) {
    const char      *name, *type;
    DemNode          sn, tn;
    DemShapeCreateFn fn;
    PetscErrorCode   ierr;
    PetscCall(DemNodeMapItem(shapes, i, &name, &sn));
    PetscCall(DemNodeRequireMap(sn));
    PetscCall(DemNodeGetString(sn, "type", PETSC_TRUE, &type));
    PetscCall(DemNodeGet(sn, "type", &tn));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = DemShapeFind_Private(type, &fn);
    PetscCall(PetscPopErrorHandler());
    if (ierr) return DemNodeError(tn, "unknown shape type '%s'; registered: %s", type, names);
    PetscCall(DemShapeCreate(sim->comm, &sim->shapes[i]));
    PetscCall(DemShapeSetType(sim->shapes[i], type));
    PetscCall(PetscStrncpy(sim->shapes[i]->name, name, sizeof(sim->shapes[i]->name)));
    DemNodeCheck(tn, !sim->shapes[i]->unbounded, "shape type '%s' is a wall shape: use it under walls:", type);
    PetscCall(DemShapeSetFromConfig(sim->shapes[i], sn));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* keeps the body -> set map as long as the store */
static PetscErrorCode DemSimBodySetReserve(DemSim sim, PetscInt i)
{
  PetscFunctionBegin;
  if (i < sim->bodysetcap) PetscFunctionReturn(PETSC_SUCCESS);
  {
    PetscInt *nbs, cap = PetscMax(sim->bodies.cap, 2 * sim->bodysetcap);
    PetscCall(PetscMalloc1(cap, &nbs));
    if (sim->bodyset) PetscCall(PetscArraycpy(nbs, sim->bodyset, i));
    PetscCall(PetscFree(sim->bodyset));
    sim->bodyset    = nbs;
    sim->bodysetcap = cap;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one body of a set: position, optional velocity, angular velocity, orientation, radius */
typedef struct {
  PetscReal x[3], v[3], w[3], q[4], r;
} DemBodyInit;

static PetscErrorCode DemSimAddBody(DemSim sim, PetscInt set, PetscInt shape, PetscInt mat, PetscBool fixed, const DemBodyInit *bi)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      i;
  PetscReal     m0, I0[3], r0, s;

  PetscFunctionBegin;
  PetscCall(DemBodyStoreAppend(bs, (int64_t)bs->n, &i));
  PetscCall(DemShapeMassProperties(sim->shapes[shape], sim->mat[mat].density, &m0, I0));
  PetscCall(DemShapeBoundingRadius(sim->shapes[shape], &r0));
  s = bi->r > 0 ? bi->r / r0 : 1.0; /* geometric scaling of the shape */
  for (int j = 0; j < 3; j++) {
    bs->x[3 * i + j] = bi->x[j];
    bs->v[3 * i + j] = fixed ? 0 : bi->v[j];
    bs->w[3 * i + j] = fixed ? 0 : bi->w[j];
    bs->I[3 * i + j] = I0[j] * s * s * s * s * s;
    bs->inv_I[3 * i + j] = fixed ? 0 : 1.0 / bs->I[3 * i + j];
  }
  for (int j = 0; j < 4; j++) bs->q[4 * i + j] = bi->q[j];
  DemQuatNormalize(bs->q + 4 * i);
  bs->m[i]        = m0 * s * s * s;
  bs->inv_m[i]    = fixed ? 0 : 1.0 / bs->m[i];
  bs->radius[i]   = bi->r > 0 ? bi->r : r0; /* exactly as given */
  bs->shape[i]    = (int)shape;
  bs->material[i] = (int)mat;
  bs->flags[i]    = fixed ? DEM_FIXED : 0;
  PetscCall(DemSimBodySetReserve(sim, i));
  sim->bodyset[i] = set;
  sim->nparticles++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemReadCSVBodies(DemSim sim, DemNode set, DemNode fn, PetscInt setidx, PetscInt shape, PetscInt mat, PetscBool fixed, const DemBodyInit *defaults)
{
  char        path[PETSC_MAX_PATH_LEN], dir[PETSC_MAX_PATH_LEN], line[4096];
  const char *file = DemNodeScalar(fn);
  const char *cols[] = {"x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz", "qw", "qx", "qy", "qz", "radius"};
  int         col[14], ncol = 0, lineno = 1;
  FILE       *fp;

  PetscFunctionBegin;
  if (!file) return DemNodeError(fn, "expected a file name");
  if (file[0] == '/') PetscCall(PetscStrncpy(path, file, sizeof(path)));
  else {
    PetscCall(PetscStrncpy(dir, DemNodeFile(fn), sizeof(dir)));
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dirname(dir), file));
  }
  fp = fopen(path, "r");
  if (!fp) return DemNodeError(fn, "cannot open '%s': %s", path, strerror(errno));
  for (int k = 0; k < 14; k++) col[k] = -1;
  if (!fgets(line, sizeof(line), fp)) {
    fclose(fp);
    return DemNodeError(fn, "'%s' is empty; it needs a header line naming columns x,y,z (and optionally vx,vy,vz,wx,wy,wz,qw,qx,qy,qz,radius)", path);
  }
  for (char *tok = strtok(line, ",\r\n"); tok; tok = strtok(NULL, ",\r\n"), ncol++) {
    while (*tok == ' ') tok++;
    for (int k = 0; k < 14; k++)
      if (!strcmp(tok, cols[k])) col[k] = ncol;
  }
  if (col[0] < 0 || col[1] < 0 || col[2] < 0) {
    fclose(fp);
    return DemNodeError(fn, "'%s': the header must name the columns x, y and z", path);
  }
  while (fgets(line, sizeof(line), fp)) {
    PetscReal   val[64];
    int         nv = 0;
    DemBodyInit bi = *defaults;
    char       *p  = line, *end;
    lineno++;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\n' || *p == '\r' || *p == 0 || *p == '#') continue;
    while (nv < 64) {
      val[nv] = strtod(p, &end);
      if (end == p || !isfinite(val[nv])) {
        fclose(fp);
        return DemNodeError(fn, "'%s' line %d, column %d: expected a number", path, lineno, nv + 1);
      }
      nv++;
      p = end;
      while (*p == ' ' || *p == '\t') p++;
      if (*p == ',') p++;
      else break;
    }
    if (nv != ncol) {
      fclose(fp);
      return DemNodeError(fn, "'%s' line %d: %d values for %d columns", path, lineno, nv, ncol);
    }
    for (int k = 0; k < 3; k++) bi.x[k] = val[col[k]];
    for (int k = 0; k < 3; k++) if (col[3 + k] >= 0) bi.v[k] = val[col[3 + k]];
    for (int k = 0; k < 3; k++) if (col[6 + k] >= 0) bi.w[k] = val[col[6 + k]];
    for (int k = 0; k < 4; k++) if (col[9 + k] >= 0) bi.q[k] = val[col[9 + k]];
    if (col[13] >= 0) {
      bi.r = val[col[13]];
      if (!(bi.r > 0)) {
        fclose(fp);
        return DemNodeError(fn, "'%s' line %d: radius must be > 0 (got %g)", path, lineno, (double)bi.r);
      }
    }
    PetscCall(DemSimAddBody(sim, setidx, shape, mat, fixed, &bi));
  }
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* radius of one body of a set: fixed value, or uniform in [min, max] */
static PetscReal DemSetRadius(const PetscReal rr[2], uint64_t *seed)
{
  if (rr[0] <= 0) return 0;
  if (rr[1] <= rr[0]) return rr[0];
  return rr[0] + (rr[1] - rr[0]) * DemRandUniform(seed);
}

static PetscErrorCode DemSimReadBodies(DemSim sim, DemNode root)
{
  DemNode sets;

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "bodies", &sets));
  if (!sets) return DemNodeError(root, "missing required key 'bodies'");
  if (DemNodeGetType(sets) != DEM_NODE_SEQ) return DemNodeError(sets, "expected a list of body sets");
  PetscCall(DemNodeSeqLength(sets, &sim->nsets));
  PetscCall(PetscCalloc1(sim->nsets, &sim->setnode));
  PetscCall(PetscCalloc1(sim->nsets, &sim->setfirst));
  for (PetscInt s = 0; s < sim->nsets; s++) {
    DemNode           set, src[4], kn;
    const char *const keys[]   = {"shape", "material", "fixed", "velocity", "angular_velocity", "radius", "seed", "lattice", "random", "list", "file", NULL};
    const char *const srcs[]   = {"lattice", "random", "list", "file"};
    PetscInt          shape = -1, mat = -1, nsrc = 0, which = -1, seedi = 1;
    PetscBool         fixed = PETSC_FALSE;
    PetscReal         rr[2] = {0, 0};
    DemBodyInit       def;
    uint64_t          seed;
    PetscCall(DemNodeSeqItem(sets, s, &set));
    sim->setnode[s]  = set;
    sim->setfirst[s] = sim->bodies.n;
    PetscCall(DemNodeRequireMap(set));
    PetscCall(DemNodeAllowKeys(set, keys));
    PetscCall(DemFindShape(sim, set, &shape));
    PetscCall(DemFindMaterial(sim, set, "material", &mat));
    PetscCall(DemNodeGetBool(set, "fixed", PETSC_FALSE, &fixed));
    PetscCall(PetscMemzero(&def, sizeof(def)));
    def.q[0] = 1;
    PetscCall(DemNodeGetRealArray(set, "velocity", PETSC_FALSE, 3, def.v));
    PetscCall(DemNodeGetRealArray(set, "angular_velocity", PETSC_FALSE, 3, def.w));
    PetscCall(DemNodeGetInt(set, "seed", PETSC_FALSE, &seedi));
    seed = (uint64_t)seedi * 0x2545F4914F6CDD1Dull + 12345u;
    PetscCall(DemNodeGet(set, "radius", &kn));
    if (kn) {
      if (DemNodeGetType(kn) == DEM_NODE_SEQ) PetscCall(DemNodeGetRealArray(set, "radius", PETSC_TRUE, 2, rr));
      else {
        PetscCall(DemNodeAsReal(kn, &rr[0]));
        rr[1] = rr[0];
      }
      DemNodeCheck(kn, rr[0] > 0 && rr[1] >= rr[0], "radius must be > 0, or [min, max] with 0 < min <= max (got %g, %g)", (double)rr[0], (double)rr[1]);
    }
    for (int k = 0; k < 4; k++) {
      PetscCall(DemNodeGet(set, srcs[k], &src[k]));
      if (src[k]) nsrc++, which = k;
    }
    DemNodeCheck(set, nsrc == 1, "a body set needs exactly one of lattice, random, list, file (got %d)", (int)nsrc);
    if (which == 0) { /* lattice: lo + i*spacing up to hi */
      const char *const lk[] = {"lo", "hi", "spacing", "jitter", NULL};
      PetscReal         lo[3], hi[3], h, jit = 0;
      PetscInt          n[3];
      PetscCall(DemNodeRequireMap(src[0]));
      PetscCall(DemNodeAllowKeys(src[0], lk));
      PetscCall(DemNodeGetRealArray(src[0], "lo", PETSC_TRUE, 3, lo));
      PetscCall(DemNodeGetRealArray(src[0], "hi", PETSC_TRUE, 3, hi));
      PetscCall(DemNodeGetReal(src[0], "spacing", PETSC_TRUE, &h));
      PetscCall(DemNodeGet(src[0], "spacing", &kn));
      DemNodeCheck(kn, h > 0, "spacing must be > 0 (got %g)", (double)h);
      PetscCall(DemNodeGetReal(src[0], "jitter", PETSC_FALSE, &jit));
      PetscCall(DemNodeGet(src[0], "jitter", &kn));
      DemNodeCheck(kn ? kn : src[0], jit >= 0 && jit < 0.5, "jitter must be in [0, 0.5) spacings (got %g)", (double)jit);
      /* the memory it needs, refused before allocating (guard.c); counted in doubles */
      PetscCall(DemGuardCheckMemory_Private(sim, src[0], sim->bodies.n + (PetscFloorReal((hi[0] - lo[0]) / h * (1 + 1e-12)) + 1) * (PetscFloorReal((hi[1] - lo[1]) / h * (1 + 1e-12)) + 1) * (sim->dim == 2 ? 1 : PetscFloorReal((hi[2] - lo[2]) / h * (1 + 1e-12)) + 1)));
      for (int d = 0; d < 3; d++) {
        DemNodeCheck(src[0], hi[d] >= lo[d], "hi must be >= lo in every direction");
        n[d] = (PetscInt)PetscFloorReal((hi[d] - lo[d]) / h * (1 + 1e-12)) + 1;
      }
      if (sim->dim == 2) n[2] = 1;
      DemNodeCheck(src[0], (double)n[0] * n[1] * n[2] < 5e8, "the lattice holds %g bodies; at most 5e8", (double)n[0] * n[1] * n[2]);
      PetscCall(DemBodyStoreReserve(&sim->bodies, sim->bodies.n + n[0] * n[1] * n[2] + 16));
      for (PetscInt k = 0; k < n[2]; k++)
        for (PetscInt j = 0; j < n[1]; j++)
          for (PetscInt i = 0; i < n[0]; i++) {
            DemBodyInit bi = def;
            bi.x[0] = lo[0] + i * h, bi.x[1] = lo[1] + j * h, bi.x[2] = lo[2] + k * h;
            /* jitter: uniform displacement of up to jitter*spacing per direction (seeded) */
            for (int d = 0; d < 3 && jit > 0; d++)
              if (!(sim->dim == 2 && d == 2)) bi.x[d] += jit * h * (2 * DemRandUniform(&seed) - 1);
            bi.r = DemSetRadius(rr, &seed);
            PetscCall(DemSimAddBody(sim, s, shape, mat, fixed, &bi));
          }
    } else if (which == 1) { /* random, non-overlapping, inside the region */
      const char *const rk[] = {"count", "region", "seed", NULL};
      const char *const gk[] = {"lo", "hi", NULL};
      DemNode           reg;
      PetscInt          count, placed = 0, first = sim->bodies.n;
      PetscReal         lo[3], hi[3], r0;
      long              attempts = 0;
      PetscCall(DemNodeRequireMap(src[1]));
      PetscCall(DemNodeAllowKeys(src[1], rk));
      PetscCall(DemNodeGetInt(src[1], "count", PETSC_TRUE, &count));
      PetscCall(DemNodeGetInt(src[1], "seed", PETSC_FALSE, &seedi));
      seed = (uint64_t)seedi * 0x2545F4914F6CDD1Dull + 12345u;
      PetscCall(DemNodeGet(src[1], "count", &kn));
      DemNodeCheck(kn, count >= 0 && count < 500000000, "count must be in [0, 5e8) (got %" PetscInt_FMT ")", count);
      PetscCall(DemGuardCheckMemory_Private(sim, kn, (double)sim->bodies.n + count)); /* guard.c */
      PetscCall(DemNodeGet(src[1], "region", &reg));
      if (!reg) return DemNodeError(src[1], "missing required key 'region' ({lo: [..], hi: [..]})");
      PetscCall(DemNodeRequireMap(reg));
      PetscCall(DemNodeAllowKeys(reg, gk));
      PetscCall(DemNodeGetRealArray(reg, "lo", PETSC_TRUE, 3, lo));
      PetscCall(DemNodeGetRealArray(reg, "hi", PETSC_TRUE, 3, hi));
      PetscCall(DemShapeBoundingRadius(sim->shapes[shape], &r0));
      { /* random sequential addition jams near 38 % of the volume (2D: 55 % of the area): more
           cannot be placed, and trying takes count^2 work (a hang for large counts; fuzzing) */
        PetscReal rm = rr[0] > 0 ? rr[0] : r0, vol = 1, body, jam = sim->dim == 2 ? 0.547 : 0.384;
        for (int d = 0; d < (sim->dim == 2 ? 2 : 3); d++) vol *= PetscMax(hi[d] - lo[d], 0);
        body = sim->dim == 2 ? PETSC_PI * rm * rm : 4.0 / 3.0 * PETSC_PI * rm * rm * rm;
        DemNodeCheck(src[1], !(count * body > jam * vol), "%" PetscInt_FMT " bodies of radius %g would fill %.3g %% of the region's %s, more than random placement without overlap reaches (about %.0f %%); enlarge the region or lower count", count, (double)rm, (double)(100 * count * body / vol), sim->dim == 2 ? "area" : "volume", 100 * jam);
      }
      PetscCall(DemBodyStoreReserve(&sim->bodies, sim->bodies.n + count + 16));
      while (placed < count) {
        DemBodyInit bi = def;
        PetscReal   r;
        PetscBool   ok = PETSC_TRUE;
        if (attempts++ > 1000L * count + 1000) return DemNodeError(src[1], "could place only %" PetscInt_FMT " of %" PetscInt_FMT " bodies without overlap in the region; enlarge it or lower count", placed, count);
        bi.r = DemSetRadius(rr, &seed);
        r    = bi.r > 0 ? bi.r : r0;
        for (int d = 0; d < 3; d++) {
          PetscReal a = lo[d] + r, b = hi[d] - r;
          if (sim->dim == 2 && d == 2) { bi.x[2] = 0.5 * (lo[2] + hi[2]); continue; }
          if (b < a) return DemNodeError(reg, "the region is smaller than one body (radius %g)", (double)r);
          bi.x[d] = a + (b - a) * DemRandUniform(&seed);
        }
        for (PetscInt j = first; j < sim->bodies.n && ok; j++) {
          const PetscReal *y = sim->bodies.x + 3 * j;
          PetscReal        dd = (bi.x[0] - y[0]) * (bi.x[0] - y[0]) + (bi.x[1] - y[1]) * (bi.x[1] - y[1]) + (bi.x[2] - y[2]) * (bi.x[2] - y[2]);
          PetscReal        rs = r + sim->bodies.radius[j];
          if (dd < rs * rs) ok = PETSC_FALSE;
        }
        if (!ok) continue;
        PetscCall(DemSimAddBody(sim, s, shape, mat, fixed, &bi));
        placed++;
      }
    } else if (which == 2) { /* explicit list */
      PetscInt n;
      DemNodeCheck(src[2], DemNodeGetType(src[2]) == DEM_NODE_SEQ, "list must be a list of {x, v, w, q, radius}");
      PetscCall(DemNodeSeqLength(src[2], &n));
      for (PetscInt k = 0; k < n; k++) {
        DemNode           it;
        const char *const ik[] = {"x", "v", "w", "q", "radius", NULL};
        DemBodyInit       bi = def;
        PetscCall(DemNodeSeqItem(src[2], k, &it));
        PetscCall(DemNodeRequireMap(it));
        PetscCall(DemNodeAllowKeys(it, ik));
        PetscCall(DemNodeGetRealArray(it, "x", PETSC_TRUE, 3, bi.x));
        PetscCall(DemNodeGetRealArray(it, "v", PETSC_FALSE, 3, bi.v));
        PetscCall(DemNodeGetRealArray(it, "w", PETSC_FALSE, 3, bi.w));
        PetscCall(DemNodeGetRealArray(it, "q", PETSC_FALSE, 4, bi.q));
        bi.r = DemSetRadius(rr, &seed);
        PetscCall(DemNodeGetReal(it, "radius", PETSC_FALSE, &bi.r));
        PetscCall(DemNodeGet(it, "radius", &kn));
        DemNodeCheck(kn ? kn : it, !kn || bi.r > 0, "radius must be > 0 (got %g)", (double)bi.r);
        {
          PetscReal qn = bi.q[0] * bi.q[0] + bi.q[1] * bi.q[1] + bi.q[2] * bi.q[2] + bi.q[3] * bi.q[3];
          PetscCall(DemNodeGet(it, "q", &kn));
          DemNodeCheck(kn ? kn : it, qn > 0, "q must be a nonzero quaternion [w, x, y, z]");
        }
        PetscCall(DemSimAddBody(sim, s, shape, mat, fixed, &bi));
      }
    } else {
      DemBodyInit bi = def;
      bi.r = rr[0];
      PetscCall(DemReadCSVBodies(sim, set, src[3], s, shape, mat, fixed, &bi));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemSimReadWalls(DemSim sim, DemNode root)
{
  DemNode  walls;
  PetscInt n = 0;
  char     names[1024];

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "walls", &walls));
  if (walls) {
    DemNodeCheck(walls, DemNodeGetType(walls) == DEM_NODE_SEQ, "expected a list of walls");
    PetscCall(DemNodeSeqLength(walls, &n));
  }
  PetscCall(PetscCalloc1(PetscMax(n, 1), &sim->walls));
  PetscCall(DemRegistryNames_Private("shape", names, sizeof(names)));
  for (PetscInt w = 0; w < n; w++) {
    DemNode          wn, tn;
    const char      *type, *name = NULL;
    DemShape         shp;
    DemShapeCreateFn fn;
    PetscErrorCode   ierr;
    PetscInt         mat, i;
    DemWall         *wall = &sim->walls[w];
    DemBodyStore    *bs   = &sim->bodies;
    PetscCall(DemNodeSeqItem(walls, w, &wn));
    PetscCall(DemNodeRequireMap(wn));
    PetscCall(DemNodeGetString(wn, "type", PETSC_TRUE, &type));
    PetscCall(DemNodeGet(wn, "type", &tn));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = DemShapeFind_Private(type, &fn);
    PetscCall(PetscPopErrorHandler());
    if (ierr) return DemNodeError(tn, "unknown wall type '%s'; registered shapes: %s", type, names);
    PetscCall(DemShapeCreate(sim->comm, &shp));
    PetscCall(DemShapeSetType(shp, type));
    if (!shp->unbounded) {
      PetscCall(DemShapeDestroy(&shp));
      return DemNodeError(tn, "shape type '%s' cannot be a wall; wall types: plane", type);
    }
    PetscCall(PetscSNPrintf(shp->name, sizeof(shp->name), "wall%" PetscInt_FMT, w));
    /* the shapes table owns the wall's shape */
    {
      DemShape *ns;
      PetscCall(PetscMalloc1(sim->nshape + 1, &ns));
      PetscCall(PetscArraycpy(ns, sim->shapes, sim->nshape));
      PetscCall(PetscFree(sim->shapes));
      sim->shapes                = ns;
      sim->shapes[sim->nshape++] = shp;
    }
    PetscCall(DemShapeSetFromConfig(shp, wn));
    PetscCall(DemFindMaterial(sim, wn, "material", &mat));
    PetscCall(DemBodyStoreAppend(bs, (int64_t)bs->n, &i));
    PetscCall(DemSimBodySetReserve(sim, i));
    sim->bodyset[i] = -1;
    PetscCall(DemNodeGetRealArray(wn, "point", PETSC_TRUE, 3, bs->x + 3 * i));
    PetscCall(DemNodeGetRealArray(wn, "velocity", PETSC_FALSE, 3, wall->velocity));
    wall->remove_at = -1;
    PetscCall(DemNodeGetReal(wn, "remove_at", PETSC_FALSE, &wall->remove_at));
    PetscCall(DemNodeGetString(wn, "name", PETSC_FALSE, &name));
    PetscCall(PetscSNPrintf(wall->name, sizeof(wall->name), "%s", name ? name : shp->name));
    for (int j = 0; j < 3; j++) {
      bs->v[3 * i + j]     = wall->velocity[j];
      bs->I[3 * i + j]     = PETSC_INFINITY;
      bs->inv_I[3 * i + j] = 0;
    }
    bs->m[i]        = PETSC_INFINITY;
    bs->inv_m[i]    = 0;
    bs->radius[i]   = 0;
    bs->shape[i]    = (int)(sim->nshape - 1);
    bs->material[i] = (int)mat;
    bs->flags[i]    = DEM_WALL | ((wall->velocity[0] != 0 || wall->velocity[1] != 0 || wall->velocity[2] != 0) ? DEM_PRESCRIBED : DEM_FIXED);
    wall->body      = i;
    sim->nwall++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemSimReadLoads(DemSim sim, DemNode root)
{
  DemNode  loads;
  PetscInt n = 0;

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "loads", &loads));
  if (!loads) PetscFunctionReturn(PETSC_SUCCESS);
  DemNodeCheck(loads, DemNodeGetType(loads) == DEM_NODE_SEQ, "expected a list of loads");
  PetscCall(DemNodeSeqLength(loads, &n));
  PetscCall(PetscCalloc1(n, &sim->loads));
  for (PetscInt l = 0; l < n; l++) {
    DemNode           ln, ids;
    const char *const keys[] = {"bodies", "force", "moment", "point", "ramp", NULL};
    DemLoad          *ld     = &sim->loads[l];
    PetscCall(DemNodeSeqItem(loads, l, &ln));
    PetscCall(DemNodeRequireMap(ln));
    PetscCall(DemNodeAllowKeys(ln, keys));
    PetscCall(DemNodeGet(ln, "bodies", &ids));
    if (!ids) return DemNodeError(ln, "missing required key 'bodies' (a list of body ids)");
    DemNodeCheck(ids, DemNodeGetType(ids) == DEM_NODE_SEQ, "bodies must be a list of body ids");
    PetscCall(DemNodeSeqLength(ids, &ld->nids));
    PetscCall(PetscMalloc1(ld->nids, &ld->ids));
    sim->nload++; /* counted once its ids exist: DemSimDestroy frees them after an error below */
    for (PetscInt k = 0; k < ld->nids; k++) {
      DemNode   it;
      PetscReal v;
      PetscCall(DemNodeSeqItem(ids, k, &it));
      PetscCall(DemNodeAsReal(it, &v));
      DemNodeCheck(it, v >= 0 && v < sim->nparticles && v == PetscFloorReal(v), "body id must be an integer in [0, %" PetscInt_FMT ") (got %g)", sim->nparticles, (double)v);
      ld->ids[k] = (PetscInt)v;
    }
    PetscCall(DemNodeGetRealArray(ln, "force", PETSC_FALSE, 3, ld->force));
    PetscCall(DemNodeGetRealArray(ln, "moment", PETSC_FALSE, 3, ld->moment));
    {
      DemNode pn;
      PetscCall(DemNodeGet(ln, "point", &pn));
      ld->haspoint = pn ? PETSC_TRUE : PETSC_FALSE;
    }
    PetscCall(DemNodeGetRealArray(ln, "point", PETSC_FALSE, 3, ld->point));
    PetscCall(DemNodeGetRealArray(ln, "ramp", PETSC_FALSE, 2, ld->ramp));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* generic integrator keys plus the implementation's own: for the implementations' AllowKeys */
PetscErrorCode DemIntegratorAllowKeys_Private(DemNode cfg, const char *const own[])
{
  const char *keys[64] = {"type", "dt", "dt_fraction", "petsc_options"};
  PetscInt    n        = 4;

  PetscFunctionBegin;
  if (!cfg) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; own && own[k] && n < 63; k++) keys[n++] = own[k];
  keys[n] = NULL;
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemSimReadIntegrator(DemSim sim, DemNode root)
{
  DemNode     in, dn;
  const char *type = "verlet", *opts = NULL;
  char        names[1024];

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "integrator", &in));
  if (!in) return DemNodeError(root, "missing required key 'integrator' ({type: verlet, dt: ...})");
  PetscCall(DemNodeRequireMap(in));
  PetscCall(DemNodeGetString(in, "type", PETSC_FALSE, &type));
  PetscCall(DemNodeGet(in, "dt", &dn));
  if (!dn) return DemNodeError(in, "missing required key 'dt' (seconds, or auto)");
  if (DemNodeScalar(dn) && !strcmp(DemNodeScalar(dn), "auto")) sim->dt_auto = PETSC_TRUE;
  else {
    PetscCall(DemNodeAsReal(dn, &sim->dt));
    DemNodeCheck(dn, sim->dt > 0, "dt must be > 0 s or auto (got %g)", (double)sim->dt);
  }
  PetscCall(DemNodeGetReal(in, "dt_fraction", PETSC_FALSE, &sim->dt_fraction));
  PetscCall(DemNodeGet(in, "dt_fraction", &dn));
  DemNodeCheck(dn ? dn : in, sim->dt_fraction > 0 && sim->dt_fraction <= 1, "dt_fraction must be in (0, 1] (got %g)", (double)sim->dt_fraction);
  PetscCall(DemNodeGetString(in, "petsc_options", PETSC_FALSE, &opts));
  if (opts) PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(DemRegistryNames_Private("integrator", names, sizeof(names)));
  {
    DemIntegratorCreateFn fn;
    PetscErrorCode        ierr;
    DemNode               tn;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = DemIntegratorFind_Private(type, &fn);
    PetscCall(PetscPopErrorHandler());
    PetscCall(DemNodeGet(in, "type", &tn));
    if (ierr) return DemNodeError(tn ? tn : in, "unknown integrator '%s'; registered: %s", type, names);
  }
  PetscCall(DemIntegratorCreate(sim->comm, &sim->integ));
  PetscCall(DemIntegratorSetType(sim->integ, type));
  PetscCall(DemIntegratorSetFromConfig(sim->integ, in));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemSimReadOutput(DemSim sim, DemNode root)
{
  DemNode     on, tn;
  const char *dir = NULL;

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "output", &on));
  if (on) {
    const char *const keys[] = {"dir", "vtk_every", "thermo_every", "contacts", "track", "checkpoint_every", NULL};
    PetscCall(DemNodeRequireMap(on));
    PetscCall(DemNodeAllowKeys(on, keys));
    PetscCall(DemNodeGetString(on, "dir", PETSC_FALSE, &dir));
    PetscCall(DemNodeGetReal(on, "vtk_every", PETSC_FALSE, &sim->out.vtk_every));
    PetscCall(DemNodeGetInt(on, "thermo_every", PETSC_FALSE, &sim->out.thermo_every));
    PetscCall(DemNodeGet(on, "thermo_every", &tn));
    DemNodeCheck(tn ? tn : on, sim->out.thermo_every > 0, "thermo_every must be >= 1 step (got %" PetscInt_FMT ")", sim->out.thermo_every);
    PetscCall(DemNodeGetBool(on, "contacts", PETSC_FALSE, &sim->out.contacts));
    PetscCall(DemNodeGetInt(on, "checkpoint_every", PETSC_FALSE, &sim->checkpoint_every)); /* checkpoint.c */
    PetscCall(DemNodeGet(on, "checkpoint_every", &tn));
    DemNodeCheck(tn ? tn : on, sim->checkpoint_every >= 0, "checkpoint_every must be >= 0 steps (0: none; got %" PetscInt_FMT ")", sim->checkpoint_every);
    PetscCall(DemNodeGet(on, "track", &tn));
    if (tn) {
      DemNodeCheck(tn, DemNodeGetType(tn) == DEM_NODE_SEQ, "track must be a list of body ids");
      PetscCall(DemNodeSeqLength(tn, &sim->out.ntrack));
      PetscCall(PetscMalloc1(sim->out.ntrack, &sim->out.track));
      for (PetscInt k = 0; k < sim->out.ntrack; k++) {
        DemNode   it;
        PetscReal v;
        PetscCall(DemNodeSeqItem(tn, k, &it));
        PetscCall(DemNodeAsReal(it, &v));
        DemNodeCheck(it, v >= 0 && v < sim->nparticles && v == PetscFloorReal(v), "body id must be an integer in [0, %" PetscInt_FMT ") (got %g)", sim->nparticles, (double)v);
        sim->out.track[k] = (PetscInt)v;
      }
    }
  }
  if (!sim->out.dir[0]) PetscCall(PetscSNPrintf(sim->out.dir, sizeof(sim->out.dir), "%s", dir ? dir : "out"));
  if (!dir && !strcmp(sim->out.dir, "out")) {
    PetscCall(PetscStrlcat(sim->out.dir, "/", sizeof(sim->out.dir)));
    PetscCall(PetscStrlcat(sim->out.dir, sim->name, sizeof(sim->out.dir)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemSimSetFromConfig - reads the whole run description and builds the simulation; checks
  everything that can be checked before step 0. Collective; every rank validates.
*/
PetscErrorCode DemSimSetFromConfig(DemSim sim, DemNode root)
{
  const char *const keys[] = {"name", "domain", "gravity", "materials", "contact", "shapes", "bodies", "walls", "loads", "search", "integrator", "run", "output", "plugins", "compare", "bonds", "fields", "mpi", NULL};
  DemNode           dom, rn, sn, kn;
  const char       *name = NULL;
  PetscBool         domset = PETSC_FALSE;

  PetscFunctionBegin;
  sim->root = root;
  PetscCall(PetscStrncpy(sim->file, DemNodeFile(root), sizeof(sim->file)));
  PetscCall(DemNodeAllowKeys(root, keys));
  /* plugins first: they may provide the shapes, laws and integrator read below; `compare:`
     is read by `mmdem compare` only (compare.c) */
  PetscCall(DemPluginsSetUpSim_Private(sim, root));
  PetscCall(DemNodeGetString(root, "name", PETSC_FALSE, &name));
  if (name) PetscCall(PetscStrncpy(sim->name, name, sizeof(sim->name)));
  else {
    char  buf[PETSC_MAX_PATH_LEN], *b, *dot;
    PetscCall(PetscStrncpy(buf, sim->file, sizeof(buf)));
    b   = basename(buf);
    dot = strrchr(b, '.');
    if (dot) *dot = 0;
    PetscCall(PetscStrncpy(sim->name, b, sizeof(sim->name)));
  }
  /* domain */
  PetscCall(DemNodeGet(root, "domain", &dom));
  if (dom) {
    const char *const dk[] = {"lo", "hi", "periodic", "dimension", NULL};
    PetscCall(DemNodeRequireMap(dom));
    PetscCall(DemNodeAllowKeys(dom, dk));
    PetscCall(DemNodeGetRealArray(dom, "lo", PETSC_TRUE, 3, sim->lo));
    PetscCall(DemNodeGetRealArray(dom, "hi", PETSC_TRUE, 3, sim->hi));
    for (int d = 0; d < 3; d++) DemNodeCheck(dom, sim->hi[d] > sim->lo[d], "hi must exceed lo in every direction (direction %d: lo %g, hi %g)", d, (double)sim->lo[d], (double)sim->hi[d]);
    PetscCall(DemNodeGetBoolArray(dom, "periodic", PETSC_FALSE, 3, sim->periodic));
    PetscCall(DemNodeGetInt(dom, "dimension", PETSC_FALSE, &sim->dim));
    PetscCall(DemNodeGet(dom, "dimension", &kn));
    DemNodeCheck(kn ? kn : dom, sim->dim == 2 || sim->dim == 3, "dimension must be 2 or 3 (got %" PetscInt_FMT ")", sim->dim);
    DemNodeCheck(kn ? kn : dom, !(sim->dim == 2 && sim->periodic[2]), "dimension 2 cannot be periodic in z");
    domset = PETSC_TRUE;
  }
  PetscCall(DemNodeGetRealArray(root, "gravity", PETSC_FALSE, 3, sim->gravity));
  PetscCall(DemSimReadMaterials(sim, root));
  PetscCall(DemSimReadContacts(sim, root));
  PetscCall(DemBondsSetFromConfig_Private(sim, root));
  PetscCall(DemSimReadShapes(sim, root));
  PetscCall(DemSimReadBodies(sim, root));
  PetscCall(DemSimReadWalls(sim, root));
  PetscCall(DemSimReadLoads(sim, root));
  PetscCall(DemFieldsSetFromConfig_Private(sim, root)); /* fields: drag, mie (fields.c) */
  /* domain from the bodies when not given */
  if (!domset) {
    DemBodyStore *bs = &sim->bodies;
    for (int d = 0; d < 3; d++) sim->lo[d] = PETSC_MAX_REAL, sim->hi[d] = -PETSC_MAX_REAL;
    for (PetscInt i = 0; i < bs->n; i++)
      for (int d = 0; d < 3; d++) {
        PetscReal r = (bs->flags[i] & DEM_WALL) ? 0 : bs->radius[i];
        sim->lo[d]  = PetscMin(sim->lo[d], bs->x[3 * i + d] - 2 * r);
        sim->hi[d]  = PetscMax(sim->hi[d], bs->x[3 * i + d] + 2 * r);
      }
    for (int d = 0; d < 3; d++)
      if (!(sim->hi[d] > sim->lo[d])) sim->lo[d] = -1, sim->hi[d] = 1;
  }
  /* search */
  {
    PetscReal rmax = 0;
    for (PetscInt i = 0; i < sim->bodies.n; i++)
      if (!(sim->bodies.flags[i] & DEM_WALL)) rmax = PetscMax(rmax, sim->bodies.radius[i]);
    sim->skin = 0.5 * rmax; /* default: a quarter of the largest diameter */
    PetscCall(DemNodeGet(root, "search", &sn));
    if (sn) {
      const char *const sk[] = {"skin", "sort_every", NULL}; /* sort_every: sort.c */
      PetscCall(DemNodeRequireMap(sn));
      PetscCall(DemNodeAllowKeys(sn, sk));
      PetscCall(DemNodeGetReal(sn, "skin", PETSC_FALSE, &sim->skin));
      PetscCall(DemNodeGet(sn, "skin", &kn));
      DemNodeCheck(kn ? kn : sn, sim->skin >= 0, "skin must be >= 0 m (got %g)", (double)sim->skin);
    }
    for (int d = 0; d < 3; d++) {
      if (!sim->periodic[d]) continue;
      if (sim->hi[d] - sim->lo[d] < 4 * rmax) {
        DemNode pn;
        PetscCall(DemNodeGet(dom, "periodic", &pn));
        return DemNodeError(pn ? pn : dom, "periodic length along %c (%g m) must be at least two particle diameters (%g m)", "xyz"[d], (double)(sim->hi[d] - sim->lo[d]), (double)(4 * rmax));
      }
    }
  }
  for (PetscInt w = 0; w < sim->nwall; w++) {
    PetscReal diag = 0;
    for (int d = 0; d < 3; d++) diag += (sim->hi[d] - sim->lo[d]) * (sim->hi[d] - sim->lo[d]);
    if (sim->shapes[sim->bodies.shape[sim->walls[w].body]]->kind == DEM_KIND_PLANE) PetscCall(DemPlaneSetDisplaySize(sim->shapes[sim->bodies.shape[sim->walls[w].body]], 0.5 * PetscSqrtReal(diag)));
  }
  PetscCall(DemSimReadIntegrator(sim, root));
  PetscCall(DemSortSetFromConfig_Private(sim, root)); /* search.sort_every (sort.c) */
  /* run */
  PetscCall(DemNodeGet(root, "run", &rn));
  if (!rn) return DemNodeError(root, "missing required key 'run' ({end_time: seconds} or {steps: N})");
  {
    const char *const rk[] = {"end_time", "steps", "memory_limit", NULL}; /* memory_limit: guard.c */
    PetscCall(DemNodeRequireMap(rn));
    PetscCall(DemNodeAllowKeys(rn, rk));
    PetscCall(DemNodeGetReal(rn, "end_time", PETSC_FALSE, &sim->end_time));
    PetscCall(DemNodeGetInt(rn, "steps", PETSC_FALSE, &sim->max_steps));
    DemNodeCheck(rn, (sim->end_time > 0) != (sim->max_steps > 0), "give exactly one of end_time > 0 (seconds) and steps > 0 (got end_time %g, steps %" PetscInt_FMT ")", (double)sim->end_time, sim->max_steps);
  }
  PetscCall(DemSimReadOutput(sim, root));
  PetscCall(DemDecompSetFromConfig_Private(sim, root)); /* mpi: (decomp.c) */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* shortest collision time over the material pairs present, for the smallest mobile body of each
   material against the smallest of each other (or a wall), with the pair and the characteristic
   speed used (guard.c names them in its time-step diagnosis) */
PetscErrorCode DemShortestCollision_Private(DemSim sim, PetscReal *tc, PetscInt *ma_out, PetscInt *mb_out, PetscReal *vchar_out)
{
  DemBodyStore *bs = &sim->bodies;
  PetscReal     vchar = 0.1, hgt = 0, gm;

  PetscFunctionBegin;
  *tc = PETSC_MAX_REAL, *ma_out = *mb_out = -1;
  gm  = PetscSqrtReal(sim->gravity[0] * sim->gravity[0] + sim->gravity[1] * sim->gravity[1] + sim->gravity[2] * sim->gravity[2]);
  for (int d = 0; d < 3; d++) hgt = PetscMax(hgt, sim->hi[d] - sim->lo[d]);
  vchar = PetscMax(vchar, PetscSqrtReal(2 * gm * hgt));
  for (PetscInt i = 0; i < bs->n; i++) vchar = PetscMax(vchar, 2 * PetscSqrtReal(bs->v[3 * i] * bs->v[3 * i] + bs->v[3 * i + 1] * bs->v[3 * i + 1] + bs->v[3 * i + 2] * bs->v[3 * i + 2]));
  for (PetscInt ma = 0; ma < sim->nmat; ma++) {
    PetscReal mmin = PETSC_MAX_REAL, rmin = PETSC_MAX_REAL;
    for (PetscInt i = 0; i < bs->n; i++)
      if (bs->material[i] == ma && bs->inv_m[i] > 0) mmin = PetscMin(mmin, bs->m[i]), rmin = PetscMin(rmin, bs->radius[i]);
    if (mmin == PETSC_MAX_REAL) continue;
    for (PetscInt mb = 0; mb < sim->nmat; mb++) {
      PetscReal t;
      PetscCall(DemContactLawCriticalDt(sim->laws[sim->pairlaw[ma * sim->nmat + mb]], 0.5 * mmin, 0.5 * rmin, vchar, &t));
      if (t < *tc) *tc = t, *ma_out = ma, *mb_out = mb;
    }
  }
  *vchar_out = vchar;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemCriticalDt_Private(DemSim sim, PetscReal *tc)
{
  PetscInt  ma, mb;
  PetscReal vchar;

  PetscFunctionBegin;
  PetscCall(DemShortestCollision_Private(sim, tc, &ma, &mb, &vchar));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* initial overlaps deeper than 5 % of the smaller radius are a configuration error (lists,
   lattices, files), between bodies and against walls */
#define DEM_OVERLAP_CHUNK 4096 /* pairs per chunk of the initial overlap check */

static PetscErrorCode DemSimCheckOverlaps(DemSim sim)
{
  DemBodyStore *bs = &sim->bodies;
  DemState      st = {bs->x, bs->v, bs->w, bs->q};
  PetscReal    *shift = NULL; /* one chunk's shift vectors (periodic): not the whole list's */

  PetscFunctionBegin;
  if (sim->periodic[0] || sim->periodic[1] || sim->periodic[2]) PetscCall(PetscMalloc1(3 * DEM_OVERLAP_CHUNK, &shift));
  /* the pairs in chunks of at most DEM_OVERLAP_CHUNK, each chunk's contacts checked before the
     next: the contact list holds one chunk's contacts, not the whole packing's */
  for (PetscInt gi = 0; gi < sim->nl.ngroups; gi++)
    for (PetscInt s0 = sim->nl.gstart[gi]; s0 < sim->nl.gstart[gi + 1]; s0 += DEM_OVERLAP_CHUNK) {
      DemPairBatch pb;
      DemCollideFn fn;
      PetscBool    sw;
      PetscInt     s1 = PetscMin(s0 + DEM_OVERLAP_CHUNK, sim->nl.gstart[gi + 1]);
      PetscCall(DemColliderGet_Private(sim->nl.gka[gi], sim->nl.gkb[gi], &fn, &sw));
      PetscCall(PetscMemzero(&pb, sizeof(pb)));
      pb.ka = sim->nl.gka[gi], pb.kb = sim->nl.gkb[gi];
      pb.n = s1 - s0, pb.a = sim->nl.a + s0, pb.b = sim->nl.b + s0, pb.pair = NULL;
      if (shift) PetscCall(DemNeighbourShiftsFill_Private(sim, s0, s1, shift));
      pb.shift = shift;
      pb.sim = sim, pb.state = &st;
      sim->cl.n = 0;
      PetscCall(fn(pb.ka, pb.kb, &pb, 0, &sim->cl));
      for (PetscInt c = 0; c < sim->cl.n; c++) {
        PetscInt  a = sim->cl.a[c], b = sim->cl.b[c];
        /* the message points at the body placed later (a wall's partner, or the higher id) */
        PetscInt  body = (bs->flags[a] & DEM_WALL) ? b : (bs->flags[b] & DEM_WALL) ? a : (bs->gid[a] > bs->gid[b] ? a : b);
        PetscReal rmin = ((bs->flags[a] | bs->flags[b]) & DEM_WALL) ? bs->radius[body] : PetscMin(bs->radius[a], bs->radius[b]);
        /* penalty laws accept the small overlaps of a settled packing (restarts from a
           bodies_final.csv); deeper than 5 % of the smaller radius is a placement mistake */
        /* a law with an activation gap (barrier_hybrid, 000 section 2.4.7) cannot start from any overlap */
        PetscReal lim = sim->laws[sim->pairlaw[bs->material[a] * sim->nmat + bs->material[b]]]->activation > 0 ? 0 : -0.05 * rmin;
        if (sim->cl.gap[c] < lim) {
          DemNode node = sim->setnode[sim->bodyset[body]], lst = NULL, item = NULL;
          /* point at the list item when the body comes from a list */
          PetscCall(DemNodeGet(node, "list", &lst));
          if (lst) PetscCall(DemNodeSeqItem(lst, (PetscInt)bs->gid[body] - sim->setfirst[sim->bodyset[body]], &item)); /* ids are the set-up order (sort.c may have reordered the store) */
          sim->cl.n = 0;
          PetscCall(PetscFree(shift));
          if ((bs->flags[a] | bs->flags[b]) & DEM_WALL) {
            PetscInt w = (bs->flags[a] & DEM_WALL) ? a : b;
            return DemNodeError(item ? item : node, "body %" PetscInt_FMT " (centre [%g, %g, %g], radius %g) overlaps wall %" PetscInt_FMT " by %g m at the start; move it to the free side of the wall", (PetscInt)bs->gid[body], (double)bs->x[3 * body], (double)bs->x[3 * body + 1], (double)bs->x[3 * body + 2], (double)bs->radius[body], (PetscInt)bs->gid[w], (double)-sim->cl.gap[c]);
          }
          return DemNodeError(item ? item : node, "bodies %" PetscInt_FMT " and %" PetscInt_FMT " overlap at the start by %g m (centres [%g, %g, %g] and [%g, %g, %g]); move them apart", (PetscInt)bs->gid[a], (PetscInt)bs->gid[b], (double)-sim->cl.gap[c], (double)bs->x[3 * a], (double)bs->x[3 * a + 1], (double)bs->x[3 * a + 2], (double)bs->x[3 * b], (double)bs->x[3 * b + 1], (double)bs->x[3 * b + 2]);
        }
      }
    }
  sim->cl.n = 0;
  PetscCall(PetscFree(shift));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemSimSetUp - builds the neighbour list, checks initial overlaps, chooses dt, sets up the
  integrator and evaluates the forces at t = 0. Still writes nothing. Collective.
*/
PetscErrorCode DemSimSetUp(DemSim sim)
{
  DemForceOut fo = {0};
  DemState    st;

  PetscFunctionBegin;
  if (sim->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
  PetscCall(DemSimCheckOverlaps(sim));
  PetscCall(DemBondsSetUp_Private(sim));
  PetscCall(DemCriticalDt_Private(sim, &sim->tc_min));
  if (sim->dt_auto) {
    DemNode in, dn;
    PetscCall(DemNodeGet(sim->root, "integrator", &in));
    PetscCall(DemNodeGet(in, "dt", &dn));
    DemNodeCheck(dn, sim->tc_min < PETSC_MAX_REAL, "dt: auto needs a contact law that reports a collision time");
    sim->dt = sim->dt_fraction * sim->tc_min;
  }
  PetscCall(DemGuardCheckTimeStep_Private(sim)); /* dt above tc: explicit integrators refuse it */
  PetscCall(DemSimConstrain(sim, sim->bodies.v, sim->bodies.w));
  PetscCall(DemDecompDistribute_Private(sim)); /* MPI: each rank keeps its subdomain (decomp.c) */
  PetscCall(DemIntegratorSetUp(sim->integ, sim));
  st   = (DemState){sim->bodies.x, sim->bodies.v, sim->bodies.w, sim->bodies.q};
  PetscCall(DemSimReserveDissipative_Private(sim));
  fo.f  = sim->bodies.f;
  fo.t  = sim->bodies.t;
  fo.fd = sim->fd;
  fo.td = sim->td;
  fo.J  = NULL;
  /* the forces at t = 0 do not advance contact history (no time has passed: LAMMPS's setup
     evaluation does not update shear history either). An integrator whose steps use the fused
     kernels gets them here too, unless the first VTK frame draws the contact network: the
     generic pipeline's contact list and force columns (about 0.5 kB per body of a packed bed)
     are then never allocated */
  if (sim->integ->fast_forces && !sim->out.contacts) PetscCall(DemForcesComputeFast(sim, &st, PETSC_FALSE, &fo));
  else PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, PETSC_FALSE, &fo));
  sim->pe_contact       = fo.pe_contact;
  sim->dissip_rate_prev = fo.dissip_rate;
  sim->ncontacts        = fo.ncontacts;
  sim->setupcalled      = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the per-body dissipative force and torque arrays, as long as the store */
PetscErrorCode DemSimReserveDissipative_Private(DemSim sim)
{
  PetscInt nb = sim->bodies.n + sim->bodies.nghost;

  PetscFunctionBegin;
  if (3 * nb <= sim->fdcap) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree(sim->fd));
  PetscCall(PetscFree(sim->td));
  PetscCall(PetscCalloc1(3 * nb, &sim->fd));
  PetscCall(PetscCalloc1(3 * nb, &sim->td));
  sim->fdcap = 3 * nb;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* walls: constant velocity (the store's v), removal at a time */
PetscErrorCode DemSimApplyWalls_Private(DemSim sim)
{
  DemBodyStore *bs     = &sim->bodies;
  PetscBool     change = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt w = 0; w < sim->nwall; w++) {
    DemWall *wl = &sim->walls[w];
    PetscInt i  = wl->body;
    if (wl->remove_at >= 0 && sim->time >= wl->remove_at && !(bs->flags[i] & DEM_REMOVED)) {
      bs->flags[i] |= DEM_REMOVED;
      change = PETSC_TRUE;
    }
  }
  if (change) PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimView(DemSim sim, FILE *fp)
{
  PetscInt nfixed = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < sim->bodies.n; i++)
    if ((sim->bodies.flags[i] & DEM_FIXED) && !(sim->bodies.flags[i] & DEM_WALL)) nfixed++;
  PetscCall(PetscFPrintf(sim->comm, fp, "%s: %" PetscInt_FMT " bodies (%" PetscInt_FMT " fixed), %" PetscInt_FMT " walls, %" PetscInt_FMT " materials, %" PetscInt_FMT " contact laws, integrator %s\n", sim->name, sim->nparticles, nfixed, sim->nwall, sim->nmat, sim->nlaw, sim->integ->type_name));
  PetscCall(PetscFPrintf(sim->comm, fp, "domain [%g, %g] x [%g, %g] x [%g, %g], periodic %d%d%d, dimension %" PetscInt_FMT ", skin %g m, hot loops %s\n", (double)sim->lo[0], (double)sim->hi[0], (double)sim->lo[1], (double)sim->hi[1], (double)sim->lo[2], (double)sim->hi[2], sim->periodic[0], sim->periodic[1], sim->periodic[2], sim->dim, (double)sim->skin, DemIsaName()));
  if (sim->tc_min < PETSC_MAX_REAL) PetscCall(PetscFPrintf(sim->comm, fp, "dt = %g s (%s), shortest collision time tc = %g s, dt/tc = %.4g\n", (double)sim->dt, sim->dt_auto ? "auto" : "given", (double)sim->tc_min, (double)(sim->dt / sim->tc_min)));
  else PetscCall(PetscFPrintf(sim->comm, fp, "dt = %g s\n", (double)sim->dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}
