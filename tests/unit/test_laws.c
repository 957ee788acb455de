/*
  test_laws.c - unit test of the built-in contact laws (src/contact/hooke.c,
  src/contact/hertz_mindlin.c and the shared tangential spring of src/contact/friction.h).

  Laws are built by hand (struct and ops allocated here, constructor called directly), set up
  from `params:` mappings of a small YAML file written by this test (DemConfigLoad) or with no
  params (materials only), and evaluated on hand-built contact batches. Every expected value
  is computed here independently: the linear and Hertz force formulas of 003 eq. (20)-(21)
  and 001 eq. (19)-(23), (37)-(38), (50) written out again, a separate RK4 integration of the
  1-DOF spring-dashpot for the restitution, central finite differences of the energy, and
  the Coulomb limits mu_s fn / mu_d fn.
*/
#include "demimpl.h"
#include "dem_test.h"
#include <string.h>
#include <unistd.h>

#define NMAX 4
#define HS   6 /* history stride of the test batches: larger than the laws' 4, as when another law needs more */

/* a hand-built batch of up to NMAX contacts and its output columns */
typedef struct {
  PetscInt         a[NMAX], b[NMAX], hist[NMAX];
  int64_t          feature[NMAX];
  PetscReal        nrm[3 * NMAX], gap[NMAX], reff[NMAX], ra[3 * NMAX], rb[3 * NMAX], vrel[3 * NMAX], meff[NMAX];
  PetscReal        history[HS * NMAX];
  PetscReal        fn[NMAX], ft[3 * NMAX], dfn[NMAX], cn[NMAX], kt[NMAX], energy[NMAX], dissip[NMAX];
  int              slip[NMAX];
  DemContactBatch  batch;
  DemContactForces out;
  DemMaterialPair  mp;
} TB;

static void TBInit(TB *tb, PetscInt n, const DemMaterialPair *mp)
{
  memset(tb, 0, sizeof(*tb));
  for (PetscInt i = 0; i < NMAX; i++) {
    tb->a[i]    = 2 * i;
    tb->b[i]    = 2 * i + 1;
    tb->hist[i] = -1;
  }
  tb->mp                 = *mp;
  tb->batch.n            = n;
  tb->batch.a            = tb->a;
  tb->batch.b            = tb->b;
  tb->batch.hist         = tb->hist;
  tb->batch.feature      = tb->feature;
  tb->batch.nrm          = tb->nrm;
  tb->batch.gap          = tb->gap;
  tb->batch.reff         = tb->reff;
  tb->batch.ra           = tb->ra;
  tb->batch.rb           = tb->rb;
  tb->batch.vrel         = tb->vrel;
  tb->batch.meff         = tb->meff;
  tb->batch.history      = tb->history;
  tb->batch.histsize     = HS;
  tb->batch.mp           = &tb->mp;
  tb->out.fn             = tb->fn;
  tb->out.ft             = tb->ft;
  tb->out.dfn_dgap       = tb->dfn;
  tb->out.cn             = tb->cn;
  tb->out.kt             = tb->kt;
  tb->out.energy         = tb->energy;
  tb->out.dissip         = tb->dissip;
  tb->out.slip           = tb->slip;
}

static void TBSet(TB *tb, PetscInt i, const PetscReal n[3], PetscReal gap, const PetscReal v[3], PetscReal meff, PetscReal reff, PetscInt hist)
{
  PetscReal l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);

  for (int k = 0; k < 3; k++) {
    tb->nrm[3 * i + k]  = n[k] / l;
    tb->vrel[3 * i + k] = v[k];
  }
  tb->gap[i]  = gap;
  tb->meff[i] = meff;
  tb->reff[i] = reff;
  tb->hist[i] = hist;
}

static double Dot(const PetscReal *a, const PetscReal *b)
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double Norm(const PetscReal *a)
{
  return sqrt(Dot(a, a));
}

