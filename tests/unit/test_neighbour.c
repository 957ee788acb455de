/*
  test_neighbour.c - unit test of the neighbour list's pair search (src/search/neighbour.c, step
  4 of DemNeighbourBuild_Private: linked cells searched with half the stencil, session 17).

  Polydisperse spheres (r = 0.8 .. 1.0 mm, skin 0.5 mm: cells of 2.5 mm) at random, without
  overlaps, in boxes periodic in x and y (and one not periodic) whose sides hold 1, 2, 3 and 6
  cells: with one cell along a periodic direction the offsets -1, 0, +1 are three images of the
  same cell, with two the offsets -1 and +1 reach the same cell through different images, the
  cases where a half stencil can lose or double a pair. A fifth of the bodies are fixed (pairs of
  two fixed bodies are not listed). Checked against a brute-force search computed here over all
  pairs of ids and the images -1, 0, +1 along each periodic direction:
    - the list's pairs, as (lower id, higher id, image shift), are exactly the brute-force ones,
      each once (so none missing, none twice, no body with its own image);
    - the list's order is that of a search over the whole stencil (by the lower body index,
      the cell offset from it, the other body's place in the cells), computed here, with which
      the forces are summed in the same order, and so rounded, as before the half stencil;
    - the same after 400 verlet steps from random velocities (bodies moved across cells and
      the box's periodic faces) and a forced rebuild, the history path of a rebuild with the
      old list.
*/
#include "demimpl.h"
#include "dem_test.h"
#include "dem_test_sim.h"

static unsigned long long lcg_state = 0x2545F4914F6CDD1DULL;
static double Uni(void)
{
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct {
  long long a, b;
  int       sx, sy;
} Key;

static int CmpKey(const void *p, const void *q)
{
  const Key *x = p, *y = q;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  if (x->sx != y->sx) return x->sx < y->sx ? -1 : 1;
  return x->sy < y->sy ? -1 : x->sy > y->sy;
}

static double SKIN = 0.0005; /* the box's search.skin */

/* brute force over the store's bodies (by id), with its current positions; returns the count */
static PetscInt BruteKeys(DemSim sim, const PetscReal L[2], const PetscBool per[2], Key *keys)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      m  = 0;
  for (PetscInt i = 0; i < bs->n; i++)
    for (PetscInt j = 0; j < bs->n; j++) {
      const PetscInt a = bs->gid[i] < bs->gid[j] ? i : j, b = a == i ? j : i;
      if (bs->gid[i] >= bs->gid[j]) continue; /* each unordered pair once, a the lower id */
      if ((bs->flags[a] & bs->flags[b] & DEM_FIXED) || ((bs->flags[a] | bs->flags[b]) & DEM_WALL)) continue; /* walls: not in the cells */
      for (int sx = -1; sx <= 1; sx++)
        for (int sy = -1; sy <= 1; sy++) {
          const PetscReal d0 = bs->x[3 * a] - bs->x[3 * b] - (per[0] ? sx * L[0] : (sx ? 1e9 : 0)), d1 = bs->x[3 * a + 1] - bs->x[3 * b + 1] - (per[1] ? sy * L[1] : (sy ? 1e9 : 0)), d2 = bs->x[3 * a + 2] - bs->x[3 * b + 2];
          const PetscReal rc = bs->radius[a] + bs->radius[b] + SKIN;
          if (d0 * d0 + d1 * d1 + d2 * d2 < rc * rc) keys[m++] = (Key){(long long)bs->gid[a], (long long)bs->gid[b], sx, sy};
        }
    }
  qsort(keys, (size_t)m, sizeof(*keys), CmpKey);
  return m;
}

