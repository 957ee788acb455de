/*
  deoverlap.c - moves equal spheres apart until none overlaps another or the floor z = 0,
  displacing them as little as it can. Part of the settle benchmark (bench.py), its fallback
  for an mmdem that refuses the settled bed because its bodies overlap at the start (contacts
  at rest under gravity all overlap a little): the bed is then loaded in both codes in this
  just-touching form and gravity is ramped up again before the timed steps.

    deoverlap IN.csv OUT.csv LX LY DIAMETER

  IN.csv: header line, then x,y,z per line (further columns ignored). Periodic in x (period
  LX) and y (period LY), floor at z = 0. OUT.csv: x,y,z, wrapped into [0, LX) x [0, LY).
  Method: Gauss-Seidel sweeps over the candidate pairs (centres closer than 1.1 d), in order
  of height, that push each overlapping pair apart symmetrically along its line of centres
  to a distance d (1 + 1e-9); bodies below the floor are lifted to z = d/2 (1 + 1e-9). The
  candidate list is rebuilt when a body moved more than 0.04 d since the last build. Stops
  when no pair is closer than d and no body is below d/2; prints the sweeps and the largest
  displacement.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int a, b;
  double zmin;
} Pair;

static int cmp_pair(const void *p, const void *q)
{
  const Pair *x = p, *y = q;
  return (x->zmin > y->zmin) - (x->zmin < y->zmin);
}

static double wrap(double v, double L)
{
  v = fmod(v, L);
  if (v < 0) v += L;
  if (v >= L) v = 0;
  return v;
}

static Pair *build(int n, const double *x, double Lx, double Ly, double cut, int *np)
{
  int     nx = (int)(Lx / cut), ny = (int)(Ly / cut), nz, cap = 16 * n + 1024, cnt = 0;
  double  zmax = 0, cx, cy;
  int    *head, *next;
  Pair   *p = malloc((size_t)cap * sizeof(Pair));
  if (nx < 3) nx = 3; /* with fewer than three cells a neighbour cell is visited twice */
  if (ny < 3) ny = 3;
  cx = Lx / nx, cy = Ly / ny;
  for (int i = 0; i < n; i++) zmax = fmax(zmax, x[3 * i + 2]);
  nz = (int)(zmax / cut) + 1;
  head = malloc((size_t)nx * ny * nz * sizeof(int));
  next = malloc((size_t)n * sizeof(int));
  for (int c = 0; c < nx * ny * nz; c++) head[c] = -1;
  for (int i = 0; i < n; i++) {
    int ix = (int)(wrap(x[3 * i], Lx) / cx), iy = (int)(wrap(x[3 * i + 1], Ly) / cy), iz = (int)(fmax(x[3 * i + 2], 0) / cut);
    if (ix >= nx) ix = nx - 1;
    if (iy >= ny) iy = ny - 1;
    if (iz >= nz) iz = nz - 1;
    int c   = (iz * ny + iy) * nx + ix;
    next[i] = head[c];
    head[c] = i;
  }
  for (int iz = 0; iz < nz; iz++)
    for (int iy = 0; iy < ny; iy++)
      for (int ix = 0; ix < nx; ix++)
        for (int i = head[(iz * ny + iy) * nx + ix]; i >= 0; i = next[i])
          for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++) {
                int jz = iz + dz, jy = (iy + dy + ny) % ny, jx = (ix + dx + nx) % nx;
                if (jz < 0 || jz >= nz) continue;
                for (int j = head[(jz * ny + jy) * nx + jx]; j >= 0; j = next[j]) {
                  double v[3];
                  if (j <= i) continue;
                  v[0] = x[3 * i] - x[3 * j], v[1] = x[3 * i + 1] - x[3 * j + 1], v[2] = x[3 * i + 2] - x[3 * j + 2];
                  v[0] -= Lx * nearbyint(v[0] / Lx);
                  v[1] -= Ly * nearbyint(v[1] / Ly);
                  if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] >= cut * cut) continue;
                  if (cnt == cap) p = realloc(p, (size_t)(cap *= 2) * sizeof(Pair));
                  p[cnt].a    = i;
                  p[cnt].b    = j;
                  p[cnt].zmin = fmin(x[3 * i + 2], x[3 * j + 2]);
                  cnt++;
                }
              }
  free(head);
  free(next);
  qsort(p, (size_t)cnt, sizeof(Pair), cmp_pair);
  *np = cnt;
  return p;
}

