/*
  test_trimesh.c - unit test of the triangle-mesh import (src/core/trimesh.c): files read through
  the Gmsh SDK and the divergence-theorem mass properties, against closed forms:
    - an ASCII STL box a x b x c at an offset, scaled by s: 8 vertices, 12 triangles, volume
      abc s^3, centre of mass at the box centre, inertia m (b^2 + c^2)/12 etc. (diagonal), all to
      1e-12 relative;
    - the same box as an OCC primitive, written by Gmsh as STEP and as .msh and read back: the
      same volume and inertia to 1e-10 (a box is meshed exactly);
    - an OCC cylinder (r, h) meshed with element size r/8: the volume of the inscribed polygonal
      prism, between pi r^2 h (1 - (2 pi / n)^2 / 6) for n >= 16 segments and pi r^2 h;
      Izz / (m r^2 / 2) within 2 %;
    - a cone + cylinder funnel with the planar faces dropped: an open surface (CheckClosed
      refuses it, naming "open surface");
    - errors naming the fault: open (a triangle removed), non-manifold (a third triangle on an
      edge), inconsistent orientation (one triangle flipped), inverted (all flipped), missing
      file, unknown extension, an STL with only a degenerate triangle (a fuzz finding that
      leaked; tests/fuzz/regressions/stl-degenerate-leak.stl);
    - DemTriMeshOrient repairs the flipped and inverted boxes (then the checks pass).
*/
#include "trimesh.h"
#include "demimpl.h"
#include "dem_test.h"
#include <gmshc.h>

static PetscErrorCode        ierr_;
#define TRY(call) (PetscPushErrorHandler(DemRecordErrorHandler, NULL), DemSetLastError("%s", ""), ierr_ = (call), PetscPopErrorHandler(), ierr_)

static const int BoxTri[12][3] = {
  {0, 2, 1}, {0, 3, 2}, /* z = 0, normal -z */
  {4, 5, 6}, {4, 6, 7}, /* z = c */
  {0, 1, 5}, {0, 5, 4}, /* y = 0 */
  {3, 7, 6}, {3, 6, 2}, /* y = b */
  {0, 4, 7}, {0, 7, 3}, /* x = 0 */
  {1, 2, 6}, {1, 6, 5}  /* x = a */
};

static void BoxVertex(int i, const double lo[3], const double L[3], double v[3])
{
  v[0] = lo[0] + ((i == 1 || i == 2 || i == 5 || i == 6) ? L[0] : 0);
  v[1] = lo[1] + ((i == 2 || i == 3 || i == 6 || i == 7) ? L[1] : 0);
  v[2] = lo[2] + (i >= 4 ? L[2] : 0);
}

static int WriteStlBox(const char *path, const double lo[3], const double L[3])
{
  FILE *fp = fopen(path, "w");
  if (!fp) return 1;
  fprintf(fp, "solid box\n");
  for (int t = 0; t < 12; t++) {
    double v[3][3];
    for (int k = 0; k < 3; k++) BoxVertex(BoxTri[t][k], lo, L, v[k]);
    fprintf(fp, " facet normal 0 0 0\n  outer loop\n");
    for (int k = 0; k < 3; k++) fprintf(fp, "   vertex %.17g %.17g %.17g\n", v[k][0], v[k][1], v[k][2]);
    fprintf(fp, "  endloop\n endfacet\n");
  }
  fprintf(fp, "endsolid box\n");
  return fclose(fp);
}

static void CheckBox(const char *tag, const DemTriMesh *m, const double lo[3], const double L[3], double s, double rtol)
{
  PetscReal mass, com[3], J[9], rho = 2.0;
  double    a = L[0] * s, b = L[1] * s, c = L[2] * s, M = rho * a * b * c;
  char      name[128];
  if (DemTriMeshMassProperties(m, rho, &mass, com, J)) {
    snprintf(name, sizeof(name), "%s mass properties", tag);
    DEM_CHECK(name, 0, "DemTriMeshMassProperties failed");
    return;
  }
  snprintf(name, sizeof(name), "%s mass = rho a b c", tag);
  DEM_CHECK_REL(name, mass, M, rtol);
  for (int d = 0; d < 3; d++) {
    snprintf(name, sizeof(name), "%s com[%d] = box centre", tag, d);
    DEM_CHECK_ABS(name, com[d], s * (lo[d] + 0.5 * L[d]), rtol * s * (L[0] + L[1] + L[2]));
  }
  snprintf(name, sizeof(name), "%s Ixx = m (b^2 + c^2) / 12", tag);
  DEM_CHECK_REL(name, J[0], M * (b * b + c * c) / 12, rtol);
  snprintf(name, sizeof(name), "%s Iyy = m (a^2 + c^2) / 12", tag);
  DEM_CHECK_REL(name, J[4], M * (a * a + c * c) / 12, rtol);
  snprintf(name, sizeof(name), "%s Izz = m (a^2 + b^2) / 12", tag);
  DEM_CHECK_REL(name, J[8], M * (a * a + b * b) / 12, rtol);
  snprintf(name, sizeof(name), "%s off-diagonal inertia = 0", tag);
  DEM_CHECK(name, fabs(J[1]) + fabs(J[2]) + fabs(J[5]) <= rtol * J[0], "Ixy %g Ixz %g Iyz %g", J[1], J[2], J[5]);
}

