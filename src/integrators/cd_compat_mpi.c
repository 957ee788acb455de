/*
  cd_compat_mpi.c - the compatibility post-solve of the `cd` integrator (cd_compat.c,
  004_66a055dbe6238b20.txt section 7, Algorithm 1 step 2) on several MPI ranks
  (src/core/decomp.c; issue 9).

  The post-solve is the no-tension truss problem 004 eq. (36) over the contacts closed at the
  end of the step. On a decomposed run each contact lives on the rank that owns its lower-id
  body (decomp.c), a body's F~ (004 eq. (37)) and F_ext on its owner. The problem is assembled
  as a distributed PETSc problem on the run's communicator and solved there by the serial
  solver code (DemCDCompatCore_Private: TAOALMM, then the Newton polish with CG and block
  Jacobi / incomplete Cholesky per rank, its direct fallback MUMPS' parallel Cholesky):
   - rows of A (004 eq. (36): scaled B^T): the Gamma_N DOF of the rank's owned bodies that a
     problem contact touches, numbered rank after rank, by (gid, DOF) within a rank (owned
     bodies are sorted by gid, decomp.c); columns: the rank's own contacts of the problem,
     numbered by (gid a, gid b, feature) within the rank. A contact with a ghost adds its
     entries with the ghost's global row, which PETSc moves to the owner at assembly;
   - the row norms of the scaling and the rows' nonzero counts: each rank's contributions
     summed into the owners (one reverse exchange), the rows' global numbers and norms sent to
     the ghosts (one forward exchange);
   - the clusters of mobile bodies joined by closed contacts (free-flying clusters carry no
     force and are left out, as on one rank): union-find over the rank's owned + ghost bodies;
     a cluster is loaded when any of its bodies is, and the flags go to the owners and back to
     the ghosts (a reverse and a forward exchange) until no rank finds a new loaded cluster
     (one round per rank boundary a cluster crosses, plus one);
   - the force scale, the load scale and the problem's size are reductions; the objective and
     the dual potential sum over the ranks (cd_compat.c), the rest are PETSc's vector ops;
   - the warm start: each rank keeps the displacements u (cp->umap, keyed by gid and DOF) of
     its owned and its ghost bodies (the owners' values, forwarded), so a body that migrates
     at a rebuild (it was a ghost of its new owner) keeps its warm start; a checkpoint holds
     every rank's map (DemCDCompatMPIGather_Private, rank 0 writes), read on every rank, so a
     restart on any number of ranks warm-starts the same way;
   - the equilibrium residual B^T f_c - F~: each rank's contacts' parts summed into the owners
     (reverse exchange), the largest over the ranks; each rank also keeps its own largest
     (cp->eqres_rank_max, printed with -cd_view).
  No rank holds the whole problem: communication is O(ghosts) per exchange plus PETSc's.
  Errors (issue 9 part 5): each fallible rank-local step (the work arrays, the ordering and
  the assembly of the rank's contacts) and the TAOALMM / Newton stage return their PETSc error
  code into one agreement (DemCDCAgree: a reduction, then the lowest failing rank's message
  broadcast) before the next collective call, so a failure on one rank stops every rank with
  one message naming the rank, the step and the cause (tests/cases/mpi_errors.sh, injected
  with MMDEM_DEBUG_CDC_FAIL=RANK:STEP). Not covered: an error raised inside the TAOALMM or KSP
  iterations on one rank only (cd_compat.c's callbacks would have to carry it through their
  reductions); the other ranks then wait in the iteration's next reduction.
  Differences from one rank are round-off in the row norms and the reductions' order, hence
  within the solvers' tolerances (tests/cases/mpi_cd_compat.sh: 1 vs 2 ranks, per-rank sizes
  and residuals).
  Option -cd_compat_gather (for comparison only): the former path, the problem gathered on
  rank 0 and solved there by the serial code (DemCDCompatSolve_Private), the forces scattered
  back; with it the displacements' warm start lives on rank 0.
*/
#include "cdimpl.h"

#define DEM_CDC_BREC 19 /* gid, mobile[6], Ft[6], Fext[6] */
#define DEM_CDC_CREC 20 /* gid a, gid b, feature, J[12], f, fw, gend, reff, kt */

typedef struct {
  int64_t  ga, gb, gf; /* sort key */
  PetscInt at;         /* position in the gathered records */
} DemCDCKey;

static int DemCDCKeyCmp(const void *x, const void *y)
{
  const DemCDCKey *p = (const DemCDCKey *)x, *q = (const DemCDCKey *)y;
  if (p->ga != q->ga) return p->ga < q->ga ? -1 : 1;
  if (p->gb != q->gb) return p->gb < q->gb ? -1 : 1;
  if (p->gf != q->gf) return p->gf < q->gf ? -1 : 1;
  return (p->at > q->at) - (p->at < q->at);
}

