/*
  test_poly_contacts.c - contact detection of the polyhedron colliders against spheres, mesh
  walls and in concave regions (000_c57329b1a40312e0.txt, sections 2.4.3-2.4.4 and 3.6).

  Each case builds a small run description, places the bodies at a chosen proximity g below
  the activation gap g_bar, runs the narrow phase (DemContactsDetect) once and compares the
  pointwise contacts with the geometry worked out by hand:
    - sphere (radius R) over a face, an edge and a corner of a unit cube: one contact each, of
      that feature type (feature key, polyhedron.h), gap g, normal and contact point (middle of
      the gap) exact; over the face centre, which lies on the diagonal of the face's two
      triangles: one contact, not two;
    - L-shaped prism (one re-entrant edge): a sphere in the crease touches both faces (two
      vertex-face contacts); the re-entrant edge is within reach (its gap sqrt(2)(R + g) - R <
      g_bar, checked) but dropped by the hierarchy of 000 section 3.6; a small cube with its
      corner edge in the crease: 8 vertex-face contacts, no vertex-edge contact on the
      re-entrant edge, and the total contact force on the cube equals 4 fn(g) along +x plus
      4 fn(g) along +z with fn(g) = eps1 (g_bar - g) (000 eq. (49), part (i): n1 = 1 and
      g above the switch gap f g_bar = 0.001 m), i.e.
      no duplicate force;
    - the vertex-vertex rule (000 section 3.6): a cube's corner in the crease next to the
      re-entrant vertex at the crease's end, within g_bar of that vertex, already touching both
      crease triangles at it: 8 vertex-face contacts, no vertex-vertex contact, force 4 fn(g)
      (n0 + n1) (with the rule disabled: a 9th, vertex-vertex, contact and a force error of
      about half fn);
    - cube over a mesh wall (an OCC box meshed into many triangles): 4 vertex-face contacts at
      the cube's corners, gap g, normal +z, whatever triangle or flat diagonal each corner falls
      on; a cube turned 45 degrees about y with its lowest edge across the wall's top rim:
      one vertex-face contact and one edge-edge contact (eq. (35)) at the crossing.
*/
#include "demimpl.h"
#include "dem_test.h"
#include "dem_test_sim.h"
#include "../src/shapes/polyhedron.h"

static char dir[256];

static const char law_yaml[] = "contact:\n  - {pair: default, law: barrier_hybrid, params: {g_bar: 0.01, f: 0.1, eps1: 1.0e6, n1: 1, n2: -2, zeta: 0.0, mu: 0.5}}\n";

/* the L-shaped prism: the polygon (0,0) (2,0) (2,1) (1,1) (1,2) (0,2) in (x, z), y in [-0.5, 0.5];
   the re-entrant edge is x = 1, z = 1 */
