/*
  polyhedron_contact.c - colliders polyhedron/polyhedron, polyhedron/plane, sphere/polyhedron
  and polyhedron/mesh (000_c57329b1a40312e0.txt, sections 2.4.2-2.4.4, 2.5 and 3.6).

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
  which keeps it across rebuilds and in checkpoints; a contact whose key changes while the bodies
  keep touching there takes over the history of the neighbouring key it replaces (DemPolyInherit).

  Energy across feature switches (measured with verlet, no friction, tests/cases/poly_energy.sh):
  the hand-offs vertex-face -> vertex-edge -> vertex-vertex and edge-edge -> vertex-edge happen
  at equal gaps, so the barrier energy is continuous there (two cubes colliding in general
  poses: e_total within 4e-5). Not so where Fig. 4c's representation of a face-face contact changes
  its number of points: when a corner of one face slides over an edge of the other, its
  vertex-face contact becomes a vertex-edge one and the two edges at the corner add two
  edge-edge contacts at the same point, each with the full energy of the corner's contact
  (a 1 kg cube sliding off a slab with eps1 = 1e4 N/m: +6.0e-4 J = two contacts' energy in one
  step; the vertex-edge contact then leaves continuously). The jumps are of the order of one
  contact's energy, eps1 (g_bar - g)^2 / 2 in part (i), and of either sign; removing them needs
  weights on the points of a face-face contact (not done).

  Search (000 section 2.5): the neighbour list holds the body pairs whose inflated bounding
  spheres overlap (first level); then every feature of each body is tested against the other
  body's inflated bounding sphere, and candidate pairs of features by their inflated bounding
  spheres (a sphere per vertex, per edge about its middle, per triangle about its centroid)
  before their local problem is solved. While running, polyhedron pairs keep feature-level
  Verlet lists (below, DemPolyFL*): the candidate pairs of features within inflated volumes,
  reused while the bodies move less than a margin (an evaluation solves only the listed pairs
  whose distance at the build is within the activation gap plus the motion since: DemPolyFLEval);
  polyhedron/plane pairs keep the list of the corners near the plane in the same way, and
  sphere/polyhedron and polyhedron/mesh pairs lists of their candidate features
  (DemPolySphereFLCandidates, DemPolyMeshFL*; sphere/mesh pairs: mesh.c). Every list gives the
  contacts of the full candidate search, in the same order (tests/cases/poly_mesh_lists.sh).
*/
#include "polyhedron.h"
#include "mesh.h"

/* a body in a collision: world vertices and normals of the candidate features */
typedef struct {
  const DemPolyGeom *g;
  PetscReal          s, x[3], R[9], r;
  PetscReal         *v, *fn; /* [3 nv], [3 nf] world */
  PetscReal         *fc, *em; /* [3 nf] world centroids, [4 ne] world edge middles and half-lengths (candidates) */
  PetscInt          *cv, *ce, *cf, ncv, nce, ncf; /* candidate vertices, edges, faces */
  PetscInt          *vst, *fst, stamp; /* feature lists: v (fn) of vertex (face) i is current when vst[i] (fst[i]) == stamp */
  PetscBool          lazy;             /* v, fn carried to the world on demand (feature lists) */
} DemPolyBody;