static int DemCDCI64Cmp(const void *x, const void *y)
{
  const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

static inline int64_t DemCDCGetId(const PetscReal *r)
{
  int64_t g;
  memcpy(&g, r, sizeof(g));
  return g;
}

static inline void DemCDCPutId(PetscReal *r, int64_t g)
{
  memcpy(r, &g, sizeof(g));
}

/* counts (in reals) of every rank on rank 0, their offsets; *tot their sum */
static PetscErrorCode DemCDCCounts(DemSim sim, PetscMPIInt mine, PetscMPIInt *cnt, PetscMPIInt *off, PetscMPIInt *tot)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, sim->comm));
  *tot = 0;
  if (sim->rank == 0) {
    for (PetscMPIInt r = 0; r < sim->size; r++) off[r] = *tot, *tot += cnt[r];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rank 0: the gathered problem solved by the serial code; fcg[c] the force of gathered contact c */
static PetscErrorCode DemCDCSolveGathered(PetscInt nbrec, const PetscReal *brec, PetscInt ncrec, const PetscReal *crec, PetscReal power, DemCDCompat *cp, PetscReal *fcg)
{
  PetscInt    nid = 0, nb = 0;
  int64_t    *ids, *gid;
  PetscBool  *mobile;
  PetscReal  *Ft, *Fext, *reff;
  DemCDCKey  *key;
  DemCDSystem gs;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&gs, sizeof(gs)));
  /* bodies: the sent ones and every one a contact names, unique, by global id */
  PetscCall(PetscMalloc1(nbrec + 2 * ncrec + 1, &ids));
  for (PetscInt i = 0; i < nbrec; i++) ids[nid++] = DemCDCGetId(brec + DEM_CDC_BREC * i);
  for (PetscInt c = 0; c < ncrec; c++) ids[nid++] = DemCDCGetId(crec + DEM_CDC_CREC * c), ids[nid++] = DemCDCGetId(crec + DEM_CDC_CREC * c + 1);
  if (nid > 1) qsort(ids, (size_t)nid, sizeof(int64_t), DemCDCI64Cmp);
  for (PetscInt i = 0; i < nid; i++)
    if (!nb || ids[i] != ids[nb - 1]) ids[nb++] = ids[i];
  gid = ids;
  PetscCall(PetscMalloc3(6 * nb + 1, &mobile, 6 * nb + 1, &Ft, 6 * nb + 1, &Fext));
  for (PetscInt j = 0; j < 6 * nb; j++) mobile[j] = PETSC_FALSE, Ft[j] = 0, Fext[j] = 0;
  for (PetscInt i = 0; i < nbrec; i++) {
    const PetscReal *r = brec + DEM_CDC_BREC * i;
    int64_t          g = DemCDCGetId(r);
    const int64_t   *p = (const int64_t *)bsearch(&g, gid, (size_t)nb, sizeof(int64_t), DemCDCI64Cmp);
    PetscInt         b = (PetscInt)(p - gid);
    for (int d = 0; d < 6; d++) {
      mobile[6 * b + d] = r[1 + d] != 0 ? PETSC_TRUE : PETSC_FALSE;
      Ft[6 * b + d]     = r[7 + d];
      Fext[6 * b + d]   = r[13 + d];
    }
  }
  /* contacts in (gid a, gid b, feature) order */
  gs.nc  = ncrec;
  gs.cap = ncrec;
  PetscCall(PetscMalloc1(ncrec + 1, &key));
  for (PetscInt c = 0; c < ncrec; c++) {
    const PetscReal *r = crec + DEM_CDC_CREC * c;
    key[c].ga = DemCDCGetId(r), key[c].gb = DemCDCGetId(r + 1), key[c].gf = DemCDCGetId(r + 2), key[c].at = c;
  }
  if (ncrec > 1) qsort(key, (size_t)ncrec, sizeof(DemCDCKey), DemCDCKeyCmp);
  PetscCall(PetscMalloc3(ncrec + 1, &gs.a, ncrec + 1, &gs.b, ncrec + 1, &gs.src));
  PetscCall(PetscMalloc3(12 * ncrec + 1, &gs.J, ncrec + 1, &gs.f, ncrec + 1, &gs.fw));
  PetscCall(PetscMalloc4(ncrec + 1, &gs.gend, ncrec + 1, &gs.kt, ncrec + 1, &gs.fc, ncrec + 1, &reff));
  for (PetscInt k = 0; k < ncrec; k++) {
    const PetscReal *r = crec + DEM_CDC_CREC * key[k].at;
    const int64_t   *pa = (const int64_t *)bsearch(&key[k].ga, gid, (size_t)nb, sizeof(int64_t), DemCDCI64Cmp);
    const int64_t   *pb = (const int64_t *)bsearch(&key[k].gb, gid, (size_t)nb, sizeof(int64_t), DemCDCI64Cmp);
    gs.a[k]   = (PetscInt)(pa - gid);
    gs.b[k]   = (PetscInt)(pb - gid);
    gs.src[k] = k;
    for (int d = 0; d < 12; d++) gs.J[12 * k + d] = r[3 + d];
    gs.f[k]    = r[15];
    gs.fw[k]   = r[16];
    gs.gend[k] = r[17];
    reff[k]    = r[18];
    gs.kt[k]   = r[19];
  }
  PetscCall(DemCDCompatSolve_Private(nb, gid, reff, &gs, mobile, Ft, Fext, power, cp));
  for (PetscInt k = 0; k < ncrec; k++) fcg[key[k].at] = gs.fc[k];
  PetscCall(PetscFree3(gs.a, gs.b, gs.src));
  PetscCall(PetscFree3(gs.J, gs.f, gs.fw));
  PetscCall(PetscFree4(gs.gend, gs.kt, gs.fc, reff));
  PetscCall(PetscFree(key));
  PetscCall(PetscFree3(mobile, Ft, Fext));
  PetscCall(PetscFree(ids));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -cd_compat_gather: the whole problem gathered on rank 0 and solved there (comparison) */
