/*
  superquadric_mesh.c - the superquadric/mesh collider: a superquadric body against the triangles
  of a mesh wall (mesh.c, read through mesh.h), one contact per touching feature (face, edge or
  vertex of the mesh), as sphere/mesh does (DESIGN.md, "superquadric-mesh: per triangle").

  Model (002_a4a9ff6a3ba65368.txt): body shape function f, eq. (1), (12); f + 1 is positively
  homogeneous of degree n1, so the level sets f = t are copies of the body scaled about its
  centre. For each triangle T near the body, the point of T where f is least (where a scaled copy
  of the body first touches T) names the feature:
    - face: the least f over T's plane is at the extreme point of the body towards the plane
      (002 eq. (26)-(33), DemSQSupport_Private), scaled into the plane. When it lies inside T the
      contact is T's face, in the closed form of superquadric/plane: normal = the face normal
      turned towards the body's centre (contact is two-sided, as for sphere/mesh), gap = the
      height of the extreme point above the plane. On a flat mesh this is exactly the plane
      collider's contact.
    - otherwise f, convex, is least on T's boundary, on an edge whose line separates the plane
      minimum from T (a point inside T would be beaten by the point where the segment from the
      plane minimum to it crosses that edge). f along an edge is a convex function of the edge
      parameter t in [0, 1]: its minimum by Newton on df/dt = grad f . e with a bisection
      bracket (an end, t = 0 or 1, is a vertex contact). The contact line goes through that
      point p along u = grad f(p) / |grad f(p)| (002 eq. (36)): the body's surface point
      X = p - alpha u by Newton on the gauge (f + 1)^(1/n1) = 1 along the line (monotone, as in
      superquadric_contact.c), gap = alpha, normal -u (from the mesh to the body).
  A feature found from several triangles (a shared edge or vertex) is one contact; an edge
  contact is dropped when a face next to it touches, a vertex contact when a face around it
  touches or a surviving edge ends at it (the rules of sphere/mesh, mesh.c): a body resting on
  a flat mesh across internal edges has one contact, in a concave crease one per face.
  Contact point: the middle of the overlap (between the body's surface point and the mesh
  point); effective radius: the body's Hertz radius there (eq. (38)-(40), R <= q R_vol; the
  mesh's is infinite). Feature keys: (type + 1) << 40 | index, type 0 face, 1 edge, 2 vertex
  (those of sphere/mesh); each contact has its own history slot, and a new one takes over the
  friction spring of a neighbouring feature's contact that ended (mesh.c), so a body moving
  over internal edges of a flat mesh keeps its spring.
*/
#include "superquadric.h"
#include "mesh.h"

#define DEM_SQM_MAXF 64
#define DemSQMeshKey(type, idx) ((((int64_t)(type) + 1) << 40) | (int64_t)(idx))

