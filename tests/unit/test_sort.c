/*
  test_sort.c - unit test of src/search/sort.c: the spatial reordering of the body store.

  - The Hilbert key (DemHilbertKey_Private) on full 2^b grids, b = 1..5: the keys of the 8^b
    cells are exactly 0 .. 8^b - 1, and cells of consecutive keys share a face (one coordinate
    differs by one): the defining property of the curve, checked cell by cell.
  - A verlet run (a lattice of touching spheres sliding on a floor) set up with search.sort_every: 1 (the set-up's neighbour build reorders): every
    body's state is still the one the run description gave its id (lattice positions computed
    here from the lattice spec, radius, mass), the walls', the load's and output.track's indices
    point at the same ids, and the neighbour list's pairs, as pairs of ids, are exactly the pairs
    a brute-force search over all ids finds (computed here, with periodic images).
  - DemSimPermuteBodies_Private with a random permutation after some steps: every per-body
    column (x v w q f t m I radius shape material flags, a plugin field, fd, td, the build
    positions) goes with its id, and every pair keeps its contact history by ids.
  - DemSimGidOrder_Private lists the store in ascending id.
*/
#include "demimpl.h"
#include "dem_test.h"
#include "dem_test_sim.h"

static unsigned long long lcg_state = 0x9E3779B97F4A7C15ULL;
static unsigned Lcg(unsigned n)
{
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)((lcg_state >> 33) % n);
}

static void TestHilbert(void)
{
  for (int b = 1; b <= 5; b++) {
    const uint32_t side = 1u << b;
    const size_t   nc   = (size_t)side * side * side;
    uint32_t      *cell = malloc(3 * nc * sizeof(*cell));
    char          *seen = calloc(nc, 1);
    int            range = 1, adjacent = 1;
    for (uint32_t z = 0; z < side; z++)
      for (uint32_t y = 0; y < side; y++)
        for (uint32_t x = 0; x < side; x++) {
          uint32_t c[3] = {x, y, z};
          uint64_t k    = DemHilbertKey_Private(c, b);
          if (k >= nc || seen[k]) range = 0;
          else {
            seen[k] = 1;
            memcpy(cell + 3 * k, c, sizeof(c));
          }
        }
    for (size_t k = 0; range && k + 1 < nc; k++) {
      int d = 0;
      for (int j = 0; j < 3; j++) d += abs((int)cell[3 * k + j] - (int)cell[3 * k + 3 + j]);
      if (d != 1) adjacent = 0;
    }
    {
      char name[128];
      snprintf(name, sizeof(name), "hilbert b=%d: keys of the %zu cells are 0..%zu once each", b, nc, nc - 1);
      DEM_CHECK(name, range, "a key out of range or repeated");
      snprintf(name, sizeof(name), "hilbert b=%d: consecutive keys are face neighbours", b);
      DEM_CHECK(name, range && adjacent, "a jump along the curve");
    }
    free(cell);
    free(seen);
  }
}

/* the lattice of the run description below: id -> position (x fastest, then y, then z) */
#define NX 9
#define NY 7
#define NZ 5
#define SP 0.0025
static void LatticeX(int64_t id, PetscReal x[3])
{
  x[0] = 0.00125 + SP * (id % NX);
  x[1] = 0.00125 + SP * ((id / NX) % NY);
  x[2] = 0.0012 + SP * (id / (NX * NY));
}

static const char *yaml =
  "name: sort\n"
  "domain: {lo: [0, 0, 0], hi: [0.0225, 0.0175, 0.03], periodic: [true, true, false]}\n"
  "gravity: [0, 0, -9.81]\n"
  "materials:\n"
  "  glass: {density: 2500, friction: 0.5}\n"
  "contact:\n"
  "  - {pair: default, law: hooke, params: {kn: 400, kt: 114.3, gamma_n: 2800, gamma_t: 1400, mu: 0.5}}\n"
  "shapes:\n"
  "  bead: {type: sphere, radius: 0.00126}\n"
  "bodies:\n"
  "  - {shape: bead, material: glass, velocity: [0.05, 0, 0], lattice: {lo: [0.00125, 0.00125, 0.0012], hi: [0.0225, 0.0175, 0.0126], spacing: 0.0025}}\n"
  "walls:\n"
  "  - {type: plane, name: floor, point: [0, 0, 0], normal: [0, 0, 1], material: glass}\n"
  "loads:\n"
  "  - {bodies: [5], force: [0, 0, 1.0e-4]}\n"
  "search: {skin: 0.0005, sort_every: 1}\n"
  "integrator: {type: verlet, dt: 5.0e-6}\n"
  "run: {steps: 10}\n"
  "output: {vtk_every: -1, thermo_every: 100, track: [3, 17]}\n";