static PetscErrorCode DemCDCompatSolveGathered(DemSim sim, DemCDSystem *sys, const PetscBool *mobile, const PetscReal *Ft, const PetscReal *Fext, PetscReal power, DemCDCompat *cp)
{
  DemBodyStore   *bs = &sim->bodies;
  DemContactList *cl = &sim->cl;
  const PetscInt  nb = bs->n, nc = sys->nc;
  PetscInt        nbs = 0;
  PetscMPIInt     bcnt_me, ccnt_me, *bcnt = NULL, *boff = NULL, *ccnt = NULL, *coff = NULL, btot = 0, ctot = 0;
  PetscReal      *bsend, *csend, *brecv = NULL, *crecv = NULL, *fcg = NULL, stats[11];

  PetscFunctionBegin;
  /* 1. records of the owned mobile bodies and of the contacts */
  for (PetscInt i = 0; i < nb; i++)
    for (int d = 0; d < 6; d++)
      if (mobile[6 * i + d]) {
        nbs++;
        break;
      }
  PetscCall(PetscMalloc2(DEM_CDC_BREC * nbs + 1, &bsend, DEM_CDC_CREC * nc + 1, &csend));
  nbs = 0;
  for (PetscInt i = 0; i < nb; i++) {
    PetscReal *r = bsend + DEM_CDC_BREC * nbs;
    PetscBool  any = PETSC_FALSE;
    for (int d = 0; d < 6; d++) any = any || mobile[6 * i + d];
    if (!any) continue;
    DemCDCPutId(r, bs->gid[i]);
    for (int d = 0; d < 6; d++) {
      r[1 + d]  = mobile[6 * i + d] ? 1.0 : 0.0;
      r[7 + d]  = mobile[6 * i + d] ? Ft[6 * i + d] : 0.0;
      r[13 + d] = mobile[6 * i + d] ? Fext[6 * i + d] : 0.0;
    }
    nbs++;
  }
  for (PetscInt k = 0; k < nc; k++) {
    PetscReal *r = csend + DEM_CDC_CREC * k;
    DemCDCPutId(r, bs->gid[sys->a[k]]);
    DemCDCPutId(r + 1, bs->gid[sys->b[k]]);
    DemCDCPutId(r + 2, cl->feature[sys->src[k]]);
    for (int d = 0; d < 12; d++) r[3 + d] = sys->J[12 * k + d];
    r[15] = sys->f[k];
    r[16] = sys->fw[k];
    r[17] = sys->gend[k];
    r[18] = cl->reff[sys->src[k]];
    r[19] = sys->kt[k];
  }
  PetscCheck((PetscInt64)DEM_CDC_CREC * nc < PETSC_MPI_INT_MAX && (PetscInt64)DEM_CDC_BREC * nbs < PETSC_MPI_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "cd compatible on MPI: %" PetscInt_FMT " contacts on one rank exceed the gather's int counts", nc);
  bcnt_me = (PetscMPIInt)(DEM_CDC_BREC * nbs);
  ccnt_me = (PetscMPIInt)(DEM_CDC_CREC * nc);
  if (sim->rank == 0) PetscCall(PetscMalloc4(sim->size, &bcnt, sim->size, &boff, sim->size, &ccnt, sim->size, &coff));
  PetscCall(DemCDCCounts(sim, bcnt_me, bcnt, boff, &btot));
  PetscCall(DemCDCCounts(sim, ccnt_me, ccnt, coff, &ctot));
  if (sim->rank == 0) PetscCall(PetscMalloc3(btot + 1, &brecv, ctot + 1, &crecv, ctot / DEM_CDC_CREC + 1, &fcg));
  PetscCallMPI(MPI_Gatherv(bsend, bcnt_me, MPIU_REAL, brecv, bcnt, boff, MPIU_REAL, 0, sim->comm));
  PetscCallMPI(MPI_Gatherv(csend, ccnt_me, MPIU_REAL, crecv, ccnt, coff, MPIU_REAL, 0, sim->comm));
  /* 2. the serial solve on rank 0 */
  if (sim->rank == 0) {
    PetscCall(DemCDCSolveGathered(btot / DEM_CDC_BREC, brecv, ctot / DEM_CDC_CREC, crecv, power, cp, fcg));
    /* the scatter counts are in forces: one per contact record */
    for (PetscMPIInt r = 0; r < sim->size; r++) ccnt[r] /= DEM_CDC_CREC, coff[r] /= DEM_CDC_CREC;
    stats[0] = (PetscReal)cp->its, stats[1] = (PetscReal)cp->polish_its, stats[2] = cp->res_almm, stats[3] = cp->res;
    stats[4] = (PetscReal)cp->nrows, stats[5] = (PetscReal)cp->nvars, stats[6] = cp->eqres, stats[7] = cp->power_used;
    stats[8] = (PetscReal)cp->reason, stats[9] = (PetscReal)cp->almm_failed, stats[10] = cp->fs_prev;
  }
  /* 3. the forces back to their ranks, the statistics to every rank */
  PetscCallMPI(MPI_Scatterv(fcg, ccnt, coff, MPIU_REAL, sys->fc, (PetscMPIInt)nc, MPIU_REAL, 0, sim->comm));
  PetscCallMPI(MPI_Bcast(stats, 11, MPIU_REAL, 0, sim->comm));
  cp->its         = (PetscInt)stats[0];
  cp->polish_its  = (PetscInt)stats[1];
  cp->res_almm    = stats[2];
  cp->res         = stats[3];
  cp->nrows       = (PetscInt)stats[4];
  cp->nvars       = (PetscInt)stats[5];
  cp->eqres       = stats[6];
  cp->power_used  = stats[7];
  cp->reason      = (int)stats[8];
  cp->almm_failed = (PetscInt)stats[9];
  cp->fs_prev     = stats[10];
  cp->nrows_local = sim->rank == 0 ? cp->nrows : 0;
  cp->nvars_local = sim->rank == 0 ? cp->nvars : 0;
  cp->eqres_rank_max = PetscMax(cp->eqres_rank_max, sim->rank == 0 ? cp->eqres : 0.0);
  PetscCall(PetscFree2(bsend, csend));
  if (sim->rank == 0) {
    PetscCall(PetscFree3(brecv, crecv, fcg));
    PetscCall(PetscFree4(bcnt, boff, ccnt, coff));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPI: the contacts of this rank in the problem, by (gid a, gid b, feature) */
static PetscErrorCode DemCDCOrder(DemSim sim, const DemCDSystem *sys, const PetscInt *var, PetscInt nvl, DemCDCKey *key, PetscInt *col)
{
  const int64_t *gid = sim->bodies.gid;
  PetscInt       n   = 0;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < sys->nc; k++) {
    if (var[k] < 0) continue;
    key[n].ga = gid[sys->a[k]], key[n].gb = gid[sys->b[k]], key[n].gf = sim->cl.feature[sys->src[k]], key[n].at = k;
    n++;
  }
  PetscCheck(n == nvl, PETSC_COMM_SELF, PETSC_ERR_PLIB, "cd compatible on MPI: %" PetscInt_FMT " contacts counted, %" PetscInt_FMT " ordered", nvl, n);
  if (n > 1) qsort(key, (size_t)n, sizeof(DemCDCKey), DemCDCKeyCmp);
  for (PetscInt k = 0; k < sys->nc; k++) col[k] = -1;
  for (PetscInt i = 0; i < n; i++) col[key[i].at] = i;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MPI_DEBUG: MMDEM_DEBUG_CDC_FAIL=RANK:STEP makes step STEP (alloc, order, assemble, solve)
   of the distributed post-solve fail with a PETSc error on rank RANK only (mpi_errors.sh) */
static PetscErrorCode DemCDCInject(DemSim sim, const char step[])
{
  const char *e = getenv("MMDEM_DEBUG_CDC_FAIL");
  char        s[32];
  int         r;

  PetscFunctionBegin;
  if (e && sscanf(e, "%d:%31s", &r, s) == 2 && r == (int)sim->rank && !strcmp(s, step)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "error injected by MMDEM_DEBUG_CDC_FAIL=%s", e);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* issue 9 part 5: the outcome of a fallible step of the distributed post-solve, agreed before
   the next collective call. ierr: this rank's error code (0: none). When any rank failed,
   every rank stops with the lowest failing rank's message (its rank, the step and PETSc's
   message), which main prints once, on rank 0; the ranks never wait in different
   collectives. Collective. */
static PetscErrorCode DemCDCAgree(DemSim sim, PetscErrorCode ierr, const char step[])
{
  PetscMPIInt mine = ierr ? sim->size - sim->rank : 0, red;
  char        msg[768] = "";

  PetscFunctionBegin;
  if (ierr) {
    const char *text = NULL;
    if (!DemLastError()[0]) PetscCall(PetscErrorMessage(ierr, &text, NULL));
    PetscCall(PetscSNPrintf(msg, sizeof(msg), "cd compatible post-solve (MPI): %s failed on rank %d of %d: %s (PETSc error %d)", step, (int)sim->rank, (int)sim->size, DemLastError()[0] ? DemLastError() : (text ? text : "?"), (int)ierr));
  }
  PetscCallMPI(MPI_Allreduce(&mine, &red, 1, MPI_INT, MPI_MAX, sim->comm));
  if (!red) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Bcast(msg, (PetscMPIInt)sizeof(msg), MPI_CHAR, sim->size - red, sim->comm));
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", msg);
}

/* A's entries of this rank's contacts (rank-local: the values go to their owners at assembly) */
static PetscErrorCode DemCDCFill(DemSim sim, const DemCDSystem *sys, const PetscInt *col, const PetscReal *ex, PetscInt cstart, Mat A)
{
  PetscFunctionBegin;
  PetscCall(DemCDCInject(sim, "assemble"));
  for (PetscInt k = 0; k < sys->nc; k++) {
    const PetscReal *J = sys->J + 12 * k;
    if (col[k] < 0) continue;
    for (int s = 0; s < 2; s++) {
      PetscInt         body = s ? sys->b[k] : sys->a[k];
      const PetscReal *e    = ex + 12 * body;
      for (int d = 0; d < 6; d++) {
        if (e[d] < 0 || J[6 * s + d] == 0) continue;
        PetscCall(MatSetValue(A, (PetscInt)e[d], cstart + col[k], J[6 * s + d] / e[6 + d], ADD_VALUES));
      }
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the distributed post-solve (file header) */
static PetscErrorCode DemCDCompatSolveDist(DemSim sim, DemCDSystem *sys, const PetscBool *mobile, const PetscReal *Ft, const PetscReal *Fext, PetscReal power, DemCDCompat *cp)
{
  DemBodyStore  *bs = &sim->bodies;
  const PetscInt nb = bs->n, nall = bs->n + bs->nghost, nc = sys->nc;
  const int64_t *gid = bs->gid;
  PetscInt      *par, *col, *dnz, *onz, nvl = 0, ml = 0, M, N, rstart = 0, cstart = 0;
  PetscReal     *ex, *lf, sc3[3] = {0, 0, 0}, fs, Fmax, Fref, Fcut, eq = 0;
  PetscBool     *loaded, *closed;
  DemCDCKey     *key;
  PetscInt64     tot[3];
  DemCDCompatCtx cc;
  Vec            X = NULL, Xf, Yw, Y, C;
  Mat            A;

  PetscFunctionBegin;
  cp->its = cp->polish_its = cp->nrows = cp->nvars = 0;
  cp->nrows_local = cp->nvars_local = 0;
  cp->eqres = cp->res_almm = cp->res = 0;
  cp->reason     = 0;
  cp->power_used = power;
  /* scales over the ranks: the largest CD force, F~ and F_ext on the owned mobile DOF */
  for (PetscInt k = 0; k < nc; k++) sys->fc[k] = 0, sc3[0] = PetscMax(sc3[0], sys->f[k]);
  for (PetscInt j = 0; j < 6 * nb; j++)
    if (mobile[j]) sc3[1] = PetscMax(sc3[1], PetscAbsReal(Ft[j])), sc3[2] = PetscMax(sc3[2], PetscAbsReal(Fext[j]));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sc3, 3, MPIU_REAL, MPIU_MAX, sim->comm));
  tot[0] = nc;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, tot, 1, MPIU_INT64, MPI_SUM, sim->comm));
  fs = sc3[0], Fmax = sc3[1], Fref = PetscMax(sc3[2], Fmax), Fcut = 1e-9 * Fref;
  if (!tot[0] || fs == 0 || Fmax <= Fcut) PetscFunctionReturn(PETSC_SUCCESS);
  {
    PetscErrorCode ierr = DemCDCInject(sim, "alloc");
    if (!ierr) ierr = PetscMalloc5(nall + 1, &par, nc + 1, &col, 12 * nall + 1, &ex, nall + 1, &lf, nc + 1, &key);
    if (!ierr) ierr = PetscMalloc2(nall + 1, &loaded, nc + 1, &closed);
    PetscCall(DemCDCAgree(sim, ierr, "allocating its work arrays"));
  }
  /* closed contacts; clusters of mobile bodies joined by them; loaded clusters over the ranks */
  DemCDCompatClusters_Private(sys, sim->cl.reff, mobile, Ft, Fcut, nall, nb, par, closed, loaded);
  for (PetscInt round = 1;; round++) {
    PetscBool grew = PETSC_FALSE;
    cp->rounds_max = PetscMax(cp->rounds_max, round);
    for (PetscInt i = 0; i < nall; i++) lf[i] = loaded[DemCDFind(par, i)] ? 1.0 : 0.0;
    PetscCall(DemDecompReverseAddArray_Private(sim, lf, 1));
    PetscCall(DemDecompForwardArray_Private(sim, lf, 1));
    for (PetscInt i = 0; i < nall; i++) {
      PetscInt r = DemCDFind(par, i);
      if (lf[i] > 0 && !loaded[r]) loaded[r] = PETSC_TRUE, grew = PETSC_TRUE;
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &grew, 1, MPIU_BOOL, MPI_LOR, sim->comm));
    if (!grew) break;
  }
  /* this rank's variables: closed contacts touching a loaded cluster; columns in key order */
  for (PetscInt k = 0; k < nc; k++) {
    PetscBool ma = PETSC_FALSE, mb = PETSC_FALSE;
    col[k] = -1;
    if (!closed[k]) continue;
    for (int d = 0; d < 6; d++) ma = ma || mobile[6 * sys->a[k] + d], mb = mb || mobile[6 * sys->b[k] + d];
    if ((ma && loaded[DemCDFind(par, sys->a[k])]) || (mb && loaded[DemCDFind(par, sys->b[k])])) col[k] = nvl++;
  }
  {
    PetscErrorCode ierr = DemCDCInject(sim, "order");
    if (!ierr) ierr = DemCDCOrder(sim, sys, col, nvl, key, col);
    PetscCall(DemCDCAgree(sim, ierr, "ordering its contacts"));
  }
  /* rows: squared norms (ex[12 i + d]) and entry counts (ex[12 i + 6 + d]) summed into the owners */
  for (PetscInt j = 0; j < 12 * nall; j++) ex[j] = 0;
  for (PetscInt k = 0; k < nc; k++) {
    const PetscReal *J = sys->J + 12 * k;
    if (col[k] < 0) continue;
    for (int s = 0; s < 2; s++) {
      PetscInt body = s ? sys->b[k] : sys->a[k];
      for (int d = 0; d < 6; d++)
        if (mobile[6 * body + d] && J[6 * s + d] != 0) ex[12 * body + d] += J[6 * s + d] * J[6 * s + d], ex[12 * body + 6 + d] += 1;
    }
  }
  PetscCall(DemDecompReverseAddArray_Private(sim, ex, 12));
  for (PetscInt j = 0; j < 6 * nb; j++)
    if (ex[12 * (j / 6) + j % 6] > 0) ml++;
  tot[0] = ml, tot[1] = nvl;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, tot, 2, MPIU_INT64, MPI_SUM, sim->comm));
  PetscCheck(tot[0] < PETSC_MAX_INT && tot[1] < PETSC_MAX_INT, sim->comm, PETSC_ERR_SUP, "cd compatible on MPI: %lld rows, %lld contacts exceed PetscInt", (long long)tot[0], (long long)tot[1]);
  M = (PetscInt)tot[0], N = (PetscInt)tot[1];
  PetscCallMPI(MPI_Exscan(&ml, &rstart, 1, MPIU_INT, MPI_SUM, sim->comm));
  PetscCallMPI(MPI_Exscan(&nvl, &cstart, 1, MPIU_INT, MPI_SUM, sim->comm));
  if (sim->rank == 0) rstart = cstart = 0; /* MPI_Exscan leaves rank 0's undefined */
  cp->nrows = M, cp->nvars = N, cp->nrows_local = ml, cp->nvars_local = nvl;
  if (!M || !N) goto done;
  /* the owners' rows: preallocation (a row's count bounds both its diagonal and off-diagonal
     blocks), then ex[12 i + d] = global row or -1, ex[12 i + 6 + d] = the row's norm, to the ghosts */
  PetscCall(PetscMalloc2(ml + 1, &dnz, ml + 1, &onz));
  {
    PetscInt r = 0;
    for (PetscInt i = 0; i < nb; i++)
      for (int d = 0; d < 6; d++) {
        PetscReal *e = ex + 12 * i;
        if (e[d] > 0) {
          dnz[r] = PetscMin((PetscInt)e[6 + d], nvl), onz[r] = PetscMin((PetscInt)e[6 + d], N - nvl);
          e[6 + d] = PetscSqrtReal(e[d]);
          e[d]     = (PetscReal)(rstart + r++);
        } else e[d] = -1, e[6 + d] = 0;
      }
  }
  PetscCall(DemDecompForwardArray_Private(sim, ex, 12));
  /* A = S B_N^T (rows scaled by 1/norm), rhs = S F~ / fs, x = f / fs */
  PetscCall(MatCreateAIJ(sim->comm, ml, nvl, M, N, 0, dnz, 0, onz, &A));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(DemCDCAgree(sim, DemCDCFill(sim, sys, col, ex, cstart, A), "assembling the constraint matrix"));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &X, &C));
  PetscCall(VecDuplicate(C, &cc.rhs));
  PetscCall(VecDuplicate(C, &Yw));
  PetscCall(VecDuplicate(C, &Y));
  PetscCall(VecDuplicate(X, &Xf));
  PetscCall(PetscMalloc1(nvl + 1, &cc.w));
  cc.q = power / (power - 1);
  cc.A = A;
  {
    PetscScalar *r, *y, *x, *xf;
    PetscReal    s = PetscPowReal(cp->fs_prev > 0 ? cp->fs_prev / fs : 1.0, cc.q - 1);
    PetscCall(VecGetArray(cc.rhs, &r));
    PetscCall(VecGetArray(Yw, &y));
    for (PetscInt j = 0; j < 6 * nb; j++) {
      const PetscReal *e = ex + 12 * (j / 6), *u;
      PetscInt         d = j % 6, l;
      if (e[d] < 0) continue;
      l    = (PetscInt)e[d] - rstart;
      r[l] = Ft[j] / (e[6 + d] * fs);
      /* warm multipliers: the previous step's displacements of these DOF (PHR: y = -u) */
      u    = DemHistoryMapGet(&cp->umap, gid[j / 6], d, 0);
      y[l] = u ? -u[0] * s * e[6 + d] : 0.0;
    }
    PetscCall(VecRestoreArray(Yw, &y));
    PetscCall(VecRestoreArray(cc.rhs, &r));
    PetscCall(VecGetArray(X, &x));
    PetscCall(VecGetArray(Xf, &xf));
    for (PetscInt k = 0; k < nc; k++) {
      if (col[k] < 0) continue;
      x[col[k]]    = PetscMax(sys->fw[k] >= 0 ? sys->fw[k] : sys->f[k], 0.0) / fs;
      xf[col[k]]   = PetscMax(sys->f[k], 0.0) / fs;
      cc.w[col[k]] = (power - 1) / power * PetscPowReal(sys->kt[k], 1.0 / (1.0 - power));
    }
    PetscCall(VecRestoreArray(Xf, &xf));
    PetscCall(VecRestoreArray(X, &x));
  }
  {
    PetscErrorCode ierr = DemCDCompatCore_Private(&cc, C, X, Xf, Yw, Y, cp);
    if (!ierr) ierr = DemCDCInject(sim, "solve");
    PetscCall(DemCDCAgree(sim, ierr, "TAOALMM / the Newton polish (DemCDCompatCore_Private)"));
  }
  /* keep the displacements of the owned bodies' rows and, forwarded, of the ghosts' */
  {
    PetscReal         *ub;
    const PetscScalar *y, *x;
    PetscCall(PetscMalloc1(6 * nall + 1, &ub));
    PetscCall(VecGetArrayRead(Y, &y));
    for (PetscInt j = 0; j < 6 * nall; j++) {
      const PetscReal *e = ex + 12 * (j / 6);
      ub[j]              = (j < 6 * nb && e[j % 6] >= 0) ? PetscRealPart(y[(PetscInt)e[j % 6] - rstart]) : 0;
    }
    PetscCall(VecRestoreArrayRead(Y, &y));
    PetscCall(DemDecompForwardArray_Private(sim, ub, 6));
    PetscCall(DemHistoryMapClear(&cp->umap));
    for (PetscInt j = 0; j < 6 * nall; j++) {
      const PetscReal *e = ex + 12 * (j / 6);
      PetscReal        u;
      if (e[j % 6] < 0) continue;
      u = ub[j] / e[6 + j % 6];
      PetscCall(DemHistoryMapPut(&cp->umap, gid[j / 6], j % 6, 0, &u));
    }
    cp->fs_prev = fs;
    PetscCall(PetscFree(ub));
    PetscCall(VecGetArrayRead(X, &x));
    for (PetscInt k = 0; k < nc; k++)
      if (col[k] >= 0) sys->fc[k] = fs * PetscMax(PetscRealPart(x[col[k]]), 0.0);
    PetscCall(VecRestoreArrayRead(X, &x));
  }
  PetscCall(DemCDCompatFree_Private(&cc, &X, &Xf, &Yw, &Y, &C));
