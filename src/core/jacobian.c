/*
  jacobian.c - contact stiffness and damping blocks for the implicit integrators (DESIGN.md
  "Forces are a function of a state": each contact adds its 12x12 block, two bodies of six
  DOF each, to a PETSc matrix of block size 6, preallocated from the contact graph).

  After DemForcesCompute at a state, sim->cl / sim->cf hold the contacts and the laws'
  outputs at that state. DemForcesJacobian adds, for every contact between bodies a and b,

      J += G^T (cstiff S_K + cdamp S_C) G  +  cstiff K_geo

  G = [I, -[r_a]x, -I, [r_b]x] (3x12) maps the generalized velocities (v_a, w_a, v_b, w_b) to
  the velocity of a relative to b at the contact point (003 eq. (23) with the lever arms of
  the contact list); G^T maps a force on a at the contact point to the generalized forces
  (f_a, t_a, f_b, t_b) (003 eq. (24)-(25)). With n the unit normal (b to a), P = I - n n^T:
      S_K = -dfn_dgap n n^T + kt P       stiffness: K = -dF/dq
      S_C =  cn n n^T + ct P             damping:   C = -dF/dv
      K_geo = -(fn_e / dist) P on the translations of a and b, pattern [+P -P; -P +P]: the
              turn of the normal n = (x_a - x_b) / dist of two spheres; fn_e = fn + cn vn is
              the elastic part of the normal force (003 eq. (20), (27): dV/dq of k delta^2/2
              has the term k delta d n/dq).
  K is the Hessian of the contact potential (003 eq. (27), or the law's `energy` for any
  law that reports energy and dfn_dgap, e.g. Hertz's V ~ delta^(5/2)); both are symmetric,
  so the matrix suits CG and MATSBAIJ.

  Approximations (they change the Newton tangent only, so they cost iterations, never
  accuracy of a converged step):
    - the tangential spring of friction.h is linearized as kt (I - n n^T) acting on the
      tangential displacement of the contact point; exact for a sticking contact when the
      caller evaluates the laws at positions x0 + u with velocities v such that v dt_law = u
      (dt_law the time step the laws see). The turn of the stored spring into the new
      tangent plane is neglected;
    - a sliding contact (slip flag) adds no tangential block (mu fn along the slip);
    - ct is not a law output: it is read from the tangential part of the law's fdamp column,
      ct = -fdamp_t . vt / |vt|^2 (0 when a law leaves fdamp zero, or vt = 0);
    - the dependence of cn on the overlap (hertz_mindlin) and of vn on the turn of the
      normal is neglected (the damping part of fn is left out of K_geo);
    - K_geo for sphere-sphere contacts only (a wall's normal does not turn).
  The matrix carries a block local-to-global mapping from body index to block row (bodies
  that are not unknowns map to -1 and are skipped): DemJacobianCreate_Private sets it up;
  another integrator (newmark, SNES) may build its own matrix the same way.
*/
#include "demimpl.h"

/*
  DemJacobianNumbering_Private - block rows of the bodies that are unknowns of an implicit
  integrator: mobile (inv_m > 0) particles. row[i] = block row or -1 (walls, fixed bodies);
  row must hold bodies.n + bodies.nghost entries.
*/
PetscErrorCode DemJacobianNumbering_Private(DemSim sim, PetscInt row[], PetscInt *nrows)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      nb = bs->n + bs->nghost, k = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nb; i++) row[i] = (!(bs->flags[i] & (DEM_WALL | DEM_GHOST)) && bs->inv_m[i] > 0) ? k++ : -1;
  *nrows = k;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int DemCmpInt(const void *x, const void *y)
{
  PetscInt a = *(const PetscInt *)x, b = *(const PetscInt *)y;
  return (a > b) - (a < b);
}

