/*
  trimesh.c - triangulated surfaces through the Gmsh SDK C API (gmshc.h): STL, .msh, STEP/BREP/
  IGES (OpenCASCADE, meshed by Gmsh) and solids built with Gmsh's OCC kernel (box, cylinder,
  cone, sphere; fused), with mass properties by the divergence theorem and the closedness checks
  the polyhedron shape (000 section 2.1: bodies are closed triangulated surfaces) and mesh walls
  need.

  Gmsh is initialised once per process, silenced (General.Terminal = 0) and finalized with PETSc.
  Gmsh node tags are not contiguous (STL): they are mapped to indices by sorting. Coincident
  vertices (within 1e-9 of the bounding-box diagonal) are merged, so that STL files with
  repeated corner coordinates give a connected surface.
*/
#include "trimesh.h"
#include <gmshc.h>
#include "dem_gmsh.h" /* gmsh calls go through a table loaded on first use (issue 11) */
#include <unistd.h>
#include <errno.h>
#include <strings.h>
#include <math.h>

static PetscBool DemGmshInitialized = PETSC_FALSE;

/* turns a Gmsh error code into a PETSc error carrying Gmsh's last message (STYLE.md item 2) */
static PetscErrorCode DemGmshError_Private(int ierr, const char *call, const char *what)
{
  char *msg = NULL;
  int   e2  = 0;

  PetscFunctionBegin;
  if (!ierr) PetscFunctionReturn(PETSC_SUCCESS);
  gmshLoggerGetLastError(&msg, &e2);
  {
    char buf[1024];
    PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s", (!e2 && msg && msg[0]) ? msg : "(no message)"));
    if (msg) gmshFree(msg);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "Gmsh %s failed for %s: %s", call, what, buf);
  }
}
#define DemGmshCall(what, fn, ...) \
  do { \
    int gierr_ = 0; \
    fn(__VA_ARGS__, &gierr_); \
    PetscCall(DemGmshError_Private(gierr_, #fn, what)); \
  } while (0)
#define DemGmshCall0(what, fn) \
  do { \
    int gierr_ = 0; \
    fn(&gierr_); \
    PetscCall(DemGmshError_Private(gierr_, #fn, what)); \
  } while (0)

static PetscErrorCode DemGmshFinalize_Private(void)
{
  int ierr = 0;

  PetscFunctionBegin;
  if (DemGmshInitialized) gmshFinalize(&ierr);
  DemGmshInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemGmshInitialize(void)
{
  PetscFunctionBegin;
  if (DemGmshInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  /* no argv: Gmsh would parse (and reject) PETSc's options */
  DemGmshCall("initialisation", gmshInitialize, 0, NULL, 0);
  DemGmshInitialized = PETSC_TRUE;
  DemGmshCall("initialisation", gmshOptionSetNumber, "General.Terminal", 0);
  DemGmshCall("initialisation", gmshOptionSetNumber, "General.Verbosity", 1);
  DemGmshCall("initialisation", gmshOptionSetNumber, "General.NumThreads", 1);
  PetscCall(PetscRegisterFinalize(DemGmshFinalize_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemTriMeshDestroy(DemTriMesh *m)
{
  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree(m->x));
  PetscCall(PetscFree(m->tri));
  m->nv = m->nt = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  size_t   tag;
  PetscInt idx;
} DemTagIdx;

static int DemTagCmp(const void *a, const void *b)
{
  size_t x = ((const DemTagIdx *)a)->tag, y = ((const DemTagIdx *)b)->tag;
  return x < y ? -1 : x > y ? 1 : 0;
}

static PetscInt DemTagFind(const DemTagIdx *t, PetscInt n, size_t tag)
{
  PetscInt lo = 0, hi = n - 1;
  while (lo <= hi) {
    PetscInt mid = lo + (hi - lo) / 2;
    if (t[mid].tag == tag) return t[mid].idx;
    if (t[mid].tag < tag) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static const PetscReal *DemSortX; /* qsort has no context argument: the array being sorted on */
static int DemXCmp(const void *a, const void *b)
{
  PetscReal x = DemSortX[3 * *(const PetscInt *)a], y = DemSortX[3 * *(const PetscInt *)b];
  return x < y ? -1 : x > y ? 1 : (*(const PetscInt *)a - *(const PetscInt *)b);
}

/* merges vertices closer than tol (relative to the bounding-box diagonal), drops unused ones and
   triangles that became degenerate (two equal vertex indices) */
static PetscErrorCode DemTriMeshCompact(DemTriMesh *m)
{
  PetscInt  *ord, *rep, *newidx, nv = 0, nt = 0;
  PetscReal  lo[3] = {PETSC_MAX_REAL, PETSC_MAX_REAL, PETSC_MAX_REAL}, hi[3] = {-PETSC_MAX_REAL, -PETSC_MAX_REAL, -PETSC_MAX_REAL}, tol, *x;

  PetscFunctionBegin;
  if (!m->nv) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < m->nv; i++)
    for (int d = 0; d < 3; d++) lo[d] = PetscMin(lo[d], m->x[3 * i + d]), hi[d] = PetscMax(hi[d], m->x[3 * i + d]);
  tol = 1e-9 * PetscSqrtReal(PetscSqr(hi[0] - lo[0]) + PetscSqr(hi[1] - lo[1]) + PetscSqr(hi[2] - lo[2]));
  PetscCall(PetscMalloc3(m->nv, &ord, m->nv, &rep, m->nv, &newidx));
  for (PetscInt i = 0; i < m->nv; i++) ord[i] = i, rep[i] = i, newidx[i] = -1;
  DemSortX = m->x;
  qsort(ord, (size_t)m->nv, sizeof(PetscInt), DemXCmp);
  for (PetscInt k = 0; k < m->nv; k++) {
    PetscInt i = ord[k];
    if (rep[i] != i) continue;
    for (PetscInt l = k + 1; l < m->nv && m->x[3 * ord[l]] - m->x[3 * i] <= tol; l++) {
      PetscInt j = ord[l];
      if (rep[j] != j) continue;
      if (PetscAbsReal(m->x[3 * j + 1] - m->x[3 * i + 1]) <= tol && PetscAbsReal(m->x[3 * j + 2] - m->x[3 * i + 2]) <= tol) rep[j] = i;
    }
  }
  for (PetscInt t = 0; t < m->nt; t++) {
    PetscInt v[3];
    for (int k = 0; k < 3; k++) v[k] = rep[m->tri[3 * t + k]];
    if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]) continue;
    for (int k = 0; k < 3; k++) {
      if (newidx[v[k]] < 0) newidx[v[k]] = nv++;
      m->tri[3 * nt + k] = newidx[v[k]];
    }
    nt++;
  }
  PetscCall(PetscMalloc1(3 * PetscMax(nv, 1), &x));
  for (PetscInt i = 0; i < m->nv; i++)
    if (newidx[i] >= 0)
      for (int d = 0; d < 3; d++) x[3 * newidx[i] + d] = m->x[3 * i + d];
  PetscCall(PetscFree(m->x));
  m->x  = x;
  m->nv = nv;
  m->nt = nt;
  PetscCall(PetscFree3(ord, rep, newidx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* what a read of the Gmsh model holds; freed whatever happens (fuzzing: no leak on errors) */
typedef struct {
  size_t    *ntag, *etag, *enode;
  double    *coord, *par;
  int       *dimtags;
  char      *type;
  DemTagIdx *map;
  PetscInt  *tri;
} DemGmshScratch;

#define DemGmshFreeP(p) \
  do { \
    if (p) gmshFree(p); \
    (p) = NULL; \
  } while (0)

static PetscErrorCode DemGmshScratchFree(DemGmshScratch *sc)
{
  PetscFunctionBegin;
  DemGmshFreeP(sc->ntag);
  DemGmshFreeP(sc->etag);
  DemGmshFreeP(sc->enode);
  DemGmshFreeP(sc->coord);
  DemGmshFreeP(sc->par);
  DemGmshFreeP(sc->dimtags);
  DemGmshFreeP(sc->type);
  PetscCall(PetscFree(sc->map));
  PetscCall(PetscFree(sc->tri));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemTriMeshFromGmshModel_Inner(const char *what, PetscBool drop_planar, PetscReal scale, DemGmshScratch *sc, DemTriMesh *m)
{
  size_t   nntag = 0, ncoord = 0, npar = 0, netag = 0, nenode = 0, ndimtags = 0;
  PetscInt nt = 0, cap = 0;

  PetscFunctionBegin;
  DemGmshCall(what, gmshModelMeshGetNodes, &sc->ntag, &nntag, &sc->coord, &ncoord, &sc->par, &npar, -1, -1, 0, 0);
  PetscCheck(ncoord == 3 * nntag, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: Gmsh returned %zu coordinates for %zu nodes", what, ncoord, nntag);
  PetscCall(PetscMalloc1(PetscMax(nntag, 1), &sc->map));
  for (size_t i = 0; i < nntag; i++) sc->map[i].tag = sc->ntag[i], sc->map[i].idx = (PetscInt)i;
  qsort(sc->map, nntag, sizeof(DemTagIdx), DemTagCmp);
  m->nv = (PetscInt)nntag;
  PetscCall(PetscMalloc1(3 * PetscMax(m->nv, 1), &m->x));
  for (size_t i = 0; i < 3 * nntag; i++) m->x[i] = scale * sc->coord[i];
  DemGmshCall(what, gmshModelGetEntities, &sc->dimtags, &ndimtags, 2);
  for (size_t s = 0; s < ndimtags / 2; s++) {
    int tag = sc->dimtags[2 * s + 1];
    if (drop_planar) {
      PetscBool planar;
      DemGmshCall(what, gmshModelGetType, 2, tag, &sc->type);
      planar = (sc->type && !strcmp(sc->type, "Plane")) ? PETSC_TRUE : PETSC_FALSE;
      DemGmshFreeP(sc->type);
      if (planar) continue;
    }
    DemGmshCall(what, gmshModelMeshGetElementsByType, 2, &sc->etag, &netag, &sc->enode, &nenode, tag, 0, 1);
    PetscCheck(nenode == 3 * netag, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: Gmsh returned %zu nodes for %zu triangles", what, nenode, netag);
    if (nt + (PetscInt)netag > cap) {
      PetscInt *nt2;
      cap = PetscMax(2 * cap, nt + (PetscInt)netag);
      PetscCall(PetscMalloc1(3 * cap, &nt2));
      if (nt) PetscCall(PetscArraycpy(nt2, sc->tri, 3 * nt));
      PetscCall(PetscFree(sc->tri));
      sc->tri = nt2;
    }
    for (size_t e = 0; e < netag; e++) {
      for (int k = 0; k < 3; k++) {
        PetscInt idx = DemTagFind(sc->map, (PetscInt)nntag, sc->enode[3 * e + k]);
        PetscCheck(idx >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "%s: triangle %zu refers to node %zu that Gmsh did not return", what, (size_t)sc->etag[e], sc->enode[3 * e + k]);
        sc->tri[3 * nt + k] = idx;
      }
      nt++;
    }
    DemGmshFreeP(sc->etag);
    DemGmshFreeP(sc->enode);
  }
  m->nt   = nt;
  m->tri  = sc->tri;
  sc->tri = NULL;
  if (!m->tri) PetscCall(PetscMalloc1(3, &m->tri));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the triangles of the current Gmsh model (all surfaces, or the non-planar ones), scaled; on an
   error nothing stays allocated */
static PetscErrorCode DemTriMeshFromGmshModel(const char *what, PetscBool drop_planar, PetscReal scale, DemTriMesh *m)
{
  DemGmshScratch sc;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(m, sizeof(*m)));
  PetscCall(PetscMemzero(&sc, sizeof(sc)));
  ierr = DemTriMeshFromGmshModel_Inner(what, drop_planar, scale, &sc, m);
  PetscCall(DemGmshScratchFree(&sc));
  if (!ierr) ierr = DemTriMeshCompact(m);
  if (ierr) {
    PetscCall(DemTriMeshDestroy(m));
    PetscCall(ierr);
  }
  if (m->nt == 0) {
    PetscCall(DemTriMeshDestroy(m));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: no triangles (the file or geometry has no surface mesh of 3-node triangles, or all of them are degenerate)", what);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemGmshSetSize(PetscReal h)
{
  int ierr = 0;

  PetscFunctionBegin;
  if (!(h > 0)) PetscFunctionReturn(PETSC_SUCCESS);
  gmshOptionSetNumber("Mesh.MeshSizeMax", h, &ierr);
  if (ierr) DemGmshCall("mesh size", gmshOptionSetNumber, "Mesh.CharacteristicLengthMax", h);
  gmshOptionSetNumber("Mesh.MeshSizeMin", 0.5 * h, &ierr);
  if (ierr) DemGmshCall("mesh size", gmshOptionSetNumber, "Mesh.CharacteristicLengthMin", 0.5 * h);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemGmshResetSize(void)
{
  int ierr = 0;

  PetscFunctionBegin;
  gmshOptionSetNumber("Mesh.MeshSizeMax", 1e22, &ierr);
  if (ierr) gmshOptionSetNumber("Mesh.CharacteristicLengthMax", 1e22, &ierr);
  gmshOptionSetNumber("Mesh.MeshSizeMin", 0, &ierr);
  if (ierr) gmshOptionSetNumber("Mesh.CharacteristicLengthMin", 0, &ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool DemHasExt(const char *path, const char *ext)
{
  size_t lp = strlen(path), le = strlen(ext);
  if (lp < le) return PETSC_FALSE;
  for (size_t i = 0; i < le; i++) {
    char c = path[lp - le + i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != ext[i]) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* the next whitespace-separated token of [*p, end) into tok (at most len - 1 chars; longer
   tokens are cut, which no valid keyword or number needs); counts newlines into *line */
static PetscBool DemSTLToken(const char **p, const char *end, char *tok, size_t len, PetscInt *line)
{
  const char *q = *p;
  size_t      n = 0;
  while (q < end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n' || *q == '\f' || *q == '\v')) {
    if (*q == '\n') (*line)++;
    q++;
  }
  if (q >= end) return PETSC_FALSE;
  while (q < end && !(*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n' || *q == '\f' || *q == '\v')) {
    if (n + 1 < len) tok[n++] = *q;
    q++;
  }
  tok[n] = 0;
  *p     = q;
  return PETSC_TRUE;
}

static void DemSTLSkipLine(const char **p, const char *end)
{
  while (*p < end && **p != '\n') (*p)++;
}

/* the whole file into *buf (NUL-terminated; PetscFree it) of *size bytes */
static PetscErrorCode DemReadWhole(const char *path, char **buf, long *size)
{
  FILE          *fp = fopen(path, "rb");
  PetscErrorCode ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  *buf = NULL;
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "mesh '%s': cannot open the file (%s)", path, strerror(errno));
  if (fseek(fp, 0, SEEK_END) || (*size = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
    fclose(fp);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "mesh '%s': cannot read the file", path);
  }
  ierr = PetscMalloc1((size_t)*size + 1, buf);
  if (!ierr && fread(*buf, 1, (size_t)*size, fp) != (size_t)*size) ierr = PETSC_ERR_FILE_READ;
  fclose(fp);
  if (ierr) {
    PetscCall(PetscFree(*buf));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "mesh '%s': cannot read the file", path);
  }
  (*buf)[*size] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemSTLCheck - the structure of an STL file before Gmsh reads it. Gmsh's reader takes a file
  that begins with "solid" as ASCII and, when that yields no triangle, reads it again as binary
  with the triangle count from byte 80: on a malformed file that count is garbage and the reader
  allocates without bound (the stl fuzz target found it: out-of-memory in GModel::readSTL on
  "facet normal 0 0 q"). Accepted: a binary STL (84 + 50 n bytes, n > 0 the count at byte 80;
  its 80-byte header may begin with "solid"), or an ASCII one made of the records
  solid NAME / facet normal x y z / outer loop / vertex x y z (three times) / endloop /
  endfacet / endsolid NAME, keywords in any case, finite numbers. Anything else is refused
  with the line and what was expected.
*/
static PetscErrorCode DemSTLCheck(const char *path)
{
  long        size;
  char       *buf = NULL, tok[64], msg[160] = "";
  const char *p, *end;
  PetscInt    line = 1, nfacet = 0;

  PetscFunctionBegin;
  PetscCall(DemReadWhole(path, &buf, &size));
  if (size >= 84) { /* binary: the size the count at byte 80 says */
    const unsigned char *c = (const unsigned char *)buf + 80;
    uint64_t             n = (uint64_t)c[0] | (uint64_t)c[1] << 8 | (uint64_t)c[2] << 16 | (uint64_t)c[3] << 24;
    if (n > 0 && 84 + 50 * n == (uint64_t)size) {
      PetscCall(PetscFree(buf));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  p   = buf;
  end = buf + size;
#define DEM_STL_EXPECT(word) \
  do { \
    if (!DemSTLToken(&p, end, tok, sizeof(tok), &line) || strcasecmp(tok, word)) { \
      snprintf(msg, sizeof(msg), "expected '%s', got '%.32s'", word, p < end || tok[0] ? tok : "end of file"); \
      goto bad; \
    } \
  } while (0)
#define DEM_STL_NUMBERS() \
  for (int k = 0; k < 3; k++) { \
    char *e; \
    double v; \
    if (!DemSTLToken(&p, end, tok, sizeof(tok), &line)) { snprintf(msg, sizeof(msg), "expected a number, got the end of the file"); goto bad; } \
    v = strtod(tok, &e); \
    if (e == tok || *e || !isfinite(v)) { snprintf(msg, sizeof(msg), "expected a finite number, got '%.32s'", tok); goto bad; } \
  }
  if (!DemSTLToken(&p, end, tok, sizeof(tok), &line) || strcasecmp(tok, "solid")) {
    snprintf(msg, sizeof(msg), "neither a binary STL (84 + 50 n bytes with n triangles at byte 80, here %ld bytes) nor an ASCII one (beginning with 'solid')", size);
    goto bad;
  }
  DemSTLSkipLine(&p, end);
  while (DemSTLToken(&p, end, tok, sizeof(tok), &line)) {
    if (!strcasecmp(tok, "facet")) {
      DEM_STL_EXPECT("normal");
      DEM_STL_NUMBERS();
      DEM_STL_EXPECT("outer");
      DEM_STL_EXPECT("loop");
      for (int v = 0; v < 3; v++) {
        DEM_STL_EXPECT("vertex");
        DEM_STL_NUMBERS();
      }
      DEM_STL_EXPECT("endloop");
      DEM_STL_EXPECT("endfacet");
      nfacet++;
    } else if (!strcasecmp(tok, "endsolid") || !strcasecmp(tok, "solid")) DemSTLSkipLine(&p, end);
    else {
      snprintf(msg, sizeof(msg), "expected 'facet', 'endsolid' or 'solid', got '%.32s'", tok);
      goto bad;
    }
  }
  if (!nfacet) {
    snprintf(msg, sizeof(msg), "an ASCII STL without a facet (no triangles)");
    goto bad;
  }
#undef DEM_STL_EXPECT
#undef DEM_STL_NUMBERS
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
bad:
  PetscCall(PetscFree(buf));
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mesh '%s': line %" PetscInt_FMT ": malformed STL: %s", path, line, msg);
}

/* nodes of a Gmsh element type (MSH format documentation, "elm-type"), 0 for a type not read */
static int DemMshTypeNodes(long long type)
{
  static const int nn[32] = {0, 2, 3, 4, 4, 8, 6, 5, 3, 6, 9, 10, 27, 18, 14, 1, 8, 20, 15, 13, 9, 10, 12, 15, 15, 21, 4, 5, 6, 20, 35, 56};
  return type >= 1 && type < 32 ? nn[type] : 0;
}

static int DemCmpLL(const void *a, const void *b)
{
  const long long x = *(const long long *)a, y = *(const long long *)b;
  return x < y ? -1 : x > y;
}

/*
  DemMshCheck - the structure of a Gmsh .msh file before Gmsh reads it. Gmsh's MSH reader trusts
  the file's counts and node references: an element that names a node its $Nodes section does
  not list crashes it (SEGV in GModel::_associateEntityWithMeshVertices; the stl fuzz target found
  it, tests/fuzz/regressions/stl-msh-undeclared-node.msh). Accepted: ASCII MSH 2.x and 4.1, a
  $MeshFormat section first, then sections $Name ... $EndName; in $Nodes and $Elements the
  counts must match the records that follow, tags be positive integers, node tags unique,
  coordinates finite numbers, element types Gmsh's types 1-31, and every node an element names
  must be listed in $Nodes (which must come before $Elements). Other sections are passed over.
  Binary files and other versions are refused, saying what is accepted.
*/
static PetscErrorCode DemMshCheck(const char *path)
{
  long        size;
  char       *buf = NULL, tok[64], msg[200] = "";
  const char *p, *end;
  PetscInt    line = 1;
  long long  *tags = NULL, ntag = 0;
  double      version = 0;

  PetscFunctionBegin;
  PetscCall(DemReadWhole(path, &buf, &size));
  p   = buf;
  end = buf + size;
#define DEM_MSH_TOKEN(what) \
  do { \
    if (!DemSTLToken(&p, end, tok, sizeof(tok), &line)) { snprintf(msg, sizeof(msg), "expected %s, got the end of the file", what); goto bad; } \
  } while (0)
#define DEM_MSH_EXPECT(word) \
  do { \
    DEM_MSH_TOKEN("'" word "'"); \
    if (strcmp(tok, word)) { snprintf(msg, sizeof(msg), "expected '%s', got '%.32s'", word, tok); goto bad; } \
  } while (0)
#define DEM_MSH_INT(var, lo, hi, what) \
  do { \
    char *e_; \
    DEM_MSH_TOKEN(what); \
    errno = 0; \
    var   = strtoll(tok, &e_, 10); \
    if (e_ == tok || *e_ || errno || (var) < (lo) || (var) > (hi)) { snprintf(msg, sizeof(msg), "expected %s (an integer from %lld to %lld), got '%.32s'", what, (long long)(lo), (long long)(hi), tok); goto bad; } \
  } while (0)
#define DEM_MSH_REAL(what) \
  do { \
    char  *e_; \
    double v_; \
    DEM_MSH_TOKEN(what); \
    v_ = strtod(tok, &e_); \
    if (e_ == tok || *e_ || !isfinite(v_)) { snprintf(msg, sizeof(msg), "expected %s (a finite number), got '%.32s'", what, tok); goto bad; } \
  } while (0)
#define DEM_MSH_NODE_KNOWN(t) \
  do { \
    if (!tags || !bsearch(&(t), tags, (size_t)ntag, sizeof(*tags), DemCmpLL)) { snprintf(msg, sizeof(msg), "an element names node %lld, which $Nodes does not list", (long long)(t)); goto bad; } \
  } while (0)
/* MSH 4.1 section header: number of entity blocks, of records, smallest and largest tag */
#define DEM_MSH_HEADER4(nb, n, what) \
  do { \
    long long t_; \
    DEM_MSH_INT(nb, 0, maxcount, "the number of entity blocks"); \
    DEM_MSH_INT(n, 0, maxcount, "the number of " what); \
    DEM_MSH_INT(t_, 0, maxtag, "the smallest tag"); \
    DEM_MSH_INT(t_, 0, maxtag, "the largest tag"); \
  } while (0)
  {
    const long long maxcount = size / 2 + 1; /* no count can exceed the file's tokens */
    const long long maxtag   = PETSC_MAX_INT;
    long long       ftype, dsize;
    char           *e;

    DEM_MSH_EXPECT("$MeshFormat");
    DEM_MSH_TOKEN("the format version");
    version = strtod(tok, &e);
    if (e == tok || *e) { snprintf(msg, sizeof(msg), "expected the format version, got '%.32s'", tok); goto bad; }
    DEM_MSH_INT(ftype, 0, 1, "the file type (0 ASCII, 1 binary)");
    DEM_MSH_INT(dsize, 1, 64, "the data size");
    if (ftype != 0) { snprintf(msg, sizeof(msg), "a binary .msh file is not read: write it as ASCII (Gmsh: Mesh.Binary = 0)"); goto bad; }
    if (!(version >= 2 && version < 3) && version != 4.1) { snprintf(msg, sizeof(msg), "MSH version %g is not read (accepted: ASCII 2.x and 4.1)", version); goto bad; }
    DEM_MSH_EXPECT("$EndMeshFormat");
    while (DemSTLToken(&p, end, tok, sizeof(tok), &line)) {
      if (tok[0] != '$' || !strncmp(tok, "$End", 4)) { snprintf(msg, sizeof(msg), "expected a section ('$Name'), got '%.32s'", tok); goto bad; }
      if (!strcmp(tok, "$Nodes")) {
        long long n, nb = 1, got = 0;
        if (tags) { snprintf(msg, sizeof(msg), "a second $Nodes section"); goto bad; }
        if (version >= 4) DEM_MSH_HEADER4(nb, n, "nodes");
        else DEM_MSH_INT(n, 0, maxcount, "the number of nodes");
        if (PetscMalloc1((size_t)n + 1, &tags)) { snprintf(msg, sizeof(msg), "no memory for %lld nodes", n); goto bad; }
        for (long long bl = 0; bl < nb; bl++) {
          long long dim = 3, par = 0, nin = n, ent;
          if (version >= 4) {
            DEM_MSH_INT(dim, 0, 3, "an entity dimension");
            DEM_MSH_INT(ent, -maxtag, maxtag, "an entity tag");
            DEM_MSH_INT(par, 0, 1, "the parametric flag");
            DEM_MSH_INT(nin, 0, n - got, "the number of nodes of the block (at most the nodes left)");
            (void)ent;
            for (long long k = 0; k < nin; k++) DEM_MSH_INT(tags[got + k], 1, maxtag, "a node tag");
            for (long long k = 0; k < nin; k++)
              for (long long c = 0; c < 3 + (par ? dim : 0); c++) DEM_MSH_REAL("a node coordinate");
          } else {
            for (long long k = 0; k < nin; k++) {
              DEM_MSH_INT(tags[k], 1, maxtag, "a node tag");
              for (int c = 0; c < 3; c++) DEM_MSH_REAL("a node coordinate");
            }
          }
          got += nin;
        }
        if (got != n) { snprintf(msg, sizeof(msg), "$Nodes announces %lld nodes, its blocks hold %lld", n, got); goto bad; }
        DEM_MSH_EXPECT("$EndNodes");
        ntag = n;
        qsort(tags, (size_t)ntag, sizeof(*tags), DemCmpLL);
        for (long long k = 1; k < ntag; k++)
          if (tags[k] == tags[k - 1]) { snprintf(msg, sizeof(msg), "node tag %lld is listed twice", tags[k]); goto bad; }
      } else if (!strcmp(tok, "$Elements")) {
        long long m, nb = 1, got = 0;
        if (!tags) { snprintf(msg, sizeof(msg), "$Elements before $Nodes"); goto bad; }
        if (version >= 4) {
          DEM_MSH_HEADER4(nb, m, "elements");
          for (long long bl = 0; bl < nb; bl++) {
            long long dim, ent, type, nin;
            int       k;
            DEM_MSH_INT(dim, 0, 3, "an entity dimension");
            DEM_MSH_INT(ent, -maxtag, maxtag, "an entity tag");
            DEM_MSH_INT(type, 1, 31, "an element type (1-31)");
            DEM_MSH_INT(nin, 0, m - got, "the number of elements of the block (at most the elements left)");
            (void)dim, (void)ent;
            k = DemMshTypeNodes(type);
            for (long long q = 0; q < nin; q++) {
              long long et, nt;
              DEM_MSH_INT(et, 1, maxtag, "an element tag");
              for (int c = 0; c < k; c++) {
                DEM_MSH_INT(nt, 1, maxtag, "a node tag of an element");
                DEM_MSH_NODE_KNOWN(nt);
              }
            }
            got += nin;
          }
          if (got != m) { snprintf(msg, sizeof(msg), "$Elements announces %lld elements, its blocks hold %lld", m, got); goto bad; }
        } else {
          DEM_MSH_INT(m, 0, maxcount, "the number of elements");
          for (long long q = 0; q < m; q++) {
            long long et, type, ntg, v;
            int       k;
            DEM_MSH_INT(et, 1, maxtag, "an element tag");
            DEM_MSH_INT(type, 1, 31, "an element type (1-31)");
            DEM_MSH_INT(ntg, 0, 64, "the number of element tags");
            for (long long c = 0; c < ntg; c++) DEM_MSH_INT(v, -maxtag, maxtag, "an element tag value");
            k = DemMshTypeNodes(type);
            for (int c = 0; c < k; c++) {
              DEM_MSH_INT(v, 1, maxtag, "a node tag of an element");
              DEM_MSH_NODE_KNOWN(v);
            }
          }
        }
        DEM_MSH_EXPECT("$EndElements");
      } else { /* another section: passed over up to its end marker */
        char endm[72];
        snprintf(endm, sizeof(endm), "$End%s", tok + 1);
        for (;;) {
          DEM_MSH_TOKEN(endm);
          if (!strcmp(tok, endm)) break;
        }
      }
    }
  }
#undef DEM_MSH_TOKEN
#undef DEM_MSH_EXPECT
#undef DEM_MSH_INT
#undef DEM_MSH_REAL
#undef DEM_MSH_NODE_KNOWN
#undef DEM_MSH_HEADER4
  PetscCall(PetscFree(tags));
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
bad:
  PetscCall(PetscFree(tags));
  PetscCall(PetscFree(buf));
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "mesh '%s': line %" PetscInt_FMT ": malformed .msh: %s", path, line, msg);
}

PetscErrorCode DemTriMeshLoadFileSized(const char *path, PetscReal scale, PetscReal h, DemTriMesh *m)
{
  PetscBool cad = PETSC_FALSE;
  char      what[PETSC_MAX_PATH_LEN + 32];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(m, sizeof(*m)));
  PetscCheck(scale > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "mesh '%s': scale must be > 0 (got %g)", path, (double)scale);
  PetscCheck(path && path[0], PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "mesh: empty file name");
  if (DemHasExt(path, ".step") || DemHasExt(path, ".stp") || DemHasExt(path, ".brep") || DemHasExt(path, ".brp") || DemHasExt(path, ".iges") || DemHasExt(path, ".igs")) cad = PETSC_TRUE;
  else
    PetscCheck(DemHasExt(path, ".stl") || DemHasExt(path, ".msh"), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "mesh '%s': unknown file type (allowed: .stl, .msh, .step/.stp, .brep/.brp, .iges/.igs)", path);
  PetscCheck(access(path, R_OK) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "mesh '%s': cannot read the file (%s)", path, strerror(errno));
  PetscCall(PetscSNPrintf(what, sizeof(what), "mesh '%s'", path));
  PetscCall(DemGmshInitialize());
  DemGmshCall0(what, gmshClear);
  if (DemHasExt(path, ".stl")) PetscCall(DemSTLCheck(path)); /* before Gmsh's reader sees it */
  if (DemHasExt(path, ".msh")) PetscCall(DemMshCheck(path));
  DemGmshCall(what, gmshOpen, path);
  if (cad) {
    PetscCall(DemGmshSetSize(h));
    DemGmshCall(what, gmshModelMeshGenerate, 2);
    PetscCall(DemGmshResetSize());
  }
  PetscCall(DemTriMeshFromGmshModel(what, PETSC_FALSE, scale, m));
  DemGmshCall0(what, gmshClear);
  if (cad) PetscCall(DemTriMeshOrient(m, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemTriMeshLoadFile(const char *path, PetscReal scale, DemTriMesh *m)
{
  PetscFunctionBegin;
  PetscCall(DemTriMeshLoadFileSized(path, scale, 0, m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemTriMeshFromOcc(PetscInt n, const DemOccSolid s[], PetscBool fuse, PetscBool drop_planar, PetscReal h, PetscReal scale, DemTriMesh *m)
{
  const char *what = "OCC geometry";
  int        *tags;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(m, sizeof(*m)));
  PetscCheck(n > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: no solids", what);
  PetscCheck(scale > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: scale must be > 0 (got %g)", what, (double)scale);
  PetscCall(DemGmshInitialize());
  DemGmshCall0(what, gmshClear);
  PetscCall(PetscMalloc1(2 * n, &tags));
  for (PetscInt i = 0; i < n; i++) {
    const PetscReal *p = s[i].p;
    int              gierr = 0, tag = -1;
    switch (s[i].type) {
    case DEM_OCC_BOX:
      tag = gmshModelOccAddBox(p[0], p[1], p[2], p[3], p[4], p[5], -1, &gierr);
      break;
    case DEM_OCC_CYLINDER:
      tag = gmshModelOccAddCylinder(p[0], p[1], p[2], p[3], p[4], p[5], p[6], -1, 2 * PETSC_PI, &gierr);
      break;
    case DEM_OCC_CONE:
      tag = gmshModelOccAddCone(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], -1, 2 * PETSC_PI, &gierr);
      break;
    case DEM_OCC_SPHERE:
      tag = gmshModelOccAddSphere(p[0], p[1], p[2], p[3], -1, -PETSC_PI / 2, PETSC_PI / 2, 2 * PETSC_PI, &gierr);
      break;
    }
    if (gierr) {
      PetscCall(PetscFree(tags));
      PetscCall(DemGmshError_Private(gierr, "gmshModelOccAdd", what));
    }
    tags[2 * i]     = 3;
    tags[2 * i + 1] = tag;
  }
  if (fuse && n > 1) {
    int    *out = NULL, **outmap = NULL;
    size_t  nout = 0, *outmap_n = NULL, outmap_nn = 0;
    DemGmshCall(what, gmshModelOccFuse, tags, 2, tags + 2, (size_t)(2 * (n - 1)), &out, &nout, &outmap, &outmap_n, &outmap_nn, -1, 1, 1);
    if (out) gmshFree(out);
    for (size_t i = 0; i < outmap_nn; i++) gmshFree(outmap[i]);
    if (outmap) gmshFree(outmap);
    if (outmap_n) gmshFree(outmap_n);
  }
  PetscCall(PetscFree(tags));
  DemGmshCall0(what, gmshModelOccSynchronize);
  PetscCall(DemGmshSetSize(h));
  DemGmshCall(what, gmshModelMeshGenerate, 2);
  PetscCall(DemGmshResetSize());
  PetscCall(DemTriMeshFromGmshModel(what, drop_planar, scale, m));
  DemGmshCall0(what, gmshClear);
  PetscCall(DemTriMeshOrient(m, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscInt lo, hi, t, dir; /* dir 1: the triangle runs lo -> hi */
} DemHalfEdge;

static int DemHalfEdgeCmp(const void *a, const void *b)
{
  const DemHalfEdge *x = (const DemHalfEdge *)a, *y = (const DemHalfEdge *)b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return 0;
}

static PetscErrorCode DemTriMeshHalfEdges(const DemTriMesh *m, DemHalfEdge **he)
{
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(3 * PetscMax(m->nt, 1), he));
  for (PetscInt t = 0; t < m->nt; t++)
    for (int k = 0; k < 3; k++) {
      PetscInt     u = m->tri[3 * t + k], v = m->tri[3 * t + (k + 1) % 3];
      DemHalfEdge *e = &(*he)[3 * t + k];
      e->lo  = PetscMin(u, v);
      e->hi  = PetscMax(u, v);
      e->t   = t;
      e->dir = u < v ? 1 : 0;
    }
  qsort(*he, (size_t)(3 * m->nt), sizeof(DemHalfEdge), DemHalfEdgeCmp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemTriMeshEdges(const DemTriMesh *m, PetscInt *ne, PetscInt **ev, PetscInt **te, PetscInt **et)
{
  DemHalfEdge *he;
  PetscInt     n = 0, nh = 3 * m->nt;

  PetscFunctionBegin;
  PetscCall(DemTriMeshHalfEdges(m, &he));
  for (PetscInt i = 0; i < nh; i++)
    if (i == 0 || he[i].lo != he[i - 1].lo || he[i].hi != he[i - 1].hi) n++;
  PetscCall(PetscMalloc3(2 * PetscMax(n, 1), ev, 3 * PetscMax(m->nt, 1), te, 2 * PetscMax(n, 1), et));
  n = -1;
  for (PetscInt i = 0; i < nh; i++) {
    const DemHalfEdge *e = &he[i];
    PetscInt           k;
    if (i == 0 || e->lo != he[i - 1].lo || e->hi != he[i - 1].hi) {
      n++;
      (*ev)[2 * n]     = e->lo;
      (*ev)[2 * n + 1] = e->hi;
      (*et)[2 * n]     = e->t;
      (*et)[2 * n + 1] = -1;
    } else if ((*et)[2 * n + 1] < 0) (*et)[2 * n + 1] = e->t;
    for (k = 0; k < 3; k++) {
      PetscInt u = m->tri[3 * e->t + k], v = m->tri[3 * e->t + (k + 1) % 3];
      if (PetscMin(u, v) == e->lo && PetscMax(u, v) == e->hi) break;
    }
    (*te)[3 * e->t + k] = n;
  }
  *ne = n + 1;
  PetscCall(PetscFree(he));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void DemTriSignedVolume(const DemTriMesh *m, const PetscReal o[3], PetscInt t, PetscReal *det6)
{
  const PetscReal *a = m->x + 3 * m->tri[3 * t], *b = m->x + 3 * m->tri[3 * t + 1], *c = m->x + 3 * m->tri[3 * t + 2];
  PetscReal        A[3], B[3], C[3];
  for (int d = 0; d < 3; d++) A[d] = a[d] - o[d], B[d] = b[d] - o[d], C[d] = c[d] - o[d];
  *det6 = A[0] * (B[1] * C[2] - B[2] * C[1]) - A[1] * (B[0] * C[2] - B[2] * C[0]) + A[2] * (B[0] * C[1] - B[1] * C[0]);
}

static void DemTriMeshCentroid(const DemTriMesh *m, PetscReal o[3])
{
  o[0] = o[1] = o[2] = 0;
  for (PetscInt i = 0; i < m->nv; i++)
    for (int d = 0; d < 3; d++) o[d] += m->x[3 * i + d];
  for (int d = 0; d < 3 && m->nv; d++) o[d] /= m->nv;
}

PetscErrorCode DemTriMeshOrient(DemTriMesh *m, PetscInt *flipped)
{
  PetscInt *ev, *te, *et, ne, *comp, *queue, nflip = 0, ncomp = 0;
  PetscInt *flip;

  PetscFunctionBegin;
  PetscCall(DemTriMeshEdges(m, &ne, &ev, &te, &et));
  PetscCall(PetscMalloc3(m->nt, &comp, m->nt, &queue, m->nt, &flip));
  for (PetscInt t = 0; t < m->nt; t++) comp[t] = -1, flip[t] = 0;
  for (PetscInt s = 0; s < m->nt; s++) {
    PetscInt  qh = 0, qt = 0;
    PetscBool closed = PETSC_TRUE;
    PetscReal vol = 0, o[3];
    if (comp[s] >= 0) continue;
    comp[s]     = ncomp;
    queue[qt++] = s;
    while (qh < qt) {
      PetscInt t = queue[qh++];
      for (int k = 0; k < 3; k++) {
        PetscInt e = te[3 * t + k], u, n2;
        if (et[2 * e + 1] < 0) { closed = PETSC_FALSE; continue; }
        n2 = et[2 * e] == t ? et[2 * e + 1] : et[2 * e];
        if (comp[n2] >= 0) continue;
        /* t (as oriented now) runs u -> v on this edge; a consistent neighbour runs v -> u */
        u = m->tri[3 * t + k];
        {
          PetscInt v = m->tri[3 * t + (k + 1) % 3], same = 0;
          for (int l = 0; l < 3; l++)
            if (m->tri[3 * n2 + l] == u && m->tri[3 * n2 + (l + 1) % 3] == v) same = 1;
          if (same) {
            PetscInt tmp       = m->tri[3 * n2 + 1];
            m->tri[3 * n2 + 1] = m->tri[3 * n2 + 2];
            m->tri[3 * n2 + 2] = tmp;
            /* edge slots 0 (v0v1) and 2 (v2v0) swap with the vertex swap */
            tmp            = te[3 * n2];
            te[3 * n2]     = te[3 * n2 + 2];
            te[3 * n2 + 2] = tmp;
            flip[n2] ^= 1;
          }
        }
        comp[n2]    = ncomp;
        queue[qt++] = n2;
      }
    }
    if (closed) { /* outward: positive enclosed volume */
      DemTriMeshCentroid(m, o);
      for (PetscInt i = 0; i < qt; i++) {
        PetscReal d6;
        DemTriSignedVolume(m, o, queue[i], &d6);
        vol += d6;
      }
      if (vol < 0)
        for (PetscInt i = 0; i < qt; i++) {
          PetscInt t = queue[i], tmp = m->tri[3 * t + 1];
          m->tri[3 * t + 1] = m->tri[3 * t + 2];
          m->tri[3 * t + 2] = tmp;
          tmp               = te[3 * t];
          te[3 * t]         = te[3 * t + 2];
          te[3 * t + 2]     = tmp;
          flip[t] ^= 1;
        }
    }
    ncomp++;
  }
  for (PetscInt t = 0; t < m->nt; t++) nflip += flip[t];
  if (flipped) *flipped = nflip;
  PetscCall(PetscFree3(comp, queue, flip));
  PetscCall(PetscFree3(ev, te, et));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemTriMeshCheckClosed(const DemTriMesh *m, const char *what)
{
  DemHalfEdge *he;
  PetscInt     nh = 3 * m->nt;
  PetscReal    o[3], vol = 0, lo[3] = {PETSC_MAX_REAL, PETSC_MAX_REAL, PETSC_MAX_REAL}, hi[3] = {-PETSC_MAX_REAL, -PETSC_MAX_REAL, -PETSC_MAX_REAL}, diag;

  PetscFunctionBegin;
  PetscCheck(m->nt >= 4 && m->nv >= 4, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: not a closed surface (%" PetscInt_FMT " triangles, %" PetscInt_FMT " vertices)", what, m->nt, m->nv);
  for (PetscInt i = 0; i < m->nv; i++)
    for (int d = 0; d < 3; d++) lo[d] = PetscMin(lo[d], m->x[3 * i + d]), hi[d] = PetscMax(hi[d], m->x[3 * i + d]);
  diag = PetscSqrtReal(PetscSqr(hi[0] - lo[0]) + PetscSqr(hi[1] - lo[1]) + PetscSqr(hi[2] - lo[2]));
  /* degenerate triangles: area below 1e-12 of diag^2 */
  for (PetscInt t = 0; t < m->nt; t++) {
    const PetscReal *a = m->x + 3 * m->tri[3 * t], *b = m->x + 3 * m->tri[3 * t + 1], *c = m->x + 3 * m->tri[3 * t + 2];
    PetscReal        u[3], v[3], n[3];
    for (int d = 0; d < 3; d++) u[d] = b[d] - a[d], v[d] = c[d] - a[d];
    n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
    PetscCheck(PetscSqrtReal(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) > 1e-12 * diag * diag, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: triangle %" PetscInt_FMT " is degenerate (zero area) at (%g, %g, %g)", what, t, (double)a[0], (double)a[1], (double)a[2]);
  }
  PetscCall(DemTriMeshHalfEdges(m, &he));
  for (PetscInt i = 0; i < nh;) {
    PetscInt j = i, nfw = 0;
    while (j < nh && he[j].lo == he[i].lo && he[j].hi == he[i].hi) nfw += he[j].dir, j++;
    if (j - i != 2 || nfw != 1) {
      const PetscReal *p = m->x + 3 * he[i].lo, *q = m->x + 3 * he[i].hi;
      PetscInt         cnt = j - i, t0 = he[i].t, t1 = cnt > 1 ? he[i + 1].t : -1;
      PetscCall(PetscFree(he));
      PetscCheck(cnt != 1, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: open surface: edge (%g, %g, %g)-(%g, %g, %g) of triangle %" PetscInt_FMT " has no neighbour (a closed surface is required)", what, (double)p[0], (double)p[1], (double)p[2], (double)q[0], (double)q[1], (double)q[2], t0);
      PetscCheck(cnt == 2, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: non-manifold edge (%g, %g, %g)-(%g, %g, %g) shared by %" PetscInt_FMT " triangles (each edge must join exactly two)", what, (double)p[0], (double)p[1], (double)p[2], (double)q[0], (double)q[1], (double)q[2], cnt);
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: inconsistent orientation: triangles %" PetscInt_FMT " and %" PetscInt_FMT " run the same way along edge (%g, %g, %g)-(%g, %g, %g) (some normals are flipped)", what, t0, t1, (double)p[0], (double)p[1], (double)p[2], (double)q[0], (double)q[1], (double)q[2]);
    }
    i = j;
  }
  PetscCall(PetscFree(he));
  DemTriMeshCentroid(m, o);
  for (PetscInt t = 0; t < m->nt; t++) {
    PetscReal d6;
    DemTriSignedVolume(m, o, t, &d6);
    vol += d6 / 6;
  }
  PetscCheck(vol > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: inverted surface: enclosed volume %g <= 0 (the triangles must run counter-clockwise seen from outside)", what, (double)vol);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Divergence theorem: the solid is the signed sum of the tetrahedra (o, a, b, c) over the
  triangles, o the vertex centroid (for round-off). With A, B, C the vertices relative to o and
  D = A.(B x C) = 6 V_tet: V = D/6, int x dV = V (A + B + C)/4,
  int x_i x_j dV = D/120 (sum_k v_k,i v_k,j + S_i S_j), S = A + B + C (the apex o is the origin).
*/
PetscErrorCode DemTriMeshMassProperties(const DemTriMesh *m, PetscReal rho, PetscReal *mass, PetscReal com[3], PetscReal inertia[9])
{
  PetscReal o[3], V = 0, s1[3] = {0, 0, 0}, s2[9] = {0}, c[3], C[9], tr;

  PetscFunctionBegin;
  DemTriMeshCentroid(m, o);
  for (PetscInt t = 0; t < m->nt; t++) {
    PetscReal        D, S[3], P[3][3];
    DemTriSignedVolume(m, o, t, &D);
    for (int k = 0; k < 3; k++)
      for (int d = 0; d < 3; d++) P[k][d] = m->x[3 * m->tri[3 * t + k] + d] - o[d];
    for (int d = 0; d < 3; d++) S[d] = P[0][d] + P[1][d] + P[2][d];
    V += D / 6;
    for (int d = 0; d < 3; d++) s1[d] += D / 24 * S[d];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) s2[3 * i + j] += D / 120 * (P[0][i] * P[0][j] + P[1][i] * P[1][j] + P[2][i] * P[2][j] + S[i] * S[j]);
  }
  PetscCheck(V > 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "mass properties: enclosed volume %g <= 0 (open or inverted surface)", (double)V);
  for (int d = 0; d < 3; d++) c[d] = s1[d] / V;
  /* second moments about the centre of mass */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[3 * i + j] = rho * (s2[3 * i + j] - V * c[i] * c[j]);
  tr = C[0] + C[4] + C[8];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) inertia[3 * i + j] = (i == j ? tr : 0) - C[3 * i + j];
  *mass = rho * V;
  for (int d = 0; d < 3; d++) com[d] = o[d] + c[d];
  PetscFunctionReturn(PETSC_SUCCESS);
}