static PetscErrorCode WriteLPrism(const char *path)
{
  const double P[6][2] = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}};
  double       v[12][3];
  int          t[40][3], nt = 0;
  FILE        *fp;

  PetscFunctionBegin;
  for (int i = 0; i < 6; i++) {
    v[i][0] = P[i][0], v[i][1] = -0.5, v[i][2] = P[i][1];
    v[6 + i][0] = P[i][0], v[6 + i][1] = 0.5, v[6 + i][2] = P[i][1];
  }
  /* caps: fan from the re-entrant vertex 3; the polygon runs counter-clockwise in (x, z), whose
     normal x-cross-z is -y: the cap at y = -0.5 keeps that order, the one at y = +0.5 reverses */
  for (int k = 0; k < 4; k++) {
    int a = 3, b = (4 + k) % 6, c = (5 + k) % 6;
    t[nt][0] = a, t[nt][1] = b, t[nt][2] = c, nt++;
    t[nt][0] = 6 + a, t[nt][1] = 6 + c, t[nt][2] = 6 + b, nt++;
  }
  /* sides: polygon edge i -> i+1 */
  for (int i = 0; i < 6; i++) {
    int j = (i + 1) % 6;
    t[nt][0] = i, t[nt][1] = 6 + i, t[nt][2] = 6 + j, nt++;
    t[nt][0] = i, t[nt][1] = 6 + j, t[nt][2] = j, nt++;
  }
  fp = fopen(path, "w");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fprintf(fp, "solid L\n");
  for (int k = 0; k < nt; k++) {
    fprintf(fp, " facet normal 0 0 0\n  outer loop\n");
    for (int j = 0; j < 3; j++) fprintf(fp, "   vertex %.17g %.17g %.17g\n", v[t[k][j]][0], v[t[k][j]][1], v[t[k][j]][2]);
    fprintf(fp, "  endloop\n endfacet\n");
  }
  fprintf(fp, "endsolid L\n");
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscReal Dot3(const PetscReal a[3], const PetscReal b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* the unit quaternion (w, x, y, z) of the rotation matrix R (row-major, a proper rotation) */
static void MatToQuat(const PetscReal R[9], PetscReal qq[4])
{
  PetscReal tr = R[0] + R[4] + R[8];
  if (tr > 0) {
    PetscReal s = 2 * PetscSqrtReal(1 + tr);
    qq[0] = 0.25 * s, qq[1] = (R[7] - R[5]) / s, qq[2] = (R[2] - R[6]) / s, qq[3] = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    PetscReal s = 2 * PetscSqrtReal(1 + R[0] - R[4] - R[8]);
    qq[0] = (R[7] - R[5]) / s, qq[1] = 0.25 * s, qq[2] = (R[1] + R[3]) / s, qq[3] = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    PetscReal s = 2 * PetscSqrtReal(1 + R[4] - R[0] - R[8]);
    qq[0] = (R[2] - R[6]) / s, qq[1] = (R[1] + R[3]) / s, qq[2] = 0.25 * s, qq[3] = (R[5] + R[7]) / s;
  } else {
    PetscReal s = 2 * PetscSqrtReal(1 + R[8] - R[0] - R[4]);
    qq[0] = (R[3] - R[1]) / s, qq[1] = (R[2] + R[6]) / s, qq[2] = (R[5] + R[7]) / s, qq[3] = 0.25 * s;
  }
}

static PetscErrorCode Detect(DemSim sim)
{
  DemBodyStore *bs = &sim->bodies;
  DemState      st = {bs->x, bs->v, bs->w, bs->q};

  PetscFunctionBegin;
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
  PetscCall(DemContactsDetect(sim, &st));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int KeyType(int64_t key, int side) /* feature type of a (side 0) or b (side 1) */
{
  return (int)(((uint64_t)key >> (side ? 60 : 62)) & 3);
}

/* a sphere of radius R = 0.1 at x over a fixed unit cube at the origin */
static PetscErrorCode SphereCase(const char *name, const PetscReal x[3], PetscInt nexp, int type, PetscReal gap, const PetscReal n[3])
{
  char         yaml[2048], label[256];
  DemSim       sim;
  DemNode      root;
  DemContactList *cl;
  PetscReal    en = 0, ep = 0, eg = 0;

  PetscFunctionBegin;
  snprintf(yaml, sizeof(yaml),
           "name: %s\ndomain: {lo: [-2, -2, -2], hi: [2, 2, 2]}\ngravity: [0, 0, 0]\n"
           "materials:\n  m: {density: 1000, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}\n%s"
           "shapes:\n  cube: {type: polyhedron, box: [1, 1, 1]}\n  ball: {type: sphere, radius: 0.1}\n"
           "bodies:\n  - {shape: cube, material: m, fixed: true, list: [{x: [0, 0, 0]}]}\n"
           "  - {shape: ball, material: m, list: [{x: [%.17g, %.17g, %.17g]}]}\n"
           "integrator: {type: verlet, dt: 1.0e-5}\nrun: {steps: 1}\n",
           name, law_yaml, (double)x[0], (double)x[1], (double)x[2]);
  PetscCall(DemTestMakeSim(dir, name, yaml, NULL, &sim, &root));
  PetscCall(Detect(sim));
  cl = &sim->cl;
  snprintf(label, sizeof(label), "sphere-polyhedron %s: %d contact(s)", name, (int)nexp);
  DEM_CHECK(label, cl->n == nexp, "got %d", (int)cl->n);
  if (cl->n == 1 && nexp == 1) {
    for (int j = 0; j < 3; j++) {
      /* contact point: the middle of the gap, c - (R + g/2) n */
      PetscReal p = x[j] - (0.1 + 0.5 * gap) * n[j];
      en = PetscMax(en, PetscAbsReal(cl->nrm[j] - n[j]));
      ep = PetscMax(ep, PetscAbsReal(cl->p[j] - p));
    }
    eg = PetscAbsReal(cl->gap[0] - gap);
    snprintf(label, sizeof(label), "sphere-polyhedron %s: feature type %d on the cube, sphere a, cube b", name, type);
    DEM_CHECK(label, KeyType(cl->feature[0], 1) == type && KeyType(cl->feature[0], 0) == DEM_POLY_V && cl->a[0] == 1 && cl->b[0] == 0, "key %llx a %d b %d", (unsigned long long)cl->feature[0], (int)cl->a[0], (int)cl->b[0]);
    snprintf(label, sizeof(label), "sphere-polyhedron %s: gap, normal and contact point exact (1e-12)", name);
    DEM_CHECK(label, eg < 1e-12 && en < 1e-12 && ep < 1e-12, "gap err %g, normal err %g, point err %g", (double)eg, (double)en, (double)ep);
  }
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestSphereCube(void)
{
  const PetscReal R = 0.1, g = 0.004, s2 = PetscSqrtReal(0.5), s3 = PetscSqrtReal(1.0 / 3);
  PetscReal       x[3], n[3];

  PetscFunctionBegin;
  x[0] = 0.1, x[1] = 0.2, x[2] = 0.5 + R + g, n[0] = 0, n[1] = 0, n[2] = 1;
  PetscCall(SphereCase("face", x, 1, DEM_POLY_F, g, n));
  x[0] = 0, x[1] = 0, x[2] = 0.5 + R + g; /* on the diagonal of the top face's two triangles */
  PetscCall(SphereCase("face_centre", x, 1, DEM_POLY_F, g, n));
  n[0] = 0, n[1] = s2, n[2] = s2;
  x[0] = 0.1, x[1] = 0.5 + (R + g) * s2, x[2] = 0.5 + (R + g) * s2;
  PetscCall(SphereCase("edge", x, 1, DEM_POLY_E, g, n));
  n[0] = n[1] = n[2] = s3;
  for (int j = 0; j < 3; j++) x[j] = 0.5 + (R + g) * s3;
  PetscCall(SphereCase("corner", x, 1, DEM_POLY_V, g, n));
  x[0] = 0.1, x[1] = 0.2, x[2] = 0.5 + R + 0.011; /* beyond g_bar */
  PetscCall(SphereCase("beyond_g_bar", x, 0, 0, 0, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* sphere and cube in the crease of the L-shaped prism */
static PetscErrorCode TestConcave(void)
{
  char            yaml[2048], stl[300];
  DemSim          sim;
  DemNode         root;
  DemContactList *cl;
  const PetscReal R = 0.01, g = 0.002, gbar = 0.01, eps1 = 1.0e6;
  PetscInt        nface = 0, nedge = 0, nother = 0;

  PetscFunctionBegin;
  snprintf(stl, sizeof(stl), "%s/L.stl", dir);
  PetscCall(WriteLPrism(stl));
  /* the sphere: centre at distance R + g from both faces of the crease */
  snprintf(yaml, sizeof(yaml),
           "name: crease\ndomain: {lo: [-3, -3, -3], hi: [3, 3, 3]}\ngravity: [0, 0, 0]\n"
           "materials:\n  m: {density: 1000, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}\n%s"
           "shapes:\n  L: {type: polyhedron, mesh: L.stl}\n  ball: {type: sphere, radius: %g}\n"
           "bodies:\n  - {shape: L, material: m, fixed: true, list: [{x: [0, 0, 0]}]}\n"
           "  - {shape: ball, material: m, list: [{x: [2.8, 2.8, 2.8]}]}\n"
           "integrator: {type: verlet, dt: 1.0e-6}\nrun: {steps: 1}\n",
           law_yaml, (double)R);
  {
    /* the body frame of L is its principal frame about its centre of mass: place it so that the
       mesh coordinates hold, i.e. put the sphere relative to the crease in world coordinates
       after set-up */
    DemBodyStore *bs;
    PetscReal     crease[3], v[3];
    const DemPolyGeom *gl;
    PetscCall(DemTestMakeSim(dir, "crease", yaml, NULL, &sim, &root));
    bs = &sim->bodies;
    gl = DemShapePolyhedronGeom_Private(sim->shapes[bs->shape[0]]);
    PetscCheck(gl, PETSC_COMM_SELF, PETSC_ERR_PLIB, "L is not a polyhedron");
    /* find the re-entrant edge in the world frame (body 0 at the origin, identity orientation) */
    {
      PetscInt ne = 0, ec = -1;
      for (PetscInt e = 0; e < gl->ne; e++)
        if (gl->econcave[e]) ne++, ec = e;
      DEM_CHECK("L prism: one re-entrant edge (000 section 3.6)", ne == 1, "got %d", (int)ne);
      PetscCheck(ec >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no concave edge");
      for (int j = 0; j < 3; j++) crease[j] = 0.5 * (gl->v[3 * gl->ev[2 * ec] + j] + gl->v[3 * gl->ev[2 * ec + 1] + j]);
      for (int j = 0; j < 3; j++) v[j] = gl->v[3 * gl->ev[2 * ec + 1] + j] - gl->v[3 * gl->ev[2 * ec] + j];
    }
    /* the principal frame keeps the axes here only up to sign/permutation: find the directions
       of the two faces' outward normals at the crease instead */
    {
      PetscInt  ec = -1;
      PetscReal n0[3], n1[3];
      for (PetscInt e = 0; e < gl->ne; e++)
        if (gl->econcave[e]) ec = e;
      for (int j = 0; j < 3; j++) n0[j] = gl->fn[3 * gl->ef[2 * ec] + j], n1[j] = gl->fn[3 * gl->ef[2 * ec + 1] + j];
      /* sphere centre: crease + (R + g)(n0 + n1), off the edge's middle by 0.1 along it */
      for (int j = 0; j < 3; j++) bs->x[3 + j] = bs->x[j] + crease[j] + (R + g) * (n0[j] + n1[j]) + 0.1 * v[j] / PetscSqrtReal(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      {
        PetscReal dedge = (R + g) * PetscSqrtReal(2.0) - R;
        DEM_CHECK("crease: the re-entrant edge is within g_bar of the sphere (the rule matters)", dedge < gbar, "edge gap %g", (double)dedge);
      }
      PetscCall(Detect(sim));
      cl = &sim->cl;
      for (PetscInt c = 0; c < cl->n; c++) {
        int tb = KeyType(cl->feature[c], 1);
        if (tb == DEM_POLY_F && PetscAbsReal(cl->gap[c] - g) < 1e-12) nface++;
        else if (tb == DEM_POLY_E) nedge++;
        else nother++;
      }
      DEM_CHECK("crease: sphere has two vertex-face contacts at gap g, none on the re-entrant edge (000 section 3.6)", nface == 2 && nedge == 0 && nother == 0, "faces %d edges %d other %d (of %d)", (int)nface, (int)nedge, (int)nother, (int)cl->n);
      /* the force: 2 fn(g) along n0 + n1 */
      {
        DemForceOut fo;
        PetscReal   fn = eps1 * (gbar - g), err = 0;
        PetscCall(PetscMemzero(&fo, sizeof(fo)));
        PetscCall(PetscCalloc2(3 * (bs->n + bs->nghost), &fo.f, 3 * (bs->n + bs->nghost), &fo.t));
        {
          DemState st = {bs->x, bs->v, bs->w, bs->q};
          PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, PETSC_FALSE, &fo));
        }
        for (int j = 0; j < 3; j++) err = PetscMax(err, PetscAbsReal(fo.f[3 + j] - fn * (n0[j] + n1[j])));
        DEM_CHECK("crease: force on the sphere = fn(g) (n0 + n1), fn = eps1 (g_bar - g) (000 eq. (49)) within 1e-9 fn", err < 1e-9 * fn, "err %g N, fn %g N", (double)err, (double)fn);
        PetscCall(PetscFree2(fo.f, fo.t));
      }
    }
    PetscCall(DemSimDestroy(&sim));
    PetscCall(DemConfigDestroy(&root));
  }
  /* a 0.2 m cube with its corner edge in the crease, faces parallel to the crease's faces */
  snprintf(yaml, sizeof(yaml),
           "name: crease_cube\ndomain: {lo: [-3, -3, -3], hi: [3, 3, 3]}\ngravity: [0, 0, 0]\n"
           "materials:\n  m: {density: 1000, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}\n%s"
           "shapes:\n  L: {type: polyhedron, mesh: L.stl}\n  cube: {type: polyhedron, box: [0.2, 0.2, 0.2]}\n"
           "bodies:\n  - {shape: L, material: m, fixed: true, list: [{x: [0, 0, 0]}]}\n"
           "  - {shape: cube, material: m, list: [{x: [2, 2, 2]}]}\n"
           "integrator: {type: verlet, dt: 1.0e-6}\nrun: {steps: 1}\n",
           law_yaml);
  {
    DemBodyStore      *bs;
    const DemPolyGeom *gl;
    PetscInt           ec = -1, nvf = 0, nve = 0, nx = 0;
    PetscReal          crease[3], n0[3], n1[3], u[3], R[9], fn = eps1 * (gbar - g), err = 0;
    PetscCall(DemTestMakeSim(dir, "crease_cube", yaml, NULL, &sim, &root));
    bs = &sim->bodies;
    gl = DemShapePolyhedronGeom_Private(sim->shapes[bs->shape[0]]);
    for (PetscInt e = 0; e < gl->ne; e++)
      if (gl->econcave[e]) ec = e;
    for (int j = 0; j < 3; j++) {
      crease[j] = bs->x[j] + 0.5 * (gl->v[3 * gl->ev[2 * ec] + j] + gl->v[3 * gl->ev[2 * ec + 1] + j]);
      n0[j]     = gl->fn[3 * gl->ef[2 * ec] + j];
      n1[j]     = gl->fn[3 * gl->ef[2 * ec + 1] + j];
    }
    u[0] = n0[1] * n1[2] - n0[2] * n1[1], u[1] = n0[2] * n1[0] - n0[0] * n1[2], u[2] = n0[0] * n1[1] - n0[1] * n1[0];
    /* the cube's axes along n0, n1, u: orientation from that rotation matrix (columns) */
    for (int j = 0; j < 3; j++) R[3 * j] = n0[j], R[3 * j + 1] = n1[j], R[3 * j + 2] = u[j];
    MatToQuat(R, bs->q + 4);
    /* centre: crease + (0.1 + g)(n0 + n1), the cube's corner edge parallel to the crease */
    for (int j = 0; j < 3; j++) bs->x[3 + j] = crease[j] + (0.1 + g) * (n0[j] + n1[j]);
    PetscCall(Detect(sim));
    for (PetscInt c = 0; c < sim->cl.n; c++) {
      int ta = KeyType(sim->cl.feature[c], 0), tb = KeyType(sim->cl.feature[c], 1);
      PetscBool avert = sim->cl.a[c] == 1 ? ta == DEM_POLY_V : tb == DEM_POLY_V;
      int       other = sim->cl.a[c] == 1 ? tb : ta;
      if (avert && other == DEM_POLY_F && PetscAbsReal(sim->cl.gap[c] - g) < 1e-12) nvf++;
      else if (avert && other == DEM_POLY_E) nve++;
      else nx++;
    }
    DEM_CHECK("crease: cube corner edge in the L's crease: 8 vertex-face contacts at gap g, no vertex-edge on the re-entrant edge (000 section 3.6)", nvf == 8 && nve == 0 && nx == 0, "vf %d ve %d other %d", (int)nvf, (int)nve, (int)nx);
    {
      DemForceOut fo;
      DemState    st = {bs->x, bs->v, bs->w, bs->q};
      PetscCall(PetscMemzero(&fo, sizeof(fo)));
      PetscCall(PetscCalloc2(3 * (bs->n + bs->nghost), &fo.f, 3 * (bs->n + bs->nghost), &fo.t));
      PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, PETSC_FALSE, &fo));
      for (int j = 0; j < 3; j++) err = PetscMax(err, PetscAbsReal(fo.f[3 + j] - 4 * fn * (n0[j] + n1[j])));
      DEM_CHECK("crease: force on the cube = 4 fn(g) (n0 + n1), no duplicate contact force (1e-9)", err < 1e-9 * fn, "err %g N, fn %g N, f = [%g %g %g]", (double)err, (double)fn, (double)fo.f[3], (double)fo.f[4], (double)fo.f[5]);
      PetscCall(PetscFree2(fo.f, fo.t));
    }
    PetscCall(DemSimDestroy(&sim));
    PetscCall(DemConfigDestroy(&root));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 000 section 3.6, the vertex-vertex rule: a 0.2 m cube (b) whose corner k sits in the L's crease
   next to the re-entrant vertex v at the crease's end (on the cap): the corner is at gap g from
   both faces of the crease (two vertex-face contacts on triangles at v) and a distance
   sqrt(2 g^2 + dl^2) < g_bar from v, where dl is its offset along the crease from the cap plane.
   The cube's corner owns the direction towards v (no cube edge at k leads towards the L), so the
   vertex-vertex pair (v, k) passes every validity test; it is dropped only because k already has
   contacts with triangles at v. The cube's faces lie at gap g parallel to the crease's faces.
   Expected: 8 vertex-face contacts at gap g (the 4 corners of each cube face over each crease
   face), no vertex-vertex contact, and the force on the cube 4 fn(g) (n0 + n1),
   fn = eps1 (g_bar - g) (000 eq. (49)). */
static PetscErrorCode TestConcaveVV(void)
{
  char               yaml[2048], stl[300];
  DemSim             sim;
  DemNode            root;
  DemBodyStore      *bs;
  const DemPolyGeom *gl;
  const PetscReal    g = 0.002, dl = 0.004, gbar = 0.01, eps1 = 1.0e6, h = 0.1;
  PetscInt           ec = -1, iv, nvf = 0, nvv = 0, nx = 0;
  PetscReal          v[3], n0[3], n1[3], u[3], R[9], corner[3], fn = eps1 * (gbar - g), err = 0, dvv;

  PetscFunctionBegin;
  snprintf(stl, sizeof(stl), "%s/L.stl", dir);
  PetscCall(WriteLPrism(stl));
  snprintf(yaml, sizeof(yaml),
           "name: crease_vv\ndomain: {lo: [-3, -3, -3], hi: [3, 3, 3]}\ngravity: [0, 0, 0]\n"
           "materials:\n  m: {density: 1000, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}\n%s"
           "shapes:\n  L: {type: polyhedron, mesh: L.stl}\n  cube: {type: polyhedron, box: [%g, %g, %g]}\n"
           "bodies:\n  - {shape: L, material: m, fixed: true, list: [{x: [0, 0, 0]}]}\n"
           "  - {shape: cube, material: m, list: [{x: [2, 2, 2]}]}\n"
           "integrator: {type: verlet, dt: 1.0e-6}\nrun: {steps: 1}\n",
           law_yaml, (double)(2 * h), (double)(2 * h), (double)(2 * h));
  PetscCall(DemTestMakeSim(dir, "crease_vv", yaml, NULL, &sim, &root));
  bs = &sim->bodies;
  gl = DemShapePolyhedronGeom_Private(sim->shapes[bs->shape[0]]);
  for (PetscInt e = 0; e < gl->ne; e++)
    if (gl->econcave[e]) ec = e;
  PetscCheck(ec >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no concave edge");
  iv = gl->ev[2 * ec]; /* the re-entrant vertex at one end of the crease */
  for (int j = 0; j < 3; j++) {
    v[j]  = bs->x[j] + gl->v[3 * iv + j];
    u[j]  = gl->v[3 * gl->ev[2 * ec + 1] + j] - gl->v[3 * iv + j]; /* along the crease, into the prism's length */
    n0[j] = gl->fn[3 * gl->ef[2 * ec] + j];
    n1[j] = gl->fn[3 * gl->ef[2 * ec + 1] + j];
  }
  {
    PetscReal lu = PetscSqrtReal(Dot3(u, u)), w[3];
    for (int j = 0; j < 3; j++) u[j] /= lu;
    /* a right-handed frame (n0, n1, +-u): the cube's axes */
    w[0] = n0[1] * n1[2] - n0[2] * n1[1], w[1] = n0[2] * n1[0] - n0[0] * n1[2], w[2] = n0[0] * n1[1] - n0[1] * n1[0];
    for (int j = 0; j < 3; j++) R[3 * j] = n0[j], R[3 * j + 1] = n1[j], R[3 * j + 2] = w[j];
  }
  MatToQuat(R, bs->q + 4);
  /* the corner k = v + g (n0 + n1) + dl u; the cube extends from it along n0, n1 and u */
  for (int j = 0; j < 3; j++) {
    corner[j]     = v[j] + g * (n0[j] + n1[j]) + dl * u[j];
    bs->x[3 + j]  = corner[j] + h * (n0[j] + n1[j] + u[j]);
  }
  dvv = PetscSqrtReal(2 * g * g + dl * dl);
  DEM_CHECK("crease end: the cube's corner is within g_bar of the re-entrant vertex (the vertex-vertex rule matters)", dvv < gbar && dl > g, "distance %g", (double)dvv);
  PetscCall(Detect(sim));
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    int ta = KeyType(sim->cl.feature[c], 0), tb = KeyType(sim->cl.feature[c], 1);
    PetscBool cvert = sim->cl.a[c] == 1 ? ta == DEM_POLY_V : tb == DEM_POLY_V;
    int       other = sim->cl.a[c] == 1 ? tb : ta;
    if (cvert && other == DEM_POLY_F && PetscAbsReal(sim->cl.gap[c] - g) < 1e-12) nvf++;
    else if (ta == DEM_POLY_V && tb == DEM_POLY_V) nvv++;
    else nx++;
  }
  DEM_CHECK("crease end: cube corner at the re-entrant vertex: 8 vertex-face contacts at gap g, no vertex-vertex contact (000 section 3.6)", nvf == 8 && nvv == 0 && nx == 0, "vf %d vv %d other %d", (int)nvf, (int)nvv, (int)nx);
  {
    DemForceOut fo;
    DemState    st = {bs->x, bs->v, bs->w, bs->q};
    PetscCall(PetscMemzero(&fo, sizeof(fo)));
    PetscCall(PetscCalloc2(3 * (bs->n + bs->nghost), &fo.f, 3 * (bs->n + bs->nghost), &fo.t));
    PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, PETSC_FALSE, &fo));
    for (int j = 0; j < 3; j++) err = PetscMax(err, PetscAbsReal(fo.f[3 + j] - 4 * fn * (n0[j] + n1[j])));
    DEM_CHECK("crease end: force on the cube = 4 fn(g) (n0 + n1), no vertex-vertex force (1e-9)", err < 1e-9 * fn, "err %g N, fn %g N, f = [%g %g %g]", (double)err, (double)fn, (double)fo.f[3], (double)fo.f[4], (double)fo.f[5]);
    PetscCall(PetscFree2(fo.f, fo.t));
  }
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a unit cube over a mesh wall: an OCC box [-2, 2] x [-2, 2] x [-1, 0] meshed with 0.3 m
   triangles; its top z = 0 is flat (many coplanar triangles) with sharp rims */
static PetscErrorCode TestMesh(void)
{
  char            yaml[2048];
  DemSim          sim;
  DemNode         root;
  DemBodyStore   *bs;
  const PetscReal g = 0.003;
  PetscInt        nvf = 0, nee = 0, nx = 0;
  PetscReal       eg = 0, en = 0;

  PetscFunctionBegin;
  snprintf(yaml, sizeof(yaml),
           "name: meshwall\ndomain: {lo: [-3, -3, -2], hi: [3, 3, 3]}\ngravity: [0, 0, 0]\n"
           "materials:\n  m: {density: 1000, youngs_modulus: 1.0e9, poisson_ratio: 0.3, restitution: 0.5, friction: 0.5}\n%s"
           "shapes:\n  cube: {type: polyhedron, box: [1, 1, 1]}\n"
           "bodies:\n  - {shape: cube, material: m, list: [{x: [0.123, -0.211, %.17g], q: [0.9659258262890683, 0, 0, 0.25881904510252074]}]}\n"
           "walls:\n  - {type: mesh, material: m, point: [0, 0, 0], mesh_size: 0.3, occ: [{box: {corner: [-2, -2, -1], size: [4, 4, 1]}}]}\n"
           "integrator: {type: verlet, dt: 1.0e-6}\nrun: {steps: 1}\n",
           law_yaml, 0.5 + (double)g);
  PetscCall(DemTestMakeSim(dir, "meshwall", yaml, NULL, &sim, &root));
  bs = &sim->bodies;
  PetscCall(Detect(sim));
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    int ta = KeyType(sim->cl.feature[c], 0), tb = KeyType(sim->cl.feature[c], 1);
    if (ta == DEM_POLY_V && tb == DEM_POLY_F) nvf++;
    else nx++;
    eg = PetscMax(eg, PetscAbsReal(sim->cl.gap[c] - g));
    en = PetscMax(en, PetscAbsReal(sim->cl.nrm[3 * c + 2] - 1));
  }
  DEM_CHECK("polyhedron-mesh: cube (turned 30 deg about z) over a meshed flat top: 4 vertex-face contacts, nothing on flat edges", nvf == 4 && nx == 0, "vf %d other %d", (int)nvf, (int)nx);
  DEM_CHECK("polyhedron-mesh: gaps g and normals +z (1e-12)", eg < 1e-12 && en < 1e-12, "gap err %g normal err %g", (double)eg, (double)en);
  /* turned 45 degrees about y, lowest edge along y at height g, across the rim y = 2 */
  {
    const PetscReal s = PetscSqrtReal(0.5), c8 = PetscCosReal(PETSC_PI / 8), s8 = PetscSinReal(PETSC_PI / 8);
    PetscReal       xe[3] = {0.137, 2.0, g + s}, eee = 0;
    bs->q[0] = c8, bs->q[1] = 0, bs->q[2] = s8, bs->q[3] = 0;
    for (int j = 0; j < 3; j++) bs->x[j] = xe[j];
    nvf = nee = nx = 0;
    PetscCall(Detect(sim));
    for (PetscInt c = 0; c < sim->cl.n; c++) {
      int ta = KeyType(sim->cl.feature[c], 0), tb = KeyType(sim->cl.feature[c], 1);
      if (ta == DEM_POLY_V && tb == DEM_POLY_F) nvf++;
      else if (ta == DEM_POLY_E && tb == DEM_POLY_E) {
        nee++;
        /* the crossing: (x_e, 2, g/2) in the middle of the gap */
        eee = PetscMax(PetscAbsReal(sim->cl.p[3 * c] - xe[0]), PetscMax(PetscAbsReal(sim->cl.p[3 * c + 1] - 2.0), PetscAbsReal(sim->cl.p[3 * c + 2] - 0.5 * g)));
        eee = PetscMax(eee, PetscAbsReal(sim->cl.gap[c] - g));
      } else nx++;
    }
    DEM_CHECK("polyhedron-mesh: lowest edge across the wall's rim: 1 vertex-face + 1 edge-edge contact (eq. (35))", nvf == 1 && nee == 1 && nx == 0, "vf %d ee %d other %d", (int)nvf, (int)nee, (int)nx);
    DEM_CHECK("polyhedron-mesh: edge-edge contact at the crossing, gap g (1e-12)", eee < 1e-12, "err %g", (double)eee);
  }
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_poly_contacts.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  PetscCall(TestSphereCube());
  PetscCall(TestConcave());
  PetscCall(TestConcaveVV());
  PetscCall(TestMesh());
  {
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd)) printf("# could not remove %s\n", dir);
  }
  PetscCall(PetscFinalize());
  return dem_test_failed;
}
