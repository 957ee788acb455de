/*
  bonds.c - bonded pairs, 003_9f0cdbfccae61a56.txt section 3.3: "a 'bond' between particles
  if in the initial configuration they are close together (|delta_ij| < d/100)"; a bonded
  pair interacts through its own contact law (default `bond`, src/contact/bond.c: a linear
  spring that also acts in tension) instead of the law of its material pair, at every
  distance, for the whole run.

  Keys (top-level `bonds:` of the run description):
    threshold  [m] pairs of particles with |gap| < threshold at t = 0 are bonded
               [0.01 (r_a + r_b), i.e. 003's d/100 for equal spheres]; must not exceed the
               search skin (the neighbour list sees pairs up to the skin apart)
    law        contact law of the bonds [bond]
    params     its parameters (for `bond`: kn required, gamma_n, gamma_t)
  Bonds join two particles (never a wall), at least one of them mobile.

  Pair persistence: the bonds are found once, at set-up (DemSimSetUp, after the neighbour
  list and the overlap check), and kept as body-index pairs (the store does not reorder
  bodies). At every force evaluation DemContactsDetect (forces.c) calls
  DemBondsDetect_Private, which gives the colliders' contact of a bonded pair to the bond
  law (the one with the smallest gap, i.e. the nearest periodic image) and appends, through
  the pair's collider with an unlimited reach, the contact of every bonded pair the
  colliders did not report (apart by more than the collider margin). Bond contacts carry
  no history slot. Output: bond contacts are written to the VTK contact network whatever
  their gap, with bond = 1 (output.c).
*/
#include "demimpl.h"

typedef struct {
  int64_t  key;
  PetscInt a, b;
} DemBondRec;

static int DemCmpBond(const void *x, const void *y)
{
  int64_t a = ((const DemBondRec *)x)->key, b = ((const DemBondRec *)y)->key;
  return (a > b) - (a < b);
}

static inline int64_t DemBondKey(const DemSim sim, PetscInt a, PetscInt b)
{
  int64_t nb = (int64_t)(sim->bodies.n + sim->bodies.nghost);
  return a < b ? (int64_t)a * nb + b : (int64_t)b * nb + a;
}

