/*
  checkpoint.c - checkpoints and restart (DESIGN.md "Output": output.checkpoint_every writes
  DIR/checkpoints/step-<step>.ckpt; `mmdem run FILE --restart CHECKPOINT` continues from one).

  A checkpoint holds everything the time loop reads, so that a restarted run continues to the
  bitwise-same result as the uninterrupted one (serial runs, and MPI runs, whose ranks hold
  every body today):
    - the body store, in its order (global-id order unless the run reorders its store:
      search.sort_every, src/search/sort.c; a restart puts this run's store in that order, and
      on several ranks back in id order before the distribution):
      gid, x, v, w, q, f, t (the forces at the current state: velocity Verlet's
      first half kick reads them), flags (walls removed), the plugins' per-body fields; the
      static columns (m, I, radius, shape, material) only to check them against the run
      description (a changed bodies file is refused);
    - time, step, dt (adaptive integrators change it), the shortest collision time, the energy
      counters (dissipated, contact energy, last dissipation power), contacts, iterations,
      rejected steps, and the dissipative forces of the last evaluation (fd, td);
    - the neighbour list as it is: pairs, periodic images, groups, the contact history beside
      each pair, the positions of the last build (x0) and the build count. Rebuilding the list
      on restart would move the rebuild steps and change results in the last bits; keeping it
      keeps them. The (gid_a, gid_b, feature) history map of the pairs is not saved: every
      rebuild clears it and refills it from the list's history before reading it. The feature
      slots (contacts with a feature key: mesh walls, polyhedra; featslot.c) are: their pairs,
      keys and history rows, and the feature map, whose values slots made later read;
    - the output counters: the VTK frames written so far (their times), the next frame's time,
      and whether the step has a thermo row;
    - the integrator's private state, through its optional ops->checkpoint (demimpl.h);
    - the run description, canonical: one "path = value" line per scalar, after --set, without
      the sections run:, output: and compare:. A restart with another description is refused,
      naming the first value that differs. run: and output: may change: a run can be extended
      (run.end_time) and its output redirected or thinned.
  Not held: private state of plugins (contact laws, fields) beyond per-body fields.

  File layout (version 2; numbers in the byte order of the machine that wrote it, recorded):
    header, 48 bytes: "MMDEMCKP", u32 version, u32 header size (48), u64 payload size,
      u32 CRC-32 of the payload, u32 0x01020304 (byte order), u32 sizeof(PetscReal),
      u32 sizeof(PetscInt), u32 reserved, u32 CRC-32 of the 44 bytes before
    payload: sections META CONF SIMS BODY DISS NLST OUTP INTG, each a 4-character tag, u32 0,
      u64 length, then its data; integers as int64, reals as doubles. NLST ends with the
      feature slots (featslot.c, DemNeighbourFeatureCheckpoint_Private): int64 length, then
      their bytes. Version 1 files (before the feature slots) are refused.
  Files are written to NAME.tmp, synced to disk and renamed: a reader sees the old file or the
  new one, never half of one. A file that is not a checkpoint, of another version, truncated,
  corrupted (checksums) or inconsistent is refused with a message naming the file and the
  fault, and nothing of the run changes: a restart first checks the whole file, then applies it.
*/
#include "guard.h"
#include "dem_tools.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libgen.h>

#define DEM_CKPT_MAGIC   "MMDEMCKP"
#define DEM_CKPT_VERSION 3u /* 2: the feature slots at the end of NLST; 3: SQWS, the superquadric warm starts (version 2 files are read without them) */
#define DEM_CKPT_HEADER  48u
#define DEM_CKPT_ENDIAN  0x01020304u
/* the canonical run description: at most this many values (YAML aliases can multiply them) */
#define DEM_CONF_MAXITEMS 10000000L

/* ---- CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), tables built once ----
   Eight bytes per iteration with eight tables ("slicing by 8"): the same checksum as the
   byte-at-a-time table loop, about five times faster (the in-memory snapshot of the guard is
   serialised at every thermo step). */
static uint32_t dem_crc_table[8][256];
static int      dem_crc_ready = 0;

/* the CRC register c advanced over n bytes (no initial or final inversion: DemCrc32) */
static uint32_t DemCrc32Update(uint32_t c, const unsigned char *p, size_t n)
{
  if (!dem_crc_ready) {
    for (uint32_t k = 0; k < 256; k++) {
      uint32_t r = k;
      for (int j = 0; j < 8; j++) r = (r & 1u) ? 0xEDB88320u ^ (r >> 1) : r >> 1;
      dem_crc_table[0][k] = r;
    }
    for (uint32_t k = 0; k < 256; k++)
      for (int s = 1; s < 8; s++) dem_crc_table[s][k] = (dem_crc_table[s - 1][k] >> 8) ^ dem_crc_table[0][dem_crc_table[s - 1][k] & 0xFFu];
    dem_crc_ready = 1;
  }
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    c = dem_crc_table[7][lo & 0xFFu] ^ dem_crc_table[6][(lo >> 8) & 0xFFu] ^ dem_crc_table[5][(lo >> 16) & 0xFFu] ^ dem_crc_table[4][lo >> 24] ^ dem_crc_table[3][p[4]] ^ dem_crc_table[2][p[5]] ^ dem_crc_table[1][p[6]] ^ dem_crc_table[0][p[7]];
  }
  for (; n > 0; n--, p++) c = dem_crc_table[0][(c ^ *p) & 0xFFu] ^ (c >> 8);
  return c;
}

