/*
  mesh.c - shape `mesh` (a fixed or moving triangulated wall) and the sphere-mesh collider.

  The surface comes through the Gmsh SDK (src/core/trimesh.c): a file (STL, .msh, STEP/BREP/
  IGES) or solids of Gmsh's OpenCASCADE kernel (box, cylinder, cone, sphere), fused, with the
  planar faces optionally left out (a funnel from a cone and a cylinder). The mesh coordinates,
  times `scale`, are in the wall's body frame; the wall body sits at `point` (so point: [0,0,0]
  keeps a file's coordinates). Open surfaces are allowed; contact is two-sided.

  Keys (an entry of walls:): type: mesh, point [m], material, velocity [m/s], remove_at [s],
  name (read by the generic wall layer), and exactly one of
    file: PATH             relative to the run description's directory
    occ: [SOLID, ...]      each {box: {corner: [x,y,z], size: [dx,dy,dz]}} |
                           {cylinder: {base: [x,y,z], axis: [dx,dy,dz], radius: r}} |
                           {cone: {base: [x,y,z], axis: [dx,dy,dz], radius1: r1, radius2: r2}} |
                           {sphere: {centre: [x,y,z], radius: r}}; several are fused
  and optionally scale [1, > 0], mesh_size [m, > 0; CAD and occ: element size; default for occ:
  1/20 of the bounding-box diagonal], caps [true]: false drops planar faces (occ and CAD),
  outlet: {point: [x,y,z], normal: [nx,ny,nz]}: thermo.csv columns discharged_mass (kg of
  particles on the normal's side of that plane, summed over walls with an outlet) and
  discharge_rate (kg/s, its change since the previous thermo line), closed [false]: true requires
  a closed, consistently oriented, outward surface (open, non-manifold or inverted: an error).

  Search: a uniform grid of triangles in the body frame (each triangle in the cells its bounding
  box covers), so that a query costs the few cells around a sphere, not all triangles. The
  neighbour list pairs a wall with every body the collider reports within the skin at a
  rebuild; every step the collider runs only for those pairs, each with its list of the triangles
  near the sphere (DemMeshFLGet: feature-level Verlet lists, below).

  Sphere-triangle contact (DESIGN.md, "sphere-mesh: closest point on triangle, one contact per
  touching feature"): for every triangle near the sphere, the closest point of the triangle to
  the centre (Ericson, Real-Time Collision Detection, 5.1.5: Voronoi regions of the vertices,
  edges and face) names the feature it lies on: the face, one of its edges or one of its
  vertices. A feature found from several triangles (a shared edge or vertex) is one contact.
  An edge contact is dropped when a face next to the edge touches with a face-interior point,
  and a vertex contact when a face around it touches, or an edge at it survives; so a sphere
  rolling over an internal edge of a flat or convex surface passes from the face of one
  triangle to the face of the next through the edge point without a spurious second contact
  (no bump), and a sphere in a concave crease touches both faces. Normal from the closest
  point to the centre (the face normal when the centre lies on the surface), gap = distance -
  radius, contact point in the middle of the overlap, effective radius that of the sphere.
  Feature keys: (type + 1) << 40 | index, type 0 face (triangle), 1 edge, 2 vertex; each
  contact has its own history slot (featslot.c), so friction springs follow it.
*/
#include "demimpl.h"
#include "dem_plugin.h"
#include "trimesh.h"
#include "mesh.h"

typedef struct {
  DemTriMesh m;
  PetscInt   ne, *ev, *te, *et; /* edges (trimesh.c) */
  PetscReal *fn;                /* [3 nt] unit face normals */
  /* grid of triangles, body frame */
  PetscReal  glo[3], gh;        /* origin and cell size */
  PetscInt   gn[3];
  PetscInt  *gstart, *gitem;    /* CSR: triangles of cell c in gitem[gstart[c] .. gstart[c+1]) */
  /* query scratch */
  PetscInt  *stamp, curstamp, *cand, ncand, candcap;
  /* outlet */
  PetscBool  has_outlet;
  PetscReal  out_p[3], out_n[3];
} DemShape_Mesh;

/* ---- configuration ---- */

