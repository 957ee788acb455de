/*
  polyhedron.h - private interface of the polyhedron shape (polyhedron.c), its colliders
  (polyhedron_contact.c) and the unit tests. Not installed.

  Model: 000_c57329b1a40312e0.txt (Gay Neto, Wriggers), section 2.4. A body is a closed
  triangulated surface; its sub-regions (000 section 2.4.3) are the triangles (faces), the
  edges and the vertices. Pointwise contacts between two bodies come from the degenerate
  local contact problems (LCP) of the master-master formulation, 000 eq. (30)-(36):
    vertex-face  (eq. (34)): orthogonal projection of a point onto the plane of a triangle;
    edge-edge    (eq. (35)): closest points of two lines;
    vertex-edge  (eq. (36)): orthogonal projection of a point onto a line;
    vertex-vertex:          no unknown.
  Each is solved in closed form (the paper's appendix is not in the text; the solutions below
  are the stationarity conditions r_s = P_s^T r_4 = 0 of eq. (33) solved directly). The
  parameters follow eq. (26)-(27): on a triangle (x1, x2, x3),
    Gamma(zeta, theta) = N1 x1 + N2 x2 + N3 x3, N1 = -(zeta + theta)/2, N2 = (1 + zeta)/2,
    N3 = (1 + theta)/2, valid for zeta, theta >= -1 and zeta + theta <= 0 (Fig. 1);
  an edge x1 -> x2 is theta = -1 with zeta in [-1, 1].
*/
#pragma once
#include "demimpl.h"

/* feature types in feature keys */
#define DEM_POLY_V 0
#define DEM_POLY_E 1
#define DEM_POLY_F 2

/* the 64-bit feature key of a pointwise contact (DESIGN.md: "the sub-region pair"):
   type of a's feature (2 bits), type of b's (2 bits), index in a (30 bits), index in b (30 bits) */
static inline int64_t DemPolyFeatureKey(int ta, PetscInt ia, int tb, PetscInt ib)
{
  return (int64_t)(((uint64_t)ta << 62) | ((uint64_t)tb << 60) | ((uint64_t)(ia & 0x3fffffff) << 30) | (uint64_t)(ib & 0x3fffffff));
}

/* a polyhedron in its body frame (centre of mass at the origin, principal axes) */
typedef struct {
  PetscInt   nv, ne, nf;
  PetscReal *v;        /* [3 nv] vertices */
  PetscInt  *f;        /* [3 nf] triangles, counter-clockwise seen from outside */
  PetscReal *fn;       /* [3 nf] unit outward normals */
  PetscInt  *fe;       /* [3 nf] edge k of a triangle joins its vertices k and k+1 */
  PetscInt  *ev;       /* [2 ne] edge vertices */
  PetscInt  *ef;       /* [2 ne] the two triangles of an edge */
  char      *eflat;    /* [ne] 1: both triangles coplanar (the edge is inside a planar face) */
  char      *econcave; /* [ne] 1: re-entrant edge (dihedral angle above 180 degrees outside) */
  PetscInt  *vstart, *vedge; /* CSR [nv+1], [2 ne]: the edges at each vertex */
  PetscInt  *vfstart, *vface; /* CSR [nv+1], [3 nf]: the triangles at each vertex */
  char      *vsharp;   /* [nv] 1: the vertex has a non-flat edge (a corner of the surface) */
  PetscReal *fc, *fr;  /* [3 nf], [nf] bounding sphere of each triangle (centroid, radius) */
  PetscReal  rbound;   /* max |v| */
  PetscReal  vol;      /* volume */
  PetscReal  Iunit[3]; /* principal moments of inertia per unit density */
  PetscReal  lmin;     /* shortest edge (tolerances) */
} DemPolyGeom;

/* builds the topology, the mass properties and the principal frame from a closed triangle
   mesh (nv vertices x, nt triangles tri, outward). `what` names the source in messages. The
   vertices are moved to the centre of mass and rotated into the principal axes; R0 (row-major)
   returns that rotation (body = R0 (mesh - com)) and com the centre in mesh coordinates. */
PETSC_EXTERN PetscErrorCode DemPolyGeomBuild_Private(PetscInt nv, const PetscReal *x, PetscInt nt, const PetscInt *tri, const char *what, DemPolyGeom *g, PetscReal com[3], PetscReal R0[9]);
PETSC_EXTERN PetscErrorCode DemPolyGeomDestroy_Private(DemPolyGeom *g);
/* volume, centre and inertia tensor (about the centre, row-major) of a closed triangle mesh
   at unit density, by the divergence theorem */
PETSC_EXTERN void DemPolyMassProperties_Private(PetscInt nv, const PetscReal *x, PetscInt nt, const PetscInt *tri, PetscReal *vol, PetscReal com[3], PetscReal J[9]);
/* eigen-decomposition of a symmetric 3x3 matrix (Jacobi): A = V diag(d) V^T, V's columns */
PETSC_EXTERN void DemSymEig3_Private(const PetscReal A[9], PetscReal d[3], PetscReal V[9]);
/* geometry of a polyhedron shape (NULL if the shape is not one) */
PETSC_EXTERN const DemPolyGeom *DemShapePolyhedronGeom_Private(DemShape);

