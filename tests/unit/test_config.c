/*
  test_config.c - the YAML run-description layer (src/core/config.c): typed getters, paths and
  locations, every error class with its exact message (file:line:col counted by hand from the
  text written here), --set replace/add/graft, and the load errors (missing file, syntax,
  empty, not a mapping, two documents, duplicate keys, recursive alias, non-scalar key).
*/
#include "dem.h"
#include "dem_test.h"
#include <stdarg.h>
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

/* checks that `ierr` is PETSC_ERR_USER_INPUT and DemLastError() equals the formatted text */
static void expect_error(const char *name, PetscErrorCode ierr, const char *fmt, ...)
{
  char    want[4096];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(want, sizeof(want), fmt, ap);
  va_end(ap);
  DEM_CHECK(name, ierr == PETSC_ERR_USER_INPUT && !strcmp(DemLastError(), want), "code %d, message\n     '%s'\n     expected\n     '%s'", (int)ierr, DemLastError(), want);
}

static const char *good_yaml = "name: settle\n"                           /* 1 */
                               "integrator: {type: verlet, dt: 1.0e-6}\n" /* 2 */
                               "gravity: [0, 0, -9.81]\n"                 /* 3 */
                               "domain:\n"                                /* 4 */
                               "  lo: [0, 0, 0]\n"                        /* 5 */
                               "  periodic: [true, no, ON]\n"             /* 6 */
                               "run:\n"                                   /* 7 */
                               "  end_time: 5e7\n"                        /* 8 */
                               "  steps: 1e3\n"                           /* 9 */
                               "  count: 42\n"                            /* 10 */
                               "  neg: -7\n"                              /* 11 */
                               "  label: \"quoted # text\"\n"             /* 12 */
                               "shapes:\n"                                /* 13 */
                               "  bead: {type: sphere, radius: 0.002}\n"  /* 14 */
                               "bodies:\n"                                /* 15 */
                               "  - {shape: bead, fixed: yes}\n"          /* 16 */
                               "  - shape: pill\n"                        /* 17 */
                               "    list: [{x: [1, 2, 3]}]\n";            /* 18 */

static const char *bad_yaml = "integrator: {type: euler, dt: abc}\n" /* 1 */
                              "gravity: [0, 0]\n"                    /* 2 */
                              "flag: maybe\n"                        /* 3 */
                              "shape:\n"                             /* 4 */
                              "  radius: nan\n"                      /* 5 */
                              "  foo: 1\n"                           /* 6 */
                              "n: 1.5\n"                             /* 7 */
                              "s: {a: 1}\n"                          /* 8 */
                              "big: 1e12\n"                          /* 9 */
                              "inf: 1e999\n"                         /* 10 */
                              "periodic: [true, maybe, false]\n"     /* 11 */
                              "g2: [1, x, 3]\n"                      /* 12 */
                              "scalar: 5\n";                         /* 13 */

