/*
  polyhedron_contact.c - colliders polyhedron/polyhedron and polyhedron/plane
  (000_c57329b1a40312e0.txt, sections 2.4.2-2.4.4, 2.5 and 3.6).

  Every pair of sub-regions (faces, edges and vertices of the two surfaces, 000 section 2.4.3)
  that can be near is examined with its degenerate local contact problem (polyhedron.h):
  vertex-face, edge-edge, vertex-edge, vertex-vertex (eq. (34)-(36)). Face-face and edge-face
  are never solved: they are represented by the pointwise contacts of their singularities
  (000 Fig. 4c: the vertices of one face over the other, and the crossings of their edges).
  A solution is kept when (000 section 2.4.4) its parameters are in the valid range of both
  parameterizations (Fig. 1) and, as the complement of those ranges on a closed surface, the
  contact direction lies in the region of directions the feature owns: a vertex-face contact
  is owned by the face when the projection is inside the triangle (closed), a vertex-edge one
  by a convex edge when the projection lies outside both of its triangles (open, so that the
  face keeps its boundary), a vertex-vertex one by the vertex when no edge at it points
  towards the partner (closed); the body on the other side checks that its own vertex or
  edge faces the partner. Edges between coplanar triangles (the diagonals of a cube face) and
  vertices with only such edges are not features; a projection exactly on a diagonal belongs
  to the triangle of lower index.
  Contact hierarchy in concave regions (000 section 3.6, Fig. 9): a vertex-edge contact on a
  re-entrant edge is dropped when the vertex already has valid contacts with both triangles of
  that edge; a vertex-vertex contact is dropped when either vertex already has a contact with
  a triangle or an edge at the other vertex.
  The signed gap is the distance (vertex-face: along the face normal, negative behind the face
  down to -skin, or 5 % of the bounding radius in the configuration check); contacts are
  reported while gap < skin (the activation distance g_bar of barrier_hybrid). The contact
  point is the middle of the two points, the normal points from b to a, and the feature key
  (polyhedron.h) names the two sub-regions, so that friction history follows each contact: each
  gets the history slot of its (pair, key) from the neighbour list's feature slots (featslot.c),
  which keeps it across rebuilds and in checkpoints.

  Search (000 section 2.5): the neighbour list holds the body pairs whose inflated bounding
  spheres overlap (first level); then every feature of each body is tested against the other
  body's inflated bounding sphere, and candidate pairs of features by their inflated bounding
  spheres (a sphere per vertex, per edge about its middle, per triangle about its centroid)
  before their local problem is solved.
*/
#include "polyhedron.h"

/* a body in a collision: world vertices and normals of the candidate features */
typedef struct {
  const DemPolyGeom *g;
  PetscReal          s, x[3], R[9], r;
  PetscReal         *v, *fn; /* [3 nv], [3 nf] world */
  PetscReal         *fc, *em; /* [3 nf] world centroids, [4 ne] world edge middles and half-lengths (candidates) */
  PetscInt          *cv, *ce, *cf, ncv, nce, ncf; /* candidate vertices, edges, faces */
} DemPolyBody;

/* scratch of the colliders, grown when needed (never per pair) */
typedef struct {
  PetscReal *v[2], *fn[2], *fc[2], *em[2];
  PetscInt  *cv[2], *ce[2], *cf[2];
  PetscInt   cap_v[2], cap_e[2], cap_f[2];
  PetscInt  *vf, nvf, cap_vf; /* (vertex of one body, feature of the other, type) of accepted contacts */
} DemPolyScratch;
static DemPolyScratch scratch_;

/* where the contacts of one candidate pair go: the list, and the pair's index in the neighbour
   list (-1: no history, e.g. the set-up check) for the history slot of each contact */
typedef struct {
  DemContactList *cl;
  DemSim          sim;
  PetscInt        pair;
} DemPolyOut;