/* index of the bond of pair (a, b) in the key order, or -1 */
static PetscInt DemBondFind(const DemSim sim, PetscInt a, PetscInt b)
{
  const DemBondList *bl = sim->bonds;
  int64_t            key = DemBondKey(sim, a, b);
  PetscInt           lo = 0, hi = bl->n - 1;
  if (!bl->hasbond[a] || !bl->hasbond[b]) return -1;
  while (lo <= hi) {
    PetscInt mid = (lo + hi) / 2;
    if (bl->key[mid] == key) return mid;
    if (bl->key[mid] < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

PetscErrorCode DemBondsDestroy_Private(DemSim sim)
{
  DemBondList *bl = sim->bonds;

  PetscFunctionBegin;
  if (!bl) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree4(bl->a, bl->b, bl->key, bl->best));
  PetscCall(PetscFree4(bl->ia, bl->ib, bl->shift, bl->mark));
  PetscCall(PetscFree(bl->hasbond));
  PetscCall(PetscFree(sim->bonds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemBondsSetFromConfig_Private - reads the top-level `bonds:` mapping, creates the bonds' law
  (appended to sim->laws, never chosen by a material pair) and sim->bonds. Call after the
  contact laws are read (DemSimSetFromConfig). Nothing happens without the key.
*/
PetscErrorCode DemBondsSetFromConfig_Private(DemSim sim, DemNode root)
{
  const char *const     keys[] = {"threshold", "law", "params", NULL};
  DemNode               bn, kn, params;
  const char           *lawname = "bond";
  DemBondList          *bl;
  DemContactLaw        *laws, law;
  PetscInt             *ls;
  DemContactLawCreateFn fn;
  DemMaterialPair       mp = {&sim->mat[0], &sim->mat[0]};
  char                  names[1024];

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "bonds", &bn));
  if (!bn) PetscFunctionReturn(PETSC_SUCCESS);
  if (DemNodeGetType(bn) != DEM_NODE_MAP) return DemNodeError(bn, "expected a mapping {threshold: m, law: bond, params: {kn: ...}}");
  PetscCall(DemNodeAllowKeys(bn, keys));
  PetscCall(PetscNew(&bl));
  sim->bonds     = bl;
  bl->node       = bn;
  bl->threshold  = -1;
  PetscCall(DemNodeGet(bn, "threshold", &kn));
  if (kn) {
    PetscCall(DemNodeGetReal(bn, "threshold", PETSC_TRUE, &bl->threshold));
    DemNodeCheck(kn, bl->threshold > 0, "threshold must be > 0 m (got %g)", (double)bl->threshold);
  }
  PetscCall(DemNodeGetString(bn, "law", PETSC_FALSE, &lawname));
  PetscCall(DemNodeGet(bn, "law", &kn));
  {
    PetscErrorCode ierr;
    PetscCall(DemRegistryNames_Private("contact", names, sizeof(names)));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = DemContactLawFind_Private(lawname, &fn);
    PetscCall(PetscPopErrorHandler());
    if (ierr) return DemNodeError(kn ? kn : bn, "unknown contact law '%s'; registered: %s", lawname, names);
  }
  PetscCall(DemNodeGet(bn, "params", &params));
  if (params && DemNodeGetType(params) != DEM_NODE_MAP) return DemNodeError(params, "expected a mapping of the law's parameters");
  PetscCall(DemContactLawCreate(sim->comm, &law));
  PetscCall(DemContactLawSetType(law, lawname));
  if (params) { /* on an error the law goes too (no leak: fuzzing) */
    PetscErrorCode ierr = DemContactLawSetFromConfig(law, params, &mp);
    if (ierr) PetscCall(DemContactLawDestroy(&law));
    PetscCall(ierr);
  } else { /* no params: the law's complaint gets the location of the bonds: mapping */
    PetscErrorCode ierr;
    DemSetLastError("%s", "");
    PetscCall(PetscPushErrorHandler(DemRecordErrorHandler, NULL));
    ierr = DemContactLawSetFromConfig(law, NULL, &mp);
    PetscCall(PetscPopErrorHandler());
    if (ierr) {
      PetscCall(DemContactLawDestroy(&law));
      return DemNodeError(bn, "%s", DemLastError());
    }
  }
  /* append to the law table; the laws' batches are sized by lawstart[nlaw + 1] */
  PetscCall(PetscMalloc1(sim->nlaw + 1, &laws));
  PetscCall(PetscArraycpy(laws, sim->laws, sim->nlaw));
  laws[sim->nlaw] = law;
  PetscCall(PetscFree(sim->laws));
  sim->laws = laws;
  PetscCall(PetscMalloc1(sim->nlaw + 2, &ls));
  PetscCall(PetscFree(sim->lawstart));
  sim->lawstart = ls;
  bl->law       = sim->nlaw++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemBondsSetUp_Private - bonds every pair of particles (not walls, not both immobile) whose
  |gap| is below the threshold in the initial configuration. Needs the neighbour list.
*/
PetscErrorCode DemBondsSetUp_Private(DemSim sim)
{
  DemBondList    *bl = sim->bonds;
  DemBodyStore   *bs = &sim->bodies;
  DemContactList *cl = &sim->cl;
  const PetscInt  nb = bs->n + bs->nghost;
  DemState        st = {bs->x, bs->v, bs->w, bs->q};
  PetscReal       reach = 0;
  PetscInt        n = 0;

  PetscFunctionBegin;
  if (!bl) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < nb; i++)
    if (!(bs->flags[i] & DEM_WALL)) reach = PetscMax(reach, 0.02 * bs->radius[i]);
  if (bl->threshold > 0) {
    DemNode kn;
    PetscCall(DemNodeGet(bl->node, "threshold", &kn));
    DemNodeCheck(kn, bl->threshold <= sim->skin, "threshold %g m exceeds the search skin %g m: the neighbour list sees only pairs within the skin; raise search.skin", (double)bl->threshold, (double)sim->skin);
    reach = bl->threshold;
  }
  reach = PetscMin(reach, sim->skin);
  /* the colliders over the neighbour list, with the threshold as margin */
  cl->n = 0;
  for (PetscInt gi = 0; gi < sim->nl.ngroups; gi++) {
    DemPairBatch pb;
    DemCollideFn fn;
    PetscBool    sw;
    PetscInt     s0 = sim->nl.gstart[gi], s1 = sim->nl.gstart[gi + 1];
    PetscCall(DemColliderGet_Private(sim->nl.gka[gi], sim->nl.gkb[gi], &fn, &sw));
    PetscCall(PetscMemzero(&pb, sizeof(pb)));
    pb.ka = sim->nl.gka[gi], pb.kb = sim->nl.gkb[gi];
    pb.n = s1 - s0, pb.a = sim->nl.a + s0, pb.b = sim->nl.b + s0, pb.pair = NULL;
    if (sim->periodic[0] || sim->periodic[1] || sim->periodic[2]) {
      const PetscReal *shift;
      PetscCall(DemNeighbourShifts_Private(sim, &shift));
      pb.shift = shift + 3 * s0;
    }
    pb.sim = sim, pb.state = &st;
    PetscCall(fn(pb.ka, pb.kb, &pb, reach, cl));
  }
  {
    DemBondRec *rec;
    PetscInt    m = 0;
    PetscCall(PetscMalloc1(cl->n + 1, &rec));
    for (PetscInt c = 0; c < cl->n; c++) {
      PetscInt  a = cl->a[c], b = cl->b[c];
      PetscReal thr = bl->threshold > 0 ? bl->threshold : 0.01 * (bs->radius[a] + bs->radius[b]);
      if ((bs->flags[a] | bs->flags[b]) & DEM_WALL) continue;
      if (bs->inv_m[a] == 0 && bs->inv_m[b] == 0) continue;
      if (!(PetscAbsReal(cl->gap[c]) < thr)) continue;
      rec[n].key = DemBondKey(sim, a, b);
      rec[n].a   = a; /* the colliders' order of the shape kinds */
      rec[n].b   = b;
      n++;
    }
    cl->n = 0;
    /* key order for lookups; a pair seen through two periodic images is bonded once */
    if (n > 1) qsort(rec, (size_t)n, sizeof(DemBondRec), DemCmpBond);
    PetscCall(PetscMalloc4(n + 1, &bl->a, n + 1, &bl->b, n + 1, &bl->key, n + 1, &bl->best));
    PetscCall(PetscMalloc4(n + 1, &bl->ia, n + 1, &bl->ib, 3 * n + 3, &bl->shift, n + 1, &bl->mark));
    PetscCall(PetscCalloc1(nb + 1, &bl->hasbond));
    for (PetscInt k = 0; k < n; k++) {
      if (m && bl->key[m - 1] == rec[k].key) continue;
      bl->key[m] = rec[k].key, bl->a[m] = rec[k].a, bl->b[m] = rec[k].b;
      m++;
    }
    n = m;
    PetscCall(PetscFree(rec));
  }
  bl->n = n;
  for (PetscInt k = 0; k < n; k++) bl->hasbond[bl->a[k]] = bl->hasbond[bl->b[k]] = 1;
  if (!sim->out.quiet) PetscCall(PetscPrintf(sim->comm, "bonds: %" PetscInt_FMT " bonded pairs (law %s)\n", n, sim->laws[bl->law]->type_name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemBondsDetect_Private - called by DemContactsDetect after the law of each contact is set:
  hands the colliders' contacts of bonded pairs to the bond law and appends the contacts of
  the bonded pairs they did not report. The caller re-reserves the per-contact columns.
*/
PetscErrorCode DemBondsDetect_Private(DemSim sim, const DemState *st)
{
  DemBondList    *bl = sim->bonds;
  DemBodyStore   *bs = &sim->bodies;
  DemContactList *cl = &sim->cl;
  const PetscInt  n0 = cl->n;
  PetscInt        nmiss = 0;

  PetscFunctionBegin;
  if (!bl || !bl->n) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt k = 0; k < bl->n; k++) bl->best[k] = -1;
  for (PetscInt c = 0; c < n0; c++) {
    PetscInt k = DemBondFind(sim, cl->a[c], cl->b[c]);
    if (k < 0) continue;
    if (bl->best[k] < 0 || cl->gap[c] < cl->gap[bl->best[k]]) bl->best[k] = c;
  }
  for (PetscInt k = 0; k < bl->n; k++) {
    if (bl->best[k] >= 0) cl->law[bl->best[k]] = bl->law;
    else nmiss++;
  }
  if (!nmiss) PetscFunctionReturn(PETSC_SUCCESS);
  /* the others through their colliders, one call per shape-kind pair, unlimited reach */
  {
    PetscInt  done = 0;
    PetscReal L[3];
    PetscBool per = (sim->periodic[0] || sim->periodic[1] || sim->periodic[2]) ? PETSC_TRUE : PETSC_FALSE;
    for (int d = 0; d < 3; d++) L[d] = sim->hi[d] - sim->lo[d];
    for (PetscInt k = 0; k < bl->n; k++) bl->mark[k] = bl->best[k] >= 0;
    while (done < nmiss) {
      DemShapeKind ka = -1, kb = -1;
      DemCollideFn fn;
      PetscBool    sw;
      PetscInt     m = 0, c1 = cl->n;
      DemPairBatch pb;
      for (PetscInt k = 0; k < bl->n; k++) {
        PetscInt     a = bl->a[k], b = bl->b[k];
        DemShapeKind ja = sim->shapes[bs->shape[a]]->kind, jb = sim->shapes[bs->shape[b]]->kind;
        if (bl->mark[k]) continue;
        if (ka < 0) ka = ja, kb = jb;
        if (ja != ka || jb != kb) continue;
        bl->mark[k] = 1;
        bl->ia[m]   = a;
        bl->ib[m]   = b;
        for (int d = 0; d < 3; d++) { /* nearest periodic image of b */
          PetscReal dx = st->x[3 * a + d] - st->x[3 * b + d];
          bl->shift[3 * m + d] = (per && sim->periodic[d]) ? L[d] * PetscFloorReal(dx / L[d] + 0.5) : 0;
        }
        m++;
      }
      PetscCall(DemColliderGet_Private(ka, kb, &fn, &sw));
      PetscCheck(fn && !sw, sim->comm, PETSC_ERR_PLIB, "no collider for the bonded shape kinds %s/%s", DemShapeKindName(ka), DemShapeKindName(kb));
      PetscCall(PetscMemzero(&pb, sizeof(pb)));
      pb.ka = ka, pb.kb = kb, pb.n = m, pb.a = bl->ia, pb.b = bl->ib, pb.pair = NULL;
      pb.shift = per ? bl->shift : NULL;
      pb.sim = sim, pb.state = st;
      PetscCall(fn(ka, kb, &pb, PETSC_MAX_REAL, cl));
      for (PetscInt c = c1; c < cl->n; c++) cl->law[c] = bl->law;
      done += m;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
