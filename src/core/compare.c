/*
  compare.c - `mmdem compare FILE.yaml`: runs the model of FILE under several integrators and
  time steps and writes one comparison table and plots (DESIGN.md "Command line").

  The run description gets a top-level `compare:` block (ignored by `run` and `check`):

    compare:
      variants:                      # default: one variant, the file's own integrator
        - {integrator: {type: verlet}}
        - {name: trap, integrator: {type: trapezoid, phi: 0.5}, set: ["run.end_time=0.01"]}
        - {integrator: {type: cd}, dt_scale: 10}   # this variant at 10 times each dt (fraction)
      dt: [1.0e-6, 5.0e-7]           # every variant at each dt (s); or
      dt_fraction: [0.02, 0.01]      # every variant with dt: auto at each fraction
      observables: [restitution, time_to_rest, wall.0.fz, max:pe_contact, track.0.vx]
      jobs: 2                        # runs at a time [1]
      timeout: 600                   # seconds per run [none]
      dir: out/impact-compare        # [out/NAME-compare]; --out overrides

  Each run is this program itself, started with fork/exec as
    mmdem run FILE --out DIR/VARIANT[/dtK] --quiet [--set ...] --set integrator={...}
  (the --set and --plugin options of the compare command, then the variant's integrator
  mapping, with dt and dt_fraction taken from the dt list or else from the file, then the
  variant's own `set:` assignments), in the environment the program was started with. A
  variant's `dt_scale` (default 1) multiplies each value of the dt or dt_fraction list for
  that variant: a method with another stability limit, e.g. contact dynamics (rigid contacts,
  no collision time to resolve), then runs at its own time steps in the same table (a scaled
  dt_fraction must stay <= 1). A variant whose integrator is not registered is not run: its
  rows say "skipped" and why, so that a comparison lists integrators before they exist and
  grows as they land.

  DIR/compare.csv, one row per run:
    variant,integrator,dt,status,wall_s,steps,iterations,energy_error,energy_order,
    <observables...>,dir,note
  dt is the time step of the run's first thermo line; wall_s the wall-clock time of its time
  loop; iterations the mean iterations per step over the thermo lines; energy_error
  max_t |e_balance(t) - e_balance(0)| / |e_total(0)| over the thermo lines (e_total(0) = 0:
  relative to max |e_total|); energy_order the least-squares slope of log(energy_error) over
  log(dt) across the variant's runs (empty with fewer than two time steps).
  Observables (the column is named as written):
    restitution        from track.csv, first and last line: two tracked bodies a, b:
                       -(v_rel,end . n) / (v_rel,0 . n), n = unit (x_a - x_b) at the start;
                       one tracked body (against a wall): -(v_end . u) / |v_0|, u = v_0 / |v_0|
    time_to_rest[:f]   first thermo time from which ke_trans + ke_rot stays <= f * its
                       maximum [f = 1e-3]; empty if it never does
    [stat:]SERIES      stat one of final (default), initial, max, min, mean of SERIES:
                         COLUMN         a thermo.csv column (e.g. ke_rot, contacts, a plugin's)
                         wall.K.COLUMN  walls.csv column of the K-th wall of `walls:` (from 0)
                         track.ID.COLUMN  track.csv column of body ID
  Plots (gnuplot, DIR/plots/compare.gp and PNGs): energy_VARIANT.png (energy error vs time,
  one curve per dt), error_vs_dt.png (log-log, with the fitted orders), OBS_vs_dt.png per
  observable. Without gnuplot the table is still written, with a note.
*/
#include "dem_tools.h"
#include "dem_plugin.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEM_CMP_MAXOBS 32

typedef enum { DEM_OBS_SERIES, DEM_OBS_RESTITUTION, DEM_OBS_REST } DemObsKind;
typedef enum { DEM_STAT_FINAL, DEM_STAT_INITIAL, DEM_STAT_MAX, DEM_STAT_MIN, DEM_STAT_MEAN } DemObsStat;
typedef enum { DEM_SRC_THERMO, DEM_SRC_WALL, DEM_SRC_TRACK } DemObsSrc;

typedef struct {
  char       name[128];
  DemObsKind kind;
  DemObsStat stat;
  DemObsSrc  src;
  char       col[64];
  PetscInt   index;
  PetscReal  frac;
} DemObs;

typedef struct {
  char     name[64], type[64];
  PetscReal dt_scale; /* factor on the dt or dt_fraction list [1] */
  DemNode  integ;  /* the variant's integrator mapping, or NULL: the file's */
  DemNode  sets;   /* list of key.path=value, or NULL */
  PetscBool registered;
  char     why[512];
  PetscReal order, logc; /* fit of log(energy_error) = logc + order log(dt) */
  PetscBool hasfit;
} DemVariant;

typedef enum { DEM_RUN_PENDING, DEM_RUN_RUNNING, DEM_RUN_OK, DEM_RUN_FAILED, DEM_RUN_SKIPPED } DemRunState;

typedef struct {
  PetscInt    v, k;          /* variant, dt index (-1: none) */
  char        dir[PETSC_MAX_PATH_LEN], rel[PETSC_MAX_PATH_LEN], log[PETSC_MAX_PATH_LEN];
  char      **argv;
  int         argc;
  DemRunState state;
  char        note[1024];
  pid_t       pid;
  double      t0;
  double      dt, wall_s, steps, iters, eerr, e0, escale;
  double      obs[DEM_CMP_MAXOBS];
} DemRun;

static double DemNow(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- YAML -> flow text */

static PetscBool DemPlainSafe(const char s[])
{
  if (!s || !s[0]) return PETSC_FALSE;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("_.+-/", *c))) return PETSC_FALSE;
  return PETSC_TRUE;
}