/* the list's body pairs (walls aside) as keys; the shift is x_a - x_b minus the pair's distance vector */
static PetscInt ListKeys(DemSim sim, const PetscReal L[2], Key *keys)
{
  DemBodyStore    *bs = &sim->bodies;
  PetscInt         m  = 0;
  const PetscReal *shift;
  if (DemNeighbourShifts_Private(sim, &shift)) return -1; /* made on demand (neighbour.c) */
  for (PetscInt k = 0; k < sim->nl.npairs; k++) {
    const PetscInt a = sim->nl.a[k], b = sim->nl.b[k];
    Key            key;
    if ((bs->flags[a] | bs->flags[b]) & DEM_WALL) continue;
    key.a  = (long long)bs->gid[a], key.b = (long long)bs->gid[b];
    key.sx = (int)lround(shift[3 * k] / L[0]), key.sy = (int)lround(shift[3 * k + 1] / L[1]);
    if (key.a > key.b) { /* the list orders by id: counted as a mismatch below if not */
      long long t = key.a;
      key.a = key.b, key.b = t, key.sx = -key.sx, key.sy = -key.sy;
      key.sx += 1000; /* marks the wrong orientation */
    }
    keys[m++] = key;
  }
  qsort(keys, (size_t)m, sizeof(*keys), CmpKey);
  return m;
}

/* the order of the list: within the pairs without and then with an image shift (step 6 of the
   build), by the lower body index i, then the offset of the other body's (cell, image) from i's
   cell in z-y-x order, then the other body's place in the cells' order: the order of a search
   over the whole stencil from each body to the bodies of higher index, computed here from the
   positions and the cell grid */
typedef struct {
  int     shifted;
  PetscInt i, off, pos, k;
} Ord;
static int CmpOrd(const void *p, const void *q)
{
  const Ord *x = p, *y = q;
  if (x->shifted != y->shifted) return x->shifted - y->shifted;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  if (x->off != y->off) return x->off < y->off ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}
static PetscInt CellCoord(DemSim sim, PetscInt i, int d)
{
  PetscReal c = PetscFloorReal((sim->bodies.x[3 * i + d] - sim->lo[d]) / sim->nl.cell[d]);
  return c >= sim->nl.nc[d] - 1 ? sim->nl.nc[d] - 1 : c >= 0 ? (PetscInt)c : 0;
}
static void CheckOrder(const char *what, DemSim sim)
{
  DemNeighbourList *nl  = &sim->nl;
  const PetscInt    nb  = sim->bodies.n;
  PetscInt         *pos = malloc(sizeof(PetscInt) * (size_t)nb), m = 0, bad = 0;
  Ord              *o   = malloc(sizeof(Ord) * (size_t)(nl->npairs + 1));
  char              name[256];
  for (PetscInt p = 0; p < nl->cellstart[nl->nc[0] * nl->nc[1] * nl->nc[2]]; p++) pos[nl->cellbody[p]] = p;
  for (PetscInt k = 0; k < nl->npairs; k++) {
    const PetscInt a = nl->a[k], b = nl->b[k], s = nl->shiftidx[k], sd[3] = {s / 9 - 1, (s / 3) % 3 - 1, s % 3 - 1};
    PetscInt       off[3];
    if ((sim->bodies.flags[a] | sim->bodies.flags[b]) & DEM_WALL) continue;
    for (int d = 0; d < 3; d++) off[d] = (a < b ? 1 : -1) * (CellCoord(sim, b, d) + sd[d] * nl->nc[d] - CellCoord(sim, a, d)) + 1;
    o[m++] = (Ord){s != DEM_NOSHIFT, PetscMin(a, b), (off[2] * 3 + off[1]) * 3 + off[0], pos[PetscMax(a, b)], k};
  }
  qsort(o, (size_t)m, sizeof(*o), CmpOrd);
  for (PetscInt q = 1; q < m; q++) bad += o[q].k < o[q - 1].k;
  snprintf(name, sizeof(name), "%s: the list is in the whole stencil's order", what);
  DEM_CHECK(name, bad == 0, "%d of %d pairs out of order", (int)bad, (int)m);
  free(pos);
  free(o);
}

