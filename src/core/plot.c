/*
  plot.c - `mmdem plot DIR`: PNG plots of a finished run, made by gnuplot from DIR/thermo.csv
  and DIR/walls.csv, into DIR/plots/ (the gnuplot script stays there as plot.gp, so a user can
  edit and rerun it: cd DIR/plots && gnuplot plot.gp).

    energy.png         ke_trans, ke_rot, pe_grav, pe_contact, dissipated, e_total, e_balance
    energy_error.png   e_balance - e_balance(0), the energy bookkeeping error
    contacts.png       contacts vs time
    dt.png             dt vs time (log scale when it changes)
    iterations.png     iterations per step vs step
    extra.png          plugin thermo columns (those after e_balance), when there are any
    wall_ID.png        fx, fy, fz of each wall vs time (from walls.csv)

  Also the helpers `mmdem compare` shares: a CSV reader, mkdir -p, and a gnuplot runner that
  reports a missing gnuplot instead of failing. The gnuplot run is the first in PATH, or the
  one named by the environment variable MMDEM_GNUPLOT.
*/
#include "dem_tools.h"
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

PetscErrorCode DemMkdirP_Private(const char dir[])
{
  char tmp[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(tmp, dir, sizeof(tmp)));
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    PetscCheck(mkdir(tmp, 0777) == 0 || errno == EEXIST, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot create directory '%s': %s", tmp, strerror(errno));
    *p = '/';
  }
  PetscCheck(mkdir(tmp, 0777) == 0 || errno == EEXIST, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot create directory '%s': %s", tmp, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* splits a CSV line in place (no quoted commas in mmdem's numeric files; quotes are
   stripped from fields of compare.csv) */
static PetscInt DemCSVSplit(char *line, char **f, PetscInt max)
{
  PetscInt n = 0;
  char    *p = line;
  size_t   len = strlen(line);
  while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
  while (n < max) {
    if (*p == '"') { /* a quoted field: up to the closing quote, "" is a quote */
      char *w = ++p;
      f[n++] = w;
      while (*p && !(*p == '"' && p[1] != '"')) {
        if (*p == '"') p++;
        *w++ = *p++;
      }
      if (*p == '"') p++;
      *w = 0;
      while (*p && *p != ',') p++;
    } else {
      f[n++] = p;
      while (*p && *p != ',') p++;
    }
    if (!*p) break;
    *p++ = 0;
  }
  return n;
}

PetscErrorCode DemCSVRead_Private(const char path[], PetscBool keep_text, DemCSV *csv, PetscBool *found)
{
  FILE    *fp;
  char    *line = NULL, **f;
  size_t   cap  = 0;
  ssize_t  len;
  PetscInt nf;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(csv, sizeof(*csv)));
  fp = fopen(path, "r");
  if (found) *found = fp ? PETSC_TRUE : PETSC_FALSE;
  if (!fp) {
    PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", path, strerror(errno));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  len = getline(&line, &cap, fp);
  if (len <= 0) {
    free(line);
    fclose(fp);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(1024, &f));
  nf        = DemCSVSplit(line, f, 1024);
  csv->ncol = nf;
  PetscCall(PetscMalloc1(nf, &csv->names));
  for (PetscInt k = 0; k < nf; k++) PetscCall(PetscStrallocpy(f[k], &csv->names[k]));
  while ((len = getline(&line, &cap, fp)) > 0) {
    PetscInt n;
    if (line[0] == '\n') continue;
    n = DemCSVSplit(line, f, 1024);
    if (csv->nrow == csv->cap) {
      PetscInt nc = csv->cap ? 2 * csv->cap : 256;
      PetscCall(PetscRealloc(sizeof(double) * (size_t)(nc * csv->ncol), &csv->v));
      if (keep_text) {
        PetscCall(PetscRealloc(sizeof(char *) * (size_t)(nc * csv->ncol), &csv->text));
      }
      csv->cap = nc;
    }
    for (PetscInt k = 0; k < csv->ncol; k++) {
      double x = NAN;
      if (k < n && f[k][0]) {
        char *end;
        x = strtod(f[k], &end);
        if (*end) x = NAN;
      }
      csv->v[csv->nrow * csv->ncol + k] = x;
      if (keep_text) PetscCall(PetscStrallocpy(k < n ? f[k] : "", &csv->text[csv->nrow * csv->ncol + k]));
    }
    csv->nrow++;
  }
  PetscCall(PetscFree(f));
  free(line);
  fclose(fp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscInt DemCSVColumn_Private(const DemCSV *csv, const char name[])
{
  for (PetscInt k = 0; k < csv->ncol; k++)
    if (!strcmp(csv->names[k], name)) return k;
  return -1;
}

PetscErrorCode DemCSVFree_Private(DemCSV *csv)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < csv->ncol; k++) PetscCall(PetscFree(csv->names[k]));
  if (csv->text)
    for (PetscInt k = 0; k < csv->nrow * csv->ncol; k++) PetscCall(PetscFree(csv->text[k]));
  PetscCall(PetscFree(csv->text));
  PetscCall(PetscFree(csv->names));
  PetscCall(PetscFree(csv->v));
  PetscCall(PetscMemzero(csv, sizeof(*csv)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the first executable `name` in PATH */
static PetscBool DemFindInPath(const char name[], char out[], size_t len)
{
  const char *path = getenv("PATH");
  char        buf[8192], *save = NULL;
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  snprintf(buf, sizeof(buf), "%s", path);
  for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(out, len, "%s/%s", d[0] ? d : ".", name);
    if (access(out, X_OK) == 0) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

PetscErrorCode DemGnuplotRun_Private(const char dir[], const char script[], PetscBool *found, int *status)
{
  char  exe[PETSC_MAX_PATH_LEN], log[PETSC_MAX_PATH_LEN];
  pid_t pid;
  int   st = 0;

  PetscFunctionBegin;
  *status = -1;
  if (getenv("MMDEM_GNUPLOT") && getenv("MMDEM_GNUPLOT")[0]) { /* a chosen gnuplot */
    PetscCall(PetscStrncpy(exe, getenv("MMDEM_GNUPLOT"), sizeof(exe)));
    *found = access(exe, X_OK) == 0 ? PETSC_TRUE : PETSC_FALSE;
  } else *found = DemFindInPath("gnuplot", exe, sizeof(exe));
  if (!*found) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscSNPrintf(log, sizeof(log), "%s/gnuplot.log", dir));
  pid = fork();
  PetscCheck(pid >= 0, PETSC_COMM_SELF, PETSC_ERR_SYS, "fork failed: %s", strerror(errno));
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    if (chdir(dir) != 0) _exit(127);
    execl(exe, "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) { }
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* gnuplot: a PNG with one curve per column (1-based indices into the CSV) */
static void DemGpPlot(FILE *gp, const char png[], const char title[], const char xlabel[], const char ylabel[], const char file[], PetscInt xcol, PetscInt n, const PetscInt ycol[], const char *const names[], const char *yexpr_fmt)
{
  fprintf(gp, "set output '%s'\nset title '%s'\nset xlabel '%s'\nset ylabel '%s'\nplot ", png, title, xlabel, ylabel);
  for (PetscInt k = 0; k < n; k++) {
    char expr[256];
    if (yexpr_fmt) snprintf(expr, sizeof(expr), yexpr_fmt, (int)ycol[k]);
    else snprintf(expr, sizeof(expr), "%d", (int)ycol[k]);
    fprintf(gp, "%s'%s' skip 1 using %d:%s with lines lw 2 title '%s'", k ? ", \\\n     " : "", file, (int)xcol, expr, names[k]);
  }
  fprintf(gp, "\n");
}

/*
  DemPlotRun - `mmdem plot DIR`. Writes DIR/plots/plot.gp and runs gnuplot on it; an error
  (with what to install) when gnuplot is missing, or when DIR has no thermo.csv.
*/
PetscErrorCode DemPlotRun(const char dir[])
{
  char        path[PETSC_MAX_PATH_LEN], pdir[PETSC_MAX_PATH_LEN], script[PETSC_MAX_PATH_LEN];
  DemCSV      th, wl;
  PetscBool   found, haswalls;
  FILE       *gp;
  int         status;
  PetscInt    ct, nextra = 0, npng = 0;
  const char *energy[] = {"ke_trans", "ke_rot", "pe_grav", "pe_contact", "dissipated", "e_total", "e_balance"};

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/thermo.csv", dir));
  PetscCall(DemCSVRead_Private(path, PETSC_FALSE, &th, &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "plot: no %s: give the output directory of a run (its --out or output.dir)", path);
  PetscCheck(th.nrow > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "plot: %s has no data lines", path);
  ct = DemCSVColumn_Private(&th, "time");
  PetscCheck(ct >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "plot: %s has no 'time' column", path);
  PetscCall(PetscSNPrintf(pdir, sizeof(pdir), "%s/plots", dir));
  PetscCall(DemMkdirP_Private(pdir));
  PetscCall(PetscSNPrintf(script, sizeof(script), "%s/plot.gp", pdir));
  gp = fopen(script, "w");
  PetscCheck(gp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", script, strerror(errno));
  fprintf(gp, "# written by `mmdem plot %s`; rerun with: cd %s && gnuplot plot.gp\n", dir, pdir);
  fprintf(gp, "set terminal pngcairo size 1000,650 noenhanced\nset datafile separator ','\nset grid\nset key outside right\n");
  {
    PetscInt    yc[7], n = 0;
    const char *nm[7];
    for (int k = 0; k < 7; k++) {
      PetscInt c = DemCSVColumn_Private(&th, energy[k]);
      if (c >= 0) yc[n] = c + 1, nm[n++] = energy[k];
    }
    if (n) DemGpPlot(gp, "energy.png", "energies", "time [s]", "energy [J]", "../thermo.csv", ct + 1, n, yc, nm, NULL), npng++;
  }
  {
    PetscInt cb = DemCSVColumn_Private(&th, "e_balance");
    if (cb >= 0) {
      char        fmt[128];
      const char *nm[1] = {"e_balance - e_balance(0)"};
      PetscInt    yc[1] = {cb + 1};
      PetscCall(PetscSNPrintf(fmt, sizeof(fmt), "(column(%%d) - (%.17g))", th.v[cb]));
      DemGpPlot(gp, "energy_error.png", "energy bookkeeping error", "time [s]", "e_balance - e_balance(0) [J]", "../thermo.csv", ct + 1, 1, yc, nm, fmt), npng++;
    }
  }
  {
    const char *one[3][4] = {
      {"contacts",   "contacts.png",   "contacts",                 "contacts"  },
      {"dt",         "dt.png",         "time step",                "dt [s]"    },
      {"iterations", "iterations.png", "integrator iterations",    "iterations"},
    };
    for (int k = 0; k < 3; k++) {
      PetscInt    c = DemCSVColumn_Private(&th, one[k][0]), yc[1], xc = ct + 1;
      const char *nm[1] = {one[k][0]};
      if (c < 0) continue;
      yc[0] = c + 1;
      if (!strcmp(one[k][0], "iterations") && DemCSVColumn_Private(&th, "step") >= 0) xc = DemCSVColumn_Private(&th, "step") + 1;
      DemGpPlot(gp, one[k][1], one[k][2], xc == ct + 1 ? "time [s]" : "step", one[k][3], "../thermo.csv", xc, 1, yc, nm, NULL);
      npng++;
    }
  }
  {
    PetscInt cb = DemCSVColumn_Private(&th, "e_balance");
    if (cb >= 0 && cb + 1 < th.ncol) {
      PetscInt     yc[64];
      const char  *nm[64];
      for (PetscInt c = cb + 1; c < th.ncol && nextra < 64; c++) yc[nextra] = c + 1, nm[nextra++] = th.names[c];
      DemGpPlot(gp, "extra.png", "plugin thermo columns", "time [s]", "value", "../thermo.csv", ct + 1, nextra, yc, nm, NULL);
      npng++;
    }
  }
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/walls.csv", dir));
  PetscCall(DemCSVRead_Private(path, PETSC_FALSE, &wl, &haswalls));
  if (haswalls && wl.nrow > 0) {
    PetscInt cw = DemCSVColumn_Private(&wl, "wall"), cwt = DemCSVColumn_Private(&wl, "time");
    PetscInt ids[256], nid = 0;
    for (PetscInt r = 0; r < wl.nrow && cw >= 0; r++) {
      PetscInt  id  = (PetscInt)wl.v[r * wl.ncol + cw];
      PetscBool seen = PETSC_FALSE;
      for (PetscInt k = 0; k < nid; k++) seen = seen || ids[k] == id;
      if (!seen && nid < 256) ids[nid++] = id;
    }
    for (PetscInt k = 0; k < nid && cwt >= 0; k++) {
      const char *comp[3] = {"fx", "fy", "fz"};
      fprintf(gp, "set output 'wall_%d.png'\nset title 'reaction on wall %d'\nset xlabel 'time [s]'\nset ylabel 'force [N]'\nplot ", (int)ids[k], (int)ids[k]);
      for (int d = 0; d < 3; d++) fprintf(gp, "%s'../walls.csv' skip 1 using (column(%d) == %d ? column(%d) : 1/0):%d with lines lw 2 title '%s'", d ? ", \\\n     " : "", (int)(cw + 1), (int)ids[k], (int)(cwt + 1), (int)(DemCSVColumn_Private(&wl, comp[d]) + 1), comp[d]);
      fprintf(gp, "\n");
      npng++;
    }
  }
  fclose(gp);
  PetscCall(DemCSVFree_Private(&th));
  if (haswalls) PetscCall(DemCSVFree_Private(&wl));
  PetscCall(DemGnuplotRun_Private(pdir, "plot.gp", &found, &status));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_SUP, "plot: gnuplot not found (%s); install it (Debian: apt-get install gnuplot-nox) and rerun, or run the script %s yourself", getenv("MMDEM_GNUPLOT") && getenv("MMDEM_GNUPLOT")[0] ? "MMDEM_GNUPLOT is not an executable" : "not in PATH", script);
  PetscCheck(status == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "plot: gnuplot failed (exit status %d); see %s/gnuplot.log", status, pdir);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "plot: %" PetscInt_FMT " PNG files in %s\n", npng, pdir));
  PetscFunctionReturn(PETSC_SUCCESS);
}