static uint32_t DemCrc32(const unsigned char *p, size_t n)
{
  return DemCrc32Update(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

/* ---- a growable byte buffer ---- */
PetscErrorCode DemBufPut_Private(DemBuf *b, const void *d, size_t n)
{
  PetscFunctionBegin;
  if (b->count) {
    b->n += n;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (b->fp) { /* streaming: the payload's CRC as it goes (the header is the first put) */
    if (n && !b->ioerr && fwrite(d, 1, n, b->fp) != n) b->ioerr = errno ? errno : EIO;
    if (b->n >= DEM_CKPT_HEADER) b->crc = DemCrc32Update(b->crc, (const unsigned char *)d, n);
    b->n += n;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (b->n + n > b->cap) {
    size_t         cap = PetscMax(PetscMax((size_t)4096, 2 * b->cap), b->n + n);
    unsigned char *p;
    PetscCall(PetscMalloc1(cap, &p));
    if (b->n) PetscCall(PetscMemcpy(p, b->p, b->n));
    PetscCall(PetscFree(b->p));
    b->p   = p;
    b->cap = cap;
  }
  if (n) PetscCall(PetscMemcpy(b->p + b->n, d, n));
  b->n += n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemBufFree_Private(DemBuf *b)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(b->p));
  PetscCall(PetscFree(b->lens));
  b->n = b->cap = b->nlens = b->caplens = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemBufI64(DemBuf *b, int64_t v)
{
  return DemBufPut_Private(b, &v, sizeof(v));
}

static PetscErrorCode DemBufF64(DemBuf *b, double v)
{
  return DemBufPut_Private(b, &v, sizeof(v));
}

static PetscErrorCode DemBufReals(DemBuf *b, const PetscReal *v, size_t n)
{
  return DemBufPut_Private(b, v, n * sizeof(PetscReal));
}

/* n integers, each written as an int64, in chunks of 512: one put (one fwrite and one CRC call
   when streaming) per chunk instead of per value; the same bytes */
#define DEM_BUF_INTS(NAME, T) \
  static PetscErrorCode NAME(DemBuf *b, const T *v, size_t n) \
  { \
    int64_t c[512]; \
    PetscFunctionBegin; \
    for (size_t k = 0; k < n; k += 512) { \
      const size_t m = PetscMin(n - k, (size_t)512); \
      for (size_t j = 0; j < m; j++) c[j] = (int64_t)v[k + j]; \
      PetscCall(DemBufPut_Private(b, c, m * sizeof(int64_t))); \
    } \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
DEM_BUF_INTS(DemBufInts, PetscInt)
DEM_BUF_INTS(DemBufIntsInt, int)
DEM_BUF_INTS(DemBufIntsUnsigned, unsigned)

static PetscErrorCode DemBufString(DemBuf *b, const char *s)
{
  size_t n = s ? strlen(s) : 0;

  PetscFunctionBegin;
  PetscCall(DemBufI64(b, (int64_t)n));
  PetscCall(DemBufPut_Private(b, s, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a section: tag, u32 0, u64 length (patched by DemBufEnd in memory; counted by the sizing
   pass and written at once when streaming). Sections follow each other, never nest. */
static PetscErrorCode DemBufBegin(DemBuf *b, const char tag[4], size_t *mark)
{
  uint32_t z = 0;
  uint64_t l = 0;

  PetscFunctionBegin;
  PetscCall(DemBufPut_Private(b, tag, 4));
  PetscCall(DemBufPut_Private(b, &z, 4));
  *mark = b->n;
  if (b->count) {
    if (b->nlens == b->caplens) {
      size_t *nl;
      PetscCall(PetscMalloc1(2 * b->caplens + 8, &nl));
      if (b->nlens) PetscCall(PetscArraycpy(nl, b->lens, b->nlens));
      PetscCall(PetscFree(b->lens));
      b->lens    = nl;
      b->caplens = 2 * b->caplens + 8;
    }
    b->lens[b->nlens++] = 0;
  }
  if (b->fp) {
    PetscCheck(b->ilen < b->nlens, PETSC_COMM_SELF, PETSC_ERR_PLIB, "checkpoint: more sections streamed than counted");
    l = (uint64_t)b->lens[b->ilen++];
  }
  PetscCall(DemBufPut_Private(b, &l, 8));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void DemBufEnd(DemBuf *b, size_t mark)
{
  uint64_t l = (uint64_t)(b->n - mark - 8);
  if (b->count) {
    b->lens[b->nlens - 1] = (size_t)l;
    return;
  }
  if (b->fp) return;
  memcpy(b->p + mark, &l, 8);
}

/* ---- reading: a cursor over one section, every read bounds-checked ---- */
typedef struct {
  const unsigned char *p;
  size_t               n, pos;
  const char          *file;
  char                 sec[5];
} DemRd;

#define DEM_CKPT_ERR(r, ...) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, __VA_ARGS__)

static PetscErrorCode DemRdGet(DemRd *r, void *d, size_t n, const char what[])
{
  PetscFunctionBegin;
  if (n > r->n - r->pos) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: section %s ends before %s (%zu bytes needed, %zu left)", r->file, r->sec, what, n, r->n - r->pos);
  if (d && n) memcpy(d, r->p + r->pos, n);
  r->pos += n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemRdI64(DemRd *r, int64_t *v, const char what[])
{
  return DemRdGet(r, v, sizeof(*v), what);
}

static PetscErrorCode DemRdF64(DemRd *r, double *v, const char what[])
{
  return DemRdGet(r, v, sizeof(*v), what);
}

/* a count of items of `size` bytes each that must fit in what is left of the section */
static PetscErrorCode DemRdCount(DemRd *r, int64_t *cnt, size_t size, int64_t max, const char what[])
{
  PetscFunctionBegin;
  PetscCall(DemRdI64(r, cnt, what));
  if (*cnt < 0 || *cnt > max || (size && (uint64_t)*cnt > (r->n - r->pos) / size)) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: section %s: %s = %lld is out of range", r->file, r->sec, what, (long long)*cnt);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* n reals, each finite (a NaN that passed the checksums would otherwise reach the search) */
static PetscErrorCode DemRdReals(DemRd *r, PetscReal *d, size_t n, const char what[])
{
  const unsigned char *p = r->p + r->pos;

  PetscFunctionBegin;
  PetscCall(DemRdGet(r, d, n * sizeof(PetscReal), what));
  for (size_t k = 0; k < n; k++) {
    PetscReal x;
    memcpy(&x, p + k * sizeof(PetscReal), sizeof(x));
    if (!isfinite(x)) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: section %s: %s[%zu] is not finite", r->file, r->sec, what, k);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* int64 values into PetscInt, each in [lo, hi) */
static PetscErrorCode DemRdInts(DemRd *r, PetscInt *d, size_t n, int64_t lo, int64_t hi, const char what[])
{
  PetscFunctionBegin;
  if (n > (r->n - r->pos) / 8) PetscCall(DemRdGet(r, NULL, 8 * n, what));
  for (size_t k = 0; k < n; k++) {
    int64_t v;
    PetscCall(DemRdI64(r, &v, what));
    if (v < lo || v >= hi) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: section %s: %s[%zu] = %lld is outside [%lld, %lld)", r->file, r->sec, what, k, (long long)v, (long long)lo, (long long)hi);
    if (d) d[k] = (PetscInt)v;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a string into buf (truncated to len - 1) */
static PetscErrorCode DemRdString(DemRd *r, char *buf, size_t len, const char what[])
{
  int64_t n;

  PetscFunctionBegin;
  PetscCall(DemRdCount(r, &n, 1, INT64_MAX, what));
  if (buf && len) {
    size_t m = PetscMin((size_t)n, len - 1);
    memcpy(buf, r->p + r->pos, m);
    buf[m] = 0;
  }
  r->pos += (size_t)n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the next section of the payload, which must be `tag` */
static PetscErrorCode DemRdSection(DemRd *all, const char tag[4], DemRd *sec)
{
  char     t[5] = {0};
  uint32_t z;
  uint64_t l;

  PetscFunctionBegin;
  PetscCall(DemRdGet(all, t, 4, tag));
  PetscCall(DemRdGet(all, &z, 4, tag));
  PetscCall(DemRdGet(all, &l, 8, tag));
  if (memcmp(t, tag, 4)) {
    for (int k = 0; k < 4; k++)
      if (t[k] < 32 || t[k] > 126) t[k] = '?';
    DEM_CKPT_ERR(all, "checkpoint '%s' is inconsistent: section %.4s expected, found '%s'", all->file, tag, t);
  }
  if (l > all->n - all->pos) DEM_CKPT_ERR(all, "checkpoint '%s' is inconsistent: section %.4s claims %llu bytes, %zu are left", all->file, tag, (unsigned long long)l, all->n - all->pos);
  sec->p    = all->p + all->pos;
  sec->n    = (size_t)l;
  sec->pos  = 0;
  sec->file = all->file;
  memcpy(sec->sec, tag, 4);
  sec->sec[4] = 0;
  all->pos += (size_t)l;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemRdDone(DemRd *r)
{
  PetscFunctionBegin;
  if (r->pos != r->n) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: section %s has %zu bytes more than it describes", r->file, r->sec, r->n - r->pos);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- the canonical run description ---- */
typedef struct {
  DemBuf *b;
  long    items;
  char    path[4096];
} DemConfWalk;

static PetscErrorCode DemConfLine(DemConfWalk *w, const char *value)
{
  PetscFunctionBegin;
  PetscCheck(++w->items <= DEM_CONF_MAXITEMS, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "the run description expands to more than %ld values (YAML aliases?): too large to record in a checkpoint", (long)DEM_CONF_MAXITEMS);
  PetscCall(DemBufPut_Private(w->b, w->path, strlen(w->path)));
  PetscCall(DemBufPut_Private(w->b, " = ", 3));
  for (const char *c = value; *c; c++) {
    if (*c == '\n') PetscCall(DemBufPut_Private(w->b, "\\n", 2));
    else if (*c == '\\') PetscCall(DemBufPut_Private(w->b, "\\\\", 2));
    else PetscCall(DemBufPut_Private(w->b, c, 1));
  }
  PetscCall(DemBufPut_Private(w->b, "\n", 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemConfNode(DemConfWalk *w, DemNode node, int depth)
{
  size_t   len = strlen(w->path);
  PetscInt n;

  PetscFunctionBegin;
  switch (DemNodeGetType(node)) {
  case DEM_NODE_SCALAR:
    PetscCall(DemConfLine(w, DemNodeScalar(node)));
    break;
  case DEM_NODE_SEQ:
    PetscCall(DemNodeSeqLength(node, &n));
    if (!n) PetscCall(DemConfLine(w, "[]"));
    for (PetscInt i = 0; i < n; i++) {
      DemNode it;
      PetscCall(DemNodeSeqItem(node, i, &it));
      snprintf(w->path + len, sizeof(w->path) - len, "[%" PetscInt_FMT "]", i);
      PetscCall(DemConfNode(w, it, depth + 1));
    }
    break;
  case DEM_NODE_MAP:
    PetscCall(DemNodeMapLength(node, &n));
    if (!n) PetscCall(DemConfLine(w, "{}"));
    for (PetscInt i = 0; i < n; i++) {
      const char *key;
      DemNode     val;
      PetscCall(DemNodeMapItem(node, i, &key, &val));
      if (depth == 0 && (!strcmp(key, "run") || !strcmp(key, "output") || !strcmp(key, "compare") || !strcmp(key, "integrator"))) continue;
      snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len ? "." : "", key);
      PetscCall(DemConfNode(w, val, depth + 1));
    }
    break;
  default:
    PetscCall(DemConfLine(w, "~"));
  }
  w->path[len] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the canonical description of sim->root into b, computed once per run */
static PetscErrorCode DemConfText(DemSim sim, DemBuf **b, DemBuf **ib)
{
  DemGuard   *g;
  DemConfWalk w;

  PetscFunctionBegin;
  PetscCall(DemGuardGet_Private(sim, &g));
  if (!g->hasconf) {
    DemNode in = NULL;
    PetscCall(PetscMemzero(&w, sizeof(w)));
    w.b = &g->conf;
    if (sim->root) PetscCall(DemConfNode(&w, sim->root, 0));
    if (sim->root) PetscCall(DemNodeGet(sim->root, "integrator", &in));
    w.b = &g->iconf;
    PetscCall(PetscStrncpy(w.path, "integrator", sizeof(w.path)));
    if (in) PetscCall(DemConfNode(&w, in, 1));
    g->hasconf = PETSC_TRUE;
  }
  *b  = &g->conf;
  *ib = &g->iconf;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the first line that differs between two canonical descriptions, for the message */
static void DemConfFirstDiff(const unsigned char *a, size_t na, const unsigned char *b, size_t nb, char *msg, size_t len)
{
  size_t i = 0, la = 0, lb = 0, ea, eb;
  while (i < na && i < nb && a[i] == b[i]) {
    if (a[i] == '\n') la = lb = i + 1;
    i++;
  }
  for (ea = la; ea < na && a[ea] != '\n'; ea++) { }
  for (eb = lb; eb < nb && b[eb] != '\n'; eb++) { }
  if (la == na) snprintf(msg, len, "the run description now has '%.*s', which the checkpoint's has not", (int)PetscMin(eb - lb, (size_t)300), (const char *)b + lb);
  else if (lb == nb) snprintf(msg, len, "the checkpoint's run description has '%.*s', which the current one has not", (int)PetscMin(ea - la, (size_t)300), (const char *)a + la);
  else snprintf(msg, len, "the checkpoint has '%.*s', the run description now '%.*s'", (int)PetscMin(ea - la, (size_t)300), (const char *)a + la, (int)PetscMin(eb - lb, (size_t)300), (const char *)b + lb);
}

/* ---- integrators ---- */
PetscErrorCode DemCheckpointIO(FILE *fp, PetscBool write, void *data, size_t size, const char what[])
{
  PetscFunctionBegin;
  if (!size) PetscFunctionReturn(PETSC_SUCCESS);
  if (write) PetscCheck(fwrite(data, 1, size, fp) == size, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "checkpoint: cannot write the %s", what);
  else PetscCheck(fread(data, 1, size, fp) == size, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: the saved state ends before the %s (%zu bytes)", what, size);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorCheckpointNone(DemIntegrator ig, FILE *fp, PetscBool write)
{
  PetscFunctionBegin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- writing ---- */
/* the per-body fields a checkpoint holds: all but an integrator's transient copies, whose
   names start with '~' (newmark_mpi.h) */
static inline PetscBool DemCheckpointFieldKept(const DemBodyStore *bs, PetscInt k)
{
  return bs->extra_name[k][0] != '~' ? PETSC_TRUE : PETSC_FALSE;
}
static PetscInt DemCheckpointFieldCount(const DemBodyStore *bs)
{
  PetscInt nx = 0;
  for (PetscInt k = 0; k < bs->nextra; k++) nx += DemCheckpointFieldKept(bs, k);
  return nx;
}

/* the bytes a writer puts into a stream, into b as an int64 count and the bytes (a part of a
   section that another file formats: the feature slots, an integrator's state, a superquadric
   shape's solver state); no writer: a count of 0 */
typedef PetscErrorCode (*DemStreamWriter)(DemSim, void *, FILE *);
static PetscErrorCode DemBufStream(DemBuf *b, DemStreamWriter fn, DemSim sim, void *ctx, const char what[])
{
  char          *sb = NULL;
  size_t         sl = 0;
  FILE          *fp;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (fn) {
    fp = open_memstream(&sb, &sl);
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_MEM, "checkpoint: cannot open a memory stream: %s", strerror(errno));
    ierr = (*fn)(sim, ctx, fp);
    if (fclose(fp) && !ierr) ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_MEM, PETSC_ERROR_INITIAL, "checkpoint: %s: %s", what, strerror(errno));
    if (ierr) free(sb);
    PetscCall(ierr);
  }
  PetscCall(DemBufI64(b, (int64_t)sl));
  PetscCall(DemBufPut_Private(b, sb, sl));
  free(sb);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCheckpointFeatureWriter(DemSim sim, void *ctx, FILE *fp)
{
  return DemNeighbourFeatureCheckpoint_Private(sim, fp, PETSC_TRUE, PETSC_FALSE, sim->nl.npairs, 0);
}

static PetscErrorCode DemCheckpointIntegratorWriter(DemSim sim, void *ctx, FILE *fp)
{
  return (*sim->integ->ops->checkpoint)(sim->integ, fp, PETSC_TRUE);
}

static PetscErrorCode DemCheckpointSuperquadricWriter(DemSim sim, void *ctx, FILE *fp)
{
  return DemShapeSuperquadricCheckpoint_Private((DemShape)ctx, sim, fp, PETSC_TRUE);
}

static PetscErrorCode DemCheckpointSerializeInto(DemSim sim, DemBuf *b)
{
  DemBodyStore     *bs = &sim->bodies;
  DemNeighbourList *nl = &sim->nl;
  const PetscInt    n = bs->n, nb = bs->n + bs->nghost, hs = sim->histsize;
  unsigned char     head[DEM_CKPT_HEADER];
  size_t            mark;
  DemBuf           *conf, *iconf;
  uint32_t          u;
  uint64_t          l;

  PetscFunctionBegin;
  PetscCheck(bs->nghost == 0, sim->comm, PETSC_ERR_SUP, "checkpoints of runs with ghost bodies are not supported");
  PetscCall(DemConfText(sim, &conf, &iconf));
  b->n = 0;
  PetscCall(PetscMemzero(head, sizeof(head)));
  PetscCall(DemBufPut_Private(b, head, sizeof(head)));
  /* META */
  PetscCall(DemBufBegin(b, "META", &mark));
  PetscCall(DemBufI64(b, DEM_VERSION_MAJOR));
  PetscCall(DemBufI64(b, DEM_VERSION_MINOR));
  PetscCall(DemBufI64(b, sim->size));
  PetscCall(DemBufString(b, sim->integ->type_name));
  PetscCall(DemBufI64(b, sim->step));
  PetscCall(DemBufF64(b, sim->time));
  PetscCall(DemBufI64(b, n));
  PetscCall(DemBufString(b, sim->file));
  DemBufEnd(b, mark);
  /* CONF */
  PetscCall(DemBufBegin(b, "CONF", &mark));
  PetscCall(DemBufI64(b, (int64_t)conf->n));
  PetscCall(DemBufPut_Private(b, conf->p, conf->n));
  PetscCall(DemBufI64(b, (int64_t)iconf->n));
  PetscCall(DemBufPut_Private(b, iconf->p, iconf->n));
  DemBufEnd(b, mark);
  /* SIMS */
  PetscCall(DemBufBegin(b, "SIMS", &mark));
  PetscCall(DemBufF64(b, sim->time));
  PetscCall(DemBufF64(b, sim->dt));
  PetscCall(DemBufF64(b, sim->tc_min));
  PetscCall(DemBufF64(b, sim->dissipated));
  PetscCall(DemBufF64(b, sim->pe_contact));
  PetscCall(DemBufF64(b, sim->dissip_rate_prev));
  PetscCall(DemBufI64(b, sim->step));
  PetscCall(DemBufI64(b, sim->ncontacts));
  PetscCall(DemBufI64(b, sim->iterations));
  PetscCall(DemBufI64(b, sim->rejected));
  DemBufEnd(b, mark);
  /* BODY */
  PetscCall(DemBufBegin(b, "BODY", &mark));
  PetscCall(DemBufI64(b, n));
  PetscCall(DemBufPut_Private(b, bs->gid, (size_t)n * sizeof(int64_t))); /* int64 already */
  PetscCall(DemBufReals(b, bs->x, 3 * (size_t)n));
  PetscCall(DemBufReals(b, bs->v, 3 * (size_t)n));
  PetscCall(DemBufReals(b, bs->w, 3 * (size_t)n));
  PetscCall(DemBufReals(b, bs->q, 4 * (size_t)n));
  PetscCall(DemBufReals(b, bs->f, 3 * (size_t)n));
  PetscCall(DemBufReals(b, bs->t, 3 * (size_t)n));
  PetscCall(DemBufIntsUnsigned(b, bs->flags, (size_t)n));
  PetscCall(DemBufReals(b, bs->m, (size_t)n));
  PetscCall(DemBufReals(b, bs->I, 3 * (size_t)n));
  PetscCall(DemBufReals(b, bs->radius, (size_t)n));
  PetscCall(DemBufIntsInt(b, bs->shape, (size_t)n));
  PetscCall(DemBufIntsInt(b, bs->material, (size_t)n));
  PetscCall(DemBufI64(b, DemCheckpointFieldCount(bs)));
  for (PetscInt k = 0; k < bs->nextra; k++) {
    if (!DemCheckpointFieldKept(bs, k)) continue;
    PetscCall(DemBufString(b, bs->extra_name[k]));
    PetscCall(DemBufI64(b, bs->extra_ncomp[k]));
    PetscCall(DemBufReals(b, bs->extra[k], (size_t)bs->extra_ncomp[k] * n));
  }
  DemBufEnd(b, mark);
  /* DISS */
  PetscCall(DemBufBegin(b, "DISS", &mark));
  PetscCall(DemBufI64(b, sim->fd && sim->fdcap >= 3 * nb ? 1 : 0));
  if (sim->fd && sim->fdcap >= 3 * nb) {
    PetscCall(DemBufReals(b, sim->fd, 3 * (size_t)n));
    PetscCall(DemBufReals(b, sim->td, 3 * (size_t)n));
  }
  DemBufEnd(b, mark);
  /* NLST */
  PetscCall(DemBufBegin(b, "NLST", &mark));
  PetscCall(DemBufI64(b, nl->npairs));
  PetscCall(DemBufI64(b, hs));
  PetscCall(DemBufInts(b, nl->a, (size_t)nl->npairs));
  PetscCall(DemBufInts(b, nl->b, (size_t)nl->npairs));
  PetscCall(DemBufInts(b, nl->shiftidx, (size_t)nl->npairs));
  if (hs > 0) PetscCall(DemBufReals(b, nl->history, (size_t)hs * nl->npairs));
  /* the shift vectors: there whenever the list had its arrays (the format's flag), made from
     the image indices by chunks (neighbour.c), the same bytes without a whole list's worth */
  PetscCall(DemBufI64(b, nl->a ? 1 : 0));
  if (nl->a) {
    PetscReal shift[3 * 512];
    for (PetscInt k = 0; k < nl->npairs; k += 512) {
      const PetscInt k1 = PetscMin(k + 512, nl->npairs);
      PetscCall(DemNeighbourShiftsFill_Private(sim, k, k1, shift));
      PetscCall(DemBufReals(b, shift, 3 * (size_t)(k1 - k)));
    }
  }
  PetscCall(DemBufI64(b, nl->ngroups));
  for (PetscInt g = 0; g < nl->ngroups; g++) PetscCall(DemBufI64(b, nl->gka[g]));
  for (PetscInt g = 0; g < nl->ngroups; g++) PetscCall(DemBufI64(b, nl->gkb[g]));
  PetscCall(DemBufInts(b, nl->gstart, (size_t)nl->ngroups + 1));
  PetscCall(DemBufI64(b, nl->x0 && nl->x0cap >= 3 * nb ? 1 : 0));
  if (nl->x0 && nl->x0cap >= 3 * nb) PetscCall(DemBufReals(b, nl->x0, 3 * (size_t)nb));
  PetscCall(DemBufI64(b, nl->nbuilds));
  PetscCall(DemBufStream(b, DemCheckpointFeatureWriter, sim, NULL, "the feature slots")); /* and the feature map (featslot.c) */
  DemBufEnd(b, mark);
  /* OUTP */
  PetscCall(DemBufBegin(b, "OUTP", &mark));
  {
    PetscInt         nvtk = 0;
    const PetscReal *vt   = NULL;
    PetscReal        next = 0;
    if (sim->outstate) PetscCall(DemOutputGetSeries_Private(sim, &nvtk, &vt, &next));
    PetscCall(DemBufI64(b, sim->out.thermo_every));
    PetscCall(DemBufI64(b, sim->step % sim->out.thermo_every == 0 ? 1 : 0));
    PetscCall(DemBufI64(b, nvtk));
    if (nvtk) PetscCall(DemBufReals(b, vt, (size_t)nvtk));
    PetscCall(DemBufF64(b, next));
  }
  DemBufEnd(b, mark);
  /* INTG */
  PetscCall(DemBufBegin(b, "INTG", &mark));
  PetscCall(DemBufString(b, sim->integ->type_name));
  PetscCall(DemBufI64(b, sim->integ->ops->checkpoint ? 1 : 0));
  PetscCall(DemBufStream(b, sim->integ->ops->checkpoint ? DemCheckpointIntegratorWriter : NULL, sim, NULL, "the integrator's state"));
  DemBufEnd(b, mark);
  /* SQWS: per superquadric shape its contact solver's warm starts, prefilter and counters
     (superquadric.c, DemShapeSuperquadricCheckpoint_Private): shape index, byte count, bytes;
     -1 ends the list. A resting contact's solve starts from its warm start, so without them a
     restart is not bitwise the uninterrupted run. A decomposed run writes every rank's records,
     gathered by global ids in this layout (decomp.c DemDecompSerialize_Private) */
  PetscCall(DemBufBegin(b, "SQWS", &mark));
  for (PetscInt k = 0; k < sim->nshape; k++) {
    if (!DemShapeSuperquadricWarmReals_Private(sim->shapes[k])) continue;
    PetscCall(DemBufI64(b, k));
    PetscCall(DemBufStream(b, DemCheckpointSuperquadricWriter, sim, sim->shapes[k], "the superquadric warm starts"));
  }
  PetscCall(DemBufI64(b, -1));
  DemBufEnd(b, mark);
  if (b->count) PetscFunctionReturn(PETSC_SUCCESS); /* the sizing pass: b->n is the size */
  /* header */
  memcpy(head, DEM_CKPT_MAGIC, 8);
  u = DEM_CKPT_VERSION, memcpy(head + 8, &u, 4);
  u = DEM_CKPT_HEADER, memcpy(head + 12, &u, 4);
  l = (uint64_t)(b->n - DEM_CKPT_HEADER), memcpy(head + 16, &l, 8);
  u = b->fp ? b->crc ^ 0xFFFFFFFFu : DemCrc32(b->p + DEM_CKPT_HEADER, b->n - DEM_CKPT_HEADER), memcpy(head + 24, &u, 4);
  u = DEM_CKPT_ENDIAN, memcpy(head + 28, &u, 4);
  u = (uint32_t)sizeof(PetscReal), memcpy(head + 32, &u, 4);
  u = (uint32_t)sizeof(PetscInt), memcpy(head + 36, &u, 4);
  u = 0, memcpy(head + 40, &u, 4);
  u = DemCrc32(head, 44), memcpy(head + 44, &u, 4);
  if (b->fp) { /* the header, now known, over the zeros written first */
    if (!b->ioerr && (fseek(b->fp, 0, SEEK_SET) || fwrite(head, 1, sizeof(head), b->fp) != sizeof(head))) b->ioerr = errno ? errno : EIO;
  } else memcpy(b->p, head, sizeof(head));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemCheckpointSerialize_Private - the checkpoint of the current state into b (b->n bytes).
  A sizing pass first counts the bytes, so that b is allocated once at its exact size: the
  guard keeps one such copy per run (its last good state), and a buffer grown by doubling
  would hold up to twice the state, with old and new buffers alive together while it grows.
*/
PetscErrorCode DemCheckpointSerialize_Private(DemSim sim, DemBuf *b)
{
  DemBuf c;

  PetscFunctionBegin;
  if (DemDecompActive_Private(sim)) { /* MPI: the gathered state in serial layout, on rank 0 (decomp.c) */
    PetscCall(DemDecompSerialize_Private(sim, b));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (b->count) { /* a sink that only counts (DemCheckpointStreamFile_Private's failed open) */
    PetscCall(DemCheckpointSerializeInto(sim, b));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.count = PETSC_TRUE;
  PetscCall(DemCheckpointSerializeInto(sim, &c));
  if (b->fp) { /* streaming: the counted section lengths, then the bytes */
    PetscCall(PetscFree(b->lens));
    b->lens = c.lens, b->nlens = c.nlens, b->caplens = c.caplens, b->ilen = 0;
    b->n = 0, b->crc = 0xFFFFFFFFu;
    PetscCall(DemCheckpointSerializeInto(sim, b));
    PetscCheck(b->ilen == b->nlens && b->n == c.n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "checkpoint: streamed %zu bytes in %zu sections, counted %zu in %zu", b->n, b->ilen, c.n, b->nlens);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscFree(c.lens));
  if (c.n > b->cap || (b->cap > 4096 && c.n < b->cap / 2)) { /* exact size; shrink when half empty */
    PetscCall(PetscFree(b->p));
    PetscCall(PetscMalloc1(c.n, &b->p));
    b->cap = c.n;
  }
  b->n = 0;
  PetscCall(DemCheckpointSerializeInto(sim, b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* fsync of the directory holding `path` (dir: the path is a directory itself): a rename in it
   reaches the disk */
static void DemSyncDir(const char path[], PetscBool dir)
{
  char buf[PETSC_MAX_PATH_LEN];
  int  fd;

  snprintf(buf, sizeof(buf), "%s", path);
  fd = open(dir ? buf : dirname(buf), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
}

/* writes data to path through path.tmp, synced, then renamed; errno-style message in err */
static int DemWriteAtomic(const char path[], const void *data, size_t len, char *err, size_t errlen)
{
  char        tmp[PETSC_MAX_PATH_LEN + 8];
  const char *p = (const char *)data;
  size_t      left = len;
  int         fd;

  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) return snprintf(err, errlen, "cannot open '%s': %s", tmp, strerror(errno)), -1;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      snprintf(err, errlen, "cannot write '%s': %s", tmp, w < 0 ? strerror(errno) : "no progress");
      close(fd);
      unlink(tmp);
      return -1;
    }
    p += w, left -= (size_t)w;
  }
  if (fsync(fd) || close(fd)) {
    snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path)) {
    snprintf(err, errlen, "cannot rename '%.1000s' to '%.1000s': %s", tmp, path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  DemSyncDir(path, PETSC_FALSE);
  return 0;
}

/* DIR/checkpoints (made on rank 0) and path = DIR/checkpoints/step-<step>.ckpt; collective */
static PetscErrorCode DemCheckpointStepPath(DemSim sim, PetscInt step, char path[], size_t len)
{
  char        dir[PETSC_MAX_PATH_LEN], err[PETSC_MAX_PATH_LEN + 256] = "";
  PetscMPIInt ok = 1;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(dir, sizeof(dir), "%s/checkpoints", sim->out.dir));
  PetscCall(PetscSNPrintf(path, len, "%s/step-%" PetscInt_FMT ".ckpt", dir, step));
  if (sim->rank == 0 && DemMkdirP_Private(dir)) { /* errors go to every rank: none waits for a failed one */
    ok = 0;
    PetscCall(PetscStrncpy(err, DemLastError(), sizeof(err)));
  }
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, sim->comm));
  PetscCheck(ok, sim->comm, PETSC_ERR_FILE_WRITE, "checkpoint: %s", sim->rank == 0 ? err : "rank 0 could not write it");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemCheckpointStreamFile_Private - the checkpoint of the current state streamed to `path`
  (through path.tmp, renamed when whole; fsync'ed, with its directory, when `sync`), never
  held in memory as a whole. Collective (MPI: the state is gathered; rank 0 writes). A failure
  to write sets *ok false on every rank and leaves the reason in err on rank 0; it never
  raises, and leaves no partial file.
*/
PetscErrorCode DemCheckpointStreamFile_Private(DemSim sim, const char path[], PetscBool sync, char err[], size_t errlen, PetscBool *ok)
{
  DemBuf      b;
  char        tmp[PETSC_MAX_PATH_LEN + 8];
  PetscMPIInt good = 1;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&b, sizeof(b)));
  if (errlen) err[0] = 0;
  if (sim->rank == 0) {
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    b.fp = fopen(tmp, "wb");
    if (!b.fp) {
      snprintf(err, errlen, "cannot open '%s': %s", tmp, strerror(errno));
      good    = 0;
      b.count = PETSC_TRUE; /* still take part in the gather (MPI), writing nothing */
    }
  }
  PetscCall(DemCheckpointSerialize_Private(sim, &b));
  if (b.fp) {
    if (!b.ioerr && fflush(b.fp)) b.ioerr = errno ? errno : EIO;
    if (!b.ioerr && sync && fsync(fileno(b.fp))) b.ioerr = errno ? errno : EIO;
    if (fclose(b.fp) && !b.ioerr) b.ioerr = errno ? errno : EIO;
    if (b.ioerr) {
      snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(b.ioerr));
      unlink(tmp);
      good = 0;
    } else if (!sync && unlink(path) && errno != ENOENT) { /* see below */
      snprintf(err, errlen, "cannot replace '%s': %s", path, strerror(errno));
      unlink(tmp);
      good = 0;
    } else if (rename(tmp, path)) {
      /* Without sync (the guard's last good state, rewritten at every thermo step) the old
         file is unlinked first: a rename over an existing file makes ext4 (auto_da_alloc)
         start and wait for the new file's writeback, ~1.1 ms per call on this project's
         machines against ~0.05 ms for unlink + rename (measured, 1000 2-KB files); this
         file needs no durability, only to be whole, which the .tmp file still ensures */
      snprintf(err, errlen, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
      unlink(tmp);
      good = 0;
    } else if (sync) DemSyncDir(path, PETSC_FALSE); /* the rename itself reaches the disk */
  }
  PetscCall(PetscFree(b.lens));
  PetscCallMPI(MPI_Bcast(&good, 1, MPI_INT, 0, sim->comm));
  *ok = good ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemCheckpointWrite_Private - writes the checkpoint of the current state as
  DIR/checkpoints/step-<step>.ckpt (streamed, synced); path receives its name. Collective.
*/
PetscErrorCode DemCheckpointWrite_Private(DemSim sim, char path[], size_t len)
{
  char      err[2 * PETSC_MAX_PATH_LEN + 256] = "";
  PetscBool wrote;

  PetscFunctionBegin;
  PetscCall(DemCheckpointStepPath(sim, sim->step, path, len));
  PetscCall(DemCheckpointStreamFile_Private(sim, path, PETSC_TRUE, err, sizeof(err), &wrote));
  PetscCheck(wrote, sim->comm, PETSC_ERR_FILE_WRITE, "checkpoint: %s", sim->rank == 0 ? err : "rank 0 could not write it");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemCheckpointAdopt_Private - renames the checkpoint file src (the guard's last good state)
  to DIR/checkpoints/step-<step>.ckpt; path receives its name. Collective.
*/
PetscErrorCode DemCheckpointAdopt_Private(DemSim sim, const char src[], PetscInt step, char path[], size_t len)
{
  char        err[2 * PETSC_MAX_PATH_LEN + 256] = "";
  PetscMPIInt ok = 1;

  PetscFunctionBegin;
  PetscCall(DemCheckpointStepPath(sim, step, path, len));
  if (sim->rank == 0) {
    if (rename(src, path)) {
      ok = 0;
      snprintf(err, sizeof(err), "cannot rename '%s' to '%s': %s", src, path, strerror(errno));
    } else DemSyncDir(path, PETSC_FALSE);
  }
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, sim->comm));
  PetscCheck(ok, sim->comm, PETSC_ERR_FILE_WRITE, "checkpoint: %s", sim->rank == 0 ? err : "rank 0 could not write it");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- reading ---- */

/* the whole file, with its header checked; payload in [DEM_CKPT_HEADER, *len) */
static PetscErrorCode DemCheckpointLoadFile(const char file[], unsigned char **data, size_t *len)
{
  FILE         *fp;
  struct stat   st;
  unsigned char head[DEM_CKPT_HEADER];
  uint32_t      version, hsize, crc, endian, rsize, isize, hcrc;
  uint64_t      psize;
  size_t        got;

  PetscFunctionBegin;
  *data = NULL;
  fp    = fopen(file, "rb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open checkpoint '%s': %s", file, strerror(errno));
  if (fstat(fileno(fp), &st) || !S_ISREG(st.st_mode)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "checkpoint '%s' is not a regular file", file);
  }
  got = fread(head, 1, sizeof(head), fp);
  if (got < 8 || memcmp(head, DEM_CKPT_MAGIC, 8)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "'%s' is not an mmdem checkpoint (it does not start with %s)", file, DEM_CKPT_MAGIC);
  }
  if (got < sizeof(head)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' is truncated: %zu bytes, shorter than its %u-byte header", file, got, DEM_CKPT_HEADER);
  }
  memcpy(&version, head + 8, 4);
  memcpy(&hsize, head + 12, 4);
  memcpy(&psize, head + 16, 8);
  memcpy(&crc, head + 24, 4);
  memcpy(&endian, head + 28, 4);
  memcpy(&rsize, head + 32, 4);
  memcpy(&isize, head + 36, 4);
  memcpy(&hcrc, head + 44, 4);
  if (endian != DEM_CKPT_ENDIAN) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' was written on a machine of the other byte order (or its header is corrupted)", file);
  }
  if (hcrc != DemCrc32(head, 44)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' is corrupted: header checksum mismatch (stored 0x%08x, computed 0x%08x)", file, hcrc, DemCrc32(head, 44));
  }
  if (version != DEM_CKPT_VERSION && version != 2) { /* version 2: without SQWS */
    fclose(fp);
    if (version < 2) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' has format version %u; this mmdem (%d.%d) reads versions 2 to %u only: the file comes from an older mmdem, without the contact history of mesh walls and polyhedra (version 2); restart it with the build that wrote it, or run again from the start", file, version, DEM_VERSION_MAJOR, DEM_VERSION_MINOR, DEM_CKPT_VERSION);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' has format version %u; this mmdem (%d.%d) reads version %u", file, version, DEM_VERSION_MAJOR, DEM_VERSION_MINOR, DEM_CKPT_VERSION);
  }
  if (hsize != DEM_CKPT_HEADER || rsize != sizeof(PetscReal) || isize != sizeof(PetscInt)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' comes from a different build: header %u bytes, PetscReal %u bytes, PetscInt %u bytes (this build: %u, %zu, %zu)", file, hsize, rsize, isize, DEM_CKPT_HEADER, sizeof(PetscReal), sizeof(PetscInt));
  }
  if ((uint64_t)st.st_size != DEM_CKPT_HEADER + psize) {
    fclose(fp);
    if ((uint64_t)st.st_size < DEM_CKPT_HEADER + psize) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' is truncated: %lld bytes, its header announces %llu", file, (long long)st.st_size, (unsigned long long)(DEM_CKPT_HEADER + psize));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' has %llu bytes after its end (%lld bytes, its header announces %llu)", file, (unsigned long long)(st.st_size - DEM_CKPT_HEADER - psize), (long long)st.st_size, (unsigned long long)(DEM_CKPT_HEADER + psize));
  }
  *data = (unsigned char *)malloc((size_t)st.st_size); /* freed with free() by the caller */
  if (!*data) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "checkpoint '%s': cannot allocate %lld bytes to read it", file, (long long)st.st_size);
  }
  memcpy(*data, head, sizeof(head));
  got = fread(*data + DEM_CKPT_HEADER, 1, (size_t)psize, fp);
  fclose(fp);
  if (got != psize) {
    free(*data);
    *data = NULL;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "checkpoint '%s': read %zu of %llu bytes", file, got, (unsigned long long)psize);
  }
  if (crc != DemCrc32(*data + DEM_CKPT_HEADER, (size_t)psize)) {
    uint32_t c = DemCrc32(*data + DEM_CKPT_HEADER, (size_t)psize);
    free(*data);
    *data = NULL;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' is corrupted: checksum mismatch (stored 0x%08x, computed 0x%08x)", file, crc, c);
  }
  *len = (size_t)st.st_size;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* reallocates a neighbour-list array to exactly n items (at least 1) */
#define DEM_NL_REALLOC(ptr, n) \
  do { \
    PetscCall(PetscFree(ptr)); \
    PetscCall(PetscMalloc1(PetscMax((size_t)(n), (size_t)1), &(ptr))); \
  } while (0)

/* the NLST section: pairs (checked against the shape kinds of their groups), history, image
   shifts, groups, build positions; into the neighbour list when apply */
static PetscErrorCode DemCheckpointParsePairsKinds(DemSim sim, const char file[], DemRd *r, int64_t np, const PetscInt *pa, const PetscInt *pb, PetscInt *ng_out, PetscInt ka[], PetscInt kb[], PetscInt gs[])
{
  DemBodyStore *bs = &sim->bodies;
  int64_t       ng;

  PetscFunctionBegin;
  PetscCall(DemRdCount(r, &ng, 16, DEM_KIND_MAX * DEM_KIND_MAX, "groups"));
  PetscCall(DemRdInts(r, ka, (size_t)ng, 0, DEM_KIND_MAX, "group kind a"));
  PetscCall(DemRdInts(r, kb, (size_t)ng, 0, DEM_KIND_MAX, "group kind b"));
  PetscCall(DemRdInts(r, gs, (size_t)ng + 1, 0, np + 1, "group start"));
  for (PetscInt k = 0; k < ng; k++)
    if (gs[k] > gs[k + 1]) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: neighbour groups out of order", file);
  if (gs[0] != 0 || gs[ng] != np) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: neighbour groups do not cover the pairs", file);
  for (PetscInt k = 0; k < ng; k++) {
    DemCollideFn fn;
    PetscBool    sw;
    PetscCall(DemColliderGet_Private((DemShapeKind)ka[k], (DemShapeKind)kb[k], &fn, &sw));
    if (!fn) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: no collider for shape kinds %" PetscInt_FMT "/%" PetscInt_FMT, file, ka[k], kb[k]);
    /* each pair joins two bodies of its group's shape kinds: the colliders rely on it */
    for (PetscInt j = gs[k]; j < gs[k + 1]; j++)
      if (sim->shapes[bs->shape[pa[j]]]->kind != ka[k] || sim->shapes[bs->shape[pb[j]]]->kind != kb[k] || pa[j] == pb[j]) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: neighbour pair %" PetscInt_FMT " (bodies %" PetscInt_FMT ", %" PetscInt_FMT ") does not match the shape kinds of its group", file, j, pa[j], pb[j]);
  }
  *ng_out = (PetscInt)ng;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCheckpointParsePairs(DemSim sim, const char file[], DemRd *r, PetscBool apply)
{
  DemNeighbourList *nl = &sim->nl;
  const PetscInt    nb = sim->bodies.n + sim->bodies.nghost;
  int64_t           np, hs, has, v;
  PetscInt         *pa, *pb, *ps, ng = 0;
  PetscInt          ka[DEM_KIND_MAX * DEM_KIND_MAX], kb[DEM_KIND_MAX * DEM_KIND_MAX], gs[DEM_KIND_MAX * DEM_KIND_MAX + 1];
  size_t            hpos;
  PetscErrorCode    ierr;

  PetscFunctionBegin;
  PetscCall(DemRdCount(r, &np, 3 * 8, PETSC_MAX_INT, "pairs"));
  PetscCall(DemRdI64(r, &hs, "history size"));
  if (hs != sim->histsize) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s': contact history of %lld values per pair there, %" PetscInt_FMT " in this run", file, (long long)hs, sim->histsize);
  PetscCall(PetscMalloc3(np + 1, &pa, np + 1, &pb, np + 1, &ps));
  ierr = DemRdInts(r, pa, (size_t)np, 0, nb, "pair a");
  if (!ierr) ierr = DemRdInts(r, pb, (size_t)np, 0, nb, "pair b");
  if (!ierr) ierr = DemRdInts(r, ps, (size_t)np, 0, 27, "pair image");
  hpos = r->pos;
  if (!ierr && hs > 0) ierr = DemRdReals(r, NULL, (size_t)(hs * np), "contact history");
  if (!ierr) ierr = DemRdI64(r, &has, "image shifts");
  if (!ierr && has) ierr = DemRdReals(r, NULL, 3 * (size_t)np, "image shifts"); /* checked, not kept (below) */
  if (!ierr) ierr = DemCheckpointParsePairsKinds(sim, file, r, np, pa, pb, &ng, ka, kb, gs);
  if (!ierr && apply) {
    DEM_NL_REALLOC(nl->a, np);
    DEM_NL_REALLOC(nl->b, np);
    DEM_NL_REALLOC(nl->shiftidx, np);
    /* the shift vectors and pair indices are made from the image indices on demand
       (neighbour.c), as after a build: the file's shift vectors are not kept */
    PetscCall(PetscFree(nl->pairidx));
    PetscCall(PetscFree(nl->shift));
    nl->shift_valid = PETSC_FALSE;
    nl->cap         = (PetscInt)PetscMax(np, 1);
    nl->npairs      = (PetscInt)np;
    for (PetscInt k = 0; k < nl->npairs; k++) nl->a[k] = pa[k], nl->b[k] = pb[k], nl->shiftidx[k] = ps[k];
    if (hs > 0) {
      DEM_NL_REALLOC(nl->history, hs * PetscMax(np, 1));
      nl->histcap = (PetscInt)PetscMax(np, 1);
      memcpy(nl->history, r->p + hpos, (size_t)(hs * np) * sizeof(PetscReal));
    }
    nl->ngroups = ng;
    for (PetscInt k = 0; k < ng; k++) nl->gka[k] = (DemShapeKind)ka[k], nl->gkb[k] = (DemShapeKind)kb[k];
    for (PetscInt k = 0; k <= ng; k++) nl->gstart[k] = gs[k];
    nl->noshift_first = PETSC_TRUE; /* as neighbour.c orders them, unless the file says otherwise */
    for (PetscInt k = 0; k < ng; k++)
      for (PetscInt j = gs[k] + 1; j < gs[k + 1]; j++)
        if (nl->shiftidx[j - 1] != DEM_NOSHIFT && nl->shiftidx[j] == DEM_NOSHIFT) nl->noshift_first = PETSC_FALSE;
  }
  PetscCall(PetscFree3(pa, pb, ps));
  PetscCall(ierr);
  PetscCall(DemRdI64(r, &has, "build positions"));
  if (has) {
    if (apply) {
      DEM_NL_REALLOC(nl->x0, 3 * nb);
      nl->x0cap = 3 * nb;
    }
    PetscCall(DemRdReals(r, apply ? nl->x0 : NULL, 3 * (size_t)nb, "build positions"));
  } else if (apply) {
    PetscCall(PetscFree(nl->x0));
    nl->x0cap = 0;
  }
  PetscCall(DemRdI64(r, &v, "builds"));
  if (apply) nl->nbuilds = (PetscInt)v;
  { /* the feature slots (featslot.c), after the pairs and the build count */
    int64_t fl;
    FILE   *fp;
    long    pos;
    PetscCall(DemRdCount(r, &fl, 1, INT64_MAX, "feature slots"));
    if (fl < 28) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: section %s: %lld bytes of feature slots", file, r->sec, (long long)fl);
    fp = fmemopen((void *)(r->p + r->pos), (size_t)fl, "rb");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_MEM, "checkpoint: cannot open a memory stream: %s", strerror(errno));
    ierr = DemNeighbourFeatureCheckpoint_Private(sim, fp, PETSC_FALSE, apply, (PetscInt)np, (size_t)fl);
    pos  = ierr ? 0 : ftell(fp);
    fclose(fp);
    if (ierr) { /* the message of featslot.c, with the file's name */
      char m[512];
      PetscCall(PetscStrncpy(m, DemLastError(), sizeof(m)));
      DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: %s", file, strncmp(m, "checkpoint: ", 12) ? m : m + 12);
    }
    if (pos != fl) DEM_CKPT_ERR(r, "checkpoint '%s' is inconsistent: the feature slots take %ld of their %lld bytes", file, pos, (long long)fl);
    r->pos += (size_t)fl;
  }
  PetscCall(DemRdDone(r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemCheckpointParse - checks (apply false) or applies (apply true) a loaded checkpoint
  against the set-up simulation. Every check runs in both passes; the first pass changes
  nothing, so that a bad file leaves the run untouched.
*/
/*
  The checkpoint's bodies are in the store's order of the run that wrote it, which is the
  global-id order unless that run reordered its store (search.sort_every, sort.c). Reads the
  ids; *perm = NULL when they are this run's store order, else perm[k] = the position in this
  run's store of the checkpoint's k-th body, and with apply the store takes the checkpoint's
  order (so that the continuation is bitwise the uninterrupted run).
*/
static PetscErrorCode DemCheckpointBodyOrder(DemSim sim, const char file[], DemRd *r, PetscBool apply, PetscInt **perm)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n;
  int64_t      *ck;
  PetscInt     *order = NULL;
  PetscBool     same  = PETSC_TRUE;

  PetscFunctionBegin;
  *perm = NULL;
  PetscCall(PetscMalloc1(n + 1, &ck));
  for (PetscInt i = 0; i < n; i++) {
    PetscErrorCode ierr = DemRdI64(r, &ck[i], "gid");
    if (ierr) PetscCall(PetscFree(ck));
    PetscCall(ierr);
    same = same && ck[i] == bs->gid[i];
  }
  if (same) {
    PetscCall(PetscFree(ck));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DemSimGidOrder_Private(sim, &order)); /* this run's positions by id, for a bisection */
  PetscCall(PetscMalloc1(n + 1, perm));
  for (PetscInt k = 0; k < n; k++) {
    PetscInt lo = 0, hi = n - 1, j = -1;
    while (lo <= hi) {
      const PetscInt mid = (lo + hi) / 2, i = order ? order[mid] : mid;
      if (bs->gid[i] == ck[k]) { j = i; break; }
      if (bs->gid[i] < ck[k]) lo = mid + 1;
      else hi = mid - 1;
    }
    if (j < 0) {
      const long long bad = (long long)ck[k];
      PetscCall(PetscFree(ck));
      PetscCall(PetscFree(order));
      PetscCall(PetscFree(*perm));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s': body %" PetscInt_FMT " has id %lld there, which this run does not have", file, k, bad);
    }
    (*perm)[k] = j;
  }
  { /* every id once */
    char *seen;
    PetscBool dup = PETSC_FALSE;
    PetscCall(PetscCalloc1(n + 1, &seen));
    for (PetscInt k = 0; k < n; k++) dup = dup || seen[(*perm)[k]]++;
    PetscCall(PetscFree(seen));
    PetscCall(PetscFree(ck));
    PetscCall(PetscFree(order));
    if (dup) PetscCall(PetscFree(*perm));
    PetscCheck(!dup, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s': a body id appears twice", file);
  }
  if (apply) { /* the store in the checkpoint's order: its columns are read in place */
    PetscCall(DemSimPermuteBodies_Private(sim, *perm));
    PetscCall(PetscFree(*perm));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemCheckpointParse(DemSim sim, const char file[], const unsigned char *data, size_t len, PetscBool apply)
{
  DemBodyStore     *bs = &sim->bodies;
  const PetscInt    n  = bs->n;
  DemRd             all = {data + DEM_CKPT_HEADER, len - DEM_CKPT_HEADER, 0, file, "file"}, r;
  int64_t           v, step = 0, nbody;
  double            time = 0;
  char              str[256];
  DemGuard         *g;
  uint32_t          version;

  PetscFunctionBegin;
  memcpy(&version, data + 8, 4); /* the header was checked by DemCheckpointLoadFile */
  PetscCall(DemGuardGet_Private(sim, &g));
  /* META */
  PetscCall(DemRdSection(&all, "META", &r));
  PetscCall(DemRdI64(&r, &v, "version"));
  PetscCall(DemRdI64(&r, &v, "version"));
  PetscCall(DemRdI64(&r, &v, "ranks"));
  PetscCall(DemRdString(&r, str, sizeof(str), "integrator"));
  PetscCall(DemRdI64(&r, &step, "step"));
  PetscCall(DemRdF64(&r, &time, "time"));
  PetscCall(DemRdI64(&r, &nbody, "bodies"));
  PetscCall(DemRdString(&r, NULL, 0, "file"));
  PetscCall(DemRdDone(&r));
  /* CONF: the same run description (but run: and output:) */
  PetscCall(DemRdSection(&all, "CONF", &r));
  {
    int64_t cl;
    DemBuf *conf, *iconf;
    char    diff[1024];
    PetscCall(DemRdCount(&r, &cl, 1, INT64_MAX, "run description"));
    PetscCall(DemConfText(sim, &conf, &iconf));
    if ((size_t)cl != conf->n || memcmp(r.p + r.pos, conf->p, conf->n)) {
      DemConfFirstDiff(r.p + r.pos, (size_t)cl, conf->p, conf->n, diff, sizeof(diff));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s' was written for another run description: %s. Restart with the run description and --set options of the run that wrote it (run:, output: and integrator settings may change)", file, diff);
    }
    r.pos += (size_t)cl;
    PetscCall(DemRdCount(&r, &cl, 1, INT64_MAX, "integrator settings"));
    g->newinteg = ((size_t)cl != iconf->n || memcmp(r.p + r.pos, iconf->p, iconf->n)) ? PETSC_TRUE : PETSC_FALSE;
    if (g->newinteg && apply) {
      DemConfFirstDiff(r.p + r.pos, (size_t)cl, iconf->p, iconf->n, diff, sizeof(diff));
      PetscCall(PetscFPrintf(sim->comm, PETSC_STDERR, "mmdem: warning: other integrator settings than those of checkpoint '%s' (%s): the run continues with the new settings, the configured dt and the integrator's state from set-up, and will differ from an uninterrupted run\n", file, diff));
    }
    r.pos += (size_t)cl;
    PetscCall(DemRdDone(&r));
  }
  if (strcmp(str, sim->integ->type_name)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s' was written by integrator %s, the run uses %s", file, str, sim->integ->type_name);
  if (nbody != n) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s' holds %lld bodies, the run description makes %" PetscInt_FMT, file, (long long)nbody, n);
  if (step < 0 || !isfinite(time)) DEM_CKPT_ERR(&r, "checkpoint '%s' is inconsistent: step %lld, time %g", file, (long long)step, time);
  /* SIMS */
  PetscCall(DemRdSection(&all, "SIMS", &r));
  {
    double  d[6];
    int64_t k[4];
    for (int j = 0; j < 6; j++) PetscCall(DemRdF64(&r, &d[j], "counters"));
    for (int j = 0; j < 4; j++) PetscCall(DemRdI64(&r, &k[j], "counters"));
    PetscCall(DemRdDone(&r));
    if (!(d[1] > 0) || k[0] != step || k[1] < 0 || k[2] < 0 || k[3] < 0) DEM_CKPT_ERR(&r, "checkpoint '%s' is inconsistent: dt %g, step %lld", file, d[1], (long long)k[0]);
    if (apply) {
      sim->time             = d[0];
      if (!g->newinteg) sim->dt = d[1];
      sim->tc_min           = d[2];
      sim->dissipated       = d[3];
      sim->pe_contact       = d[4];
      sim->dissip_rate_prev = d[5];
      sim->step             = (PetscInt)k[0];
      sim->ncontacts        = (PetscInt)k[1];
      sim->iterations       = (PetscInt)k[2];
      sim->rejected         = (PetscInt)k[3];
    }
  }
  /* BODY */
  PetscCall(DemRdSection(&all, "BODY", &r));
  {
    int64_t   cnt, nextra;
    PetscInt *perm = NULL;
    PetscCall(DemRdI64(&r, &cnt, "body count"));
    if (cnt != n) DEM_CKPT_ERR(&r, "checkpoint '%s' is inconsistent: %lld bodies in BODY, %lld in META", file, (long long)cnt, (long long)nbody);
    PetscCall(DemCheckpointBodyOrder(sim, file, &r, apply, &perm));
    PetscCall(DemRdReals(&r, apply ? bs->x : NULL, 3 * (size_t)n, "positions"));
    PetscCall(DemRdReals(&r, apply ? bs->v : NULL, 3 * (size_t)n, "velocities"));
    PetscCall(DemRdReals(&r, apply ? bs->w : NULL, 3 * (size_t)n, "angular velocities"));
    PetscCall(DemRdReals(&r, apply ? bs->q : NULL, 4 * (size_t)n, "orientations"));
    PetscCall(DemRdReals(&r, apply ? bs->f : NULL, 3 * (size_t)n, "forces"));
    PetscCall(DemRdReals(&r, apply ? bs->t : NULL, 3 * (size_t)n, "torques"));
    for (PetscInt i = 0; i < n; i++) {
      const PetscInt j = perm ? perm[i] : i;
      PetscCall(DemRdI64(&r, &v, "flags"));
      if ((v & ~(int64_t)DEM_REMOVED) != (int64_t)(bs->flags[j] & ~DEM_REMOVED)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s': body %lld is %s there and %s in this run", file, (long long)bs->gid[j], (v & DEM_FIXED) ? "fixed" : "free", (bs->flags[j] & DEM_FIXED) ? "fixed" : "free");
      if (apply) bs->flags[i] = (unsigned)v;
    }
    {
      const char *what[3] = {"mass", "inertia", "radius"};
      PetscReal  *col[3]  = {bs->m, bs->I, bs->radius};
      PetscInt    nc[3]   = {1, 3, 1};
      for (int c = 0; c < 3; c++)
        for (PetscInt i = 0; i < nc[c] * n; i++) {
          PetscReal x;
          const PetscInt   j = perm ? nc[c] * perm[i / nc[c]] + i % nc[c] : i; /* the value in this run's store */
          PetscCall(DemRdReals(&r, &x, 1, what[c]));
          if (memcmp(&x, &col[c][j], sizeof(x))) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s': body %lld has %s %.17g there, %.17g in this run (a changed bodies file?)", file, (long long)bs->gid[j / nc[c]], what[c], (double)x, (double)col[c][j]);
        }
    }
    for (int c = 0; c < 2; c++)
      for (PetscInt i = 0; i < n; i++) {
        const PetscInt j    = perm ? perm[i] : i;
        int            have = c ? bs->material[j] : bs->shape[j];
        PetscCall(DemRdI64(&r, &v, c ? "material" : "shape"));
        if (v != have) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s': body %lld has %s %lld there, %d in this run", file, (long long)bs->gid[j], c ? "material" : "shape", (long long)v, have);
      }
    PetscInt nx = DemCheckpointFieldCount(bs);
    PetscCall(DemRdI64(&r, &nextra, "per-body fields"));
    if (nextra != nx) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s' has %lld per-body plugin fields, this run %" PetscInt_FMT, file, (long long)nextra, nx);
    for (PetscInt k = 0; k < bs->nextra; k++) {
      char    name[256];
      int64_t nc;
      if (!DemCheckpointFieldKept(bs, k)) continue;
      PetscCall(DemRdString(&r, name, sizeof(name), "field name"));
      PetscCall(DemRdI64(&r, &nc, "field components"));
      if (strcmp(name, bs->extra_name[k]) || nc != bs->extra_ncomp[k]) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "checkpoint '%s': per-body field %" PetscInt_FMT " is %s[%lld] there, %s[%" PetscInt_FMT "] in this run", file, k, name, (long long)nc, bs->extra_name[k], bs->extra_ncomp[k]);
      PetscCall(DemRdReals(&r, apply ? bs->extra[k] : NULL, (size_t)nc * n, name));
    }
    PetscCall(DemRdDone(&r));
    PetscCall(PetscFree(perm));
  }
  /* DISS */
  PetscCall(DemRdSection(&all, "DISS", &r));
  PetscCall(DemRdI64(&r, &v, "dissipative forces"));
  if (v) {
    if (apply) PetscCall(DemSimReserveDissipative_Private(sim));
    PetscCall(DemRdReals(&r, apply ? sim->fd : NULL, 3 * (size_t)n, "dissipative forces"));
    PetscCall(DemRdReals(&r, apply ? sim->td : NULL, 3 * (size_t)n, "dissipative torques"));
  }
  PetscCall(DemRdDone(&r));
  /* NLST */
  PetscCall(DemRdSection(&all, "NLST", &r));
  PetscCall(DemCheckpointParsePairs(sim, file, &r, apply));
  /* OUTP */
  PetscCall(DemRdSection(&all, "OUTP", &r));
  {
    int64_t te, row, nv;
    double  next;
    PetscCall(DemRdI64(&r, &te, "thermo_every"));
    PetscCall(DemRdI64(&r, &row, "thermo row"));
    PetscCall(DemRdCount(&r, &nv, 8, PETSC_MAX_INT, "VTK frames"));
    if (apply) {
      PetscCall(PetscFree(g->ro.vtktime));
      PetscCall(PetscMalloc1(nv + 1, &g->ro.vtktime));
    }
    PetscCall(DemRdReals(&r, apply ? g->ro.vtktime : NULL, (size_t)nv, "VTK frame times"));
    PetscCall(DemRdF64(&r, &next, "next VTK frame"));
    PetscCall(DemRdDone(&r));
    if (apply) {
      g->ro.active     = PETSC_TRUE;
      g->ro.step       = (PetscInt)step;
      g->ro.thermo_row = row ? PETSC_TRUE : PETSC_FALSE;
      g->ro.nvtk       = (PetscInt)nv;
      g->ro.next_vtk   = next;
    }
  }
  /* INTG */
  PetscCall(DemRdSection(&all, "INTG", &r));
  {
    int64_t hasop, il;
    PetscCall(DemRdString(&r, str, sizeof(str), "integrator"));
    PetscCall(DemRdI64(&r, &hasop, "integrator method"));
    PetscCall(DemRdCount(&r, &il, 1, INT64_MAX, "integrator state"));
    if (strcmp(str, sim->integ->type_name)) DEM_CKPT_ERR(&r, "checkpoint '%s' is inconsistent: integrator %s in INTG, %s in META", file, str, sim->integ->type_name);
    if (apply && g->newinteg) { /* other settings: the integrator's state from set-up */
    } else if (apply && sim->integ->ops->checkpoint) {
      static const unsigned char empty[1] = {0};
      FILE                      *fp       = fmemopen((void *)(il ? r.p + r.pos : empty), il ? (size_t)il : 1, "rb");
      long                       pos;
      PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_MEM, "checkpoint: cannot open a memory stream: %s", strerror(errno));
      if (!hasop) {
        fclose(fp);
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s' was written without the private state of integrator %s (an older build of it)", file, str);
      }
      PetscCall((*sim->integ->ops->checkpoint)(sim->integ, fp, PETSC_FALSE));
      pos = il ? ftell(fp) : 0;
      fclose(fp);
      PetscCheck(pos == il, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s': integrator %s read %ld of the %lld bytes of its state", file, str, pos, (long long)il);
    } else if (apply && !sim->integ->ops->checkpoint) {
      PetscCall(PetscFPrintf(sim->comm, PETSC_STDERR, "mmdem: warning: integrator %s has no checkpoint method: its private state starts afresh on restart, and the run may differ from an uninterrupted one\n", str));
    }
    r.pos += (size_t)il;
    PetscCall(DemRdDone(&r));
  }
  if (version >= 3) { /* SQWS (see the writer) */
    int64_t k, sl;
    PetscCall(DemRdSection(&all, "SQWS", &r));
    for (;;) {
      PetscCall(DemRdI64(&r, &k, "shape"));
      if (k < 0) break;
      if (k >= sim->nshape || !DemShapeSuperquadricWarmReals_Private(sim->shapes[k])) DEM_CKPT_ERR(&r, "checkpoint '%s' is inconsistent: section SQWS: shape %lld is not a superquadric", file, (long long)k);
      PetscCall(DemRdCount(&r, &sl, 1, INT64_MAX, "superquadric warm starts"));
      if (apply) {
        static const unsigned char empty[1] = {0};
        FILE                      *fp       = fmemopen((void *)(sl ? r.p + r.pos : empty), sl ? (size_t)sl : 1, "rb");
        PetscErrorCode             ierr;
        long                       pos;
        PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_MEM, "checkpoint: cannot open a memory stream: %s", strerror(errno));
        ierr = DemShapeSuperquadricCheckpoint_Private(sim->shapes[k], sim, fp, PETSC_FALSE);
        pos  = sl ? ftell(fp) : 0;
        fclose(fp);
        PetscCall(ierr);
        PetscCheck(pos == sl, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint '%s': shape %s read %ld of the %lld bytes of its warm starts", file, sim->shapes[k]->name, pos, (long long)sl);
      }
      r.pos += (size_t)sl;
    }
    PetscCall(DemRdDone(&r));
  }
  if (all.pos != all.n) DEM_CKPT_ERR(&all, "checkpoint '%s' is inconsistent: %zu bytes after its last section", file, all.n - all.pos);
  if (apply && sim->size > 1) { /* several ranks: the distribution starts from the serial layout in id order (decomp.c) */
    PetscInt *order;
    PetscCall(DemSimGidOrder_Private(sim, &order));
    if (order) PetscCall(DemSimPermuteBodies_Private(sim, order));
    PetscCall(PetscFree(order));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* loads and checks sim->restart; applies it when apply */
static PetscErrorCode DemCheckpointLoad(DemSim sim, PetscBool apply)
{
  unsigned char *data = NULL;
  size_t         len  = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCheck(sim->setupcalled, sim->comm, PETSC_ERR_ARG_WRONGSTATE, "restart needs a set-up simulation");
  PetscCall(DemCheckpointLoadFile(sim->restart, &data, &len));
  ierr = DemCheckpointParse(sim, sim->restart, data, len, PETSC_FALSE);
  if (!ierr && apply) ierr = DemCheckpointParse(sim, sim->restart, data, len, PETSC_TRUE);
  free(data);
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimSetRestart(DemSim sim, const char file[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(sim->restart, file ? file : "", sizeof(sim->restart)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemSimCheckRestart - reads the checkpoint of --restart and checks it against the set-up
  simulation (format, checksums, run description, bodies) without changing anything
  (`mmdem check FILE --restart CHECKPOINT`). Collective.
*/
PetscErrorCode DemSimCheckRestart(DemSim sim)
{
  PetscFunctionBegin;
  if (!sim->restart[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemSimSetUp(sim));
  PetscCall(DemCheckpointLoad(sim, PETSC_FALSE));
  PetscCall(DemGuardEnd_Private(sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* restores sim->restart into the set-up simulation (DemGuardBegin_Private). Collective. */
PetscErrorCode DemCheckpointRestore_Private(DemSim sim)
{
  DemGuard *g;

  PetscFunctionBegin;
  if (!sim->restart[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemCheckpointLoad(sim, PETSC_TRUE));
  PetscCall(DemDecompRestored_Private(sim)); /* MPI: every rank keeps its subdomain now (decomp.c) */
  PetscCall(DemGuardGet_Private(sim, &g));
  PetscCall(PetscPrintf(sim->comm, "restart: continuing from %s at step %" PetscInt_FMT ", t = %.10g s, dt = %g s\n", sim->restart, sim->step, (double)sim->time, (double)sim->dt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemCheckpointRestartOutput_Private(DemSim sim, DemRestartOutput *ro)
{
  DemGuard *g;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(ro, sizeof(*ro)));
  if (!sim->guard) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemGuardGet_Private(sim, &g));
  *ro = g->ro;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemCheckpointReopenCSV_Private - on restart, DIR/NAME keeps its header and the rows of the
  steps before the checkpoint's (and of its step when that had a thermo row); rows written
  after it by the interrupted run, and a last line cut short, go. Rewritten atomically, then
  opened for appending. A file with another header (other columns) is refused; a missing
  file starts afresh with the header.
*/
PetscErrorCode DemCheckpointReopenCSV_Private(DemSim sim, const char dir[], const char name[], const char header[], FILE **fp)
{
  char             path[PETSC_MAX_PATH_LEN], err[PETSC_MAX_PATH_LEN + 256];
  DemRestartOutput ro;
  FILE            *in;
  char            *data = NULL, *line, *end;
  long             size;
  DemBuf           keep = {0};
  size_t           hl   = strlen(header);

  PetscFunctionBegin;
  PetscCall(DemCheckpointRestartOutput_Private(sim, &ro));
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dir, name));
  in = fopen(path, "rb");
  if (!in) {
    PetscCheck(errno == ENOENT, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", path, strerror(errno));
    *fp = fopen(path, "w");
    PetscCheck(*fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", path, strerror(errno));
    fprintf(*fp, "%s\n", header);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (fseek(in, 0, SEEK_END) || (size = ftell(in)) < 0 || fseek(in, 0, SEEK_SET)) {
    fclose(in);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "cannot read '%s': %s", path, strerror(errno));
  }
  PetscCall(PetscMalloc1(size + 1, &data));
  if (fread(data, 1, (size_t)size, in) != (size_t)size) {
    fclose(in);
    PetscCall(PetscFree(data));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "cannot read '%s'", path);
  }
  fclose(in);
  data[size] = 0;
  if ((size_t)size < hl + 1 || strncmp(data, header, hl) || data[hl] != '\n') {
    PetscCall(PetscFree(data));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "cannot continue '%s' from checkpoint '%s': its header is not this run's\n  %s\n(other columns, e.g. other plugins); move the file away or restart into another --out directory", path, sim->restart, header);
  }
  PetscCall(DemBufPut_Private(&keep, data, hl + 1));
  for (line = data + hl + 1; *line; line = end + 1) {
    long long st;
    char     *e;
    end = strchr(line, '\n');
    if (!end) break; /* a last line cut short */
    st = strtoll(line, &e, 10);
    if (e == line || *e != ',') break;
    if (st > ro.step || (st == ro.step && !ro.thermo_row)) break;
    PetscCall(DemBufPut_Private(&keep, line, (size_t)(end - line + 1)));
  }
  PetscCall(PetscFree(data));
  if (DemWriteAtomic(path, keep.p, keep.n, err, sizeof(err))) {
    PetscCall(DemBufFree_Private(&keep));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "%s", err);
  }
  PetscCall(DemBufFree_Private(&keep));
  *fp = fopen(path, "a");
  PetscCheck(*fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", path, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}
