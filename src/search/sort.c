/*
  sort.c - spatial reordering of the body store (issue 11; DESIGN.md "Search").

  At every search.sort_every-th neighbour build (builds counted from the set-up's, which is
  number 0) the particles are put in the order of a 3-D Hilbert curve over a grid of cells half
  the list's reach (2 r_max + skin) wide, before the pairs are searched: bodies near in space
  are then near in the store, the pair list (found body by body in store order) visits nearby
  memory, and the contact loop's gathers and scatters hit the caches (LAMMPS's
  `atom_modify sort` does the same with plain bins). Walls keep their slots; the particles'
  slots get the particles in curve order, ties (the same cell) in their previous order (a
  stable radix sort), so the order is a function of the positions and the previous order only:
  a restarted run that restores the store's order (checkpoint.c) continues bitwise.

  Everything indexed by store position moves with its body (DemSimPermuteBodies_Private): the
  store's columns and the plugins' per-body fields, the dissipative forces (fd, td), the body
  sets, the walls', loads' and output.track's indices, the neighbour list's pairs and build
  positions, the last contact list. Contact history is kept beside each pair and survives.

  Where it may run: serial runs (several ranks reorder by migration already) with integrator
  verlet, particles all spheres, no bonds; elsewhere search.sort_every must be 0 (the
  implicit integrators' Jacobian numbering, the superquadrics' and polyhedra's per-body caches
  and the bonds' index keys assume a fixed order). It is off unless asked for
  (DEM_SORT_EVERY_DEFAULT): on this project's benchmarks it cut the contact loop's simulated L1
  misses by a fifth to a third but gave no CPU time gain that stood out of the noise
  (benchmarks/settle/README.md), and with it on, serial results no longer follow the
  global-id order that keeps them within round-off of runs on several ranks (DESIGN.md
  "Search"). Results change only by the order in which contact forces and sums over bodies
  are added.
*/
#include "demimpl.h"

/*
  DemHilbertKey_Private - the index of cell c (b bits per axis, 1 <= b <= 21) along the 3-D
  Hilbert curve through the 2^b x 2^b x 2^b grid: J. Skilling, "Programming the Hilbert curve",
  AIP Conf. Proc. 707, 381 (2004): the coordinates are turned into the curve's "transposed"
  index (undo the rotations and reflections level by level from the top bit, then Gray-decode),
  whose bits, interleaved from the top (axis 0 first), are the index. Consecutive indices are
  cells that share a face (tests/unit/test_sort.c checks it).
*/
uint64_t DemHilbertKey_Private(const uint32_t c[3], int b)
{
  uint32_t       X[3] = {c[0], c[1], c[2]}, t = 0;
  const uint32_t top  = 1u << (b - 1);
  uint64_t       key  = 0;

  for (uint32_t Q = top; Q > 1; Q >>= 1) {
    const uint32_t P = Q - 1;
    for (int i = 0; i < 3; i++) {
      if (X[i] & Q) X[0] ^= P; /* reflect the lower bits */
      else {                   /* exchange the lower bits of axes 0 and i */
        const uint32_t s = (X[0] ^ X[i]) & P;
        X[0] ^= s, X[i] ^= s;
      }
    }
  }
  X[1] ^= X[0], X[2] ^= X[1]; /* Gray code */
  for (uint32_t Q = top; Q > 1; Q >>= 1)
    if (X[2] & Q) t ^= Q - 1;
  X[0] ^= t, X[1] ^= t, X[2] ^= t;
  for (int k = b - 1; k >= 0; k--)
    for (int i = 0; i < 3; i++) key = (key << 1) | ((X[i] >> k) & 1u);
  return key;
}

/* a stable LSD radix sort of idx[0..n) by key (the low `bits` bits), 11 bits per pass; key
   and idx are sorted in place, kt and it are scratch of n */