static PetscErrorCode DemMeshReadOcc(DemNode occ, PetscInt *n, DemOccSolid **sol)
{
  PetscInt len;

  PetscFunctionBegin;
  DemNodeCheck(occ, DemNodeGetType(occ) == DEM_NODE_SEQ, "occ: expected a list of solids ({box: ...}, {cylinder: ...}, {cone: ...}, {sphere: ...})");
  PetscCall(DemNodeSeqLength(occ, &len));
  DemNodeCheck(occ, len > 0, "occ: at least one solid");
  PetscCall(PetscCalloc1(len, sol));
  for (PetscInt i = 0; i < len; i++) {
    DemNode           it, body;
    const char       *key;
    PetscInt          nk;
    DemOccSolid      *s = &(*sol)[i];
    const char *const kinds[] = {"box", "cylinder", "cone", "sphere", NULL};
    PetscCall(DemNodeSeqItem(occ, i, &it));
    DemNodeCheck(it, DemNodeGetType(it) == DEM_NODE_MAP, "occ solid: expected one of {box: ...}, {cylinder: ...}, {cone: ...}, {sphere: ...}");
    PetscCall(DemNodeMapLength(it, &nk));
    DemNodeCheck(it, nk == 1, "occ solid: exactly one key (box, cylinder, cone or sphere)");
    PetscCall(DemNodeMapItem(it, 0, &key, &body));
    PetscCall(DemNodeAllowKeys(it, kinds));
    DemNodeCheck(body, DemNodeGetType(body) == DEM_NODE_MAP, "occ %s: expected a mapping", key);
    if (!strcmp(key, "box")) {
      const char *const k[] = {"corner", "size", NULL};
      PetscCall(DemNodeAllowKeys(body, k));
      s->type = DEM_OCC_BOX;
      PetscCall(DemNodeGetRealArray(body, "corner", PETSC_TRUE, 3, s->p));
      PetscCall(DemNodeGetRealArray(body, "size", PETSC_TRUE, 3, s->p + 3));
      DemNodeCheck(body, s->p[3] > 0 && s->p[4] > 0 && s->p[5] > 0, "occ box: size must be > 0 in every direction");
    } else if (!strcmp(key, "cylinder") || !strcmp(key, "cone")) {
      const char *const kc[] = {"base", "axis", "radius", NULL}, *const kk[] = {"base", "axis", "radius1", "radius2", NULL};
      PetscBool         cyl = !strcmp(key, "cylinder") ? PETSC_TRUE : PETSC_FALSE;
      PetscCall(DemNodeAllowKeys(body, cyl ? kc : kk));
      s->type = cyl ? DEM_OCC_CYLINDER : DEM_OCC_CONE;
      PetscCall(DemNodeGetRealArray(body, "base", PETSC_TRUE, 3, s->p));
      PetscCall(DemNodeGetRealArray(body, "axis", PETSC_TRUE, 3, s->p + 3));
      DemNodeCheck(body, s->p[3] * s->p[3] + s->p[4] * s->p[4] + s->p[5] * s->p[5] > 0, "occ %s: axis must be a nonzero vector (its length is the height)", key);
      if (cyl) {
        PetscCall(DemNodeGetReal(body, "radius", PETSC_TRUE, &s->p[6]));
        DemNodeCheck(body, s->p[6] > 0, "occ cylinder: radius must be > 0 (got %g)", (double)s->p[6]);
      } else {
        PetscCall(DemNodeGetReal(body, "radius1", PETSC_TRUE, &s->p[6]));
        PetscCall(DemNodeGetReal(body, "radius2", PETSC_TRUE, &s->p[7]));
        DemNodeCheck(body, s->p[6] >= 0 && s->p[7] >= 0 && s->p[6] + s->p[7] > 0, "occ cone: radius1, radius2 must be >= 0, not both 0 (got %g, %g)", (double)s->p[6], (double)s->p[7]);
      }
    } else {
      const char *const k[] = {"centre", "radius", NULL};
      PetscCall(DemNodeAllowKeys(body, k));
      s->type = DEM_OCC_SPHERE;
      PetscCall(DemNodeGetRealArray(body, "centre", PETSC_TRUE, 3, s->p));
      PetscCall(DemNodeGetReal(body, "radius", PETSC_TRUE, &s->p[3]));
      DemNodeCheck(body, s->p[3] > 0, "occ sphere: radius must be > 0 (got %g)", (double)s->p[3]);
    }
  }
  *n = len;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the uniform grid of triangles: cell size about the mean edge length, at most ~64^3 cells */
static PetscErrorCode DemMeshBuildGrid(DemShape_Mesh *me)
{
  const DemTriMesh *m = &me->m;
  PetscReal         hi[3], len = 0;
  PetscInt          ncell, *cnt;

  PetscFunctionBegin;
  for (int d = 0; d < 3; d++) me->glo[d] = PETSC_MAX_REAL, hi[d] = -PETSC_MAX_REAL;
  for (PetscInt i = 0; i < m->nv; i++)
    for (int d = 0; d < 3; d++) me->glo[d] = PetscMin(me->glo[d], m->x[3 * i + d]), hi[d] = PetscMax(hi[d], m->x[3 * i + d]);
  for (PetscInt e = 0; e < me->ne; e++) {
    const PetscReal *a = m->x + 3 * me->ev[2 * e], *b = m->x + 3 * me->ev[2 * e + 1];
    len += PetscSqrtReal(PetscSqr(a[0] - b[0]) + PetscSqr(a[1] - b[1]) + PetscSqr(a[2] - b[2]));
  }
  me->gh = PetscMax(len / PetscMax(me->ne, 1), 1e-12 * PetscMax(PetscMax(hi[0] - me->glo[0], hi[1] - me->glo[1]), hi[2] - me->glo[2]));
  if (!(me->gh > 0)) me->gh = 1;
  for (;;) { /* the extents are finite (checked by the caller): this ends */
    double n = 1;
    for (int d = 0; d < 3; d++) n *= PetscFloorReal((hi[d] - me->glo[d]) / me->gh) + 1;
    if (n <= 262144) break;
    me->gh *= 1.5;
  }
  for (int d = 0; d < 3; d++) me->gn[d] = (PetscInt)PetscFloorReal((hi[d] - me->glo[d]) / me->gh) + 1;
  ncell = me->gn[0] * me->gn[1] * me->gn[2];
  PetscCall(PetscCalloc1(ncell + 1, &me->gstart));
  PetscCall(PetscCalloc1(ncell + 1, &cnt));
  for (int pass = 0; pass < 2; pass++) {
    for (PetscInt t = 0; t < m->nt; t++) {
      PetscInt c0[3], c1[3];
      for (int d = 0; d < 3; d++) {
        PetscReal lo = PETSC_MAX_REAL, up = -PETSC_MAX_REAL;
        for (int k = 0; k < 3; k++) lo = PetscMin(lo, m->x[3 * m->tri[3 * t + k] + d]), up = PetscMax(up, m->x[3 * m->tri[3 * t + k] + d]);
        c0[d] = PetscMin(me->gn[d] - 1, (PetscInt)PetscFloorReal((lo - me->glo[d]) / me->gh));
        c1[d] = PetscMin(me->gn[d] - 1, (PetscInt)PetscFloorReal((up - me->glo[d]) / me->gh));
      }
      for (PetscInt z = c0[2]; z <= c1[2]; z++)
        for (PetscInt y = c0[1]; y <= c1[1]; y++)
          for (PetscInt x = c0[0]; x <= c1[0]; x++) {
            PetscInt c = (z * me->gn[1] + y) * me->gn[0] + x;
            if (pass == 0) me->gstart[c + 1]++;
            else me->gitem[me->gstart[c] + cnt[c]++] = t;
          }
    }
    if (pass == 0) {
      for (PetscInt c = 0; c < ncell; c++) me->gstart[c + 1] += me->gstart[c];
      PetscCall(PetscMalloc1(me->gstart[ncell] + 1, &me->gitem));
    }
  }
  PetscCall(PetscFree(cnt));
  PetscCall(PetscCalloc1(m->nt, &me->stamp));
  me->curstamp = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeSetFromConfig_Mesh(DemShape s, DemNode cfg)
{
  DemShape_Mesh    *me     = (DemShape_Mesh *)s->data;
  const char *const keys[] = {"type", "name", "point", "material", "velocity", "remove_at", "file", "occ", "scale", "mesh_size", "caps", "outlet", "closed", NULL};
  DemNode           nfile, nocc, nsc, nh, nout;
  PetscReal         scale = 1, h = 0;
  PetscBool         caps  = PETSC_TRUE, closed = PETSC_FALSE;
  PetscErrorCode    ierr;

  PetscFunctionBegin;
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemNodeGet(cfg, "file", &nfile));
  PetscCall(DemNodeGet(cfg, "occ", &nocc));
  PetscCall(DemNodeGet(cfg, "scale", &nsc));
  PetscCall(DemNodeGet(cfg, "mesh_size", &nh));
  DemNodeCheck(cfg, (nfile != NULL) + (nocc != NULL) == 1, "a mesh wall needs exactly one of file: PATH (.stl, .msh, .step, .brep, .iges) or occ: [solids]");
  if (nsc) {
    PetscCall(DemNodeGetReal(cfg, "scale", PETSC_TRUE, &scale));
    DemNodeCheck(nsc, scale > 0, "scale must be > 0 (got %g)", (double)scale);
  }
  if (nh) {
    PetscCall(DemNodeGetReal(cfg, "mesh_size", PETSC_TRUE, &h));
    DemNodeCheck(nh, h > 0, "mesh_size must be > 0 (got %g)", (double)h);
  }
  PetscCall(DemNodeGetBool(cfg, "caps", PETSC_FALSE, &caps));
  PetscCall(DemNodeGetBool(cfg, "closed", PETSC_FALSE, &closed));
  PetscCall(DemNodeGet(cfg, "outlet", &nout));
  if (nout) {
    const char *const ok[] = {"point", "normal", NULL};
    PetscReal         l;
    DemNodeCheck(nout, DemNodeGetType(nout) == DEM_NODE_MAP, "outlet: expected {point: [x, y, z], normal: [nx, ny, nz]}");
    PetscCall(DemNodeAllowKeys(nout, ok));
    PetscCall(DemNodeGetRealArray(nout, "point", PETSC_TRUE, 3, me->out_p));
    PetscCall(DemNodeGetRealArray(nout, "normal", PETSC_TRUE, 3, me->out_n));
    l = PetscSqrtReal(PetscSqr(me->out_n[0]) + PetscSqr(me->out_n[1]) + PetscSqr(me->out_n[2]));
    DemNodeCheck(nout, l > 0, "outlet: normal must be a nonzero vector");
    for (int d = 0; d < 3; d++) me->out_n[d] /= l;
    me->has_outlet = PETSC_TRUE;
  }
  if (nfile) {
    const char *path;
    char        full[PETSC_MAX_PATH_LEN];
    PetscCall(DemNodeGetString(cfg, "file", PETSC_TRUE, &path));
    if (path[0] == '/') PetscCall(PetscStrncpy(full, path, sizeof(full)));
    else {
      const char *f = DemNodeFile(cfg), *slash = f ? strrchr(f, '/') : NULL;
      if (slash) PetscCall(PetscSNPrintf(full, sizeof(full), "%.*s/%s", (int)(slash - f), f, path));
      else PetscCall(PetscStrncpy(full, path, sizeof(full)));
    }
    PetscCall(PetscPushErrorHandler(DemRecordErrorHandler, NULL));
    DemSetLastError("%s", "");
    ierr = DemTriMeshLoadFileSized(full, scale, h, &me->m);
    if (!ierr && !caps) ierr = PETSC_ERR_USER_INPUT, DemSetLastError("caps: false is for occ: solids only");
    PetscCall(PetscPopErrorHandler());
    if (ierr) return DemNodeError(nfile, "mesh wall: %s", DemLastError());
  } else {
    PetscInt     n   = 0;
    DemOccSolid *sol = NULL;
    PetscCall(DemMeshReadOcc(nocc, &n, &sol));
    if (!(h > 0)) { /* 1/20 of the largest solid's extent */
      for (PetscInt i = 0; i < n; i++) {
        const PetscReal *p = sol[i].p;
        PetscReal        ext = sol[i].type == DEM_OCC_BOX ? PetscMax(p[3], PetscMax(p[4], p[5])) : sol[i].type == DEM_OCC_SPHERE ? 2 * p[3] : PetscMax(PetscSqrtReal(p[3] * p[3] + p[4] * p[4] + p[5] * p[5]), 2 * PetscMax(p[6], sol[i].type == DEM_OCC_CONE ? p[7] : 0));
        h = PetscMax(h, ext / 20);
      }
    }
    PetscCall(PetscPushErrorHandler(DemRecordErrorHandler, NULL));
    DemSetLastError("%s", "");
    ierr = DemTriMeshFromOcc(n, sol, PETSC_TRUE, caps ? PETSC_FALSE : PETSC_TRUE, h, scale, &me->m);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscFree(sol));
    if (ierr) return DemNodeError(nocc, "mesh wall: %s", DemLastError());
  }
  if (closed) {
    PetscCall(PetscPushErrorHandler(DemRecordErrorHandler, NULL));
    DemSetLastError("%s", "");
    ierr = DemTriMeshCheckClosed(&me->m, "mesh wall");
    PetscCall(PetscPopErrorHandler());
    if (ierr) return DemNodeError(nfile ? nfile : nocc, "%s", DemLastError());
  }
  for (PetscInt i = 0; i < 3 * me->m.nv; i++)
    if (PetscIsInfOrNanReal(me->m.x[i])) return DemNodeError(nfile ? nfile : nocc, "mesh wall: vertex %" PetscInt_FMT " has a non-finite coordinate (%g)", i / 3, (double)me->m.x[i]);
  {
    PetscReal ext = 0;
    for (PetscInt i = 0; i < me->m.nv; i++)
      for (int d = 0; d < 3; d++) ext = PetscMax(ext, PetscAbsReal(me->m.x[3 * i + d]));
    if (!(ext < 1e100)) return DemNodeError(nfile ? nfile : nocc, "mesh wall: coordinates up to %g m: too large", (double)ext);
  }
  /* edges, face normals, grid */
  PetscCall(DemTriMeshEdges(&me->m, &me->ne, &me->ev, &me->te, &me->et));
  PetscCall(PetscMalloc1(3 * me->m.nt, &me->fn));
  for (PetscInt t = 0; t < me->m.nt; t++) {
    const PetscReal *a = me->m.x + 3 * me->m.tri[3 * t], *b = me->m.x + 3 * me->m.tri[3 * t + 1], *c = me->m.x + 3 * me->m.tri[3 * t + 2];
    PetscReal        u[3], v[3], n[3], l;
    for (int d = 0; d < 3; d++) u[d] = b[d] - a[d], v[d] = c[d] - a[d];
    n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
    l    = PetscSqrtReal(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int d = 0; d < 3; d++) me->fn[3 * t + d] = l > 0 ? n[d] / l : (d == 2);
  }
  PetscCall(DemMeshBuildGrid(me));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeMassProperties_Mesh(DemShape s, PetscReal rho, PetscReal *m, PetscReal I[3])
{
  PetscFunctionBegin;
  *m   = PETSC_INFINITY;
  I[0] = I[1] = I[2] = PETSC_INFINITY;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeBoundingRadius_Mesh(DemShape s, PetscReal *r)
{
  PetscFunctionBegin;
  *r = 0; /* a wall: paired through its collider at each rebuild */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeTessellate_Mesh(DemShape s, DemSurface *srf)
{
  DemShape_Mesh *me = (DemShape_Mesh *)s->data;

  PetscFunctionBegin;
  srf->npoints = me->m.nv;
  srf->ntri    = me->m.nt;
  PetscCall(PetscMalloc1(3 * me->m.nv, &srf->points));
  PetscCall(PetscMalloc1(3 * me->m.nt, &srf->tri));
  PetscCall(PetscArraycpy(srf->points, me->m.x, 3 * me->m.nv));
  PetscCall(PetscArraycpy(srf->tri, me->m.tri, 3 * me->m.nt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeDestroy_Mesh(DemShape s)
{
  DemShape_Mesh *me = (DemShape_Mesh *)s->data;

  PetscFunctionBegin;
  if (!me) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemTriMeshDestroy(&me->m));
  if (me->ev) PetscCall(PetscFree3(me->ev, me->te, me->et));
  PetscCall(PetscFree(me->fn));
  PetscCall(PetscFree(me->gstart));
  PetscCall(PetscFree(me->gitem));
  PetscCall(PetscFree(me->stamp));
  PetscCall(PetscFree(me->cand));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- discharged mass (thermo.csv columns) ---- */

typedef struct {
  PetscReal last_t, last_m;
  PetscInt  last_step;
  DemSim    last_sim;
} DemMeshDischarge;
static DemMeshDischarge discharge_ = {0, 0, -1, NULL};

static PetscErrorCode DemMeshDischargedMass(DemSim sim, PetscReal *mass)
{
  DemBodyStore *bs = &sim->bodies;
  PetscReal     m  = 0;

  PetscFunctionBegin;
  for (PetscInt w = 0; w < sim->nwall; w++) {
    DemShape       s = sim->shapes[bs->shape[sim->walls[w].body]];
    DemShape_Mesh *me;
    PetscReal      p[3], n[3];
    PetscInt       wb = sim->walls[w].body;
    if (!s->ops->destroy || s->ops->destroy != DemShapeDestroy_Mesh) continue;
    me = (DemShape_Mesh *)s->data;
    if (!me->has_outlet) continue;
    DemQuatRotate(bs->q + 4 * wb, me->out_p, p);
    DemQuatRotate(bs->q + 4 * wb, me->out_n, n);
    for (int d = 0; d < 3; d++) p[d] += bs->x[3 * wb + d];
    for (PetscInt i = 0; i < bs->n; i++) {
      if (bs->flags[i] & (DEM_WALL | DEM_GHOST) || bs->inv_m[i] == 0) continue;
      if ((bs->x[3 * i] - p[0]) * n[0] + (bs->x[3 * i + 1] - p[1]) * n[1] + (bs->x[3 * i + 2] - p[2]) * n[2] > 0) m += bs->m[i];
    }
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &m, 1, MPIU_REAL, MPIU_SUM, sim->comm));
  *mass = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemMeshThermoMass(DemSim sim, void *ctx, PetscReal *value)
{
  PetscFunctionBegin;
  PetscCall(DemMeshDischargedMass(sim, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemMeshThermoRate(DemSim sim, void *ctx, PetscReal *value)
{
  PetscReal m;

  PetscFunctionBegin;
  PetscCall(DemMeshDischargedMass(sim, &m));
  if (discharge_.last_sim == sim && sim->time > discharge_.last_t) *value = (m - discharge_.last_m) / (sim->time - discharge_.last_t);
  else *value = 0;
  discharge_.last_sim = sim;
  discharge_.last_t   = sim->time;
  discharge_.last_m   = m;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeCreate_Mesh(DemShape s)
{
  DemShape_Mesh   *me;
  static PetscBool thermo = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscNew(&me));
  s->data                = me;
  s->unbounded           = PETSC_TRUE;
  s->ops->setfromconfig  = DemShapeSetFromConfig_Mesh;
  s->ops->massproperties = DemShapeMassProperties_Mesh;
  s->ops->boundingradius = DemShapeBoundingRadius_Mesh;
  s->ops->tessellate     = DemShapeTessellate_Mesh;
  s->ops->destroy        = DemShapeDestroy_Mesh;
  PetscCall(DemShapeKindRegister("mesh", &s->kind));
  if (!thermo) { /* the columns of runs with mesh walls (0 without an outlet) */
    thermo = PETSC_TRUE;
    PetscCall(DemThermoRegister("discharged_mass", DemMeshThermoMass, NULL, "mesh"));
    PetscCall(DemThermoRegister("discharge_rate", DemMeshThermoRate, NULL, "mesh"));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(shape, "mesh", DemShapeCreate_Mesh)

/* ---- sphere-triangle geometry ---- */

/*
  closest point of triangle (a, b, c) to p (Ericson 5.1.5); *type 0 face, 1 edge, 2 vertex, *k the
  edge (0: ab, 1: bc, 2: ca) or the vertex (0: a, 1: b, 2: c)
*/
static inline void DemClosestOnTriangle(const PetscReal p[3], const PetscReal a[3], const PetscReal b[3], const PetscReal c[3], PetscReal q[3], int *type, int *k)
{
  PetscReal ab[3], ac[3], ap[3], bp[3], cp[3], d1, d2, d3, d4, d5, d6, va, vb, vc, v, w, den;
  for (int j = 0; j < 3; j++) ab[j] = b[j] - a[j], ac[j] = c[j] - a[j], ap[j] = p[j] - a[j];
  d1 = ab[0] * ap[0] + ab[1] * ap[1] + ab[2] * ap[2];
  d2 = ac[0] * ap[0] + ac[1] * ap[1] + ac[2] * ap[2];
  if (d1 <= 0 && d2 <= 0) {
    for (int j = 0; j < 3; j++) q[j] = a[j];
    *type = 2, *k = 0;
    return;
  }
  for (int j = 0; j < 3; j++) bp[j] = p[j] - b[j];
  d3 = ab[0] * bp[0] + ab[1] * bp[1] + ab[2] * bp[2];
  d4 = ac[0] * bp[0] + ac[1] * bp[1] + ac[2] * bp[2];
  if (d3 >= 0 && d4 <= d3) {
    for (int j = 0; j < 3; j++) q[j] = b[j];
    *type = 2, *k = 1;
    return;
  }
  vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    v = d1 / (d1 - d3);
    for (int j = 0; j < 3; j++) q[j] = a[j] + v * ab[j];
    *type = 1, *k = 0;
    return;
  }
  for (int j = 0; j < 3; j++) cp[j] = p[j] - c[j];
  d5 = ab[0] * cp[0] + ab[1] * cp[1] + ab[2] * cp[2];
  d6 = ac[0] * cp[0] + ac[1] * cp[1] + ac[2] * cp[2];
  if (d6 >= 0 && d5 <= d6) {
    for (int j = 0; j < 3; j++) q[j] = c[j];
    *type = 2, *k = 2;
    return;
  }
  vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    w = d2 / (d2 - d6);
    for (int j = 0; j < 3; j++) q[j] = a[j] + w * ac[j];
    *type = 1, *k = 2;
    return;
  }
  va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    for (int j = 0; j < 3; j++) q[j] = b[j] + w * (c[j] - b[j]);
    *type = 1, *k = 1;
    return;
  }
  den = 1.0 / (va + vb + vc);
  v   = vb * den;
  w   = vc * den;
  for (int j = 0; j < 3; j++) q[j] = a[j] + ab[j] * v + ac[j] * w;
  *type = 0, *k = 0;
}

/* the triangles whose grid cells meet the box c +- r (body frame), into me->cand */
static PetscErrorCode DemMeshQuery(DemShape_Mesh *me, const PetscReal c[3], PetscReal r)
{
  PetscInt c0[3], c1[3];

  PetscFunctionBegin;
  me->ncand = 0;
  for (int d = 0; d < 3; d++) {
    PetscReal lo = (c[d] - r - me->glo[d]) / me->gh, hi = (c[d] + r - me->glo[d]) / me->gh;
    if (!(hi >= 0) || !(lo < me->gn[d])) PetscFunctionReturn(PETSC_SUCCESS); /* outside, or NaN */
    c0[d] = lo < 0 ? 0 : (PetscInt)lo;
    c1[d] = hi >= me->gn[d] - 1 ? me->gn[d] - 1 : (PetscInt)hi;
  }
  if (++me->curstamp == PETSC_MAX_INT) {
    PetscCall(PetscArrayzero(me->stamp, me->m.nt));
    me->curstamp = 1;
  }
  for (PetscInt z = c0[2]; z <= c1[2]; z++)
    for (PetscInt y = c0[1]; y <= c1[1]; y++)
      for (PetscInt x = c0[0]; x <= c1[0]; x++) {
        PetscInt cell = (z * me->gn[1] + y) * me->gn[0] + x;
        for (PetscInt k = me->gstart[cell]; k < me->gstart[cell + 1]; k++) {
          PetscInt t = me->gitem[k];
          if (me->stamp[t] == me->curstamp) continue;
          me->stamp[t] = me->curstamp;
          if (me->ncand == me->candcap) {
            PetscInt *nc, cap = PetscMax(64, 2 * me->candcap);
            PetscCall(PetscMalloc1(cap, &nc));
            if (me->ncand) PetscCall(PetscArraycpy(nc, me->cand, me->ncand));
            PetscCall(PetscFree(me->cand));
            me->cand = nc, me->candcap = cap;
          }
          me->cand[me->ncand++] = t;
        }
      }
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define DEM_MESH_MAXF 64
#define DemMeshKey(type, idx) ((((int64_t)(type) + 1) << 40) | (int64_t)(idx))

/*
  A new contact of a pair takes over the history of a contact of the same pair on a neighbouring
  feature that no longer touches (the sphere moved from one triangle's face over the edge to the
  next): the friction spring carries on across internal edges instead of restarting from zero.
  Neighbours of a face: the faces across its edges, its edges and vertices; of an edge: its faces
  and vertices.
*/
static PetscErrorCode DemMeshInheritHistory(DemSim sim, DemShape_Mesh *me, PetscInt pair, int type, PetscInt idx, PetscInt nf, const int ftype[], const PetscInt fidx[], const PetscBool keep[], PetscInt slot)
{
  int64_t        nb[9];
  PetscInt       nn = 0;
  const PetscInt hs = sim->histsize;

  PetscFunctionBegin;
  if (type == 0) {
    for (int k = 0; k < 3; k++) {
      PetscInt e = me->te[3 * idx + k], o = me->et[2 * e] == idx ? me->et[2 * e + 1] : me->et[2 * e];
      if (o >= 0) nb[nn++] = DemMeshKey(0, o);
      nb[nn++] = DemMeshKey(1, e);
      nb[nn++] = DemMeshKey(2, me->m.tri[3 * idx + k]);
    }
  } else if (type == 1) {
    nb[nn++] = DemMeshKey(0, me->et[2 * idx]);
    if (me->et[2 * idx + 1] >= 0) nb[nn++] = DemMeshKey(0, me->et[2 * idx + 1]);
    nb[nn++] = DemMeshKey(2, me->ev[2 * idx]);
    nb[nn++] = DemMeshKey(2, me->ev[2 * idx + 1]);
  }
  for (PetscInt i = 0; i < nn; i++) {
    PetscInt   s;
    PetscBool  current = PETSC_FALSE, any = PETSC_FALSE;
    PetscReal *h;
    for (PetscInt f = 0; f < nf; f++)
      if (keep[f] && DemMeshKey(ftype[f], fidx[f]) == nb[i]) current = PETSC_TRUE;
    if (current) continue;
    PetscCall(DemNeighbourFeatureSlot_Private(sim, pair, nb[i], PETSC_FALSE, &s, NULL));
    if (s < 0) continue;
    h = sim->nl.history + hs * s;
    for (PetscInt j = 0; j < hs; j++) any = any || h[j] != 0.0;
    if (!any) continue;
    PetscCall(PetscArraycpy(sim->nl.history + hs * slot, h, hs));
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the query's triangles in index order (a contact's feature is found from the first triangle
   that holds it: the order fixes which one, whatever the grid cells around the sphere) */
static inline void DemMeshSortCand(DemShape_Mesh *me)
{
  for (PetscInt i = 1; i < me->ncand; i++) {
    PetscInt t = me->cand[i], j = i;
    for (; j > 0 && me->cand[j - 1] > t; j--) me->cand[j] = me->cand[j - 1];
    me->cand[j] = t;
  }
}

/*
  Feature lists of sphere/mesh pairs (000_c57329b1a40312e0.txt section 2.5, second level with
  Verlet lists; as the polyhedron pairs' in polyhedron_contact.c): per pair of the neighbour list,
  the wall's triangles closer to the sphere's centre than R + reach + 2 m (in index order), with
  the centre in the wall's frame at that moment; kept while the centre moves less than m in the
  wall's frame (a moving wall counts). A triangle that can touch now (closest point within
  R + reach) was within R + reach + m at the build, so it is on the list; the others add nothing:
  the same contacts in the same order as the query's triangles in index order. m = F reach
  (PETSc option -poly_feature_margin F [1]), or F times half the neighbour list's skin when the
  law's reach is 0 (hooke, hertz); -poly_feature_lists 0 turns the lists off. All lists are
  dropped when the neighbour list is rebuilt.
*/
typedef struct {
  const DemShape_Mesh *me;
  PetscReal            cb[3], ra, reach, margin;
  PetscInt             start, len;
} DemMeshFL;

typedef struct {
  DemSim     sim;
  PetscInt   nbuilds, npairs;
  DemMeshFL *pair;
  PetscInt  *rec, nrec, caprec, live;
  PetscInt   nlist, nreuse; /* statistics */
  int        enabled;       /* -1: options not read yet */
  PetscReal  fmargin;
} DemMeshFLStore;
static DemMeshFLStore mfl_ = {NULL, -1, 0, NULL, NULL, 0, 0, 0, 0, 0, -1, 1.0};

static PetscErrorCode DemMeshFLOptions(void)
{
  PetscBool on = PETSC_TRUE;

  PetscFunctionBegin;
  if (mfl_.enabled >= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-poly_feature_lists", &on, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-poly_feature_margin", &mfl_.fmargin, NULL));
  PetscCheck(mfl_.fmargin > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-poly_feature_margin must be > 0 (got %g)", (double)mfl_.fmargin);
  mfl_.enabled = on ? 1 : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemMeshFLPush(PetscInt t)
{
  PetscFunctionBegin;
  if (mfl_.nrec == mfl_.caprec) {
    PetscInt *nw, cap = PetscMax(4096, 2 * mfl_.caprec);
    PetscCall(PetscMalloc1(cap, &nw));
    if (mfl_.nrec) PetscCall(PetscArraycpy(nw, mfl_.rec, mfl_.nrec));
    PetscCall(PetscFree(mfl_.rec));
    mfl_.rec = nw, mfl_.caprec = cap;
  }
  mfl_.rec[mfl_.nrec++] = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the triangles (*tl, *nt of them) of the list of pair p: sphere centre cb (wall frame), radius ra */
static PetscErrorCode DemMeshFLGet(DemSim sim, PetscInt p, DemShape_Mesh *me, const PetscReal cb[3], PetscReal ra, PetscReal reach, PetscReal margin, const PetscInt **tl, PetscInt *nt)
{
  DemMeshFL *L;
  PetscReal  d[3] = {0, 0, 0}, lim;

  PetscFunctionBegin;
  if (mfl_.sim != sim || mfl_.nbuilds != sim->nl.nbuilds || mfl_.npairs != sim->nl.npairs) { /* a new neighbour list */
    PetscCall(PetscInfo(NULL, "sphere/mesh lists: neighbour list build %" PetscInt_FMT "; so far %" PetscInt_FMT " lists built, %" PetscInt_FMT " reused\n", sim->nl.nbuilds, mfl_.nlist, mfl_.nreuse));
    PetscCall(PetscFree(mfl_.pair));
    mfl_.sim = sim, mfl_.nbuilds = sim->nl.nbuilds, mfl_.npairs = sim->nl.npairs;
    PetscCall(PetscMalloc1(PetscMax(mfl_.npairs, 1), &mfl_.pair));
    for (PetscInt k = 0; k < mfl_.npairs; k++) mfl_.pair[k].start = -1, mfl_.pair[k].len = 0, mfl_.pair[k].me = NULL;
    mfl_.nrec = mfl_.live = 0;
  }
  PetscCheck(p >= 0 && p < mfl_.npairs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "pair %" PetscInt_FMT " outside the neighbour list (%" PetscInt_FMT ")", p, mfl_.npairs);
  L = &mfl_.pair[p];
  for (int j = 0; j < 3; j++) d[j] = cb[j] - L->cb[j];
  if (!(L->start >= 0 && L->me == me && L->ra == ra && L->reach == reach && L->margin == margin && PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) < margin)) {
    const DemTriMesh *m = &me->m;
    if (mfl_.nrec > 2 * mfl_.live + 65536) { /* drop the space of replaced lists */
      PetscInt *nw, n = 0;
      PetscCall(PetscMalloc1(PetscMax(mfl_.live, 1), &nw));
      for (PetscInt k = 0; k < mfl_.npairs; k++) {
        DemMeshFL *Q = &mfl_.pair[k];
        if (Q->start < 0) continue;
        PetscCall(PetscArraycpy(nw + n, mfl_.rec + Q->start, Q->len));
        Q->start = n;
        n += Q->len;
      }
      PetscCall(PetscFree(mfl_.rec));
      mfl_.rec = nw, mfl_.nrec = n, mfl_.caprec = PetscMax(mfl_.live, 1);
    }
    if (L->start >= 0) mfl_.live -= L->len;
    lim = ra + reach + 2 * margin;
    PetscCall(DemMeshQuery(me, cb, lim));
    DemMeshSortCand(me);
    L->start = mfl_.nrec;
    for (PetscInt i = 0; i < me->ncand; i++) {
      PetscInt         t = me->cand[i];
      const PetscReal *A = m->x + 3 * m->tri[3 * t], *B = m->x + 3 * m->tri[3 * t + 1], *C = m->x + 3 * m->tri[3 * t + 2];
      PetscReal        q[3];
      int              type, kk;
      DemClosestOnTriangle(cb, A, B, C, q, &type, &kk);
      if (PetscSqr(cb[0] - q[0]) + PetscSqr(cb[1] - q[1]) + PetscSqr(cb[2] - q[2]) < lim * lim) PetscCall(DemMeshFLPush(t));
    }
    L->len = mfl_.nrec - L->start;
    mfl_.live += L->len;
    L->me = me, L->ra = ra, L->reach = reach, L->margin = margin;
    for (int j = 0; j < 3; j++) L->cb[j] = cb[j];
    mfl_.nlist++;
  } else mfl_.nreuse++;
  *tl = mfl_.rec + L->start;
  *nt = L->len;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Sphere (a) against mesh (b), both orders of the batch are served by the registry's swap (the
  mesh is b). Up to DEM_MESH_MAXF touching features per pair (more would mean a sphere larger
  than the mesh's features by far: an error).
*/
PetscErrorCode DemCollide_SphereMesh(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  const PetscReal *x = pb->state->x, *q = pb->state->q;
  DemBodyStore    *bs;
  DemSim           sim = pb->sim;

  PetscReal        margin = 0;

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  if (pb->pair) { /* running: feature lists, margin m (above) */
    PetscCall(DemMeshFLOptions());
    if (mfl_.enabled) margin = mfl_.fmargin * (skin > 0 ? skin : 0.5 * sim->skin);
  }
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt   a = pb->a[k], b = pb->b[k];
    DemShape_Mesh   *me = (DemShape_Mesh *)sim->shapes[bs->shape[b]]->data;
    const PetscInt  *tl  = NULL;
    PetscInt         ntl = 0;
    const DemTriMesh *m = &me->m;
    PetscReal        ra = bs->radius[a], d[3], cb[3], qc[4];
    PetscInt         nf = 0;
    int              ftype[DEM_MESH_MAXF];
    PetscInt         fidx[DEM_MESH_MAXF], ftri[DEM_MESH_MAXF];
    PetscReal        fq[DEM_MESH_MAXF][3], fdist[DEM_MESH_MAXF];
    PetscBool        keep[DEM_MESH_MAXF];
    /* sphere centre in the wall's frame */
    for (int j = 0; j < 3; j++) d[j] = x[3 * a + j] - x[3 * b + j];
    qc[0] = q[4 * b], qc[1] = -q[4 * b + 1], qc[2] = -q[4 * b + 2], qc[3] = -q[4 * b + 3];
    DemQuatRotate(qc, d, cb);
    if (margin > 0) PetscCall(DemMeshFLGet(sim, pb->pair[k], me, cb, ra, skin, margin, &tl, &ntl));
    else {
      PetscCall(DemMeshQuery(me, cb, ra + skin));
      DemMeshSortCand(me);
      tl = me->cand, ntl = me->ncand;
    }
    for (PetscInt i = 0; i < ntl; i++) {
      PetscInt         t = tl[i], idx;
      const PetscReal *A = m->x + 3 * m->tri[3 * t], *B = m->x + 3 * m->tri[3 * t + 1], *C = m->x + 3 * m->tri[3 * t + 2];
      PetscReal        p[3], dist;
      int              type, kk;
      PetscBool        dup = PETSC_FALSE;
      DemClosestOnTriangle(cb, A, B, C, p, &type, &kk);
      dist = PetscSqrtReal(PetscSqr(cb[0] - p[0]) + PetscSqr(cb[1] - p[1]) + PetscSqr(cb[2] - p[2]));
      if (dist - ra >= skin) continue;
      idx = type == 0 ? t : type == 1 ? me->te[3 * t + kk] : m->tri[3 * t + kk];
      for (PetscInt f = 0; f < nf; f++)
        if (ftype[f] == type && fidx[f] == idx) dup = PETSC_TRUE;
      if (dup) continue;
      PetscCheck(nf < DEM_MESH_MAXF, PETSC_COMM_SELF, PETSC_ERR_SUP, "sphere %" PetscInt_FMT " (radius %g) touches more than %d features of mesh wall %" PetscInt_FMT ": the mesh is much finer than the spheres; use a coarser mesh_size", (PetscInt)bs->gid[a], (double)ra, DEM_MESH_MAXF, (PetscInt)bs->gid[b]);
      ftype[nf] = type, fidx[nf] = idx, ftri[nf] = t, fdist[nf] = dist;
      for (int j = 0; j < 3; j++) fq[nf][j] = p[j];
      keep[nf] = PETSC_TRUE;
      nf++;
    }
    /* edges next to a touching face, vertices of a touching face or surviving edge: dropped */
    for (PetscInt f = 0; f < nf; f++) {
      if (ftype[f] == 1) {
        PetscInt e = fidx[f];
        for (PetscInt g = 0; g < nf && keep[f]; g++)
          if (ftype[g] == 0 && (fidx[g] == me->et[2 * e] || fidx[g] == me->et[2 * e + 1])) keep[f] = PETSC_FALSE;
      }
    }
    for (PetscInt f = 0; f < nf; f++) {
      if (ftype[f] != 2) continue;
      for (PetscInt g = 0; g < nf && keep[f]; g++) {
        if (ftype[g] == 0) {
          const PetscInt *tv = m->tri + 3 * fidx[g];
          if (tv[0] == fidx[f] || tv[1] == fidx[f] || tv[2] == fidx[f]) keep[f] = PETSC_FALSE;
        } else if (ftype[g] == 1 && keep[g]) {
          if (me->ev[2 * fidx[g]] == fidx[f] || me->ev[2 * fidx[g] + 1] == fidx[f]) keep[f] = PETSC_FALSE;
        }
      }
    }
    for (PetscInt f = 0; f < nf; f++) {
      PetscReal nb[3], n[3], gap = fdist[f] - ra;
      PetscInt  c;
      if (!keep[f]) continue;
      if (fdist[f] > 1e-14 * ra)
        for (int j = 0; j < 3; j++) nb[j] = (cb[j] - fq[f][j]) / fdist[f];
      else
        for (int j = 0; j < 3; j++) nb[j] = me->fn[3 * ftri[f] + j];
      DemQuatRotate(&q[4 * b], nb, n);
      PetscCall(DemContactListAppend(out, &c));
      out->a[c]       = a;
      out->b[c]       = b;
      out->feature[c] = DemMeshKey(ftype[f], fidx[f]);
      out->hist[c]    = -1;
      if (pb->pair) {
        PetscBool fresh;
        PetscCall(DemNeighbourFeatureSlot_Private(sim, pb->pair[k], out->feature[c], PETSC_TRUE, &out->hist[c], &fresh));
        if (fresh) PetscCall(DemMeshInheritHistory(sim, me, pb->pair[k], ftype[f], fidx[f], nf, ftype, fidx, keep, out->hist[c]));
      }
      out->gap[c]  = gap;
      out->reff[c] = ra;
      for (int j = 0; j < 3; j++) {
        out->nrm[3 * c + j] = n[j];
        out->ra[3 * c + j]  = -(ra + 0.5 * gap) * n[j];
        out->p[3 * c + j]   = x[3 * a + j] + out->ra[3 * c + j];
        out->rb[3 * c + j]  = out->p[3 * c + j] - x[3 * b + j];
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "sphere/mesh", DemCollide_SphereMesh)

/* ---- view for other colliders (mesh.h; polyhedron/mesh in polyhedron_contact.c) ---- */

PetscBool DemShapeMeshView_Private(DemShape s, DemMeshView *v)
{
  DemShape_Mesh *me;

  if (!s || s->ops->destroy != DemShapeDestroy_Mesh) return PETSC_FALSE;
  me      = (DemShape_Mesh *)s->data;
  v->nv   = me->m.nv;
  v->nt   = me->m.nt;
  v->ne   = me->ne;
  v->x    = me->m.x;
  v->tri  = me->m.tri;
  v->fn   = me->fn;
  v->ev   = me->ev;
  v->te   = me->te;
  v->et   = me->et;
  return PETSC_TRUE;
}

PetscErrorCode DemShapeMeshQuery_Private(DemShape s, const PetscReal c[3], PetscReal r, PetscInt *n, const PetscInt **cand)
{
  DemShape_Mesh *me = (DemShape_Mesh *)s->data;

  PetscFunctionBegin;
  PetscCall(DemMeshQuery(me, c, r));
  *n    = me->ncand;
  *cand = me->cand;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* for superquadric/mesh (superquadric_mesh.c): DemMeshInheritHistory on mesh wall s */
PetscErrorCode DemShapeMeshInheritHistory_Private(DemShape s, DemSim sim, PetscInt pair, int type, PetscInt idx, PetscInt nf, const int ftype[], const PetscInt fidx[], const PetscBool keep[], PetscInt slot)
{
  PetscFunctionBegin;
  PetscCall(DemMeshInheritHistory(sim, (DemShape_Mesh *)s->data, pair, type, idx, nf, ftype, fidx, keep, slot));
  PetscFunctionReturn(PETSC_SUCCESS);
}