/* scratch of the colliders, grown when needed (never per pair) */
typedef struct {
  PetscReal *v[2], *fn[2], *fc[2], *em[2];
  PetscInt  *cv[2], *ce[2], *cf[2];
  PetscInt   cap_v[2], cap_e[2], cap_f[2];
  PetscInt  *vst[2], *fst[2], stamp[2];
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
    PetscCall(PetscFree(S->vst[k]));
    S->cap_v[k] = PetscMax(g->nv, 2 * S->cap_v[k]);
    PetscCall(PetscMalloc1(3 * S->cap_v[k], &S->v[k]));
    PetscCall(PetscMalloc1(S->cap_v[k], &S->cv[k]));
    PetscCall(PetscCalloc1(S->cap_v[k], &S->vst[k]));
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
    PetscCall(PetscFree(S->fst[k]));
    S->cap_f[k] = PetscMax(g->nf, 2 * S->cap_f[k]);
    PetscCall(PetscCalloc1(S->cap_f[k], &S->fst[k]));
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

/* the point c (world) in P's body frame, unscaled */
static inline void DemPolyBodyPoint(const DemPolyBody *P, const PetscReal c[3], PetscReal cb[3])
{
  PetscReal d[3];
  for (int j = 0; j < 3; j++) d[j] = c[j] - P->x[j];
  cb[0] = (P->R[0] * d[0] + P->R[3] * d[1] + P->R[6] * d[2]) / P->s;
  cb[1] = (P->R[1] * d[0] + P->R[4] * d[1] + P->R[7] * d[2]) / P->s;
  cb[2] = (P->R[2] * d[0] + P->R[5] * d[1] + P->R[8] * d[2]) / P->s;
}

/* the candidate tests of DemPolyCandidates (body frame, unscaled; lim = (rc + reach) / s): corner
   vertex i, non-flat edge e (*h2: a quarter of its squared length), triangle t near cb */
static inline PetscBool DemPolyCandV(const DemPolyGeom *g, PetscInt i, const PetscReal cb[3], PetscReal lim)
{
  const PetscReal *y = g->v + 3 * i;
  PetscReal        e[3] = {y[0] - cb[0], y[1] - cb[1], y[2] - cb[2]};
  return (g->vsharp[i] && Dot3(e, e) < lim * lim) ? PETSC_TRUE : PETSC_FALSE;
}
static inline PetscBool DemPolyCandE(const DemPolyGeom *g, PetscInt e, const PetscReal cb[3], PetscReal lim, PetscReal *h2)
{
  const PetscReal *p = g->v + 3 * g->ev[2 * e], *q = g->v + 3 * g->ev[2 * e + 1];
  PetscReal        m[3], l;
  *h2 = 0;
  if (g->eflat[e]) return PETSC_FALSE;
  for (int j = 0; j < 3; j++) m[j] = 0.5 * (p[j] + q[j]) - cb[j], *h2 += 0.25 * (q[j] - p[j]) * (q[j] - p[j]);
  l = lim + PetscSqrtReal(*h2);
  return Dot3(m, m) < l * l ? PETSC_TRUE : PETSC_FALSE;
}
static inline PetscBool DemPolyCandF(const DemPolyGeom *g, PetscInt t, const PetscReal cb[3], PetscReal lim)
{
  const PetscReal *fc = g->fc + 3 * t;
  PetscReal        m[3] = {fc[0] - cb[0], fc[1] - cb[1], fc[2] - cb[2]}, l = lim + g->fr[t];
  return Dot3(m, m) < l * l ? PETSC_TRUE : PETSC_FALSE;
}

/* the world vertices and normals, and the features of `P` that can come within `reach` of the
   sphere (c, rc) */
static void DemPolyCandidates(DemPolyBody *P, const PetscReal c[3], PetscReal rc, PetscReal reach)
{
  const DemPolyGeom *g = P->g;
  PetscReal          cb[3], lim;

  /* the other sphere's centre in the body frame (unscaled) */
  DemPolyBodyPoint(P, c, cb);
  lim   = (rc + reach) / P->s;
  P->ncv = P->nce = P->ncf = 0;
  for (PetscInt i = 0; i < g->nv; i++) {
    const PetscReal *y = g->v + 3 * i;
    PetscReal        w[3];
    Rot(P->R, y, w);
    for (int j = 0; j < 3; j++) P->v[3 * i + j] = P->x[j] + P->s * w[j];
    if (DemPolyCandV(g, i, cb, lim)) P->cv[P->ncv++] = i;
  }
  for (PetscInt e = 0; e < g->ne; e++) {
    const PetscReal *p = g->v + 3 * g->ev[2 * e], *q = g->v + 3 * g->ev[2 * e + 1];
    PetscReal        h2;
    if (DemPolyCandE(g, e, cb, lim, &h2)) {
      PetscReal y[3] = {0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])}, w[3];
      Rot(P->R, y, w);
      for (int j = 0; j < 3; j++) P->em[4 * e + j] = P->x[j] + P->s * w[j];
      P->em[4 * e + 3] = P->s * PetscSqrtReal(h2);
      P->ce[P->nce++] = e;
    }
  }
  for (PetscInt t = 0; t < g->nf; t++) {
    const PetscReal *fc = g->fc + 3 * t;
    Rot(P->R, g->fn + 3 * t, P->fn + 3 * t);
    if (DemPolyCandF(g, t, cb, lim)) {
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

/* feature lists (below): the world position of vertex i (normal of face t) of a body, computed
   once per evaluation when first needed (P->lazy; otherwise DemPolyCandidates did them all) */
static inline void DemPolyTouchV(DemPolyBody *P, PetscInt i)
{
  PetscReal w[3];
  if (!P->lazy || P->vst[i] == P->stamp) return;
  P->vst[i] = P->stamp;
  Rot(P->R, P->g->v + 3 * i, w);
  for (int j = 0; j < 3; j++) P->v[3 * i + j] = P->x[j] + P->s * w[j];
}
static inline void DemPolyTouchF(DemPolyBody *P, PetscInt t)
{
  if (!P->lazy || P->fst[t] == P->stamp) return;
  P->fst[t] = P->stamp;
  Rot(P->R, P->g->fn + 3 * t, P->fn + 3 * t);
  for (int k = 0; k < 3; k++) DemPolyTouchV(P, P->g->f[3 * t + k]);
}
/* what DemPolyEdgeFaces and DemPolyEdgeOutward read about edge e (its triangles), and
   DemPolyVertexFaces about vertex i (its neighbours) */
static inline void DemPolyTouchE(DemPolyBody *P, PetscInt e)
{
  if (!P->lazy) return;
  DemPolyTouchF(P, P->g->ef[2 * e]);
  DemPolyTouchF(P, P->g->ef[2 * e + 1]);
}
static inline void DemPolyTouchVN(DemPolyBody *P, PetscInt i)
{
  const DemPolyGeom *g = P->g;
  if (!P->lazy) return;
  for (PetscInt k = g->vstart[i]; k < g->vstart[i + 1]; k++) DemPolyTouchV(P, g->ev[2 * g->vedge[k]] == i ? g->ev[2 * g->vedge[k] + 1] : g->ev[2 * g->vedge[k]]);
}

/*
  Friction history across a change of feature key (000 eq. (54)-(58) need the elastic part g_t
  of a sticking contact to persist while the two bodies touch at that point). A pointwise
  contact changes its key when its point crosses from one sub-region to the next while the
  bodies keep touching there: vertex-face -> vertex-face of the next triangle (across a flat
  diagonal), vertex-face -> vertex-edge (+ two edge-edge, 000 Fig. 4c) at a face's border,
  edge-edge -> edge-edge when a crossing passes a vertex, vertex-edge -> vertex-vertex, and
  back. Without a transfer the new key starts with g_t = 0: a resting contact whose key flips
  loses its spring and static friction cannot hold (the creep of box_of_cubes, session 6).
  After the contacts of a pair are made, each contact with an empty history (new) takes the
  history of a contact of the same pair that was not reported now (it left at this evaluation)
  and whose sub-regions neighbour its own on both bodies (DemPolyNear: a vertex with its edges;
  an edge with its end vertices and the edges at them; a triangle with its edges, vertices and
  the triangles across its edges); the first such donor in that order. Several new contacts
  may take the same donor (Fig. 4c's one point becoming three: each of the three carries the
  point's spring, as each carries its normal force). Donors still reported keep theirs alone.
  The donor's slot is zeroed at the commit (forces.c: not touched), so the spring moves.
*/
#define DEM_POLY_NEAR_MAX 128
static int64_t near_[2][DEM_POLY_NEAR_MAX]; /* (type << 32 | index) of the features near one feature */
static int     inherit_ = -1;                /* -poly_key_history [1]; -1: not read yet */

/* the features near feature (type, x) of g, itself first; returns their number */
static int DemPolyNear(const DemPolyGeom *g, int type, PetscInt x, int64_t *out)
{
  int n = 0;
#define DEM_NEAR_PUSH(ty, ix) \
  do { \
    int64_t v_ = ((int64_t)(ty) << 32) | (int64_t)(ix); \
    int     k_; \
    for (k_ = 0; k_ < n; k_++) \
      if (out[k_] == v_) break; \
    if (k_ == n && n < DEM_POLY_NEAR_MAX) out[n++] = v_; \
  } while (0)
  DEM_NEAR_PUSH(type, x);
  if (type == DEM_POLY_V) {
    if (x < 0 || x >= g->nv) return 0;
    for (PetscInt k = g->vstart[x]; k < g->vstart[x + 1]; k++) DEM_NEAR_PUSH(DEM_POLY_E, g->vedge[k]);
  } else if (type == DEM_POLY_E) {
    if (x < 0 || x >= g->ne) return 0;
    for (int m = 0; m < 2; m++) {
      PetscInt i = g->ev[2 * x + m];
      DEM_NEAR_PUSH(DEM_POLY_V, i);
      for (PetscInt k = g->vstart[i]; k < g->vstart[i + 1]; k++) DEM_NEAR_PUSH(DEM_POLY_E, g->vedge[k]);
    }
  } else {
    if (x < 0 || x >= g->nf) return 0;
    for (int m = 0; m < 3; m++) {
      PetscInt e = g->fe[3 * x + m];
      DEM_NEAR_PUSH(DEM_POLY_E, e);
      DEM_NEAR_PUSH(DEM_POLY_V, g->f[3 * x + m]);
      DEM_NEAR_PUSH(DEM_POLY_F, g->ef[2 * e] == x ? g->ef[2 * e + 1] : g->ef[2 * e]);
    }
  }
#undef DEM_NEAR_PUSH
  return n;
}

/* the contacts c0 .. of the current pair (po->pair, bodies of geometry ga and gb): new ones take
   the history of a neighbouring contact that left (above) */
static PetscErrorCode DemPolyInherit(DemPolyOut *po, const DemPolyGeom *ga, const DemPolyGeom *gb, PetscInt c0)
{
  DemContactList *cl = po->cl;
  DemSim          sim = po->sim;
  const PetscInt  hs = sim->histsize;
  PetscReal      *H = sim->nl.history;

  PetscFunctionBegin;
  if (inherit_ < 0) { /* -poly_key_history 0: no transfer (tests compare) */
    PetscBool on = PETSC_TRUE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-poly_key_history", &on, NULL));
    inherit_ = on ? 1 : 0;
  }
  if (po->pair < 0 || hs <= 0 || !inherit_) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt c = c0; c < cl->n; c++) {
    PetscReal *h = cl->hist[c] >= 0 ? H + hs * cl->hist[c] : NULL;
    uint64_t   key = (uint64_t)cl->feature[c];
    int        na, nb, done = 0;
    PetscBool  any = PETSC_FALSE;
    if (!h) continue;
    for (PetscInt j = 0; j < hs; j++) any = any || h[j] != 0.0;
    if (any) continue;
    na = DemPolyNear(ga, (int)(key >> 62), (PetscInt)((key >> 30) & 0x3fffffff), near_[0]);
    nb = DemPolyNear(gb, (int)((key >> 60) & 3), (PetscInt)(key & 0x3fffffff), near_[1]);
    for (int ka = 0; ka < na && !done; ka++)
      for (int kb = 0; kb < nb && !done; kb++) {
        int64_t          dk;
        PetscInt         s;
        PetscBool        reported = PETSC_FALSE, nz = PETSC_FALSE;
        const PetscReal *hd;
        if (!ka && !kb) continue; /* the contact itself */
        dk = DemPolyFeatureKey((int)(near_[0][ka] >> 32), (PetscInt)(near_[0][ka] & 0xffffffff), (int)(near_[1][kb] >> 32), (PetscInt)(near_[1][kb] & 0xffffffff));
        if (dk) PetscCall(DemNeighbourFeatureSlot_Private(sim, po->pair, dk, PETSC_FALSE, &s, NULL));
        else s = po->pair;
        if (s < 0) continue;
        hd = H + hs * s;
        for (PetscInt j = 0; j < hs; j++) nz = nz || hd[j] != 0.0;
        if (!nz) continue;
        for (PetscInt d = c0; d < cl->n && !reported; d++) reported = cl->hist[d] == s ? PETSC_TRUE : PETSC_FALSE;
        if (reported) continue;
        PetscCall(PetscArraycpy(h, hd, hs));
        done = 1;
      }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The degenerate problems of one pair of features, A's and B's, normals from B to A; `swap`:
  A and B are the pair's b and a (vertex-face and vertex-edge both ways). The marks of accepted
  vertex-face and vertex-edge contacts (vertex, type + 4 swap, feature) feed the hierarchy of
  000 section 3.6.
*/
static PetscErrorCode DemPolyEvalVF(DemPolyBody *A, DemPolyBody *B, PetscInt i, PetscInt t, PetscInt a, PetscInt b, PetscBool swap, PetscReal skin, PetscReal lower, DemPolyOut *out)
{
  const DemPolyGeom *gb = B->g;
  const PetscReal   *p = A->v + 3 * i, *x1 = B->v + 3 * gb->f[3 * t], *x2 = B->v + 3 * gb->f[3 * t + 1], *x3 = B->v + 3 * gb->f[3 * t + 2], *n = B->fn + 3 * t;
  PetscReal          zeta, theta, dist, q[3], mn[3];

  PetscFunctionBegin;
  DemPolyTouchV(A, i);
  for (int k = 0; k < 3; k++) DemPolyTouchV(B, gb->f[3 * t + k]);
  DemPolyLCPVertexFace(p, x1, x2, x3, &zeta, &theta, &dist);
  if (!(dist < skin && dist > lower)) PetscFunctionReturn(PETSC_SUCCESS);
  if (!DemPolyFaceValid(gb, t, zeta, theta)) PetscFunctionReturn(PETSC_SUCCESS);
  DemPolyTouchF(B, t);
  for (int j = 0; j < 3; j++) mn[j] = -n[j];
  DemPolyFacePoint(x1, x2, x3, zeta, theta, q);
  if (!swap) PetscCall(DemPolyAppend(out, a, b, A->x, B->x, p, q, n, dist, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_F, t)));
  else PetscCall(DemPolyAppend(out, a, b, B->x, A->x, q, p, mn, dist, B->r, DemPolyFeatureKey(DEM_POLY_F, t, DEM_POLY_V, i)));
  PetscCall(DemPolyMarkPush(i, DEM_POLY_F + 4 * (PetscInt)swap, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPolyEvalEE(DemPolyBody *A, DemPolyBody *B, PetscInt e, PetscInt f, PetscInt a, PetscInt b, PetscReal skin, DemPolyOut *out)
{
  const DemPolyGeom *ga = A->g, *gb = B->g;
  const PetscReal   *p0 = A->v + 3 * ga->ev[2 * e], *p1 = A->v + 3 * ga->ev[2 * e + 1], *q0 = B->v + 3 * gb->ev[2 * f], *q1 = B->v + 3 * gb->ev[2 * f + 1];
  const PetscReal    tol = 1e-9;
  PetscReal          za, zb, pa[3], pb[3], g[3], d, n[3], mn[3];

  PetscFunctionBegin;
  DemPolyTouchV(A, ga->ev[2 * e]), DemPolyTouchV(A, ga->ev[2 * e + 1]);
  DemPolyTouchV(B, gb->ev[2 * f]), DemPolyTouchV(B, gb->ev[2 * f + 1]);
  if (!DemPolyLCPEdgeEdge(p0, p1, q0, q1, &za, &zb)) PetscFunctionReturn(PETSC_SUCCESS);
  if (!(za > -1 && za < 1 && zb > -1 && zb < 1)) PetscFunctionReturn(PETSC_SUCCESS);
  DemPolyEdgePoint(p0, p1, za, pa);
  DemPolyEdgePoint(q0, q1, zb, pb);
  for (int j = 0; j < 3; j++) g[j] = pa[j] - pb[j];
  d = PetscSqrtReal(Dot3(g, g));
  if (!(d < skin) || d == 0) PetscFunctionReturn(PETSC_SUCCESS);
  for (int j = 0; j < 3; j++) n[j] = g[j] / d, mn[j] = -n[j];
  DemPolyTouchE(A, e), DemPolyTouchE(B, f);
  if (!DemPolyEdgeOutward(B, f, n, tol) || !DemPolyEdgeOutward(A, e, mn, tol)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemPolyAppend(out, a, b, A->x, B->x, pa, pb, n, d, A->r, DemPolyFeatureKey(DEM_POLY_E, e, DEM_POLY_E, f)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPolyEvalVE(DemPolyBody *A, DemPolyBody *B, PetscInt i, PetscInt e, PetscInt a, PetscInt b, PetscBool swap, PetscReal skin, DemPolyOut *out)
{
  const DemPolyGeom *gb = B->g;
  const PetscReal   *p = A->v + 3 * i, *q0 = B->v + 3 * gb->ev[2 * e], *q1 = B->v + 3 * gb->ev[2 * e + 1];
  const PetscReal    tol = 1e-9;
  PetscReal          zeta, q[3], g[3], d, n[3], mn[3];

  PetscFunctionBegin;
  DemPolyTouchV(A, i), DemPolyTouchV(B, gb->ev[2 * e]), DemPolyTouchV(B, gb->ev[2 * e + 1]);
  DemPolyLCPVertexEdge(p, q0, q1, &zeta);
  if (!(zeta > -1 && zeta < 1)) PetscFunctionReturn(PETSC_SUCCESS);
  DemPolyEdgePoint(q0, q1, zeta, q);
  for (int j = 0; j < 3; j++) g[j] = p[j] - q[j];
  d = PetscSqrtReal(Dot3(g, g));
  if (!(d < skin) || d == 0) PetscFunctionReturn(PETSC_SUCCESS);
  for (int j = 0; j < 3; j++) n[j] = g[j] / d, mn[j] = -n[j];
  DemPolyTouchE(B, e);
  if (!DemPolyEdgeFaces(B, e, n, PETSC_FALSE, tol)) PetscFunctionReturn(PETSC_SUCCESS);
  /* hierarchy, 000 section 3.6: a re-entrant edge whose two triangles already hold the vertex */
  if (gb->econcave[e] && DemPolyMarked(i, DEM_POLY_F + 4 * (PetscInt)swap, gb->ef[2 * e]) && DemPolyMarked(i, DEM_POLY_F + 4 * (PetscInt)swap, gb->ef[2 * e + 1])) PetscFunctionReturn(PETSC_SUCCESS);
  if (!swap) PetscCall(DemPolyAppend(out, a, b, A->x, B->x, p, q, n, d, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_E, e)));
  else PetscCall(DemPolyAppend(out, a, b, B->x, A->x, q, p, mn, d, B->r, DemPolyFeatureKey(DEM_POLY_E, e, DEM_POLY_V, i)));
  PetscCall(DemPolyMarkPush(i, DEM_POLY_E + 4 * (PetscInt)swap, e));
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

static PetscErrorCode DemPolyEvalVV(DemPolyBody *A, DemPolyBody *B, PetscInt i, PetscInt k, PetscInt a, PetscInt b, PetscReal skin, DemPolyOut *out)
{
  const PetscReal *p = A->v + 3 * i, *q = B->v + 3 * k;
  PetscReal        g[3], d, n[3];

  PetscFunctionBegin;
  DemPolyTouchV(A, i), DemPolyTouchV(B, k);
  for (int j = 0; j < 3; j++) g[j] = p[j] - q[j];
  d = PetscSqrtReal(Dot3(g, g));
  if (!(d < skin) || d == 0) PetscFunctionReturn(PETSC_SUCCESS);
  for (int j = 0; j < 3; j++) n[j] = g[j] / d;
  DemPolyTouchVN(B, k);
  if (!DemPolyVertexFaces(B, k, n, 0)) PetscFunctionReturn(PETSC_SUCCESS);
  if (DemPolyVertexHasNeighbourContact(B->g, i, k, 0) || DemPolyVertexHasNeighbourContact(A->g, k, i, 1)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemPolyAppend(out, a, b, A->x, B->x, p, q, n, d, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_V, k)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  the contacts of a pair of bodies from their candidate features (DemPolyCandidates): A (index
  a) and B (index b), normals from B to A; each pair of features first passes the test of their
  inflated bounding spheres (000 section 2.5, second level)
*/
static PetscErrorCode DemPolyPair(DemPolyBody *A, DemPolyBody *B, PetscInt a, PetscInt b, PetscReal skin, PetscReal lowA, PetscReal lowB, DemPolyOut *out)
{
  const DemPolyGeom *ga = A->g, *gb = B->g;

  PetscFunctionBegin;
  scratch_.nvf = 0;
  /* vertex-face both ways, eq. (34) */
  for (int side = 0; side < 2; side++) {
    DemPolyBody *P = side ? B : A, *Q = side ? A : B;
    PetscReal    lower = side ? lowA : lowB;
    for (PetscInt ii = 0; ii < P->ncv; ii++) {
      const PetscReal *p = P->v + 3 * P->cv[ii];
      for (PetscInt tt = 0; tt < Q->ncf; tt++) {
        PetscInt  t = Q->cf[tt];
        PetscReal c[3], fr = Q->s * Q->g->fr[t] + PetscMax(skin, -lower);
        for (int j = 0; j < 3; j++) c[j] = p[j] - Q->fc[3 * t + j];
        if (Dot3(c, c) >= fr * fr) continue;
        PetscCall(DemPolyEvalVF(P, Q, P->cv[ii], t, a, b, (PetscBool)side, skin, lower, out));
      }
    }
  }
  /* edge-edge, eq. (35) */
  for (PetscInt ii = 0; ii < A->nce; ii++) {
    PetscInt e = A->ce[ii];
    for (PetscInt jj = 0; jj < B->nce; jj++) {
      PetscInt  f = B->ce[jj];
      PetscReal c[3], l = A->em[4 * e + 3] + B->em[4 * f + 3] + skin;
      for (int j = 0; j < 3; j++) c[j] = A->em[4 * e + j] - B->em[4 * f + j];
      if (Dot3(c, c) >= l * l) continue;
      PetscCall(DemPolyEvalEE(A, B, e, f, a, b, skin, out));
    }
  }
  /* vertex-edge both ways, eq. (36) */
  for (int side = 0; side < 2; side++) {
    DemPolyBody *P = side ? B : A, *Q = side ? A : B;
    for (PetscInt ii = 0; ii < P->ncv; ii++) {
      const PetscReal *p = P->v + 3 * P->cv[ii];
      for (PetscInt ee = 0; ee < Q->nce; ee++) {
        PetscInt  e = Q->ce[ee];
        PetscReal c[3], l = Q->em[4 * e + 3] + skin;
        for (int j = 0; j < 3; j++) c[j] = p[j] - Q->em[4 * e + j];
        if (Dot3(c, c) >= l * l) continue;
        PetscCall(DemPolyEvalVE(P, Q, P->cv[ii], e, a, b, (PetscBool)side, skin, out));
      }
    }
  }
  /* vertex-vertex */
  for (PetscInt ii = 0; ii < A->ncv; ii++)
    for (PetscInt jj = 0; jj < B->ncv; jj++) PetscCall(DemPolyEvalVV(A, B, A->cv[ii], B->cv[jj], a, b, skin, out));
  (void)ga, (void)gb;
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
  P->vst = scratch_.vst[slot];
  P->fst = scratch_.fst[slot];
  if (++scratch_.stamp[slot] == PETSC_MAX_INT) { /* wrapped: every stamp stale */
    PetscCall(PetscArrayzero(scratch_.vst[slot], scratch_.cap_v[slot]));
    PetscCall(PetscArrayzero(scratch_.fst[slot], scratch_.cap_f[slot]));
    scratch_.stamp[slot] = 1;
  }
  P->stamp = scratch_.stamp[slot];
  P->lazy  = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Feature-level Verlet lists (000 section 2.5, second level with Verlet lists). For a pair of
  the neighbour list, the pairs of features whose inflated volumes overlap — a sphere about each
  corner vertex, a capsule about each edge, a prism (the offset volume) about each triangle,
  inflated by the reach (the activation gap) plus 2 m — are kept with the two bodies' positions
  and orientations at that moment. While neither body has moved a point of its surface by more
  than the margin m (bound: |dx| + 2 r |sin(dtheta/2)|, r the bounding radius), no other pair of
  features can come within the reach, and the contact problems are solved for the listed pairs
  only, with only their vertices and normals carried to the world frame. Otherwise the pair's
  list is rebuilt from the candidate features, first narrowed by boxes (DemPolyCandidateCut).
  The inclusion tests are exact distances: point to point, point to segment, segment to
  segment, point to triangle. A list also records the
  geometry and radii of its bodies, so it is never applied to other bodies; all lists are
  dropped when the neighbour list is rebuilt (pair indices change). The margin is m = F reach
  (PETSc option -poly_feature_margin F [1]): a larger one keeps lists longer but makes them
  longer. -poly_feature_lists 0 turns them off (every evaluation examines all candidate
  features, as the set-up check does); the contacts are the same, in the same order.
*/
enum { DEM_FL_VF = 0, DEM_FL_FV, DEM_FL_EE, DEM_FL_VE, DEM_FL_EV, DEM_FL_VV, DEM_FL_PV };
/* which colliders' list a pair holds (sphere/polyhedron and polyhedron/mesh: below) */
enum { DEM_FLK_POLY = 0, DEM_FLK_PLANE, DEM_FLK_SPHERE, DEM_FLK_MESH };

typedef struct {
  int                kind; /* DEM_FLK_* */
  const void        *w;    /* polyhedron/mesh: the wall's vertices (its identity) */
  const DemPolyGeom *ga, *gb;
  PetscReal          x[6], q[8], r[2], reach, margin;
  PetscReal          moved; /* at this evaluation: bound of the two bodies' surface motion since the build */
  PetscInt           start, len;
} DemPolyFL;

typedef struct {
  DemSim     sim;
  PetscInt   nbuilds, npairs;
  DemPolyFL *pair;
  PetscInt  *rec, nrec, caprec, live; /* records (kind, i, j, near): near = the index in its list of
                                          the record of rank k (k = its own index) by distance */
  PetscReal *recd;                     /* per record: the distance of its two features at the build */
  PetscInt   nlist, nreuse;           /* statistics: lists built, lists reused */
  int        enabled;                 /* -1: not read yet */
  PetscReal  fmargin;                 /* margin m = fmargin x reach */
} DemPolyFeatureLists;
static DemPolyFeatureLists fl_ = {NULL, -1, 0, NULL, NULL, 0, 0, 0, NULL, 0, 0, -1, 1.0};

static inline PetscReal DemPolyPointSegDist2(const PetscReal p[3], const PetscReal a[3], const PetscReal b[3])
{
  PetscReal u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]}, uu = Dot3(u, u), t = uu > 0 ? Dot3(u, w) / uu : 0, d[3];
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  for (int j = 0; j < 3; j++) d[j] = w[j] - t * u[j];
  return Dot3(d, d);
}

static inline PetscReal DemPolySegSegDist2(const PetscReal p0[3], const PetscReal p1[3], const PetscReal q0[3], const PetscReal q1[3])
{
  PetscReal za, zb, d2;
  if (DemPolyLCPEdgeEdge(p0, p1, q0, q1, &za, &zb) && za >= -1 && za <= 1 && zb >= -1 && zb <= 1) {
    PetscReal pa[3], pb[3], g[3];
    DemPolyEdgePoint(p0, p1, za, pa);
    DemPolyEdgePoint(q0, q1, zb, pb);
    for (int j = 0; j < 3; j++) g[j] = pa[j] - pb[j];
    return Dot3(g, g);
  }
  d2 = DemPolyPointSegDist2(p0, q0, q1);
  d2 = PetscMin(d2, DemPolyPointSegDist2(p1, q0, q1));
  d2 = PetscMin(d2, DemPolyPointSegDist2(q0, p0, p1));
  return PetscMin(d2, DemPolyPointSegDist2(q1, p0, p1));
}

static inline PetscReal DemPolyPointTriDist2(const PetscReal p[3], const PetscReal x1[3], const PetscReal x2[3], const PetscReal x3[3])
{
  PetscReal zeta, theta, dist, d2;
  DemPolyLCPVertexFace(p, x1, x2, x3, &zeta, &theta, &dist);
  if (zeta >= -1 && theta >= -1 && zeta + theta <= 0) return dist * dist;
  d2 = DemPolyPointSegDist2(p, x1, x2);
  d2 = PetscMin(d2, DemPolyPointSegDist2(p, x2, x3));
  return PetscMin(d2, DemPolyPointSegDist2(p, x3, x1));
}

static PetscErrorCode DemPolyFLPush(PetscInt kind, PetscInt i, PetscInt j, PetscReal d)
{
  PetscFunctionBegin;
  if (fl_.nrec == fl_.caprec) {
    PetscInt  *nw, cap = PetscMax(4096, 2 * fl_.caprec);
    PetscReal *nd;
    PetscCall(PetscMalloc1(4 * cap, &nw));
    PetscCall(PetscMalloc1(cap, &nd));
    if (fl_.nrec) PetscCall(PetscArraycpy(nw, fl_.rec, 4 * fl_.nrec));
    if (fl_.nrec) PetscCall(PetscArraycpy(nd, fl_.recd, fl_.nrec));
    PetscCall(PetscFree(fl_.rec));
    PetscCall(PetscFree(fl_.recd));
    fl_.rec = nw, fl_.recd = nd, fl_.caprec = cap;
  }
  fl_.rec[4 * fl_.nrec] = kind, fl_.rec[4 * fl_.nrec + 1] = i, fl_.rec[4 * fl_.nrec + 2] = j, fl_.rec[4 * fl_.nrec + 3] = 0; /* set by DemPolyFLBuild */
  fl_.recd[fl_.nrec] = d;
  fl_.nrec++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* drops the space of replaced lists when it exceeds the live records */
static PetscErrorCode DemPolyFLCompact(void)
{
  PetscInt  *nw, n = 0;
  PetscReal *nd;

  PetscFunctionBegin;
  if (fl_.nrec < 2 * fl_.live + 65536) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc1(4 * PetscMax(fl_.live, 1), &nw));
  PetscCall(PetscMalloc1(PetscMax(fl_.live, 1), &nd));
  for (PetscInt p = 0; p < fl_.npairs; p++) {
    DemPolyFL *L = &fl_.pair[p];
    if (L->start < 0) continue;
    PetscCall(PetscArraycpy(nw + 4 * n, fl_.rec + 4 * L->start, 4 * L->len));
    PetscCall(PetscArraycpy(nd + n, fl_.recd + L->start, L->len));
    L->start = n;
    n += L->len;
  }
  PetscCall(PetscFree(fl_.rec));
  PetscCall(PetscFree(fl_.recd));
  fl_.rec = nw, fl_.recd = nd, fl_.nrec = n, fl_.caprec = PetscMax(fl_.live, 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline void DemPolyBoxAdd(const PetscReal *y, PetscReal lo[3], PetscReal hi[3])
{
  for (int j = 0; j < 3; j++) lo[j] = PetscMin(lo[j], y[j]), hi[j] = PetscMax(hi[j], y[j]);
}

/* the axis-aligned box of P's candidate features (world; DemPolyCandidates carried every vertex) */
static void DemPolyCandidateBox(const DemPolyBody *P, PetscReal lo[3], PetscReal hi[3])
{
  const DemPolyGeom *g = P->g;
  for (int j = 0; j < 3; j++) lo[j] = PETSC_MAX_REAL, hi[j] = -PETSC_MAX_REAL;
  for (PetscInt k = 0; k < P->ncv; k++) DemPolyBoxAdd(P->v + 3 * P->cv[k], lo, hi);
  for (PetscInt k = 0; k < P->nce; k++)
    for (int m = 0; m < 2; m++) DemPolyBoxAdd(P->v + 3 * g->ev[2 * P->ce[k] + m], lo, hi);
  for (PetscInt k = 0; k < P->ncf; k++)
    for (int m = 0; m < 3; m++) DemPolyBoxAdd(P->v + 3 * g->f[3 * P->cf[k] + m], lo, hi);
}

/* the box of the points i[0..n) of P overlaps [lo, hi] */
static inline PetscBool DemPolyPointsInBox(const DemPolyBody *P, const PetscInt *i, int n, const PetscReal lo[3], const PetscReal hi[3])
{
  for (int j = 0; j < 3; j++) {
    PetscReal a = P->v[3 * i[0] + j], b = a;
    for (int k = 1; k < n; k++) a = PetscMin(a, P->v[3 * i[k] + j]), b = PetscMax(b, P->v[3 * i[k] + j]);
    if (b < lo[j] || a > hi[j]) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* keeps the candidate features of P whose boxes overlap [lo - lim, hi + lim] (order kept) */
static void DemPolyCandidateCut(DemPolyBody *P, const PetscReal lo0[3], const PetscReal hi0[3], PetscReal lim)
{
  const DemPolyGeom *g = P->g;
  PetscReal          lo[3], hi[3], pad = lim * (1 + 1e-9) + 1e-12 * P->r; /* round-off: never drop a pair within lim */
  PetscInt           n;
  for (int j = 0; j < 3; j++) lo[j] = lo0[j] - pad, hi[j] = hi0[j] + pad;
  n = 0;
  for (PetscInt k = 0; k < P->ncv; k++)
    if (DemPolyPointsInBox(P, &P->cv[k], 1, lo, hi)) P->cv[n++] = P->cv[k];
  P->ncv = n;
  n      = 0;
  for (PetscInt k = 0; k < P->nce; k++)
    if (DemPolyPointsInBox(P, g->ev + 2 * P->ce[k], 2, lo, hi)) P->ce[n++] = P->ce[k];
  P->nce = n;
  n      = 0;
  for (PetscInt k = 0; k < P->ncf; k++)
    if (DemPolyPointsInBox(P, g->f + 3 * P->cf[k], 3, lo, hi)) P->cf[n++] = P->cf[k];
  P->ncf = n;
}

/*
  The list build tests each feature of one body only against the other body's features whose
  centres lie within a window along one axis: the candidates of that side sorted by that
  coordinate (the axis of the widest spread), the window the largest inclusion distance
  (feature radius + partner radius + lim, padded against round-off), since a pair farther apart
  along the axis fails its bounding-sphere test. The pairs that pass are recorded in the order
  of the all-pairs loops (the matches of each feature sorted by candidate position), so the
  lists, and the contacts, are those of the all-pairs build.
*/
typedef struct {
  PetscReal *key;
  PetscInt  *pos, cap, n;
  PetscReal  rmax; /* largest radius of the sorted features */
} DemPolySorted;
static DemPolySorted srt_[5]; /* faces of A, faces of B, edges of A, edges of B, vertices of B */
static PetscInt     *match_, capmatch_;
static PetscReal    *matchd_; /* [capmatch_] the distance of each match, by candidate position */
static PetscReal    *nearkey_; /* [capnear_] scratch: distances of one list's records */
static PetscInt     *nearidx_, capnear_; /* [capnear_] scratch: record indices of one list */

static PetscErrorCode DemPolySortedReserve(DemPolySorted *S, PetscInt n)
{
  PetscFunctionBegin;
  if (n > S->cap) {
    PetscCall(PetscFree(S->key));
    PetscCall(PetscFree(S->pos));
    S->cap = PetscMax(n, 2 * S->cap);
    PetscCall(PetscMalloc1(S->cap, &S->key));
    PetscCall(PetscMalloc1(S->cap, &S->pos));
  }
  if (n > capmatch_) {
    PetscCall(PetscFree(match_));
    PetscCall(PetscFree(matchd_));
    capmatch_ = PetscMax(n, 2 * capmatch_);
    PetscCall(PetscMalloc1(capmatch_, &match_));
    PetscCall(PetscMalloc1(capmatch_, &matchd_));
  }
  S->n = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P's candidate faces (kind 0), edges (1) or vertices (2) sorted by coordinate ax of their centre */
static PetscErrorCode DemPolySortedBuild(const DemPolyBody *P, int kind, int ax, DemPolySorted *S)
{
  PetscInt n = kind == 0 ? P->ncf : kind == 1 ? P->nce : P->ncv;

  PetscFunctionBegin;
  PetscCall(DemPolySortedReserve(S, n));
  S->rmax = 0;
  for (PetscInt k = 0; k < n; k++) {
    S->pos[k] = k;
    if (kind == 0) {
      PetscInt t = P->cf[k];
      S->key[k] = P->fc[3 * t + ax];
      S->rmax   = PetscMax(S->rmax, P->s * P->g->fr[t]);
    } else if (kind == 1) {
      PetscInt e = P->ce[k];
      S->key[k] = P->em[4 * e + ax];
      S->rmax   = PetscMax(S->rmax, P->em[4 * e + 3]);
    } else S->key[k] = P->v[3 * P->cv[k] + ax];
  }
  PetscCall(PetscSortRealWithArrayInt(n, S->key, S->pos));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the first sorted index whose key is >= x */
static inline PetscInt DemPolySortedLower(const DemPolySorted *S, PetscReal x)
{
  PetscInt lo = 0, hi = S->n;
  while (lo < hi) {
    PetscInt mid = (lo + hi) / 2;
    if (S->key[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* the window half-width for an inclusion distance R, padded against round-off */
static inline PetscReal DemPolyWindow(PetscReal R, PetscReal r)
{
  return R * (1 + 1e-8) + 1e-12 * r;
}

/* pushes the nm matches (candidate positions) of one feature in candidate order */
static PetscErrorCode DemPolyFLPushMatches(PetscInt kind, PetscInt i, const PetscInt *cand, PetscInt nm)
{
  PetscFunctionBegin;
  PetscCall(PetscSortInt(nm, match_));
  for (PetscInt k = 0; k < nm; k++) PetscCall(DemPolyFLPush(kind, i, cand[match_[k]], matchd_[match_[k]]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the list of pair p for bodies A, B (candidates from DemPolyCandidates with reach + 2 margin) */
static PetscErrorCode DemPolyFLBuild(DemPolyBody *A, DemPolyBody *B, const PetscReal qa[4], const PetscReal qb[4], PetscReal reach, PetscReal margin, DemPolyFL *L)
{
  const DemPolyGeom *ga = A->g, *gb = B->g;
  const PetscReal    lim = reach + 2 * margin, lim2 = lim * lim, rr = PetscMax(A->r, B->r);
  PetscReal          lo[3], hi[3], lo2[3], hi2[3];
  int                ax = 0;

  PetscFunctionBegin;
  if (L->start >= 0) fl_.live -= L->len;
  L->start = fl_.nrec;
  /* the sorting axis: the widest extent of the two candidate boxes' union */
  DemPolyCandidateBox(A, lo, hi);
  DemPolyCandidateBox(B, lo2, hi2);
  for (int j = 0; j < 3; j++) lo[j] = PetscMin(lo[j], lo2[j]), hi[j] = PetscMax(hi[j], hi2[j]);
  for (int j = 1; j < 3; j++)
    if (hi[j] - lo[j] > hi[ax] - lo[ax]) ax = j;
  PetscCall(DemPolySortedBuild(A, 0, ax, &srt_[0]));
  PetscCall(DemPolySortedBuild(B, 0, ax, &srt_[1]));
  PetscCall(DemPolySortedBuild(A, 1, ax, &srt_[2]));
  PetscCall(DemPolySortedBuild(B, 1, ax, &srt_[3]));
  PetscCall(DemPolySortedBuild(B, 2, ax, &srt_[4]));
  for (int side = 0; side < 2; side++) { /* vertex-face */
    DemPolyBody         *P = side ? B : A, *Q = side ? A : B;
    const DemPolySorted *S = &srt_[side ? 0 : 1];
    const PetscReal      w = DemPolyWindow(S->rmax + lim, rr);
    for (PetscInt ii = 0; ii < P->ncv; ii++) {
      PetscInt         i = P->cv[ii], nm = 0;
      const PetscReal *p = P->v + 3 * i;
      for (PetscInt k = DemPolySortedLower(S, p[ax] - w); k < S->n && S->key[k] <= p[ax] + w; k++) {
        PetscInt         t = Q->cf[S->pos[k]];
        const PetscInt  *f = Q->g->f + 3 * t;
        PetscReal        c[3], fr = Q->s * Q->g->fr[t] + lim;
        for (int j = 0; j < 3; j++) c[j] = p[j] - Q->fc[3 * t + j];
        if (Dot3(c, c) >= fr * fr) continue;
        PetscReal        d2 = DemPolyPointTriDist2(p, Q->v + 3 * f[0], Q->v + 3 * f[1], Q->v + 3 * f[2]);
        if (d2 >= lim2) continue;
        matchd_[S->pos[k]] = PetscSqrtReal(d2);
        match_[nm++]       = S->pos[k];
      }
      PetscCall(DemPolyFLPushMatches(side ? DEM_FL_FV : DEM_FL_VF, i, Q->cf, nm));
    }
  }
  { /* edge-edge */
    const DemPolySorted *S = &srt_[3];
    for (PetscInt ii = 0; ii < A->nce; ii++) {
      PetscInt        e = A->ce[ii], nm = 0;
      const PetscReal x = A->em[4 * e + ax], w = DemPolyWindow(A->em[4 * e + 3] + S->rmax + lim, rr);
      for (PetscInt k = DemPolySortedLower(S, x - w); k < S->n && S->key[k] <= x + w; k++) {
        PetscInt  f = B->ce[S->pos[k]];
        PetscReal c[3], l = A->em[4 * e + 3] + B->em[4 * f + 3] + lim;
        for (int j = 0; j < 3; j++) c[j] = A->em[4 * e + j] - B->em[4 * f + j];
        if (Dot3(c, c) >= l * l) continue;
        PetscReal d2 = DemPolySegSegDist2(A->v + 3 * ga->ev[2 * e], A->v + 3 * ga->ev[2 * e + 1], B->v + 3 * gb->ev[2 * f], B->v + 3 * gb->ev[2 * f + 1]);
        if (d2 >= lim2) continue;
        matchd_[S->pos[k]] = PetscSqrtReal(d2);
        match_[nm++]       = S->pos[k];
      }
      PetscCall(DemPolyFLPushMatches(DEM_FL_EE, e, B->ce, nm));
    }
  }
  for (int side = 0; side < 2; side++) { /* vertex-edge */
    DemPolyBody         *P = side ? B : A, *Q = side ? A : B;
    const DemPolySorted *S = &srt_[side ? 2 : 3];
    const PetscReal      w = DemPolyWindow(S->rmax + lim, rr);
    for (PetscInt ii = 0; ii < P->ncv; ii++) {
      PetscInt         i = P->cv[ii], nm = 0;
      const PetscReal *p = P->v + 3 * i;
      for (PetscInt k = DemPolySortedLower(S, p[ax] - w); k < S->n && S->key[k] <= p[ax] + w; k++) {
        PetscInt  e = Q->ce[S->pos[k]];
        PetscReal c[3], l = Q->em[4 * e + 3] + lim;
        for (int j = 0; j < 3; j++) c[j] = p[j] - Q->em[4 * e + j];
        if (Dot3(c, c) >= l * l * (1 + 1e-9)) continue; /* outside the edge's inflated bounding sphere */
        PetscReal d2 = DemPolyPointSegDist2(p, Q->v + 3 * Q->g->ev[2 * e], Q->v + 3 * Q->g->ev[2 * e + 1]);
        if (d2 >= lim2) continue;
        matchd_[S->pos[k]] = PetscSqrtReal(d2);
        match_[nm++]       = S->pos[k];
      }
      PetscCall(DemPolyFLPushMatches(side ? DEM_FL_EV : DEM_FL_VE, i, Q->ce, nm));
    }
  }
  { /* vertex-vertex */
    const DemPolySorted *S = &srt_[4];
    const PetscReal      w = DemPolyWindow(lim, rr);
    for (PetscInt ii = 0; ii < A->ncv; ii++) {
      const PetscReal *p  = A->v + 3 * A->cv[ii];
      PetscInt         nm = 0;
      for (PetscInt k = DemPolySortedLower(S, p[ax] - w); k < S->n && S->key[k] <= p[ax] + w; k++) {
        const PetscReal *q = B->v + 3 * B->cv[S->pos[k]];
        PetscReal        g[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]};
        if (Dot3(g, g) >= lim2) continue;
        matchd_[S->pos[k]] = PetscSqrtReal(Dot3(g, g));
        match_[nm++]       = S->pos[k];
      }
      PetscCall(DemPolyFLPushMatches(DEM_FL_VV, A->cv[ii], B->cv, nm));
    }
  }
  L->len = fl_.nrec - L->start;
  fl_.live += L->len;
  { /* the records by distance (DemPolyFLEval takes the near ones first) */
    PetscReal *key;
    PetscInt  *idx;
    if (L->len > capnear_) {
      PetscCall(PetscFree2(nearkey_, nearidx_));
      capnear_ = PetscMax(L->len, 2 * capnear_);
      PetscCall(PetscMalloc2(capnear_, &nearkey_, capnear_, &nearidx_));
    }
    key = nearkey_, idx = nearidx_;
    for (PetscInt k = 0; k < L->len; k++) key[k] = fl_.recd[L->start + k], idx[k] = k;
    PetscCall(PetscSortRealWithArrayInt(L->len, key, idx));
    for (PetscInt k = 0; k < L->len; k++) fl_.rec[4 * (L->start + k) + 3] = idx[k];
  }
  L->kind = DEM_FLK_POLY, L->w = NULL;
  L->ga = ga, L->gb = gb, L->r[0] = A->r, L->r[1] = B->r, L->reach = reach, L->margin = margin;
  for (int j = 0; j < 3; j++) L->x[j] = A->x[j], L->x[3 + j] = B->x[j];
  for (int j = 0; j < 4; j++) L->q[j] = qa[j], L->q[4 + j] = qb[j];
  fl_.nlist++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a bound of how far a point of the surface moved since the list: |dx| + 2 r |sin(dtheta/2)| */
static inline PetscReal DemPolyFLMotion(const PetscReal x0[3], const PetscReal q0[4], const PetscReal x[3], const PetscReal q[4], PetscReal r)
{
  PetscReal d[3] = {x[0] - x0[0], x[1] - x0[1], x[2] - x0[2]}, v[3];
  /* vector part of q q0^-1 */
  v[0] = -q[0] * q0[1] + q[1] * q0[0] - q[2] * q0[3] + q[3] * q0[2];
  v[1] = -q[0] * q0[2] + q[2] * q0[0] - q[3] * q0[1] + q[1] * q0[3];
  v[2] = -q[0] * q0[3] + q[3] * q0[0] - q[1] * q0[2] + q[2] * q0[1];
  return PetscSqrtReal(Dot3(d, d)) + 2 * r * PetscSqrtReal(Dot3(v, v));
}

/* the contacts of the listed feature pairs; vertices and normals carried to the world on demand */
static PetscErrorCode DemPolyFLEval(DemPolyBody *A, DemPolyBody *B, const DemPolyFL *L, PetscInt a, PetscInt b, PetscReal skin, PetscReal lower, DemPolyOut *out)
{
  const PetscInt  *r = fl_.rec + 4 * L->start;
  const PetscReal *rd = fl_.recd + L->start;
  /* a pair of features whose distance at the build exceeds skin + the motion since then cannot
     make a contact now (a contact's |gap| is the distance of its two features: point-triangle,
     segment-segment, point-segment or point-point, and that distance changes by at most the
     motion of the two surfaces); padded for round-off */
  const PetscReal far   = (skin + L->moved) * (1 + 1e-9) + 1e-12 * (A->r + B->r);
  PetscInt        nnear = 0;

  PetscFunctionBegin;
  PetscCheck(-lower <= skin, PETSC_COMM_SELF, PETSC_ERR_PLIB, "feature lists need lower >= -skin");
  /* the records within far: a prefix of the list's order by distance, taken in list order (the
     order of the all-pairs loops: the contacts and the hierarchy marks are those of the full list) */
  if (L->len > capnear_) {
    PetscCall(PetscFree2(nearkey_, nearidx_));
    capnear_ = PetscMax(L->len, 2 * capnear_);
    PetscCall(PetscMalloc2(capnear_, &nearkey_, capnear_, &nearidx_));
  }
  { /* their number: a binary search in the order by distance */
    PetscInt hi = L->len;
    while (nnear < hi) {
      PetscInt mid = nnear + (hi - nnear) / 2;
      if (rd[r[4 * mid + 3]] <= far) nnear = mid + 1;
      else hi = mid;
    }
  }
  /* in list order: sorting the prefix costs ~ nnear log2 nnear, a scan of the whole list (the
     same records: those within far) ~ len cheap sequential tests; the collapse of the tetrapods,
     where fast bodies take much of their lists, spent 15 % of its time in the sort (perf) */
  {
    PetscInt lg = 0;
    for (PetscInt x = nnear; x > 1; x >>= 1) lg++;
    if (nnear > 1 && 4 * nnear * lg > L->len) {
      PetscInt m = 0;
      for (PetscInt k = 0; k < L->len; k++)
        if (rd[k] <= far) nearidx_[m++] = k;
      PetscCheck(m == nnear, PETSC_COMM_SELF, PETSC_ERR_PLIB, "feature list: %" PetscInt_FMT " records within reach by order, %" PetscInt_FMT " by scan", nnear, m);
    } else {
      for (PetscInt k = 0; k < nnear; k++) nearidx_[k] = r[4 * k + 3];
      PetscCall(PetscSortInt(nnear, nearidx_));
    }
  }
  scratch_.nvf = 0;
  for (PetscInt kk = 0; kk < nnear; kk++) {
    PetscInt k = nearidx_[kk], i = r[4 * k + 1], j = r[4 * k + 2];
    switch (r[4 * k]) {
    case DEM_FL_VF:
      PetscCall(DemPolyEvalVF(A, B, i, j, a, b, PETSC_FALSE, skin, lower, out));
      break;
    case DEM_FL_FV:
      PetscCall(DemPolyEvalVF(B, A, i, j, a, b, PETSC_TRUE, skin, lower, out));
      break;
    case DEM_FL_EE:
      PetscCall(DemPolyEvalEE(A, B, i, j, a, b, skin, out));
      break;
    case DEM_FL_VE:
      PetscCall(DemPolyEvalVE(A, B, i, j, a, b, PETSC_FALSE, skin, out));
      break;
    case DEM_FL_EV:
      PetscCall(DemPolyEvalVE(B, A, i, j, a, b, PETSC_TRUE, skin, out));
      break;
    default:
      PetscCall(DemPolyEvalVV(A, B, i, j, a, b, skin, out));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the list of neighbour pair p, current for these bodies at this state (rebuilt when needed) */
/* the lists belong to the current neighbour list of sim: dropped when it was rebuilt */
static PetscErrorCode DemPolyFLReset(DemSim sim)
{
  PetscFunctionBegin;
  if (fl_.sim == sim && fl_.nbuilds == sim->nl.nbuilds && fl_.npairs == sim->nl.npairs) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscInfo(NULL, "feature lists: neighbour list build %" PetscInt_FMT " (%" PetscInt_FMT " pairs); so far %" PetscInt_FMT " lists built, %" PetscInt_FMT " reused\n", sim->nl.nbuilds, sim->nl.npairs, fl_.nlist, fl_.nreuse));
  PetscCall(PetscFree(fl_.pair));
  fl_.sim = sim, fl_.nbuilds = sim->nl.nbuilds, fl_.npairs = sim->nl.npairs;
  PetscCall(PetscMalloc1(PetscMax(fl_.npairs, 1), &fl_.pair));
  for (PetscInt k = 0; k < fl_.npairs; k++) fl_.pair[k].start = -1, fl_.pair[k].len = 0;
  fl_.nrec = fl_.live = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* list L holds for these bodies (geometry, radius) at these positions and orientations */
static inline PetscBool DemPolyFLValid(const DemPolyFL *L, const DemPolyGeom *ga, const DemPolyGeom *gb, PetscReal ra, PetscReal rb, const PetscReal xa[3], const PetscReal qa[4], const PetscReal xb[3], const PetscReal qb[4], PetscReal reach)
{
  return (L->start >= 0 && L->kind == DEM_FLK_POLY && L->ga == ga && L->gb == gb && L->r[0] == ra && L->r[1] == rb && L->reach == reach && DemPolyFLMotion(L->x, L->q, xa, qa, ra) < L->margin && DemPolyFLMotion(L->x + 3, L->q + 4, xb, qb, rb) < L->margin) ? PETSC_TRUE : PETSC_FALSE;
}

/* the list of neighbour pair p, current for these bodies at this state (rebuilt when needed) */
static PetscErrorCode DemPolyFLGet(DemSim sim, PetscInt p, DemPolyBody *A, DemPolyBody *B, const PetscReal qa[4], const PetscReal qb[4], PetscReal reach, DemPolyFL **Lout)
{
  DemPolyFL *L;
  PetscReal  margin;

  PetscFunctionBegin;
  PetscCall(DemPolyFLReset(sim));
  PetscCheck(p >= 0 && p < fl_.npairs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "pair %" PetscInt_FMT " outside the neighbour list (%" PetscInt_FMT ")", p, fl_.npairs);
  L      = &fl_.pair[p];
  margin = fl_.fmargin * reach;
  if (DemPolyFLValid(L, A->g, B->g, A->r, B->r, A->x, qa, B->x, qb, reach)) {
    fl_.nreuse++;
    A->lazy = B->lazy = PETSC_TRUE;
    L->moved = DemPolyFLMotion(L->x, L->q, A->x, qa, A->r) + DemPolyFLMotion(L->x + 3, L->q + 4, B->x, qb, B->r);
    *Lout = L;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  DemPolyCandidates(A, B->x, B->r, reach + 2 * margin);
  DemPolyCandidates(B, A->x, A->r, reach + 2 * margin);
  { /* narrower: a pair of features within lim has each feature within lim of the other body's
       candidate box; B's candidates near A's box, then A's near the box of those (the listed
       pairs and their order are unchanged, far fewer pairs are tested: the bounding spheres of
       non-convex bodies such as tetrapods cover most of the other body's features) */
    PetscReal lo[3], hi[3];
    DemPolyCandidateBox(A, lo, hi);
    DemPolyCandidateCut(B, lo, hi, reach + 2 * margin);
    DemPolyCandidateBox(B, lo, hi);
    DemPolyCandidateCut(A, lo, hi, reach + 2 * margin);
  }
  PetscCall(DemPolyFLCompact());
  PetscCall(DemPolyFLBuild(A, B, qa, qb, reach, margin, L));
  L->moved = 0;
  /* DemPolyCandidates carried every vertex and normal to the world: A and B stay not lazy */
  *Lout = L;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -poly_feature_lists, -poly_feature_margin: read once */
static PetscErrorCode DemPolyFLOptions(void)
{
  PetscBool set, on = PETSC_TRUE;

  PetscFunctionBegin;
  if (fl_.enabled >= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-poly_feature_lists", &on, &set));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-poly_feature_margin", &fl_.fmargin, &set));
  PetscCheck(fl_.fmargin > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-poly_feature_margin must be > 0 (got %g)", (double)fl_.fmargin);
  fl_.enabled = on ? 1 : 0;
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
    PetscInt       c0;
    for (int j = 0; j < 3; j++) d[j] = pb->state->x[3 * a + j] - pb->state->x[3 * b + j] - (pb->shift ? pb->shift[3 * k + j] : 0);
    if (Dot3(d, d) >= rs * rs) continue; /* first level: inflated bounding spheres */
    if (pb->pair && skin > 0 && fl_.enabled) { /* running: feature-level Verlet lists */
      DemPolyFL *L = NULL;
      PetscCall(DemPolyFLOptions());
      if (fl_.enabled) {
        PetscReal xb[3];
        PetscCall(DemPolyFLReset(sim));
        PetscCheck(pb->pair[k] >= 0 && pb->pair[k] < fl_.npairs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "pair %" PetscInt_FMT " outside the neighbour list (%" PetscInt_FMT ")", pb->pair[k], fl_.npairs);
        L = &fl_.pair[pb->pair[k]];
        for (int j = 0; j < 3; j++) xb[j] = pb->state->x[3 * b + j] + (pb->shift ? pb->shift[3 * k + j] : 0);
        /* a valid empty list: no pair of features within reach, nothing to carry to the world */
        if (!L->len && DemPolyFLValid(L, DemShapePolyhedronGeom_Private(sim->shapes[bs->shape[a]]), DemShapePolyhedronGeom_Private(sim->shapes[bs->shape[b]]), bs->radius[a], bs->radius[b], &pb->state->x[3 * a], &pb->state->q[4 * a], xb, &pb->state->q[4 * b], skin)) {
          fl_.nreuse++;
          continue;
        }
        PetscCall(DemPolyBodySet(sim, pb, a, NULL, 0, &A));
        PetscCall(DemPolyBodySet(sim, pb, b, pb->shift ? pb->shift + 3 * k : NULL, 1, &B));
        po.pair = pb->pair[k];
        PetscCall(DemPolyFLGet(sim, pb->pair[k], &A, &B, &pb->state->q[4 * a], &pb->state->q[4 * b], skin, &L));
        c0 = out->n;
        PetscCall(DemPolyFLEval(&A, &B, L, a, b, skin, -skin, &po));
        PetscCall(DemPolyInherit(&po, A.g, B.g, c0));
        continue;
      }
    }
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
    c0 = out->n;
    PetscCall(DemPolyPair(&A, &B, a, b, skin, lowA, lowB, &po));
    PetscCall(DemPolyInherit(&po, A.g, B.g, c0));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "polyhedron/polyhedron", DemCollide_PolyhedronPolyhedron)

/* corner i of A against the plane (point xb, normal n): its height h + s y . nb from the centre's
   height h (nb: n in A's frame), carried to the world only when below cut */
static inline PetscErrorCode DemPolyPlaneCorner(DemPolyBody *A, PetscInt i, PetscReal h, const PetscReal nb[3], PetscReal cut, const PetscReal xb[3], const PetscReal n[3], PetscReal skin, PetscReal low, PetscInt a, PetscInt b, DemPolyOut *po)
{
  const DemPolyGeom *g = A->g;
  const PetscReal   *p = A->v + 3 * i;
  PetscReal          hv, pp[3], w[3];

  PetscFunctionBegin;
  if (!g->vsharp[i] || !(h + A->s * Dot3(g->v + 3 * i, nb) < cut)) PetscFunctionReturn(PETSC_SUCCESS);
  Rot(A->R, g->v + 3 * i, w);
  for (int j = 0; j < 3; j++) A->v[3 * i + j] = A->x[j] + A->s * w[j];
  hv = (p[0] - xb[0]) * n[0] + (p[1] - xb[1]) * n[1] + (p[2] - xb[2]) * n[2];
  if (!(hv < skin && hv > low)) PetscFunctionReturn(PETSC_SUCCESS);
  for (int j = 0; j < 3; j++) pp[j] = p[j] - hv * n[j];
  PetscCall(DemPolyAppend(po, a, b, A->x, xb, p, pp, n, hv, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_F, 0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Corner lists of polyhedron/plane pairs (same store as the feature lists above, a record
  (DEM_FL_PV, corner, 0) per corner): the sharp corners whose height was below cut + 2 m when
  listed, kept while the body moves a point of its surface by less than the margin m and the
  plane has not moved at all; the corners are then examined in the same order as without the
  list, so the contacts are the same.
*/
static inline PetscBool DemPolyFLPlaneValid(const DemPolyFL *L, const DemPolyGeom *ga, PetscReal ra, const PetscReal xa[3], const PetscReal qa[4], const PetscReal xb[3], const PetscReal qb[4], PetscReal reach)
{
  if (!(L->start >= 0 && L->kind == DEM_FLK_PLANE && L->ga == ga && !L->gb && L->r[0] == ra && L->reach == reach)) return PETSC_FALSE;
  for (int j = 0; j < 3; j++)
    if (L->x[3 + j] != xb[j]) return PETSC_FALSE;
  for (int j = 0; j < 4; j++)
    if (L->q[4 + j] != qb[j]) return PETSC_FALSE;
  return DemPolyFLMotion(L->x, L->q, xa, qa, ra) < L->margin ? PETSC_TRUE : PETSC_FALSE;
}

static PetscErrorCode DemPolyFLPlaneBuild(const DemPolyBody *A, PetscReal h, const PetscReal nb[3], PetscReal cut, const PetscReal qa[4], const PetscReal xb[3], const PetscReal qb[4], PetscReal reach, DemPolyFL *L)
{
  const DemPolyGeom *g = A->g;
  const PetscReal    margin = fl_.fmargin * reach, lim = cut + 2 * margin;

  PetscFunctionBegin;
  PetscCall(DemPolyFLCompact());
  if (L->start >= 0) fl_.live -= L->len;
  L->start = fl_.nrec;
  for (PetscInt i = 0; i < g->nv; i++)
    if (g->vsharp[i] && h + A->s * Dot3(g->v + 3 * i, nb) < lim) PetscCall(DemPolyFLPush(DEM_FL_PV, i, 0, 0));
  L->len = fl_.nrec - L->start;
  fl_.live += L->len;
  L->kind = DEM_FLK_PLANE, L->w = NULL;
  L->ga = g, L->gb = NULL, L->r[0] = A->r, L->r[1] = 0, L->reach = reach, L->margin = margin;
  for (int j = 0; j < 3; j++) L->x[j] = A->x[j], L->x[3 + j] = xb[j];
  for (int j = 0; j < 4; j++) L->q[j] = qa[j], L->q[4 + j] = qb[j];
  fl_.nlist++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
      /* the plane's normal in A's frame: a vertex's height is h + s y . nb up to round-off, so
         only the corners within skin (plus a relative 1e-9 of the radius) go to the world frame */
      PetscReal nb[3], cut = skin + 1e-9 * A.r;
      for (int j = 0; j < 3; j++) nb[j] = A.R[j] * n[0] + A.R[3 + j] * n[1] + A.R[6 + j] * n[2];
      if (pb->pair && skin > 0) PetscCall(DemPolyFLOptions());
      if (pb->pair && skin > 0 && fl_.enabled) { /* running: the corners listed for this pair */
        DemPolyFL *L;
        PetscCall(DemPolyFLReset(sim));
        PetscCheck(pb->pair[k] >= 0 && pb->pair[k] < fl_.npairs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "pair %" PetscInt_FMT " outside the neighbour list (%" PetscInt_FMT ")", pb->pair[k], fl_.npairs);
        L = &fl_.pair[pb->pair[k]];
        if (!DemPolyFLPlaneValid(L, g, A.r, A.x, &q[4 * a], xb, &q[4 * b], skin)) PetscCall(DemPolyFLPlaneBuild(&A, h, nb, cut, &q[4 * a], xb, &q[4 * b], skin, L));
        else fl_.nreuse++;
        for (PetscInt r = 0; r < L->len; r++) PetscCall(DemPolyPlaneCorner(&A, fl_.rec[4 * (L->start + r) + 1], h, nb, cut, xb, n, skin, low, a, b, &po));
      } else {
        for (PetscInt i = 0; i < g->nv; i++) PetscCall(DemPolyPlaneCorner(&A, i, h, nb, cut, xb, n, skin, low, a, b, &po));
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "polyhedron/plane", DemCollide_PolyhedronPlane)

/*
  Sphere (a) against polyhedron (b): the sphere's centre c is a vertex with a radius R, so its
  contacts with B's sub-regions are the degenerate problems vertex-face (eq. (34)), vertex-edge
  (eq. (36)) and vertex-vertex, with the validity and ownership rules of the polyhedron pairs
  (closest point of the surface to c: projection inside a triangle, on an edge whose two
  triangles it lies outside of, or at a corner no edge of which leads towards c) and the
  hierarchy of 000 section 3.6: a re-entrant edge whose two triangles already hold the sphere,
  and a corner with a contact on a triangle or an edge at it, add nothing. Gap = distance - R
  (vertex-face: signed, negative behind the face down to the lower bound), normal from B's point
  to c, contact point in the middle of the gap, effective radius R; feature keys (V 0, X k) keep
  each contact's friction history.
*/
static PetscErrorCode DemPolySpherePair(const PetscReal c[3], PetscReal R, DemPolyBody *B, PetscInt a, PetscInt b, PetscReal skin, PetscReal lower, DemPolyOut *out)
{
  const DemPolyGeom *gb  = B->g;
  const PetscReal    tol = 1e-9;

  PetscFunctionBegin;
  scratch_.nvf = 0;
  for (PetscInt tt = 0; tt < B->ncf; tt++) {
    PetscInt         t  = B->cf[tt];
    const PetscReal *x1 = B->v + 3 * gb->f[3 * t], *x2 = B->v + 3 * gb->f[3 * t + 1], *x3 = B->v + 3 * gb->f[3 * t + 2], *n = B->fn + 3 * t;
    PetscReal        zeta, theta, dist, gap, q[3], pa[3];
    DemPolyLCPVertexFace(c, x1, x2, x3, &zeta, &theta, &dist);
    gap = dist - R;
    if (!(gap < skin && gap > lower)) continue;
    if (!DemPolyFaceValid(gb, t, zeta, theta)) continue;
    DemPolyFacePoint(x1, x2, x3, zeta, theta, q);
    for (int j = 0; j < 3; j++) pa[j] = c[j] - R * n[j];
    PetscCall(DemPolyAppend(out, a, b, c, B->x, pa, q, n, gap, R, DemPolyFeatureKey(DEM_POLY_V, 0, DEM_POLY_F, t)));
    PetscCall(DemPolyMarkPush(0, DEM_POLY_F, t));
  }
  for (PetscInt ee = 0; ee < B->nce; ee++) {
    PetscInt         e  = B->ce[ee];
    const PetscReal *q0 = B->v + 3 * gb->ev[2 * e], *q1 = B->v + 3 * gb->ev[2 * e + 1];
    PetscReal        zeta, q[3], g[3], d, gap, n[3], pa[3];
    DemPolyLCPVertexEdge(c, q0, q1, &zeta);
    if (!(zeta > -1 && zeta < 1)) continue;
    DemPolyEdgePoint(q0, q1, zeta, q);
    for (int j = 0; j < 3; j++) g[j] = c[j] - q[j];
    d   = PetscSqrtReal(Dot3(g, g));
    gap = d - R;
    if (!(gap < skin && gap > lower) || d == 0) continue;
    for (int j = 0; j < 3; j++) n[j] = g[j] / d, pa[j] = c[j] - R * n[j];
    if (!DemPolyEdgeFaces(B, e, n, PETSC_FALSE, tol)) continue;
    /* hierarchy, 000 section 3.6: a re-entrant edge whose two triangles already hold the sphere */
    if (gb->econcave[e] && DemPolyMarked(0, DEM_POLY_F, gb->ef[2 * e]) && DemPolyMarked(0, DEM_POLY_F, gb->ef[2 * e + 1])) continue;
    PetscCall(DemPolyAppend(out, a, b, c, B->x, pa, q, n, gap, R, DemPolyFeatureKey(DEM_POLY_V, 0, DEM_POLY_E, e)));
    PetscCall(DemPolyMarkPush(0, DEM_POLY_E, e));
  }
  for (PetscInt kk = 0; kk < B->ncv; kk++) {
    PetscInt         k = B->cv[kk];
    const PetscReal *q = B->v + 3 * k;
    PetscReal        g[3] = {c[0] - q[0], c[1] - q[1], c[2] - q[2]}, d = PetscSqrtReal(Dot3(g, g)), gap = d - R, n[3], pa[3];
    if (!(gap < skin && gap > lower) || d == 0) continue;
    for (int j = 0; j < 3; j++) n[j] = g[j] / d, pa[j] = c[j] - R * n[j];
    if (!DemPolyVertexFaces(B, k, n, 0)) continue;
    if (DemPolyVertexHasNeighbourContact(gb, 0, k, 0)) continue;
    PetscCall(DemPolyAppend(out, a, b, c, B->x, pa, q, n, gap, R, DemPolyFeatureKey(DEM_POLY_V, 0, DEM_POLY_V, k)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Feature lists of sphere/polyhedron pairs (same store as above): B's candidate features
  (DemPolyCandidates) for the sphere inflated by the reach plus 2 m, m = F reach, with the
  sphere's centre in B's body frame at that moment; kept while that centre moves (in B's frame:
  B's rotation counts) less than m. A feature that is a candidate now is within m of where it was
  in B's frame, so it is on the list; an evaluation applies DemPolyCandidates' own tests to the
  listed features (in their order: faces, edges, vertices by index) and carries only those to the
  world: the same candidates as without the list, so the same contacts in the same order.
*/
static PetscErrorCode DemPolySphereFLCandidates(DemSim sim, PetscInt p, DemPolyBody *B, const PetscReal c[3], PetscReal R, PetscReal reach)
{
  const DemPolyGeom *g = B->g;
  DemPolyFL         *L;
  PetscReal          cb[3], dc[3], lim;
  const PetscInt    *r;
  PetscInt           nv = 0, ne = 0, nf = 0;

  PetscFunctionBegin;
  PetscCall(DemPolyFLReset(sim));
  PetscCheck(p >= 0 && p < fl_.npairs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "pair %" PetscInt_FMT " outside the neighbour list (%" PetscInt_FMT ")", p, fl_.npairs);
  L = &fl_.pair[p];
  DemPolyBodyPoint(B, c, cb);
  for (int j = 0; j < 3; j++) dc[j] = cb[j] - L->x[j];
  if (L->start >= 0 && L->kind == DEM_FLK_SPHERE && L->gb == g && L->r[0] == R && L->r[1] == B->r && L->reach == reach && B->s * PetscSqrtReal(Dot3(dc, dc)) < L->margin) {
    fl_.nreuse++;
    B->lazy = PETSC_TRUE;
  } else { /* build: every vertex and normal goes to the world (B stays not lazy) */
    const PetscReal margin = fl_.fmargin * reach;
    PetscCall(DemPolyFLCompact());
    DemPolyCandidates(B, c, R, reach + 2 * margin);
    if (L->start >= 0) fl_.live -= L->len;
    L->start = fl_.nrec;
    for (PetscInt k = 0; k < B->ncf; k++) PetscCall(DemPolyFLPush(DEM_POLY_F, B->cf[k], 0, 0));
    for (PetscInt k = 0; k < B->nce; k++) PetscCall(DemPolyFLPush(DEM_POLY_E, B->ce[k], 0, 0));
    for (PetscInt k = 0; k < B->ncv; k++) PetscCall(DemPolyFLPush(DEM_POLY_V, B->cv[k], 0, 0));
    L->len = fl_.nrec - L->start;
    fl_.live += L->len;
    L->kind = DEM_FLK_SPHERE, L->w = NULL, L->ga = NULL, L->gb = g;
    L->r[0] = R, L->r[1] = B->r, L->reach = reach, L->margin = margin;
    for (int j = 0; j < 3; j++) L->x[j] = cb[j];
    fl_.nlist++;
  }
  /* the candidates now, DemPolyCandidates' tests (lim as there: reach = skin) */
  lim = (R + reach) / B->s;
  r   = fl_.rec + 4 * L->start;
  for (PetscInt k = 0; k < L->len; k++) {
    PetscInt  i = r[4 * k + 1];
    PetscReal h2;
    switch (r[4 * k]) {
    case DEM_POLY_F:
      if (DemPolyCandF(g, i, cb, lim)) B->cf[nf++] = i, DemPolyTouchF(B, i);
      break;
    case DEM_POLY_E:
      if (DemPolyCandE(g, i, cb, lim, &h2)) B->ce[ne++] = i, DemPolyTouchV(B, g->ev[2 * i]), DemPolyTouchV(B, g->ev[2 * i + 1]), DemPolyTouchE(B, i);
      break;
    default:
      if (DemPolyCandV(g, i, cb, lim)) B->cv[nv++] = i, DemPolyTouchV(B, i), DemPolyTouchVN(B, i);
    }
  }
  B->ncv = nv, B->nce = ne, B->ncf = nf;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode DemCollide_SpherePolyhedron(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_SpherePolyhedron(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  DemSim        sim = pb->sim;
  DemBodyStore *bs;
  DemPolyOut    po = {out, sim, -1};

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt a = pb->a[k], b = pb->b[k];
    const PetscReal R = bs->radius[a];
    DemPolyBody    B;
    PetscReal      c[3], d[3], rs = R + bs->radius[b] + skin, lower;
    for (int j = 0; j < 3; j++) {
      c[j] = pb->state->x[3 * a + j];
      d[j] = c[j] - pb->state->x[3 * b + j] - (pb->shift ? pb->shift[3 * k + j] : 0);
    }
    if (Dot3(d, d) >= rs * rs) continue; /* first level: inflated bounding spheres */
    PetscCall(DemPolyBodySet(sim, pb, b, pb->shift ? pb->shift + 3 * k : NULL, 1, &B));
    lower = skin > 0 ? -skin : -R;
    if (pb->pair && skin > 0) PetscCall(DemPolyFLOptions());
    if (pb->pair && skin > 0 && fl_.enabled) { /* running: the feature list of the pair */
      po.pair = pb->pair[k];
      PetscCall(DemPolySphereFLCandidates(sim, pb->pair[k], &B, c, R, skin));
      if (!B.ncv && !B.nce && !B.ncf) continue;
      PetscCall(DemPolySpherePair(c, R, &B, a, b, skin, lower, &po));
      continue;
    }
    /* second level: B's features near the sphere inflated by the reach */
    DemPolyCandidates(&B, c, R, PetscMax(skin, -lower));
    po.pair = pb->pair ? pb->pair[k] : -1;
    if (!pb->pair && skin <= 0 && DemPolyWinding(&B, c) >= 0.5) { /* set-up check: centre inside B */
      PetscReal depth = PETSC_MAX_REAL, n[3] = {0, 0, 1};
      for (PetscInt t = 0; t < B.g->nf; t++) {
        const PetscReal *x1 = B.v + 3 * B.g->f[3 * t], *fn = B.fn + 3 * t;
        PetscReal        e[3] = {c[0] - x1[0], c[1] - x1[1], c[2] - x1[2]}, h = -Dot3(e, fn);
        if (h < depth) depth = h, n[0] = fn[0], n[1] = fn[1], n[2] = fn[2];
      }
      PetscCall(DemPolyAppend(&po, a, b, c, B.x, c, c, n, -(R + PetscMax(depth, 0)), R, DemPolyFeatureKey(DEM_POLY_V, 0, DEM_POLY_F, 0)));
      continue;
    }
    if (!B.ncv && !B.nce && !B.ncf) continue;
    PetscCall(DemPolySpherePair(c, R, &B, a, b, skin, lower, &po));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "sphere/polyhedron", DemCollide_SpherePolyhedron)

/*
  Polyhedron (a) against a mesh wall (b): the master-master degenerate problems between A's
  sub-regions and the wall's, as between two polyhedra, worked out in the wall's body frame.
  The wall's sub-regions are its triangles, its sharp edges (a boundary edge, or two triangles
  that are not coplanar: the triangulation of a flat wall adds no edges) and its sharp vertices
  (ends of sharp edges). The wall is two-sided: a triangle's normal is turned to the side of A's
  centre. A wall edge owns, for a vertex-edge pair, the directions outside both of its
  triangles' sides (the wedge of the convex side; from the concave side of a crease the contacts
  are vertex-face ones), and for an edge-edge pair (a crossing) the gap directions that leave
  the wall there, as between two polyhedra.
  The pairs: A's corners against the wall's triangles (eq. (34)), edges (eq. (36)) and vertices;
  the wall's sharp vertices against A's triangles and edges; A's edges against the wall's sharp
  edges (eq. (35)); hierarchy of 000 section 3.6 as for two polyhedra. Feature keys: (type in
  A, index, type in the wall, index), so friction history follows each contact.
*/
typedef struct {
  PetscInt  *ce, *cv, cap_e, cap_v; /* candidate wall edges (all) and sharp vertices */
  char      *esharp;                /* [cap_e] the candidate edge is sharp */
  PetscInt  *vstamp, cap_stamp, stamp;
  /* feature lists (DemPolyMeshFL*): listed wall triangles, the filtered candidates, and marks of
     A's features and the wall's triangles at a build */
  PetscInt  *tstamp, cap_t, tst;
  PetscInt  *fcand, cap_fcand;
  char      *mv, *me, *mf, *mt;
  PetscInt   cap_mv, cap_me, cap_mf, cap_mt;
} DemPolyMeshScratch;
static DemPolyMeshScratch pmscratch_;

static PetscErrorCode DemPolyMeshReserve(PetscInt ne, PetscInt nv)
{
  DemPolyMeshScratch *S = &pmscratch_;

  PetscFunctionBegin;
  if (ne > S->cap_e) {
    PetscCall(PetscFree(S->ce));
    PetscCall(PetscFree(S->esharp));
    S->cap_e = PetscMax(ne, 2 * S->cap_e);
    PetscCall(PetscMalloc1(S->cap_e, &S->ce));
    PetscCall(PetscMalloc1(S->cap_e, &S->esharp));
  }
  if (nv > S->cap_v) {
    PetscCall(PetscFree(S->cv));
    S->cap_v = PetscMax(nv, 2 * S->cap_v);
    PetscCall(PetscMalloc1(S->cap_v, &S->cv));
  }
  if (nv > S->cap_stamp) {
    PetscCall(PetscFree(S->vstamp));
    S->cap_stamp = PetscMax(nv, 2 * S->cap_stamp);
    PetscCall(PetscCalloc1(S->cap_stamp, &S->vstamp));
    S->stamp = 0;
  }
  if (++S->stamp == PETSC_MAX_INT) {
    PetscCall(PetscArrayzero(S->vstamp, S->cap_stamp));
    S->stamp = 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscBool DemMeshEdgeFlat(const DemMeshView *m, PetscInt e)
{
  PetscInt t0 = m->et[2 * e], t1 = m->et[2 * e + 1];
  if (t0 < 0 || t1 < 0) return PETSC_FALSE;
  return Dot3(m->fn + 3 * t0, m->fn + 3 * t1) > 1 - 1e-10 ? PETSC_TRUE : PETSC_FALSE;
}

/* the wall edge e owns direction d (unit, away from the wall): d points out of the side of each
   of its triangles (in-plane direction from the edge into the triangle: d . t < 0) */
static inline PetscBool DemMeshEdgeOwns(const DemMeshView *m, PetscInt e, const PetscReal d[3])
{
  const PetscReal *p = m->x + 3 * m->ev[2 * e], *q = m->x + 3 * m->ev[2 * e + 1];
  PetscReal        u[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
  for (int k = 0; k < 2; k++) {
    PetscInt         t = m->et[2 * e + k];
    const PetscReal *n;
    PetscReal        tv[3], cc[3] = {0, 0, 0};
    if (t < 0) continue;
    n     = m->fn + 3 * t;
    tv[0] = n[1] * u[2] - n[2] * u[1];
    tv[1] = n[2] * u[0] - n[0] * u[2];
    tv[2] = n[0] * u[1] - n[1] * u[0];
    for (int a = 0; a < 3; a++)
      for (int j = 0; j < 3; j++) cc[j] += m->x[3 * m->tri[3 * t + a] + j] / 3 - p[j] / 3;
    if (Dot3(tv, cc) < 0)
      for (int j = 0; j < 3; j++) tv[j] = -tv[j];
    if (!(Dot3(d, tv) < 0)) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* the gap direction d (unit, away from the wall) leaves the wall at its edge e, for an edge-edge
   pair (as DemPolyEdgeOutward): each triangle's normal is turned to the side of the point y
   (A's centre); at an edge convex from that side d is outside one of the two planes, at a
   re-entrant one outside both; a boundary edge takes any d not behind its triangle */
static inline PetscBool DemMeshEdgeOutward(const DemMeshView *m, PetscInt e, const PetscReal d[3], const PetscReal y[3], PetscReal tol)
{
  PetscInt         t0 = m->et[2 * e], t1 = m->et[2 * e + 1];
  const PetscReal *p  = m->x + 3 * m->ev[2 * e];
  PetscReal        r[3] = {y[0] - p[0], y[1] - p[1], y[2] - p[2]}, s0, s1, c0, c1, h = 0;
  s0 = Dot3(r, m->fn + 3 * t0) >= 0 ? 1 : -1;
  c0 = s0 * Dot3(d, m->fn + 3 * t0);
  if (t1 < 0) return c0 >= -tol ? PETSC_TRUE : PETSC_FALSE;
  s1 = Dot3(r, m->fn + 3 * t1) >= 0 ? 1 : -1;
  c1 = s1 * Dot3(d, m->fn + 3 * t1);
  for (int k = 0; k < 3; k++) { /* the vertex of t1 off the edge, against t0's turned plane */
    PetscInt v = m->tri[3 * t1 + k];
    if (v != m->ev[2 * e] && v != m->ev[2 * e + 1]) {
      for (int j = 0; j < 3; j++) h += (m->x[3 * v + j] - p[j]) * s0 * m->fn[3 * t0 + j];
      break;
    }
  }
  if (h > 0) return (c0 >= -tol && c1 >= -tol) ? PETSC_TRUE : PETSC_FALSE;
  return (c0 > 0 || c1 > 0) ? PETSC_TRUE : PETSC_FALSE;
}

/* validity of a projection on wall triangle t (000 Fig. 1, N >= 0); on a flat edge the triangle
   of lower index keeps the boundary, exactly at a vertex nothing (the vertex or the lower
   triangle's edge owns it) */
static inline PetscBool DemMeshFaceValid(const DemMeshView *m, PetscInt t, PetscReal zeta, PetscReal theta)
{
  PetscReal N[3] = {-0.5 * (zeta + theta), 0.5 * (1 + zeta), 0.5 * (1 + theta)};
  int       zeros = 0;
  for (int k = 0; k < 3; k++) {
    if (N[k] < 0) return PETSC_FALSE;
    if (N[k] == 0) {
      PetscInt e = m->te[3 * t + (k + 1) % 3], o = m->et[2 * e] == t ? m->et[2 * e + 1] : m->et[2 * e];
      if (DemMeshEdgeFlat(m, e) && o < t) return PETSC_FALSE;
      zeros++;
    }
  }
  return zeros < 2;
}

/* a contact found in the wall's frame: points and normal to the world, then appended */
typedef struct {
  PetscReal R[9], x[3]; /* wall orientation (body -> world) and position */
  PetscReal xa[3];      /* A's centre, world */
} DemPolyMeshFrame;

static PetscErrorCode DemPolyMeshAppend(DemPolyOut *po, const DemPolyMeshFrame *fr, PetscInt a, PetscInt b, const PetscReal pa[3], const PetscReal pb[3], const PetscReal n[3], PetscReal gap, PetscReal reff, int64_t key)
{
  PetscReal wa[3], wb[3], wn[3];

  PetscFunctionBegin;
  Rot(fr->R, pa, wa);
  Rot(fr->R, pb, wb);
  Rot(fr->R, n, wn);
  for (int j = 0; j < 3; j++) wa[j] += fr->x[j], wb[j] += fr->x[j];
  PetscCall(DemPolyAppend(po, a, b, fr->xa, fr->x, wa, wb, wn, gap, reff, key));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPolyMeshPair(DemPolyBody *A, const DemMeshView *m, const PetscInt *cand, PetscInt ncand, const DemPolyMeshFrame *fr, PetscInt a, PetscInt b, PetscReal skin, PetscReal lower, DemPolyOut *out)
{
  DemPolyMeshScratch *S  = &pmscratch_;
  const DemPolyGeom  *ga = A->g;
  const PetscReal     tol = 1e-9;
  PetscInt            nce = 0, ncv = 0;

  PetscFunctionBegin;
  scratch_.nvf = 0;
  /* candidate edges: each once, from its first triangle (a wall edge near A has both of its
     triangles among the candidates); sharp vertices: the ends of sharp edges */
  for (PetscInt i = 0; i < ncand; i++) {
    PetscInt t = cand[i];
    for (int k = 0; k < 3; k++) {
      PetscInt e = m->te[3 * t + k];
      if (m->et[2 * e] != t) continue;
      S->ce[nce]     = e;
      S->esharp[nce] = DemMeshEdgeFlat(m, e) ? 0 : 1;
      if (S->esharp[nce])
        for (int s = 0; s < 2; s++) {
          PetscInt v = m->ev[2 * e + s];
          if (S->vstamp[v] != S->stamp) S->vstamp[v] = S->stamp, S->cv[ncv++] = v;
        }
      nce++;
    }
  }
  /* A's corners against the wall's triangles, eq. (34) */
  for (PetscInt ii = 0; ii < A->ncv; ii++) {
    PetscInt         i = A->cv[ii];
    const PetscReal *p = A->v + 3 * i;
    for (PetscInt tt = 0; tt < ncand; tt++) {
      PetscInt         t  = cand[tt];
      const PetscReal *x1 = m->x + 3 * m->tri[3 * t], *x2 = m->x + 3 * m->tri[3 * t + 1], *x3 = m->x + 3 * m->tri[3 * t + 2];
      PetscReal        zeta, theta, dist, side, n[3], q[3], c[3];
      for (int j = 0; j < 3; j++) c[j] = A->x[j] - x1[j];
      side = Dot3(c, m->fn + 3 * t) >= 0 ? 1 : -1;
      DemPolyLCPVertexFace(p, x1, x2, x3, &zeta, &theta, &dist);
      dist *= side;
      if (!(dist < skin && dist > lower)) continue;
      if (!DemMeshFaceValid(m, t, zeta, theta)) continue;
      for (int j = 0; j < 3; j++) n[j] = side * m->fn[3 * t + j];
      DemPolyFacePoint(x1, x2, x3, zeta, theta, q);
      PetscCall(DemPolyMeshAppend(out, fr, a, b, p, q, n, dist, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_F, t)));
      PetscCall(DemPolyMarkPush(i, DEM_POLY_F, t));
    }
  }
  /* the wall's sharp vertices against A's triangles */
  for (PetscInt kk = 0; kk < ncv; kk++) {
    PetscInt         k = S->cv[kk];
    const PetscReal *p = m->x + 3 * k;
    for (PetscInt tt = 0; tt < A->ncf; tt++) {
      PetscInt         t  = A->cf[tt];
      const PetscReal *x1 = A->v + 3 * ga->f[3 * t], *x2 = A->v + 3 * ga->f[3 * t + 1], *x3 = A->v + 3 * ga->f[3 * t + 2], *nA = A->fn + 3 * t;
      PetscReal        zeta, theta, dist, q[3], n[3];
      DemPolyLCPVertexFace(p, x1, x2, x3, &zeta, &theta, &dist);
      if (!(dist < skin && dist > lower)) continue;
      if (!DemPolyFaceValid(ga, t, zeta, theta)) continue;
      DemPolyFacePoint(x1, x2, x3, zeta, theta, q);
      for (int j = 0; j < 3; j++) n[j] = -nA[j];
      PetscCall(DemPolyMeshAppend(out, fr, a, b, q, p, n, dist, A->r, DemPolyFeatureKey(DEM_POLY_F, t, DEM_POLY_V, k)));
      PetscCall(DemPolyMarkPush(k, DEM_POLY_F + 4, t));
    }
  }
  /* edge-edge, eq. (35): A's sharp edges against the wall's sharp edges */
  for (PetscInt ii = 0; ii < A->nce; ii++) {
    PetscInt         e  = A->ce[ii];
    const PetscReal *p0 = A->v + 3 * ga->ev[2 * e], *p1 = A->v + 3 * ga->ev[2 * e + 1];
    for (PetscInt jj = 0; jj < nce; jj++) {
      PetscInt         f = S->ce[jj];
      const PetscReal *q0 = m->x + 3 * m->ev[2 * f], *q1 = m->x + 3 * m->ev[2 * f + 1];
      PetscReal        za, zb, pa[3], pb[3], g[3], d, n[3], mn[3];
      if (!S->esharp[jj]) continue;
      if (!DemPolyLCPEdgeEdge(p0, p1, q0, q1, &za, &zb)) continue;
      if (!(za > -1 && za < 1 && zb > -1 && zb < 1)) continue;
      DemPolyEdgePoint(p0, p1, za, pa);
      DemPolyEdgePoint(q0, q1, zb, pb);
      for (int j = 0; j < 3; j++) g[j] = pa[j] - pb[j];
      d = PetscSqrtReal(Dot3(g, g));
      if (!(d < skin) || d == 0) continue;
      for (int j = 0; j < 3; j++) n[j] = g[j] / d, mn[j] = -n[j];
      if (!DemMeshEdgeOutward(m, f, n, A->x, tol) || !DemPolyEdgeOutward(A, e, mn, tol)) continue;
      PetscCall(DemPolyMeshAppend(out, fr, a, b, pa, pb, n, d, A->r, DemPolyFeatureKey(DEM_POLY_E, e, DEM_POLY_E, f)));
    }
  }
  /* A's corners against the wall's sharp edges, eq. (36) */
  for (PetscInt ii = 0; ii < A->ncv; ii++) {
    PetscInt         i = A->cv[ii];
    const PetscReal *p = A->v + 3 * i;
    for (PetscInt jj = 0; jj < nce; jj++) {
      PetscInt         f = S->ce[jj];
      const PetscReal *q0 = m->x + 3 * m->ev[2 * f], *q1 = m->x + 3 * m->ev[2 * f + 1];
      PetscReal        zeta, q[3], g[3], d, n[3];
      if (!S->esharp[jj]) continue;
      DemPolyLCPVertexEdge(p, q0, q1, &zeta);
      if (!(zeta > -1 && zeta < 1)) continue;
      DemPolyEdgePoint(q0, q1, zeta, q);
      for (int j = 0; j < 3; j++) g[j] = p[j] - q[j];
      d = PetscSqrtReal(Dot3(g, g));
      if (!(d < skin) || d == 0) continue;
      for (int j = 0; j < 3; j++) n[j] = g[j] / d;
      if (!DemMeshEdgeOwns(m, f, n)) continue;
      PetscCall(DemPolyMeshAppend(out, fr, a, b, p, q, n, d, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_E, f)));
      PetscCall(DemPolyMarkPush(i, DEM_POLY_E, f));
    }
  }
  /* the wall's sharp vertices against A's edges, eq. (36) */
  for (PetscInt kk = 0; kk < ncv; kk++) {
    PetscInt         k = S->cv[kk];
    const PetscReal *p = m->x + 3 * k;
    for (PetscInt ee = 0; ee < A->nce; ee++) {
      PetscInt         e  = A->ce[ee];
      const PetscReal *q0 = A->v + 3 * ga->ev[2 * e], *q1 = A->v + 3 * ga->ev[2 * e + 1];
      PetscReal        zeta, q[3], g[3], d, n[3], mn[3];
      DemPolyLCPVertexEdge(p, q0, q1, &zeta);
      if (!(zeta > -1 && zeta < 1)) continue;
      DemPolyEdgePoint(q0, q1, zeta, q);
      for (int j = 0; j < 3; j++) g[j] = p[j] - q[j];
      d = PetscSqrtReal(Dot3(g, g));
      if (!(d < skin) || d == 0) continue;
      for (int j = 0; j < 3; j++) mn[j] = g[j] / d, n[j] = -mn[j];
      if (!DemPolyEdgeFaces(A, e, mn, PETSC_FALSE, tol)) continue;
      if (ga->econcave[e] && DemPolyMarked(k, DEM_POLY_F + 4, ga->ef[2 * e]) && DemPolyMarked(k, DEM_POLY_F + 4, ga->ef[2 * e + 1])) continue;
      PetscCall(DemPolyMeshAppend(out, fr, a, b, q, p, n, d, A->r, DemPolyFeatureKey(DEM_POLY_E, e, DEM_POLY_V, k)));
      PetscCall(DemPolyMarkPush(k, DEM_POLY_E + 4, e));
    }
  }
  /* vertex-vertex: A's corner owned by the wall's sharp vertex (no wall edge at it leads
     towards the corner), neither with a contact on a neighbouring feature of the other */
  for (PetscInt ii = 0; ii < A->ncv; ii++) {
    PetscInt         i = A->cv[ii];
    const PetscReal *p = A->v + 3 * i;
    for (PetscInt kk = 0; kk < ncv; kk++) {
      PetscInt         k = S->cv[kk];
      const PetscReal *q = m->x + 3 * k;
      PetscReal        g[3] = {p[0] - q[0], p[1] - q[1], p[2] - q[2]}, d = PetscSqrtReal(Dot3(g, g)), n[3];
      PetscBool        owns = PETSC_TRUE, near = PETSC_FALSE;
      if (!(d < skin) || d == 0) continue;
      for (int j = 0; j < 3; j++) n[j] = g[j] / d;
      for (PetscInt jj = 0; jj < nce && owns; jj++) {
        PetscInt         f = S->ce[jj], o;
        const PetscReal *r;
        PetscReal        u[3];
        if (m->ev[2 * f] != k && m->ev[2 * f + 1] != k) continue;
        o = m->ev[2 * f] == k ? m->ev[2 * f + 1] : m->ev[2 * f];
        r = m->x + 3 * o;
        for (int j = 0; j < 3; j++) u[j] = r[j] - q[j];
        if (Dot3(u, n) > 0) owns = PETSC_FALSE;
        if (DemPolyMarked(i, DEM_POLY_E, f)) near = PETSC_TRUE;
      }
      if (!owns) continue;
      for (PetscInt tt = 0; tt < ncand && !near; tt++) {
        const PetscInt *tv = m->tri + 3 * cand[tt];
        if ((tv[0] == k || tv[1] == k || tv[2] == k) && DemPolyMarked(i, DEM_POLY_F, cand[tt])) near = PETSC_TRUE;
      }
      if (near || DemPolyVertexHasNeighbourContact(ga, k, i, 1)) continue;
      PetscCall(DemPolyMeshAppend(out, fr, a, b, p, q, n, d, A->r, DemPolyFeatureKey(DEM_POLY_V, i, DEM_POLY_V, k)));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Feature lists of polyhedron/mesh pairs (same store as above). At a build, with the reach
  inflated by 2 m (m = F reach): the wall's triangles near A's inflated bounding sphere (the grid
  query) and A's features narrowed to the box of those triangles; then every pair of (A's
  corner, triangle), (A's edge, an edge of a triangle), (A's triangle, a vertex of a triangle)
  closer than reach + 2 m marks both sides. The list holds A's marked corners, edges and
  triangles (index order) and the marked wall triangles, with A's position and orientation in the
  wall's frame; it is kept while A moves a point of its surface by less than m in that frame. An
  evaluation takes the wall's triangles of the query as without the list (same order), keeps the
  marked ones, and solves the problems of A's listed features against them. The same contacts
  in the same order: a contact needs its two features closer than reach now, so closer than
  reach + m at the build: both are marked, and so is every triangle at a wall vertex or edge that
  can touch (each of them holds that vertex or edge), so the wall's sharp edges and vertices,
  their order and the ownership and hierarchy tests see what they see without the list; the
  pairs left out cannot touch.
*/
static PetscErrorCode DemPolyMeshMarksReserve(const DemPolyGeom *g, PetscInt nt)
{
  DemPolyMeshScratch *S = &pmscratch_;

  PetscFunctionBegin;
  if (g->nv > S->cap_mv) {
    PetscCall(PetscFree(S->mv));
    S->cap_mv = PetscMax(g->nv, 2 * S->cap_mv);
    PetscCall(PetscMalloc1(S->cap_mv, &S->mv));
  }
  if (g->ne > S->cap_me) {
    PetscCall(PetscFree(S->me));
    S->cap_me = PetscMax(g->ne, 2 * S->cap_me);
    PetscCall(PetscMalloc1(S->cap_me, &S->me));
  }
  if (g->nf > S->cap_mf) {
    PetscCall(PetscFree(S->mf));
    S->cap_mf = PetscMax(g->nf, 2 * S->cap_mf);
    PetscCall(PetscMalloc1(S->cap_mf, &S->mf));
  }
  if (nt > S->cap_mt) {
    PetscCall(PetscFree(S->mt));
    S->cap_mt = PetscMax(nt, 2 * S->cap_mt);
    PetscCall(PetscMalloc1(S->cap_mt, &S->mt));
  }
  PetscCall(PetscArrayzero(S->mv, g->nv));
  PetscCall(PetscArrayzero(S->me, g->ne));
  PetscCall(PetscArrayzero(S->mf, g->nf));
  PetscCall(PetscArrayzero(S->mt, nt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the list of pair p for A (in the wall's frame, orientation qrel there) against wall ws */
static PetscErrorCode DemPolyMeshFLGet(DemSim sim, PetscInt p, DemShape ws, const DemMeshView *m, DemPolyBody *A, const PetscReal qrel[4], PetscReal reach, DemPolyFL **Lout)
{
  DemPolyMeshScratch *S = &pmscratch_;
  const DemPolyGeom  *g = A->g;
  DemPolyFL          *L;
  PetscReal           margin, lim, lim2, lo[3], hi[3];
  const PetscInt     *cand;
  PetscInt            ncand;

  PetscFunctionBegin;
  PetscCall(DemPolyFLReset(sim));
  PetscCheck(p >= 0 && p < fl_.npairs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "pair %" PetscInt_FMT " outside the neighbour list (%" PetscInt_FMT ")", p, fl_.npairs);
  L = &fl_.pair[p];
  *Lout = L;
  if (L->start >= 0 && L->kind == DEM_FLK_MESH && L->ga == g && L->w == (const void *)m->x && L->r[0] == A->r && L->reach == reach && DemPolyFLMotion(L->x, L->q, A->x, qrel, A->r) < L->margin) {
    fl_.nreuse++;
    A->lazy = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  margin = fl_.fmargin * reach;
  lim    = reach + 2 * margin;
  lim2   = lim * lim;
  PetscCall(DemPolyFLCompact());
  if (L->start >= 0) fl_.live -= L->len;
  L->start = fl_.nrec;
  L->len   = 0;
  L->kind = DEM_FLK_MESH, L->w = (const void *)m->x, L->ga = g, L->gb = NULL;
  L->r[0] = A->r, L->r[1] = 0, L->reach = reach, L->margin = margin;
  for (int j = 0; j < 3; j++) L->x[j] = A->x[j];
  for (int j = 0; j < 4; j++) L->q[j] = qrel[j];
  fl_.nlist++;
  PetscCall(DemShapeMeshQuery_Private(ws, A->x, A->r + lim, &ncand, &cand));
  if (!ncand) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemPolyMeshMarksReserve(g, m->nt));
  DemPolyCandidates(A, A->x, A->r, lim); /* every vertex and normal to the (wall's) frame: A not lazy */
  for (int j = 0; j < 3; j++) lo[j] = PETSC_MAX_REAL, hi[j] = -PETSC_MAX_REAL;
  for (PetscInt i = 0; i < ncand; i++)
    for (int k = 0; k < 3; k++) DemPolyBoxAdd(m->x + 3 * m->tri[3 * cand[i] + k], lo, hi);
  DemPolyCandidateCut(A, lo, hi, lim);
  for (PetscInt i = 0; i < ncand; i++) {
    PetscInt         t = cand[i];
    const PetscReal *x[3] = {m->x + 3 * m->tri[3 * t], m->x + 3 * m->tri[3 * t + 1], m->x + 3 * m->tri[3 * t + 2]};
    PetscReal        ct[3], rt = 0;
    for (int j = 0; j < 3; j++) ct[j] = (x[0][j] + x[1][j] + x[2][j]) / 3;
    for (int k = 0; k < 3; k++) {
      PetscReal dd[3] = {x[k][0] - ct[0], x[k][1] - ct[1], x[k][2] - ct[2]};
      rt = PetscMax(rt, PetscSqrtReal(Dot3(dd, dd)));
    }
    for (PetscInt ii = 0; ii < A->ncv; ii++) { /* A's corners against the triangle */
      PetscInt         v = A->cv[ii];
      const PetscReal *pv = A->v + 3 * v;
      PetscReal        dd[3] = {pv[0] - ct[0], pv[1] - ct[1], pv[2] - ct[2]}, l = rt + lim;
      if (Dot3(dd, dd) >= l * l) continue;
      if (DemPolyPointTriDist2(pv, x[0], x[1], x[2]) < lim2) S->mv[v] = 1, S->mt[t] = 1;
    }
    for (PetscInt ii = 0; ii < A->nce; ii++) { /* A's edges against the triangle's edges */
      PetscInt         e = A->ce[ii];
      const PetscReal *em = A->em + 4 * e;
      PetscReal        dd[3] = {em[0] - ct[0], em[1] - ct[1], em[2] - ct[2]}, l = em[3] + rt + lim;
      if (Dot3(dd, dd) >= l * l) continue;
      for (int k = 0; k < 3; k++)
        if (DemPolySegSegDist2(A->v + 3 * g->ev[2 * e], A->v + 3 * g->ev[2 * e + 1], x[k], x[(k + 1) % 3]) < lim2) {
          S->me[e] = 1, S->mt[t] = 1;
          break;
        }
    }
    for (PetscInt ii = 0; ii < A->ncf; ii++) { /* A's triangles against the triangle's vertices */
      PetscInt         f  = A->cf[ii];
      const PetscInt  *fv = g->f + 3 * f;
      PetscReal        dd[3] = {A->fc[3 * f] - ct[0], A->fc[3 * f + 1] - ct[1], A->fc[3 * f + 2] - ct[2]}, l = A->s * g->fr[f] + rt + lim;
      if (Dot3(dd, dd) >= l * l) continue;
      for (int k = 0; k < 3; k++)
        if (DemPolyPointTriDist2(x[k], A->v + 3 * fv[0], A->v + 3 * fv[1], A->v + 3 * fv[2]) < lim2) {
          S->mf[f] = 1, S->mt[t] = 1;
          break;
        }
    }
  }
  for (PetscInt ii = 0; ii < A->ncv; ii++)
    if (S->mv[A->cv[ii]]) PetscCall(DemPolyFLPush(DEM_POLY_V, A->cv[ii], 0, 0));
  for (PetscInt ii = 0; ii < A->nce; ii++)
    if (S->me[A->ce[ii]]) PetscCall(DemPolyFLPush(DEM_POLY_E, A->ce[ii], 0, 0));
  for (PetscInt ii = 0; ii < A->ncf; ii++)
    if (S->mf[A->cf[ii]]) PetscCall(DemPolyFLPush(DEM_POLY_F, A->cf[ii], 0, 0));
  if (fl_.nrec > L->start) /* the wall's triangles: only with some feature of A */
    for (PetscInt i = 0; i < ncand; i++)
      if (S->mt[cand[i]]) PetscCall(DemPolyFLPush(3, cand[i], 0, 0));
  L->len = fl_.nrec - L->start;
  fl_.live += L->len;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A's listed features (carried to the frame on demand) into its candidates, and the query's
   triangles (cand, *n of them) that the list marks into pmscratch_.fcand, order kept */
static PetscErrorCode DemPolyMeshFLApply(DemPolyBody *A, const DemMeshView *m, const DemPolyFL *L, const PetscInt *cand, PetscInt *n)
{
  DemPolyMeshScratch *S = &pmscratch_;
  const DemPolyGeom  *g = A->g;
  const PetscInt     *r = fl_.rec + 4 * L->start;
  PetscInt            nv = 0, ne = 0, nf = 0, nc = 0;

  PetscFunctionBegin;
  if (m->nt > S->cap_t) {
    PetscCall(PetscFree(S->tstamp));
    S->cap_t = PetscMax(m->nt, 2 * S->cap_t);
    PetscCall(PetscCalloc1(S->cap_t, &S->tstamp));
    S->tst = 0;
  }
  if (++S->tst == PETSC_MAX_INT) {
    PetscCall(PetscArrayzero(S->tstamp, S->cap_t));
    S->tst = 1;
  }
  if (*n > S->cap_fcand) {
    PetscCall(PetscFree(S->fcand));
    S->cap_fcand = PetscMax(*n, 2 * S->cap_fcand);
    PetscCall(PetscMalloc1(S->cap_fcand, &S->fcand));
  }
  for (PetscInt k = 0; k < L->len; k++) {
    PetscInt i = r[4 * k + 1];
    switch (r[4 * k]) {
    case DEM_POLY_V:
      A->cv[nv++] = i;
      DemPolyTouchV(A, i);
      break;
    case DEM_POLY_E:
      A->ce[ne++] = i;
      DemPolyTouchV(A, g->ev[2 * i]), DemPolyTouchV(A, g->ev[2 * i + 1]), DemPolyTouchE(A, i);
      break;
    case DEM_POLY_F:
      A->cf[nf++] = i;
      DemPolyTouchF(A, i);
      break;
    default:
      S->tstamp[i] = S->tst;
    }
  }
  A->ncv = nv, A->nce = ne, A->ncf = nf;
  for (PetscInt i = 0; i < *n; i++)
    if (S->tstamp[cand[i]] == S->tst) S->fcand[nc++] = cand[i];
  *n = nc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode DemCollide_PolyhedronMesh(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_PolyhedronMesh(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  DemSim        sim = pb->sim;
  DemBodyStore *bs;
  DemPolyOut    po = {out, sim, -1};

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt   a = pb->a[k], b = pb->b[k];
    DemShape         ws = sim->shapes[bs->shape[b]];
    DemMeshView      m;
    DemPolyBody      A;
    DemPolyMeshFrame fr;
    PetscReal        RA[9], d[3], lower, reach;
    const PetscInt  *cand;
    PetscInt         ncand;

    PetscCheck(DemShapeMeshView_Private(ws, &m), PETSC_COMM_SELF, PETSC_ERR_PLIB, "body %" PetscInt_FMT " is not a mesh wall", b);
    PetscCall(DemPolyBodySet(sim, pb, a, NULL, 0, &A));
    DemQuatToMatrix(&pb->state->q[4 * b], fr.R);
    for (int j = 0; j < 3; j++) fr.x[j] = pb->state->x[3 * b + j], fr.xa[j] = A.x[j], d[j] = A.x[j] - fr.x[j];
    /* A in the wall's frame: x <- R^T (x - x_wall), R_A <- R^T R_A */
    for (int i = 0; i < 3; i++) {
      A.x[i] = fr.R[i] * d[0] + fr.R[3 + i] * d[1] + fr.R[6 + i] * d[2];
      for (int j = 0; j < 3; j++) RA[3 * i + j] = fr.R[i] * A.R[j] + fr.R[3 + i] * A.R[3 + j] + fr.R[6 + i] * A.R[6 + j];
    }
    PetscCall(PetscArraycpy(A.R, RA, 9));
    lower = skin > 0 ? -skin : -0.05 * A.r;
    reach = PetscMax(skin, -lower);
    if (pb->pair && skin > 0) PetscCall(DemPolyFLOptions());
    if (pb->pair && skin > 0 && fl_.enabled) { /* running: the feature list of the pair */
      PetscReal qw[4] = {pb->state->q[4 * b], -pb->state->q[4 * b + 1], -pb->state->q[4 * b + 2], -pb->state->q[4 * b + 3]}, qrel[4];
      DemPolyFL *L = NULL;
      DemQuatMul(qw, &pb->state->q[4 * a], qrel); /* A's orientation in the wall's frame */
      PetscCall(DemPolyMeshFLGet(sim, pb->pair[k], ws, &m, &A, qrel, reach, &L));
      if (!L->len) continue; /* nothing of A near the wall */
      PetscCall(DemShapeMeshQuery_Private(ws, A.x, A.r + reach, &ncand, &cand));
      if (!ncand) continue;
      PetscCall(DemPolyMeshReserve(3 * ncand, m.nv));
      PetscCall(DemPolyMeshFLApply(&A, &m, L, cand, &ncand));
      if (!ncand) continue;
      po.pair = pb->pair[k];
      PetscCall(DemPolyMeshPair(&A, &m, pmscratch_.fcand, ncand, &fr, a, b, skin, lower, &po));
      continue;
    }
    PetscCall(DemShapeMeshQuery_Private(ws, A.x, A.r + reach, &ncand, &cand));
    if (!ncand) continue;
    PetscCall(DemPolyMeshReserve(3 * ncand, m.nv)); /* the vertex stamps cover every vertex index */
    /* second level: A's features near its own inflated bounding sphere (all of them; the
       wall's candidates are the triangles near that sphere) */
    DemPolyCandidates(&A, A.x, A.r, reach);
    po.pair = pb->pair ? pb->pair[k] : -1;
    PetscCall(DemPolyMeshPair(&A, &m, cand, ncand, &fr, a, b, skin, lower, &po));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "polyhedron/mesh", DemCollide_PolyhedronMesh)