static void DemRadixSort(PetscInt n, int bits, uint64_t *key, PetscInt *idx, uint64_t *kt, PetscInt *it)
{
  PetscInt cnt[2048];

  for (int sh = 0; sh < bits; sh += 11) {
    uint64_t *ks = key, *kd = kt;
    PetscInt *is = idx, *id = it, sum = 0;
    memset(cnt, 0, sizeof(cnt));
    for (PetscInt k = 0; k < n; k++) cnt[(ks[k] >> sh) & 2047]++;
    for (int d = 0; d < 2048; d++) {
      const PetscInt c = cnt[d];
      cnt[d] = sum, sum += c;
    }
    for (PetscInt k = 0; k < n; k++) {
      const PetscInt dst = cnt[(ks[k] >> sh) & 2047]++;
      kd[dst] = ks[k], id[dst] = is[k];
    }
    /* the sorted copy becomes the source of the next pass */
    { uint64_t *tk = key; key = kt, kt = tk; }
    { PetscInt *ti = idx; idx = it, it = ti; }
  }
  /* an odd number of passes left the result in the scratch arrays: caller's arrays are kt/it
     then; copy back */
  if (((bits + 10) / 11) % 2) {
    memcpy(kt, key, (size_t)n * sizeof(*key));
    memcpy(it, idx, (size_t)n * sizeof(*idx));
  }
}

#define DEM_PERMUTE(arr, w, buf) \
  do { \
    if (arr) { \
      for (PetscInt k_ = 0; k_ < n; k_++) \
        for (PetscInt c_ = 0; c_ < (w); c_++) (buf)[(w) * k_ + c_] = (arr)[(w) * perm[k_] + c_]; \
      memcpy((arr), (buf), sizeof(*(arr)) * (size_t)(w) * (size_t)n); \
    } \
  } while (0)

/* the store's bodies in a new order: body perm[k] goes to position k (perm a permutation of
   0..n-1; no ghosts) */
