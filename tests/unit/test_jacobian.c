/*
  test_jacobian.c - the contact Jacobian blocks of src/core/jacobian.c against central finite
  differences of the forces (DemForcesCompute, an independent path), and the set-up checks of
  the variational integrator (src/integrators/variational.c).

  1. Two spheres pressed obliquely together and onto a plane wall, hooke (friction sticking,
     dashpots) and hertz_mindlin, plus a bonded pair (law bond, in tension). At a state with
     overlaps, zero linear velocities and small angular velocities (so vn = 0 and vt != 0 at
     every contact: the terms the Jacobian neglects, which scale with vn or |vt|, vanish to
     first order), J = K + C / tau (DemForcesJacobian with cstiff 1, cdamp 1/tau, tau the laws'
     time step) must equal -dF/du column by column, where a column perturbs a position by e and
     its velocity by e / tau (the tangential spring grows by v tau, the contract of
     jacobian.c), or an angular velocity by e / tau. Central differences, e = 1e-10 m.
     Tolerance: 1e-6 of the largest entry. Also: J symmetric; MATSBAIJ gives the same matrix.
  2. The dissipative split (DemForcesDissipative_Private) equals the forces' change when all
     velocities are set to zero with tau = 0 (dashpots are linear in the velocity).
  3. Set-up errors: a non-spherical particle shape (a shape kind registered here) under the
     variational integrator, alpha other than 0 or 0.5, an unknown jacobian choice.
*/
#include "demimpl.h"
#include "dem_test.h"
#include <string.h>
#include <unistd.h>

static char dir[256];

static void write_file(const char *name, const char *text, char path[], size_t len)
{
  FILE *fp;
  snprintf(path, len, "%s/%s", dir, name);
  fp = fopen(path, "w");
  if (fp) {
    fputs(text, fp);
    fclose(fp);
  }
}

static const char *yaml_fmt = "name: jac\n"
                              "gravity: [0, 0, -9.81]\n"
                              "materials:\n"
                              "  glass: {density: 2500, youngs_modulus: 1.0e8, poisson_ratio: 0.25, restitution: 0.6, friction: 100}\n"
                              "contact:\n"
                              "  - {pair: default, law: %s}\n"
                              "bonds: {threshold: 1.0e-4, params: {kn: 3.0e5, gamma_n: 40}}\n"
                              "shapes:\n"
                              "  bead: {type: sphere, radius: 0.005}\n"
                              "bodies:\n"
                              "  - shape: bead\n"
                              "    material: glass\n"
                              "    list:\n"
                              "      - {x: [0, 0, 0.00502]}\n"
                              "      - {x: [0.0102, 0.0012, 0.0052]}\n"
                              "      - {x: [0.02, 0.0, 0.0052]}\n"
                              "      - {x: [0.0300, 0.0, 0.0052]}\n"
                              "walls:\n"
                              "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: glass}\n"
                              "integrator: {type: variational, dt: 1.0e-6}\n"
                              "run: {steps: 1}\n";