static inline PetscReal Dot3(const PetscReal a[3], const PetscReal b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* minimum of f over the segment P + t E, t in [0, 1] (f convex along it): returns f there, *t */
static PetscReal DemSQMeshEdgeMin(const DemSQGeom *g, const PetscReal P[3], const PetscReal E[3], PetscReal *tout)
{
  PetscReal gr[3], H[6], y[3], lo = 0, hi = 1, t, d, dd, f, tol;
  const PetscReal EE = Dot3(E, E);

  tol = 1e-12 * g->rbound / PetscSqrtReal(EE > 0 ? EE : 1);
  f   = DemSQEval_Private(g, P, gr, NULL);
  if (!(EE > 0) || Dot3(gr, E) >= 0) {
    *tout = 0;
    return f;
  }
  for (int j = 0; j < 3; j++) y[j] = P[j] + E[j];
  f = DemSQEval_Private(g, y, gr, NULL);
  if (Dot3(gr, E) <= 0) {
    *tout = 1;
    return f;
  }
  t = 0.5;
  for (int it = 0; it < 100; it++) {
    PetscReal tn;
    for (int j = 0; j < 3; j++) y[j] = P[j] + t * E[j];
    f = DemSQEval_Private(g, y, gr, H);
    d = Dot3(gr, E);
    if (d > 0) hi = t;
    else lo = t;
    dd = H[0] * E[0] * E[0] + H[1] * E[1] * E[1] + H[2] * E[2] * E[2] + 2 * (H[3] * E[0] * E[1] + H[4] * E[0] * E[2] + H[5] * E[1] * E[2]);
    tn = dd > 0 ? t - d / dd : 0.5 * (lo + hi);
    /* Newton inside the bracket; bisection when it leaves it or crawls (flat faces of large n) */
    if (!(tn > lo && tn < hi) || (it % 4 == 3)) tn = 0.5 * (lo + hi);
    if (PetscAbsReal(tn - t) < tol || hi - lo < tol) {
      t = tn;
      break;
    }
    t = tn;
  }
  for (int j = 0; j < 3; j++) y[j] = P[j] + t * E[j];
  *tout = t;
  return DemSQEval_Private(g, y, gr, NULL);
}

/* the body's surface point on the line p - alpha u (u unit): alpha, by Newton on the gauge
   G = (f + 1)^(1/n1), convex along the line, so the iterates approach the root from one side */
static PetscReal DemSQMeshLineRoot(const DemSQGeom *g, const PetscReal p[3], const PetscReal u[3])
{
  PetscReal al = 0, y[3], gr[3], f, G, dG;

  for (int it = 0; it < 60; it++) {
    PetscReal step;
    for (int j = 0; j < 3; j++) y[j] = p[j] - al * u[j];
    f = DemSQEval_Private(g, y, gr, NULL);
    if (!(f > -1)) f = -1 + 1e-300;
    G  = PetscPowReal(f + 1, g->in1);
    dG = -g->in1 * G / (f + 1) * Dot3(gr, u); /* d G(p - al u) / d al */
    if (!(dG < 0)) break;                     /* not along the surface normal: keep the estimate */
    step = -(G - 1) / dG;
    al += step;
    if (PetscAbsReal(step) < 1e-13 * g->rbound) break;
  }
  return al;
}

/* inside test of a point q in the plane of triangle (A, B, C) with normal n: the signs of the
   three edge cross products; out[k] set when q is outside edge k (k: V0-V1, V1-V2, V2-V0) or on
   it. Each edge is evaluated from its lower-numbered vertex (vid, global vertex numbers), so two
   triangles sharing it compute the same cross product: a point on a shared edge is inside
   neither (an edge contact), never inside both (two face contacts) */
static inline PetscBool DemSQMeshInside(const PetscReal q[3], const PetscReal *V[3], const PetscInt vid[3], const PetscReal n[3], PetscBool out[3])
{
  PetscBool in = PETSC_TRUE;
  PetscReal e1[3], e2[3], cn[3], sgn;
  /* the vertex order's sense about n (n is turned towards the body, whatever the order) */
  for (int j = 0; j < 3; j++) e1[j] = V[1][j] - V[0][j], e2[j] = V[2][j] - V[0][j];
  cn[0] = e1[1] * e2[2] - e1[2] * e2[1];
  cn[1] = e1[2] * e2[0] - e1[0] * e2[2];
  cn[2] = e1[0] * e2[1] - e1[1] * e2[0];
  sgn   = Dot3(cn, n) < 0 ? -1 : 1;
  for (int k = 0; k < 3; k++) {
    const int        k1 = (k + 1) % 3, sw = vid[k] > vid[k1];
    const PetscReal *P0 = sw ? V[k1] : V[k], *P1 = sw ? V[k] : V[k1];
    PetscReal        e[3], w[3], c[3], side;
    for (int j = 0; j < 3; j++) e[j] = P1[j] - P0[j], w[j] = q[j] - P0[j];
    c[0]   = e[1] * w[2] - e[2] * w[1];
    c[1]   = e[2] * w[0] - e[0] * w[2];
    c[2]   = e[0] * w[1] - e[1] * w[0];
    side   = (sw ? -sgn : sgn) * Dot3(c, n);
    out[k] = side <= 0 ? PETSC_TRUE : PETSC_FALSE;
    if (out[k]) in = PETSC_FALSE;
  }
  return in;
}

/*
  Is f least at an edge or vertex point p over the mesh surface around it? With nu the contact
  normal (-grad f / |grad f|, from the mesh to the body), f decreases from p along a surface
  direction w when nu . w > 0; the directions to test are, for an edge, into each of its faces
  (perpendicular to the edge), for a vertex, along each of its edges (the sectors of its faces
  between them follow). A flat mesh's internal edges and vertices, and every concave one, fail,
  so only ridges and convex corners make edge and vertex contacts. The triangles around a
  vertex are among the query's candidates (each contains the vertex, which is in the query box).
  Tolerance 1e-9 (a cosine) for the tie of a point on an internal edge of a flat mesh.
*/
static PetscBool DemSQMeshInCone(const DemMeshView *mv, const PetscReal M[9], const PetscReal o[3], int type, PetscInt idx, const PetscReal nu[3], PetscInt ncand, const PetscInt *cand)
{
  const PetscReal eps = 1e-9;

  if (type == 1) {
    PetscReal P0[3], P1[3], E[3], EE;
    for (int j = 0; j < 3; j++) {
      const PetscReal *w0 = mv->x + 3 * mv->ev[2 * idx], *w1 = mv->x + 3 * mv->ev[2 * idx + 1];
      P0[j] = M[3 * j] * w0[0] + M[3 * j + 1] * w0[1] + M[3 * j + 2] * w0[2] + o[j];
      P1[j] = M[3 * j] * w1[0] + M[3 * j + 1] * w1[1] + M[3 * j + 2] * w1[2] + o[j];
    }
    for (int j = 0; j < 3; j++) E[j] = P1[j] - P0[j];
    EE = Dot3(E, E);
    for (int side = 0; side < 2; side++) {
      PetscInt         t = mv->et[2 * idx + side], v3 = -1;
      PetscReal        P2[3], w[3], ww;
      const PetscReal *w2;
      if (t < 0) continue;
      for (int k = 0; k < 3; k++)
        if (mv->tri[3 * t + k] != mv->ev[2 * idx] && mv->tri[3 * t + k] != mv->ev[2 * idx + 1]) v3 = mv->tri[3 * t + k];
      if (v3 < 0) continue;
      w2 = mv->x + 3 * v3;
      for (int j = 0; j < 3; j++) P2[j] = M[3 * j] * w2[0] + M[3 * j + 1] * w2[1] + M[3 * j + 2] * w2[2] + o[j];
      for (int j = 0; j < 3; j++) w[j] = P2[j] - P0[j];
      ww = Dot3(w, E) / EE;
      for (int j = 0; j < 3; j++) w[j] -= ww * E[j]; /* into the face, perpendicular to the edge */
      ww = PetscSqrtReal(Dot3(w, w));
      if (ww > 0 && Dot3(nu, w) > eps * ww) return PETSC_FALSE;
    }
    return PETSC_TRUE;
  } else {
    PetscReal        O[3];
    const PetscReal *wo = mv->x + 3 * idx;
    for (int j = 0; j < 3; j++) O[j] = M[3 * j] * wo[0] + M[3 * j + 1] * wo[1] + M[3 * j + 2] * wo[2] + o[j];
    for (PetscInt i = 0; i < ncand; i++) {
      const PetscInt *tv = mv->tri + 3 * cand[i];
      if (tv[0] != idx && tv[1] != idx && tv[2] != idx) continue;
      for (int k = 0; k < 3; k++) {
        PetscReal        P[3], w[3], ww;
        const PetscReal *wp = mv->x + 3 * tv[k];
        if (tv[k] == idx) continue;
        for (int j = 0; j < 3; j++) P[j] = M[3 * j] * wp[0] + M[3 * j + 1] * wp[1] + M[3 * j + 2] * wp[2] + o[j];
        for (int j = 0; j < 3; j++) w[j] = P[j] - O[j];
        ww = PetscSqrtReal(Dot3(w, w));
        if (ww > 0 && Dot3(nu, w) > eps * ww) return PETSC_FALSE;
      }
    }
    return PETSC_TRUE;
  }
}

/*
  Superquadric (a) against mesh (b); the registry's swap serves the other order. Everything is
  computed in the body frame of a, in the unscaled shape's units (lengths / s).
*/
PETSC_EXTERN PetscErrorCode DemCollide_SuperquadricMesh(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_SuperquadricMesh(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  const PetscReal *x = pb->state->x, *q = pb->state->q;
  DemBodyStore    *bs;
  DemSim           sim = pb->sim;

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt   a = pb->a[k], b = pb->b[k];
    DemShape         wall = sim->shapes[bs->shape[b]];
    const DemSQGeom *g    = DemShapeSuperquadricGeom_Private(sim->shapes[bs->shape[a]]);
    DemMeshView      mv;
    const PetscInt  *cand;
    PetscInt         ncand, nf = 0;
    PetscReal        ra = bs->radius[a], s, is, d[3], cb[3], qc[4], Ra[9], Rb[9], M[9], o[3];
    int              ftype[DEM_SQM_MAXF];
    PetscInt         fidx[DEM_SQM_MAXF];
    PetscReal        fgap[DEM_SQM_MAXF], fn[DEM_SQM_MAXF][3], fp[DEM_SQM_MAXF][3], fy[DEM_SQM_MAXF][3];
    PetscBool        keep[DEM_SQM_MAXF];

    PetscCheck(g && DemShapeMeshView_Private(wall, &mv), PETSC_COMM_SELF, PETSC_ERR_PLIB, "superquadric/mesh collider called for bodies %" PetscInt_FMT ", %" PetscInt_FMT " of other shapes", a, b);
    s  = ra * g->irbound;
    is = 1.0 / s;
    /* body centre in the wall's frame, for the triangle query */
    for (int j = 0; j < 3; j++) d[j] = x[3 * a + j] - x[3 * b + j];
    qc[0] = q[4 * b], qc[1] = -q[4 * b + 1], qc[2] = -q[4 * b + 2], qc[3] = -q[4 * b + 3];
    DemQuatRotate(qc, d, cb);
    PetscCall(DemShapeMeshQuery_Private(wall, cb, ra + skin, &ncand, &cand));
    if (!ncand) continue;
    /* wall frame -> unscaled body frame of a: y = M v + o, M = Ra^T Rb / s, o = Ra^T (xb - xa) / s */
    DemQuatToMatrix(&q[4 * a], Ra);
    DemQuatToMatrix(&q[4 * b], Rb);
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) M[3 * i + j] = (Ra[i] * Rb[j] + Ra[3 + i] * Rb[3 + j] + Ra[6 + i] * Rb[6 + j]) * is;
      o[i] = -(Ra[i] * d[0] + Ra[3 + i] * d[1] + Ra[6 + i] * d[2]) * is;
    }
    for (PetscInt i = 0; i < ncand; i++) {
      const PetscInt   t = cand[i];
      PetscReal        V[3][3], n[3], hc, ys[3], lam, m[3], gap, pt[3], nrm[3], ysurf[3];
      const PetscReal *Vp[3] = {V[0], V[1], V[2]};
      PetscBool        outk[3], dup = PETSC_FALSE;
      int              type;
      PetscInt         idx;
      for (int v = 0; v < 3; v++) {
        const PetscReal *w = mv.x + 3 * mv.tri[3 * t + v];
        for (int j = 0; j < 3; j++) V[v][j] = M[3 * j] * w[0] + M[3 * j + 1] * w[1] + M[3 * j + 2] * w[2] + o[j];
      }
      for (int j = 0; j < 3; j++) n[j] = (M[3 * j] * mv.fn[3 * t] + M[3 * j + 1] * mv.fn[3 * t + 1] + M[3 * j + 2] * mv.fn[3 * t + 2]) * s;
      hc = -Dot3(n, V[0]); /* height of the centre above the plane */
      if (hc < 0) {
        for (int j = 0; j < 3; j++) n[j] = -n[j];
        hc = -hc;
      }
      if ((hc - g->rbound) * s >= skin) continue; /* the bounding sphere misses the plane */
      {
        PetscReal dm[3] = {-n[0], -n[1], -n[2]};
        DemSQSupport_Private(g, dm, ys);
      }
      gap = Dot3(n, ys) + hc; /* height of the extreme point above the plane */
      if (gap * s >= skin) continue;
      lam = Dot3(n, ys) < 0 ? hc / -Dot3(n, ys) : 0;
      for (int j = 0; j < 3; j++) m[j] = lam * ys[j];
      if (DemSQMeshInside(m, Vp, mv.tri + 3 * t, n, outk)) {
        type = 0, idx = t;
        for (int j = 0; j < 3; j++) {
          nrm[j]   = n[j];
          ysurf[j] = ys[j];
          pt[j]    = ys[j] - 0.5 * gap * n[j];
        }
      } else {
        PetscReal best = PETSC_MAX_REAL, tb = 0, gr[3], gn, u[3], al;
        int       kb = -1;
        for (int e = 0; e < 3; e++) {
          PetscReal E[3], te, fe;
          if (!outk[e]) continue;
          for (int j = 0; j < 3; j++) E[j] = V[(e + 1) % 3][j] - V[e][j];
          fe = DemSQMeshEdgeMin(g, V[e], E, &te);
          if (fe < best) best = fe, tb = te, kb = e;
        }
        if (kb < 0) continue; /* degenerate triangle */
        for (int j = 0; j < 3; j++) pt[j] = V[kb][j] + tb * (V[(kb + 1) % 3][j] - V[kb][j]);
        if (tb <= 0 || tb >= 1) type = 2, idx = mv.tri[3 * t + (tb <= 0 ? kb : (kb + 1) % 3)];
        else type = 1, idx = mv.te[3 * t + kb];
        (void)DemSQEval_Private(g, pt, gr, NULL);
        gn = PetscSqrtReal(Dot3(gr, gr));
        if (!(gn > 0)) continue; /* the body's centre on the mesh: covered by the face contact */
        for (int j = 0; j < 3; j++) u[j] = gr[j] / gn;
        al = DemSQMeshLineRoot(g, pt, u);
        if (al * s >= skin) continue;
        gap = al;
        for (int j = 0; j < 3; j++) {
          nrm[j]   = -u[j];
          ysurf[j] = pt[j] - al * u[j];
          pt[j]    = pt[j] - 0.5 * al * u[j];
        }
      }
      for (PetscInt f = 0; f < nf; f++)
        if (ftype[f] == type && fidx[f] == idx) dup = PETSC_TRUE;
      if (dup) continue;
      PetscCheck(nf < DEM_SQM_MAXF, PETSC_COMM_SELF, PETSC_ERR_SUP, "superquadric body %" PetscInt_FMT " touches more than %d features of mesh wall %" PetscInt_FMT ": the mesh is much finer than the body; use a coarser mesh_size", (PetscInt)bs->gid[a], DEM_SQM_MAXF, (PetscInt)bs->gid[b]);
      ftype[nf] = type, fidx[nf] = idx, fgap[nf] = gap, keep[nf] = PETSC_TRUE;
      for (int j = 0; j < 3; j++) fn[nf][j] = nrm[j], fp[nf][j] = pt[j], fy[nf][j] = ysurf[j];
      nf++;
    }
    /* edges next to a touching face, vertices of a touching face or of a surviving edge:
       dropped; then an edge or vertex contact is kept only where f has a local minimum over
       the surface: its normal in the feature's normal cone (DemSQMeshInCone) */
    for (PetscInt f = 0; f < nf; f++) {
      if (ftype[f] != 1) continue;
      for (PetscInt h = 0; h < nf && keep[f]; h++)
        if (ftype[h] == 0 && (fidx[h] == mv.et[2 * fidx[f]] || fidx[h] == mv.et[2 * fidx[f] + 1])) keep[f] = PETSC_FALSE;
      if (keep[f]) keep[f] = DemSQMeshInCone(&mv, M, o, 1, fidx[f], fn[f], ncand, cand);
    }
    for (PetscInt f = 0; f < nf; f++) {
      if (ftype[f] != 2) continue;
      for (PetscInt h = 0; h < nf && keep[f]; h++) {
        if (ftype[h] == 0) {
          const PetscInt *tv = mv.tri + 3 * fidx[h];
          if (tv[0] == fidx[f] || tv[1] == fidx[f] || tv[2] == fidx[f]) keep[f] = PETSC_FALSE;
        } else if (ftype[h] == 1 && keep[h]) {
          if (mv.ev[2 * fidx[h]] == fidx[f] || mv.ev[2 * fidx[h] + 1] == fidx[f]) keep[f] = PETSC_FALSE;
        }
      }
      if (keep[f]) keep[f] = DemSQMeshInCone(&mv, M, o, 2, fidx[f], fn[f], ncand, cand);
    }
    for (PetscInt f = 0; f < nf; f++) {
      PetscInt c;
      if (!keep[f]) continue;
      PetscCall(DemContactListAppend(out, &c));
      out->a[c]       = a;
      out->b[c]       = b;
      out->feature[c] = DemSQMeshKey(ftype[f], fidx[f]);
      out->hist[c]    = -1;
      if (pb->pair) {
        PetscBool fresh;
        PetscCall(DemNeighbourFeatureSlot_Private(sim, pb->pair[k], out->feature[c], PETSC_TRUE, &out->hist[c], &fresh));
        if (fresh) PetscCall(DemShapeMeshInheritHistory_Private(wall, sim, pb->pair[k], ftype[f], fidx[f], nf, ftype, fidx, keep, out->hist[c]));
      }
      out->gap[c]  = fgap[f] * s;
      out->reff[c] = DemSQHertzRadius_Private(g, s, fy[f]);
      for (int j = 0; j < 3; j++) {
        out->nrm[3 * c + j] = Ra[3 * j] * fn[f][0] + Ra[3 * j + 1] * fn[f][1] + Ra[3 * j + 2] * fn[f][2];
        out->ra[3 * c + j]  = s * (Ra[3 * j] * fp[f][0] + Ra[3 * j + 1] * fp[f][1] + Ra[3 * j + 2] * fp[f][2]);
        out->p[3 * c + j]   = x[3 * a + j] + out->ra[3 * c + j];
        out->rb[3 * c + j]  = out->p[3 * c + j] - x[3 * b + j];
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "superquadric/mesh", DemCollide_SuperquadricMesh)
