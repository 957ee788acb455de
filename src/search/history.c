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

typedef struct {
  int64_t  a, b, f;
  PetscInt i;
} DemHistoryKey;

static int DemHistoryKeyCompare(const void *x, const void *y)
{
  const DemHistoryKey *p = (const DemHistoryKey *)x, *q = (const DemHistoryKey *)y;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  if (p->f != q->f) return p->f < q->f ? -1 : 1;
  return 0;
}

/*
  DemHistoryMapCheckpoint_Private - the one serialization of a history map (checkpoint.c's
  feature map through featslot.c, cd.c's warm starts): writes (write) or reads back the entries
  through DemCheckpointIO: int64 count, then per entry gid_a, gid_b, feature (int64) and
  histsize reals, in the order of the keys (not of the table, whose layout depends on the order
  of insertion: a restarted run then writes the same bytes as the uninterrupted one). Reading
  clears the map first and refuses a negative count or a value that is not finite; the map
  read back holds the same entries. Not collective.
*/
PetscErrorCode DemHistoryMapCheckpoint_Private(DemHistoryMap *m, FILE *fp, PetscBool write, const char what[])
{
  int64_t    cnt = m->count;
  PetscReal *v;

  PetscFunctionBegin;
  PetscCall(DemCheckpointIO(fp, write, &cnt, sizeof(cnt), what));
  if (write) {
    DemHistoryKey *k;
    PetscInt       n = 0;
    PetscErrorCode ierr = PETSC_SUCCESS;
    PetscCall(PetscMalloc1(m->count + 1, &k));
    for (PetscInt i = 0; i < m->cap; i++)
      if (m->used[i]) k[n].a = m->ka[i], k[n].b = m->kb[i], k[n].f = m->kf[i], k[n].i = i, n++;
    qsort(k, (size_t)n, sizeof(*k), DemHistoryKeyCompare);
    for (PetscInt j = 0; !ierr && j < n; j++) {
      ierr = DemCheckpointIO(fp, write, &k[j].a, sizeof(int64_t), what);
      if (!ierr) ierr = DemCheckpointIO(fp, write, &k[j].b, sizeof(int64_t), what);
      if (!ierr) ierr = DemCheckpointIO(fp, write, &k[j].f, sizeof(int64_t), what);
      if (!ierr) ierr = DemCheckpointIO(fp, write, m->val + k[j].i * m->histsize, (size_t)m->histsize * sizeof(PetscReal), what);
    }
    PetscCall(PetscFree(k));
    PetscCall(ierr);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(cnt >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %s: %lld entries", what, (long long)cnt);
  PetscCall(DemHistoryMapClear(m));
  PetscCall(PetscMalloc1(PetscMax(m->histsize, 1), &v));
  for (int64_t k = 0; k < cnt; k++) {
    int64_t        ka, kb, kf;
    PetscBool      finite = PETSC_TRUE;
    PetscErrorCode ierr;
    ierr = DemCheckpointIO(fp, write, &ka, sizeof(ka), what);
    if (!ierr) ierr = DemCheckpointIO(fp, write, &kb, sizeof(kb), what);
    if (!ierr) ierr = DemCheckpointIO(fp, write, &kf, sizeof(kf), what);
    if (!ierr) ierr = DemCheckpointIO(fp, write, v, (size_t)m->histsize * sizeof(PetscReal), what);
    for (PetscInt j = 0; !ierr && j < m->histsize; j++) finite = finite && isfinite(v[j]);
    if (ierr || !finite) PetscCall(PetscFree(v));
    PetscCall(ierr);
    PetscCheck(finite, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %s: entry %lld holds a value that is not finite", what, (long long)k);
    PetscCall(DemHistoryMapPut(m, ka, kb, kf, v));
  }
  PetscCall(PetscFree(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}