/* forces at (x, v, w) with the laws' time step tau, into f, t */
static PetscErrorCode Forces(DemSim sim, PetscReal *x, PetscReal *v, PetscReal *w, PetscReal *q, PetscReal tau, PetscReal *f, PetscReal *t)
{
  DemState    st = {x, v, w, q};
  DemForceOut fo;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&fo, sizeof(fo)));
  fo.f    = f;
  fo.t    = t;
  sim->dt = tau;
  PetscCall(DemForcesCompute(sim, &st, PETSC_FALSE, PETSC_FALSE, &fo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestBlocks(const char *label, const char *law)
{
  char          text[4096], path[512], name[256];
  DemNode       root;
  DemSim        sim;
  DemBodyStore *bs;
  PetscInt      nb, nrows, *row;
  PetscReal    *x, *v, *w, *q, *f, *t, *fp, *tp, *fm, *tm, *fd, *td, *J, *Jfd, *Js;
  const PetscReal tau = 1e-6, e = 1e-10;
  Mat           A, As, D;

  PetscFunctionBegin;
  snprintf(text, sizeof(text), yaml_fmt, law);
  snprintf(name, sizeof(name), "jac_%s.yaml", label);
  write_file(name, text, path, sizeof(path));
  PetscCall(DemConfigLoad(path, &root));
  PetscCall(DemSimCreate(PETSC_COMM_WORLD, &sim));
  sim->out.quiet = PETSC_TRUE;
  PetscCall(DemSimSetFromConfig(sim, root));
  PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
  PetscCall(DemBondsSetUp_Private(sim)); /* bodies 2 and 3 touch: one bond */
  PetscCall(DemSimGetBodies(sim, &bs));
  nb = bs->n;
  snprintf(name, sizeof(name), "%s: bonds: one bonded pair (2, 3)", label);
  DEM_CHECK(name, sim->bonds && sim->bonds->n == 1 && sim->bonds->a[0] + sim->bonds->b[0] == 5, "%d bonds", sim->bonds ? (int)sim->bonds->n : -1);
  PetscCall(PetscMalloc1(nb, &row));
  PetscCall(DemJacobianNumbering_Private(sim, row, &nrows));
  snprintf(name, sizeof(name), "%s: numbering: 4 particles are unknowns, the wall is not", label);
  DEM_CHECK(name, nrows == 4 && row[4] == -1, "nrows %d", (int)nrows);
  PetscCall(PetscMalloc4(3 * nb, &x, 3 * nb, &v, 3 * nb, &w, 4 * nb, &q));
  PetscCall(PetscMalloc6(3 * nb, &f, 3 * nb, &t, 3 * nb, &fp, 3 * nb, &tp, 3 * nb, &fm, 3 * nb, &tm));
  PetscCall(PetscMalloc2(3 * nb, &fd, 3 * nb, &td));
  PetscCall(PetscArraycpy(x, bs->x, 3 * nb));
  PetscCall(PetscArraycpy(q, bs->q, 4 * nb));
  PetscCall(PetscArrayzero(v, 3 * nb));
  PetscCall(PetscArrayzero(w, 3 * nb));
  /* overlaps: sphere 0 into the wall, sphere 1 obliquely into sphere 0; the bond stretched */
  x[2]           = 0.00490;
  x[3 * 1 + 2]   = 0.00505;
  x[3 * 1 + 0]   = 0.00975;
  x[3 * 3 + 0]   = 0.03004;
  x[3 * 3 + 1]   = 0.00030;
  for (PetscInt i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) w[3 * i + j] = 1e-3 * (1 + i + 2 * j) * ((i + j) % 2 ? 1 : -1);
  PetscCall(Forces(sim, x, v, w, q, tau, f, t));
  snprintf(name, sizeof(name), "%s: state: contacts wall-0, 0-1 (oblique) and the bond 2-3 in tension", label);
  DEM_CHECK(name, sim->cl.n == 3, "%d contacts", (int)sim->cl.n);
  PetscCall(DemJacobianCreate_Private(sim, MATBAIJ, row, nrows, &A));
  PetscCall(DemJacobianCreate_Private(sim, MATSBAIJ, row, nrows, &As));
  PetscCall(MatZeroEntries(A));
  PetscCall(MatZeroEntries(As));
  PetscCall(DemForcesJacobian(sim, NULL, 1.0, 1.0 / tau, A));
  PetscCall(DemForcesJacobian(sim, NULL, 1.0, 1.0 / tau, As));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(As, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(As, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscMalloc3(36 * nrows * nrows, &J, 36 * nrows * nrows, &Jfd, 36 * nrows * nrows, &Js));
  PetscCall(MatConvert(A, MATDENSE, MAT_INITIAL_MATRIX, &D));
  for (PetscInt i = 0; i < 6 * nrows; i++)
    for (PetscInt j = 0; j < 6 * nrows; j++) PetscCall(MatGetValue(D, i, j, &J[i * 6 * nrows + j]));
  PetscCall(MatDestroy(&D));
  PetscCall(MatConvert(As, MATDENSE, MAT_INITIAL_MATRIX, &D));
  for (PetscInt i = 0; i < 6 * nrows; i++)
    for (PetscInt j = 0; j < 6 * nrows; j++) PetscCall(MatGetValue(D, i, j, &Js[i * 6 * nrows + j]));
  PetscCall(MatDestroy(&D));
  /* central differences, column by column */
  for (PetscInt b = 0; b < nb; b++) {
    if (row[b] < 0) continue;
    for (int j = 0; j < 6; j++) {
      PetscInt col = 6 * row[b] + j;
      for (int s = 0; s < 2; s++) {
        PetscReal sg = s ? -1 : 1;
        if (j < 3) {
          x[3 * b + j] += sg * e;
          v[3 * b + j] += sg * e / tau;
        } else w[3 * b + j - 3] += sg * e / tau;
        PetscCall(Forces(sim, x, v, w, q, tau, s ? fm : fp, s ? tm : tp));
        if (j < 3) {
          x[3 * b + j] -= sg * e;
          v[3 * b + j] -= sg * e / tau;
        } else w[3 * b + j - 3] -= sg * e / tau;
      }
      for (PetscInt a = 0; a < nb; a++) {
        if (row[a] < 0) continue;
        for (int k = 0; k < 3; k++) {
          Jfd[(6 * row[a] + k) * 6 * nrows + col]     = -(fp[3 * a + k] - fm[3 * a + k]) / (2 * e);
          Jfd[(6 * row[a] + 3 + k) * 6 * nrows + col] = -(tp[3 * a + k] - tm[3 * a + k]) / (2 * e);
        }
      }
    }
  }
  {
    PetscReal mx = 0, err = 0, asym = 0, serr = 0;
    PetscInt  wi = 0, n6 = 6 * nrows;
    for (PetscInt k = 0; k < n6 * n6; k++) mx = PetscMax(mx, PetscAbsReal(J[k]));
    for (PetscInt k = 0; k < n6 * n6; k++) {
      if (PetscAbsReal(J[k] - Jfd[k]) > err) err = PetscAbsReal(J[k] - Jfd[k]), wi = k;
      serr = PetscMax(serr, PetscAbsReal(J[k] - Js[k]));
    }
    for (PetscInt i = 0; i < n6; i++)
      for (PetscInt j = 0; j < n6; j++) asym = PetscMax(asym, PetscAbsReal(J[i * n6 + j] - J[j * n6 + i]));
    printf("# %s: max |J - J_fd| / max |J| = %.3e, max |J - J^T| / max |J| = %.3e, max |J| = %.3e\n", label, (double)(err / mx), (double)(asym / mx), (double)mx);
    snprintf(name, sizeof(name), "%s: J = K + C/tau equals -dF/du by central differences (%d x %d)", label, (int)n6, (int)n6);
    DEM_CHECK(name, err <= 1e-6 * mx, "max |J - J_fd| = %.3e at (%d, %d): J %.6e, J_fd %.6e; max |J| %.3e", (double)err, (int)(wi / n6), (int)(wi % n6), (double)J[wi], (double)Jfd[wi], (double)mx);
    snprintf(name, sizeof(name), "%s: J symmetric", label);
    DEM_CHECK(name, asym <= 1e-12 * mx, "max |J - J^T| = %.3e, max |J| %.3e", (double)asym, (double)mx);
    snprintf(name, sizeof(name), "%s: MATSBAIJ holds the same matrix as MATBAIJ", label);
    DEM_CHECK(name, serr <= 1e-14 * mx, "max difference %.3e", (double)serr);
  }
  /* the dissipative split: forces at zero velocity with tau = 0 lose exactly the dashpots */
  PetscCall(Forces(sim, x, v, w, q, 0, f, t));
  PetscCall(DemForcesDissipative_Private(sim, fd, td));
  {
    PetscReal *v0, *w0, err = 0, mx = 0;
    PetscCall(PetscCalloc2(3 * nb, &v0, 3 * nb, &w0));
    PetscCall(Forces(sim, x, v0, w0, q, 0, fp, tp));
    for (PetscInt k = 0; k < 3 * nb; k++) {
      if (row[k / 3] < 0) continue;
      err = PetscMax(err, PetscAbsReal(f[k] - fp[k] - fd[k]));
      err = PetscMax(err, 200 * PetscAbsReal(t[k] - tp[k] - td[k])); /* torques: per radius */
      mx  = PetscMax(mx, PetscAbsReal(fd[k]) + 200 * PetscAbsReal(td[k]));
    }
    snprintf(name, sizeof(name), "%s: dissipative split = F(v) - F(0)", label);
    DEM_CHECK(name, mx > 0 && err <= 1e-9 * mx, "max error %.3e, max dashpot force %.3e", (double)err, (double)mx);
    PetscCall(PetscFree2(v0, w0));
  }
  PetscCall(PetscFree3(J, Jfd, Js));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&As));
  PetscCall(PetscFree(row));
  PetscCall(PetscFree4(x, v, w, q));
  PetscCall(PetscFree6(f, t, fp, tp, fm, tm));
  PetscCall(PetscFree2(fd, td));
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  unlink(path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a non-spherical shape kind for the set-up check: a box with anisotropic inertia */
static PetscErrorCode TestBoxSetFromConfig(DemShape s, DemNode cfg)
{
  const char *const keys[] = {"type", NULL};
  PetscFunctionBegin;
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode TestBoxMass(DemShape s, PetscReal rho, PetscReal *m, PetscReal I[3])
{
  PetscFunctionBegin;
  *m   = rho * 1e-6;
  I[0] = 1e-10, I[1] = 2e-10, I[2] = 3e-10;
  PetscFunctionReturn(PETSC_SUCCESS);
}
static PetscErrorCode TestBoxRadius(DemShape s, PetscReal *r)
{
  PetscFunctionBegin;
  *r = 0.01;
  PetscFunctionReturn(PETSC_SUCCESS);
}
static DemShapeKind testbox_kind;
static PetscErrorCode TestBoxCreate(DemShape s)
{
  PetscFunctionBegin;
  s->kind                = testbox_kind;
  s->ops->setfromconfig  = TestBoxSetFromConfig;
  s->ops->massproperties = TestBoxMass;
  s->ops->boundingradius = TestBoxRadius;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExpectSetUpError(const char *tname, const char *text, const char *want)
{
  char           path[512];
  DemNode        root;
  DemSim         sim;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  write_file("err.yaml", text, path, sizeof(path));
  PetscCall(DemConfigLoad(path, &root));
  PetscCall(DemSimCreate(PETSC_COMM_WORLD, &sim));
  sim->out.quiet = PETSC_TRUE;
  DemSetLastError("%s", "");
  PetscCall(PetscPushErrorHandler(DemRecordErrorHandler, NULL));
  ierr = DemSimSetFromConfig(sim, root);
  if (!ierr) ierr = DemSimSetUp(sim);
  PetscCall(PetscPopErrorHandler());
  DEM_CHECK(tname, ierr && strstr(DemLastError(), want), "code %d, message '%s', expected to contain '%s'", (int)ierr, DemLastError(), want);
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  unlink(path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestSetUpErrors(void)
{
  const char *head = "gravity: [0, 0, 0]\n"
                     "materials: {glass: {density: 2500}}\n"
                     "contact: [{pair: default, law: hooke, params: {kn: 1.0e5}}]\n"
                     "shapes: {bead: {type: sphere, radius: 0.005}, box: {type: testbox}}\n";
  char        text[2048];

  PetscFunctionBegin;
  PetscCall(DemShapeKindRegister("testbox", &testbox_kind));
  PetscCall(DemShapeRegister("testbox", TestBoxCreate, "test_jacobian"));
  snprintf(text, sizeof(text), "%sbodies:\n  - {shape: bead, material: glass, list: [{x: [0, 0, 0]}]}\n  - {shape: box, material: glass, list: [{x: [0.1, 0, 0]}]}\nintegrator: {type: variational, dt: 1.0e-6}\nrun: {steps: 1}\n", head);
  PetscCall(ExpectSetUpError("variational refuses a non-spherical shape before step 0, at the body set", text, "err.yaml:7:5: bodies[1]: integrator variational handles spherical particles only"));
  snprintf(text, sizeof(text), "%sbodies:\n  - {shape: bead, material: glass, list: [{x: [0, 0, 0]}]}\nintegrator: {type: variational, dt: 1.0e-6, alpha: 0.3}\nrun: {steps: 1}\n", head);
  PetscCall(ExpectSetUpError("variational: alpha must be 0 or 0.5", text, "alpha must be 0 (first order) or 0.5 (second order, midpoint) (got 0.3)"));
  snprintf(text, sizeof(text), "%sbodies:\n  - {shape: bead, material: glass, list: [{x: [0, 0, 0]}]}\nintegrator: {type: variational, dt: 1.0e-6, jacobian: dense}\nrun: {steps: 1}\n", head);
  PetscCall(ExpectSetUpError("variational: jacobian must be baij, sbaij or matrix_free", text, "baij"));
  snprintf(text, sizeof(text), "%sbodies:\n  - {shape: bead, material: glass, list: [{x: [0, 0, 0]}]}\nbonds: {threshold: 0.01}\nintegrator: {type: variational, dt: 1.0e-6}\nrun: {steps: 1}\n", head);
  PetscCall(ExpectSetUpError("bonds: the bond law needs kn", text, "kn is required for law bond"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_jacobian.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  PetscCall(DemRegisterAll());
  PetscCall(TestBlocks("hooke", "hooke, params: {kn: 2.5e5, gamma_n: 300, gamma_t: 150, mu: 100}"));
  PetscCall(TestBlocks("hertz_mindlin", "hertz_mindlin"));
  PetscCall(TestSetUpErrors());
  rmdir(dir);
  PetscCall(PetscFinalize());
  return dem_test_failed;
}