static PetscErrorCode LawNew(DemContactLawCreateFn create, DemContactLaw *law)
{
  PetscFunctionBegin;
  PetscCall(PetscNew(law));
  PetscCall(PetscNew(&(*law)->ops));
  (*law)->classname = "DemContactLaw";
  (*law)->comm      = PETSC_COMM_SELF;
  PetscCall(create(*law));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LawFree(DemContactLaw *law)
{
  PetscFunctionBegin;
  if (!*law) PetscFunctionReturn(PETSC_SUCCESS);
  if ((*law)->ops->destroy) PetscCall((*(*law)->ops->destroy)(*law));
  PetscCall(PetscFree((*law)->data));
  PetscCall(PetscFree((*law)->ops));
  PetscCall(PetscFree(*law));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LawSetUp(DemContactLawCreateFn create, DemNode root, const char key[], const DemMaterialPair *mp, DemContactLaw *law)
{
  DemNode cfg = NULL;

  PetscFunctionBegin;
  if (key) {
    PetscCall(DemNodeGet(root, key, &cfg));
    PetscCheck(cfg, PETSC_COMM_SELF, PETSC_ERR_PLIB, "test yaml has no %s", key);
  }
  PetscCall(LawNew(create, law));
  PetscCall((*(*law)->ops->setfromconfig)(*law, cfg, mp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* setfromconfig must fail, with a message containing `expect` (and `where` when given) */
static PetscErrorCode ExpectError(const char name[], DemContactLawCreateFn create, DemNode root, const char key[], const DemMaterialPair *mp, const char expect[], const char where[])
{
  DemContactLaw  law;
  DemNode        cfg = NULL;
  PetscErrorCode ierr;
  const char    *text;
  char          *specific = NULL;
  const char    *last;
  int            found;

  PetscFunctionBegin;
  if (key) {
    PetscCall(DemNodeGet(root, key, &cfg));
    PetscCheck(cfg, PETSC_COMM_SELF, PETSC_ERR_PLIB, "test yaml has no %s", key);
  }
  PetscCall(LawNew(create, &law));
  DemSetLastError("%s", "");
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = (*law->ops->setfromconfig)(law, cfg, mp);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscErrorMessage(ierr, &text, &specific));
  last  = DemLastError();
  found = (specific && strstr(specific, expect)) || (last && strstr(last, expect));
  if (found && where) found = (specific && strstr(specific, where) && strstr(specific, expect)) || (last && strstr(last, where) && strstr(last, expect));
  DEM_CHECK(name, ierr != 0 && found, "ierr %d, message '%s' / last error '%s' lacks '%s'%s%s", (int)ierr, specific ? specific : "", last ? last : "", expect, where ? " at " : "", where ? where : "");
  PetscCall(LawFree(&law));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* restitution of the 1-DOF oscillator m x'' = -k x - c x' started at x = 0, x' = v0 > 0,
   integrated by classical RK4 until x returns to 0 (the last step is shortened by Newton so
   that it ends on x = 0). This is the linear law's collision, written independently. */
static void Rk4Step(double k, double c, double m, double h, const double y[2], double out[2])
{
  double k1x = y[1], k1v = (-k * y[0] - c * y[1]) / m;
  double x2 = y[0] + 0.5 * h * k1x, v2 = y[1] + 0.5 * h * k1v;
  double k2x = v2, k2v = (-k * x2 - c * v2) / m;
  double x3 = y[0] + 0.5 * h * k2x, v3 = y[1] + 0.5 * h * k2v;
  double k3x = v3, k3v = (-k * x3 - c * v3) / m;
  double x4 = y[0] + h * k3x, v4 = y[1] + h * k3v;
  double k4x = v4, k4v = (-k * x4 - c * v4) / m;

  out[0] = y[0] + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
  out[1] = y[1] + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
}

static double Rk4Restitution(double k, double c, double m, double v0)
{
  double y[2] = {0, v0}, yn[2], h = PETSC_PI * sqrt(m / k) / 4000, s;

  for (long it = 0; it < 100000000L; it++) {
    Rk4Step(k, c, m, h, y, yn);
    if (it > 0 && yn[0] <= 0) {
      s = h * y[0] / (y[0] - yn[0]);
      for (int j = 0; j < 4; j++) {
        Rk4Step(k, c, m, s, y, yn);
        s -= yn[0] / yn[1];
      }
      Rk4Step(k, c, m, s, y, yn);
      return -yn[1] / v0;
    }
    y[0] = yn[0];
    y[1] = yn[1];
  }
  return -1;
}

static const char *yaml_text = "# test_laws.c params\n"                                                   /* 1 */
                               "hooke_e: {kn: 1.0e5, restitution: 0.7, mu_s: 0.5, mu_d: 0.3}\n"          /* 2 */
                               "hooke_g: {kn: 2.0e5, kt: 5.0e4, gamma_n: 30, gamma_t: 10, mu: 0.4}\n"    /* 3 */
                               "hooke_mat: {kn: 1.0e5}\n"                                                /* 4 */
                               "hooke_e1: {kn: 3.0e4, restitution: 1}\n"                                 /* 5 */
                               "hooke_e01: {kn: 3.0e4, restitution: 0.1}\n"                              /* 6 */
                               "hertz_p: {youngs_modulus: 1.0e8, poisson_ratio: 0.3, restitution: 0.8, friction: 0.6}\n" /* 7 */
                               "bad_kn:\n"                                                               /* 8 */
                               "  kn: -1\n"                                                              /* 9 */
                               "bad_e: {kn: 1, restitution: 1.5}\n"                                      /* 10 */
                               "bad_key: {kn: 1, foo: 2}\n"                                              /* 11 */
                               "both_damp: {kn: 1, gamma_n: 1, restitution: 0.5}\n"                      /* 12 */
                               "bad_mu: {kn: 1, mu_s: 0.2, mu_d: 0.3}\n"                                 /* 13 */
                               "both_mu: {kn: 1, mu: 0.2, mu_s: 0.3}\n"                                  /* 14 */
                               "no_kn: {kt: 1}\n"                                                        /* 15 */
                               "hertz_key: {kn: 1}\n"                                                    /* 16 */
                               "hertz_nu: {poisson_ratio: 0.6}\n"                                        /* 17 */
                               "neg_gamma: {kn: 1, gamma_n: -2}\n";                                      /* 18 */

int main(int argc, char **argv)
{
  DemMaterial     glass = {"glass", 2500, 7.0e10, 0.22, 0.6, 0.6, 0.4};
  DemMaterial     steel = {"steel", 7800, 2.0e11, 0.30, 0.8, 0.4, 0.2};
  DemMaterial     soft  = {"soft", 1000, 0.0, 0.30, 0.5, 0.3, 0.3};
  DemMaterialPair gs = {&glass, &steel}, gg = {&glass, &glass}, bad = {&glass, &soft};
  DemNode         root = NULL;
  DemContactLaw   law  = NULL;
  TB              tb;
  char            file[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 16];
  FILE           *fp;
  const PetscReal ez[3] = {0, 0, 1}, zero[3] = {0, 0, 0};
  const double    dt = 1e-5;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscSNPrintf(file, sizeof(file), "/tmp/mmdem_test_laws_%d.yaml", (int)getpid()));
  fp = fopen(file, "w");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", file);
  fputs(yaml_text, fp);
  fclose(fp);
  PetscCall(DemConfigLoad(file, &root));

  /* ---- constructors ---- */
  PetscCall(LawNew(DemContactLawCreate_Hooke, &law));
  DEM_CHECK("hooke: constructor sets histsize 4, activation 0 and all ops", law->histsize == 4 && law->activation == 0 && law->data && law->ops->setfromconfig && law->ops->compute && law->ops->criticaldt && law->ops->destroy, "histsize %d activation %g", (int)law->histsize, (double)law->activation);
  PetscCall(LawFree(&law));
  PetscCall(LawNew(DemContactLawCreate_HertzMindlin, &law));
  DEM_CHECK("hertz_mindlin: constructor sets histsize 4, activation 0 and all ops", law->histsize == 4 && law->activation == 0 && law->data && law->ops->setfromconfig && law->ops->compute && law->ops->criticaldt && law->ops->destroy, "histsize %d activation %g", (int)law->histsize, (double)law->activation);
  PetscCall(LawFree(&law));

  /* ---- hooke, explicit gamma_n/gamma_t: normal force, damping, stick tangential, batch indexing ---- */
  {
    const double kn = 2.0e5, kt = 5.0e4, gn = 30, gt = 10, mu = 0.4;
    const double d[3] = {1e-3, 2e-4, 5e-4}, m[3] = {0.01, 0.02, 0.005};
    PetscReal    nv[3][3] = {{0, 0, 1}, {1, 1, 0}, {-0.3, 0.5, 0.8}}, vv[3][3] = {{0, 0, -0.5}, {0.01, -0.02, 0.003}, {0, 0, 0}};
    int          ok = 1;
    char         name[128];

    PetscCall(LawSetUp(DemContactLawCreate_Hooke, root, "hooke_g", &gs, &law));
    DEM_CHECK("hooke: setfromconfig stores the material pair", law->mp.a == &glass && law->mp.b == &steel, "mp not stored");
    TBInit(&tb, 3, &gs);
    for (int i = 0; i < 3; i++) TBSet(&tb, i, nv[i], -d[i], vv[i], m[i], 1e-3, -1);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    for (int i = 0; i < 3; i++) {
      const PetscReal *n  = tb.nrm + 3 * i, *v = tb.vrel + 3 * i;
      double           vn = Dot(v, n), vt[3], ref[3];

      for (int k = 0; k < 3; k++) vt[k] = v[k] - vn * n[k];
      /* 003 eq. (20)-(21) with a fresh spring s = vt dt */
      for (int k = 0; k < 3; k++) ref[k] = -kt * vt[k] * dt - m[i] * gt * vt[k];
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke: fn = kn delta - m gamma_n vn (contact %d of a batch of 3)", i));
      DEM_CHECK_REL(name, tb.fn[i], kn * d[i] - m[i] * gn * vn, 1e-13);
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke: cn = m gamma_n, dfn_dgap = -kn, kt (contact %d)", i));
      DEM_CHECK(name, fabs(tb.cn[i] - m[i] * gn) <= 1e-14 * m[i] * gn && tb.dfn[i] == -kn && tb.kt[i] == kt, "cn %g dfn %g kt %g", tb.cn[i], tb.dfn[i], tb.kt[i]);
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke: sticking ft = -kt vt dt - m gamma_t vt (contact %d)", i));
      DEM_CHECK(name, fabs(tb.ft[3 * i] - ref[0]) + fabs(tb.ft[3 * i + 1] - ref[1]) + fabs(tb.ft[3 * i + 2] - ref[2]) <= 1e-13 * (Norm(ref) + 1e-300) + 1e-300 && !tb.slip[i], "ft (%g %g %g) vs (%g %g %g) slip %d", tb.ft[3 * i], tb.ft[3 * i + 1], tb.ft[3 * i + 2], ref[0], ref[1], ref[2], tb.slip[i]);
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke: energy 0.5 kn delta^2 + 0.5 kt |s|^2 (contact %d)", i));
      DEM_CHECK_REL(name, tb.energy[i], 0.5 * kn * d[i] * d[i] + 0.5 * kt * Dot(vt, vt) * dt * dt, 1e-13);
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke: dissipation power cn vn^2 + ct |vt|^2 (contact %d)", i));
      DEM_CHECK_REL(name, tb.dissip[i], m[i] * gn * vn * vn + m[i] * gt * Dot(vt, vt), 1e-13);
      if (tb.history[0] != 0) ok = 0;
    }
    DEM_CHECK("hooke: hist = -1 stores nothing", ok, "history written");
    {
      PetscReal tc, w2 = kn / 0.01;
      PetscCall((*law->ops->criticaldt)(law, 0.01, 1e-3, 1.0, &tc));
      DEM_CHECK_REL("hooke: criticaldt = pi / sqrt(kn/m - (gamma_n/2)^2)", tc, PETSC_PI / sqrt(w2 - 0.25 * gn * gn), 1e-14);
    }
    /* Coulomb cap with mu (mu_s = mu_d = mu) and a slot in the history */
    TBInit(&tb, 1, &gs);
    {
      PetscReal v[3] = {3, 4, -1}; /* vn = -1; trial |ft| = (kt dt + m gamma_t) |vt| = 3 > mu fn */
      double    fn, vt[3] = {3, 4, 0};
      TBSet(&tb, 0, ez, -1e-5, v, 0.01, 1e-3, 1);
      PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
      fn = kn * 1e-5 + 0.01 * gn;
      DEM_CHECK_REL("hooke: mu sets the static limit |ft| = mu fn", Norm(tb.ft), mu * fn, 1e-13);
      DEM_CHECK("hooke: ft at the limit opposes vt and lies in the tangent plane", tb.slip[0] == 1 && fabs(Dot(tb.ft, vt) / (Norm(tb.ft) * Norm(vt)) + 1) < 1e-13 && tb.ft[2] == 0, "slip %d cos %g ft_z %g", tb.slip[0], Dot(tb.ft, vt) / (Norm(tb.ft) * Norm(vt)), tb.ft[2]);
      PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
      DEM_CHECK_REL("hooke: mu sets the dynamic limit |ft| = mu fn", Norm(tb.ft), mu * fn, 1e-13);
    }
    PetscCall(LawFree(&law));
  }

  /* ---- hooke, restitution: derived gamma_n reproduces e in an independent RK4 collision ---- */
  {
    struct {
      const char *key;
      double      kn, e, m;
    } cs[] = {
      {"hooke_e",   1.0e5, 0.7, 0.01 },
      {"hooke_e",   1.0e5, 0.7, 3.7  },
      {"hooke_e01", 3.0e4, 0.1, 0.02 },
      {"hooke_e1",  3.0e4, 1.0, 0.02 },
      {"hooke_mat", 1.0e5, 0.7, 0.05 }, /* restitution mixed from the materials: (0.6 + 0.8) / 2 */
    };
    char name[160];

    for (size_t c = 0; c < sizeof(cs) / sizeof(cs[0]); c++) {
      PetscReal v[3] = {0, 0, -1}, tc;
      double    l = log(cs[c].e), zeta = -l / sqrt(PETSC_PI * PETSC_PI + l * l), erk, wd;

      PetscCall(LawSetUp(DemContactLawCreate_Hooke, root, cs[c].key, &gs, &law));
      TBInit(&tb, 1, &gs);
      TBSet(&tb, 0, ez, -1e-4, v, cs[c].m, 1e-3, -1);
      PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_FALSE, &tb.out));
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke %s, m %g: gamma_n = 2 zeta sqrt(kn/m)", cs[c].key, cs[c].m));
      DEM_CHECK_ABS(name, tb.cn[0] / cs[c].m, 2 * zeta * sqrt(cs[c].kn / cs[c].m), 1e-10 * sqrt(cs[c].kn / cs[c].m));
      erk = Rk4Restitution(cs[c].kn, tb.cn[0], cs[c].m, 0.3);
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke %s, m %g: RK4 spring-dashpot collision rebounds with e = %g", cs[c].key, cs[c].m, cs[c].e));
      DEM_CHECK_ABS(name, erk, cs[c].e, 1e-6);
      PetscCall((*law->ops->criticaldt)(law, cs[c].m, 1e-3, 1.0, &tc));
      wd = sqrt(cs[c].kn / cs[c].m) * sqrt(1 - zeta * zeta);
      PetscCall(PetscSNPrintf(name, sizeof(name), "hooke %s, m %g: criticaldt = damped half period with gamma_n for that m", cs[c].key, cs[c].m));
      DEM_CHECK_REL(name, tc, PETSC_PI / wd, 1e-12);
      PetscCall(LawFree(&law));
    }
  }

  /* ---- hooke: defaults kt = 2/7 kn, gamma_t = gamma_n / 2; static then dynamic Coulomb cap,
          return to stick, commit=false, gap >= 0 ---- */
  {
    const double kn = 1.0e5, kt = 2.0 / 7.0 * kn, m = 0.01, delta = 1e-3, mu_s = 0.5, mu_d = 0.3;
    const double l = log(0.7), zeta = -l / sqrt(PETSC_PI * PETSC_PI + l * l), gn = 2 * zeta * sqrt(kn / m), ct = 0.5 * m * gn;
    const double fn = kn * delta; /* vn = 0 */
    PetscReal    v[3] = {0, 20, 0}, save[HS * NMAX], s_old[3], s_trial[3], s_new[3];
    double       ref_dissip;

    PetscCall(LawSetUp(DemContactLawCreate_Hooke, root, "hooke_e", &gs, &law));
    TBInit(&tb, 1, &gs);
    TBSet(&tb, 0, ez, -delta, v, m, 1e-3, 2);
    for (int k = 0; k < HS * NMAX; k++) tb.history[k] = 0;
    tb.history[HS * 2 + 4] = 123.0; /* beyond the law's 4 reals: never touched */
    tb.history[HS * 2 + 5] = -7.0;
    PetscCall(PetscArraycpy(save, tb.history, HS * NMAX));
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_FALSE, &tb.out));
    DEM_CHECK("hooke: default kt = 2/7 kn", fabs(tb.kt[0] - kt) <= 1e-15 * kt, "kt %g vs %g", tb.kt[0], kt);
    DEM_CHECK_REL("hooke: a sticking contact is capped at the static limit mu_s fn", Norm(tb.ft), mu_s * fn, 1e-13);
    DEM_CHECK("hooke: commit=false leaves the history untouched (slipping evaluation)", memcmp(save, tb.history, sizeof(save)) == 0 && tb.slip[0] == 1, "history changed or slip %d", tb.slip[0]);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK_REL("hooke: first slipping step: |ft| = mu_s fn", Norm(tb.ft), mu_s * fn, 1e-13);
    /* return mapping at the limit (friction.h): the trial force -kt s_trial - ct vt, s_trial = vt dt, is
       scaled by c = mu_s fn / |trial|, and so is the spring: s = c vt dt = mu_s fn dt / (kt dt + ct)
       (001 eq. (35)-(36) when ct = 0); never stretched beyond the trial */
    DEM_CHECK_REL("hooke: spring at the limit scaled with the force, s = c s_trial = mu_s fn dt / (kt dt + ct)", tb.history[HS * 2 + 1], mu_s * fn * dt / (kt * dt + ct), 1e-12);
    DEM_CHECK("hooke: slip flag committed, extra history reals untouched", tb.history[HS * 2 + 3] == 1 && tb.history[HS * 2] == 0 && tb.history[HS * 2 + 2] == 0 && tb.history[HS * 2 + 4] == 123.0 && tb.history[HS * 2 + 5] == -7.0, "history %g %g %g %g %g %g", tb.history[12], tb.history[13], tb.history[14], tb.history[15], tb.history[16], tb.history[17]);
    /* second step while sliding: dynamic limit; dissipation includes the return mapping */
    for (int k = 0; k < 3; k++) s_old[k] = tb.history[HS * 2 + k], s_trial[k] = s_old[k] + v[k] * dt;
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK_REL("hooke: sliding contact is capped at the dynamic limit mu_d fn", Norm(tb.ft), mu_d * fn, 1e-13);
    DEM_CHECK("hooke: sliding ft = -mu_d fn vt/|vt|", tb.slip[0] == 1 && fabs(tb.ft[1] + mu_d * fn) < 1e-12 * fn && tb.ft[0] == 0 && tb.ft[2] == 0, "ft (%g %g %g) slip %d", tb.ft[0], tb.ft[1], tb.ft[2], tb.slip[0]);
    {
      const double c = mu_d * fn / (kt * s_trial[1] + ct * v[1]); /* trial force along -y */
      for (int k = 0; k < 3; k++) s_new[k] = c * s_trial[k];
      DEM_CHECK_REL("hooke: sliding spring committed as c s_trial, c = mu_d fn / |-kt s_trial - ct vt|", tb.history[HS * 2 + 1], s_new[1], 1e-12);
      /* the dashpot part c ct |vt|^2, plus the spring work 0.5 kt (s_old + s).(s_trial - s_old) minus
         the stored 0.5 kt (|s|^2 - |s_old|^2) */
      ref_dissip = c * ct * Dot(v, v);
      for (int k = 0; k < 3; k++) ref_dissip += 0.5 * kt * (s_old[k] + s_new[k]) * (s_trial[k] - s_new[k]) / dt;
    }
    DEM_CHECK_REL("hooke: dissipation power = dashpot + return-mapping rate 0.5 kt (s_old + s).(s_trial - s)/dt", tb.dissip[0], ref_dissip, 1e-12);
    DEM_CHECK("hooke: dissipation power at the limit is positive (no energy from the return mapping)", tb.dissip[0] > 0, "dissip %g", tb.dissip[0]);
    DEM_CHECK_REL("hooke: energy at the limit = 0.5 kn delta^2 + 0.5 kt |s|^2", tb.energy[0], 0.5 * kn * delta * delta + 0.5 * kt * Dot(s_new, s_new), 1e-12);
    /* a tangential velocity that unloads the spring to zero force: back to sticking */
    {
      double sy = tb.history[HS * 2 + 1];
      v[1] = -kt * sy / (kt * dt + ct); /* -kt (sy + v dt) - ct v = 0 */
      TBSet(&tb, 0, ez, -delta, v, m, 1e-3, 2);
      PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
      DEM_CHECK("hooke: a sliding contact whose force falls below mu_d fn sticks again", tb.slip[0] == 0 && tb.history[HS * 2 + 3] == 0 && Norm(tb.ft) < 1e-9 * fn, "slip %d flag %g |ft| %g", tb.slip[0], tb.history[HS * 2 + 3], Norm(tb.ft));
      DEM_CHECK_REL("hooke: sticking spring s + vt dt committed", tb.history[HS * 2 + 1], sy + v[1] * dt, 1e-12);
    }
    /* gap >= 0: zero outputs; the history is zeroed only on commit */
    TBSet(&tb, 0, ez, 1e-4, v, m, 1e-3, 2);
    PetscCall(PetscArraycpy(save, tb.history, HS * NMAX));
    tb.fn[0] = tb.ft[0] = tb.ft[1] = tb.ft[2] = tb.energy[0] = tb.dissip[0] = tb.cn[0] = tb.kt[0] = tb.dfn[0] = 99;
    tb.slip[0] = 1;
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_FALSE, &tb.out));
    DEM_CHECK("hooke: gap >= 0 gives zero outputs", tb.fn[0] == 0 && tb.ft[0] == 0 && tb.ft[1] == 0 && tb.ft[2] == 0 && tb.energy[0] == 0 && tb.dissip[0] == 0 && tb.cn[0] == 0 && tb.kt[0] == 0 && tb.dfn[0] == 0 && tb.slip[0] == 0, "outputs not zero");
    DEM_CHECK("hooke: gap >= 0 with commit=false keeps the history", memcmp(save, tb.history, sizeof(save)) == 0, "history changed");
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK("hooke: gap >= 0 with commit zeroes the law's history reals", tb.history[12] == 0 && tb.history[13] == 0 && tb.history[14] == 0 && tb.history[15] == 0 && tb.history[16] == 123.0, "history %g %g %g %g", tb.history[12], tb.history[13], tb.history[14], tb.history[15]);
    PetscCall(LawFree(&law));
  }

  /* ---- hooke: the spring is rotated into the new tangent plane keeping its magnitude ---- */
  {
    const double kn = 1.0e5, kt = 2.0 / 7.0 * kn, delta = 1e-3, a = 0.3, s0 = 2e-5;
    PetscReal    n[3] = {sin(a), 0, cos(a)}, ref[3];

    PetscCall(LawSetUp(DemContactLawCreate_Hooke, root, "hooke_e", &gs, &law));
    TBInit(&tb, 1, &gs);
    TBSet(&tb, 0, n, -delta, zero, 0.01, 1e-3, 0);
    tb.history[0] = s0; /* committed in the plane normal to z */
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    ref[0] = -kt * s0 * cos(a);
    ref[1] = 0;
    ref[2] = kt * s0 * sin(a);
    DEM_CHECK_REL("hooke: rotated spring force |ft| = kt |s|", Norm(tb.ft), kt * s0, 1e-13);
    DEM_CHECK("hooke: rotated spring force is tangent and along the rotated s", fabs(Dot(tb.ft, tb.nrm)) < 1e-13 * kt * s0 && fabs(tb.ft[0] - ref[0]) + fabs(tb.ft[1]) + fabs(tb.ft[2] - ref[2]) < 1e-13 * kt * s0 && !tb.slip[0], "ft (%g %g %g) vs (%g %g %g)", tb.ft[0], tb.ft[1], tb.ft[2], ref[0], ref[1], ref[2]);
    DEM_CHECK("hooke: committed spring keeps its magnitude and lies in the new plane", fabs(Norm(tb.history) - s0) < 1e-14 * s0 && fabs(Dot(tb.history, tb.nrm)) < 1e-15 * s0, "|s| %g s.n %g", Norm(tb.history), Dot(tb.history, tb.nrm));
    DEM_CHECK_REL("hooke: energy keeps the tangential spring energy 0.5 kt |s|^2", tb.energy[0], 0.5 * kn * delta * delta + 0.5 * kt * s0 * s0, 1e-13);
    PetscCall(LawFree(&law));
  }

  /* ---- hooke: friction and restitution mixed from the materials (arithmetic mean) ---- */
  {
    const double kn = 1.0e5, delta = 1e-3, fn = kn * delta;
    PetscReal    v[3] = {0, 50, 0};

    PetscCall(LawSetUp(DemContactLawCreate_Hooke, root, "hooke_mat", &gs, &law));
    TBInit(&tb, 1, &gs);
    TBSet(&tb, 0, ez, -delta, v, 0.01, 1e-3, 0);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK_REL("hooke mixing: static limit with mu_s = (0.6 + 0.4)/2", Norm(tb.ft), 0.5 * fn, 1e-13);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK_REL("hooke mixing: dynamic limit with mu_d = (0.4 + 0.2)/2", Norm(tb.ft), 0.3 * fn, 1e-13);
    PetscCall(LawFree(&law));
  }

  /* ---- hertz_mindlin from the materials (no params) ---- */
  {
    const double E1 = glass.E, E2 = steel.E, n1 = glass.nu, n2 = steel.nu;
    const double Es = E1 * E2 / (E2 * (1 - n1 * n1) + E1 * (1 - n2 * n2)); /* 001 eq. (20) */
    const double G1 = E1 / (2 * (1 + n1)), G2 = E2 / (2 * (1 + n2)), Gs = G1 * G2 / (G1 + G2); /* eq. (38) */
    const double R = 5e-3, m = 0.01, delta = 1e-5, e = 0.7;
    const double xi = fabs(log(e)) / sqrt(PETSC_PI * PETSC_PI + log(e) * log(e));
    const double fe = 4.0 / 3.0 * Es * sqrt(R) * pow(delta, 1.5);
    const double dstar = 2 * xi * sqrt(2 * sqrt(R) * Es * m) * pow(delta, 0.25); /* eq. (22) */
    const double ktr = 8 * Gs * sqrt(R) * sqrt(delta);                            /* eq. (37) */
    PetscReal    v[3] = {0.02, 0, -0.4}, tc;
    double       Ep, Em, h = 1e-4 * delta;

    PetscCall(LawSetUp(DemContactLawCreate_HertzMindlin, NULL, NULL, &gs, &law));
    TBInit(&tb, 2, &gs);
    TBSet(&tb, 0, ez, -delta, zero, m, R, -1);
    TBSet(&tb, 1, ez, -delta, v, m, R, 1);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK_REL("hertz: f = 4/3 E* sqrt(R) delta^1.5 with E* of eq. (20)", tb.fn[0], fe, 1e-13);
    DEM_CHECK_REL("hertz: energy 8/15 E* sqrt(R) delta^2.5", tb.energy[0], 8.0 / 15.0 * Es * sqrt(R) * pow(delta, 2.5), 1e-13);
    DEM_CHECK_REL("hertz: damping d* of eq. (22) with xi from e = (0.6+0.8)/2", tb.cn[0], dstar, 1e-13);
    DEM_CHECK_REL("hertz: fn = f_elastic - d* vn", tb.fn[1], fe + dstar * 0.4, 1e-13);
    DEM_CHECK_REL("hertz: kt = 8 G* sqrt(R) delta^0.5 (eq. (37), G* of eq. (38))", tb.kt[0], ktr, 1e-13);
    DEM_CHECK_REL("hertz: tangential ft = -kt vt dt - 2 xi sqrt(m kt) vt", tb.ft[3], -ktr * 0.02 * dt - 2 * xi * sqrt(m * ktr) * 0.02, 1e-13);
    DEM_CHECK_REL("hertz: dissipation power d* vn^2 + ct vt^2", tb.dissip[1], dstar * 0.16 + 2 * xi * sqrt(m * ktr) * 0.02 * 0.02, 1e-13);
    DEM_CHECK("hertz: committed spring s = vt dt in slot 1", tb.history[HS] == 0.02 * dt && tb.history[HS + 3] == 0, "s %g flag %g", tb.history[HS], tb.history[HS + 3]);
    /* central differences of the energy and of the force in delta */
    TBInit(&tb, 2, &gs);
    TBSet(&tb, 0, ez, -(delta + h), zero, m, R, -1);
    TBSet(&tb, 1, ez, -(delta - h), zero, m, R, -1);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_FALSE, &tb.out));
    Ep = tb.energy[0];
    Em = tb.energy[1];
    DEM_CHECK_REL("hertz: dE/d delta (central difference) = f_elastic", (Ep - Em) / (2 * h), fe, 1e-6);
    DEM_CHECK_REL("hertz: -d f/d delta (central difference) = dfn_dgap", -(tb.fn[0] - tb.fn[1]) / (2 * h), -2 * Es * sqrt(R) * sqrt(delta), 1e-6);
    TBInit(&tb, 1, &gs);
    TBSet(&tb, 0, ez, -delta, zero, m, R, -1);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_FALSE, &tb.out));
    DEM_CHECK_REL("hertz: dfn_dgap = -2 E* sqrt(R) delta^0.5", tb.dfn[0], -2 * Es * sqrt(R) * sqrt(delta), 1e-13);
    PetscCall((*law->ops->criticaldt)(law, m, R, 1.5, &tc));
    DEM_CHECK_REL("hertz: criticaldt = 2.87 (m^2 / (R E*^2 v))^(1/5) (eq. (50))", tc, 2.87 * pow(m * m / (R * Es * Es * 1.5), 0.2), 1e-13);
    PetscCall((*law->ops->criticaldt)(law, m, R, 0.0, &tc));
    DEM_CHECK("hertz: criticaldt at v_rel = 0 is finite and positive", tc > 0 && tc < 1e300, "tc %g", tc);
    PetscCall(LawFree(&law));
  }

  /* ---- hertz_mindlin with params overriding the materials ---- */
  {
    const double E = 1.0e8, nu = 0.3, Es = E / (2 * (1 - nu * nu)), Gs = E / (2 * (1 + nu)) / 2;
    const double R = 2e-3, m = 0.004, delta = 2e-5, e = 0.8, xi = fabs(log(e)) / sqrt(PETSC_PI * PETSC_PI + log(e) * log(e));
    const double fe = 4.0 / 3.0 * Es * sqrt(R) * pow(delta, 1.5);
    PetscReal    v[3] = {0, -30, 0};

    PetscCall(LawSetUp(DemContactLawCreate_HertzMindlin, root, "hertz_p", &gs, &law));
    TBInit(&tb, 1, &gs);
    TBSet(&tb, 0, ez, -delta, zero, m, R, -1);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_FALSE, &tb.out));
    DEM_CHECK_REL("hertz params: youngs_modulus/poisson_ratio override: E* = E / (2 (1 - nu^2))", tb.fn[0], fe, 1e-13);
    DEM_CHECK_REL("hertz params: G* = G/2", tb.kt[0], 8 * Gs * sqrt(R) * sqrt(delta), 1e-13);
    DEM_CHECK_REL("hertz params: restitution override sets xi", tb.cn[0], 2 * xi * sqrt(2 * sqrt(R) * Es * m) * pow(delta, 0.25), 1e-13);
    TBSet(&tb, 0, ez, -delta, v, m, R, 3);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK_REL("hertz params: friction 0.6 caps |ft| = 0.6 fn", Norm(tb.ft), 0.6 * fe, 1e-13);
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_TRUE, &tb.out));
    DEM_CHECK("hertz params: sliding at mu_d = friction", tb.slip[0] == 1 && fabs(Norm(tb.ft) - 0.6 * fe) < 1e-13 * fe && tb.ft[1] > 0, "slip %d |ft| %g", tb.slip[0], Norm(tb.ft));
    PetscCall(LawFree(&law));
  }

  /* ---- hertz_mindlin: same material on both sides; trial evaluation keeps the history ---- */
  {
    const double E = glass.E, nu = glass.nu, Es = E / (2 * (1 - nu * nu)), R = 1e-3, m = 1e-3, delta = 3e-6;
    PetscReal    v[3] = {1, 1, 0}, save[HS * NMAX];

    PetscCall(LawSetUp(DemContactLawCreate_HertzMindlin, NULL, NULL, &gg, &law));
    TBInit(&tb, 1, &gg);
    TBSet(&tb, 0, ez, -delta, v, m, R, 0);
    tb.history[0] = 1e-7;
    tb.history[1] = -2e-7;
    tb.history[3] = 1;
    PetscCall(PetscArraycpy(save, tb.history, HS * NMAX));
    PetscCall((*law->ops->compute)(law, &tb.batch, dt, PETSC_FALSE, &tb.out));
    DEM_CHECK_REL("hertz glass-glass: E* = E / (2 (1 - nu^2))", tb.fn[0], 4.0 / 3.0 * Es * sqrt(R) * pow(delta, 1.5), 1e-13);
    DEM_CHECK("hertz: commit=false leaves the history untouched", memcmp(save, tb.history, sizeof(save)) == 0, "history changed");
    DEM_CHECK_REL("hertz: a sliding contact (flag set) is capped at mu_d fn = 0.4 fn", Norm(tb.ft), 0.4 * tb.fn[0], 1e-13);
    PetscCall(LawFree(&law));
  }

  /* ---- configuration errors ---- */
  PetscCall(PetscSNPrintf(where, sizeof(where), "%s:9:", file));
  PetscCall(ExpectError("hooke: no params -> kn is required", DemContactLawCreate_Hooke, root, NULL, &gs, "kn is required for law hooke", NULL));
  PetscCall(ExpectError("hooke: params without kn -> kn is required", DemContactLawCreate_Hooke, root, "no_kn", &gs, "kn is required for law hooke", NULL));
  PetscCall(ExpectError("hooke: kn = -1 refused at its line with the range", DemContactLawCreate_Hooke, root, "bad_kn", &gs, "kn must be > 0", where));
  PetscCall(ExpectError("hooke: restitution 1.5 refused with the range (0, 1]", DemContactLawCreate_Hooke, root, "bad_e", &gs, "restitution must be in (0, 1]", NULL));
  PetscCall(ExpectError("hooke: unknown key refused", DemContactLawCreate_Hooke, root, "bad_key", &gs, "foo", NULL));
  PetscCall(ExpectError("hooke: gamma_n and restitution together refused", DemContactLawCreate_Hooke, root, "both_damp", &gs, "either gamma_n or restitution", NULL));
  PetscCall(ExpectError("hooke: mu_d > mu_s refused", DemContactLawCreate_Hooke, root, "bad_mu", &gs, "mu_d <= mu_s", NULL));
  PetscCall(ExpectError("hooke: mu with mu_s refused", DemContactLawCreate_Hooke, root, "both_mu", &gs, "either mu", NULL));
  PetscCall(ExpectError("hooke: negative gamma_n refused", DemContactLawCreate_Hooke, root, "neg_gamma", &gs, "gamma_n must be >= 0", NULL));
  PetscCall(ExpectError("hertz: hooke's kn is not a hertz_mindlin key", DemContactLawCreate_HertzMindlin, root, "hertz_key", &gs, "kn", NULL));
  PetscCall(ExpectError("hertz: poisson_ratio 0.6 refused with the range", DemContactLawCreate_HertzMindlin, root, "hertz_nu", &gs, "poisson_ratio must be in (-1, 0.5)", NULL));
  PetscCall(ExpectError("hertz: a material with E = 0 is refused, naming it", DemContactLawCreate_HertzMindlin, root, NULL, &bad, "youngs_modulus of material 'soft'", NULL));

  PetscCall(DemConfigDestroy(&root));
  unlink(file);
  PetscCall(PetscFinalize());
  return dem_test_failed ? 1 : 0;
}
