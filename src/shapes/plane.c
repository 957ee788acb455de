/*
  plane.c - shape `plane` (an infinite plane wall) and the sphere-plane collider.

  Keys (an entry of walls:): type: plane, point [m], normal (need not be unit; the side the
  normal points to is the free side), material, velocity [m/s] (constant), remove_at [s],
  name. The generic wall layer reads point, material, velocity, remove_at and name; this file
  reads normal.
  The plane is a wall body: its position is the point, its orientation turns the body-frame
  normal into the world one.
*/
#include "demimpl.h"

typedef struct {
  PetscReal n[3];     /* unit normal, body frame */
  PetscReal halfsize; /* half-size of the square drawn in VTK output */
} DemShape_Plane;

static PetscErrorCode DemShapeSetFromConfig_Plane(DemShape s, DemNode cfg)
{
  DemShape_Plane   *pl     = (DemShape_Plane *)s->data;
  const char *const keys[] = {"type", "name", "point", "normal", "material", "velocity", "remove_at", NULL};
  PetscReal         len;

  PetscFunctionBegin;
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemNodeGetRealArray(cfg, "normal", PETSC_TRUE, 3, pl->n));
  len = PetscSqrtReal(pl->n[0] * pl->n[0] + pl->n[1] * pl->n[1] + pl->n[2] * pl->n[2]);
  if (!(len > 0)) {
    DemNode nn;
    PetscCall(DemNodeGet(cfg, "normal", &nn));
    return DemNodeError(nn, "normal must be a nonzero vector");
  }
  for (int j = 0; j < 3; j++) pl->n[j] /= len;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeMassProperties_Plane(DemShape s, PetscReal rho, PetscReal *m, PetscReal I[3])
{
  PetscFunctionBegin;
  *m   = PETSC_INFINITY;
  I[0] = I[1] = I[2] = PETSC_INFINITY;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeBoundingRadius_Plane(DemShape s, PetscReal *r)
{
  PetscFunctionBegin;
  *r = 0; /* unbounded: the search tests planes against every body */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a square of side 2*halfsize centred on the point, split in two triangles */
static PetscErrorCode DemShapeTessellate_Plane(DemShape s, DemSurface *srf)
{
  DemShape_Plane *pl = (DemShape_Plane *)s->data;
  PetscReal       u[3], v[3], a[3] = {1, 0, 0}, h = pl->halfsize, l;

  PetscFunctionBegin;
  if (PetscAbsReal(pl->n[0]) > 0.9) {
    a[0] = 0;
    a[1] = 1;
  }
  u[0] = a[1] * pl->n[2] - a[2] * pl->n[1];
  u[1] = a[2] * pl->n[0] - a[0] * pl->n[2];
  u[2] = a[0] * pl->n[1] - a[1] * pl->n[0];
  l    = PetscSqrtReal(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  for (int j = 0; j < 3; j++) u[j] /= l;
  v[0] = pl->n[1] * u[2] - pl->n[2] * u[1];
  v[1] = pl->n[2] * u[0] - pl->n[0] * u[2];
  v[2] = pl->n[0] * u[1] - pl->n[1] * u[0];
  srf->npoints = 4;
  srf->ntri    = 2;
  PetscCall(PetscMalloc1(12, &srf->points));
  PetscCall(PetscMalloc1(6, &srf->tri));
  for (int c = 0; c < 4; c++) {
    PetscReal su = (c == 0 || c == 3) ? -h : h, sv = (c < 2) ? -h : h;
    for (int j = 0; j < 3; j++) srf->points[3 * c + j] = su * u[j] + sv * v[j];
  }
  srf->tri[0] = 0, srf->tri[1] = 1, srf->tri[2] = 2;
  srf->tri[3] = 0, srf->tri[4] = 2, srf->tri[5] = 3;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemPlaneGetNormal(DemShape s, PetscReal n[3])
{
  DemShape_Plane *pl = (DemShape_Plane *)s->data;

  PetscFunctionBegin;
  n[0] = pl->n[0], n[1] = pl->n[1], n[2] = pl->n[2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemPlaneSetDisplaySize(DemShape s, PetscReal halfsize)
{
  PetscFunctionBegin;
  ((DemShape_Plane *)s->data)->halfsize = halfsize;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeCreate_Plane(DemShape s)
{
  DemShape_Plane *pl;

  PetscFunctionBegin;
  PetscCall(PetscNew(&pl));
  pl->n[2]               = 1;
  pl->halfsize           = 0.5;
  s->data                = pl;
  s->kind                = DEM_KIND_PLANE;
  s->unbounded           = PETSC_TRUE;
  s->ops->setfromconfig  = DemShapeSetFromConfig_Plane;
  s->ops->massproperties = DemShapeMassProperties_Plane;
  s->ops->boundingradius = DemShapeBoundingRadius_Plane;
  s->ops->tessellate     = DemShapeTessellate_Plane;
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(shape, "plane", DemShapeCreate_Plane)

/*
  Sphere (a) against plane (b): n is the plane's world normal, gap = (x_a - x_b).n - r_a,
  contact point in the middle of the overlap, effective radius r_a.
*/
PetscErrorCode DemCollide_SpherePlane(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  const PetscReal *x = pb->state->x, *q = pb->state->q;
  DemBodyStore    *bs;
  DemSim           sim = pb->sim;

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt a = pb->a[k], b = pb->b[k];
    PetscReal      n0[3], n[3], d[3], h, ra = bs->radius[a];
    PetscInt       c;
    PetscCall(DemPlaneGetNormal(sim->shapes[bs->shape[b]], n0));
    DemQuatRotate(&q[4 * b], n0, n);
    for (int j = 0; j < 3; j++) d[j] = x[3 * a + j] - x[3 * b + j];
    h = d[0] * n[0] + d[1] * n[1] + d[2] * n[2];
    if (h - ra >= skin) continue;
    PetscCall(DemContactListAppend(out, &c));
    out->a[c]    = a;
    out->b[c]    = b;
    out->hist[c] = pb->pair ? pb->pair[k] : -1;
    out->gap[c]  = h - ra;
    out->reff[c] = ra;
    for (int j = 0; j < 3; j++) {
      out->nrm[3 * c + j] = n[j];
      out->ra[3 * c + j]  = -(ra + 0.5 * (h - ra)) * n[j];
      out->p[3 * c + j]   = x[3 * a + j] + out->ra[3 * c + j];
      out->rb[3 * c + j]  = out->p[3 * c + j] - x[3 * b + j];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "sphere/plane", DemCollide_SpherePlane)
