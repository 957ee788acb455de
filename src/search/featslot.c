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
  and a rebuild puts the nonzero ones back into the map. Users: mesh walls (mesh.c: one contact
  per touching face, edge or vertex) and polyhedra (polyhedron_contact.c: one per pair of
  sub-regions). Checkpoints hold the slots, their history rows and the map
  (DemNeighbourFeatureCheckpoint_Private), so that a restart continues bitwise.
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

/* reads the nf slots of a checkpoint (after their count) and the feature map into temporaries,
   checking them (DemNeighbourFeatureCheckpoint_Private) */
static PetscErrorCode DemFeatRead(FILE *fp, PetscInt npairs, PetscInt hs, int64_t nf, PetscInt *fpair, int64_t *fkey, PetscReal *fh, DemHistoryMap *seen, DemHistoryMap *map)
{
  PetscFunctionBegin;
  for (PetscInt s = 0; s < nf; s++) {
    int64_t  p;
    PetscInt c0 = seen->count;
    PetscCall(DemCheckpointIO(fp, PETSC_FALSE, &p, sizeof(p), "feature slots: pair"));
    PetscCall(DemCheckpointIO(fp, PETSC_FALSE, &fkey[s], sizeof(int64_t), "feature slots: key"));
    PetscCheck(p >= 0 && p < npairs, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: feature slot %" PetscInt_FMT " belongs to pair %lld, there are %" PetscInt_FMT " pairs", s, (long long)p, npairs);
    fpair[s] = (PetscInt)p;
    PetscCall(DemHistoryMapPut(seen, p, 0, fkey[s], NULL));
    PetscCheck(seen->count > c0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: feature slot %" PetscInt_FMT " repeats pair %lld, feature %lld", s, (long long)p, (long long)fkey[s]);
  }
  PetscCall(DemCheckpointIO(fp, PETSC_FALSE, fh, (size_t)(hs * nf) * sizeof(PetscReal), "feature slots: history"));
  for (PetscInt k = 0; k < hs * nf; k++) PetscCheck(isfinite(fh[k]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: feature slot history value %" PetscInt_FMT " is not finite", k);
  PetscCall(DemHistoryMapCheckpoint_Private(map, fp, PETSC_FALSE, "feature map"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNeighbourFeatureCheckpoint_Private - the feature slots in a checkpoint (checkpoint.c, at the
  end of the neighbour list's section), through DemCheckpointIO: int32 version (1), int64
  history size, int64 count of the slots of the current build, each slot's pair and feature key
  (int64), their history rows (count x history size reals), then the feature map (the values
  kept across the last build, read by slots made later) by DemHistoryMapCheckpoint_Private.
  Reading (write false) checks everything against `npairs`, the checkpoint's pair count (a pair
  index out of range, a (pair, feature) given twice, a value that is not finite are refused) and
  changes nothing unless `apply`; then the pairs, their history rows and the build count of the
  neighbour list must be restored already. `avail`: the bytes there are to read (bounds the
  count before anything is allocated). Not collective.
*/
PetscErrorCode DemNeighbourFeatureCheckpoint_Private(DemSim sim, FILE *fp, PetscBool write, PetscBool apply, PetscInt npairs, size_t avail)
{
  DemNeighbourList *nl      = &sim->nl;
  const PetscInt    hs      = PetscMax(sim->histsize, 0);
  int32_t           version = 1;
  int64_t           nf = 0, hsf = hs;
  PetscInt         *fpair;
  int64_t          *fkey;
  PetscReal        *fh;
  DemHistoryMap     map, seen;
  PetscErrorCode    ierr;

  PetscFunctionBegin;
  PetscCall(DemCheckpointIO(fp, write, &version, sizeof(version), "feature slots: version"));
  PetscCheck(version == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: feature slots of version %d, this mmdem reads version 1", (int)version);
  PetscCall(DemCheckpointIO(fp, write, &hsf, sizeof(hsf), "feature slots: history size"));
  PetscCheck(hsf == hs, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: feature slots of %lld history values, %" PetscInt_FMT " in this run", (long long)hsf, hs);
  if (write) {
    nf = hs > 0 ? DemNeighbourFeatureCount_Private(sim) : 0;
    PetscCall(DemCheckpointIO(fp, write, &nf, sizeof(nf), "feature slots: count"));
    for (PetscInt s = 0; s < nf; s++) {
      int64_t p = nl->fpair[s];
      PetscCall(DemCheckpointIO(fp, write, &p, sizeof(p), "feature slots: pair"));
      PetscCall(DemCheckpointIO(fp, write, &nl->fkey[s], sizeof(int64_t), "feature slots: key"));
    }
    PetscCall(DemCheckpointIO(fp, write, nl->history + hs * npairs, (size_t)(hs * nf) * sizeof(PetscReal), "feature slots: history"));
    if (nl->fmap) PetscCall(DemHistoryMapCheckpoint_Private((DemHistoryMap *)nl->fmap, fp, write, "feature map"));
    else {
      int64_t zero = 0; /* an empty map */
      PetscCall(DemCheckpointIO(fp, write, &zero, sizeof(zero), "feature map"));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* reading: into temporaries, checked, then (apply) into the neighbour list */
  PetscCall(DemCheckpointIO(fp, write, &nf, sizeof(nf), "feature slots: count"));
  PetscCheck(nf >= 0 && (uint64_t)nf <= avail / (16 + 8 * (size_t)hs) && nf < PETSC_MAX_INT / 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %lld feature slots is out of range", (long long)nf);
  PetscCheck(nf == 0 || hs > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %lld feature slots without contact history", (long long)nf);
  PetscCall(DemHistoryMapInit(&map, hs));
  PetscCall(DemHistoryMapInit(&seen, 0));
  PetscCall(PetscMalloc3(nf + 1, &fpair, nf + 1, &fkey, hs * nf + 1, &fh));
  ierr = DemFeatRead(fp, npairs, hs, nf, fpair, fkey, fh, &seen, &map);
  if (!ierr && apply) {
    PetscInt cap = 128;
    if (npairs + nf > nl->histcap) { /* room for the feature rows, keeping the pairs' history */
      PetscInt   hc = npairs + (PetscInt)nf;
      PetscReal *h;
      PetscCall(PetscMalloc1(PetscMax(hs * hc, 1), &h));
      PetscCall(PetscArraycpy(h, nl->history, hs * npairs));
      PetscCall(PetscFree(nl->history));
      nl->history = h;
      nl->histcap = hc;
    }
    PetscCall(PetscArraycpy(nl->history + hs * npairs, fh, hs * nf));
    if (nf > nl->featcap) {
      PetscCall(PetscFree2(nl->fpair, nl->fkey));
      PetscCall(PetscMalloc2(nf, &nl->fpair, nf, &nl->fkey));
      nl->featcap = (PetscInt)nf;
    }
    PetscCall(PetscArraycpy(nl->fpair, fpair, nf));
    PetscCall(PetscArraycpy(nl->fkey, fkey, nf));
    nl->nfeat  = (PetscInt)nf;
    nl->fbuild = nl->nbuilds + 1; /* the slots of the current build */
    while (2 * (nf + 1) > cap) cap *= 2;
    PetscCall(DemFeatRehash(nl, PetscMax(cap, nl->fhashcap)));
    if (!nl->fmap) {
      DemHistoryMap *m;
      PetscCall(PetscNew(&m));
      nl->fmap = m;
    } else PetscCall(DemHistoryMapFree((DemHistoryMap *)nl->fmap));
    *(DemHistoryMap *)nl->fmap = map; /* moved into the list */
    PetscCall(DemHistoryMapInit(&map, hs));
  }
  PetscCall(DemHistoryMapFree(&map));
  PetscCall(DemHistoryMapFree(&seen));
  PetscCall(PetscFree3(fpair, fkey, fh));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNeighbourFeatureExport_Private - the feature state of the list by global ids, into `all`
  (made here, histsize hs + 1): every slot, also a zeroed one (a slot is found, not made fresh,
  when its contact touches again, and mesh.c's inheritance reads the slots of the pair), with
  last value 1, and every entry of the feature map without a slot (a slot made on first touch
  takes its values) with last value 0. For a rebuild that must not change what the contacts
  see: the distribution of a restart on several ranks (decomp.c, with
  DemNeighbourFeatureImport_Private after the build).
*/
PetscErrorCode DemNeighbourFeatureExport_Private(DemSim sim, DemHistoryMap *all)
{
  DemNeighbourList *nl = &sim->nl;
  DemBodyStore     *bs = &sim->bodies;
  const PetscInt    hs = sim->histsize;
  PetscReal        *v;

  PetscFunctionBegin;
  PetscCall(DemHistoryMapInit(all, PetscMax(hs, 0) + 1));
  if (hs <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc1(hs + 1, &v));
  if (nl->fmap) {
    DemHistoryMap *m = (DemHistoryMap *)nl->fmap;
    for (PetscInt i = 0; i < m->cap; i++) {
      if (!m->used[i]) continue;
      PetscCall(PetscArraycpy(v, m->val + hs * i, hs));
      v[hs] = 0;
      PetscCall(DemHistoryMapPut(all, m->ka[i], m->kb[i], m->kf[i], v));
    }
  }
  if (nl->fbuild == nl->nbuilds + 1)
    for (PetscInt s = 0; s < nl->nfeat; s++) {
      PetscCall(PetscArraycpy(v, nl->history + hs * (nl->npairs + s), hs));
      v[hs] = 1;
      PetscCall(DemHistoryMapPut(all, bs->gid[nl->a[nl->fpair[s]]], bs->gid[nl->b[nl->fpair[s]]], nl->fkey[s], v));
    }
  PetscCall(PetscFree(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNeighbourFeatureImport_Private - after a build: the entries of `all`
  (DemNeighbourFeatureExport_Private) whose pair is in the list go into the feature map, and
  those that were slots become slots again, with their values. Entries of pairs not in the list
  (another rank's) are skipped. Not collective.
*/
PetscErrorCode DemNeighbourFeatureImport_Private(DemSim sim, DemHistoryMap *all)
{
  DemNeighbourList *nl = &sim->nl;
  DemBodyStore     *bs = &sim->bodies;
  const PetscInt    hs = sim->histsize;
  DemHistoryMap     pm; /* (gid a, gid b) -> pair index */

  PetscFunctionBegin;
  if (hs <= 0 || !all->count) PetscFunctionReturn(PETSC_SUCCESS);
  if (!nl->fmap) {
    DemHistoryMap *m;
    PetscCall(PetscNew(&m));
    PetscCall(DemHistoryMapInit(m, hs));
    nl->fmap = m;
  }
  PetscCall(DemHistoryMapInit(&pm, 1));
  for (PetscInt k = 0; k < nl->npairs; k++) {
    PetscReal pk = (PetscReal)k;
    PetscCall(DemHistoryMapPut(&pm, bs->gid[nl->a[k]], bs->gid[nl->b[k]], 0, &pk));
  }
  for (PetscInt i = 0; i < all->cap; i++) {
    const PetscReal *v = all->val + (hs + 1) * i, *pi;
    PetscInt         slot;
    if (!all->used[i] || !(pi = DemHistoryMapGet(&pm, all->ka[i], all->kb[i], 0))) continue;
    PetscCall(DemHistoryMapPut((DemHistoryMap *)nl->fmap, all->ka[i], all->kb[i], all->kf[i], v));
    if (v[hs] == 1) PetscCall(DemNeighbourFeatureSlot_Private(sim, (PetscInt)pi[0], all->kf[i], PETSC_TRUE, &slot, NULL));
  }
  PetscCall(DemHistoryMapFree(&pm));
  PetscFunctionReturn(PETSC_SUCCESS);
}
