/*
  featslot.c - history slots for contacts that carry a feature key (DESIGN.md: "Contact history
  lives in a hash map keyed by (gid_a, gid_b, feature)"). A candidate pair of the neighbour list
  has one history slot beside it; a pair that touches at several points (a sphere against a
  mesh wall: one contact per face, edge or vertex it touches) needs one per point. Those live at
  slots npairs, npairs + 1, ... of the same history array, so that contact laws read them like
  any other slot. A slot is made on first request for a (pair, feature) after a build, with the
  values kept across the build in a (gid_a, gid_b, feature) map of its own (zeros for a new
  contact; the neighbour list's map is scratch of the build);
  DemForcesCompute zeroes the slots of contacts that did not touch at a committed evaluation,
  and a rebuild puts the nonzero ones back into the map. Not saved in checkpoints (a restart
  starts them from zero).
*/
#include "demimpl.h"

static inline uint64_t DemFeatHash(PetscInt pair, int64_t f)
{
  uint64_t h = (uint64_t)pair * 0x9E3779B97F4A7C15ull ^ ((uint64_t)f + 0x632BE59BD9B4E019ull);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return h;
}

static PetscErrorCode DemFeatRehash(DemNeighbourList *nl, PetscInt cap)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(nl->fhash));
  PetscCall(PetscMalloc1(cap, &nl->fhash));
  for (PetscInt i = 0; i < cap; i++) nl->fhash[i] = -1;
  nl->fhashcap = cap;
  for (PetscInt s = 0; s < nl->nfeat; s++) {
    PetscInt i = (PetscInt)(DemFeatHash(nl->fpair[s], nl->fkey[s]) & (uint64_t)(cap - 1));
    while (nl->fhash[i] >= 0) i = (i + 1) & (cap - 1);
    nl->fhash[i] = s;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNeighbourFeatureSlot_Private - the history slot of the contact `feature` (nonzero) of
  candidate pair `pair` (index in the neighbour list), made when new (`create`; else -1 when
  there is none). *fresh (may be NULL): the slot was made now and the map had no values for it.
  Not collective.
*/
PetscErrorCode DemNeighbourFeatureSlot_Private(DemSim sim, PetscInt pair, int64_t feature, PetscBool create, PetscInt *slot, PetscBool *fresh)
{
  DemNeighbourList *nl = &sim->nl;
  const PetscInt    hs = sim->histsize;
  PetscInt          i, s;

  PetscFunctionBegin;
  *slot = -1;
  if (fresh) *fresh = PETSC_FALSE;
  if (hs <= 0 || pair < 0 || pair >= nl->npairs) PetscFunctionReturn(PETSC_SUCCESS);
  if (nl->fbuild != nl->nbuilds + 1) { /* the list was rebuilt (neighbour.c or decomp.c) */
    nl->nfeat  = 0;
    nl->fbuild = nl->nbuilds + 1;
    if (nl->fhashcap) for (PetscInt k = 0; k < nl->fhashcap; k++) nl->fhash[k] = -1;
  }
  if (nl->fhashcap) {
    i = (PetscInt)(DemFeatHash(pair, feature) & (uint64_t)(nl->fhashcap - 1));
    while (nl->fhash[i] >= 0) {
      s = nl->fhash[i];
      if (nl->fpair[s] == pair && nl->fkey[s] == feature) {
        *slot = nl->npairs + s;
        PetscFunctionReturn(PETSC_SUCCESS);
      }
      i = (i + 1) & (nl->fhashcap - 1);
    }
  }
  if (!create) PetscFunctionReturn(PETSC_SUCCESS);
  /* a new slot */
  if (nl->nfeat == nl->featcap) {
    PetscInt  cap = PetscMax(64, 2 * nl->featcap), *np;
    int64_t  *nk;
    PetscCall(PetscMalloc2(cap, &np, cap, &nk));
    if (nl->nfeat) {
      PetscCall(PetscArraycpy(np, nl->fpair, nl->nfeat));
      PetscCall(PetscArraycpy(nk, nl->fkey, nl->nfeat));
    }
    PetscCall(PetscFree2(nl->fpair, nl->fkey));
    nl->fpair = np, nl->fkey = nk, nl->featcap = cap;
  }
  if (2 * (nl->nfeat + 1) > nl->fhashcap) PetscCall(DemFeatRehash(nl, PetscMax(128, 2 * nl->fhashcap)));
  if (nl->npairs + nl->nfeat + 1 > nl->histcap) { /* grow the history array, keeping its values */
    PetscInt   cap = PetscMax(nl->npairs + nl->nfeat + 1, 2 * nl->histcap);
    PetscReal *h;
    PetscCall(PetscMalloc1(hs * cap, &h));
    PetscCall(PetscArraycpy(h, nl->history, hs * (nl->npairs + nl->nfeat)));
    PetscCall(PetscFree(nl->history));
    nl->history = h;
    nl->histcap = cap;
  }
  s            = nl->nfeat++;
  nl->fpair[s] = pair;
  nl->fkey[s]  = feature;
  i            = (PetscInt)(DemFeatHash(pair, feature) & (uint64_t)(nl->fhashcap - 1));
  while (nl->fhash[i] >= 0) i = (i + 1) & (nl->fhashcap - 1);
  nl->fhash[i] = s;
  {
    DemBodyStore *bs = &sim->bodies;
    PetscReal    *h  = nl->fmap ? DemHistoryMapGet((DemHistoryMap *)nl->fmap, bs->gid[nl->a[pair]], bs->gid[nl->b[pair]], feature) : NULL;
    if (h) PetscCall(PetscArraycpy(nl->history + hs * (nl->npairs + s), h, hs));
    else PetscCall(PetscArrayzero(nl->history + hs * (nl->npairs + s), hs));
    if (fresh) *fresh = h ? PETSC_FALSE : PETSC_TRUE;
  }
  *slot = nl->npairs + s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNeighbourFeatureSave_Private - at a rebuild (before the pairs change): the nonzero feature
  slots into the feature map (nl->fmap), which keeps them until the next build; then no slot is
  left.
*/
PetscErrorCode DemNeighbourFeatureSave_Private(DemSim sim)
{
  DemNeighbourList *nl = &sim->nl;
  DemBodyStore     *bs = &sim->bodies;
  const PetscInt    hs = sim->histsize;

  PetscFunctionBegin;
  if (hs <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  if (!nl->fmap) {
    DemHistoryMap *m;
    PetscCall(PetscNew(&m));
    PetscCall(DemHistoryMapInit(m, hs));
    nl->fmap = m;
  }
  PetscCall(DemHistoryMapClear((DemHistoryMap *)nl->fmap));
  if (nl->fbuild == nl->nbuilds + 1)
    for (PetscInt s = 0; s < nl->nfeat; s++) {
      const PetscReal *h   = nl->history + hs * (nl->npairs + s);
      PetscBool        any = PETSC_FALSE;
      for (PetscInt j = 0; j < hs; j++) any = any || h[j] != 0.0;
      if (any) PetscCall(DemHistoryMapPut((DemHistoryMap *)nl->fmap, bs->gid[nl->a[nl->fpair[s]]], bs->gid[nl->b[nl->fpair[s]]], nl->fkey[s], h));
    }
  nl->nfeat = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the number of feature slots in use (forces.c: they are zeroed when untouched) */
PetscInt DemNeighbourFeatureCount_Private(DemSim sim)
{
  return (sim->nl.fbuild == sim->nl.nbuilds + 1) ? sim->nl.nfeat : 0;
}

PetscErrorCode DemNeighbourFeatureFree_Private(DemNeighbourList *nl)
{
  PetscFunctionBegin;
  PetscCall(PetscFree2(nl->fpair, nl->fkey));
  PetscCall(PetscFree(nl->fhash));
  if (nl->fmap) {
    PetscCall(DemHistoryMapFree((DemHistoryMap *)nl->fmap));
    PetscCall(PetscFree(nl->fmap));
  }
  nl->nfeat = nl->featcap = nl->fhashcap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