done:
  /* unscaled equilibrium residual over the owned mobile DOF: B^T f_c - F~, every rank's
     contacts summed into the owners */
  {
    PetscReal *r = ex; /* 6 per body */
    for (PetscInt j = 0; j < 6 * nall; j++) r[j] = 0;
    DemCDCompatAddBtF_Private(sys, r);
    PetscCall(DemDecompReverseAddArray_Private(sim, r, 6));
    for (PetscInt j = 0; j < 6 * nb; j++)
      if (mobile[j]) eq = PetscMax(eq, PetscAbsReal(r[j] - Ft[j]));
    eq /= Fref;
    cp->eqres_rank_max = PetscMax(cp->eqres_rank_max, eq);
    PetscCallMPI(MPI_Allreduce(&eq, &cp->eqres, 1, MPIU_REAL, MPIU_MAX, sim->comm));
  }
  PetscCall(PetscFree5(par, col, ex, lf, key));
  PetscCall(PetscFree2(loaded, closed));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemCDCompatSolveMPI_Private(DemSim sim, DemCDSystem *sys, const PetscBool *mobile, const PetscReal *Ft, const PetscReal *Fext, PetscReal power, DemCDCompat *cp)
{
  PetscBool gather = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cd_compat_gather", &gather, NULL));
  if (gather) PetscCall(DemCDCompatSolveGathered(sim, sys, mobile, Ft, Fext, power, cp));
  else PetscCall(DemCDCompatSolveDist(sim, sys, mobile, Ft, Fext, power, cp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the displacements' map as records of 3 reals (gid, DOF, u; the gid's bits copied into a real) */
PetscErrorCode DemCDCompatMPIGather_Private(DemSim sim, DemCDCompat *cp, PetscBool gather)
{
  DemHistoryMap *m    = &cp->umap;
  PetscMPIInt    mine = 3 * (PetscMPIInt)m->count, *cnt = NULL, *off = NULL, tot = 0;
  PetscReal     *sb, *rb = NULL;
  PetscInt       e = 0;

  PetscFunctionBegin;
  if (!gather) {
    if (sim->rank == 0 && cp->uown.cap) {
      PetscCall(DemHistoryMapFree(&cp->umap));
      cp->umap = cp->uown;
      PetscCall(PetscMemzero(&cp->uown, sizeof(cp->uown)));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc1(mine + 1, &sb));
  for (PetscInt i = 0; i < m->cap; i++) {
    if (!m->used[i]) continue;
    DemCDCPutId(&sb[3 * e], m->ka[i]);
    sb[3 * e + 1] = (PetscReal)m->kb[i];
    sb[3 * e + 2] = m->val[i];
    e++;
  }
  if (sim->rank == 0) PetscCall(PetscMalloc2(sim->size, &cnt, sim->size, &off));
  PetscCall(DemCDCCounts(sim, mine, cnt, off, &tot));
  if (sim->rank == 0) PetscCall(PetscMalloc1(tot + 1, &rb));
  PetscCallMPI(MPI_Gatherv(sb, mine, MPIU_REAL, rb, cnt, off, MPIU_REAL, 0, sim->comm));
  if (sim->rank == 0) {
    cp->uown = cp->umap;
    PetscCall(DemHistoryMapInit(&cp->umap, 1));
    /* a ghost's entry is its owner's value: the duplicates agree */
    for (PetscInt k = 0; k < tot / 3; k++) PetscCall(DemHistoryMapPut(&cp->umap, DemCDCGetId(&rb[3 * k]), (int64_t)rb[3 * k + 1], 0, &rb[3 * k + 2]));
  }
  PetscCall(PetscFree(sb));
  PetscCall(PetscFree(rb));
  if (sim->rank == 0) PetscCall(PetscFree2(cnt, off));
  PetscFunctionReturn(PETSC_SUCCESS);
}
