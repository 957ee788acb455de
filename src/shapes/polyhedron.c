/*
  polyhedron.c - shape `polyhedron`: a rigid body bounded by a closed triangulated surface,
  convex or not (000_c57329b1a40312e0.txt, section 2.4.3: faces, edges and vertices are the
  sub-regions of the surface; the colliders are in polyhedron_contact.c).

  The surface comes from a file read through the Gmsh SDK (trimesh.c: STL, .msh, STEP/BREP),
  from OpenCASCADE solids fused by Gmsh (a tetrapod of four capped cylinders), or from the
  built-in box. Mass, centre of mass and inertia tensor come from the closed surface by the
  divergence theorem (sum of signed tetrahedra); the body frame is the principal frame with the
  centre of mass at the origin, so the store's principal inertia applies directly (orientations
  q in the run description turn this frame). A body whose three principal moments agree within
  1 % (a cube, a regular tetrapod up to its meshing error) keeps the axes of the mesh, with
  the mean moment, so that q refers to the mesh's own axes. Open,
  non-manifold or inverted surfaces are refused with the offending edge or the volume.
  A body may carry its own radius (a body set's `radius:`): the surface is then scaled by
  s = radius / r_bound (mass s^3, inertia s^5; sim.c).

  Keys (under shapes: NAME:):
    type: polyhedron
    box        [a, b, c] in m: a box of these edge lengths (12 triangles), or
    mesh       path of a closed surface (relative paths from the run description's directory)
    mesh_size  element size for CAD files and tetrapods [m, > 0; default: Gmsh's]
    tetrapod   {arm_length, arm_radius}: four capped cylinders from the centre along the
               directions of a regular tetrahedron, fused by OpenCASCADE (000 example 3.4)
    scale      factor applied to the mesh coordinates [1], > 0
  thermo.csv gets contacts_bb and contacts_bw: the active pointwise contacts between bodies and
  between bodies and walls (000 Fig. 26 and 29).
*/
#include "polyhedron.h"
#include "trimesh.h"
#include "dem_plugin.h"

typedef struct {
  DemPolyGeom g;
  PetscReal   com[3], R0[9]; /* mesh frame -> body frame, for messages */
} DemShape_Polyhedron;

/* ---------------------------------------------------------------- mass properties */

void DemPolyMassProperties_Private(PetscInt nv, const PetscReal *x, PetscInt nt, const PetscInt *tri, PetscReal *vol, PetscReal com[3], PetscReal J[9])
{
  PetscReal V = 0, m1[3] = {0, 0, 0}, C[9] = {0}, o[3] = {0, 0, 0};

  /* tetrahedra from a point near the surface (the vertex centroid) keep the sums well scaled */
  for (PetscInt i = 0; i < nv; i++)
    for (int j = 0; j < 3; j++) o[j] += x[3 * i + j] / nv;
  for (PetscInt t = 0; t < nt; t++) {
    PetscReal a[3], b[3], c[3], s[3], det;
    for (int j = 0; j < 3; j++) {
      a[j] = x[3 * tri[3 * t] + j] - o[j];
      b[j] = x[3 * tri[3 * t + 1] + j] - o[j];
      c[j] = x[3 * tri[3 * t + 2] + j] - o[j];
      s[j] = a[j] + b[j] + c[j];
    }
    det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
    V += det / 6;
    for (int j = 0; j < 3; j++) m1[j] += det / 24 * s[j];
    /* int x x^T over the tetrahedron (0, a, b, c) = det/120 (a a^T + b b^T + c c^T + s s^T) */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) C[3 * i + j] += det / 120 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s[i] * s[j]);
  }
  *vol = V;
  for (int j = 0; j < 3; j++) com[j] = m1[j] / V;
  /* second moments about the centre, then J = tr(C) 1 - C */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[3 * i + j] -= V * com[i] * com[j];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) J[3 * i + j] = (i == j ? C[0] + C[4] + C[8] : 0) - C[3 * i + j];
  for (int j = 0; j < 3; j++) com[j] += o[j];
}