/* ---- the degenerate local contact problems in closed form (000 eq. (33)-(36)) ---- */

/* vertex-face, eq. (34): projection of p on the plane of (x1, x2, x3). Returns the convective
   coordinates zeta, theta of eq. (27) and the signed distance along the triangle's normal
   (x2 - x1) x (x3 - x1) / |.|. */
static inline void DemPolyLCPVertexFace(const PetscReal p[3], const PetscReal x1[3], const PetscReal x2[3], const PetscReal x3[3], PetscReal *zeta, PetscReal *theta, PetscReal *dist)
{
  PetscReal e1[3], e2[3], d[3], a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0, det, l2, l3, nn[3], len;
  for (int j = 0; j < 3; j++) {
    e1[j] = x2[j] - x1[j];
    e2[j] = x3[j] - x1[j];
    d[j]  = p[j] - x1[j];
    a11 += e1[j] * e1[j];
    a12 += e1[j] * e2[j];
    a22 += e2[j] * e2[j];
    b1 += e1[j] * d[j];
    b2 += e2[j] * d[j];
  }
  /* r_s = [Gamma_zeta . g, Gamma_theta . g] = 0 with Gamma_zeta = e1/2, Gamma_theta = e2/2 */
  det    = a11 * a22 - a12 * a12;
  l2     = (a22 * b1 - a12 * b2) / det;
  l3     = (a11 * b2 - a12 * b1) / det;
  *zeta  = 2 * l2 - 1;
  *theta = 2 * l3 - 1;
  nn[0]  = e1[1] * e2[2] - e1[2] * e2[1];
  nn[1]  = e1[2] * e2[0] - e1[0] * e2[2];
  nn[2]  = e1[0] * e2[1] - e1[1] * e2[0];
  len    = PetscSqrtReal(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
  *dist  = (d[0] * nn[0] + d[1] * nn[1] + d[2] * nn[2]) / len;
}

/* edge-edge, eq. (35): closest points of the lines p0 p1 and q0 q1; zeta_a, zeta_b in [-1, 1]
   on the segments. Returns PETSC_FALSE for (nearly) parallel lines (no isolated solution). */
static inline PetscBool DemPolyLCPEdgeEdge(const PetscReal p0[3], const PetscReal p1[3], const PetscReal q0[3], const PetscReal q1[3], PetscReal *zeta_a, PetscReal *zeta_b)
{
  PetscReal u[3], w[3], r[3], a = 0, b = 0, c = 0, d = 0, e = 0, det, s, t;
  for (int j = 0; j < 3; j++) {
    u[j] = p1[j] - p0[j];
    w[j] = q1[j] - q0[j];
    r[j] = p0[j] - q0[j];
    a += u[j] * u[j];
    b += u[j] * w[j];
    c += w[j] * w[j];
    d += u[j] * r[j];
    e += w[j] * r[j];
  }
  det = a * c - b * b;
  if (!(det > 1e-12 * a * c)) return PETSC_FALSE;
  s       = (b * e - c * d) / det;
  t       = (a * e - b * d) / det;
  *zeta_a = 2 * s - 1;
  *zeta_b = 2 * t - 1;
  return PETSC_TRUE;
}

/* vertex-edge, eq. (36): projection of p on the line q0 q1; zeta in [-1, 1] on the segment */
static inline void DemPolyLCPVertexEdge(const PetscReal p[3], const PetscReal q0[3], const PetscReal q1[3], PetscReal *zeta)
{
  PetscReal w[3], a = 0, b = 0;
  for (int j = 0; j < 3; j++) {
    w[j] = q1[j] - q0[j];
    a += w[j] * w[j];
    b += w[j] * (p[j] - q0[j]);
  }
  *zeta = 2 * b / a - 1;
}

/* points of the parameterizations, eq. (26)-(27) */
static inline void DemPolyFacePoint(const PetscReal x1[3], const PetscReal x2[3], const PetscReal x3[3], PetscReal zeta, PetscReal theta, PetscReal out[3])
{
  PetscReal N1 = -0.5 * (zeta + theta), N2 = 0.5 * (1 + zeta), N3 = 0.5 * (1 + theta);
  for (int j = 0; j < 3; j++) out[j] = N1 * x1[j] + N2 * x2[j] + N3 * x3[j];
}
static inline void DemPolyEdgePoint(const PetscReal x1[3], const PetscReal x2[3], PetscReal zeta, PetscReal out[3])
{
  PetscReal N1 = 0.5 * (1 - zeta), N2 = 0.5 * (1 + zeta);
  for (int j = 0; j < 3; j++) out[j] = N1 * x1[j] + N2 * x2[j];
}