/*
  DemJacobianCreate_Private - a MATBAIJ or MATSBAIJ (block size 6) matrix of nrows block rows,
  preallocated from the contact graph: the neighbour-list pairs and the bonded pairs, i.e.
  every pair that can touch before the next rebuild of the list. Sets the block
  local-to-global mapping body index -> row[] so that DemForcesJacobian can add blocks with
  body indices. New nonzeros (a contact outside the list) are allowed, at the price of a
  malloc. Rebuild the matrix when the neighbour list is rebuilt (nl.nbuilds).
*/
PetscErrorCode DemJacobianCreate_Private(DemSim sim, MatType type, const PetscInt row[], PetscInt nrows, Mat *J)
{
  DemBodyStore           *bs = &sim->bodies;
  DemNeighbourList       *nl = &sim->nl;
  const PetscInt          nb = bs->n + bs->nghost, nbond = sim->bonds ? sim->bonds->n : 0;
  PetscInt               *cnt, *off, *col, *nnz;
  PetscBool               sym;
  ISLocalToGlobalMapping  map;

  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(type, MATSBAIJ, &sym));
  if (!sym) PetscCall(PetscStrcmp(type, MATSEQSBAIJ, &sym));
  PetscCall(PetscCalloc3(nrows + 1, &cnt, nrows + 1, &off, nrows + 1, &nnz));
  for (PetscInt pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      for (PetscInt r = 0; r < nrows; r++) off[r + 1] = off[r] + cnt[r], cnt[r] = 0;
      PetscCall(PetscMalloc1(off[nrows] + 1, &col));
    }
    for (PetscInt k = 0; k < nl->npairs + nbond; k++) {
      PetscInt a = k < nl->npairs ? nl->a[k] : sim->bonds->a[k - nl->npairs];
      PetscInt b = k < nl->npairs ? nl->b[k] : sim->bonds->b[k - nl->npairs];
      PetscInt ra = row[a], rb = row[b], lo, hi;
      if (ra < 0 || rb < 0 || ra == rb) continue;
      lo = PetscMin(ra, rb), hi = PetscMax(ra, rb);
      if (pass == 1) col[off[lo] + cnt[lo]] = hi;
      cnt[lo]++;
      if (sym) continue; /* upper triangle only */
      if (pass == 1) col[off[hi] + cnt[hi]] = lo;
      cnt[hi]++;
    }
  }
  for (PetscInt r = 0; r < nrows; r++) {
    PetscInt *c = col + off[r], m = 0;
    qsort(c, (size_t)cnt[r], sizeof(PetscInt), DemCmpInt);
    for (PetscInt j = 0; j < cnt[r]; j++)
      if (!j || c[j] != c[j - 1]) m++;
    nnz[r] = 1 + m;
  }
  PetscCall(MatCreate(PETSC_COMM_SELF, J));
  PetscCall(MatSetSizes(*J, 6 * nrows, 6 * nrows, 6 * nrows, 6 * nrows));
  PetscCall(MatSetType(*J, sym ? MATSEQSBAIJ : MATSEQBAIJ));
  PetscCall(MatSetBlockSize(*J, 6));
  if (sym) PetscCall(MatSeqSBAIJSetPreallocation(*J, 6, 0, nnz));
  else PetscCall(MatSeqBAIJSetPreallocation(*J, 6, 0, nnz));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (sym) PetscCall(MatSetOption(*J, MAT_IGNORE_LOWER_TRIANGULAR, PETSC_TRUE));
  PetscCall(ISLocalToGlobalMappingCreate(PETSC_COMM_SELF, 6, nb, row, PETSC_COPY_VALUES, &map));
  PetscCall(MatSetLocalToGlobalMapping(*J, map, map));
  PetscCall(ISLocalToGlobalMappingDestroy(&map));
  PetscCall(PetscFree3(cnt, off, nnz));
  PetscCall(PetscFree(col));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemJacobianNumberingGlobal_Private - the numbering of DemJacobianNumbering_Private on several
  MPI ranks (src/core/decomp.c): row[i] the local block row of an owned unknown (owned bodies
  are in global-id order, so rows follow the global ids on each rank), -1 for the others;
  grow[i] the global block row of every owned or ghost unknown (rank r's rows follow those of
  ranks 0 .. r-1: *rstart is this rank's first), -1 for walls and fixed bodies. The ghosts'
  global rows come from their owners (one forward exchange). row, grow: bodies.n +
  bodies.nghost entries. Collective; on one rank grow = row.
*/
PetscErrorCode DemJacobianNumberingGlobal_Private(DemSim sim, PetscInt row[], PetscInt grow[], PetscInt *nrows, PetscInt *rstart)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n, nb = bs->n + bs->nghost;
  PetscInt      start = 0, loc;
  PetscReal    *g;

  PetscFunctionBegin;
  PetscCall(DemJacobianNumbering_Private(sim, row, nrows));
  loc = *nrows;
  if (sim->size > 1) PetscCallMPI(MPI_Exscan(&loc, &start, 1, MPIU_INT, MPI_SUM, sim->comm));
  if (sim->rank == 0) start = 0; /* MPI_Exscan leaves rank 0's result undefined */
  *rstart = start;
  PetscCall(PetscMalloc1(nb + 1, &g));
  for (PetscInt i = 0; i < nb; i++) g[i] = (i < n && row[i] >= 0) ? (PetscReal)(start + row[i]) : -1;
  if (DemDecompActive_Private(sim)) PetscCall(DemDecompForwardArray_Private(sim, g, 1));
  for (PetscInt i = 0; i < nb; i++) grow[i] = (PetscInt)g[i];
  PetscCall(PetscFree(g));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemJacobianCreateGlobal_Private - the matrix of DemJacobianCreate_Private distributed over
  the ranks: MATMPIBAIJ or MATMPISBAIJ (block size 6), nrows local block rows (the owned
  unknowns), the block local-to-global mapping body index -> grow[] (owned and ghost bodies:
  DemJacobianNumberingGlobal_Private), so that DemForcesJacobian adds the blocks of a contact
  between an owned body and a ghost with global indices (the ghost's rows go to its owner at
  assembly). Preallocated from this rank's pairs (neighbour list after the decomposition's
  filter: each pair on the rank owning its lower-id body) and bonds: a pair of two owned
  bodies counts in the diagonal part of both rows, a pair with a ghost in the off-diagonal part
  of both, the ghost's count summed into its owner's row (one reverse exchange). Counts are
  upper bounds (a pair listed twice counts twice). Collective.