static void ExpectError(const char *name, PetscErrorCode ierr, const char *needle)
{
  DEM_CHECK(name, ierr != 0 && strstr(DemLastError(), needle), "error %d, message '%s' (expected one containing '%s')", (int)ierr, DemLastError(), needle);
}

static PetscErrorCode CopyMesh(const DemTriMesh *a, DemTriMesh *b)
{
  PetscFunctionBegin;
  b->nv = a->nv, b->nt = a->nt;
  PetscCall(PetscMalloc1(3 * a->nv, &b->x));
  PetscCall(PetscMalloc1(3 * a->nt + 3, &b->tri));
  PetscCall(PetscArraycpy(b->x, a->x, 3 * a->nv));
  PetscCall(PetscArraycpy(b->tri, a->tri, 3 * a->nt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char         dir[] = "/tmp/mmdem_trimesh_XXXXXX", stl[256], step[256], msh[256], bad[256];
  const double lo[3] = {0.3, -0.2, 1.1}, L[3] = {0.5, 0.25, 0.125}, s = 2.0;
  DemTriMesh   m, c;
  PetscInt     flipped;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  if (!mkdtemp(dir)) return 1;
  snprintf(stl, sizeof(stl), "%s/box.stl", dir);
  snprintf(step, sizeof(step), "%s/box.step", dir);
  snprintf(msh, sizeof(msh), "%s/box.msh", dir);
  snprintf(bad, sizeof(bad), "%s/box.obj", dir);

  /* STL box */
  DEM_CHECK("write STL", WriteStlBox(stl, lo, L) == 0, "cannot write %s", stl);
  DEM_CHECK("load STL box", TRY(DemTriMeshLoadFile(stl, s, &m)) == 0, "%s", DemLastError());
  DEM_CHECK("STL box: 8 vertices, 12 triangles", m.nv == 8 && m.nt == 12, "nv %d nt %d", (int)m.nv, (int)m.nt);
  DEM_CHECK("STL box is closed", TRY(DemTriMeshCheckClosed(&m, "box.stl")) == 0, "%s", DemLastError());
  CheckBox("STL box", &m, lo, L, s, 1e-12);

  /* faults */
  PetscCall(CopyMesh(&m, &c));
  c.nt = 11;
  ExpectError("open mesh refused", TRY(DemTriMeshCheckClosed(&c, "open")), "open surface");
  c.nt = 13;
  c.tri[36] = m.tri[0], c.tri[37] = m.tri[1];
  c.tri[38] = m.tri[2] == 3 ? 4 : 3; /* a third triangle on the first triangle's first edge */
  ExpectError("non-manifold mesh refused", TRY(DemTriMeshCheckClosed(&c, "nonmanifold")), "non-manifold edge");
  c.nt = 12;
  {
    PetscInt t = c.tri[1];
    c.tri[1] = c.tri[2], c.tri[2] = t;
  }
  ExpectError("flipped triangle refused", TRY(DemTriMeshCheckClosed(&c, "flipped")), "inconsistent orientation");
  DEM_CHECK("orient repairs one flipped triangle", TRY(DemTriMeshOrient(&c, &flipped)) == 0 && flipped == 1 && TRY(DemTriMeshCheckClosed(&c, "repaired")) == 0, "flipped %d: %s", (int)flipped, DemLastError());
  for (PetscInt t = 0; t < c.nt; t++) {
    PetscInt u = c.tri[3 * t + 1];
    c.tri[3 * t + 1] = c.tri[3 * t + 2], c.tri[3 * t + 2] = u;
  }
  ExpectError("inverted mesh refused", TRY(DemTriMeshCheckClosed(&c, "inverted")), "inverted surface");
  DEM_CHECK("orient repairs an inverted mesh", TRY(DemTriMeshOrient(&c, &flipped)) == 0 && flipped == 12 && TRY(DemTriMeshCheckClosed(&c, "repaired")) == 0, "flipped %d: %s", (int)flipped, DemLastError());
  PetscCall(DemTriMeshDestroy(&c));
  PetscCall(DemTriMeshDestroy(&m));
  ExpectError("missing file refused", TRY(DemTriMeshLoadFile("/nonexistent/part.stl", 1, &m)), "cannot read the file");
  ExpectError("unknown extension refused", TRY(DemTriMeshLoadFile(bad, 1, &m)), "unknown file type");
  /* fuzz finding (make fuzz, target stl): an STL whose only triangle is degenerate leaked the
     vertex arrays on the "no triangles" error; run from the repository root (tests/run.sh) */
  /* malformed ASCII STL: refused before Gmsh reads it (trimesh.c DemSTLCheck); the second made
     Gmsh's reader allocate without bound (fuzz_stl: out-of-memory in GModel::readSTL) */
  ExpectError("regression stl-degenerate-leak.stl: malformed, refused with its line", TRY(DemTriMeshLoadFile("tests/fuzz/regressions/stl-degenerate-leak.stl", 1, &m)), "line 2: malformed STL: expected 'normal', got 'normzl'");
  ExpectError("regression stl-malformed-oom.stl: refused before Gmsh reads it", TRY(DemTriMeshLoadFile("tests/fuzz/regressions/stl-malformed-oom.stl", 1, &m)), "line 2: malformed STL: expected a finite number, got 'q'");
  /* malformed .msh: refused before Gmsh reads it (trimesh.c DemMshCheck). The regression file
     (fuzz_stl, session 15) announces 3 nodes and lists 4, and its last triangle names node 4:
     Gmsh's reader crashed on it (SEGV in GModel::_associateEntityWithMeshVertices) */
  ExpectError("regression stl-msh-undeclared-node.msh: refused before Gmsh reads it", TRY(DemTriMeshLoadFile("tests/fuzz/regressions/stl-msh-undeclared-node.msh", 1, &m)), "line 9: malformed .msh: expected '$EndNodes', got '4'");
  {
    static const char *const cases[][2] = {
      {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n$Elements\n1\n1 2 2 1 1 1 2 4\n$EndElements\n", "line 12: malformed .msh: an element names node 4, which $Nodes does not list"},
      {"$MeshFormat\n2.2 1 8\n$EndMeshFormat\n", "a binary .msh file is not read"},
      {"$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", "MSH version 3 is not read (accepted: ASCII 2.x and 4.1)"},
      {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0 nan\n$EndNodes\n", "expected a node coordinate (a finite number), got 'nan'"},
      {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n1 1 0 0\n$EndNodes\n", "node tag 1 is listed twice"},
      {"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n$EndNodes\n$Elements\n1 1 1 1\n2 1 2 1\n1 1 2 9\n$EndElements\n", "an element names node 9, which $Nodes does not list"},
      {"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 1 3\n2 1 0 5\n", "expected the number of nodes of the block (at most the nodes left) (an integer from 0 to 3), got '5'"},
    };
    char bmsh[256];
    snprintf(bmsh, sizeof(bmsh), "%s/bad.msh", dir);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
      FILE *fp = fopen(bmsh, "w");
      char  name[96];
      if (fp) fputs(cases[c][0], fp), fclose(fp);
      snprintf(name, sizeof(name), "malformed .msh %d refused before Gmsh reads it", (int)c + 1);
      ExpectError(name, TRY(DemTriMeshLoadFile(bmsh, 1, &m)), cases[c][1]);
    }
    remove(bmsh);
  }
  /* a well-formed MSH 2.2 file (the fuzz corpus seed: a tetrahedron) passes the check and loads */
  DEM_CHECK("MSH 2.2 tetrahedron (tests/fuzz/corpus/stl/tetra.msh) loads: 4 triangles", TRY(DemTriMeshLoadFile("tests/fuzz/corpus/stl/tetra.msh", 1, &m)) == 0 && m.nt == 4, "%s", DemLastError());
  PetscCall(DemTriMeshDestroy(&m));

  /* OCC box -> STEP and .msh files -> read back */
  {
    DemOccSolid box = {DEM_OCC_BOX, {lo[0], lo[1], lo[2], L[0], L[1], L[2]}};
    int         ierr = 0;
    DEM_CHECK("OCC box", TRY(DemTriMeshFromOcc(1, &box, PETSC_FALSE, PETSC_FALSE, 0.1, s, &m)) == 0, "%s", DemLastError());
    DEM_CHECK("OCC box is closed", TRY(DemTriMeshCheckClosed(&m, "occ box")) == 0, "%s", DemLastError());
    CheckBox("OCC box", &m, lo, L, s, 1e-10);
    PetscCall(DemTriMeshDestroy(&m));
    gmshClear(&ierr);
    gmshModelOccAddBox(lo[0], lo[1], lo[2], L[0], L[1], L[2], -1, &ierr);
    gmshModelOccSynchronize(&ierr);
    gmshWrite(step, &ierr);
    gmshModelMeshGenerate(2, &ierr);
    gmshWrite(msh, &ierr);
    gmshClear(&ierr);
    DEM_CHECK("write STEP and msh with Gmsh", ierr == 0, "gmsh error %d", ierr);
    DEM_CHECK("load STEP box", TRY(DemTriMeshLoadFileSized(step, s, 0.2, &m)) == 0, "%s", DemLastError());
    DEM_CHECK("STEP box is closed", TRY(DemTriMeshCheckClosed(&m, "box.step")) == 0, "%s", DemLastError());
    CheckBox("STEP box", &m, lo, L, s, 1e-10);
    PetscCall(DemTriMeshDestroy(&m));
    DEM_CHECK("load msh box", TRY(DemTriMeshLoadFile(msh, s, &m)) == 0, "%s", DemLastError());
    CheckBox("msh box", &m, lo, L, s, 1e-10);
    PetscCall(DemTriMeshDestroy(&m));
  }
  /* OCC cylinder */
  {
    const double r = 0.2, h = 0.5;
    DemOccSolid  cyl = {DEM_OCC_CYLINDER, {0, 0, 0, 0, 0, h, r}};
    PetscReal    mass, com[3], J[9], V = M_PI * r * r * h, n = 16;
    DEM_CHECK("OCC cylinder", TRY(DemTriMeshFromOcc(1, &cyl, PETSC_FALSE, PETSC_FALSE, r / 8, 1, &m)) == 0, "%s", DemLastError());
    DEM_CHECK("OCC cylinder is closed", TRY(DemTriMeshCheckClosed(&m, "cylinder")) == 0, "%s", DemLastError());
    PetscCall(DemTriMeshMassProperties(&m, 1, &mass, com, J));
    DEM_CHECK("cylinder volume of an inscribed prism (>= 16 segments)", mass <= V && mass >= V * (1 - pow(2 * M_PI / n, 2) / 6), "V %g, exact %g", (double)mass, V);
    DEM_CHECK_REL("cylinder Izz = m r^2 / 2", J[8], mass * r * r / 2, 0.02);
    DEM_CHECK_ABS("cylinder com z = h/2 (to 1e-4 h: the two caps' circles may get different vertices)", com[2], h / 2, 1e-4 * h);
    PetscCall(DemTriMeshDestroy(&m));
  }
  /* funnel: cone + cylinder, fused, planar caps dropped -> open */
  {
    DemOccSolid sol[2] = {
      {DEM_OCC_CONE, {0, 0, 0, 0, 0, 0.1, 0.02, 0.1}},
      {DEM_OCC_CYLINDER, {0, 0, 0.1, 0, 0, 0.2, 0.1}}
    };
    PetscReal zmin = 1e9, zmax = -1e9;
    DEM_CHECK("OCC funnel", TRY(DemTriMeshFromOcc(2, sol, PETSC_TRUE, PETSC_TRUE, 0.02, 1, &m)) == 0, "%s", DemLastError());
    for (PetscInt i = 0; i < m.nv; i++) zmin = PetscMin(zmin, m.x[3 * i + 2]), zmax = PetscMax(zmax, m.x[3 * i + 2]);
    DEM_CHECK("funnel spans z in [0, 0.3]", fabs(zmin) < 1e-12 && fabs(zmax - 0.3) < 1e-12, "z in [%g, %g]", (double)zmin, (double)zmax);
    ExpectError("funnel is open", TRY(DemTriMeshCheckClosed(&m, "funnel")), "open surface");
    PetscCall(DemTriMeshDestroy(&m));
  }
  remove(stl), remove(step), remove(msh), remove(dir);
  PetscCall(PetscFinalize());
  return dem_test_failed;
}
