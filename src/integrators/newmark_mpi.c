/*
  newmark_mpi.c - integrator newmark (newmark.c, 000_c57329b1a40312e0.txt) on several MPI ranks
  (src/core/decomp.c; issue 9). The distributed assembly is the one of the variational
  integrator (src/core/jacobian.c): the unknowns are the owned mobile bodies, six per body,
  numbered in global-id order on each rank and rank after rank
  (DemJacobianNumberingGlobal_Private: the ghosts get their owners' global rows), the Newton
  matrix a MATMPIBAIJ preallocated from the owned + ghost pairs and assembled once with zeros
  (DemJacobianCreateGlobal_Private), the blocks of a contact with a ghost added with global
  indices (PETSc moves the ghost's rows to its owner at assembly). What is here:

  - the per-body field DEM_NM_FIELD_NAME (newmark_mpi.h): newmark's state between steps that
    the store does not hold - the accelerations acc(i), wdot(i) and the moment M(i) of
    000 eq. (20)-(22) - and, during a night-owl re-search (000 section 2.6.3) that rebuilds the
    neighbour list at the trial positions, the position x(i) and the increments (u, alpha) of
    the converged iterate. A registered field travels with its body when it migrates and is
    copied to its ghosts (decomp.c's body records), so that after a rebuild every rank finds
    the state of the bodies it now owns. Its name starts with '~': checkpoints do not write it
    (checkpoint.c); newmark's own checkpoint section writes the accelerations from it in the
    serial layout (newmark.c), so a checkpoint restarts on any number of ranks;
  - the numbering (global rows kept for the Jacobian's local-to-global mapping);
  - the contacts at i of the penetration test (000 section 2.4.7) and the contacts seen by the
    Newton solve (night owls) gathered on every rank: a pair changes rank at a rebuild, and
    the test must find its state at i wherever it is evaluated at i+1;
  - reductions of the step's decisions (the list's reach, the night-owl displacement test and
    count), so that every rank takes the decision the serial run takes.
*/
#include "newmark_mpi.h"

struct _n_DemNmMPI {
  DemSim     sim;
  PetscInt   field;     /* index of the per-body field in the store */
  PetscInt  *grow, gcap;
  PetscMPIInt *cnt, *off;
  PetscReal *sb, *rb;   /* key records: 3 gids (as reals) + 4 normal/gap reals */
  PetscInt   sbcap, rbcap;
};