*/
PetscErrorCode DemJacobianCreateGlobal_Private(DemSim sim, MatType type, const PetscInt grow[], PetscInt nrows, Mat *J)
{
  DemBodyStore           *bs = &sim->bodies;
  DemNeighbourList       *nl = &sim->nl;
  const PetscInt          n = bs->n, nb = bs->n + bs->nghost, nbond = sim->bonds ? sim->bonds->n : 0;
  PetscInt               *dnnz, *onnz, N, rstart = PETSC_MAX_INT;
  PetscReal              *cnt;
  PetscBool               sym;
  ISLocalToGlobalMapping  map;

  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(type, MATSBAIJ, &sym));
  PetscCall(PetscCalloc1(2 * nb + 1, &cnt));
  PetscCall(PetscMalloc2(nrows + 1, &dnnz, nrows + 1, &onnz));
  for (PetscInt k = 0; k < nl->npairs + nbond; k++) {
    PetscInt a = k < nl->npairs ? nl->a[k] : sim->bonds->a[k - nl->npairs];
    PetscInt b = k < nl->npairs ? nl->b[k] : sim->bonds->b[k - nl->npairs];
    PetscInt off = (a < n && b < n) ? 0 : 1;
    if (grow[a] < 0 || grow[b] < 0 || grow[a] == grow[b]) continue;
    cnt[2 * a + off] += 1;
    cnt[2 * b + off] += 1;
  }
  if (DemDecompActive_Private(sim)) PetscCall(DemDecompReverseAddArray_Private(sim, cnt, 2));
  PetscCallMPI(MPI_Allreduce(&nrows, &N, 1, MPIU_INT, MPI_SUM, sim->comm));
  for (PetscInt i = 0; i < n; i++) rstart = grow[i] >= 0 ? PetscMin(rstart, grow[i]) : rstart;
  for (PetscInt i = 0; i < n; i++) {
    PetscInt r = grow[i] - rstart;
    if (grow[i] < 0) continue;
    dnnz[r] = PetscMin(1 + (PetscInt)cnt[2 * i], nrows);
    onnz[r] = PetscMin((PetscInt)cnt[2 * i + 1], N - nrows);
  }
  PetscCall(MatCreate(sim->comm, J));
  PetscCall(MatSetSizes(*J, 6 * nrows, 6 * nrows, 6 * N, 6 * N));
  PetscCall(MatSetType(*J, sym ? MATMPISBAIJ : MATMPIBAIJ));
  PetscCall(MatSetBlockSize(*J, 6));
  if (sym) PetscCall(MatMPISBAIJSetPreallocation(*J, 6, 0, dnnz, 0, onnz));
  else PetscCall(MatMPIBAIJSetPreallocation(*J, 6, 0, dnnz, 0, onnz));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (sym) PetscCall(MatSetOption(*J, MAT_IGNORE_LOWER_TRIANGULAR, PETSC_TRUE));
  PetscCall(ISLocalToGlobalMappingCreate(sim->comm, 6, nb, grow, PETSC_COPY_VALUES, &map));
  PetscCall(MatSetLocalToGlobalMapping(*J, map, map));
  PetscCall(ISLocalToGlobalMappingDestroy(&map));
  { /* the pattern of the pairs, assembled once: the off-process columns (ghosts) are then known
       at the first assembly of values (PETSc 3.18's MPIBAIJ crashed in MatMult when the first
       off-process column appeared only in a later assembly) */
    PetscReal Z[144];
    PetscCall(PetscArrayzero(Z, 144));
    for (PetscInt i = 0; i < n; i++)
      if (grow[i] >= 0) PetscCall(MatSetValuesBlocked(*J, 1, &grow[i], 1, &grow[i], Z, ADD_VALUES));
    for (PetscInt k = 0; k < nl->npairs + nbond; k++) {
      PetscInt idx[2];
      idx[0] = k < nl->npairs ? nl->a[k] : sim->bonds->a[k - nl->npairs];
      idx[1] = k < nl->npairs ? nl->b[k] : sim->bonds->b[k - nl->npairs];
      if (grow[idx[0]] < 0 || grow[idx[1]] < 0) continue;
      PetscCall(MatSetValuesBlockedLocal(*J, 2, idx, 2, idx, Z, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(*J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*J, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(PetscFree(cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v x: [r]x v = r x v, row-major */
static inline void DemCross(const PetscReal r[3], PetscReal S[9])
{
  S[0] = 0, S[1] = -r[2], S[2] = r[1];
  S[3] = r[2], S[4] = 0, S[5] = -r[0];
  S[6] = -r[1], S[7] = r[0], S[8] = 0;
}

/*
  DemForcesJacobianBlock_Private - the 12x12 block (row-major, rows and columns: a's six DOF
  then b's) of contact c of the last force evaluation, scaled as in DemForcesJacobian.
  Returns *any = PETSC_FALSE (and leaves B unset) for a contact that contributes nothing.
*/
PetscErrorCode DemForcesJacobianBlock_Private(DemSim sim, PetscInt c, PetscReal cstiff, PetscReal cdamp, PetscReal B[144], PetscBool *any)
{
  const DemContactList   *cl = &sim->cl;
  const DemContactForces *cf = &sim->cf;
  const DemBodyStore     *bs = &sim->bodies;
  const PetscReal        *n = cl->nrm + 3 * c, *ra = cl->ra + 3 * c, *rb = cl->rb + 3 * c, *vr = sim->vrel + 3 * c;
  const PetscInt          a = cl->a[c], b = cl->b[c];
  PetscReal               knn = -cf->dfn_dgap[c], cn = cf->cn[c], kt = cf->slip[c] ? 0 : cf->kt[c], ct = 0;
  PetscReal               vn, vt[3], S[9], G[36], SG[36], Xa[9], Xb[9], sn, st;

  PetscFunctionBegin;
  vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
  for (int j = 0; j < 3; j++) vt[j] = vr[j] - vn * n[j];
  if (cf->fdamp && !cf->slip[c]) {
    const PetscReal *D  = cf->fdamp + 3 * c;
    PetscReal        Dn = D[0] * n[0] + D[1] * n[1] + D[2] * n[2], vt2 = vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2], Dv = 0;
    for (int j = 0; j < 3; j++) Dv += (D[j] - Dn * n[j]) * vt[j];
    if (vt2 > 0 && -Dv > 0) ct = -Dv / vt2;
  }
  if (!(knn != 0 || cn != 0 || kt != 0 || ct != 0 || cf->fn[c] != 0)) {
    *any = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  *any = PETSC_TRUE;
  sn   = cstiff * knn + cdamp * cn;
  st   = cstiff * kt + cdamp * ct;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) S[3 * i + j] = (i == j ? st : 0) + (sn - st) * n[i] * n[j];
  /* G = [I, -[ra]x, -I, [rb]x] */
  DemCross(ra, Xa);
  DemCross(rb, Xb);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      G[12 * i + j]     = i == j ? 1 : 0;
      G[12 * i + 3 + j] = -Xa[3 * i + j];
      G[12 * i + 6 + j] = i == j ? -1 : 0;
      G[12 * i + 9 + j] = Xb[3 * i + j];
    }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 12; j++) SG[12 * i + j] = S[3 * i] * G[j] + S[3 * i + 1] * G[12 + j] + S[3 * i + 2] * G[24 + j];
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) B[12 * i + j] = G[i] * SG[j] + G[12 + i] * SG[12 + j] + G[24 + i] * SG[24 + j];
  /* turn of the normal between two spheres */
  if (!((bs->flags[a] | bs->flags[b]) & DEM_WALL) && sim->shapes[bs->shape[a]]->kind == DEM_KIND_SPHERE && sim->shapes[bs->shape[b]]->kind == DEM_KIND_SPHERE) {
    PetscReal d[3] = {rb[0] - ra[0], rb[1] - ra[1], rb[2] - ra[2]}, dist = PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    PetscReal fe = cf->fn[c] + cn * vn;
    if (dist > 0 && fe != 0) {
      const PetscReal g = -cstiff * fe / dist;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
          PetscReal p = g * ((i == j ? 1 : 0) - n[i] * n[j]);
          B[12 * i + j] += p;
          B[12 * i + 6 + j] -= p;
          B[12 * (6 + i) + j] -= p;
          B[12 * (6 + i) + 6 + j] += p;
        }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemForcesJacobian - adds cstiff K + cdamp C of every contact of the last DemForcesCompute
  (at state `st`) to J (see the head of this file). J must carry a block local-to-global
  mapping from body index to block row (DemJacobianCreate_Private); the caller adds its own
  terms (mass, ...) and assembles. Not collective (serial matrix of a replicated store).

  Input: sim, st (the state of the last force evaluation), cstiff, cdamp
  Output: J (values added, not assembled)
*/
PetscErrorCode DemForcesJacobian(DemSim sim, const DemState *st, PetscReal cstiff, PetscReal cdamp, Mat J)
{
  const DemContactList *cl = &sim->cl;

  PetscFunctionBegin;
  (void)st; /* spheres: the lever arms and normals of the contact list are those of st */
  for (PetscInt c = 0; c < cl->n; c++) {
    PetscReal B[144];
    PetscInt  idx[2] = {cl->a[c], cl->b[c]};
    PetscBool any;
    PetscCall(DemForcesJacobianBlock_Private(sim, c, cstiff, cdamp, B, &any));
    if (any) PetscCall(MatSetValuesBlockedLocal(J, 2, idx, 2, idx, B, ADD_VALUES));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemForcesDissipative_Private - the dissipative (velocity-dependent) part of the contact
  forces and torques of the last DemForcesCompute, per body: the normal dashpots
  -cn vn n (the laws' contract for cn) plus the tangential part of the laws' fdamp column.
  fd, td: [3 (n + nghost)], overwritten.
*/
PetscErrorCode DemForcesDissipative_Private(DemSim sim, PetscReal *fd, PetscReal *td)
{
  const DemContactList   *cl = &sim->cl;
  const DemContactForces *cf = &sim->cf;
  const PetscInt          nb = sim->bodies.n + sim->bodies.nghost;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(fd, 3 * nb));
  PetscCall(PetscArrayzero(td, 3 * nb));
  for (PetscInt c = 0; c < cl->n; c++) {
    const PetscInt   a = cl->a[c], b = cl->b[c];
    const PetscReal *n = cl->nrm + 3 * c, *ra = cl->ra + 3 * c, *rb = cl->rb + 3 * c, *vr = sim->vrel + 3 * c;
    PetscReal        vn = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2], D[3];
    if (cf->cn[c] == 0 && !cf->fdamp) continue;
    for (int j = 0; j < 3; j++) D[j] = -cf->cn[c] * vn * n[j];
    if (cf->fdamp) {
      const PetscReal *E  = cf->fdamp + 3 * c;
      PetscReal        En = E[0] * n[0] + E[1] * n[1] + E[2] * n[2];
      for (int j = 0; j < 3; j++) D[j] += E[j] - En * n[j];
    }
    DemPairForceApply_Private(fd, td, a, b, ra, rb, D);
  }
  PetscCall(DemSimConstrain(sim, fd, td));
  PetscFunctionReturn(PETSC_SUCCESS);
}