/* the pairs of ids within r_a + r_b + skin, periodic in x and y (brute force), as a sorted key list */
static int CmpI64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* the list's body pairs as sorted keys min(id) * N + max(id) */
static PetscInt ListKeys(DemSim sim, int64_t *keys, int64_t N)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      m  = 0;
  for (PetscInt k = 0; k < sim->nl.npairs; k++) {
    int64_t ga = bs->gid[sim->nl.a[k]], gb = bs->gid[sim->nl.b[k]];
    if ((bs->flags[sim->nl.a[k]] | bs->flags[sim->nl.b[k]]) & DEM_WALL) continue;
    keys[m++] = PetscMin(ga, gb) * N + PetscMax(ga, gb);
  }
  qsort(keys, (size_t)m, sizeof(*keys), CmpI64);
  return m;
}

int main(int argc, char **argv)
{
  DemSim        sim;
  DemNode       root;
  DemBodyStore *bs;
  const char   *sets[] = {NULL};
  const PetscInt N = NX * NY * NZ;

  char          dir[64];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_sort.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  TestHilbert();
  PetscCall(DemRegisterAll());
  PetscCall(DemTestMakeSim(dir, "sort", yaml, sets, &sim, &root));
  bs = &sim->bodies;
  DEM_CHECK("set-up: the bodies and the floor", bs->n == N + 1 && sim->nparticles == N, "n %d", (int)bs->n);
  DEM_CHECK("sort_every: 1 read", sim->sort_every == 1, "%d", (int)sim->sort_every);
  {
    PetscInt moved = 0, worst = 0;
    for (PetscInt i = 0; i < bs->n; i++) moved += bs->gid[i] != i;
    DEM_CHECK("the set-up's build reordered the store (ids no longer in store order)", sim->reordered && moved > N / 2, "%d of %d bodies not at their id", (int)moved, (int)N);
    for (PetscInt i = 0; i < bs->n; i++) {
      PetscReal X[3];
      if (bs->flags[i] & DEM_WALL) {
        worst += bs->gid[i] != N;
        continue;
      }
      LatticeX(bs->gid[i], X);
      for (int d = 0; d < 3; d++) worst += PetscAbsReal(bs->x[3 * i + d] - X[d]) > 1e-15;
      worst += bs->radius[i] != 0.00126 || PetscAbsReal(bs->m[i] - 2500 * 4.0 / 3.0 * PETSC_PI * 0.00126 * 0.00126 * 0.00126) > 1e-20;
    }
    DEM_CHECK("every body is at its id's lattice site with its radius and mass", worst == 0, "%d mismatches", (int)worst);
    DEM_CHECK("the wall's index names the wall", bs->gid[sim->walls[0].body] == N && (bs->flags[sim->walls[0].body] & DEM_WALL), "gid %lld", (long long)bs->gid[sim->walls[0].body]);
    DEM_CHECK("the load's index names body 5", bs->gid[sim->loads[0].ids[0]] == 5, "gid %lld", (long long)bs->gid[sim->loads[0].ids[0]]);
    DEM_CHECK("output.track's indices name bodies 3 and 17", bs->gid[sim->out.track[0]] == 3 && bs->gid[sim->out.track[1]] == 17, "gids %lld %lld", (long long)bs->gid[sim->out.track[0]], (long long)bs->gid[sim->out.track[1]]);
  }
  { /* the pairs by ids against a brute-force search over the ids */
    int64_t  *ref, *got;
    PetscInt  nref = 0, ngot;
    const PetscReal L[2] = {0.0225, 0.0175}, rc = 2 * 0.00126 + 0.0005;
    PetscCall(PetscMalloc2(N * N, &ref, sim->nl.npairs + 1, &got));
    for (int64_t a = 0; a < N; a++)
      for (int64_t b = a + 1; b < N; b++) {
        PetscReal xa[3], xb[3], d2 = 0;
        LatticeX(a, xa), LatticeX(b, xb);
        for (int d = 0; d < 3; d++) {
          PetscReal e = xa[d] - xb[d];
          if (d < 2) e -= L[d] * round(e / L[d]);
          d2 += e * e;
        }
        if (d2 < rc * rc) ref[nref++] = a * N + b;
      }
    ngot = ListKeys(sim, got, N);
    DEM_CHECK("the reordered list's pairs, by ids, are the brute-force pairs", ngot == nref && !memcmp(got, ref, sizeof(*ref) * (size_t)nref), "%d pairs listed, %d expected", (int)ngot, (int)nref);
    PetscCall(PetscFree2(ref, got));
  }
  { /* a few steps (contacts, history), then a random permutation: everything goes with its id */
    PetscInt   f, n = bs->n;
    PetscReal *ex, *cp, *hist;
    int64_t   *gid0, *pk0, *pk1;
    PetscInt  *perm, bad = 0, np;
    const PetscInt hs = sim->histsize;
    PetscCall(DemBodyStoreRegisterField(bs, "tag", 2, &f));
    ex = bs->extra[f];
    for (PetscInt i = 0; i < n; i++) ex[2 * i] = (PetscReal)bs->gid[i], ex[2 * i + 1] = -3.0 * (PetscReal)bs->gid[i];
    PetscCall(DemSimRun(sim));
    /* copies by id of what the store holds now */
    PetscCall(PetscMalloc3(n * 40, &cp, n, &gid0, n, &perm));
    for (PetscInt i = 0; i < n; i++) {
      PetscReal *c = cp + 40 * bs->gid[i];
      memcpy(c, bs->x + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 3, bs->v + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 6, bs->w + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 9, bs->q + 4 * i, 4 * sizeof(PetscReal));
      memcpy(c + 13, bs->f + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 16, bs->t + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 19, bs->I + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 22, bs->inv_I + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 25, sim->fd + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 28, sim->td + 3 * i, 3 * sizeof(PetscReal));
      memcpy(c + 31, sim->nl.x0 + 3 * i, 3 * sizeof(PetscReal));
      c[34] = bs->m[i], c[35] = bs->inv_m[i], c[36] = bs->radius[i];
      c[37] = bs->shape[i] + 10 * bs->material[i], c[38] = bs->flags[i], c[39] = sim->bodyset[i];
      gid0[i] = bs->gid[i];
    }
    /* the history of every touching pair by ids */
    np = sim->nl.npairs;
    PetscCall(PetscMalloc3(np + 1, &pk0, np + 1, &pk1, hs * np + 1, &hist));
    {
      PetscInt touching = 0;
      for (PetscInt k = 0; k < np; k++) {
        int64_t ga = bs->gid[sim->nl.a[k]], gb = bs->gid[sim->nl.b[k]];
        pk0[k] = ga * (N + 1) + gb;
        for (PetscInt j = 0; j < hs; j++) touching += sim->nl.history[hs * k + j] != 0;
      }
      PetscCall(PetscArraycpy(hist, sim->nl.history, hs * np));
      DEM_CHECK("after 10 steps some pairs carry contact history", touching > 0, "none");
    }
    for (PetscInt i = 0; i < n; i++) perm[i] = i;
    for (PetscInt i = n - 1; i > 0; i--) { /* Fisher-Yates */
      PetscInt j = (PetscInt)Lcg((unsigned)(i + 1)), t = perm[i];
      perm[i] = perm[j], perm[j] = t;
    }
    PetscCall(DemSimPermuteBodies_Private(sim, perm));
    for (PetscInt i = 0; i < n; i++) {
      const PetscReal *c = cp + 40 * bs->gid[i];
      bad += bs->gid[i] != gid0[perm[i]];
      bad += memcmp(c, bs->x + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 3, bs->v + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 6, bs->w + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 9, bs->q + 4 * i, 4 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 13, bs->f + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 16, bs->t + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 19, bs->I + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 22, bs->inv_I + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 25, sim->fd + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 28, sim->td + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += memcmp(c + 31, sim->nl.x0 + 3 * i, 3 * sizeof(PetscReal)) != 0;
      bad += c[34] != bs->m[i] || c[35] != bs->inv_m[i] || c[36] != bs->radius[i];
      bad += c[37] != bs->shape[i] + 10 * bs->material[i] || c[38] != bs->flags[i] || c[39] != sim->bodyset[i];
      bad += ex[2 * i] != (PetscReal)bs->gid[i] || ex[2 * i + 1] != -3.0 * (PetscReal)bs->gid[i];
    }
    DEM_CHECK("a random permutation: every per-body column, fd, td, x0, the body set and a plugin field stay with their id", bad == 0, "%d mismatches", (int)bad);
    bad = 0;
    for (PetscInt k = 0; k < np; k++) {
      pk1[k] = bs->gid[sim->nl.a[k]] * (N + 1) + bs->gid[sim->nl.b[k]];
      bad += pk1[k] != pk0[k];
    }
    DEM_CHECK("a random permutation: every pair names the same two ids, with its history beside it", bad == 0 && !memcmp(hist, sim->nl.history, sizeof(PetscReal) * hs * np), "%d pairs changed", (int)bad);
    DEM_CHECK("a random permutation: wall, load and track indices follow", bs->gid[sim->walls[0].body] == N && bs->gid[sim->loads[0].ids[0]] == 5 && bs->gid[sim->out.track[0]] == 3 && bs->gid[sim->out.track[1]] == 17, "wall %lld load %lld", (long long)bs->gid[sim->walls[0].body], (long long)bs->gid[sim->loads[0].ids[0]]);
    {
      PetscInt *order, wrong = 0;
      PetscCall(DemSimGidOrder_Private(sim, &order));
      for (PetscInt k = 0; order && k < n; k++) wrong += bs->gid[order[k]] != k;
      DEM_CHECK("DemSimGidOrder_Private lists the store by ascending id", order && wrong == 0, "%d out of place", (int)wrong);
      PetscCall(PetscFree(order));
    }
    PetscCall(PetscFree3(cp, gid0, perm));
    PetscCall(PetscFree3(pk0, pk1, hist));
  }
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  {
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd)) printf("# could not remove %s\n", dir);
  }
  PetscCall(DemRegistryFinalize());
  PetscCall(PetscFinalize());
  return dem_test_failed;
}