static PetscErrorCode DemAppendScalar(char buf[], size_t len, const char s[])
{
  PetscFunctionBegin;
  if (DemPlainSafe(s)) PetscCall(PetscStrlcat(buf, s, len));
  else {
    char q[2] = {0, 0};
    PetscCall(PetscStrlcat(buf, "'", len));
    for (const char *c = s ? s : ""; *c; c++) {
      q[0] = *c;
      PetscCall(PetscStrlcat(buf, *c == '\'' ? "''" : q, len));
    }
    PetscCall(PetscStrlcat(buf, "'", len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a node as YAML flow text; keys listed in `skip` are left out of a top-level mapping */
static PetscErrorCode DemNodeFlow(DemNode n, const char *const skip[], char buf[], size_t len)
{
  PetscInt m;

  PetscFunctionBegin;
  switch (DemNodeGetType(n)) {
  case DEM_NODE_SCALAR:
    PetscCall(DemAppendScalar(buf, len, DemNodeScalar(n)));
    break;
  case DEM_NODE_SEQ:
    PetscCall(DemNodeSeqLength(n, &m));
    PetscCall(PetscStrlcat(buf, "[", len));
    for (PetscInt i = 0; i < m; i++) {
      DemNode it;
      PetscCall(DemNodeSeqItem(n, i, &it));
      if (i) PetscCall(PetscStrlcat(buf, ", ", len));
      PetscCall(DemNodeFlow(it, NULL, buf, len));
    }
    PetscCall(PetscStrlcat(buf, "]", len));
    break;
  case DEM_NODE_MAP: {
    PetscBool first = PETSC_TRUE;
    PetscCall(DemNodeMapLength(n, &m));
    PetscCall(PetscStrlcat(buf, "{", len));
    for (PetscInt i = 0; i < m; i++) {
      const char *key;
      DemNode     val;
      PetscBool   skipped = PETSC_FALSE;
      PetscCall(DemNodeMapItem(n, i, &key, &val));
      for (PetscInt s = 0; skip && skip[s]; s++) skipped = skipped || !strcmp(skip[s], key);
      if (skipped) continue;
      if (!first) PetscCall(PetscStrlcat(buf, ", ", len));
      first = PETSC_FALSE;
      PetscCall(DemAppendScalar(buf, len, key));
      PetscCall(PetscStrlcat(buf, ": ", len));
      PetscCall(DemNodeFlow(val, NULL, buf, len));
    }
    PetscCall(PetscStrlcat(buf, "}", len));
  } break;
  default:
    PetscCall(PetscStrlcat(buf, "~", len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* appends "key: value" to an open flow mapping in buf ("{..." without its closing brace) */
static PetscErrorCode DemFlowAppend(char buf[], size_t len, const char key[], const char value[])
{
  size_t n = strlen(buf);

  PetscFunctionBegin;
  if (n && buf[n - 1] != '{') PetscCall(PetscStrlcat(buf, ", ", len));
  PetscCall(PetscStrlcat(buf, key, len));
  PetscCall(PetscStrlcat(buf, ": ", len));
  PetscCall(PetscStrlcat(buf, value, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* appends "key: value" of the first of map1, map2 that has the key (if any) */
static PetscErrorCode DemFlowAppendFrom(char buf[], size_t len, const char key[], DemNode map1, DemNode map2)
{
  DemNode v = NULL;
  char    val[4096] = "";

  PetscFunctionBegin;
  if (map1) PetscCall(DemNodeGet(map1, key, &v));
  if (!v && map2) PetscCall(DemNodeGet(map2, key, &v));
  if (!v) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeFlow(v, NULL, val, sizeof(val)));
  PetscCall(DemFlowAppend(buf, len, key, val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- observables */

static PetscErrorCode DemObsParse(DemNode it, DemObs *o)
{
  const char *s = DemNodeScalar(it), *colon;
  char        series[128];

  PetscFunctionBegin;
  DemNodeCheck(it, s && s[0] && strlen(s) < sizeof(o->name), "expected an observable: restitution, time_to_rest[:fraction], or [final|initial|max|min|mean:]SERIES with SERIES a thermo.csv column, wall.K.COLUMN or track.ID.COLUMN");
  PetscCall(PetscMemzero(o, sizeof(*o)));
  PetscCall(PetscStrncpy(o->name, s, sizeof(o->name)));
  DemNodeCheck(it, !strchr(s, ',') && !strchr(s, '"'), "an observable name may not contain ',' or '\"' (it names a CSV column)");
  if (!strcmp(s, "restitution")) {
    o->kind = DEM_OBS_RESTITUTION;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!strncmp(s, "time_to_rest", 12) && (!s[12] || s[12] == ':')) {
    o->kind = DEM_OBS_REST;
    o->frac = 1e-3;
    if (s[12]) {
      char *end;
      o->frac = strtod(s + 13, &end);
      DemNodeCheck(it, !*end && o->frac > 0 && o->frac < 1, "time_to_rest:f needs a fraction f in (0, 1) of the largest kinetic energy (got '%s')", s + 13);
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  o->kind  = DEM_OBS_SERIES;
  o->stat  = DEM_STAT_FINAL;
  colon    = strchr(s, ':');
  if (colon) {
    const char *const stats[] = {"final", "initial", "max", "min", "mean"};
    PetscInt          k;
    for (k = 0; k < 5; k++)
      if ((size_t)(colon - s) == strlen(stats[k]) && !strncmp(s, stats[k], (size_t)(colon - s))) break;
    DemNodeCheck(it, k < 5, "unknown statistic '%.*s' in observable '%s'; allowed: final, initial, max, min, mean", (int)(colon - s), s, s);
    o->stat = (DemObsStat)k;
    s       = colon + 1;
  }
  PetscCall(PetscStrncpy(series, s, sizeof(series)));
  if (!strncmp(series, "wall.", 5) || !strncmp(series, "track.", 6)) {
    char *a = strchr(series, '.') + 1, *b = strchr(a, '.'), *end;
    o->src = series[0] == 'w' ? DEM_SRC_WALL : DEM_SRC_TRACK;
    DemNodeCheck(it, b && b[1], "observable '%s': expected %s.N.COLUMN", o->name, o->src == DEM_SRC_WALL ? "wall" : "track");
    *b       = 0;
    o->index = (PetscInt)strtol(a, &end, 10);
    DemNodeCheck(it, !*end && end != a && o->index >= 0, "observable '%s': '%s' is not a whole number >= 0", o->name, a);
    PetscCall(PetscStrncpy(o->col, b + 1, sizeof(o->col)));
  } else {
    o->src = DEM_SRC_THERMO;
    PetscCall(PetscStrncpy(o->col, series, sizeof(o->col)));
  }
  DemNodeCheck(it, o->col[0], "observable '%s': no column name", o->name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static double DemStat(DemObsStat st, PetscInt n, const double x[])
{
  double r;
  if (n <= 0) return NAN;
  switch (st) {
  case DEM_STAT_INITIAL:
    return x[0];
  case DEM_STAT_MAX:
    r = x[0];
    for (PetscInt i = 1; i < n; i++) r = x[i] > r ? x[i] : r;
    return r;
  case DEM_STAT_MIN:
    r = x[0];
    for (PetscInt i = 1; i < n; i++) r = x[i] < r ? x[i] : r;
    return r;
  case DEM_STAT_MEAN:
    r = 0;
    for (PetscInt i = 0; i < n; i++) r += x[i];
    return r / (double)n;
  default:
    return x[n - 1];
  }
}

/* restitution from track.csv (see the header comment); note explains a NaN */
static PetscErrorCode DemObsRestitution(const char dir[], double *e, char note[], size_t len)
{
  char     path[PETSC_MAX_PATH_LEN];
  DemCSV   tr;
  PetscBool found;
  PetscInt cs, ci, cx, cv, nid = 0;
  double   ids[2], s0, s1;

  PetscFunctionBegin;
  *e = NAN;
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/track.csv", dir));
  PetscCall(DemCSVRead_Private(path, PETSC_FALSE, &tr, &found));
  if (!found || tr.nrow < 2) {
    snprintf(note, len, "restitution needs output.track with one or two bodies (no %s)", found ? "data in track.csv" : "track.csv");
    if (found) PetscCall(DemCSVFree_Private(&tr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  cs = DemCSVColumn_Private(&tr, "step"), ci = DemCSVColumn_Private(&tr, "id");
  cx = DemCSVColumn_Private(&tr, "x"), cv = DemCSVColumn_Private(&tr, "vx");
  s0 = tr.v[cs], s1 = tr.v[(tr.nrow - 1) * tr.ncol + cs];
  for (PetscInt r = 0; r < tr.nrow && tr.v[r * tr.ncol + cs] == s0; r++)
    if (nid < 2) ids[nid++] = tr.v[r * tr.ncol + ci];
  {
    double x0[2][3] = {{0}}, v0[2][3] = {{0}}, v1[2][3] = {{0}};
    for (PetscInt r = 0; r < tr.nrow; r++) {
      const double *row = tr.v + r * tr.ncol;
      for (PetscInt b = 0; b < nid; b++) {
        if (row[ci] != ids[b]) continue;
        for (int d = 0; d < 3; d++) {
          if (row[cs] == s0) x0[b][d] = row[cx + d], v0[b][d] = row[cv + d];
          if (row[cs] == s1) v1[b][d] = row[cv + d];
        }
      }
    }
    if (nid == 2) {
      double n[3], nn = 0, a = 0, b = 0;
      for (int d = 0; d < 3; d++) n[d] = x0[0][d] - x0[1][d], nn += n[d] * n[d];
      nn = sqrt(nn);
      for (int d = 0; d < 3; d++) a += (v0[0][d] - v0[1][d]) * n[d] / nn, b += (v1[0][d] - v1[1][d]) * n[d] / nn;
      if (a != 0) *e = -b / a;
      else snprintf(note, len, "restitution: no normal approach velocity at the start");
    } else {
      double s = 0, b = 0;
      for (int d = 0; d < 3; d++) s += v0[0][d] * v0[0][d];
      s = sqrt(s);
      for (int d = 0; d < 3; d++) b += v1[0][d] * (s > 0 ? v0[0][d] / s : 0);
      if (s > 0) *e = -b / s;
      else snprintf(note, len, "restitution: the tracked body is at rest at the start");
    }
  }
  PetscCall(DemCSVFree_Private(&tr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemObsSeries(const char dir[], const DemObs *o, const DemCSV *th, double *val, char note[], size_t len)
{
  PetscFunctionBegin;
  *val = NAN;
  if (o->src == DEM_SRC_THERMO) {
    PetscInt c = DemCSVColumn_Private(th, o->col);
    double  *x;
    if (c < 0) {
      snprintf(note, len, "%s: thermo.csv has no column '%s'", o->name, o->col);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscMalloc1(th->nrow + 1, &x));
    for (PetscInt r = 0; r < th->nrow; r++) x[r] = th->v[r * th->ncol + c];
    *val = DemStat(o->stat, th->nrow, x);
    PetscCall(PetscFree(x));
  } else {
    char      path[PETSC_MAX_PATH_LEN];
    DemCSV    f;
    PetscBool found;
    PetscInt  c, ci, n = 0;
    double    id = (double)o->index, *x;
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dir, o->src == DEM_SRC_WALL ? "walls.csv" : "track.csv"));
    PetscCall(DemCSVRead_Private(path, PETSC_FALSE, &f, &found));
    if (!found) {
      snprintf(note, len, "%s: no %.300s", o->name, path);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    c  = DemCSVColumn_Private(&f, o->col);
    ci = DemCSVColumn_Private(&f, o->src == DEM_SRC_WALL ? "wall" : "id");
    if (c < 0 || ci < 0) {
      snprintf(note, len, "%s: %.300s has no column '%s'", o->name, path, o->col);
      PetscCall(DemCSVFree_Private(&f));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (o->src == DEM_SRC_WALL) { /* the K-th wall: walls are written in YAML order */
      PetscInt cs = DemCSVColumn_Private(&f, "step"), k = 0;
      id          = NAN;
      for (PetscInt r = 0; r < f.nrow && f.v[r * f.ncol + cs] == f.v[cs]; r++, k++)
        if (k == o->index) id = f.v[r * f.ncol + ci];
      if (isnan(id)) {
        snprintf(note, len, "%s: there are only %d walls", o->name, (int)k);
        PetscCall(DemCSVFree_Private(&f));
        PetscFunctionReturn(PETSC_SUCCESS);
      }
    }
    PetscCall(PetscMalloc1(f.nrow + 1, &x));
    for (PetscInt r = 0; r < f.nrow; r++)
      if (f.v[r * f.ncol + ci] == id) x[n++] = f.v[r * f.ncol + c];
    if (!n) snprintf(note, len, "%s: no lines for %s %d in %.300s", o->name, o->src == DEM_SRC_WALL ? "wall" : "body", (int)o->index, path);
    *val = DemStat(o->stat, n, x);
    PetscCall(PetscFree(x));
    PetscCall(DemCSVFree_Private(&f));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* reads what a finished run left behind */
static PetscErrorCode DemRunAnalyse(DemRun *run, PetscInt nobs, const DemObs obs[])
{
  char      path[PETSC_MAX_PATH_LEN], note[512] = "";
  DemCSV    th;
  PetscBool found;
  PetscInt  cdt, cst, cit, cw, ce, cb, ckt, ckr, ctm, ni = 0;

  PetscFunctionBegin;
  run->dt = run->wall_s = run->steps = run->iters = run->eerr = NAN;
  for (PetscInt k = 0; k < nobs; k++) run->obs[k] = NAN;
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/thermo.csv", run->dir));
  PetscCall(DemCSVRead_Private(path, PETSC_FALSE, &th, &found));
  if (!found || th.nrow == 0) {
    run->state = DEM_RUN_FAILED;
    PetscCall(PetscSNPrintf(run->note, sizeof(run->note), "no thermo.csv data in %s", run->dir));
    if (found) PetscCall(DemCSVFree_Private(&th));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  cdt = DemCSVColumn_Private(&th, "dt"), cst = DemCSVColumn_Private(&th, "step"), cit = DemCSVColumn_Private(&th, "iterations");
  cw = DemCSVColumn_Private(&th, "wall_s"), ce = DemCSVColumn_Private(&th, "e_total"), cb = DemCSVColumn_Private(&th, "e_balance");
  ckt = DemCSVColumn_Private(&th, "ke_trans"), ckr = DemCSVColumn_Private(&th, "ke_rot"), ctm = DemCSVColumn_Private(&th, "time");
  {
    const double *last = th.v + (th.nrow - 1) * th.ncol;
    double        s = 0, emax = 0, scale;
    run->dt     = th.v[cdt];
    run->steps  = last[cst];
    run->wall_s = last[cw];
    run->iters  = 0;
    for (PetscInt r = 0; r < th.nrow; r++)
      if (th.v[r * th.ncol + cst] > 0) run->iters += th.v[r * th.ncol + cit], ni++;
    run->iters = ni ? run->iters / (double)ni : NAN;
    run->e0    = th.v[cb];
    scale      = fabs(th.v[ce]);
    for (PetscInt r = 0; r < th.nrow; r++) emax = PetscMax(emax, fabs(th.v[r * th.ncol + ce]));
    if (!(scale > 0)) scale = emax > 0 ? emax : 1;
    run->escale = scale;
    for (PetscInt r = 0; r < th.nrow; r++) s = PetscMax(s, fabs(th.v[r * th.ncol + cb] - run->e0));
    run->eerr = s / scale;
  }
  for (PetscInt k = 0; k < nobs; k++) {
    char n1[512] = "";
    switch (obs[k].kind) {
    case DEM_OBS_RESTITUTION:
      PetscCall(DemObsRestitution(run->dir, &run->obs[k], n1, sizeof(n1)));
      break;
    case DEM_OBS_REST: {
      double kmax = 0, thr;
      PetscInt last = -1;
      for (PetscInt r = 0; r < th.nrow; r++) kmax = PetscMax(kmax, th.v[r * th.ncol + ckt] + th.v[r * th.ncol + ckr]);
      thr = obs[k].frac * kmax;
      for (PetscInt r = 0; r < th.nrow; r++)
        if (th.v[r * th.ncol + ckt] + th.v[r * th.ncol + ckr] > thr) last = r;
      if (last < th.nrow - 1) run->obs[k] = th.v[(last + 1) * th.ncol + ctm];
      else snprintf(n1, sizeof(n1), "%s: not at rest at the end (kinetic energy above %g of its maximum)", obs[k].name, (double)obs[k].frac);
    } break;
    default:
      PetscCall(DemObsSeries(run->dir, &obs[k], &th, &run->obs[k], n1, sizeof(n1)));
    }
    if (n1[0] && strlen(note) + strlen(n1) + 3 < sizeof(note)) {
      if (note[0]) PetscCall(PetscStrlcat(note, "; ", sizeof(note)));
      PetscCall(PetscStrlcat(note, n1, sizeof(note)));
    }
  }
  if (note[0]) PetscCall(PetscStrncpy(run->note, note, sizeof(run->note)));
  PetscCall(DemCSVFree_Private(&th));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- running */

static PetscErrorCode DemArgvAdd(DemRun *run, const char s[])
{
  PetscFunctionBegin;
  PetscCall(PetscRealloc(sizeof(char *) * (size_t)(run->argc + 2), &run->argv));
  PetscCall(PetscStrallocpy(s, &run->argv[run->argc]));
  run->argv[++run->argc] = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemRunStart(DemRun *run, const char exe[], char **envp)
{
  pid_t pid;

  PetscFunctionBegin;
  PetscCall(DemMkdirP_Private(run->dir));
  run->t0 = DemNow();
  pid     = fork();
  PetscCheck(pid >= 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "compare: fork failed: %s", strerror(errno));
  if (pid == 0) {
    int fd = open(run->log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execve(exe, run->argv, envp);
    fprintf(stderr, "mmdem compare: cannot start %s: %s\n", exe, strerror(errno));
    _exit(127);
  }
  run->pid   = pid;
  run->state = DEM_RUN_RUNNING;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the last line of the run's log that starts with "mmdem:" (its error), or its last line */
static void DemLogTail(const char log[], char out[], size_t len)
{
  FILE *fp = fopen(log, "r");
  char  line[2048], last[2048] = "", err[2048] = "";
  out[0] = 0;
  if (!fp) return;
  while (fgets(line, sizeof(line), fp)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    if (!n) continue;
    snprintf(last, sizeof(last), "%s", line);
    if (!strncmp(line, "mmdem: ", 7)) snprintf(err, sizeof(err), "%s", line + 7);
  }
  fclose(fp);
  snprintf(out, len, "%s", err[0] ? err : last);
}

static PetscErrorCode DemRunFinish(DemRun *run, int st)
{
  char tail[1024];

  PetscFunctionBegin;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) run->state = DEM_RUN_OK;
  else {
    run->state = DEM_RUN_FAILED;
    DemLogTail(run->log, tail, sizeof(tail));
    if (WIFEXITED(st)) PetscCall(PetscSNPrintf(run->note, sizeof(run->note), "failed (exit status %d): %s", WEXITSTATUS(st), tail));
    else if (!run->note[0]) PetscCall(PetscSNPrintf(run->note, sizeof(run->note), "failed (killed by signal %d): %s", WTERMSIG(st), tail));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- output */

static void DemCSVNumber(FILE *fp, double x)
{
  if (isfinite(x)) fprintf(fp, ",%.10g", x);
  else fprintf(fp, ",");
}

/* a number for the summary on stdout, or '-' when there is none */
static void DemFmt(char buf[], size_t len, const char fmt[], double x, int width)
{
  if (isfinite(x)) snprintf(buf, len, fmt, x);
  else snprintf(buf, len, "%*s", width, "-");
}

static void DemCSVText(FILE *fp, const char s[])
{
  fputs(",\"", fp);
  for (const char *c = s; *c; c++) {
    if (*c == '"') fputc('"', fp);
    fputc(*c == '\n' ? ' ' : *c, fp);
  }
  fputc('"', fp);
}

static void DemFileName(const char in[], char out[], size_t len)
{
  size_t j = 0;
  for (const char *c = in; *c && j + 1 < len; c++) out[j++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.') ? *c : '_';
  out[j] = 0;
}

static PetscErrorCode DemComparePlots(const char dir[], PetscInt nv, DemVariant var[], PetscInt nrun, DemRun runs[], PetscInt nobs, const DemObs obs[], PetscBool quiet)
{
  char      pdir[PETSC_MAX_PATH_LEN], script[PETSC_MAX_PATH_LEN];
  FILE     *gp;
  PetscBool found;
  int       status;
  PetscInt  nok = 0;

  PetscFunctionBegin;
  for (PetscInt r = 0; r < nrun; r++) nok += runs[r].state == DEM_RUN_OK;
  if (!nok) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscSNPrintf(pdir, sizeof(pdir), "%s/plots", dir));
  PetscCall(DemMkdirP_Private(pdir));
  PetscCall(PetscSNPrintf(script, sizeof(script), "%s/compare.gp", pdir));
  gp = fopen(script, "w");
  PetscCheck(gp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", script, strerror(errno));
  fprintf(gp, "# written by `mmdem compare`; rerun with: cd %s && gnuplot compare.gp\n", pdir);
  fprintf(gp, "set terminal pngcairo size 1000,650 noenhanced\nset datafile separator ','\nset grid\nset key outside right\n");
  /* energy error vs time, one PNG per variant */
  for (PetscInt v = 0; v < nv; v++) {
    char     fn[128];
    PetscInt n = 0;
    for (PetscInt r = 0; r < nrun; r++) n += runs[r].v == v && runs[r].state == DEM_RUN_OK;
    if (!n) continue;
    DemFileName(var[v].name, fn, sizeof(fn));
    fprintf(gp, "set output 'energy_%s.png'\nset title '%s (%s): energy error vs time'\nset xlabel 'time [s]'\nset ylabel '(e_balance - e_balance(0)) / |e_total(0)|'\nunset logscale\nplot ", fn, var[v].name, var[v].type);
    n = 0;
    for (PetscInt r = 0; r < nrun; r++) {
      PetscInt ct, cb;
      DemCSV   th;
      char     path[PETSC_MAX_PATH_LEN];
      if (runs[r].v != v || runs[r].state != DEM_RUN_OK) continue;
      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/thermo.csv", runs[r].dir));
      PetscCall(DemCSVRead_Private(path, PETSC_FALSE, &th, NULL));
      ct = DemCSVColumn_Private(&th, "time"), cb = DemCSVColumn_Private(&th, "e_balance");
      fprintf(gp, "%s'../%s/thermo.csv' skip 1 using %d:((column(%d) - (%.17g)) / %.17g) with lines lw 2 title 'dt = %.4g s'", n++ ? ", \\\n     " : "", runs[r].rel, (int)ct + 1, (int)cb + 1, runs[r].e0, runs[r].escale, runs[r].dt);
      PetscCall(DemCSVFree_Private(&th));
    }
    fprintf(gp, "\n");
  }
  /* energy error and observables vs dt: inline data, one block per variant */
  fprintf(gp, "set datafile separator whitespace\n");
  for (PetscInt v = 0; v < nv; v++) {
    PetscInt n = 0;
    for (PetscInt r = 0; r < nrun; r++) n += runs[r].v == v && runs[r].state == DEM_RUN_OK;
    if (!n) continue;
    fprintf(gp, "$v%d << EOD\n", (int)v);
    for (PetscInt r = 0; r < nrun; r++) {
      if (runs[r].v != v || runs[r].state != DEM_RUN_OK) continue;
      fprintf(gp, "%.10g %.10g", runs[r].dt, runs[r].eerr);
      for (PetscInt k = 0; k < nobs; k++) fprintf(gp, isfinite(runs[r].obs[k]) ? " %.10g" : " NaN", runs[r].obs[k]);
      fprintf(gp, "\n");
    }
    fprintf(gp, "EOD\n");
  }
  for (PetscInt k = -1; k < nobs; k++) {
    char     fn[160];
    PetscInt n = 0;
    if (k < 0) PetscCall(PetscStrncpy(fn, "error_vs_dt.png", sizeof(fn)));
    else {
      char b[128];
      DemFileName(obs[k].name, b, sizeof(b));
      PetscCall(PetscSNPrintf(fn, sizeof(fn), "%s_vs_dt.png", b));
    }
    if (k < 0) { /* a variant without a positive energy error has no point on the log scale (cd's
                    error is exactly 0): a placeholder text when no variant has one */
      PetscInt pos = 0;
      for (PetscInt r = 0; r < nrun; r++) pos += runs[r].state == DEM_RUN_OK && runs[r].eerr > 0;
      if (!pos) {
        fprintf(gp, "set output '%s'\nset title 'energy error vs time step'\nset xlabel 'dt [s]'\nset ylabel 'max |e_balance - e_balance(0)| / |e_total(0)|'\nunset logscale\nset label 1 'no run has a nonzero energy error' at graph 0.5, 0.5 center\nplot [0:1] [0:1] 2 notitle\nunset label 1\n", fn);
        continue;
      }
    }
    if (k < 0) fprintf(gp, "set output '%s'\nset title 'energy error vs time step'\nset xlabel 'dt [s]'\nset ylabel 'max |e_balance - e_balance(0)| / |e_total(0)|'\nset logscale xy\nset format x '%%.0e'\nset format y '%%.0e'\nplot ", fn);
    else fprintf(gp, "set output '%s'\nset title '%s vs time step'\nset xlabel 'dt [s]'\nset ylabel '%s'\nunset logscale\nset logscale x\nset format x '%%.0e'\nset format y '%%g'\nplot ", fn, obs[k].name, obs[k].name);
    for (PetscInt v = 0; v < nv; v++) {
      PetscInt m = 0;
      /* the log-scale error plot: only variants with a positive error */
      for (PetscInt r = 0; r < nrun; r++) m += runs[r].v == v && runs[r].state == DEM_RUN_OK && (k >= 0 || runs[r].eerr > 0);
      if (!m) continue;
      if (k < 0 && var[v].hasfit) fprintf(gp, "%s$v%d using 1:2 with linespoints lw 2 pt 7 title '%s: order %.2f', exp(%.17g) * x**(%.17g) with lines dt 2 notitle", n++ ? ", \\\n     " : "", (int)v, var[v].name, (double)var[v].order, (double)var[v].logc, (double)var[v].order);
      else fprintf(gp, "%s$v%d using 1:%d with linespoints lw 2 pt 7 title '%s'", n++ ? ", \\\n     " : "", (int)v, k < 0 ? 2 : (int)(k + 3), var[v].name);
    }
    fprintf(gp, "\n");
  }
  fclose(gp);
  PetscCall(DemGnuplotRun_Private(pdir, "compare.gp", &found, &status));
  if (!found) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: gnuplot not found (%s): no plots; install it (Debian: apt-get install gnuplot-nox) and run: cd %s && gnuplot compare.gp\n", getenv("MMDEM_GNUPLOT") && getenv("MMDEM_GNUPLOT")[0] ? "MMDEM_GNUPLOT is not an executable" : "not in PATH", pdir));
  else if (status) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: gnuplot failed (exit status %d): see %s/gnuplot.log\n", status, pdir));
  else if (!quiet) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: plots in %s\n", pdir));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the command */

PetscErrorCode DemCompareRun(const char file[], const DemCompareOptions *co)
{
  DemNode      root = NULL, cn, vn = NULL, dn = NULL, fn = NULL, on = NULL, bi, kn;
  const char  *name = NULL, *cdir = NULL;
  char         dir[PETSC_MAX_PATH_LEN], exe[PETSC_MAX_PATH_LEN], names[1024];
  PetscInt     nv = 1, ndt = 0, nobs = 0, jobs = 1, nrun = 0;
  PetscReal    timeout = 0, dts[64];
  PetscBool    isfrac = PETSC_FALSE;
  DemVariant  *var;
  DemRun      *runs;
  DemObs       obs[DEM_CMP_MAXOBS];
  PetscMPIInt  size;
  ssize_t      ne;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "compare starts its runs as separate processes: run it without mpirun");
  PetscCall(DemConfigLoad(file, &root));
  for (int k = 0; k < co->nset; k++) PetscCall(DemConfigSet(root, co->sets[k]));
  PetscCall(DemPluginsLoadFromConfig_Private(root, NULL)); /* its integrators count as registered */
  PetscCall(DemNodeGet(root, "compare", &cn));
  if (!cn) return DemNodeError(root, "compare needs a top-level 'compare:' block, e.g. compare: {variants: [{integrator: {type: verlet}}], dt: [1.0e-6, 5.0e-7], observables: [restitution]} (docs/input.md, \"compare\")");
  DemNodeCheck(cn, DemNodeGetType(cn) == DEM_NODE_MAP, "compare must be a mapping with keys variants, dt, dt_fraction, observables, jobs, timeout, dir");
  {
    const char *const keys[] = {"variants", "dt", "dt_fraction", "observables", "jobs", "timeout", "dir", NULL};
    PetscCall(DemNodeAllowKeys(cn, keys));
  }
  PetscCall(DemNodeGet(root, "integrator", &bi));
  if (!bi) return DemNodeError(root, "missing required key 'integrator' ({type: verlet, dt: ...}): the variants start from it");
  PetscCall(DemNodeGet(cn, "variants", &vn));
  if (vn) {
    DemNodeCheck(vn, DemNodeGetType(vn) == DEM_NODE_SEQ, "variants must be a list of {name, integrator: {type: ...}, set: [key.path=value, ...]}");
    PetscCall(DemNodeSeqLength(vn, &nv));
    DemNodeCheck(vn, nv > 0, "variants is empty");
  }
  PetscCall(DemNodeGet(cn, "dt", &dn));
  PetscCall(DemNodeGet(cn, "dt_fraction", &fn));
  DemNodeCheck(cn, !(dn && fn), "give dt or dt_fraction, not both");
  if (dn || fn) {
    DemNode l = dn ? dn : fn;
    isfrac    = fn ? PETSC_TRUE : PETSC_FALSE;
    DemNodeCheck(l, DemNodeGetType(l) == DEM_NODE_SEQ, "%s must be a list of numbers", dn ? "dt" : "dt_fraction");
    PetscCall(DemNodeSeqLength(l, &ndt));
    DemNodeCheck(l, ndt > 0 && ndt <= 64, "%s needs 1 to 64 values", dn ? "dt" : "dt_fraction");
    for (PetscInt k = 0; k < ndt; k++) {
      DemNode it;
      PetscCall(DemNodeSeqItem(l, k, &it));
      PetscCall(DemNodeAsReal(it, &dts[k]));
      DemNodeCheck(it, dts[k] > 0 && (!isfrac || dts[k] <= 1), "%s must be %s (got %g)", isfrac ? "a dt_fraction" : "a time step", isfrac ? "in (0, 1]" : "> 0 s", (double)dts[k]);
    }
  }
  PetscCall(DemNodeGet(cn, "observables", &on));
  if (on) {
    DemNodeCheck(on, DemNodeGetType(on) == DEM_NODE_SEQ, "observables must be a list, e.g. [restitution, time_to_rest, wall.0.fz, max:pe_contact]");
    PetscCall(DemNodeSeqLength(on, &nobs));
    DemNodeCheck(on, nobs <= DEM_CMP_MAXOBS, "at most %d observables", DEM_CMP_MAXOBS);
    for (PetscInt k = 0; k < nobs; k++) {
      DemNode it;
      PetscCall(DemNodeSeqItem(on, k, &it));
      PetscCall(DemObsParse(it, &obs[k]));
    }
  }
  PetscCall(DemNodeGetInt(cn, "jobs", PETSC_FALSE, &jobs));
  PetscCall(DemNodeGet(cn, "jobs", &kn));
  DemNodeCheck(kn ? kn : cn, jobs >= 1 && jobs <= 64, "jobs must be in [1, 64] (got %" PetscInt_FMT ")", jobs);
  if (co->jobs > 0) jobs = co->jobs;
  PetscCall(DemNodeGetReal(cn, "timeout", PETSC_FALSE, &timeout));
  PetscCall(DemNodeGet(cn, "timeout", &kn));
  DemNodeCheck(kn ? kn : cn, timeout >= 0, "timeout must be >= 0 s (0: none; got %g)", (double)timeout);
  PetscCall(DemNodeGetString(cn, "dir", PETSC_FALSE, &cdir));
  PetscCall(DemNodeGetString(root, "name", PETSC_FALSE, &name));
  if (co->out) PetscCall(PetscStrncpy(dir, co->out, sizeof(dir)));
  else if (cdir) PetscCall(PetscStrncpy(dir, cdir, sizeof(dir)));
  else {
    char buf[PETSC_MAX_PATH_LEN], *b, *dot;
    PetscCall(PetscStrncpy(buf, file, sizeof(buf)));
    b   = strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
    dot = strrchr(b, '.');
    if (dot) *dot = 0;
    PetscCall(PetscSNPrintf(dir, sizeof(dir), "out/%s-compare", name ? name : b));
  }
  PetscCall(DemRegistryNames_Private("integrator", names, sizeof(names)));

  /* variants */
  PetscCall(PetscCalloc1(nv, &var));
  for (PetscInt v = 0; v < nv; v++) {
    DemNode     it = NULL, in = NULL, tn, sn;
    const char *vname = NULL, *type = "verlet";
    var[v].dt_scale = 1;
    if (vn) {
      const char *const vk[] = {"name", "integrator", "set", "dt_scale", NULL};
      PetscCall(DemNodeSeqItem(vn, v, &it));
      DemNodeCheck(it, DemNodeGetType(it) == DEM_NODE_MAP, "a variant is a mapping {name, integrator: {type: ...}, set: [key.path=value, ...], dt_scale: factor}");
      PetscCall(DemNodeAllowKeys(it, vk));
      PetscCall(DemNodeGetString(it, "name", PETSC_FALSE, &vname));
      PetscCall(DemNodeGetReal(it, "dt_scale", PETSC_FALSE, &var[v].dt_scale));
      PetscCall(DemNodeGet(it, "dt_scale", &kn));
      if (kn) {
        DemNodeCheck(kn, ndt > 0, "dt_scale multiplies the compare.dt or compare.dt_fraction list, and there is none");
        DemNodeCheck(kn, var[v].dt_scale > 0, "dt_scale must be > 0 (got %g)", (double)var[v].dt_scale);
        for (PetscInt k = 0; k < ndt; k++) DemNodeCheck(kn, !isfrac || var[v].dt_scale * dts[k] <= 1, "dt_scale %g makes dt_fraction %g * %g = %g > 1; allowed: a product in (0, 1]", (double)var[v].dt_scale, (double)var[v].dt_scale, (double)dts[k], (double)(var[v].dt_scale * dts[k]));
      }
      PetscCall(DemNodeGet(it, "integrator", &in));
      PetscCall(DemNodeGet(it, "set", &sn));
      if (sn) {
        PetscInt ns;
        DemNodeCheck(sn, DemNodeGetType(sn) == DEM_NODE_SEQ, "set must be a list of key.path=value strings");
        PetscCall(DemNodeSeqLength(sn, &ns));
        for (PetscInt s = 0; s < ns; s++) {
          DemNode a;
          PetscCall(DemNodeSeqItem(sn, s, &a));
          DemNodeCheck(a, DemNodeScalar(a) && strchr(DemNodeScalar(a), '='), "expected key.path=value");
        }
      }
      var[v].sets = sn;
    }
    if (in) {
      DemNodeCheck(in, DemNodeGetType(in) == DEM_NODE_MAP, "integrator must be a mapping {type: ..., params...}");
      PetscCall(DemNodeGet(in, "type", &tn));
      DemNodeCheck(in, tn && DemNodeScalar(tn), "a variant's integrator needs a type (registered: %s)", names);
      type = DemNodeScalar(tn);
      if (ndt) {
        DemNode d;
        PetscCall(DemNodeGet(in, isfrac ? "dt_fraction" : "dt", &d));
        DemNodeCheck(d ? d : in, !d, "compare.%s lists the time steps: leave %s out of the variants", isfrac ? "dt_fraction" : "dt", isfrac ? "dt_fraction" : "dt");
      }
    } else PetscCall(DemNodeGetString(bi, "type", PETSC_FALSE, &type));
    var[v].integ = in;
    PetscCall(PetscStrncpy(var[v].type, type, sizeof(var[v].type)));
    {
      char base[64];
      DemFileName(vname ? vname : type, base, sizeof(base));
      PetscCall(PetscStrncpy(var[v].name, base, sizeof(var[v].name)));
      for (PetscInt w = 0, dup = 1; w < v; w++) {
        if (strcmp(var[w].name, var[v].name)) continue;
        PetscCall(PetscSNPrintf(var[v].name, sizeof(var[v].name), "%s-%d", base, (int)++dup));
        w = -1; /* check the new name against all again */
      }
    }
    {
      DemIntegratorCreateFn f;
      PetscErrorCode        ierr;
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = DemIntegratorFind_Private(type, &f);
      PetscCall(PetscPopErrorHandler());
      var[v].registered = ierr ? PETSC_FALSE : PETSC_TRUE;
      if (ierr) PetscCall(PetscSNPrintf(var[v].why, sizeof(var[v].why), "skipped: integrator '%s' is not registered (registered: %s); load it with --plugin or plugins:, or wait until it lands", type, names));
    }
  }

  /* runs */
  ne = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  PetscCheck(ne > 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "compare: cannot find the mmdem executable (/proc/self/exe): %s", strerror(errno));
  exe[ne] = 0;
  PetscCall(PetscCalloc1(nv * PetscMax(ndt, 1), &runs));
  for (PetscInt v = 0; v < nv; v++) {
    for (PetscInt k = 0; k < PetscMax(ndt, 1); k++) {
      DemRun *run = &runs[nrun++];
      char    integ[4096] = "", a[8192];
      run->v = v;
      run->k = ndt ? k : -1;
      run->dt = NAN;
      for (PetscInt o = 0; o < DEM_CMP_MAXOBS; o++) run->obs[o] = NAN;
      run->eerr = run->wall_s = run->steps = run->iters = NAN;
      if (ndt) PetscCall(PetscSNPrintf(run->rel, sizeof(run->rel), "%s/dt%d", var[v].name, (int)k));
      else PetscCall(PetscStrncpy(run->rel, var[v].name, sizeof(run->rel)));
      PetscCall(PetscSNPrintf(run->dir, sizeof(run->dir), "%s/%s", dir, run->rel));
      PetscCall(PetscSNPrintf(run->log, sizeof(run->log), "%s/run.log", run->dir));
      if (!var[v].registered) {
        run->state = DEM_RUN_SKIPPED;
        if (ndt && !isfrac) run->dt = var[v].dt_scale * dts[k];
        PetscCall(PetscStrncpy(run->note, var[v].why, sizeof(run->note)));
        continue;
      }
      /* the integrator mapping of this run: the variant's (or the file's) without dt and
         dt_fraction, then those from the dt list, else from the variant, else the file */
      {
        const char *const skipdt[] = {"dt", "dt_fraction", NULL};
        DemNode           src = var[v].integ ? var[v].integ : bi;
        PetscCall(DemNodeFlow(src, skipdt, integ, sizeof(integ)));
        integ[strlen(integ) - 1] = 0; /* reopen the mapping */
        if (ndt && !isfrac) {
          PetscCall(PetscSNPrintf(a, sizeof(a), "%.17g", (double)(var[v].dt_scale * dts[k])));
          PetscCall(DemFlowAppend(integ, sizeof(integ), "dt", a));
        } else if (ndt) {
          PetscCall(PetscSNPrintf(a, sizeof(a), "%.17g", (double)(var[v].dt_scale * dts[k])));
          PetscCall(DemFlowAppend(integ, sizeof(integ), "dt", "auto"));
          PetscCall(DemFlowAppend(integ, sizeof(integ), "dt_fraction", a));
        } else {
          PetscCall(DemFlowAppendFrom(integ, sizeof(integ), "dt", src, bi));
          PetscCall(DemFlowAppendFrom(integ, sizeof(integ), "dt_fraction", src, bi));
        }
        PetscCall(PetscStrlcat(integ, "}", sizeof(integ)));
      }
      PetscCall(DemArgvAdd(run, exe));
      PetscCall(DemArgvAdd(run, "run"));
      PetscCall(DemArgvAdd(run, file));
      PetscCall(DemArgvAdd(run, "--out"));
      PetscCall(DemArgvAdd(run, run->dir));
      PetscCall(DemArgvAdd(run, "--quiet"));
      for (int s = 0; s < co->nplug; s++) {
        PetscCall(DemArgvAdd(run, "--plugin"));
        PetscCall(DemArgvAdd(run, co->plugs[s]));
      }
      for (int s = 0; s < co->nset; s++) {
        PetscCall(DemArgvAdd(run, "--set"));
        PetscCall(DemArgvAdd(run, co->sets[s]));
      }
      PetscCall(PetscSNPrintf(a, sizeof(a), "integrator=%s", integ));
      PetscCall(DemArgvAdd(run, "--set"));
      PetscCall(DemArgvAdd(run, a));
      if (var[v].sets) {
        PetscInt ns;
        PetscCall(DemNodeSeqLength(var[v].sets, &ns));
        for (PetscInt s = 0; s < ns; s++) {
          DemNode it;
          PetscCall(DemNodeSeqItem(var[v].sets, s, &it));
          PetscCall(DemArgvAdd(run, "--set"));
          PetscCall(DemArgvAdd(run, DemNodeScalar(it)));
        }
      }
      for (int s = 0; s < co->npetsc; s++) PetscCall(DemArgvAdd(run, co->petsc[s]));
      run->state = DEM_RUN_PENDING;
    }
  }
  PetscCall(DemMkdirP_Private(dir));
  {
    PetscInt npending = 0, ndone = 0, running = 0, next = 0;
    for (PetscInt r = 0; r < nrun; r++) npending += runs[r].state == DEM_RUN_PENDING;
    if (!co->quiet) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: %" PetscInt_FMT " variant%s x %" PetscInt_FMT " time step%s: %" PetscInt_FMT " run%s (%" PetscInt_FMT " at a time) into %s\n", nv, nv == 1 ? "" : "s", PetscMax(ndt, 1), PetscMax(ndt, 1) == 1 ? "" : "s", npending, npending == 1 ? "" : "s", jobs, dir));
    for (PetscInt r = 0; r < nrun && !co->quiet; r++)
      if (runs[r].state == DEM_RUN_SKIPPED && runs[r].k <= 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: %s: %s\n", var[runs[r].v].name, runs[r].note));
    while (ndone < npending) {
      int   st;
      pid_t pid;
      while (running < jobs && next < nrun) {
        if (runs[next].state == DEM_RUN_PENDING) {
          PetscCall(DemRunStart(&runs[next], exe, co->envp));
          running++;
        }
        next++;
      }
      pid = waitpid(-1, &st, WNOHANG);
      PetscCheck(pid >= 0 || errno == EINTR, PETSC_COMM_SELF, PETSC_ERR_SYS, "compare: waitpid failed: %s", strerror(errno));
      if (pid > 0) {
        for (PetscInt r = 0; r < nrun; r++) {
          DemRun *run = &runs[r];
          if (run->state != DEM_RUN_RUNNING || run->pid != pid) continue;
          PetscCall(DemRunFinish(run, st));
          if (run->state == DEM_RUN_OK) PetscCall(DemRunAnalyse(run, nobs, obs));
          running--, ndone++;
          if (!co->quiet) {
            char dts_[64] = "";
            if (isfinite(run->dt)) PetscCall(PetscSNPrintf(dts_, sizeof(dts_), " dt %.4g s", run->dt));
            if (run->state == DEM_RUN_OK) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: [%" PetscInt_FMT "/%" PetscInt_FMT "] %s%s: ok, %.0f steps, energy error %.3g (%.2f s)\n", ndone, npending, run->rel, dts_, run->steps, run->eerr, DemNow() - run->t0));
            else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: [%" PetscInt_FMT "/%" PetscInt_FMT "] %s: %s\n", ndone, npending, run->rel, run->note));
          }
        }
        continue;
      }
      for (PetscInt r = 0; r < nrun && timeout > 0; r++)
        if (runs[r].state == DEM_RUN_RUNNING && DemNow() - runs[r].t0 > timeout && !runs[r].note[0]) {
          PetscCall(PetscSNPrintf(runs[r].note, sizeof(runs[r].note), "failed: timeout after %g s (compare.timeout)", (double)timeout));
          kill(runs[r].pid, SIGKILL);
        }
      usleep(20000);
    }
  }

  /* fitted order of the energy error per variant */
  for (PetscInt v = 0; v < nv; v++) {
    double   sx = 0, sy = 0, sxx = 0, sxy = 0, xmin = INFINITY, xmax = -INFINITY;
    PetscInt n = 0;
    for (PetscInt r = 0; r < nrun; r++) {
      double x, y;
      if (runs[r].v != v || runs[r].state != DEM_RUN_OK || !(runs[r].eerr > 0) || !(runs[r].dt > 0)) continue;
      x = log(runs[r].dt), y = log(runs[r].eerr);
      sx += x, sy += y, sxx += x * x, sxy += x * y, n++;
      xmin = PetscMin(xmin, x), xmax = PetscMax(xmax, x);
    }
    if (n >= 2 && xmax - xmin > 1e-12) {
      var[v].order  = (n * sxy - sx * sy) / (n * sxx - sx * sx);
      var[v].logc   = (sy - var[v].order * sx) / n;
      var[v].hasfit = PETSC_TRUE;
    }
  }

  /* compare.csv, written whole and renamed */
  {
    char  path[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN];
    FILE *fp;
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/compare.csv", dir));
    PetscCall(PetscSNPrintf(tmp, sizeof(tmp), "%s.tmp", path));
    fp = fopen(tmp, "w");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", tmp, strerror(errno));
    fprintf(fp, "variant,integrator,dt,status,wall_s,steps,iterations,energy_error,energy_order");
    for (PetscInt k = 0; k < nobs; k++) fprintf(fp, ",%s", obs[k].name);
    fprintf(fp, ",dir,note\n");
    for (PetscInt r = 0; r < nrun; r++) {
      DemRun     *run = &runs[r];
      const char *status = run->state == DEM_RUN_OK ? "ok" : run->state == DEM_RUN_SKIPPED ? "skipped" : "failed";
      fprintf(fp, "%s,%s", var[run->v].name, var[run->v].type);
      DemCSVNumber(fp, run->dt);
      fprintf(fp, ",%s", status);
      DemCSVNumber(fp, run->wall_s);
      DemCSVNumber(fp, run->steps);
      DemCSVNumber(fp, run->iters);
      DemCSVNumber(fp, run->eerr);
      DemCSVNumber(fp, var[run->v].hasfit && run->state == DEM_RUN_OK ? var[run->v].order : NAN);
      for (PetscInt k = 0; k < nobs; k++) DemCSVNumber(fp, run->obs[k]);
      fprintf(fp, ",%s", run->rel);
      DemCSVText(fp, run->note);
      fprintf(fp, "\n");
    }
    PetscCheck(fclose(fp) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write '%s': %s", tmp, strerror(errno));
    PetscCheck(rename(tmp, path) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot rename '%s': %s", tmp, strerror(errno));
    /* a summary on stdout */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-16s %-16s %11s %-8s %9s %12s %6s", "variant", "integrator", "dt", "status", "steps", "energy_err", "order"));
    for (PetscInt k = 0; k < nobs; k++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %14.14s", obs[k].name));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    for (PetscInt r = 0; r < nrun; r++) {
      DemRun *run = &runs[r];
      char    o[32] = "";
      if (var[run->v].hasfit && run->state == DEM_RUN_OK) PetscCall(PetscSNPrintf(o, sizeof(o), "%.2f", (double)var[run->v].order));
      char    c[4][32];
      DemFmt(c[0], sizeof(c[0]), "%11.4g", run->dt, 11);
      DemFmt(c[1], sizeof(c[1]), "%9.0f", run->steps, 9);
      DemFmt(c[2], sizeof(c[2]), "%12.4g", run->eerr, 12);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-16s %-16s %s %-8s %s %s %6s", var[run->v].name, var[run->v].type, c[0], run->state == DEM_RUN_OK ? "ok" : run->state == DEM_RUN_SKIPPED ? "skipped" : "failed", c[1], c[2], o));
      for (PetscInt k = 0; k < nobs; k++) {
        DemFmt(c[3], sizeof(c[3]), "%14.6g", run->obs[k], 14);
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %s", c[3]));
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: table in %s\n", path));
  }
  PetscCall(DemComparePlots(dir, nv, var, nrun, runs, nobs, obs, co->quiet));
  {
    PetscInt nfail = 0, nok = 0;
    for (PetscInt r = 0; r < nrun; r++) nfail += runs[r].state == DEM_RUN_FAILED, nok += runs[r].state == DEM_RUN_OK;
    if (nfail) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "compare: %" PetscInt_FMT " run%s failed (see the note column and DIR/VARIANT/.../run.log)\n", nfail, nfail == 1 ? "" : "s"));
    for (PetscInt r = 0; r < nrun; r++) {
      for (int a = 0; a < runs[r].argc; a++) PetscCall(PetscFree(runs[r].argv[a]));
      PetscCall(PetscFree(runs[r].argv));
    }
    PetscCall(PetscFree(runs));
    PetscCall(PetscFree(var));
    PetscCall(DemConfigDestroy(&root));
    PetscCheck(nok > 0 || nrun == 0, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "compare: no run succeeded (see %s/compare.csv)", dir);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
