/*
  test_vtk.c - the VTK output shim (dem_vtk.h), read back by an independent reader: VTK's own
  XML readers in Python (tests/tools/vtk_read.py, run with /usr/bin/python3). Writes points,
  lines and surfaces with known values (including empty ones) into a fresh directory under /tmp,
  checks counts, connectivity and every value read back for exact equality, checks a .pvd with
  xml.etree, the error paths, and that no temporary file is left behind. One rank.
*/
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dem_test.h"
#include "dem_vtk.h"

#define MAXV 4096

static char dir[64];
static char reader[4096];

/* output of one vtk_read.py run */
static char *out;

static void join(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

/* the helper script: from the repository root (where tests/run.sh runs), else beside the binary */
static void find_reader(void)
{
  char    exe[2048];
  ssize_t n;
  snprintf(reader, sizeof reader, "tests/tools/vtk_read.py");
  if (access(reader, R_OK) == 0) return;
  n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    char *slash;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(reader, sizeof reader, "%s/../../tests/tools/vtk_read.py", exe);
  }
}

/* runs the reader on file; returns its exit status, output in out */
static int run_reader(const char *file)
{
  char   cmd[8192];
  size_t len = 0, cap = 1 << 16;
  FILE  *p;
  int    st;
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' 2>&1", reader, file);
  free(out);
  out = malloc(cap);
  p = popen(cmd, "r");
  if (!p) return -1;
  for (;;) {
    size_t got;
    if (cap - len < 4096) out = realloc(out, cap *= 2);
    got = fread(out + len, 1, cap - len - 1, p);
    if (got == 0) break;
    len += got;
  }
  out[len] = '\0';
  st = pclose(p);
  return st;
}

/* the rest of the output line whose first token is key (and, if name is given, second token name) */
static const char *line_of(const char *key, const char *name)
{
  const char *p = out;
  size_t      k = strlen(key), m = name ? strlen(name) : 0;
  while (p && *p) {
    if (!strncmp(p, key, k) && p[k] == ' ') {
      if (!name) return p + k + 1;
      if (!strncmp(p + k + 1, name, m) && p[k + 1 + m] == ' ') return p + k + 2 + m;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
  return NULL;
}

static long count_of(const char *key)
{
  const char *l = line_of(key, NULL);
  return l ? strtol(l, NULL, 10) : -1;
}

/* "key COUNT v..." -> COUNT (or -1), values into v[max] */
static long values_of(const char *key, double *v, long max)
{
  const char *l = line_of(key, NULL);
  char       *e;
  long        n, i;
  if (!l) return -1;
  n = strtol(l, &e, 10);
  for (i = 0; i < n && i < max; i++) v[i] = strtod(e, &e);
  return n;
}

typedef struct {
  char      type[16];
  int       ncomp;
  long      ntuples;
  double    v[MAXV];
  long long iv[MAXV];
} Read;

/* "pointdata NAME TYPE NCOMP NTUPLES v..." -> 0 if found */
static int array_of(const char *key, const char *name, Read *r)
{
  const char *l = line_of(key, name);
  char       *e;
  long        i;
  int         used = 0;
  memset(r, 0, sizeof *r);
  if (!l || sscanf(l, "%15s %d %ld%n", r->type, &r->ncomp, &r->ntuples, &used) != 3) return -1;
  e = (char *)l + used;
  for (i = 0; i < r->ncomp * r->ntuples && i < MAXV; i++) {
    if (r->type[0] == 'I') {
      r->iv[i] = strtoll(e, &e, 10);
      r->v[i]  = (double)r->iv[i];
    } else r->v[i] = strtod(e, &e);
  }
  return 0;
}

static int same_doubles(const double *a, const double *b, long n)
{
  for (long i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof(double)) != 0 && a[i] != b[i]) return 0;
  return 1;
}

/* entries of dir that are not listed in keep */
static int stray_files(const char *const *keep, int nkeep, char *first, size_t len)
{
  DIR           *d = opendir(dir);
  struct dirent *e;
  int            n = 0;
  first[0] = '\0';
  if (!d) return -1;
  while ((e = readdir(d))) {
    int known = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    for (int i = 0; i < nkeep && !known; i++) known = !strcmp(e->d_name, keep[i]);
    if (!known) {
      if (!n) snprintf(first, len, "%s", e->d_name);
      n++;
    }
  }
  closedir(d);
  return n;
}

static void remove_dir(void)
{
  DIR           *d = opendir(dir);
  struct dirent *e;
  char           f[4096];
  if (!d) return;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    join(f, sizeof f, e->d_name);
    unlink(f);
  }
  closedir(d);
  rmdir(dir);
}