static PetscErrorCode CheckPositive(DemNode node, PetscReal v)
{
  PetscFunctionBeginUser;
  DemNodeCheck(node, v > 0, "must be > 0 (got %g)", (double)v);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestGood(const char *file)
{
  DemNode     root, integ, dt, again, bodies, b1, list0, x, run, domain;
  PetscReal   r = -1, g[3] = {0, 0, 0}, untouched = 123.0;
  PetscInt    i = -1, n = -1, choice = -1;
  PetscBool   b = PETSC_FALSE, per[3] = {PETSC_FALSE, PETSC_TRUE, PETSC_FALSE};
  const char *s = NULL, *key = NULL;
  int         line, col;
  const char *const integrators[] = {"trapezoid", "verlet", NULL};
  const char *const runkeys[]     = {"end_time", "steps", "count", "neg", "label", NULL};

  PetscFunctionBeginUser;
  PetscCall(DemConfigLoad(file, &root));
  DEM_CHECK("root is a mapping", DemNodeGetType(root) == DEM_NODE_MAP, "type %d", (int)DemNodeGetType(root));
  DEM_CHECK("root path is empty", !strcmp(DemNodePath(root), ""), "'%s'", DemNodePath(root));
  DEM_CHECK("file name", !strcmp(DemNodeFile(root), file), "'%s'", DemNodeFile(root));
  PetscCall(DemNodeMapLength(root, &n));
  DEM_CHECK("root has 7 keys", n == 7, "%d", (int)n);
  PetscCall(DemNodeMapItem(root, 3, &key, &domain));
  DEM_CHECK("4th key is domain", !strcmp(key, "domain") && !strcmp(DemNodePath(domain), "domain"), "'%s'", key);

  PetscCall(DemNodeGetString(root, "name", PETSC_TRUE, &s));
  DEM_CHECK("string name", s && !strcmp(s, "settle"), "'%s'", s ? s : "(null)");
  PetscCall(DemNodeGet(root, "integrator", &integ));
  PetscCall(DemNodeGetReal(integ, "dt", PETSC_TRUE, &r));
  DEM_CHECK_REL("real 1.0e-6", r, 1.0e-6, 1e-15);
  PetscCall(DemNodeGetChoice(integ, "type", integrators, PETSC_TRUE, &choice));
  DEM_CHECK("choice verlet = 1", choice == 1, "%d", (int)choice);
  PetscCall(DemNodeGet(integ, "dt", &dt));
  PetscCall(DemNodeGet(integ, "dt", &again));
  DEM_CHECK("same handle on repeated Get", dt == again, "%p %p", (void *)dt, (void *)again);
  DEM_CHECK("path integrator.dt", !strcmp(DemNodePath(dt), "integrator.dt"), "'%s'", DemNodePath(dt));
  DEM_CHECK("scalar text", !strcmp(DemNodeScalar(dt), "1.0e-6"), "'%s'", DemNodeScalar(dt));
  DEM_CHECK("scalar of a mapping is NULL", DemNodeScalar(integ) == NULL, "not NULL");
  PetscCall(DemNodeLocation(dt, &line, &col));
  DEM_CHECK("location of integrator.dt is 2:32", line == 2 && col == 32, "%d:%d", line, col);
  PetscCall(DemNodeAsReal(dt, &r));
  DEM_CHECK_REL("DemNodeAsReal", r, 1.0e-6, 1e-15);

  PetscCall(DemNodeGetRealArray(root, "gravity", PETSC_TRUE, 3, g));
  DEM_CHECK("real array gravity", g[0] == 0 && g[1] == 0 && g[2] == -9.81, "%g %g %g", g[0], g[1], g[2]);
  PetscCall(DemNodeGetBoolArray(domain, "periodic", PETSC_TRUE, 3, per));
  DEM_CHECK("bool array true/no/ON", per[0] && !per[1] && per[2], "%d %d %d", per[0], per[1], per[2]);

  PetscCall(DemNodeGet(root, "run", &run));
  PetscCall(DemNodeAllowKeys(run, runkeys));
  DEM_CHECK("AllowKeys accepts listed keys", 1, "%s", "");
  PetscCall(DemNodeGetReal(run, "end_time", PETSC_TRUE, &r));
  DEM_CHECK_REL("real 5e7", r, 5e7, 1e-15);
  PetscCall(DemNodeGetInt(run, "steps", PETSC_TRUE, &i));
  DEM_CHECK("int 1e3 = 1000", i == 1000, "%d", (int)i);
  PetscCall(DemNodeGetInt(run, "count", PETSC_TRUE, &i));
  DEM_CHECK("int 42", i == 42, "%d", (int)i);
  PetscCall(DemNodeGetInt(run, "neg", PETSC_TRUE, &i));
  DEM_CHECK("int -7", i == -7, "%d", (int)i);
  PetscCall(DemNodeGetReal(run, "count", PETSC_TRUE, &r));
  DEM_CHECK("integer read as real", r == 42.0, "%g", r);
  PetscCall(DemNodeGetString(run, "label", PETSC_TRUE, &s));
  DEM_CHECK("quoted string", !strcmp(s, "quoted # text"), "'%s'", s);
  PetscCall(DemNodeGetReal(run, "absent", PETSC_FALSE, &untouched));
  DEM_CHECK("optional absent real untouched", untouched == 123.0, "%g", untouched);
  i = 5;
  PetscCall(DemNodeGetInt(run, "absent", PETSC_FALSE, &i));
  s = "keep";
  PetscCall(DemNodeGetString(run, "absent", PETSC_FALSE, &s));
  choice = 9;
  PetscCall(DemNodeGetChoice(run, "absent", integrators, PETSC_FALSE, &choice));
  DEM_CHECK("optional absent int/string/choice untouched", i == 5 && !strcmp(s, "keep") && choice == 9, "%d '%s' %d", (int)i, s, (int)choice);
  PetscCall(DemNodeGet(run, "absent", &again));
  DEM_CHECK("Get of absent key gives NULL", again == NULL, "not NULL");
  PetscCall(DemNodeGet(NULL, "x", &again));
  DEM_CHECK("Get on NULL map gives NULL", again == NULL, "not NULL");

  PetscCall(DemNodeGet(root, "bodies", &bodies));
  PetscCall(DemNodeSeqLength(bodies, &n));
  DEM_CHECK("bodies has 2 items", n == 2, "%d", (int)n);
  PetscCall(DemNodeSeqItem(bodies, 0, &b1));
  PetscCall(DemNodeGetBool(b1, "fixed", PETSC_TRUE, &b));
  DEM_CHECK("bool yes", b == PETSC_TRUE, "%d", b);
  PetscCall(DemNodeSeqItem(bodies, 1, &b1));
  DEM_CHECK("path bodies[1]", !strcmp(DemNodePath(b1), "bodies[1]"), "'%s'", DemNodePath(b1));
  PetscCall(DemNodeLocation(b1, &line, &col));
  DEM_CHECK("location of bodies[1] is 17:5", line == 17 && col == 5, "%d:%d", line, col);
  PetscCall(DemNodeGet(b1, "list", &list0));
  PetscCall(DemNodeSeqItem(list0, 0, &list0));
  PetscCall(DemNodeGet(list0, "x", &x));
  DEM_CHECK("nested path", !strcmp(DemNodePath(x), "bodies[1].list[0].x"), "'%s'", DemNodePath(x));
  DEM_CHECK("nested type is a list", DemNodeGetType(x) == DEM_NODE_SEQ, "%d", (int)DemNodeGetType(x));
  PetscCall(DemNodeLocation(x, &line, &col));
  DEM_CHECK("location of bodies[1].list[0].x is 18:16", line == 18 && col == 16, "%d:%d", line, col);
  PetscCall(DemNodeGetRealArray(list0, "x", PETSC_TRUE, 3, g));
  DEM_CHECK("nested real array", g[0] == 1 && g[1] == 2 && g[2] == 3, "%g %g %g", g[0], g[1], g[2]);

  /* DemNodeError / DemNodeCheck on a good node */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  expect_error("DemNodeCheck formats file:line:col: path", CheckPositive(dt, -1.0), "%s:2:32: integrator.dt: must be > 0 (got -1)", file);
  expect_error("DemNodeError on the root omits the path", DemNodeError(root, "bad %s", "thing"), "%s:1:1: bad thing", file);
  PetscCall(PetscPopErrorHandler());
  PetscCall(DemConfigDestroy(&root));
  DEM_CHECK("Destroy sets NULL", root == NULL, "not NULL");
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestBad(const char *file)
{
  DemNode     root, integ, shape, scalar, child;
  PetscReal   r = 7.0, g[3] = {9, 9, 9};
  PetscInt    i = 3, n, choice = 4;
  PetscBool   b = PETSC_TRUE, per[3] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
  const char *const integrators[] = {"verlet", "trapezoid", NULL};
  const char *const shapekeys[]   = {"radius", "type", NULL};
  const char *const dtonly[]      = {"dt", NULL};

  PetscFunctionBeginUser;
  PetscCall(DemConfigLoad(file, &root));
  PetscCall(DemNodeGet(root, "integrator", &integ));
  PetscCall(DemNodeGet(root, "shape", &shape));
  PetscCall(DemNodeGet(root, "scalar", &scalar));

  expect_error("choice names the allowed values", DemNodeGetChoice(integ, "type", integrators, PETSC_TRUE, &choice), "%s:1:20: integrator.type: 'type' must be one of: verlet, trapezoid (got 'euler')", file);
  DEM_CHECK("failed choice leaves value", choice == 4, "%d", (int)choice);
  expect_error("not a number", DemNodeGetReal(integ, "dt", PETSC_TRUE, &r), "%s:1:31: integrator.dt: expected a number, got 'abc'", file);
  DEM_CHECK("failed real leaves value", r == 7.0, "%g", r);
  expect_error("list of wrong length", DemNodeGetRealArray(root, "gravity", PETSC_TRUE, 3, g), "%s:2:10: gravity: expected a list of 3 numbers, got a list of 2 items", file);
  expect_error("not a bool", DemNodeGetBool(root, "flag", PETSC_TRUE, &b), "%s:3:7: flag: expected true or false, got 'maybe'", file);
  DEM_CHECK("failed bool leaves value", b == PETSC_TRUE, "%d", b);
  expect_error("nan refused", DemNodeGetReal(shape, "radius", PETSC_TRUE, &r), "%s:5:11: shape.radius: expected a finite number, got 'nan'", file);
  expect_error("unknown key at the key, allowed listed", DemNodeAllowKeys(shape, shapekeys), "%s:6:3: shape: unknown key 'foo'; allowed: radius, type", file);
  expect_error("unknown key in a flow mapping", DemNodeAllowKeys(integ, dtonly), "%s:1:14: integrator: unknown key 'type'; allowed: dt", file);
  expect_error("missing required key at the mapping", DemNodeGetReal(shape, "diameter", PETSC_TRUE, &r), "%s:5:3: shape: missing required key 'diameter'", file);
  expect_error("missing required key at the root", DemNodeGetString(root, "name", PETSC_TRUE, NULL), "%s:1:1: missing required key 'name'", file);
  expect_error("int refuses 1.5", DemNodeGetInt(root, "n", PETSC_TRUE, &i), "%s:7:4: n: expected an integer, got '1.5'", file);
  DEM_CHECK("failed int leaves value", i == 3, "%d", (int)i);
  expect_error("number wanted, mapping given", DemNodeGetReal(root, "s", PETSC_TRUE, &r), "%s:8:4: s: expected a number, got a mapping", file);
  expect_error("int out of range", DemNodeGetInt(root, "big", PETSC_TRUE, &i), "%s:9:6: big: expected an integer between -2147483648 and 2147483647, got '1e12'", file);
  expect_error("overflow to inf refused", DemNodeGetReal(root, "inf", PETSC_TRUE, &r), "%s:10:6: inf: expected a finite number, got '1e999'", file);
  expect_error("bad item of a bool list", DemNodeGetBoolArray(root, "periodic", PETSC_TRUE, 3, per), "%s:11:18: periodic[1]: expected true or false, got 'maybe'", file);
  DEM_CHECK("failed bool array untouched", !per[0] && !per[1] && !per[2], "%d %d %d", per[0], per[1], per[2]);
  expect_error("bad item of a real list", DemNodeGetRealArray(root, "g2", PETSC_TRUE, 3, g), "%s:12:9: g2[1]: expected a number, got 'x'", file);
  DEM_CHECK("failed real array untouched", g[0] == 9 && g[1] == 9 && g[2] == 9, "%g %g %g", g[0], g[1], g[2]);
  expect_error("list wanted, scalar given", DemNodeGetRealArray(root, "scalar", PETSC_TRUE, 3, g), "%s:13:9: scalar: expected a list of 3 numbers, got '5'", file);
  expect_error("Get on a scalar", DemNodeGet(scalar, "x", &child), "%s:13:9: scalar: expected a mapping, got '5'", file);
  expect_error("getter on a scalar", DemNodeGetReal(scalar, "x", PETSC_FALSE, &r), "%s:13:9: scalar: expected a mapping, got '5'", file);
  expect_error("SeqLength on a mapping", DemNodeSeqLength(shape, &n), "%s:5:3: shape: expected a list, got a mapping", file);
  expect_error("string wanted, mapping given", DemNodeGetString(root, "shape", PETSC_TRUE, NULL), "%s:5:3: shape: expected a string, got a mapping", file);
  expect_error("DemNodeAsReal on a list", DemNodeAsReal(root, &r), "%s:1:1: expected a number, got a mapping", file);
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestLoadErrors(void)
{
  char    path[512];
  DemNode root = NULL;

  PetscFunctionBeginUser;
  snprintf(path, sizeof(path), "%s/nope.yaml", dir);
  expect_error("missing file", DemConfigLoad(path, &root), "%s: cannot open: No such file or directory", path);
  DEM_CHECK("failed load leaves root NULL", root == NULL, "not NULL");

  expect_error("a directory", DemConfigLoad(dir, &root), "%s: cannot open: Is a directory", dir);
  write_file("utf8.yaml", "a: 1\nb: \xff\n", path, sizeof(path));
  expect_error("invalid UTF-8", DemConfigLoad(path, &root), "%s: YAML syntax error: invalid leading UTF-8 octet: #FF at byte 8", path);
  {
    char deep[700] = "a: ";

    for (int k = 0; k < 300; k++) strcat(deep, "[");
    for (int k = 0; k < 300; k++) strcat(deep, "]");
    strcat(deep, "\n");
    write_file("deep.yaml", deep, path, sizeof(path));
    DEM_CHECK("nesting depth is bounded", DemConfigLoad(path, &root) == PETSC_ERR_USER_INPUT && strstr(DemLastError(), ": nesting deeper than 256 levels"), "'%.120s'", DemLastError());
  }
  write_file("syntax1.yaml", "a: 1\nb: c: d\n", path, sizeof(path));
  expect_error("syntax error without context", DemConfigLoad(path, &root), "%s:2:5: YAML syntax error: mapping values are not allowed in this context", path);
  write_file("syntax2.yaml", "a: 1\nb: [1, 2}\n", path, sizeof(path));
  expect_error("syntax error with context", DemConfigLoad(path, &root), "%s:2:9: YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence)", path);
  write_file("syntax3.yaml", "a: *nowhere\n", path, sizeof(path));
  expect_error("undefined alias", DemConfigLoad(path, &root), "%s:1:4: YAML syntax error: found undefined alias", path);
  write_file("empty.yaml", "", path, sizeof(path));
  expect_error("empty file", DemConfigLoad(path, &root), "%s:1:1: the run description is empty; expected a mapping of keys to values", path);
  write_file("comment.yaml", "# only a comment\n", path, sizeof(path));
  expect_error("only a comment", DemConfigLoad(path, &root), "%s:1:1: the run description is empty; expected a mapping of keys to values", path);
  write_file("list.yaml", "- 1\n- 2\n", path, sizeof(path));
  expect_error("root is a list", DemConfigLoad(path, &root), "%s:1:1: the run description must be a mapping of keys to values, got a list of 2 items", path);
  write_file("scalar.yaml", "\n  hello\n", path, sizeof(path));
  expect_error("root is a scalar", DemConfigLoad(path, &root), "%s:2:3: the run description must be a mapping of keys to values, got 'hello'", path);
  write_file("twodocs.yaml", "a: 1\n---\nb: 2\n", path, sizeof(path));
  expect_error("two documents", DemConfigLoad(path, &root), "%s:2:1: more than one YAML document; a run description is a single document", path);
  write_file("dup.yaml", "a: 1\nsub:\n  x: 1\n  y: 2\n  x: 3\n", path, sizeof(path));
  expect_error("duplicate key, nested", DemConfigLoad(path, &root), "%s:5:3: sub: duplicate key 'x' (first at line 3)", path);
  write_file("dup2.yaml", "list:\n  - {p: 1, q: 2}\n  - {p: 1, p: 2}\na: 1\n", path, sizeof(path));
  expect_error("duplicate key in a list item", DemConfigLoad(path, &root), "%s:3:12: list[1]: duplicate key 'p' (first at line 3)", path);
  write_file("dup3.yaml", "a: 1\nb: 2\na: 3\n", path, sizeof(path));
  expect_error("duplicate key at the root", DemConfigLoad(path, &root), "%s:3:1: duplicate key 'a' (first at line 1)", path);
  write_file("cycle.yaml", "a: &x [1, *x]\n", path, sizeof(path));
  expect_error("recursive alias", DemConfigLoad(path, &root), "%s:1:4: a[1]: an alias refers to a node that contains it (recursive structure)", path);
  write_file("cplxkey.yaml", "? [1, 2]\n: v\n", path, sizeof(path));
  expect_error("non-scalar key", DemConfigLoad(path, &root), "%s:1:3: a key must be a plain value, got a list of 2 items", path);
  DEM_CHECK("root stays NULL after load errors", root == NULL, "not NULL");

  /* aliases that are not recursive are fine */
  write_file("alias.yaml", "m: &g {rho: 2500}\nn: *g\n", path, sizeof(path));
  PetscCall(DemConfigLoad(path, &root));
  {
    DemNode   nn;
    PetscReal rho = 0;

    PetscCall(DemNodeGet(root, "n", &nn));
    PetscCall(DemNodeGetReal(nn, "rho", PETSC_TRUE, &rho));
    DEM_CHECK("alias resolved", rho == 2500, "%g", rho);
    DEM_CHECK("path through an alias", !strcmp(DemNodePath(nn), "n"), "'%s'", DemNodePath(nn));
  }
  {
    DemNode nn;

    PetscCall(DemNodeGet(root, "n", &nn));
    DEM_CHECK("Destroy refuses a non-root handle", DemConfigDestroy(&nn) == PETSC_ERR_ARG_WRONG && nn != NULL, "accepted");
  }
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestSet(const char *file)
{
  DemNode     root, integ, dt, sec, bodies, item, walls;
  PetscReal   r = 0, g[3] = {0, 0, 0};
  PetscInt    i = 0, n = 0;
  const char *s = NULL;
  int         line = -1, col = -1;
  const char *const integkeys[] = {"type", "dt", NULL};

  PetscFunctionBeginUser;
  PetscCall(DemConfigLoad(file, &root));
  PetscCall(DemNodeGet(root, "integrator", &integ));
  PetscCall(DemNodeGet(integ, "dt", &dt));

  PetscCall(DemConfigSet(root, "integrator.dt=2e-6"));
  PetscCall(DemNodeGetReal(integ, "dt", PETSC_TRUE, &r));
  DEM_CHECK_REL("--set replaces a scalar", r, 2e-6, 1e-15);
  DEM_CHECK("an earlier handle sees the new value", !strcmp(DemNodeScalar(dt), "2e-6"), "'%s'", DemNodeScalar(dt));
  PetscCall(DemNodeLocation(dt, &line, &col));
  DEM_CHECK("--set node location is 0:0", line == 0 && col == 0, "%d:%d", line, col);

  PetscCall(DemConfigSet(root, "integrator.dt=x"));
  expect_error("--set value error names --set", DemNodeGetReal(integ, "dt", PETSC_TRUE, &r), "--set integrator.dt: expected a number, got 'x'");

  PetscCall(DemConfigSet(root, "gravity=[0, 0, -1]"));
  PetscCall(DemNodeGetRealArray(root, "gravity", PETSC_TRUE, 3, g));
  DEM_CHECK("--set grafts a flow list over a list", g[0] == 0 && g[1] == 0 && g[2] == -1, "%g %g %g", g[0], g[1], g[2]);
  PetscCall(DemConfigSet(root, "gravity=[0, x, 1]"));
  expect_error("error inside a grafted list", DemNodeGetRealArray(root, "gravity", PETSC_TRUE, 3, g), "--set gravity: gravity[1]: expected a number, got 'x'");

  PetscCall(DemConfigSet(root, "run.new_key=7"));
  i = 0;
  PetscCall(DemNodeGetInt(NULL, "x", PETSC_FALSE, &i));
  DEM_CHECK("optional getter on a NULL mapping", i == 0, "%d", (int)i);
  PetscCall(DemNodeGet(root, "run", &sec));
  PetscCall(DemNodeGetInt(sec, "new_key", PETSC_TRUE, &i));
  DEM_CHECK("--set adds a key to a mapping", i == 7, "%d", (int)i);

  PetscCall(DemConfigSet(root, "output.dir=out/x=y"));
  PetscCall(DemNodeGet(root, "output", &sec));
  PetscCall(DemNodeGetString(sec, "dir", PETSC_TRUE, &s));
  DEM_CHECK("--set creates a mapping; value keeps '='", s && !strcmp(s, "out/x=y"), "'%s'", s ? s : "(null)");
  PetscCall(DemConfigSet(root, "newsec.sub.k=1"));
  PetscCall(DemNodeGet(root, "newsec", &sec));
  expect_error("created intermediate mapping reports --set", DemNodeGetReal(sec, "missing", PETSC_TRUE, &r), "--set newsec.sub.k: newsec: missing required key 'missing'");

  PetscCall(DemConfigSet(root, "bodies.0.shape=pill"));
  PetscCall(DemNodeGet(root, "bodies", &bodies));
  PetscCall(DemNodeSeqItem(bodies, 0, &item));
  PetscCall(DemNodeGetString(item, "shape", PETSC_TRUE, &s));
  DEM_CHECK("--set indexes a sequence", !strcmp(s, "pill"), "'%s'", s);
  PetscCall(DemConfigSet(root, "bodies.1.list.0.x=[4, 5, 6]"));
  PetscCall(DemNodeSeqItem(bodies, 1, &item));
  PetscCall(DemNodeGet(item, "list", &item));
  PetscCall(DemNodeSeqItem(item, 0, &item));
  PetscCall(DemNodeGetRealArray(item, "x", PETSC_TRUE, 3, g));
  DEM_CHECK("--set deep in lists", g[0] == 4 && g[1] == 5 && g[2] == 6, "%g %g %g", g[0], g[1], g[2]);

  PetscCall(DemConfigSet(root, "walls={type: plane, normal: [0, 0, 1], tags: {a: 1}}"));
  PetscCall(DemNodeGet(root, "walls", &walls));
  PetscCall(DemNodeMapLength(walls, &n));
  PetscCall(DemNodeGetRealArray(walls, "normal", PETSC_TRUE, 3, g));
  PetscCall(DemNodeGetString(walls, "type", PETSC_TRUE, &s));
  DEM_CHECK("--set grafts a flow mapping", n == 3 && g[2] == 1 && !strcmp(s, "plane"), "%d %g '%s'", (int)n, g[2], s);
  PetscCall(DemConfigSet(root, "walls.tags.a=\"quoted\""));
  PetscCall(DemNodeGet(walls, "tags", &sec));
  PetscCall(DemNodeGetString(sec, "a", PETSC_TRUE, &s));
  DEM_CHECK("--set a quoted scalar is unquoted", !strcmp(s, "quoted"), "'%s'", s);
  PetscCall(DemConfigSet(root, "name=[a, b]"));
  PetscCall(DemConfigSet(root, "name=plain again"));
  PetscCall(DemNodeGetString(root, "name", PETSC_TRUE, &s));
  DEM_CHECK("--set replaces a list with a scalar", !strcmp(s, "plain again"), "'%s'", s);

  PetscCall(DemConfigSet(root, "integrator.foo=1"));
  expect_error("unknown key added by --set", DemNodeAllowKeys(integ, integkeys), "--set integrator.foo: unknown key 'foo'; allowed: type, dt");

  expect_error("--set without =", DemConfigSet(root, "noequals"), "--set 'noequals': expected key.path=value");
  expect_error("--set with empty path", DemConfigSet(root, "=5"), "--set '=5': the key path before '=' is empty");
  expect_error("--set with empty component", DemConfigSet(root, "a..b=1"), "--set 'a..b=1': empty component in the key path 'a..b'");
  expect_error("--set with trailing dot", DemConfigSet(root, "a.=1"), "--set 'a.=1': empty component in the key path 'a.'");
  expect_error("--set through a scalar", DemConfigSet(root, "run.count.x=1"), "--set 'run.count.x=1': run.count is a value ('42'), not a mapping or a list");
  expect_error("--set index out of range", DemConfigSet(root, "bodies.5.shape=x"), "--set 'bodies.5.shape=x': bodies has 2 items: index 5 is out of range");
  expect_error("--set non-numeric index", DemConfigSet(root, "bodies.first=x"), "--set 'bodies.first=x': bodies is a list: expected an item index, got 'first'");
  expect_error("--set YAML syntax error", DemConfigSet(root, "gravity=[0, 0"), "--set 'gravity=[0, 0': YAML syntax error at the end of the value: did not find expected ',' or ']' (while parsing a flow sequence)");
  expect_error("--set YAML syntax error inside the value", DemConfigSet(root, "w=[1, 2}"), "--set 'w=[1, 2}': YAML syntax error at character 6 of the value: did not find expected ',' or ']' (while parsing a flow sequence)");
  expect_error("--set duplicate key in the value", DemConfigSet(root, "w={a: 1, a: 2}"), "--set 'w={a: 1, a: 2}': duplicate key 'a'");
  expect_error("--set two values", DemConfigSet(root, "w=[1]\n--- [2]"), "--set 'w=[1]\n--- [2]': the value must be a single YAML value");
  PetscCall(DemNodeGet(root, "w", &sec));
  DEM_CHECK("refused --set changes nothing", sec == NULL, "w exists");

  DemSetLastError("inner");
  expect_error("DemNodeError without a node, quoting the last error", DemNodeError(NULL, "outer: %s", DemLastError()), "outer: inner");
  DemSetLastError("inner");
  expect_error("DemNodeError quoting the last error", DemNodeError(integ, "law x: %s", DemLastError()), "%s:2:13: integrator: law x: inner", file);
  DemSetLastError("plain %d", 3);
  DEM_CHECK("DemSetLastError", !strcmp(DemLastError(), "plain 3"), "'%s'", DemLastError());
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char good[512], bad[512], path[512];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_config.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  write_file("good.yaml", good_yaml, good, sizeof(good));
  write_file("bad.yaml", bad_yaml, bad, sizeof(bad));
  PetscCall(TestGood(good));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscCall(TestBad(bad));
  PetscCall(TestLoadErrors());
  PetscCall(TestSet(good));
  PetscCall(PetscPopErrorHandler());

  {
    const char *names[] = {"good.yaml", "bad.yaml", "syntax1.yaml", "syntax2.yaml", "syntax3.yaml", "empty.yaml", "comment.yaml", "list.yaml", "scalar.yaml", "twodocs.yaml", "dup.yaml", "dup2.yaml", "dup3.yaml", "cycle.yaml", "cplxkey.yaml", "alias.yaml", "utf8.yaml", "deep.yaml"};
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
      snprintf(path, sizeof(path), "%s/%s", dir, names[k]);
      unlink(path);
    }
    rmdir(dir);
  }
  PetscCall(PetscFinalize());
  return dem_test_failed ? 1 : 0;
}
