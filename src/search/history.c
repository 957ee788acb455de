/*
  history.c - contact history keyed by (gid_a, gid_b, feature): an open-addressing hash map
  with linear probing. The neighbour list keeps the history of each pair beside the pair
  (no lookup per pair per step); at a rebuild the touching pairs' history goes through this
  map, so it survives rebuilds, reordering and (later) migration between ranks.
*/
#include "demimpl.h"

static inline uint64_t DemHashKey(int64_t a, int64_t b, int64_t f)
{
  uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)b + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= (uint64_t)f + 0x8CB92BA72F3D8DD7ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return h;
}

PetscErrorCode DemHistoryMapInit(DemHistoryMap *m, PetscInt histsize)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(m, sizeof(*m)));
  m->histsize = histsize;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemHistoryMapFree(DemHistoryMap *m)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(m->ka));
  PetscCall(PetscFree(m->kb));
  PetscCall(PetscFree(m->kf));
  PetscCall(PetscFree(m->used));
  PetscCall(PetscFree(m->val));
  m->cap = m->count = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemHistoryMapClear(DemHistoryMap *m)
{
  PetscFunctionBegin;
  if (m->cap) PetscCall(PetscMemzero(m->used, (size_t)m->cap));
  m->count = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemHistoryMapRehash(DemHistoryMap *m, PetscInt cap)
{
  DemHistoryMap old = *m;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(cap, &m->ka));
  PetscCall(PetscCalloc1(cap, &m->kb));
  PetscCall(PetscCalloc1(cap, &m->kf));
  PetscCall(PetscCalloc1(cap, &m->used));
  PetscCall(PetscCalloc1(cap * PetscMax(m->histsize, 1), &m->val));
  m->cap   = cap;
  m->count = 0;
  for (PetscInt i = 0; i < old.cap; i++)
    if (old.used[i]) PetscCall(DemHistoryMapPut(m, old.ka[i], old.kb[i], old.kf[i], old.val + i * old.histsize));
  PetscCall(DemHistoryMapFree(&old));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemHistoryMapPut(DemHistoryMap *m, int64_t a, int64_t b, int64_t f, const PetscReal *val)
{
  PetscInt i;

  PetscFunctionBegin;
  if (2 * (m->count + 1) > m->cap) PetscCall(DemHistoryMapRehash(m, PetscMax(64, 2 * m->cap)));
  i = (PetscInt)(DemHashKey(a, b, f) & (uint64_t)(m->cap - 1));
  while (m->used[i] && !(m->ka[i] == a && m->kb[i] == b && m->kf[i] == f)) i = (i + 1) & (m->cap - 1);
  if (!m->used[i]) {
    m->used[i] = 1;
    m->ka[i]   = a;
    m->kb[i]   = b;
    m->kf[i]   = f;
    m->count++;
  }
  PetscCall(PetscArraycpy(m->val + i * m->histsize, val, m->histsize));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscReal *DemHistoryMapGet(DemHistoryMap *m, int64_t a, int64_t b, int64_t f)
{
  PetscInt i;

  if (!m->count) return NULL;
  i = (PetscInt)(DemHashKey(a, b, f) & (uint64_t)(m->cap - 1));
  while (m->used[i]) {
    if (m->ka[i] == a && m->kb[i] == b && m->kf[i] == f) return m->val + i * m->histsize;
    i = (i + 1) & (m->cap - 1);
  }
  return NULL;
}