static void test_points(int fcomm)
{
  /* values that only survive an exact round trip */
  const double xyz[15]    = {0.0, 1.0 / 3.0, -2.5, 1e-300, 2.0, 3.0, -1.0, 0.1, 1e300, 4.5, 5.5, 6.5, 7.0, -8.0, 9.0 / 7.0};
  const double radius[5]  = {0.1, 0.2, 0.30000000000000004, 1.0 / 7.0, 5e-4};
  double       vel[15];
  const int64_t id[5]     = {0, 1, 42, (int64_t)1 << 40, ((int64_t)1 << 53) + 1};
  const int32_t mat[5]    = {0, 1, 2, -3, 2147483647};
  DemVtkArray  arr[4]     = {
    {"radius", 1, DEM_VTK_DOUBLE, radius},
    {"velocity", 3, DEM_VTK_DOUBLE, vel},
    {"id", 1, DEM_VTK_INT64, id},
    {"material", 1, DEM_VTK_INT32, mat},
  };
  char   path[256], err[512];
  double v[MAXV];
  Read   r;
  int    rc, ok;

  for (int i = 0; i < 15; i++) vel[i] = (i - 7) * 0.25 + 1.0 / (i + 3.0);
  join(path, sizeof path, "bodies_000001.vtp");
  rc = DemVtkWritePoints(fcomm, path, 5, xyz, 4, arr, err, sizeof err);
  DEM_CHECK("points: write returns 0", rc == 0, "rc %d: %s", rc, err);
  DEM_CHECK("points: err empty on success", err[0] == '\0', "err \"%s\"", err);
  rc = run_reader(path);
  DEM_CHECK("points: VTK reads the .vtp", rc == 0, "reader status %d:\n%s", rc, out);
  DEM_CHECK("points: 5 points", count_of("points") == 5, "got %ld", count_of("points"));
  DEM_CHECK("points: 5 vertex cells", count_of("verts") == 5, "got %ld", count_of("verts"));
  DEM_CHECK("points: no other cells", count_of("lines") == 0 && count_of("polys") == 0 && count_of("strips") == 0, "lines %ld polys %ld strips %ld", count_of("lines"), count_of("polys"), count_of("strips"));
  ok = values_of("xyz", v, MAXV) == 15 && same_doubles(v, xyz, 15);
  DEM_CHECK("points: coordinates exact", ok, "xyz line: %.200s", line_of("xyz", NULL));
  ok = values_of("verts.conn", v, MAXV) == 5;
  for (int i = 0; ok && i < 5; i++) ok = v[i] == i;
  DEM_CHECK("points: vertex i is point i", ok, "%.200s", line_of("verts.conn", NULL));
  ok = values_of("verts.offsets", v, MAXV) == 6;
  for (int i = 0; ok && i < 6; i++) ok = v[i] == i;
  DEM_CHECK("points: one point per vertex", ok, "%.200s", line_of("verts.offsets", NULL));

  rc = array_of("pointdata", "radius", &r);
  DEM_CHECK("points: radius is Float64 x1 x5", !rc && !strcmp(r.type, "Float64") && r.ncomp == 1 && r.ntuples == 5, "rc %d type %s ncomp %d ntuples %ld", rc, r.type, r.ncomp, r.ntuples);
  DEM_CHECK("points: radius values exact", !rc && same_doubles(r.v, radius, 5), "%.200s", line_of("pointdata", "radius"));
  rc = array_of("pointdata", "velocity", &r);
  DEM_CHECK("points: velocity is Float64 x3 x5", !rc && !strcmp(r.type, "Float64") && r.ncomp == 3 && r.ntuples == 5, "rc %d type %s ncomp %d ntuples %ld", rc, r.type, r.ncomp, r.ntuples);
  DEM_CHECK("points: velocity values exact (tuple-major)", !rc && same_doubles(r.v, vel, 15), "%.200s", line_of("pointdata", "velocity"));
  rc = array_of("pointdata", "id", &r);
  DEM_CHECK("points: id is Int64 x1 x5", !rc && !strcmp(r.type, "Int64") && r.ncomp == 1 && r.ntuples == 5, "rc %d type %s ncomp %d ntuples %ld", rc, r.type, r.ncomp, r.ntuples);
  ok = !rc;
  for (int i = 0; ok && i < 5; i++) ok = r.iv[i] == id[i];
  DEM_CHECK("points: id values exact (incl. 2^53+1)", ok, "%.200s", line_of("pointdata", "id"));
  rc = array_of("pointdata", "material", &r);
  DEM_CHECK("points: material is Int32 x1 x5", !rc && !strcmp(r.type, "Int32") && r.ncomp == 1 && r.ntuples == 5, "rc %d type %s ncomp %d ntuples %ld", rc, r.type, r.ncomp, r.ntuples);
  ok = !rc;
  for (int i = 0; ok && i < 5; i++) ok = r.iv[i] == mat[i];
  DEM_CHECK("points: material values exact", ok, "%.200s", line_of("pointdata", "material"));
  DEM_CHECK("points: no cell data", line_of("celldata", NULL) == NULL, "%.200s", line_of("celldata", NULL));

  /* overwriting an existing file (fewer points, one array) goes through the same rename */
  rc = DemVtkWritePoints(fcomm, path, 2, xyz, 1, arr, err, sizeof err);
  DEM_CHECK("points: overwrite returns 0", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("points: overwritten file has 2 points, 1 array", rc == 0 && count_of("points") == 2 && line_of("pointdata", "velocity") == NULL && line_of("pointdata", "radius") != NULL, "status %d:\n%.400s", rc, out);
}

static void test_empty(int fcomm)
{
  DemVtkArray arr[2] = {{"radius", 1, DEM_VTK_DOUBLE, NULL}, {"id", 1, DEM_VTK_INT64, NULL}};
  DemVtkArray carr[1] = {{"force", 3, DEM_VTK_DOUBLE, NULL}};
  const double xyz[6] = {0, 0, 0, 1, 1, 1};
  char        path[256], err[512];
  Read        r;
  int         rc;

  join(path, sizeof path, "empty_points.vtp");
  rc = DemVtkWritePoints(fcomm, path, 0, NULL, 2, arr, err, sizeof err);
  DEM_CHECK("empty points: write returns 0", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("empty points: VTK reads it", rc == 0, "reader status %d:\n%s", rc, out);
  DEM_CHECK("empty points: 0 points, 0 cells", count_of("points") == 0 && count_of("verts") == 0, "points %ld verts %ld", count_of("points"), count_of("verts"));
  rc = array_of("pointdata", "id", &r);
  DEM_CHECK("empty points: arrays present with 0 tuples", !rc && !strcmp(r.type, "Int64") && r.ntuples == 0 && line_of("pointdata", "radius"), "rc %d type %s ntuples %ld", rc, r.type, r.ntuples);

  join(path, sizeof path, "empty_lines.vtp");
  rc = DemVtkWriteLines(fcomm, path, 2, xyz, 0, NULL, 1, carr, err, sizeof err);
  DEM_CHECK("lines with 0 segments: write returns 0", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("lines with 0 segments: 2 points, 0 lines", rc == 0 && count_of("points") == 2 && count_of("lines") == 0, "status %d:\n%.400s", rc, out);

  join(path, sizeof path, "empty_surface.vtp");
  rc = DemVtkWriteSurface(fcomm, path, 0, NULL, 0, NULL, 1, carr, err, sizeof err);
  DEM_CHECK("empty surface: write returns 0", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("empty surface: 0 points, 0 polys, array kept", rc == 0 && count_of("points") == 0 && count_of("polys") == 0 && line_of("celldata", "force"), "status %d:\n%.400s", rc, out);
}

static void test_lines(int fcomm)
{
  const double xyz[12]   = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1.25};
  const long   conn[6]   = {0, 1, 1, 2, 3, 0};
  const double fn[9]     = {1.5, -2.5, 3.5, 0.1, 0.2, 0.3, -1e10, 2e-10, 0};
  const double ft[3]     = {0.5, 1.0 / 3.0, 7};
  const int64_t pair[6]  = {10, 11, 11, 12, 13, 10};
  DemVtkArray  carr[3]   = {{"normal_force", 3, DEM_VTK_DOUBLE, fn}, {"tangential_force", 1, DEM_VTK_DOUBLE, ft}, {"pair", 2, DEM_VTK_INT64, pair}};
  char         path[256], err[512];
  double       v[MAXV];
  Read         r;
  int          rc, ok;

  join(path, sizeof path, "contacts_000001.vtp");
  rc = DemVtkWriteLines(fcomm, path, 4, xyz, 3, conn, 3, carr, err, sizeof err);
  DEM_CHECK("lines: write returns 0", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("lines: VTK reads the .vtp", rc == 0, "reader status %d:\n%s", rc, out);
  DEM_CHECK("lines: 4 points, 3 lines, nothing else", count_of("points") == 4 && count_of("lines") == 3 && count_of("verts") == 0 && count_of("polys") == 0, "points %ld lines %ld verts %ld polys %ld", count_of("points"), count_of("lines"), count_of("verts"), count_of("polys"));
  DEM_CHECK("lines: coordinates exact", values_of("xyz", v, MAXV) == 12 && same_doubles(v, xyz, 12), "%.200s", line_of("xyz", NULL));
  ok = values_of("lines.conn", v, MAXV) == 6;
  for (int i = 0; ok && i < 6; i++) ok = v[i] == conn[i];
  DEM_CHECK("lines: connectivity as given", ok, "%.200s", line_of("lines.conn", NULL));
  ok = values_of("lines.offsets", v, MAXV) == 4 && v[0] == 0 && v[1] == 2 && v[2] == 4 && v[3] == 6;
  DEM_CHECK("lines: two points per line", ok, "%.200s", line_of("lines.offsets", NULL));
  rc = array_of("celldata", "normal_force", &r);
  DEM_CHECK("lines: normal_force Float64 x3 x3, exact", !rc && !strcmp(r.type, "Float64") && r.ncomp == 3 && r.ntuples == 3 && same_doubles(r.v, fn, 9), "%.300s", line_of("celldata", "normal_force"));
  rc = array_of("celldata", "tangential_force", &r);
  DEM_CHECK("lines: tangential_force Float64 x1 x3, exact", !rc && r.ncomp == 1 && r.ntuples == 3 && same_doubles(r.v, ft, 3), "%.300s", line_of("celldata", "tangential_force"));
  rc = array_of("celldata", "pair", &r);
  ok = !rc && !strcmp(r.type, "Int64") && r.ncomp == 2 && r.ntuples == 3;
  for (int i = 0; ok && i < 6; i++) ok = r.iv[i] == pair[i];
  DEM_CHECK("lines: pair Int64 x2 x3, exact", ok, "%.300s", line_of("celldata", "pair"));
  DEM_CHECK("lines: no point data", line_of("pointdata", NULL) == NULL, "%.200s", line_of("pointdata", NULL));
}

static void test_surface(int fcomm)
{
  /* a tetrahedron's surface, outward normals */
  const double xyz[12]  = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  const long   tri[12]  = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  const int32_t wall[4] = {7, 7, 8, 9};
  const double area[4]  = {0.5, 0.5, 0.5, 0.8660254037844386};
  DemVtkArray  carr[2]  = {{"wall", 1, DEM_VTK_INT32, wall}, {"area", 1, DEM_VTK_DOUBLE, area}};
  char         path[256], err[512];
  double       v[MAXV];
  Read         r;
  int          rc, ok;

  join(path, sizeof path, "walls_000001.vtp");
  rc = DemVtkWriteSurface(fcomm, path, 4, xyz, 4, tri, 2, carr, err, sizeof err);
  DEM_CHECK("surface: write returns 0", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("surface: VTK reads the .vtp", rc == 0, "reader status %d:\n%s", rc, out);
  DEM_CHECK("surface: 4 points, 4 polys, nothing else", count_of("points") == 4 && count_of("polys") == 4 && count_of("verts") == 0 && count_of("lines") == 0, "points %ld polys %ld", count_of("points"), count_of("polys"));
  DEM_CHECK("surface: coordinates exact", values_of("xyz", v, MAXV) == 12 && same_doubles(v, xyz, 12), "%.200s", line_of("xyz", NULL));
  ok = values_of("polys.conn", v, MAXV) == 12;
  for (int i = 0; ok && i < 12; i++) ok = v[i] == tri[i];
  DEM_CHECK("surface: triangles as given", ok, "%.200s", line_of("polys.conn", NULL));
  ok = values_of("polys.offsets", v, MAXV) == 5;
  for (int i = 0; ok && i < 5; i++) ok = v[i] == 3 * i;
  DEM_CHECK("surface: three points per polygon", ok, "%.200s", line_of("polys.offsets", NULL));
  rc = array_of("celldata", "wall", &r);
  ok = !rc && !strcmp(r.type, "Int32") && r.ncomp == 1 && r.ntuples == 4;
  for (int i = 0; ok && i < 4; i++) ok = r.iv[i] == wall[i];
  DEM_CHECK("surface: wall Int32 per triangle, exact", ok, "%.200s", line_of("celldata", "wall"));
  rc = array_of("celldata", "area", &r);
  DEM_CHECK("surface: area Float64 per triangle, exact", !rc && r.ntuples == 4 && same_doubles(r.v, area, 4), "%.200s", line_of("celldata", "area"));
}

static void test_pvd(void)
{
  const double times[3]      = {0.0, 0.001, 1.0 / 3.0};
  const char *const files[3] = {"bodies_000001.vtp", "contacts_000001.vtp", "odd & <name>.vtp"};
  char        path[256], err[512], expect[128];
  int         rc;

  join(path, sizeof path, "bodies.pvd");
  rc = DemVtkWritePvd(path, 3, times, files, err, sizeof err);
  DEM_CHECK("pvd: write returns 0", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("pvd: xml.etree parses it", rc == 0, "reader status %d:\n%s", rc, out);
  DEM_CHECK("pvd: 3 datasets", count_of("datasets") == 3, "got %ld:\n%.400s", count_of("datasets"), out);
  snprintf(expect, sizeof expect, "dataset 0.0 1 bodies_000001.vtp\n");
  DEM_CHECK("pvd: first dataset, time 0, file exists", strstr(out, expect) != NULL, "\n%.400s", out);
  snprintf(expect, sizeof expect, "dataset 0.001 1 contacts_000001.vtp\n");
  DEM_CHECK("pvd: second dataset, time 0.001, file exists", strstr(out, expect) != NULL, "\n%.400s", out);
  snprintf(expect, sizeof expect, "dataset 0.3333333333333333 0 odd & <name>.vtp\n");
  DEM_CHECK("pvd: escaped name and exact time round-trip", strstr(out, expect) != NULL, "\n%.400s", out);

  join(path, sizeof path, "empty.pvd");
  rc = DemVtkWritePvd(path, 0, NULL, NULL, err, sizeof err);
  DEM_CHECK("pvd: empty collection written", rc == 0, "rc %d: %s", rc, err);
  rc = run_reader(path);
  DEM_CHECK("pvd: empty collection parses, 0 datasets", rc == 0 && count_of("datasets") == 0, "status %d:\n%.400s", rc, out);
}

static void test_errors(int fcomm)
{
  const double xyz[6]  = {0, 0, 0, 1, 1, 1};
  const long   bad[2]  = {0, 2};
  const double r[2]    = {1, 2};
  const double t[1]    = {NAN};
  const char *const f[1] = {"x.vtp"};
  DemVtkArray  dup[2]  = {{"r", 1, DEM_VTK_DOUBLE, r}, {"r", 1, DEM_VTK_DOUBLE, r}};
  DemVtkArray  badt[1] = {{"r", 1, 7, r}};
  char         path[256], err[512];
  struct stat  st;
  int          rc;

  join(path, sizeof path, "no_such_dir/x.vtp");
  err[0] = '\0';
  rc = DemVtkWritePoints(fcomm, path, 2, xyz, 0, NULL, err, sizeof err);
  DEM_CHECK("error: missing directory fails with a message", rc != 0 && strlen(err) > 0, "rc %d err \"%s\"", rc, err);
  printf("# message: %s\n", err);

  join(path, sizeof path, "x.vtk");
  rc = DemVtkWritePoints(fcomm, path, 2, xyz, 0, NULL, err, sizeof err);
  DEM_CHECK("error: path not ending in .vtp", rc != 0 && strstr(err, ".vtp"), "rc %d err \"%s\"", rc, err);

  join(path, sizeof path, "bad_lines.vtp");
  rc = DemVtkWriteLines(fcomm, path, 2, xyz, 1, bad, 0, NULL, err, sizeof err);
  DEM_CHECK("error: line index out of range", rc != 0 && strstr(err, "outside"), "rc %d err \"%s\"", rc, err);
  DEM_CHECK("error: nothing written on failure", stat(path, &st) != 0, "%s exists", path);

  join(path, sizeof path, "bad_tri.vtp");
  rc = DemVtkWriteSurface(fcomm, path, 2, xyz, 1, (const long[]){0, 1, -1}, 0, NULL, err, sizeof err);
  DEM_CHECK("error: triangle index out of range", rc != 0 && strstr(err, "outside"), "rc %d err \"%s\"", rc, err);

  join(path, sizeof path, "dup.vtp");
  rc = DemVtkWritePoints(fcomm, path, 2, xyz, 2, dup, err, sizeof err);
  DEM_CHECK("error: duplicate array name", rc != 0 && strstr(err, "twice"), "rc %d err \"%s\"", rc, err);
  rc = DemVtkWritePoints(fcomm, path, 2, xyz, 1, badt, err, sizeof err);
  DEM_CHECK("error: unknown array type", rc != 0 && strstr(err, "type"), "rc %d err \"%s\"", rc, err);
  rc = DemVtkWritePoints(fcomm, path, 2, NULL, 0, NULL, err, sizeof err);
  DEM_CHECK("error: points without coordinates", rc != 0 && strlen(err) > 0, "rc %d err \"%s\"", rc, err);
  rc = DemVtkWritePoints(fcomm, path, 2, xyz, 0, NULL, NULL, 0);
  DEM_CHECK("error-free call accepts err = NULL", rc == 0, "rc %d", rc);
  unlink(path);

  join(path, sizeof path, "nan.pvd");
  rc = DemVtkWritePvd(path, 1, t, f, err, sizeof err);
  DEM_CHECK("error: pvd with a non-finite time", rc != 0 && strlen(err) > 0 && stat(path, &st) != 0, "rc %d err \"%s\"", rc, err);
  join(path, sizeof path, "no_such_dir/x.pvd");
  rc = DemVtkWritePvd(path, 1, r, f, err, sizeof err);
  DEM_CHECK("error: pvd in a missing directory", rc != 0 && strlen(err) > 0, "rc %d err \"%s\"", rc, err);
}

int main(int argc, char **argv)
{
  static const char *const keep[] = {"bodies_000001.vtp", "empty_points.vtp", "empty_lines.vtp", "empty_surface.vtp", "contacts_000001.vtp", "walls_000001.vtp", "bodies.pvd", "empty.pvd"};
  char stray[256];
  int  fcomm, n;

  MPI_Init(&argc, &argv);
  fcomm = (int)MPI_Comm_c2f(MPI_COMM_WORLD);
  snprintf(dir, sizeof dir, "/tmp/mmdem-vtk-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    MPI_Finalize();
    return 1;
  }
  find_reader();
  DEM_CHECK("reader script found", access(reader, R_OK) == 0, "%s not readable (run from the repository root)", reader);

  test_points(fcomm);
  test_empty(fcomm);
  test_lines(fcomm);
  test_surface(fcomm);
  test_pvd();
  test_errors(fcomm);

  n = stray_files(keep, (int)(sizeof keep / sizeof keep[0]), stray, sizeof stray);
  DEM_CHECK("no temporary or stray files left", n == 0, "%d stray, e.g. %s", n, stray);

  remove_dir();
  free(out);
  MPI_Finalize();
  return dem_test_failed;
}