PetscErrorCode DemBodyStorePermute_Private(DemBodyStore *s, const PetscInt *perm)
{
  const PetscInt n = s->n;
  PetscReal     *r;
  int64_t       *g;
  int           *in;
  unsigned      *u;
  PetscInt       wmax = 4;

  PetscFunctionBegin;
  PetscCheck(s->nghost == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "the store cannot be reordered with ghost bodies");
  for (PetscInt k = 0; k < s->nextra; k++) wmax = PetscMax(wmax, s->extra_ncomp[k]);
  PetscCall(PetscMalloc4(wmax * n + 1, &r, n + 1, &g, n + 1, &in, n + 1, &u));
  DEM_PERMUTE(s->gid, 1, g);
  DEM_PERMUTE(s->x, 3, r);
  DEM_PERMUTE(s->v, 3, r);
  DEM_PERMUTE(s->w, 3, r);
  DEM_PERMUTE(s->q, 4, r);
  DEM_PERMUTE(s->f, 3, r);
  DEM_PERMUTE(s->t, 3, r);
  DEM_PERMUTE(s->m, 1, r);
  DEM_PERMUTE(s->inv_m, 1, r);
  DEM_PERMUTE(s->I, 3, r);
  DEM_PERMUTE(s->inv_I, 3, r);
  DEM_PERMUTE(s->radius, 1, r);
  DEM_PERMUTE(s->shape, 1, in);
  DEM_PERMUTE(s->material, 1, in);
  DEM_PERMUTE(s->flags, 1, u);
  for (PetscInt k = 0; k < s->nextra; k++) DEM_PERMUTE(s->extra[k], s->extra_ncomp[k], r);
  PetscCall(PetscFree4(r, g, in, u));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the simulation's bodies in a new order (perm as above): the store and everything else that
   holds a store position */
PetscErrorCode DemSimPermuteBodies_Private(DemSim sim, const PetscInt *perm)
{
  DemBodyStore     *bs = &sim->bodies;
  DemNeighbourList *nl = &sim->nl;
  const PetscInt    n  = bs->n;
  PetscInt         *inv, *ib;
  PetscReal        *r;

  PetscFunctionBegin;
  PetscCheck(!sim->bonds, sim->comm, PETSC_ERR_SUP, "bodies with bonds cannot be reordered");
  PetscCall(PetscMalloc3(n + 1, &inv, n + 1, &ib, 3 * n + 1, &r));
  for (PetscInt k = 0; k < n; k++) inv[perm[k]] = k;
  PetscCall(DemBodyStorePermute_Private(bs, perm));
  if (sim->fd && sim->fdcap >= 3 * n) {
    DEM_PERMUTE(sim->fd, 3, r);
    DEM_PERMUTE(sim->td, 3, r);
  }
  if (sim->bodyset && sim->bodysetcap >= n) DEM_PERMUTE(sim->bodyset, 1, ib);
  if (nl->x0 && nl->x0cap >= 3 * n) DEM_PERMUTE(nl->x0, 3, r);
  for (PetscInt w = 0; w < sim->nwall; w++) sim->walls[w].body = inv[sim->walls[w].body];
  for (PetscInt l = 0; l < sim->nload; l++)
    for (PetscInt k = 0; k < sim->loads[l].nids; k++) sim->loads[l].ids[k] = inv[sim->loads[l].ids[k]];
  for (PetscInt k = 0; k < sim->out.ntrack; k++) sim->out.track[k] = inv[sim->out.track[k]];
  for (PetscInt k = 0; k < nl->npairs; k++) nl->a[k] = inv[nl->a[k]], nl->b[k] = inv[nl->b[k]];
  for (PetscInt c = 0; c < sim->cl.n; c++) sim->cl.a[c] = inv[sim->cl.a[c]], sim->cl.b[c] = inv[sim->cl.b[c]];
  sim->reordered = PETSC_TRUE;
  PetscCall(PetscFree3(inv, ib, r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the neighbour build about to run reorders the store first */
PetscBool DemSimSortDue_Private(DemSim sim)
{
  return (sim->sort_every > 0 && sim->size == 1 && sim->bodies.nghost == 0 && sim->nl.nbuilds % sim->sort_every == 0) ? PETSC_TRUE : PETSC_FALSE;
}

/* the particles along the Hilbert curve (see the top of the file) */
PetscErrorCode DemSimSortBodies_Private(DemSim sim)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n;
  PetscInt      np = 0, *slot, *idx, *it, *perm;
  uint64_t     *key, *kt;
  PetscReal     lo[3], hi[3], h, rmax = 0, ext = 0;
  int           b = 1;

  PetscFunctionBegin;
  for (int d = 0; d < 3; d++) lo[d] = PETSC_MAX_REAL, hi[d] = -PETSC_MAX_REAL;
  PetscCall(PetscMalloc4(n + 1, &slot, n + 1, &idx, n + 1, &it, n + 1, &perm));
  PetscCall(PetscMalloc2(n + 1, &key, n + 1, &kt));
  /* the particles' positions (periodic directions wrapped into the box) and their extent */
  for (PetscInt i = 0; i < n; i++) {
    perm[i] = i;
    if (bs->flags[i] & DEM_WALL) continue;
    slot[np++] = i;
    rmax       = PetscMax(rmax, bs->radius[i]);
    for (int d = 0; d < 3; d++) {
      PetscReal y = bs->x[3 * i + d];
      if (sim->periodic[d]) y = sim->lo[d], hi[d] = PetscMax(hi[d], sim->hi[d]);
      lo[d] = PetscMin(lo[d], y), hi[d] = PetscMax(hi[d], y);
    }
  }
  if (np < 2) {
    PetscCall(PetscFree4(slot, idx, it, perm));
    PetscCall(PetscFree2(key, kt));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (int d = 0; d < 3; d++) ext = PetscMax(ext, hi[d] - lo[d]);
  /* cells half the list's reach wide (LAMMPS's default sort bin), at most 2^21 per axis */
  h = 0.5 * (2 * rmax + sim->skin);
  if (!(h > 0) || !(ext > 0) || !isfinite(ext)) h = 1, ext = 1;
  while (b < 21 && ext / h >= (PetscReal)(1u << b)) b++;
  if (ext / h >= (PetscReal)(1u << b)) h = ext / ((PetscReal)(1u << b) - 1);
  for (PetscInt k = 0; k < np; k++) {
    const PetscInt i = slot[k];
    uint32_t       c[3];
    for (int d = 0; d < 3; d++) {
      PetscReal y = bs->x[3 * i + d], L = sim->hi[d] - sim->lo[d], cc;
      if (sim->periodic[d]) y -= L * PetscFloorReal((y - sim->lo[d]) / L);
      cc   = PetscFloorReal((y - lo[d]) / h);
      c[d] = cc >= (PetscReal)((1u << b) - 1) ? (1u << b) - 1 : cc > 0 ? (uint32_t)cc : 0;
    }
    key[k] = DemHilbertKey_Private(c, b);
    idx[k] = i;
  }
  DemRadixSort(np, 3 * b, key, idx, kt, it);
  for (PetscInt k = 0; k < np; k++) perm[slot[k]] = idx[k];
  PetscCall(DemSimPermuteBodies_Private(sim, perm));
  PetscCall(PetscFree4(slot, idx, it, perm));
  PetscCall(PetscFree2(key, kt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemSortSetFromConfig_Private - search.sort_every (after the bodies, bonds and the integrator
  are read): 0 disables the reorder; absent, the default where the reorder may run.
*/
PetscErrorCode DemSortSetFromConfig_Private(DemSim sim, DemNode root)
{
  DemNode     sn = NULL, kn = NULL;
  const char *why = NULL;

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "search", &sn));
  if (sn && DemNodeGetType(sn) == DEM_NODE_MAP) PetscCall(DemNodeGet(sn, "sort_every", &kn));
  if (!sim->integ || !sim->integ->type_name || strcmp(sim->integ->type_name, "verlet")) why = "the integrator is not verlet";
  else if (sim->bonds) why = "the run has bonds";
  else
    for (PetscInt i = 0; i < sim->bodies.n && !why; i++)
      if (!(sim->bodies.flags[i] & DEM_WALL) && sim->shapes[sim->bodies.shape[i]]->kind != DEM_KIND_SPHERE) why = "not every body is a sphere";
  sim->sort_every = why ? 0 : DEM_SORT_EVERY_DEFAULT;
  if (kn) {
    PetscCall(DemNodeGetInt(sn, "sort_every", PETSC_TRUE, &sim->sort_every));
    DemNodeCheck(kn, sim->sort_every >= 0, "sort_every must be >= 0 neighbour builds (0: never; got %" PetscInt_FMT ")", sim->sort_every);
    DemNodeCheck(kn, sim->sort_every == 0 || !why, "sort_every must be 0 here: %s (the store is reordered only for verlet with spheres and no bonds)", why);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the owned bodies' positions in the order of their global ids, or NULL when the store is in
   that order (output in the order users see: bodies_final.csv, VTK); free with PetscFree */
PetscErrorCode DemSimGidOrder_Private(DemSim sim, PetscInt **order)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n;
  PetscBool     sorted = PETSC_TRUE;
  uint64_t     *key, *kt;
  PetscInt     *it;
  int           bits = 1;

  PetscFunctionBegin;
  *order = NULL;
  for (PetscInt i = 1; i < n && sorted; i++) sorted = bs->gid[i] > bs->gid[i - 1] ? PETSC_TRUE : PETSC_FALSE;
  if (sorted) PetscFunctionReturn(PETSC_SUCCESS);
  {
    uint64_t gmax = 0;
    for (PetscInt i = 0; i < n; i++) gmax = PetscMax(gmax, (uint64_t)bs->gid[i]);
    while (bits < 64 && (gmax >> bits)) bits++;
  }
  PetscCall(PetscMalloc1(n + 1, order));
  PetscCall(PetscMalloc3(n + 1, &key, n + 1, &kt, n + 1, &it));
  for (PetscInt i = 0; i < n; i++) key[i] = (uint64_t)bs->gid[i], (*order)[i] = i;
  DemRadixSort(n, bits, key, *order, kt, it);
  PetscCall(PetscFree3(key, kt, it));
  PetscFunctionReturn(PETSC_SUCCESS);
}