PetscErrorCode DemNmMPICreate_Private(DemSim sim, DemNmMPI *mp)
{
  DemNmMPI p;

  PetscFunctionBegin;
  PetscCall(PetscNew(&p));
  p->sim = sim;
  PetscCall(DemBodyStoreRegisterField(&sim->bodies, DEM_NM_FIELD_NAME, DEM_NM_FIELD, &p->field));
  PetscCall(DemDecompFieldsChanged_Private(sim)); /* the records carry it from the next rebuild */
  PetscCall(PetscMalloc2(sim->size, &p->cnt, sim->size + 1, &p->off));
  *mp = p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNmMPIDestroy_Private(DemNmMPI *mp)
{
  PetscFunctionBegin;
  if (!*mp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscFree((*mp)->grow));
  PetscCall(PetscFree2((*mp)->cnt, (*mp)->off));
  PetscCall(PetscFree((*mp)->sb));
  PetscCall(PetscFree((*mp)->rb));
  PetscCall(PetscFree(*mp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscReal *DemNmMPIField_Private(DemNmMPI p)
{
  return p->sim->bodies.extra[p->field];
}

PetscReal *DemNmMPIStoreField_Private(const DemBodyStore *bs)
{
  for (PetscInt k = 0; k < bs->nextra; k++)
    if (!strcmp(bs->extra_name[k], DEM_NM_FIELD_NAME) && bs->extra_ncomp[k] == DEM_NM_FIELD) return bs->extra[k];
  return NULL;
}

PetscErrorCode DemNmMPINumber_Private(DemNmMPI p, PetscInt row[], PetscInt *nrows, PetscInt *nglobal)
{
  DemSim         sim = p->sim;
  const PetscInt nb  = sim->bodies.n + sim->bodies.nghost;
  PetscInt       rstart;

  PetscFunctionBegin;
  if (nb + 1 > p->gcap) {
    PetscCall(PetscFree(p->grow));
    p->gcap = PetscMax(nb + 1, 2 * p->gcap);
    PetscCall(PetscMalloc1(p->gcap, &p->grow));
  }
  PetscCall(DemJacobianNumberingGlobal_Private(sim, row, p->grow, nrows, &rstart));
  PetscCallMPI(MPI_Allreduce(nrows, nglobal, 1, MPIU_INT, MPI_SUM, sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

const PetscInt *DemNmMPIGlobalRows_Private(DemNmMPI p)
{
  return p->grow;
}

/* room for n contact keys (3 int64 each, plus a 4th slot of scratch for sorting when nrm is
   NULL) and, with nrm, their normals (4 reals each): the layout of newmark.c's DemNmCollect */
PetscErrorCode DemNmKeysReserve_Private(PetscInt n, PetscInt *cap, int64_t **keys, PetscReal **nrm)
{
  PetscFunctionBegin;
  if (n <= *cap) PetscFunctionReturn(PETSC_SUCCESS);
  *cap = PetscMax(n, 2 * *cap);
  if (nrm) {
    PetscCall(PetscFree2(*keys, *nrm));
    PetscCall(PetscMalloc2(3 * *cap + 3, keys, 4 * *cap + 4, nrm));
  } else {
    PetscCall(PetscFree(*keys));
    PetscCall(PetscMalloc1(4 * *cap + 4, keys));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* key records: gid a, gid b, feature (int64 bit patterns), normal and gap */
static int DemNmMPICmp(const void *x, const void *y)
{
  const PetscReal *a = (const PetscReal *)x, *b = (const PetscReal *)y;
  for (int k = 0; k < 3; k++) {
    int64_t u, v;
    memcpy(&u, a + k, sizeof(u));
    memcpy(&v, b + k, sizeof(v));
    if (u != v) return u < v ? -1 : 1;
  }
  return 0;
}

PetscErrorCode DemNmMPIGatherKeys_Private(DemNmMPI p, PetscInt *n, PetscInt *cap, int64_t **keys, PetscReal **nrm)
{
  DemSim      sim = p->sim;
  PetscMPIInt mine = (PetscMPIInt)(7 * *n);
  PetscInt    tot;

  PetscFunctionBegin;
  if (7 * (*n + 1) > p->sbcap) {
    PetscCall(PetscFree(p->sb));
    p->sbcap = PetscMax(7 * (*n + 1), 2 * p->sbcap);
    PetscCall(PetscMalloc1(p->sbcap, &p->sb));
  }
  for (PetscInt c = 0; c < *n; c++) {
    memcpy(p->sb + 7 * c, *keys + 3 * c, 3 * sizeof(int64_t));
    for (int j = 0; j < 4; j++) p->sb[7 * c + 3 + j] = nrm ? (*nrm)[4 * c + j] : 0;
  }
  PetscCallMPI(MPI_Allgather(&mine, 1, MPI_INT, p->cnt, 1, MPI_INT, sim->comm));
  p->off[0] = 0;
  for (PetscMPIInt r = 0; r < sim->size; r++) p->off[r + 1] = p->off[r] + p->cnt[r];
  tot = p->off[sim->size] / 7;
  if (7 * (tot + 1) > p->rbcap) {
    PetscCall(PetscFree(p->rb));
    p->rbcap = PetscMax(7 * (tot + 1), 2 * p->rbcap);
    PetscCall(PetscMalloc1(p->rbcap, &p->rb));
  }
  PetscCallMPI(MPI_Allgatherv(p->sb, mine, MPIU_REAL, p->rb, p->cnt, p->off, MPIU_REAL, sim->comm));
  if (tot > 1) qsort(p->rb, (size_t)tot, 7 * sizeof(PetscReal), DemNmMPICmp);
  PetscCall(DemNmKeysReserve_Private(tot, cap, keys, nrm));
  for (PetscInt c = 0; c < tot; c++) {
    const PetscReal *o = p->rb + 7 * c;
    memcpy(*keys + 3 * c, o, 3 * sizeof(int64_t));
    if (nrm)
      for (int j = 0; j < 4; j++) (*nrm)[4 * c + j] = o[3 + j];
  }
  *n = tot;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNmMPIMax_Private(DemNmMPI p, PetscReal *v)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPIU_REAL, MPIU_MAX, p->sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNmMPISumInt_Private(DemNmMPI p, PetscInt *v)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPIU_INT, MPI_SUM, p->sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemNmMPIForwardTrial_Private - the owners' trial state of an iterate (newmark.c's
  DemNmTrialState: x, v, w, q and the increments u, alpha, store layout) into their ghosts, and
  the ghosts' Xi(alpha) (000 eq. (9)) and Q(alpha) (000 eq. (6)), which the contact blocks of a
  pair with a ghost map through (newmark.c's DemNmMapBlock). Collective.
*/
PetscErrorCode DemNmMPIForwardTrial_Private(DemNmMPI p, PetscReal *x, PetscReal *v, PetscReal *w, PetscReal *q, PetscReal *dx, PetscReal *da, PetscReal *Xi, PetscReal *Qd)
{
  const DemBodyStore *bs = &p->sim->bodies;

  PetscFunctionBegin;
  PetscCall(DemDecompForwardState_Private(p->sim, x, v, w, q, dx, da));
  for (PetscInt i = bs->n; i < bs->n + bs->nghost; i++) {
    const PetscReal *al = da + 3 * i, s = 4.0 / (4.0 + al[0] * al[0] + al[1] * al[1] + al[2] * al[2]);
    PetscReal       *X  = Xi + 9 * i;
    DemRodriguesToMatrix(al, Qd + 9 * i);
    X[0] = X[4] = X[8] = s;
    X[1] = -0.5 * s * al[2], X[2] = 0.5 * s * al[1];
    X[3] = 0.5 * s * al[2], X[5] = -0.5 * s * al[0];
    X[6] = -0.5 * s * al[1], X[7] = 0.5 * s * al[0];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