void DemSymEig3_Private(const PetscReal A0[9], PetscReal d[3], PetscReal V[9])
{
  PetscReal A[9];

  for (int i = 0; i < 9; i++) A[i] = A0[i], V[i] = (i % 4 == 0) ? 1 : 0;
  for (int sweep = 0; sweep < 50; sweep++) {
    PetscReal off = PetscAbsReal(A[1]) + PetscAbsReal(A[2]) + PetscAbsReal(A[5]);
    PetscReal sc  = PetscAbsReal(A[0]) + PetscAbsReal(A[4]) + PetscAbsReal(A[8]);
    if (off <= 1e-300 || off < 1e-17 * sc) break;
    for (int p = 0; p < 2; p++)
      for (int q = p + 1; q < 3; q++) {
        PetscReal apq = A[3 * p + q], th, t, c, s;
        if (apq == 0) continue;
        th = (A[3 * q + q] - A[3 * p + p]) / (2 * apq);
        t  = (th >= 0 ? 1 : -1) / (PetscAbsReal(th) + PetscSqrtReal(th * th + 1));
        c  = 1 / PetscSqrtReal(t * t + 1);
        s  = t * c;
        for (int k = 0; k < 3; k++) { /* A <- A G, then G^T A */
          PetscReal akp = A[3 * k + p], akq = A[3 * k + q];
          A[3 * k + p] = c * akp - s * akq;
          A[3 * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) {
          PetscReal apk = A[3 * p + k], aqk = A[3 * q + k];
          A[3 * p + k] = c * apk - s * aqk;
          A[3 * q + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; k++) {
          PetscReal vkp = V[3 * k + p], vkq = V[3 * k + q];
          V[3 * k + p] = c * vkp - s * vkq;
          V[3 * k + q] = s * vkp + c * vkq;
        }
      }
  }
  d[0] = A[0], d[1] = A[4], d[2] = A[8];
}

/* ---------------------------------------------------------------- topology */

typedef struct {
  PetscInt lo, hi, tri, k;
} DemPolyHalfEdge;

static int DemPolyHalfEdgeCmp(const void *x, const void *y)
{
  const DemPolyHalfEdge *a = (const DemPolyHalfEdge *)x, *b = (const DemPolyHalfEdge *)y;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  return a->tri < b->tri ? -1 : a->tri > b->tri;
}

PetscErrorCode DemPolyGeomDestroy_Private(DemPolyGeom *g)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(g->v));
  PetscCall(PetscFree(g->f));
  PetscCall(PetscFree(g->fn));
  PetscCall(PetscFree(g->fe));
  PetscCall(PetscFree(g->ev));
  PetscCall(PetscFree(g->ef));
  PetscCall(PetscFree(g->eflat));
  PetscCall(PetscFree(g->econcave));
  PetscCall(PetscFree(g->vstart));
  PetscCall(PetscFree(g->vedge));
  PetscCall(PetscFree(g->vfstart));
  PetscCall(PetscFree(g->vface));
  PetscCall(PetscFree(g->vsharp));
  PetscCall(PetscFree(g->fc));
  PetscCall(PetscFree(g->fr));
  PetscCall(PetscMemzero(g, sizeof(*g)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemPolyGeomBuild_Private(PetscInt nv, const PetscReal *x, PetscInt nt, const PetscInt *tri, const char *what, DemPolyGeom *g, PetscReal com[3], PetscReal R0[9])
{
  PetscReal        vol, J[9], d[3], V[9], lmax = 0;
  DemPolyHalfEdge *he;
  PetscInt         ne = 0;

  PetscFunctionBegin;
  PetscCheck(nv >= 4 && nt >= 4, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: a closed surface needs at least 4 vertices and 4 triangles (got %" PetscInt_FMT ", %" PetscInt_FMT ")", what, nv, nt);
  for (PetscInt t = 0; t < 3 * nt; t++) PetscCheck(tri[t] >= 0 && tri[t] < nv, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: triangle %" PetscInt_FMT " refers to vertex %" PetscInt_FMT " of %" PetscInt_FMT, what, t / 3, tri[t], nv);
  /* edges: every edge of a closed, consistently oriented 2-manifold appears in exactly two
     triangles, once in each direction */
  PetscCall(PetscMalloc1(3 * nt, &he));
  for (PetscInt t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      PetscInt a = tri[3 * t + k], b = tri[3 * t + (k + 1) % 3];
      PetscCheck(a != b, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: triangle %" PetscInt_FMT " is degenerate (repeated vertex %" PetscInt_FMT ")", what, t, a);
      he[3 * t + k].lo  = PetscMin(a, b);
      he[3 * t + k].hi  = PetscMax(a, b);
      he[3 * t + k].tri = t;
      he[3 * t + k].k   = k;
    }
  qsort(he, (size_t)(3 * nt), sizeof(*he), DemPolyHalfEdgeCmp);
  for (PetscInt i = 0; i < 3 * nt;) {
    PetscInt j = i;
    while (j < 3 * nt && he[j].lo == he[i].lo && he[j].hi == he[i].hi) j++;
    if (j - i != 2) {
      PetscInt lo = he[i].lo, hi = he[i].hi, cnt = j - i;
      PetscCall(PetscFree(he));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: the surface is %s at the edge of vertices %" PetscInt_FMT " and %" PetscInt_FMT " (%" PetscInt_FMT " triangle%s); a polyhedron needs a closed 2-manifold surface", what, cnt == 1 ? "open" : "non-manifold", lo, hi, cnt, cnt == 1 ? "" : "s");
    }
    {
      PetscInt t0 = he[i].tri, t1 = he[i + 1].tri;
      PetscInt a0 = tri[3 * t0 + he[i].k], a1 = tri[3 * t1 + he[i + 1].k];
      if (a0 == a1) {
        PetscInt lo = he[i].lo, hi = he[i].hi;
        PetscCall(PetscFree(he));
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: triangles %" PetscInt_FMT " and %" PetscInt_FMT " are oriented inconsistently at the edge of vertices %" PetscInt_FMT " and %" PetscInt_FMT, what, t0, t1, lo, hi);
      }
    }
    ne++;
    i = j;
  }
  DemPolyMassProperties_Private(nv, x, nt, tri, &vol, com, J);
  if (!(vol > 0)) {
    PetscCall(PetscFree(he));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: the enclosed volume is %g <= 0: the triangles are inverted (normals point inwards) or the surface is degenerate", what, (double)vol);
  }
  DemSymEig3_Private(J, d, V);
  /* an (almost) isotropic inertia (cube, regular tetrapod: equal moments up to the meshing
     error) has no preferred axes: keep the mesh's axes, with the mean moment */
  {
    PetscReal dmax = PetscMax(d[0], PetscMax(d[1], d[2])), dmin = PetscMin(d[0], PetscMin(d[1], d[2]));
    if (dmax - dmin <= 1e-2 * dmax) {
      PetscReal mean = (J[0] + J[4] + J[8]) / 3;
      for (int i = 0; i < 9; i++) V[i] = (i % 4 == 0) ? 1 : 0;
      d[0] = d[1] = d[2] = mean;
    }
  }
  /* right-handed principal frame */
  {
    PetscReal det = V[0] * (V[4] * V[8] - V[5] * V[7]) - V[1] * (V[3] * V[8] - V[5] * V[6]) + V[2] * (V[3] * V[7] - V[4] * V[6]);
    if (det < 0)
      for (int k = 0; k < 3; k++) V[3 * k + 2] = -V[3 * k + 2];
  }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R0[3 * i + j] = V[3 * j + i]; /* body = V^T (mesh - com) */
  g->nv = nv, g->nf = nt, g->ne = ne;
  g->vol = vol;
  for (int j = 0; j < 3; j++) g->Iunit[j] = d[j];
  PetscCall(PetscMalloc1(3 * nv, &g->v));
  PetscCall(PetscMalloc1(3 * nt, &g->f));
  PetscCall(PetscMalloc1(3 * nt, &g->fn));
  PetscCall(PetscMalloc1(3 * nt, &g->fe));
  PetscCall(PetscMalloc1(2 * ne, &g->ev));
  PetscCall(PetscMalloc1(2 * ne, &g->ef));
  PetscCall(PetscCalloc1(ne, &g->eflat));
  PetscCall(PetscCalloc1(ne, &g->econcave));
  PetscCall(PetscCalloc1(nv + 1, &g->vstart));
  PetscCall(PetscMalloc1(2 * ne, &g->vedge));
  PetscCall(PetscCalloc1(nv + 1, &g->vfstart));
  PetscCall(PetscMalloc1(3 * nt, &g->vface));
  PetscCall(PetscCalloc1(nv, &g->vsharp));
  PetscCall(PetscMalloc1(3 * nt, &g->fc));
  PetscCall(PetscMalloc1(nt, &g->fr));
  g->rbound = 0;
  for (PetscInt i = 0; i < nv; i++) {
    PetscReal y[3];
    for (int j = 0; j < 3; j++) y[j] = x[3 * i + j] - com[j];
    for (int j = 0; j < 3; j++) g->v[3 * i + j] = R0[3 * j] * y[0] + R0[3 * j + 1] * y[1] + R0[3 * j + 2] * y[2];
    g->rbound = PetscMax(g->rbound, PetscSqrtReal(g->v[3 * i] * g->v[3 * i] + g->v[3 * i + 1] * g->v[3 * i + 1] + g->v[3 * i + 2] * g->v[3 * i + 2]));
  }
  for (PetscInt t = 0; t < 3 * nt; t++) g->f[t] = tri[t];
  for (PetscInt t = 0; t < nt; t++) {
    const PetscReal *a = g->v + 3 * g->f[3 * t], *b = g->v + 3 * g->f[3 * t + 1], *c = g->v + 3 * g->f[3 * t + 2];
    PetscReal        e1[3], e2[3], n[3], l, r = 0;
    for (int j = 0; j < 3; j++) e1[j] = b[j] - a[j], e2[j] = c[j] - a[j];
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    l    = PetscSqrtReal(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(l > 0)) {
      PetscCall(PetscFree(he));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s: triangle %" PetscInt_FMT " has zero area", what, t);
    }
    for (int j = 0; j < 3; j++) {
      g->fn[3 * t + j] = n[j] / l;
      g->fc[3 * t + j] = (a[j] + b[j] + c[j]) / 3;
    }
    for (int k = 0; k < 3; k++) {
      const PetscReal *p = g->v + 3 * g->f[3 * t + k];
      PetscReal        dd = 0;
      for (int j = 0; j < 3; j++) dd += (p[j] - g->fc[3 * t + j]) * (p[j] - g->fc[3 * t + j]);
      r = PetscMax(r, PetscSqrtReal(dd));
    }
    g->fr[t] = r;
  }
  /* edges, their triangles, flat and concave edges */
  g->lmin = PETSC_MAX_REAL;
  for (PetscInt i = 0, e = 0; i < 3 * nt; i += 2, e++) {
    PetscInt         t0 = he[i].tri, t1 = he[i + 1].tri, opp;
    const PetscReal *n0 = g->fn + 3 * t0, *n1 = g->fn + 3 * t1, *pa, *po;
    PetscReal        h = 0, cosang, l = 0;
    g->ev[2 * e] = he[i].lo, g->ev[2 * e + 1] = he[i].hi;
    g->ef[2 * e] = t0, g->ef[2 * e + 1] = t1;
    g->fe[3 * t0 + he[i].k]     = e;
    g->fe[3 * t1 + he[i + 1].k] = e;
    opp = g->f[3 * t1 + (he[i + 1].k + 2) % 3];
    pa  = g->v + 3 * g->ev[2 * e];
    po  = g->v + 3 * opp;
    for (int j = 0; j < 3; j++) h += (po[j] - pa[j]) * n0[j], l += (g->v[3 * g->ev[2 * e + 1] + j] - pa[j]) * (g->v[3 * g->ev[2 * e + 1] + j] - pa[j]);
    l      = PetscSqrtReal(l);
    lmax   = PetscMax(lmax, l);
    g->lmin = PetscMin(g->lmin, l);
    cosang = n0[0] * n1[0] + n0[1] * n1[1] + n0[2] * n1[2];
    if (cosang > 1 - 1e-10) g->eflat[e] = 1;
    else if (h > 0) g->econcave[e] = 1; /* the other triangle rises above this one's plane */
  }
  PetscCall(PetscFree(he));
  for (PetscInt e = 0; e < ne; e++) g->vstart[g->ev[2 * e] + 1]++, g->vstart[g->ev[2 * e + 1] + 1]++;
  for (PetscInt i = 0; i < nv; i++) g->vstart[i + 1] += g->vstart[i];
  {
    PetscInt *pos;
    PetscCall(PetscMalloc1(nv, &pos));
    for (PetscInt i = 0; i < nv; i++) pos[i] = g->vstart[i];
    for (PetscInt e = 0; e < ne; e++) {
      g->vedge[pos[g->ev[2 * e]]++]     = e;
      g->vedge[pos[g->ev[2 * e + 1]]++] = e;
      if (!g->eflat[e]) g->vsharp[g->ev[2 * e]] = g->vsharp[g->ev[2 * e + 1]] = 1;
    }
    for (PetscInt t = 0; t < 3 * nt; t++) g->vfstart[g->f[t] + 1]++;
    for (PetscInt i = 0; i < nv; i++) g->vfstart[i + 1] += g->vfstart[i];
    for (PetscInt i = 0; i < nv; i++) pos[i] = g->vfstart[i];
    for (PetscInt t = 0; t < 3 * nt; t++) g->vface[pos[g->f[t]]++] = t / 3;
    PetscCall(PetscFree(pos));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- generators */

/* a box of edge lengths L centred at the origin, 8 vertices, 12 outward triangles */
static PetscErrorCode DemPolyBoxMesh(const PetscReal L[3], PetscReal **x, PetscInt **tri)
{
  static const PetscInt T[36] = {0, 2, 1, 0, 3, 2, /* z- */ 4, 5, 6, 4, 6, 7, /* z+ */ 0, 1, 5, 0, 5, 4, /* y- */
                                 2, 3, 7, 2, 7, 6, /* y+ */ 0, 4, 7, 0, 7, 3, /* x- */ 1, 2, 6, 1, 6, 5 /* x+ */};
  PetscFunctionBegin;
  PetscCall(PetscMalloc1(24, x));
  PetscCall(PetscMalloc1(36, tri));
  for (int i = 0; i < 8; i++) {
    PetscInt sx = (i == 1 || i == 2 || i == 5 || i == 6), sy = (i == 2 || i == 3 || i == 6 || i == 7), sz = i >= 4;
    (*x)[3 * i]     = (sx ? 0.5 : -0.5) * L[0];
    (*x)[3 * i + 1] = (sy ? 0.5 : -0.5) * L[1];
    (*x)[3 * i + 2] = (sz ? 0.5 : -0.5) * L[2];
  }
  for (int i = 0; i < 36; i++) (*tri)[i] = T[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- shape ops */

/* thermo.csv columns contacts_bb and contacts_bw: active pointwise contacts (gap below the
   law's activation) between two bodies and between a body and a wall (000 Fig. 26, 29) */
static PetscErrorCode DemPolyThermoContacts(DemSim sim, PetscBool wall, PetscReal *val)
{
  PetscInt n = 0;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    PetscInt a = sim->cl.a[c], b = sim->cl.b[c];
    if (!(sim->cl.gap[c] < sim->laws[sim->cl.law[c]]->activation)) continue;
    if (((sim->bodies.flags[a] | sim->bodies.flags[b]) & DEM_WALL ? PETSC_TRUE : PETSC_FALSE) == wall) n++;
  }
  *val = (PetscReal)n;
  PetscCall(DemDecompSum_Private(sim, val, 1)); /* MPI: every rank's contacts (a contact lives on one rank) */
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode DemPolyThermoBB(DemSim sim, void *ctx, PetscReal *val)
{
  PetscFunctionBegin;
  PetscCall(DemPolyThermoContacts(sim, PETSC_FALSE, val));
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode DemPolyThermoBW(DemSim sim, void *ctx, PetscReal *val)
{
  PetscFunctionBegin;
  PetscCall(DemPolyThermoContacts(sim, PETSC_TRUE, val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* "file:line:col: shapes.NAME: source" for messages about the surface */
static PetscErrorCode DemPolyWhat(DemNode node, const char name[], const char src[], char *what, size_t len)
{
  int line = 0, col = 0;

  PetscFunctionBegin;
  PetscCall(DemNodeLocation(node, &line, &col));
  PetscCall(PetscSNPrintf(what, len, "%s:%d:%d: shape %s (%s)", DemNodeFile(node) ? DemNodeFile(node) : "?", line, col, name, src));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeSetFromConfig_Polyhedron(DemShape s, DemNode cfg)
{
  DemShape_Polyhedron *ph     = (DemShape_Polyhedron *)s->data;
  const char *const    keys[] = {"type", "box", "mesh", "mesh_size", "tetrapod", "scale", NULL};
  DemNode              nbox, nmesh, ntet, nsc, nh;
  PetscReal            scale = 1, h = 0;
  PetscReal           *x   = NULL;
  PetscInt            *tri = NULL, nv = 0, nt = 0;
  DemTriMesh           tm;
  PetscBool            fromtm = PETSC_FALSE;
  char                 what[2 * PETSC_MAX_PATH_LEN];
  PetscErrorCode       ierr;

  PetscFunctionBegin;
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemNodeGet(cfg, "box", &nbox));
  PetscCall(DemNodeGet(cfg, "mesh", &nmesh));
  PetscCall(DemNodeGet(cfg, "tetrapod", &ntet));
  PetscCall(DemNodeGet(cfg, "scale", &nsc));
  PetscCall(DemNodeGet(cfg, "mesh_size", &nh));
  DemNodeCheck(cfg, (nbox != NULL) + (nmesh != NULL) + (ntet != NULL) == 1, "a polyhedron needs exactly one of box: [a, b, c], mesh: FILE or tetrapod: {arm_length, arm_radius}");
  if (nsc) {
    PetscCall(DemNodeGetReal(cfg, "scale", PETSC_TRUE, &scale));
    DemNodeCheck(nsc, scale > 0, "scale must be > 0 (got %g)", (double)scale);
  }
  if (nh) {
    PetscCall(DemNodeGetReal(cfg, "mesh_size", PETSC_TRUE, &h));
    DemNodeCheck(nh, h > 0, "mesh_size must be > 0 (got %g)", (double)h);
  }
  PetscCall(PetscMemzero(&tm, sizeof(tm)));
  if (nbox) {
    PetscReal L[3];
    PetscCall(DemNodeGetRealArray(cfg, "box", PETSC_TRUE, 3, L));
    DemNodeCheck(nbox, L[0] > 0 && L[1] > 0 && L[2] > 0, "box edge lengths must be > 0 (got %g, %g, %g)", (double)L[0], (double)L[1], (double)L[2]);
    for (int j = 0; j < 3; j++) L[j] *= scale;
    PetscCall(DemPolyBoxMesh(L, &x, &tri));
    nv = 8, nt = 12;
    PetscCall(DemPolyWhat(nbox, s->name, "box", what, sizeof(what)));
  } else if (nmesh) {
    const char *path;
    char        full[PETSC_MAX_PATH_LEN];
    PetscCall(DemNodeGetString(cfg, "mesh", PETSC_TRUE, &path));
    if (path[0] != '/' && DemNodeFile(cfg)) { /* relative to the run description */
      const char *f = DemNodeFile(cfg), *sl = strrchr(f, '/');
      if (sl) PetscCall(PetscSNPrintf(full, sizeof(full), "%.*s/%s", (int)(sl - f), f, path));
      else PetscCall(PetscStrncpy(full, path, sizeof(full)));
    } else PetscCall(PetscStrncpy(full, path, sizeof(full)));
    PetscCall(DemPolyWhat(nmesh, s->name, full, what, sizeof(what)));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = DemTriMeshLoadFileSized(full, scale, h, &tm);
    PetscCall(PetscPopErrorHandler());
    if (ierr) return DemNodeError(nmesh, "cannot read the surface '%s' (a closed triangulated surface: .stl, .msh, .step, .brep)", full);
    fromtm = PETSC_TRUE;
  } else {
    const char *const tk[] = {"arm_length", "arm_radius", NULL};
    PetscReal         La, ra;
    DemOccSolid       cyl[4];
    /* directions of a regular tetrahedron's vertices */
    const PetscReal   dir[4][3] = {{0, 0, 1}, {0.9428090415820634, 0, -1.0 / 3}, {-0.4714045207910317, 0.816496580927726, -1.0 / 3}, {-0.4714045207910317, -0.816496580927726, -1.0 / 3}};
    PetscCall(DemNodeAllowKeys(ntet, tk));
    PetscCall(DemNodeGetReal(ntet, "arm_length", PETSC_TRUE, &La));
    PetscCall(DemNodeGetReal(ntet, "arm_radius", PETSC_TRUE, &ra));
    DemNodeCheck(ntet, La > 0 && ra > 0 && ra < La, "tetrapod needs 0 < arm_radius < arm_length (got %g, %g)", (double)ra, (double)La);
    for (int k = 0; k < 4; k++) {
      cyl[k].type = DEM_OCC_CYLINDER;
      for (int j = 0; j < 3; j++) cyl[k].p[j] = 0, cyl[k].p[3 + j] = La * dir[k][j];
      cyl[k].p[6] = ra;
      cyl[k].p[7] = 0;
    }
    PetscCall(DemPolyWhat(ntet, s->name, "tetrapod", what, sizeof(what)));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = DemTriMeshFromOcc(4, cyl, PETSC_TRUE, PETSC_FALSE, h > 0 ? h : 0.5 * ra, scale, &tm);
    PetscCall(PetscPopErrorHandler());
    if (ierr) return DemNodeError(ntet, "Gmsh could not build the tetrapod (arm_length %g, arm_radius %g)", (double)La, (double)ra);
    fromtm = PETSC_TRUE;
  }
  /* `what` carries file:line:col of the key, so these errors point at the run description */
  if (fromtm) {
    PetscCall(DemTriMeshCheckClosed(&tm, what));
    nv = tm.nv, nt = tm.nt, x = tm.x, tri = tm.tri;
  }
  PetscCall(DemPolyGeomBuild_Private(nv, x, nt, tri, what, &ph->g, ph->com, ph->R0));
  if (fromtm) PetscCall(DemTriMeshDestroy(&tm));
  else {
    PetscCall(PetscFree(x));
    PetscCall(PetscFree(tri));
  }
  {
    static PetscBool thermo = PETSC_FALSE;
    if (!thermo) {
      PetscCall(DemThermoRegister("contacts_bb", DemPolyThermoBB, NULL, "built-in (polyhedron)"));
      PetscCall(DemThermoRegister("contacts_bw", DemPolyThermoBW, NULL, "built-in (polyhedron)"));
      thermo = PETSC_TRUE;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeMassProperties_Polyhedron(DemShape s, PetscReal rho, PetscReal *m, PetscReal I[3])
{
  DemShape_Polyhedron *ph = (DemShape_Polyhedron *)s->data;

  PetscFunctionBegin;
  *m = rho * ph->g.vol;
  for (int j = 0; j < 3; j++) I[j] = rho * ph->g.Iunit[j];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeBoundingRadius_Polyhedron(DemShape s, PetscReal *r)
{
  PetscFunctionBegin;
  *r = ((DemShape_Polyhedron *)s->data)->g.rbound;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeTessellate_Polyhedron(DemShape s, DemSurface *srf)
{
  const DemPolyGeom *g = &((DemShape_Polyhedron *)s->data)->g;

  PetscFunctionBegin;
  srf->npoints = g->nv;
  srf->ntri    = g->nf;
  PetscCall(PetscMalloc1(3 * g->nv, &srf->points));
  PetscCall(PetscMalloc1(3 * g->nf, &srf->tri));
  PetscCall(PetscArraycpy(srf->points, g->v, 3 * g->nv));
  PetscCall(PetscArraycpy(srf->tri, g->f, 3 * g->nf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeDestroy_Polyhedron(DemShape s)
{
  DemShape_Polyhedron *ph = (DemShape_Polyhedron *)s->data;

  PetscFunctionBegin;
  PetscCall(DemPolyGeomDestroy_Private(&ph->g));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const DemPolyGeom *DemShapePolyhedronGeom_Private(DemShape s)
{
  /* the ops table identifies the type without a string comparison (called per pair) */
  if (!s || s->ops->destroy != DemShapeDestroy_Polyhedron) return NULL;
  return &((DemShape_Polyhedron *)s->data)->g;
}

PETSC_EXTERN PetscErrorCode DemShapeCreate_Polyhedron(DemShape);
PetscErrorCode DemShapeCreate_Polyhedron(DemShape s)
{
  DemShape_Polyhedron *ph;

  PetscFunctionBegin;
  PetscCall(PetscNew(&ph));
  s->data = ph;
  PetscCall(DemShapeKindRegister("polyhedron", &s->kind));
  s->ops->setfromconfig  = DemShapeSetFromConfig_Polyhedron;
  s->ops->massproperties = DemShapeMassProperties_Polyhedron;
  s->ops->boundingradius = DemShapeBoundingRadius_Polyhedron;
  s->ops->tessellate     = DemShapeTessellate_Polyhedron;
  s->ops->destroy        = DemShapeDestroy_Polyhedron;
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(shape, "polyhedron", DemShapeCreate_Polyhedron)
