/*
  cd_compat_mpi.c - the compatibility post-solve of the `cd` integrator (cd_compat.c,
  004_66a055dbe6238b20.txt section 7, Algorithm 1 step 2) on several MPI ranks
  (src/core/decomp.c; issue 9).

  The post-solve is the no-tension truss problem 004 eq. (36) over the contacts closed at the
  end of the step. On a decomposed run each contact lives on the rank that owns its lower-id
  body, a body's F~ (004 eq. (37)) and F_ext on its owner. The problem is gathered on rank 0
  and solved there by the serial code (DemCDCompatSolve_Private), then the compatible force
  of every contact goes back to the rank that holds it:
   1. every rank sends its owned bodies with a mobile DOF (Gamma_N): global id, the six
      mobility flags, F~ and F_ext (19 reals), and every contact of its system: gid a, gid b,
      feature, the row of B (12), the CD force f, the previous compatible force fw, the
      end-of-step gap, the effective radius (closedness test) and k~ (already normalized over
      every rank's contacts, DemCDRelativeStiffness_Private): 20 reals;
   2. rank 0 numbers the bodies by global id (a body no rank sent - a wall, a fixed body - is
      immobile there: its DOF are Gamma_D, as on one rank), orders the contacts by
      (gid a, gid b, feature), which does not depend on the number of ranks, and solves;
   3. the forces are scattered back in each rank's order; the solve's statistics (iterations,
      residuals, sizes) are broadcast so that every rank reports the same.
  The displacements' warm start (cp->umap, keyed by body gid and DOF) and the force scale of
  the last solve live on rank 0 only; checkpoints are written by rank 0 and read by every
  rank, so a restart on any number of ranks warm-starts the same way.
  Cost: the gather and the scatter are O(bodies + contacts) per post-solve, the solve is the
  serial one; tests/cases/mpi_cd_compat.sh compares 1 and 2 ranks.
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

PetscErrorCode DemCDCompatSolveMPI_Private(DemSim sim, DemCDSystem *sys, const PetscBool *mobile, const PetscReal *Ft, const PetscReal *Fext, PetscReal power, DemCDCompat *cp)
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
  PetscCall(PetscFree2(bsend, csend));
  if (sim->rank == 0) {
    PetscCall(PetscFree3(brecv, crecv, fcg));
    PetscCall(PetscFree4(bcnt, boff, ccnt, coff));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