static void Compare(const char *what, DemSim sim, const PetscReal L[2], const PetscBool per[2])
{
  const PetscInt n  = sim->bodies.n;
  Key           *rk = malloc(sizeof(Key) * (size_t)(9 * n * n + 1)), *lk = malloc(sizeof(Key) * (size_t)(sim->nl.npairs + 1));
  PetscInt       nr = BruteKeys(sim, L, per, rk), nlst = ListKeys(sim, L, lk), dup = 0;
  char           name[256];
  for (PetscInt k = 1; k < nlst; k++) dup += !CmpKey(lk + k - 1, lk + k);
  snprintf(name, sizeof(name), "%s: the list's pairs (ids, image) are the brute-force ones, each once", what);
  DEM_CHECK(name, nr == nlst && !dup && !memcmp(rk, lk, sizeof(Key) * (size_t)nr), "%d listed (%d twice), %d expected", (int)nlst, (int)dup, (int)nr);

  free(rk);
  free(lk);
  CheckOrder(what, sim);
}

int main(int argc, char **argv)
{
  const struct {
    double    Lx, Ly;
    PetscBool px, py;
    int       nbody;
  } box[] = {
    {0.0042, 0.0055, PETSC_TRUE, PETSC_TRUE, 14},  /* 1 x 2 cells */
    {0.0055, 0.0042, PETSC_TRUE, PETSC_TRUE, 14},  /* 2 x 1 */
    {0.0042, 0.0042, PETSC_TRUE, PETSC_TRUE, 11},  /* 1 x 1 */
    {0.0080, 0.0160, PETSC_TRUE, PETSC_TRUE, 80},  /* 3 x 6 */
    {0.0160, 0.0055, PETSC_TRUE, PETSC_TRUE, 55},  /* 6 x 2 */
    {0.0080, 0.0080, PETSC_FALSE, PETSC_FALSE, 40}, /* 3 x 3, walls of the domain only */
    {0.0250, 0.0250, PETSC_TRUE, PETSC_TRUE, 600},   /* 10 x 10, dense: runs of cells, several pairs per body */
    {0.0250, 0.0250, PETSC_TRUE, PETSC_TRUE, 600}    /* the same with skin 2 mm: cells of 4 mm, ~20 pairs per body */
  };
  char dir[64];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_neighbour.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  PetscCall(DemRegisterAll());
  for (size_t c = 0; c < sizeof(box) / sizeof(box[0]); c++) {
    const PetscReal L[2] = {box[c].Lx, box[c].Ly}, H = 0.012;
    SKIN = c == 7 ? 0.002 : 0.0005;
    const PetscBool per[2] = {box[c].px, box[c].py};
    static double   P[1000][4];
    int             np = 0, tries = 0;
    char            csv[2][256], yaml[4096], what[128];
    DemSim          sim;
    DemNode         root;
    FILE           *fp[2];

    while (np < box[c].nbody && tries++ < 2000000) { /* random, no overlap (through the images) */
      double p[4] = {Uni() * L[0], Uni() * L[1], 0.0011 + Uni() * (H - 0.0022), 0.0008 + 0.0002 * Uni()};
      int    ok   = 1;
      if (!per[0]) p[0] = p[3] + Uni() * (L[0] - 2 * p[3]);
      if (!per[1]) p[1] = p[3] + Uni() * (L[1] - 2 * p[3]);
      for (int q = 0; q < np && ok; q++) {
        double d[3] = {p[0] - P[q][0], p[1] - P[q][1], p[2] - P[q][2]};
        for (int k = 0; k < 2; k++)
          if (per[k]) d[k] -= L[k] * round(d[k] / L[k]);
        ok = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) > p[3] + P[q][3] + 1e-6;
      }
      if (ok) memcpy(P[np++], p, sizeof(p));
    }
    for (int g = 0; g < 2; g++) { /* mobile bodies, and every fifth fixed */
      snprintf(csv[g], sizeof(csv[g]), "%s/b%zu_%d.csv", dir, c, g);
      fp[g] = fopen(csv[g], "w");
      fprintf(fp[g], "x,y,z,vx,vy,vz,radius\n");
    }
    for (int q = 0; q < np; q++) fprintf(fp[q % 5 == 0], "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", P[q][0], P[q][1], P[q][2], 2.0 * (Uni() - 0.5), 2.0 * (Uni() - 0.5), 2.0 * (Uni() - 0.5), P[q][3]);
    fclose(fp[0]), fclose(fp[1]);
    snprintf(yaml, sizeof(yaml),
             "name: nb\n"
             "domain: {lo: [0, 0, 0], hi: [%.17g, %.17g, %.17g], periodic: [%s, %s, false]}\n"
             "gravity: [0, 0, 0]\n"
             "materials:\n"
             "  glass: {density: 2500, friction: 0.5}\n"
             "contact:\n"
             "  - {pair: default, law: hooke, params: {kn: 400, gamma_n: 100, mu: 0.5}}\n"
             "shapes:\n"
             "  bead: {type: sphere, radius: 0.001}\n"
             "bodies:\n"
             "  - {shape: bead, material: glass, file: %s}\n"
             "  - {shape: bead, material: glass, fixed: true, file: %s}\n"
             "walls:\n"
             "  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: glass}\n"
             "  - {type: plane, name: lid, point: [0, 0, %.17g], normal: [0, 0, -1], material: glass}\n"
             "search: {skin: %.17g}\n"
             "integrator: {type: verlet, dt: 2.0e-6}\n"
             "run: {steps: 10}\n"
             "output: {vtk_every: -1, thermo_every: 100}\n",
             L[0], L[1], H, per[0] ? "true" : "false", per[1] ? "true" : "false", csv[0], csv[1], H, SKIN);
    if (!per[0] || !per[1]) { /* side walls where the box is not periodic */
      char *w = strstr(yaml, "search:");
      char  tail[512];
      snprintf(tail, sizeof(tail), "%s", w);
      snprintf(w, sizeof(yaml) - (size_t)(w - yaml),
               "  - {type: plane, name: w0, point: [0, 0, 0], normal: [1, 0, 0], material: glass}\n"
               "  - {type: plane, name: w1, point: [%.17g, 0, 0], normal: [-1, 0, 0], material: glass}\n"
               "  - {type: plane, name: w2, point: [0, 0, 0], normal: [0, 1, 0], material: glass}\n"
               "  - {type: plane, name: w3, point: [0, %.17g, 0], normal: [0, -1, 0], material: glass}\n%s",
               L[0], L[1], tail);
    }
    {
      char name[32];
      snprintf(name, sizeof(name), "nb%zu", c);
      PetscCall(DemTestMakeSim(dir, name, yaml, NULL, &sim, &root));
    }
    snprintf(what, sizeof(what), "box %zu (%d x %d cells, %d bodies, %s)", c, (int)sim->nl.nc[0], (int)sim->nl.nc[1], np, per[0] ? "periodic x y" : "walls");
    DEM_CHECK("the box has the planned bodies", sim->nparticles == np && np == box[c].nbody, "%d of %d placed", np, box[c].nbody);
    Compare(what, sim, L, per);
    for (int s = 0; s < 400; s++) {
      DemStepInfo info;
      PetscCall(DemIntegratorStep(sim->integ, sim, sim->dt, &info));
      sim->step++;
    }
    PetscCall(DemSimUpdateNeighbours(sim, NULL, PETSC_TRUE));
    snprintf(what + strlen(what), sizeof(what) - strlen(what), ", after 400 steps and a rebuild (%d builds)", (int)sim->nl.nbuilds);
    Compare(what, sim, L, per);
    PetscCall(DemSimDestroy(&sim));
    PetscCall(DemConfigDestroy(&root));
  }
  PetscCall(PetscFinalize());
  return dem_test_failed;
}