static PetscErrorCode DemPolyScratchReserve(int k, const DemPolyGeom *g)
{
  DemPolyScratch *S = &scratch_;

  PetscFunctionBegin;
  if (g->nv > S->cap_v[k]) {
    PetscCall(PetscFree(S->v[k]));
    PetscCall(PetscFree(S->cv[k]));
    S->cap_v[k] = PetscMax(g->nv, 2 * S->cap_v[k]);
    PetscCall(PetscMalloc1(3 * S->cap_v[k], &S->v[k]));
    PetscCall(PetscMalloc1(S->cap_v[k], &S->cv[k]));
  }
  if (g->ne > S->cap_e[k]) {
    PetscCall(PetscFree(S->ce[k]));
    PetscCall(PetscFree(S->em[k]));
    S->cap_e[k] = PetscMax(g->ne, 2 * S->cap_e[k]);
    PetscCall(PetscMalloc1(S->cap_e[k], &S->ce[k]));
    PetscCall(PetscMalloc1(4 * S->cap_e[k], &S->em[k]));
  }
  if (g->nf > S->cap_f[k]) {
    PetscCall(PetscFree(S->fn[k]));
    PetscCall(PetscFree(S->fc[k]));
    PetscCall(PetscFree(S->cf[k]));
    S->cap_f[k] = PetscMax(g->nf, 2 * S->cap_f[k]);
    PetscCall(PetscMalloc1(3 * S->cap_f[k], &S->fn[k]));
    PetscCall(PetscMalloc1(3 * S->cap_f[k], &S->fc[k]));
    PetscCall(PetscMalloc1(S->cap_f[k], &S->cf[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscReal Dot3(const PetscReal a[3], const PetscReal b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void Rot(const PetscReal R[9], const PetscReal y[3], PetscReal o[3])
{
  o[0] = R[0] * y[0] + R[1] * y[1] + R[2] * y[2];
  o[1] = R[3] * y[0] + R[4] * y[1] + R[5] * y[2];
  o[2] = R[6] * y[0] + R[7] * y[1] + R[8] * y[2];
}

/* the world vertices and normals, and the features of `P` that can come within `reach` of the
   sphere (c, rc) */
static void DemPolyCandidates(DemPolyBody *P, const PetscReal c[3], PetscReal rc, PetscReal reach)
{
  const DemPolyGeom *g = P->g;
  PetscReal          cb[3], d[3], lim;

  /* the other sphere's centre in the body frame (unscaled) */
  for (int j = 0; j < 3; j++) d[j] = c[j] - P->x[j];
  cb[0] = (P->R[0] * d[0] + P->R[3] * d[1] + P->R[6] * d[2]) / P->s;
  cb[1] = (P->R[1] * d[0] + P->R[4] * d[1] + P->R[7] * d[2]) / P->s;
  cb[2] = (P->R[2] * d[0] + P->R[5] * d[1] + P->R[8] * d[2]) / P->s;
  lim   = (rc + reach) / P->s;
  P->ncv = P->nce = P->ncf = 0;
  for (PetscInt i = 0; i < g->nv; i++) {
    const PetscReal *y = g->v + 3 * i;
    PetscReal        e[3] = {y[0] - cb[0], y[1] - cb[1], y[2] - cb[2]}, w[3];
    Rot(P->R, y, w);
    for (int j = 0; j < 3; j++) P->v[3 * i + j] = P->x[j] + P->s * w[j];
    if (g->vsharp[i] && Dot3(e, e) < lim * lim) P->cv[P->ncv++] = i;
  }
  for (PetscInt e = 0; e < g->ne; e++) {
    const PetscReal *p = g->v + 3 * g->ev[2 * e], *q = g->v + 3 * g->ev[2 * e + 1];
    PetscReal        m[3], h2 = 0, l;
    if (g->eflat[e]) continue;
    for (int j = 0; j < 3; j++) m[j] = 0.5 * (p[j] + q[j]) - cb[j], h2 += 0.25 * (q[j] - p[j]) * (q[j] - p[j]);
    l = lim + PetscSqrtReal(h2);
    if (Dot3(m, m) < l * l) {
      PetscReal y[3] = {0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])}, w[3];
      Rot(P->R, y, w);
      for (int j = 0; j < 3; j++) P->em[4 * e + j] = P->x[j] + P->s * w[j];
      P->em[4 * e + 3] = P->s * PetscSqrtReal(h2);
      P->ce[P->nce++] = e;
    }
  }
  for (PetscInt t = 0; t < g->nf; t++) {
    const PetscReal *fc = g->fc + 3 * t;
    PetscReal        m[3] = {fc[0] - cb[0], fc[1] - cb[1], fc[2] - cb[2]}, l = lim + g->fr[t];
    Rot(P->R, g->fn + 3 * t, P->fn + 3 * t);
    if (Dot3(m, m) < l * l) {
      PetscReal w[3];
      Rot(P->R, fc, w);
      for (int j = 0; j < 3; j++) P->fc[3 * t + j] = P->x[j] + P->s * w[j];
      P->cf[P->ncf++] = t;
    }
  }
}

/* the vertex i of P faces direction d (unit, away from P): no edge at it leads further along d */
static inline PetscBool DemPolyVertexFaces(const DemPolyBody *P, PetscInt i, const PetscReal d[3], PetscReal tol)
{
  const DemPolyGeom *g = P->g;
  const PetscReal   *p = P->v + 3 * i;
  for (PetscInt k = g->vstart[i]; k < g->vstart[i + 1]; k++) {
    PetscInt         e = g->vedge[k], o = g->ev[2 * e] == i ? g->ev[2 * e + 1] : g->ev[2 * e];
    const PetscReal *q = P->v + 3 * o;
    PetscReal        u[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
    if (Dot3(u, d) > tol * PetscSqrtReal(Dot3(u, u))) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* the edge e of P owns direction d (unit, away from P) at a point of it: convex edge: d points
   out of both triangles' sides (strict: the faces keep their boundary, unless `closed`);
   re-entrant edge: d is above both triangles' planes */
static inline PetscBool DemPolyEdgeFaces(const DemPolyBody *P, PetscInt e, const PetscReal d[3], PetscBool closed, PetscReal tol)
{
  const DemPolyGeom *g = P->g;
  const PetscReal   *p = P->v + 3 * g->ev[2 * e], *q = P->v + 3 * g->ev[2 * e + 1];
  PetscReal          u[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
  for (int k = 0; k < 2; k++) {
    const PetscReal *n = P->fn + 3 * g->ef[2 * e + k];
    PetscReal        t[3], len;
    if (g->econcave[e]) {
      if (Dot3(d, n) < -tol) return PETSC_FALSE;
      continue;
    }
    /* in-plane direction perpendicular to the edge, into triangle k: +-(n x u) */
    t[0] = n[1] * u[2] - n[2] * u[1];
    t[1] = n[2] * u[0] - n[0] * u[2];
    t[2] = n[0] * u[1] - n[1] * u[0];
    len  = PetscSqrtReal(Dot3(t, t));
    { /* orient t towards the triangle's centroid */
      PetscInt  tt = g->ef[2 * e + k];
      PetscReal cc[3] = {0, 0, 0};
      for (int a = 0; a < 3; a++)
        for (int j = 0; j < 3; j++) cc[j] += P->v[3 * g->f[3 * tt + a] + j] / 3;
      for (int j = 0; j < 3; j++) cc[j] -= p[j];
      if (Dot3(t, cc) < 0) len = -len;
    }
    if (closed) {
      if (Dot3(d, t) / len > tol) return PETSC_FALSE;
    } else if (!(Dot3(d, t) / len < 0)) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* the gap vector d (unit, away from P) leaves P at its edge e: outside one of the two triangles'
   planes at a convex edge, outside both at a re-entrant one (an edge-edge pair whose gap
   points into a body is a crossing of penetrated edges, not a contact) */
static inline PetscBool DemPolyEdgeOutward(const DemPolyBody *P, PetscInt e, const PetscReal d[3], PetscReal tol)
{
  const DemPolyGeom *g = P->g;
  PetscReal          c0 = Dot3(d, P->fn + 3 * g->ef[2 * e]), c1 = Dot3(d, P->fn + 3 * g->ef[2 * e + 1]);
  if (g->econcave[e]) return (c0 >= -tol && c1 >= -tol) ? PETSC_TRUE : PETSC_FALSE;
  return (c0 > 0 || c1 > 0) ? PETSC_TRUE : PETSC_FALSE;
}

/* vertex-face validity, 000 Fig. 1: N1, N2, N3 >= 0; on a flat edge the triangle of lower index
   keeps the boundary */
static inline PetscBool DemPolyFaceValid(const DemPolyGeom *g, PetscInt t, PetscReal zeta, PetscReal theta)
{
  PetscReal N[3] = {-0.5 * (zeta + theta), 0.5 * (1 + zeta), 0.5 * (1 + theta)};
  int       zeros = 0;
  for (int k = 0; k < 3; k++) {
    if (N[k] < 0) return PETSC_FALSE;
    if (N[k] == 0) {
      /* the edge opposite vertex k joins vertices k+1, k+2: edge index (k+1) % 3 */
      PetscInt e = g->fe[3 * t + (k + 1) % 3], o = g->ef[2 * e] == t ? g->ef[2 * e + 1] : g->ef[2 * e];
      if (g->eflat[e] && o < t) return PETSC_FALSE;
      zeros++;
    }
  }
  return zeros < 2; /* exactly at a vertex: the vertex owns it */
}

/* appends one pointwise contact; its history slot (friction of barrier_hybrid) is the feature
   slot of (pair, key) (featslot.c: kept across rebuilds and in checkpoints), or the pair's own
   slot for the one key that is 0 (vertex 0 against vertex 0) */
static PetscErrorCode DemPolyAppend(DemPolyOut *po, PetscInt a, PetscInt b, const PetscReal xa[3], const PetscReal xb[3], const PetscReal pa[3], const PetscReal pb[3], const PetscReal n[3], PetscReal gap, PetscReal reff, int64_t key)
{
  DemContactList *out = po->cl;
  PetscInt        c, hist = -1;

  PetscFunctionBegin;
  if (po->pair >= 0) {
    if (key) PetscCall(DemNeighbourFeatureSlot_Private(po->sim, po->pair, key, PETSC_TRUE, &hist, NULL));
    else hist = po->pair;
  }
  PetscCall(DemContactListAppend(out, &c));
  out->a[c]       = a;
  out->b[c]       = b;
  out->feature[c] = key;
  out->hist[c]    = hist;
  out->gap[c]     = gap;
  out->reff[c]    = reff;
  for (int j = 0; j < 3; j++) {
    out->nrm[3 * c + j] = n[j];
    out->p[3 * c + j]   = 0.5 * (pa[j] + pb[j]);
    out->ra[3 * c + j]  = out->p[3 * c + j] - xa[j];
    out->rb[3 * c + j]  = out->p[3 * c + j] - xb[j];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPolyMarkPush(PetscInt v, PetscInt type, PetscInt feat)
{
  DemPolyScratch *S = &scratch_;

  PetscFunctionBegin;
  if (S->nvf + 1 > S->cap_vf) {
    PetscInt *nw;
    PetscInt  cap = PetscMax(64, 2 * S->cap_vf);
    PetscCall(PetscMalloc1(3 * cap, &nw));
    if (S->nvf) PetscCall(PetscArraycpy(nw, S->vf, 3 * S->nvf));
    PetscCall(PetscFree(S->vf));
    S->vf     = nw;
    S->cap_vf = cap;
  }
  S->vf[3 * S->nvf] = v, S->vf[3 * S->nvf + 1] = type, S->vf[3 * S->nvf + 2] = feat;
  S->nvf++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscBool DemPolyMarked(PetscInt v, PetscInt type, PetscInt feat)
{
  const DemPolyScratch *S = &scratch_;
  for (PetscInt k = 0; k < S->nvf; k++)
    if (S->vf[3 * k] == v && S->vf[3 * k + 1] == type && S->vf[3 * k + 2] == feat) return PETSC_TRUE;
  return PETSC_FALSE;
}

/*
  the contacts of a pair of bodies: A (index a) and B (index b), normals from B to A.
  `side` is 0 for A's vertices against B's features, then 1 with the bodies exchanged (the
  marks for the hierarchy use type + 2 side to keep both directions apart).
*/
static PetscErrorCode DemPolyPairVertexFace(DemPolyBody *A, DemPolyBody *B, PetscInt a, PetscInt b, PetscBool swap, PetscReal skin, PetscReal lower, DemPolyOut *out)
{
  const DemPolyGeom *gb = B->g;

  PetscFunctionBegin;
  for (PetscInt ii = 0; ii < A->ncv; ii++) {
    PetscInt         i = A->cv[ii];
    const PetscReal *p = A->v + 3 * i;
    for (PetscInt tt = 0; tt < B->ncf; tt++) {
      PetscInt         t  = B->cf[tt];
      const PetscReal *x1 = B->v + 3 * gb->f[3 * t], *x2 = B->v + 3 * gb->f[3 * t + 1], *x3 = B->v + 3 * gb->f[3 * t + 2], *n = B->fn + 3 * t;
      PetscReal        c[3], zeta, theta, dist, q[3], mn[3];
      PetscReal        fr = B->s * gb->fr[t] + PetscMax(skin, -lower);
      /* second level: the vertex within the triangle's inflated bounding sphere */
      for (int j = 0; j < 3; j++) c[j] = p[j] - B->fc[3 * t + j];
      if (Dot3(c, c) >= fr * fr) continue;
      DemPolyLCPVertexFace(p, x1, x2, x3, &zeta, &theta, &dist);
      if (!(dist < skin && dist > lower)) continue;
      if (!DemPolyFaceValid(gb, t, zeta, theta)) continue;
      for (int j = 0; j < 3; j++) mn[j] = -n[j];
      DemPolyFacePoint(x1, x2, x3, zeta, theta, q);
      if (!swap) PetscCall(DemPolyAppend(out, a, b, A->x, B->x, p, q, n, dist, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_F, t)));
      else PetscCall(DemPolyAppend(out, a, b, B->x, A->x, q, p, mn, dist, B->r, DemPolyFeatureKey(DEM_POLY_F, t, DEM_POLY_V, i)));
      PetscCall(DemPolyMarkPush(i, DEM_POLY_F + 4 * (PetscInt)swap, t));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPolyPairVertexEdge(DemPolyBody *A, DemPolyBody *B, PetscInt a, PetscInt b, PetscBool swap, PetscReal skin, DemPolyOut *out)
{
  const DemPolyGeom *gb = B->g;
  const PetscReal    tol = 1e-9;

  PetscFunctionBegin;
  for (PetscInt ii = 0; ii < A->ncv; ii++) {
    PetscInt         i = A->cv[ii];
    const PetscReal *p = A->v + 3 * i;
    for (PetscInt ee = 0; ee < B->nce; ee++) {
      PetscInt         e  = B->ce[ee];
      const PetscReal *q0 = B->v + 3 * gb->ev[2 * e], *q1 = B->v + 3 * gb->ev[2 * e + 1];
      PetscReal        zeta, q[3], g[3], d, n[3], mn[3], c[3], l = B->em[4 * e + 3] + skin;
      for (int j = 0; j < 3; j++) c[j] = p[j] - B->em[4 * e + j];
      if (Dot3(c, c) >= l * l) continue; /* second level: the edge's inflated bounding sphere */
      DemPolyLCPVertexEdge(p, q0, q1, &zeta);
      if (!(zeta > -1 && zeta < 1)) continue;
      DemPolyEdgePoint(q0, q1, zeta, q);
      for (int j = 0; j < 3; j++) g[j] = p[j] - q[j];
      d = PetscSqrtReal(Dot3(g, g));
      if (!(d < skin) || d == 0) continue;
      for (int j = 0; j < 3; j++) n[j] = g[j] / d, mn[j] = -n[j];
      if (!DemPolyEdgeFaces(B, e, n, PETSC_FALSE, tol)) continue;
      /* hierarchy, 000 section 3.6: a re-entrant edge whose two triangles already hold the vertex */
      if (gb->econcave[e] && DemPolyMarked(i, DEM_POLY_F + 4 * (PetscInt)swap, gb->ef[2 * e]) && DemPolyMarked(i, DEM_POLY_F + 4 * (PetscInt)swap, gb->ef[2 * e + 1])) continue;
      if (!swap) PetscCall(DemPolyAppend(out, a, b, A->x, B->x, p, q, n, d, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_E, e)));
      else PetscCall(DemPolyAppend(out, a, b, B->x, A->x, q, p, mn, d, B->r, DemPolyFeatureKey(DEM_POLY_E, e, DEM_POLY_V, i)));
      PetscCall(DemPolyMarkPush(i, DEM_POLY_E + 4 * (PetscInt)swap, e));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the vertex i of A already has a contact with a triangle or an edge at vertex k of B */
static PetscBool DemPolyVertexHasNeighbourContact(const DemPolyGeom *gb, PetscInt i, PetscInt k, PetscInt swap)
{
  for (PetscInt m = gb->vfstart[k]; m < gb->vfstart[k + 1]; m++)
    if (DemPolyMarked(i, DEM_POLY_F + 4 * swap, gb->vface[m])) return PETSC_TRUE;
  for (PetscInt m = gb->vstart[k]; m < gb->vstart[k + 1]; m++)
    if (DemPolyMarked(i, DEM_POLY_E + 4 * swap, gb->vedge[m])) return PETSC_TRUE;
  return PETSC_FALSE;
}

static PetscErrorCode DemPolyPair(DemPolyBody *A, DemPolyBody *B, PetscInt a, PetscInt b, PetscReal skin, PetscReal lowA, PetscReal lowB, DemPolyOut *out)
{
  const DemPolyGeom *ga = A->g, *gb = B->g;
  const PetscReal    tol = 1e-9;

  PetscFunctionBegin;
  scratch_.nvf = 0;
  /* vertex-face both ways, eq. (34) */
  PetscCall(DemPolyPairVertexFace(A, B, a, b, PETSC_FALSE, skin, lowB, out));
  PetscCall(DemPolyPairVertexFace(B, A, a, b, PETSC_TRUE, skin, lowA, out));
  /* edge-edge, eq. (35) */
  for (PetscInt ii = 0; ii < A->nce; ii++) {
    PetscInt         e  = A->ce[ii];
    const PetscReal *p0 = A->v + 3 * ga->ev[2 * e], *p1 = A->v + 3 * ga->ev[2 * e + 1];
    for (PetscInt jj = 0; jj < B->nce; jj++) {
      PetscInt         f  = B->ce[jj];
      const PetscReal *q0 = B->v + 3 * gb->ev[2 * f], *q1 = B->v + 3 * gb->ev[2 * f + 1];
      PetscReal        za, zb, pa[3], pb[3], g[3], d, n[3], mn[3], c[3], l = A->em[4 * e + 3] + B->em[4 * f + 3] + skin;
      for (int j = 0; j < 3; j++) c[j] = A->em[4 * e + j] - B->em[4 * f + j];
      if (Dot3(c, c) >= l * l) continue; /* second level: inflated bounding spheres of the edges */
      if (!DemPolyLCPEdgeEdge(p0, p1, q0, q1, &za, &zb)) continue;
      if (!(za > -1 && za < 1 && zb > -1 && zb < 1)) continue;
      DemPolyEdgePoint(p0, p1, za, pa);
      DemPolyEdgePoint(q0, q1, zb, pb);
      for (int j = 0; j < 3; j++) g[j] = pa[j] - pb[j];
      d = PetscSqrtReal(Dot3(g, g));
      if (!(d < skin) || d == 0) continue;
      for (int j = 0; j < 3; j++) n[j] = g[j] / d, mn[j] = -n[j];
      if (!DemPolyEdgeOutward(B, f, n, tol) || !DemPolyEdgeOutward(A, e, mn, tol)) continue;
      PetscCall(DemPolyAppend(out, a, b, A->x, B->x, pa, pb, n, d, A->r, DemPolyFeatureKey(DEM_POLY_E, e, DEM_POLY_E, f)));
    }
  }
  /* vertex-edge both ways, eq. (36) */
  PetscCall(DemPolyPairVertexEdge(A, B, a, b, PETSC_FALSE, skin, out));
  PetscCall(DemPolyPairVertexEdge(B, A, a, b, PETSC_TRUE, skin, out));
  /* vertex-vertex */
  for (PetscInt ii = 0; ii < A->ncv; ii++) {
    PetscInt         i = A->cv[ii];
    const PetscReal *p = A->v + 3 * i;
    for (PetscInt jj = 0; jj < B->ncv; jj++) {
      PetscInt         k = B->cv[jj];
      const PetscReal *q = B->v + 3 * k;
      PetscReal        g[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]}, d = PetscSqrtReal(Dot3(g, g)), n[3];
      if (!(d < skin) || d == 0) continue;
      for (int j = 0; j < 3; j++) n[j] = g[j] / d;
      if (!DemPolyVertexFaces(B, k, n, 0)) continue;
      if (DemPolyVertexHasNeighbourContact(gb, i, k, 0) || DemPolyVertexHasNeighbourContact(ga, k, i, 1)) continue;
      PetscCall(DemPolyAppend(out, a, b, A->x, B->x, p, q, n, d, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_V, k)));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* generalized winding number of the closed surface of P about y: 1 inside, 0 outside
   (sum of the signed solid angles of the triangles, Van Oosterom and Strackee) */
static PetscReal DemPolyWinding(const DemPolyBody *P, const PetscReal y[3])
{
  const DemPolyGeom *g = P->g;
  PetscReal          w = 0;
  for (PetscInt t = 0; t < g->nf; t++) {
    PetscReal a[3], b[3], c[3], la, lb, lc, det, den;
    for (int j = 0; j < 3; j++) a[j] = P->v[3 * g->f[3 * t] + j] - y[j], b[j] = P->v[3 * g->f[3 * t + 1] + j] - y[j], c[j] = P->v[3 * g->f[3 * t + 2] + j] - y[j];
    la  = PetscSqrtReal(Dot3(a, a)), lb = PetscSqrtReal(Dot3(b, b)), lc = PetscSqrtReal(Dot3(c, c));
    det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
    den = la * lb * lc + Dot3(a, b) * lc + Dot3(b, c) * la + Dot3(c, a) * lb;
    w += 2 * PetscAtan2Real(det, den);
  }
  return w / (4 * PETSC_PI);
}

/* configuration check: every corner of A inside B is an overlap, reported with the negative
   distance to the nearest plane of B's triangles (a lower bound of the depth) */
static PetscErrorCode DemPolyOverlap(const DemPolyBody *A, const DemPolyBody *B, PetscInt a, PetscInt b, DemPolyOut *out)
{
  PetscFunctionBegin;
  for (PetscInt ii = 0; ii < A->ncv; ii++) {
    PetscInt         i = A->cv[ii];
    const PetscReal *p = A->v + 3 * i;
    PetscReal        depth = PETSC_MAX_REAL, n[3] = {0, 0, 1};
    if (DemPolyWinding(B, p) < 0.5) continue;
    for (PetscInt t = 0; t < B->g->nf; t++) {
      const PetscReal *x1 = B->v + 3 * B->g->f[3 * t], *fn = B->fn + 3 * t;
      PetscReal        d[3] = {p[0] - x1[0], p[1] - x1[1], p[2] - x1[2]}, h = -Dot3(d, fn);
      if (h < depth) depth = h, n[0] = fn[0], n[1] = fn[1], n[2] = fn[2];
    }
    PetscCall(DemPolyAppend(out, a, b, A->x, B->x, p, p, n, -PetscMax(depth, 0), A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_F, 0)));
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPolyBodySet(DemSim sim, const DemPairBatch *pb, PetscInt i, const PetscReal *shift, int slot, DemPolyBody *P)
{
  DemBodyStore *bs;

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  P->g = DemShapePolyhedronGeom_Private(sim->shapes[bs->shape[i]]);
  PetscCheck(P->g, PETSC_COMM_SELF, PETSC_ERR_PLIB, "body %" PetscInt_FMT " is not a polyhedron", i);
  PetscCall(DemPolyScratchReserve(slot, P->g));
  P->s = bs->radius[i] / P->g->rbound;
  P->r = bs->radius[i];
  for (int j = 0; j < 3; j++) P->x[j] = pb->state->x[3 * i + j] + (shift ? shift[j] : 0);
  DemQuatToMatrix(&pb->state->q[4 * i], P->R);
  P->v  = scratch_.v[slot];
  P->fn = scratch_.fn[slot];
  P->fc = scratch_.fc[slot];
  P->em = scratch_.em[slot];
  P->cv = scratch_.cv[slot];
  P->ce = scratch_.ce[slot];
  P->cf = scratch_.cf[slot];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode DemCollide_PolyhedronPolyhedron(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_PolyhedronPolyhedron(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  DemSim       sim = pb->sim;
  DemBodyStore *bs;
  DemPolyOut    po = {out, sim, -1};

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt a = pb->a[k], b = pb->b[k];
    DemPolyBody    A, B;
    PetscReal      d[3], rs = bs->radius[a] + bs->radius[b] + skin, lowA, lowB;
    for (int j = 0; j < 3; j++) d[j] = pb->state->x[3 * a + j] - pb->state->x[3 * b + j] - (pb->shift ? pb->shift[3 * k + j] : 0);
    if (Dot3(d, d) >= rs * rs) continue; /* first level: inflated bounding spheres */
    PetscCall(DemPolyBodySet(sim, pb, a, NULL, 0, &A));
    PetscCall(DemPolyBodySet(sim, pb, b, pb->shift ? pb->shift + 3 * k : NULL, 1, &B));
    lowA = skin > 0 ? -skin : -0.05 * A.r;
    lowB = skin > 0 ? -skin : -0.05 * B.r;
    /* second level: the features of each body near the other's inflated bounding sphere */
    DemPolyCandidates(&A, B.x, B.r, PetscMax(skin, -lowA));
    DemPolyCandidates(&B, A.x, A.r, PetscMax(skin, -lowB));
    if ((!A.ncv && !A.nce) || (!B.ncv && !B.nce)) continue;
    po.pair = pb->pair ? pb->pair[k] : -1;
    if (!pb->pair && skin <= 0) { /* the set-up check for initial overlaps (sim.c) */
      PetscCall(DemPolyOverlap(&A, &B, a, b, &po));
      PetscCall(DemPolyOverlap(&B, &A, b, a, &po));
      continue;
    }
    PetscCall(DemPolyPair(&A, &B, a, b, skin, lowA, lowB, &po));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "polyhedron/polyhedron", DemCollide_PolyhedronPolyhedron)

/*
  Polyhedron (a) against plane (b): every corner vertex of a that faces the plane (no edge at it
  leads closer) with height h < skin above it is a vertex-face contact, eq. (34), normal the
  plane's; edge-plane and face-plane contacts are represented by their vertices (000 Fig. 4c).
*/
PETSC_EXTERN PetscErrorCode DemCollide_PolyhedronPlane(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_PolyhedronPlane(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  DemSim           sim = pb->sim;
  DemBodyStore    *bs;
  const PetscReal *x = pb->state->x, *q = pb->state->q;
  DemPolyOut       po = {out, sim, -1};

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt a = pb->a[k], b = pb->b[k];
    PetscReal      n0[3], n[3], h, low, xb[3];
    (void)ka, (void)kb;
    DemPolyBody    A;
    PetscCall(DemPlaneGetNormal(sim->shapes[bs->shape[b]], n0));
    DemQuatRotate(&q[4 * b], n0, n);
    for (int j = 0; j < 3; j++) xb[j] = x[3 * b + j];
    h = (x[3 * a] - xb[0]) * n[0] + (x[3 * a + 1] - xb[1]) * n[1] + (x[3 * a + 2] - xb[2]) * n[2];
    if (h - bs->radius[a] >= skin) continue;
    PetscCall(DemPolyBodySet(sim, pb, a, NULL, 0, &A));
    po.pair = pb->pair ? pb->pair[k] : -1;
    low     = skin > 0 ? -skin : -0.05 * A.r;
    if (!pb->pair) low = -PETSC_MAX_REAL; /* set-up check: any corner behind the plane */
    {
      const DemPolyGeom *g = A.g;
      for (PetscInt i = 0; i < g->nv; i++) {
        PetscReal w[3];
        Rot(A.R, g->v + 3 * i, w);
        for (int j = 0; j < 3; j++) A.v[3 * i + j] = A.x[j] + A.s * w[j];
      }
      for (PetscInt i = 0; i < g->nv; i++) {
        const PetscReal *p = A.v + 3 * i;
        PetscReal        hv = (p[0] - xb[0]) * n[0] + (p[1] - xb[1]) * n[1] + (p[2] - xb[2]) * n[2], pp[3];
        if (!g->vsharp[i] || !(hv < skin && hv > low)) continue;
        for (int j = 0; j < 3; j++) pp[j] = p[j] - hv * n[j];
        PetscCall(DemPolyAppend(&po, a, b, A.x, xb, p, pp, n, hv, A.r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_F, 0)));
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "polyhedron/plane", DemCollide_PolyhedronPlane)
