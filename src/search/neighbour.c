/*
  neighbour.c - linked cells plus a Verlet pair list with a skin (DESIGN.md "Search").

  Pairs (a, b) are kept when their bounding spheres come closer than r_a + r_b + skin; the
  list is rebuilt when any body moved more than half the skin since the last build. Periodic
  dimensions are handled with image shifts stored per pair (the positions are wrapped into
  the box at each rebuild). Walls (planes and other unbounded shapes) are paired with every
  body whose narrow phase, run with the skin as margin, reports them within reach.
  Body pairs are stored with a = the body of lower global id, so a pair's history keeps its
  orientation across rebuilds; its history lives beside the pair and goes through the
  (gid_a, gid_b, feature) map only at rebuilds.
*/
#include "demimpl.h"

static PetscErrorCode DemNLReserve(DemNeighbourList *nl, PetscInt cap)
{
  PetscFunctionBegin;
  if (cap <= nl->cap) PetscFunctionReturn(PETSC_SUCCESS);
  cap = DemGrowCap_Private(cap);
  PetscCall(PetscFree(nl->a));
  PetscCall(PetscFree(nl->b));
  PetscCall(PetscFree(nl->shiftidx));
  PetscCall(PetscFree(nl->pairidx)); /* made again at the new capacity on demand (below) */
  PetscCall(PetscFree(nl->shift));
  PetscCall(PetscMalloc1(cap, &nl->a));
  PetscCall(PetscMalloc1(cap, &nl->b));
  PetscCall(PetscMalloc1(cap, &nl->shiftidx));
  nl->cap         = cap;
  nl->shift_valid = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNeighbourFree_Private(DemNeighbourList *nl)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(nl->a));
  PetscCall(PetscFree(nl->b));
  PetscCall(PetscFree(nl->shiftidx));
  PetscCall(PetscFree(nl->pairidx));
  PetscCall(PetscFree(nl->shift));
  PetscCall(PetscFree(nl->history));
  PetscCall(PetscFree(nl->x0));
  PetscCall(PetscFree(nl->cellstart));
  PetscCall(PetscFree(nl->cellbody));
  if (!nl->pb.lent) PetscCall(PetscFree3(nl->pb.a, nl->pb.b, nl->pb.s));
  PetscCall(DemNeighbourFeatureFree_Private(nl));
  PetscCall(PetscMemzero(nl, sizeof(*nl)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The image shift vectors of the pairs [k0, k1) into shift[0 .. 3 (k1 - k0)), from their image
  indices: the expression the build had (L the box lengths), so the same values to the bit. By
  chunks where a whole list's worth would be made for one pass only (sim.c's overlap check at
  set-up, checkpoint.c), so that no moment holds them all.
*/
PetscErrorCode DemNeighbourShiftsFill_Private(DemSim sim, PetscInt k0, PetscInt k1, PetscReal *shift)
{
  const PetscInt *si = sim->nl.shiftidx;
  PetscReal       L[3];

  PetscFunctionBegin;
  for (int d = 0; d < 3; d++) L[d] = sim->hi[d] - sim->lo[d];
  for (PetscInt k = k0; k < k1; k++) DemImageShift_Private(si[k], L, shift + 3 * (k - k0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The image shift vectors of the whole list, made on the first demand after the list changed (a
  build, decomp.c's filter, a restore), at the list's capacity: the explicit step's fused laws
  never ask (they read shiftidx); the generic pipeline, the colliders of other shapes, bonds and
  the trapezoid integrator do.
*/
PetscErrorCode DemNeighbourShifts_Private(DemSim sim, const PetscReal **shift)
{
  DemNeighbourList *nl = &sim->nl;

  PetscFunctionBegin;
  if (!nl->shift_valid) {
    if (!nl->shift) PetscCall(PetscMalloc1(3 * PetscMax(nl->cap, 1), &nl->shift));
    PetscCall(DemNeighbourShiftsFill_Private(sim, 0, nl->npairs, nl->shift));
    nl->shift_valid = PETSC_TRUE;
  }
  *shift = nl->shift;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the pairs' indices, the `pair` column of the batches: the identity over the list's capacity,
   which holds whatever the pairs are (made once per allocation of the list) */
PetscErrorCode DemNeighbourPairIdx_Private(DemSim sim, const PetscInt **pair)
{
  DemNeighbourList *nl = &sim->nl;

  PetscFunctionBegin;
  if (!nl->pairidx) {
    const PetscInt cap = PetscMax(nl->cap, 1);
    PetscCall(PetscMalloc1(cap, &nl->pairidx));
    for (PetscInt k = 0; k < cap; k++) nl->pairidx[k] = k;
  }
  *pair = nl->pairidx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPairBufGrow(DemPairBuf *pb)
{
  PetscInt  cap = PetscMax(1024, pb->cap + pb->cap / 2);
  PetscInt *na, *nb, *ns;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(cap, &na, cap, &nb, cap, &ns));
  if (pb->n) {
    PetscCall(PetscArraycpy(na, pb->a, pb->n));
    PetscCall(PetscArraycpy(nb, pb->b, pb->n));
    PetscCall(PetscArraycpy(ns, pb->s, pb->n));
  }
  if (!pb->lent) PetscCall(PetscFree3(pb->a, pb->b, pb->s)); /* lent: the history array's, not ours */
  pb->a = na, pb->b = nb, pb->s = ns, pb->cap = cap, pb->lent = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s: the image index (0 ... 26), plus 32 times the search's stencil offset (below), plus
   DEM_PB_G times the pair's shape-kind pair g (no fourth array: 4 B per candidate pair less at
   the build's peak memory) */
#define DEM_PB_G 1024
static inline PetscErrorCode DemPairBufPush(DemPairBuf *pb, PetscInt a, PetscInt b, PetscInt s, PetscInt g)
{
  PetscFunctionBegin;
  if (pb->n == pb->cap) PetscCall(DemPairBufGrow(pb)); /* rare: the buffer starts at the last build's size (below) */
  pb->a[pb->n] = a;
  pb->b[pb->n] = b;
  pb->s[pb->n] = s + DEM_PB_G * g;
  pb->n++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscBool DemIsWall(const DemBodyStore *bs, PetscInt i)
{
  return (bs->flags[i] & DEM_WALL) ? PETSC_TRUE : PETSC_FALSE;
}

/*
  The body pairs found by the half-stencil search (step 4), put in the order the whole stencil
  gave them before (session 17): by the lower body index, then the key below. The list's
  order decides the order in which the forces of a body are summed, and so the rounding; with
  it, results are bitwise those of the whole-stencil search (chute, bed, the test suite's runs;
  the contact-dynamics solves on 1 and 2 ranks, tests/cases/mpi_cd_compat.py, depend on it at
  rounding level). A counting sort by the lower index into the list's arrays (free at this
  point: the old list's history was taken in step 1), an insertion sort of each body's few
  pairs, and the buffer rewritten; start (nb + 1 entries) is the caller's scratch: no memory
  beyond what the build had before. The search put into each pair's image index s (0 ... 26)
  the offset of the other body's (cell, image) from the cell of the pair's body of lower index,
  in the whole stencil's z-y-x order, times 32: a pair's key is that offset, then the other
  body's index (a cell's bodies are in ascending index in cellbody[], and the cells of a run
  along x in ascending offset). The pair's kind pair g rides in s too, DEM_PB_G times it (s +
  32 offset < 27 * 32 < DEM_PB_G), through the list's arrays and back (the offset taken out).
*/
#define DEM_NB_KEY(a, b, s) ((int64_t)(((s) >> 5) & 31) * nb + ((a) < (b) ? (b) : (a)))
static PetscErrorCode DemNeighbourOrderPairs(DemNeighbourList *nl, DemPairBuf *pb, PetscInt nb, PetscInt *start)
{
  const PetscInt n = pb->n;

  PetscFunctionBegin;
  PetscCall(DemNLReserve(nl, n));
  PetscCall(PetscArrayzero(start, nb + 1));
  for (PetscInt k = 0; k < n; k++) start[PetscMin(pb->a[k], pb->b[k]) + 1]++;
  for (PetscInt i = 0; i < nb; i++) start[i + 1] += start[i];
  for (PetscInt k = 0; k < n; k++) {
    const PetscInt e = start[PetscMin(pb->a[k], pb->b[k])]++;
    nl->a[e] = pb->a[k], nl->b[e] = pb->b[k], nl->shiftidx[e] = pb->s[k];
  }
  for (PetscInt i = nb; i > 0; i--) start[i] = start[i - 1];
  start[0] = 0;
  for (PetscInt i = 0; i < nb; i++) /* each body's pairs by their key (a few: insertion) */
    for (PetscInt e = start[i] + 1; e < start[i + 1]; e++) {
      const PetscInt a = nl->a[e], b = nl->b[e], s = nl->shiftidx[e];
      const int64_t  key = DEM_NB_KEY(a, b, s);
      PetscInt       f   = e;
      while (f > start[i] && DEM_NB_KEY(nl->a[f - 1], nl->b[f - 1], nl->shiftidx[f - 1]) > key) {
        nl->a[f] = nl->a[f - 1], nl->b[f] = nl->b[f - 1], nl->shiftidx[f] = nl->shiftidx[f - 1];
        f--;
      }
      nl->a[f] = a, nl->b[f] = b, nl->shiftidx[f] = s;
    }
  for (PetscInt k = 0; k < n; k++) pb->a[k] = nl->a[k], pb->b[k] = nl->b[k], pb->s[k] = (nl->shiftidx[k] & 31) + DEM_PB_G * (nl->shiftidx[k] / DEM_PB_G); /* the offset out */
  PetscFunctionReturn(PETSC_SUCCESS);
}
#undef DEM_NB_KEY

PetscErrorCode DemNeighbourBuild_Private(DemSim sim, const PetscReal *xin)
{
  DemBodyStore     *bs = &sim->bodies;
  DemNeighbourList *nl = &sim->nl;
  const PetscInt    nb = bs->n + bs->nghost, hs = sim->histsize;
  PetscReal        *x  = bs->x, L[3], rmax = 0, cut;
  PetscInt          ncell, np = 0;
  DemPairBuf       *pbp = &nl->pb;
  PetscInt          gcount[2 * DEM_KIND_MAX * DEM_KIND_MAX + 1];

  PetscInt         *tstart = NULL, *tb = NULL, lka = -1, lkb = -1;
  DemCollideFn      lfn = NULL;
  PetscBool         lsw = PETSC_FALSE;
  PetscReal        *th = NULL;
  /* serial, the same bodies as at the last build: the old pairs' indices are still valid */
  const PetscBool   byindex = (!DemDecompActive_Private(sim) && nl->npairs > 0 && nl->built_nb == nb) ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBegin;
  (void)xin;
  nl->shift_valid = PETSC_FALSE; /* the pairs are rewritten below; their shift vectors are made on demand */
  /* 0. every search.sort_every-th build: the particles along a space-filling curve first
     (sort.c; the old pairs' indices follow their bodies) */
  if (DemSimSortDue_Private(sim)) PetscCall(DemSimSortBodies_Private(sim));
  /* 1. keep the history of touching pairs (some history value not zero). Serial with the same
     bodies: in a table by the pair's first body (tstart, like a CSR row pointer; tb the second
     body, th the values, in the old list's order); 36 bytes per touching pair and a few
     operations, where the (gid_a, gid_b) hash map needs 2-4 slots of 57 bytes each, plus the
     transient copy of each rehash, at the moment the new list is allocated. Otherwise (several
     ranks, changed bodies) through the gid map. Both give a new pair the values of the last
     old pair with the same bodies. */
  if (!byindex) PetscCall(DemHistoryMapClear(&sim->hmap));
  if (hs > 0 && byindex) {
    PetscInt       nt = 0;
    unsigned char *keep; /* whether old pair k has some history value not zero */
    PetscCall(PetscCalloc1(nb + 1, &tstart));
    PetscCall(PetscMalloc1(PetscMax(nl->npairs, 1), &keep));
    for (PetscInt k = 0; k < nl->npairs; k++) { /* without a branch per value (session 17) */
      const PetscReal *h   = nl->history + k * hs;
      int              any = 0;
      for (PetscInt j = 0; j < hs; j++) any |= h[j] != 0.0;
      keep[k] = (unsigned char)any;
      tstart[nl->a[k] + 1] += any, nt += any;
    }
    for (PetscInt i = 0; i < nb; i++) tstart[i + 1] += tstart[i];
    PetscCall(PetscMalloc2(PetscMax(nt, 1), &tb, PetscMax(nt, 1) * hs, &th));
    for (PetscInt k = 0; k < nl->npairs; k++) { /* tstart[a] moves to the end of row a ... */
      if (keep[k]) {
        const PetscInt   e = tstart[nl->a[k]]++;
        const PetscReal *h = nl->history + k * hs;
        tb[e]              = nl->b[k];
        for (PetscInt j = 0; j < hs; j++) th[e * hs + j] = h[j];
      }
    }
    PetscCall(PetscFree(keep));
    for (PetscInt i = nb; i > 0; i--) tstart[i] = tstart[i - 1]; /* ... and back */
    tstart[0] = 0;
  } else if (hs > 0) {
    for (PetscInt k = 0; k < nl->npairs; k++) {
      const PetscReal *h   = nl->history + k * hs;
      PetscBool        any = PETSC_FALSE;
      for (PetscInt j = 0; j < hs; j++) any = any || h[j] != 0.0;
      if (any) PetscCall(DemHistoryMapPut(&sim->hmap, bs->gid[nl->a[k]], bs->gid[nl->b[k]], 0, h));
    }
  }
  PetscCall(DemNeighbourFeatureSave_Private(sim)); /* feature slots too (featslot.c) */
  /* 2. wrap positions of periodic dimensions into the box */
  for (int d = 0; d < 3; d++) {
    L[d] = sim->hi[d] - sim->lo[d];
    if (!sim->periodic[d]) continue;
    for (PetscInt i = 0; i < nb; i++) {
      if (DemIsWall(bs, i)) continue;
      PetscReal y = x[3 * i + d];
      if (y < sim->lo[d] || y >= sim->hi[d]) {
        y -= L[d] * PetscFloorReal((y - sim->lo[d]) / L[d]);
        if (y >= sim->hi[d]) y = sim->lo[d];
        x[3 * i + d] = y;
      }
    }
  }
  /* 3. cell grid over the particles */
  for (PetscInt i = 0; i < nb; i++)
    if (!DemIsWall(bs, i)) { rmax = PetscMax(rmax, bs->radius[i]); np++; }
  cut = 2 * rmax + sim->skin;
  if (!(cut > 0)) cut = 1;
  for (int d = 0; d < 3; d++) { /* clamped before the conversion: L may be huge (fuzzing) */
    PetscReal c = PetscFloorReal(L[d] / cut);
    nl->nc[d]   = c >= 100000 ? 100000 : c >= 1 ? (PetscInt)c : 1;
  }
  /* bound the number of cells by a few per body (tall, sparse boxes) */
  while ((double)nl->nc[0] * nl->nc[1] * nl->nc[2] > 8.0 * np + 1000) {
    int dm = 0;
    for (int d = 1; d < 3; d++) if (nl->nc[d] > nl->nc[dm]) dm = d;
    nl->nc[dm] = PetscMax(1, nl->nc[dm] / 2);
  }
  for (int d = 0; d < 3; d++) nl->cell[d] = L[d] / nl->nc[d];
  ncell = nl->nc[0] * nl->nc[1] * nl->nc[2];
  if (ncell > nl->ncells) {
    PetscCall(PetscFree(nl->cellstart));
    PetscCall(PetscMalloc1(ncell + 1, &nl->cellstart));
    nl->ncells = ncell;
  }
  if (nb > nl->cellcap) {
    PetscCall(PetscFree(nl->cellbody));
    PetscCall(PetscMalloc1(nb, &nl->cellbody));
    nl->cellcap = nb;
  }
  PetscCall(PetscArrayzero(nl->cellstart, ncell + 1));
  {
    PetscInt  *cellof, *cand, maxocc = 0;
    PetscReal *xs;
    PetscCall(PetscMalloc1(nb + 1, &cellof)); /* + 1: DemNeighbourOrderPairs' scratch after the search */
    for (PetscInt i = 0; i < nb; i++) {
      PetscInt ci[3];
      if (DemIsWall(bs, i)) { cellof[i] = -1; continue; }
      for (int d = 0; d < 3; d++) {
        /* clamped before the conversion: a body far outside the box (no domain: key, fuzzing) */
        PetscReal c = PetscFloorReal((x[3 * i + d] - sim->lo[d]) / nl->cell[d]);
        ci[d]       = c >= nl->nc[d] - 1 ? nl->nc[d] - 1 : c >= 0 ? (PetscInt)c : 0;
      }
      cellof[i] = (ci[2] * nl->nc[1] + ci[1]) * nl->nc[0] + ci[0];
      nl->cellstart[cellof[i] + 1]++;
    }
    /* counting sort by cell, bodies in ascending index within a cell (the order in which the
       pairs are found, and so the list's order, does not depend on it being a sort) */
    for (PetscInt c = 0; c < ncell; c++) {
      maxocc = PetscMax(maxocc, nl->cellstart[c + 1]); /* the fullest cell, for the search's scratch */
      nl->cellstart[c + 1] += nl->cellstart[c];
    }
    for (PetscInt i = 0; i < nb; i++)
      if (cellof[i] >= 0) nl->cellbody[nl->cellstart[cellof[i]]++] = i;
    for (PetscInt c = ncell; c > 0; c--) nl->cellstart[c] = nl->cellstart[c - 1];
    nl->cellstart[0] = 0;
    /* 4. candidate body pairs, into a buffer sized from the last build (growing it copies).
       The history array's values are dead from step 1 (the touching rows are kept in th or the
       map, the feature slots in the feature map) until step 7 writes the new list's: the buffer
       lies in it when it holds as many pairs as the last list, instead of beside it (chute,
       32000 bodies: the build's peak RSS 1.6 MB lower; the buffer is 12 B per pair, a history
       row 32 B). If the search outgrows it, DemPairBufGrow moves it to memory of its own */
    pbp->n = 0;
    {
      const size_t   hb   = hs > 0 && nl->history ? sizeof(PetscReal) * (size_t)hs * (size_t)nl->histcap : 0;
      const PetscInt rcap = (PetscInt)PetscMin(hb / (3 * sizeof(PetscInt)), (size_t)PETSC_MAX_INT / 4);
      if (nl->npairs > 0 && rcap >= nl->npairs) {
        if (!pbp->lent) PetscCall(PetscFree3(pbp->a, pbp->b, pbp->s));
        pbp->a = (PetscInt *)nl->history, pbp->b = pbp->a + rcap, pbp->s = pbp->b + rcap;
        pbp->cap = rcap, pbp->lent = PETSC_TRUE;
        __asm__ __volatile__("" ::: "memory"); /* PetscReal until here, PetscInt from here (step 6) */
      } else if (nl->npairs > 0 && pbp->cap < nl->npairs) {
        if (!pbp->lent) PetscCall(PetscFree3(pbp->a, pbp->b, pbp->s));
        pbp->cap = DemGrowCap_Private(nl->npairs), pbp->lent = PETSC_FALSE;
        PetscCall(PetscMalloc3(pbp->cap, &pbp->a, pbp->cap, &pbp->b, pbp->cap, &pbp->s));
      }
    }
    PetscCall(PetscMalloc1(PetscMax(3 * maxocc, 1), &cand)); /* a run of up to three cells */
    /* the positions in cell order, so that the search below reads each cell's bodies from
       consecutive memory; kept in x0, sized for every body here, whose old positions are not read
       again before step 8 overwrites them (no memory of its own) */
    if (3 * nb > nl->x0cap) {
      PetscCall(PetscFree(nl->x0));
      PetscCall(PetscMalloc1(3 * nb, &nl->x0));
      nl->x0cap = 3 * nb;
    }
    xs = nl->x0;
    for (PetscInt p = 0; p < nl->cellstart[ncell]; p++) {
      const PetscInt j = nl->cellbody[p];
      xs[3 * p] = x[3 * j], xs[3 * p + 1] = x[3 * j + 1], xs[3 * p + 2] = x[3 * j + 2];
    }
    for (PetscInt i = 0; i < nb; i++) {
      PetscInt  c = cellof[i], cj[3][3], sidx[3][3], pi;
      PetscReal S[3][3], xi0, xi1, xi2, ri;
      PetscBool in[3][3];
      if (c < 0) continue;
      xi0 = x[3 * i], xi1 = x[3 * i + 1], xi2 = x[3 * i + 2], ri = bs->radius[i];
      for (pi = nl->cellstart[c]; nl->cellbody[pi] != i; pi++) {} /* i's place in cellbody[] (a cell holds a few bodies) */
      cj[0][1] = c % nl->nc[0];
      cj[1][1] = (c / nl->nc[0]) % nl->nc[1];
      cj[2][1] = c / (nl->nc[0] * nl->nc[1]);
      /* the neighbour cells along each dimension, offsets -1, 0, +1: cell coordinate, image
         shift index and whether the cell exists (periodic dimensions wrap) */
      for (int d = 0; d < 3; d++)
        for (int o = 0; o < 3; o += 2) {
          PetscInt cd = cj[d][1] + o - 1, sd = 0;
          in[d][o] = PETSC_TRUE;
          if (cd < 0 || cd >= nl->nc[d]) {
            if (!sim->periodic[d]) in[d][o] = PETSC_FALSE;
            sd = cd < 0 ? -1 : 1;
            cd -= sd * nl->nc[d];
          }
          cj[d][o]   = cd;
          sidx[d][o] = sd;
          S[d][o]    = sd * L[d];
        }
      for (int d = 0; d < 3; d++) {
        in[d][1]   = PETSC_TRUE;
        sidx[d][1] = 0;
        S[d][1]    = 0 * L[d];
      }
      /* half the stencil (session 17): a pair is found from one of its two bodies only, the one
         from whose cell the other's (cell, image) lies at a forward offset, (oz, oy, ox) after
         (0, 0, 0) in z-y-x order, or, in the same cell and image, the one first in the cell's
         order (from i, the bodies after it in cellbody[]): the offset from the other body is
         the opposite one, which is not forward. So 13 cells and half of its own instead of 27
         and no test j > i (half of the bodies of the 27 failed it). Each (cell, image)
         combination is distinct (with one cell along a periodic dimension, offsets -1, 0, +1
         are three images of the same cell; with two, -1 and +1 reach the other cell through
         different images), so the pairs are those of the whole stencil with j > i, each once;
         a body is never paired with its own image (j != i). DemNeighbourOrderPairs then puts
         them in the whole stencil's order. Chute, 32000 bodies: this search 17 ms per build
         before */
      for (int oz = 1; oz < 3; oz++) {
        if (!in[2][oz]) continue;
        for (int oy = oz == 1 ? 1 : 0; oy < 3; oy++) {
          const PetscInt row = (cj[2][oz] * nl->nc[1] + cj[1][oy]) * nl->nc[0];
          const int      own = oz == 1 && oy == 1; /* the row of i's cell: from i on */
          PetscInt       seg[3][3], nseg = 0, lastox = -1, lastnc = -1; /* runs of cells along x: first body, end, first ox */
          if (!in[1][oy]) continue;
          /* Neighbouring cells along x with the same image shift are consecutive in the cell
             order, so their bodies are one run of cellbody[]: one loop per run instead of one
             per cell (whose trip counts of 0-3 bodies each cost a mispredicted branch) */
          for (int ox = own ? 1 : 0; ox < 3; ox++) {
            const PetscInt nc = row + cj[0][ox];
            if (!in[0][ox]) continue;
            if (nseg > 0 && lastox == ox - 1 && lastnc == nc - 1 && sidx[0][lastox] == sidx[0][ox]) seg[nseg - 1][1] = nl->cellstart[nc + 1];
            else seg[nseg][0] = own && ox == 1 ? pi + 1 : nl->cellstart[nc], seg[nseg][1] = nl->cellstart[nc + 1], seg[nseg][2] = ox, nseg++;
            lastox = ox, lastnc = nc;
          }
          for (PetscInt g = 0; g < nseg; g++) {
            const int       ox    = (int)seg[g][2];
            const PetscReal sx    = S[0][ox], sy = S[1][oy], sz = S[2][oz];
            const PetscInt  s0    = (sidx[0][ox] + 1) * 9 + (sidx[1][oy] + 1) * 3 + (sidx[2][oz] + 1);
            PetscInt        ncand = 0;
            /* the bodies of the run within reach, in cell order, collected without a branch
               per body (about half of them fail j > i, at random: a mispredicted branch each) */
            for (PetscInt p = seg[g][0], pe = seg[g][1]; p < pe; p++) {
              const PetscInt  j  = nl->cellbody[p];
              const PetscReal d0 = xi0 - xs[3 * p] - sx, d1 = xi1 - xs[3 * p + 1] - sy, d2 = xi2 - xs[3 * p + 2] - sz;
              const PetscReal rc = ri + bs->radius[j] + sim->skin;
              cand[ncand] = j;
              ncand += (j != i) & !(d0 * d0 + d1 * d1 + d2 * d2 >= rc * rc);
            }
            for (PetscInt q = 0; q < ncand; q++) {
              const PetscInt j = cand[q];
              PetscInt       s = s0, a, b, ka, kb;
              const PetscInt oxj = ox + (cellof[j] - (row + cj[0][ox])); /* j's cell in a run of cells along x */
              const PetscInt off = j > i ? (oz * 3 + oy) * 3 + oxj : 26 - ((oz * 3 + oy) * 3 + oxj); /* from the lower index (DemNeighbourOrderPairs) */
              if ((bs->flags[i] & bs->flags[j] & (DEM_FIXED | DEM_PRESCRIBED)) && !(bs->flags[PetscMin(i, j)] & DEM_GHOST)) continue; /* two immobile bodies (kept between two ghosts, whose indices come last) */
              if (bs->gid[i] < bs->gid[j]) a = i, b = j;
              else a = j, b = i, s = 26 - s;
              ka = sim->shapes[bs->shape[a]]->kind;
              kb = sim->shapes[bs->shape[b]]->kind;
              if (ka != lka || kb != lkb) { /* the collider of the last pair's kinds is kept */
                PetscCall(DemColliderGet_Private(ka, kb, &lfn, &lsw));
                PetscCheck(lfn, sim->comm, PETSC_ERR_SUP, "no collider for shape kinds %s/%s", DemShapeKindName(ka), DemShapeKindName(kb));
                lka = ka, lkb = kb;
              }
              if (lsw) {
                PetscInt t = a;
                a = b, b = t, s = 26 - s;
                t = ka, ka = kb, kb = t;
              }
              PetscCall(DemPairBufPush(pbp, a, b, s + 32 * off, ka * DEM_KIND_MAX + kb));
            }
          }
        }
      }
    }
    PetscCall(PetscFree(cand));
    PetscCall(DemNeighbourOrderPairs(nl, pbp, nb, cellof));
    PetscCall(PetscFree(cellof));
  }
  /* 5. walls: ask the narrow phase, with the skin as margin, which bodies are within reach */
  for (PetscInt w = 0; w < sim->nwall; w++) {
    PetscInt      wb = sim->walls[w].body;
    DemShapeKind  kw = sim->shapes[bs->shape[wb]]->kind;
    if (bs->flags[wb] & DEM_REMOVED) continue;
    for (PetscInt kind = 0; kind < DEM_KIND_MAX; kind++) {
      DemCollideFn fn;
      PetscBool    sw;
      PetscInt     cnt = 0, *ia, *ib;
      DemPairBatch batch;
      DemState     st = {bs->x, bs->v, bs->w, bs->q};
      for (PetscInt i = 0; i < nb; i++)
        if (!DemIsWall(bs, i) && sim->shapes[bs->shape[i]]->kind == kind) cnt++;
      if (!cnt) continue;
      PetscCall(DemColliderGet_Private((DemShapeKind)kind, kw, &fn, &sw));
      PetscCheck(fn, sim->comm, PETSC_ERR_SUP, "no collider for shape kinds %s/%s", DemShapeKindName((DemShapeKind)kind), DemShapeKindName(kw));
      PetscCall(PetscMalloc2(cnt, &ia, cnt, &ib));
      cnt = 0;
      for (PetscInt i = 0; i < nb; i++) {
        if (DemIsWall(bs, i) || sim->shapes[bs->shape[i]]->kind != kind) continue;
        ia[cnt] = sw ? wb : i;
        ib[cnt] = sw ? i : wb;
        cnt++;
      }
      PetscCall(PetscMemzero(&batch, sizeof(batch)));
      batch.ka    = sw ? kw : (DemShapeKind)kind;
      batch.kb    = sw ? (DemShapeKind)kind : kw;
      batch.n     = cnt;
      batch.a     = ia;
      batch.b     = ib;
      batch.sim   = sim;
      batch.state = &st;
      sim->cl.n   = 0;
      PetscCall(fn(batch.ka, batch.kb, &batch, sim->skin, &sim->cl));
      /* one candidate pair per body, however many contact points the narrow phase found */
      for (PetscInt c = 0; c < sim->cl.n; c++) {
        if (c > 0 && sim->cl.a[c] == sim->cl.a[c - 1] && sim->cl.b[c] == sim->cl.b[c - 1]) continue;
        PetscCall(DemPairBufPush(pbp, sim->cl.a[c], sim->cl.b[c], DEM_NOSHIFT, batch.ka * DEM_KIND_MAX + batch.kb));
      }
      sim->cl.n = 0;
      PetscCall(PetscFree2(ia, ib));
    }
  }
  /* 6. group by shape-kind pair, and within a group the pairs without an image shift first
     (stable counting sort on 2 g + shifted) */
  PetscCall(DemNLReserve(nl, pbp->n));
  PetscCall(PetscArrayzero(gcount, 2 * DEM_KIND_MAX * DEM_KIND_MAX + 1));
  for (PetscInt k = 0; k < pbp->n; k++) gcount[2 * (pbp->s[k] / DEM_PB_G) + (pbp->s[k] % DEM_PB_G != DEM_NOSHIFT) + 1]++;
  for (PetscInt g = 0; g < 2 * DEM_KIND_MAX * DEM_KIND_MAX; g++) gcount[g + 1] += gcount[g];
  nl->ngroups = 0;
  for (PetscInt g = 0; g < DEM_KIND_MAX * DEM_KIND_MAX; g++) {
    if (gcount[2 * g + 2] == gcount[2 * g]) continue;
    nl->gka[nl->ngroups]    = (DemShapeKind)(g / DEM_KIND_MAX);
    nl->gkb[nl->ngroups]    = (DemShapeKind)(g % DEM_KIND_MAX);
    nl->gstart[nl->ngroups] = gcount[2 * g];
    nl->ngroups++;
  }
  nl->gstart[nl->ngroups] = pbp->n;
  nl->noshift_first       = PETSC_TRUE;
  for (PetscInt k = 0; k < pbp->n; k++) {
    PetscInt dst       = gcount[2 * (pbp->s[k] / DEM_PB_G) + (pbp->s[k] % DEM_PB_G != DEM_NOSHIFT)]++;
    nl->a[dst]         = pbp->a[k];
    nl->b[dst]         = pbp->b[k];
    nl->shiftidx[dst]  = pbp->s[k] % DEM_PB_G;
  }
  nl->npairs = pbp->n;
  /* the candidate buffer is done with: its memory back before the history's is taken (the
     set-up build's peak held both) */
  if (!pbp->lent) PetscCall(PetscFree3(pbp->a, pbp->b, pbp->s));
  /* lent, the array held PetscInt until here and holds PetscReal from step 7 on: no access may
     move across (the compiler assumes the two types never alias) */
  else __asm__ __volatile__("" ::: "memory");
  pbp->a = pbp->b = pbp->s = NULL, pbp->lent = PETSC_FALSE;
  pbp->n = pbp->cap = 0;
  /* 7. history back from the map */
  if (hs > 0) {
    if (nl->npairs > nl->histcap) {
      PetscCall(PetscFree(nl->history));
      nl->histcap = DemGrowCap_Private(nl->npairs);
      PetscCall(PetscMalloc1(hs * nl->histcap, &nl->history));
    }
    for (PetscInt k = 0; k < nl->npairs; k++) {
      const PetscReal *h = NULL;
      if (byindex) {
        const PetscInt a = nl->a[k], b = nl->b[k];
        for (PetscInt e = tstart[a]; e < tstart[a + 1]; e++)
          if (tb[e] == b) h = th + e * hs; /* the last one, as the map's last put */
      } else h = DemHistoryMapGet(&sim->hmap, bs->gid[nl->a[k]], bs->gid[nl->b[k]], 0);
      for (PetscInt j = 0; j < hs; j++) nl->history[k * hs + j] = h ? h[j] : 0.0;
    }
  }
  PetscCall(PetscFree(tstart));
  PetscCall(PetscFree2(tb, th));
  /* the map is scratch of a build: its memory goes back (2-4 slots of 57 B per touching pair) */
  PetscCall(DemHistoryMapFree(&sim->hmap));
  /* 8. positions at this build (x0 was sized in step 4) */
  PetscCall(PetscArraycpy(nl->x0, x, 3 * nb));
  nl->nbuilds++;
  nl->built_nb = nb;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemSimUpdateNeighbours - rebuilds the pair list when a body moved more than half the skin
  since the last build, or when `force` is set. Collective.
  DemSimUpdateNeighboursMoved_Private - the same at the store's positions, with the
  displacement rule already applied by the caller on its own pass over the bodies (verlet's
  drift): moved 1 or 0; -1: applied here.
*/
static PetscErrorCode DemNeighbourUpdate(DemSim sim, const PetscReal *x, PetscBool force, PetscInt moved)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      nb = bs->n + bs->nghost;
  PetscBool     rebuild = force;

  PetscFunctionBegin;
  if (DemDecompActive_Private(sim)) { /* MPI: ghosts, collective rebuilds, migration (decomp.c) */
    PetscCall(DemDecompUpdateNeighbours_Private(sim, x, force, moved));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!x) x = bs->x;
  if (!rebuild && moved >= 0 && x == bs->x) rebuild = moved ? PETSC_TRUE : PETSC_FALSE;
  else if (!rebuild) {
    const PetscReal *x0  = sim->nl.x0;
    const PetscReal  lim = 0.25 * sim->skin * sim->skin;
    int              any = 0; /* an or, not a running maximum: no chain of maxima per body */
    if (!x0 || sim->nl.x0cap < 3 * nb) rebuild = PETSC_TRUE;
    else
      for (PetscInt i = 0; i < nb; i++) {
        PetscReal d0 = x[3 * i] - x0[3 * i], d1 = x[3 * i + 1] - x0[3 * i + 1], d2 = x[3 * i + 2] - x0[3 * i + 2];
        any |= d0 * d0 + d1 * d1 + d2 * d2 > lim;
      }
    if (any) rebuild = PETSC_TRUE;
  }
  if (rebuild) PetscCall(DemNeighbourBuild_Private(sim, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimUpdateNeighbours(DemSim sim, const PetscReal *x, PetscBool force)
{
  PetscFunctionBegin;
  PetscCall(DemNeighbourUpdate(sim, x, force, -1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSimUpdateNeighboursMoved_Private(DemSim sim, PetscInt moved)
{
  PetscFunctionBegin;
  PetscCall(DemNeighbourUpdate(sim, NULL, PETSC_FALSE, moved));
  PetscFunctionReturn(PETSC_SUCCESS);
}