int main(int argc, char **argv)
{
  FILE   *fp;
  char    line[4096];
  int     n = 0, cap = 1024, np = 0, sweep;
  double *x, *x0, *xb, Lx, Ly, d, r, dt, rt, cut, maxmove = 0;
  Pair   *p;

  if (argc != 6) {
    fprintf(stderr, "usage: deoverlap IN.csv OUT.csv LX LY DIAMETER\n");
    return 2;
  }
  Lx = atof(argv[3]), Ly = atof(argv[4]), d = atof(argv[5]), r = 0.5 * d;
  dt = d * (1 + 1e-9), rt = r * (1 + 1e-9), cut = 1.1 * d;
  if (!(fp = fopen(argv[1], "r")) || !fgets(line, sizeof(line), fp)) {
    fprintf(stderr, "deoverlap: cannot read %s\n", argv[1]);
    return 1;
  }
  x = malloc((size_t)cap * 3 * sizeof(double));
  while (fgets(line, sizeof(line), fp)) {
    if (n == cap) x = realloc(x, (size_t)(cap *= 2) * 3 * sizeof(double));
    if (sscanf(line, "%lf,%lf,%lf", &x[3 * n], &x[3 * n + 1], &x[3 * n + 2]) == 3) n++;
  }
  fclose(fp);
  x0 = malloc((size_t)n * 3 * sizeof(double));
  xb = malloc((size_t)n * 3 * sizeof(double));
  memcpy(x0, x, (size_t)n * 3 * sizeof(double));
  memcpy(xb, x, (size_t)n * 3 * sizeof(double));
  p = build(n, x, Lx, Ly, cut, &np);
  for (sweep = 0; sweep < 200000; sweep++) {
    int    bad = 0;
    double moved = 0;
    for (int i = 0; i < n; i++)
      if (x[3 * i + 2] < r) x[3 * i + 2] = rt, bad++;
    for (int k = 0; k < np; k++) {
      int    a = p[k].a, b = p[k].b;
      double v[3], s2, s, m;
      v[0] = x[3 * a] - x[3 * b], v[1] = x[3 * a + 1] - x[3 * b + 1], v[2] = x[3 * a + 2] - x[3 * b + 2];
      v[0] -= Lx * nearbyint(v[0] / Lx);
      v[1] -= Ly * nearbyint(v[1] / Ly);
      s2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
      if (s2 >= d * d) continue;
      bad++;
      s = sqrt(s2);
      m = 0.5 * (dt - s) / s;
      for (int j = 0; j < 3; j++) x[3 * a + j] += m * v[j], x[3 * b + j] -= m * v[j];
    }
    if (!bad) break;
    for (int i = 0; i < n; i++) {
      double e0 = x[3 * i] - xb[3 * i], e1 = x[3 * i + 1] - xb[3 * i + 1], e2 = x[3 * i + 2] - xb[3 * i + 2];
      moved = fmax(moved, e0 * e0 + e1 * e1 + e2 * e2);
    }
    if (moved > 0.04 * 0.04 * d * d) {
      free(p);
      p = build(n, x, Lx, Ly, cut, &np);
      memcpy(xb, x, (size_t)n * 3 * sizeof(double));
    }
  }
  if (sweep == 200000) {
    fprintf(stderr, "deoverlap: overlaps remain after %d sweeps\n", sweep);
    return 1;
  }
  if (!(fp = fopen(argv[2], "w"))) {
    fprintf(stderr, "deoverlap: cannot write %s\n", argv[2]);
    return 1;
  }
  fprintf(fp, "x,y,z\n");
  for (int i = 0; i < n; i++) {
    double e0 = x[3 * i] - x0[3 * i], e1 = x[3 * i + 1] - x0[3 * i + 1], e2 = x[3 * i + 2] - x0[3 * i + 2];
    maxmove = fmax(maxmove, sqrt(e0 * e0 + e1 * e1 + e2 * e2));
    fprintf(fp, "%.17g,%.17g,%.17g\n", wrap(x[3 * i], Lx), wrap(x[3 * i + 1], Ly), x[3 * i + 2]);
  }
  fclose(fp);
  printf("deoverlap: %d bodies, %d sweeps, largest displacement %.3g m (%.3g d)\n", n, sweep, maxmove, maxmove / d);
  free(x), free(x0), free(xb), free(p);
  return 0;
}
