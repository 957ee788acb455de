/*
  forces.c - forces as a function of a state (DESIGN.md "Forces are a function of a state").

  DemForcesCompute evaluates, at a given state (positions, orientations, velocities):
  gravity and external loads, then every contact: the narrow phase once per batch of
  candidate pairs of one shape-kind pair, the contact law once per batch of contacts that
  share a law, and the assembly of forces and torques in plain loops over the columns.
  History is written only when `commit` is set, so implicit integrators may evaluate trial
  states freely.
*/
#include "demimpl.h"

/* frees the per-contact force columns */
static PetscErrorCode DemForcesFreeColumns(DemSim sim)
{
  DemContactForces *cf = &sim->cf;

  PetscFunctionBegin;
  PetscCall(PetscFree(cf->fn));
  PetscCall(PetscFree(cf->ft));
  PetscCall(PetscFree(cf->dfn_dgap));
  PetscCall(PetscFree(cf->cn));
  PetscCall(PetscFree(cf->kt));
  PetscCall(PetscFree(cf->energy));
  PetscCall(PetscFree(cf->dissip));
  PetscCall(PetscFree(cf->slip));
  PetscCall(PetscFree(cf->fdamp));
  PetscCall(PetscFree(cf->eslip));
  PetscCall(PetscFree(sim->vrel));
  PetscCall(PetscFree(sim->meff));
  PetscCall(PetscFree(sim->order));
  sim->cfcap = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemForcesReserve(DemSim sim, PetscInt n)
{
  DemContactForces *cf = &sim->cf;

  PetscFunctionBegin;
  if (n <= sim->cfcap) PetscFunctionReturn(PETSC_SUCCESS);
  n = PetscMax(n, 2 * sim->cfcap);
  PetscCall(DemForcesFreeColumns(sim));
  PetscCall(PetscMalloc1(n, &cf->fn));
  PetscCall(PetscMalloc1(3 * n, &cf->ft));
  PetscCall(PetscMalloc1(n, &cf->dfn_dgap));
  PetscCall(PetscMalloc1(n, &cf->cn));
  PetscCall(PetscMalloc1(n, &cf->kt));
  PetscCall(PetscMalloc1(n, &cf->energy));
  PetscCall(PetscMalloc1(n, &cf->dissip));
  PetscCall(PetscMalloc1(n, &cf->slip));
  PetscCall(PetscCalloc1(3 * n, &cf->fdamp));
  PetscCall(PetscCalloc1(n, &cf->eslip));
  PetscCall(PetscMalloc1(3 * n, &sim->vrel));
  PetscCall(PetscMalloc1(n, &sim->meff));
  PetscCall(PetscMalloc1(n, &sim->order));
  sim->cfcap = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* frees the contact columns (they come back on demand through DemForcesReserve and
   DemContactListReserve) */
static PetscErrorCode DemForcesRelease(DemSim sim)
{
  PetscFunctionBegin;
  PetscCall(DemContactListFree(&sim->cl));
  PetscCall(DemForcesFreeColumns(sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* permutes the contact list so that contacts sharing a law are contiguous */
static PetscErrorCode DemContactsSortByLaw(DemSim sim)
{
  DemContactList *cl = &sim->cl, tmp;
  PetscInt       *cnt;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(sim->nlaw + 1, &cnt));
  for (PetscInt c = 0; c < cl->n; c++) cnt[cl->law[c] + 1]++;
  for (PetscInt l = 0; l < sim->nlaw; l++) cnt[l + 1] += cnt[l];
  for (PetscInt l = 0; l <= sim->nlaw; l++) sim->lawstart[l] = cnt[l];
  PetscCall(PetscMemzero(&tmp, sizeof(tmp)));
  PetscCall(DemContactListReserve(&tmp, cl->n));
  for (PetscInt c = 0; c < cl->n; c++) {
    PetscInt d     = cnt[cl->law[c]]++;
    tmp.a[d]       = cl->a[c];
    tmp.b[d]       = cl->b[c];
    tmp.feature[d] = cl->feature[c];
    tmp.hist[d]    = cl->hist[c];
    tmp.law[d]     = cl->law[c];
    tmp.gap[d]     = cl->gap[c];
    tmp.reff[d]    = cl->reff[c];
    for (int j = 0; j < 3; j++) {
      tmp.p[3 * d + j]   = cl->p[3 * c + j];
      tmp.nrm[3 * d + j] = cl->nrm[3 * c + j];
      tmp.ra[3 * d + j]  = cl->ra[3 * c + j];
      tmp.rb[3 * d + j]  = cl->rb[3 * c + j];
    }
  }
  tmp.n = cl->n;
  PetscCall(DemContactListFree(cl));
  *cl = tmp;
  PetscCall(PetscFree(cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscReal DemRampFactor(const DemLoad *ld, PetscReal t)
{
  if (!(ld->ramp[1] > ld->ramp[0])) return 1.0;
  if (t <= ld->ramp[0]) return 0.0;
  if (t >= ld->ramp[1]) return 1.0;
  return (t - ld->ramp[0]) / (ld->ramp[1] - ld->ramp[0]);
}

/*
  DemContactsDetect - runs the narrow phase over the neighbour list at `state` and leaves the
  contact points in sim->cl (grouped by contact law, law column set, lawstart filled).
  Integrators that need only the contact geometry (contact dynamics) call it directly.
*/
static PetscErrorCode DemContactsDetectGroups(DemSim sim, const DemState *st, const PetscBool *skip)
{
  DemBodyStore     *bs = &sim->bodies;
  DemNeighbourList *nl = &sim->nl;
  DemContactList   *cl = &sim->cl;
  PetscReal         skin = 0;
  const PetscInt   *pair  = NULL;
  const PetscReal  *shift = NULL;

  PetscFunctionBegin;
  /* narrow phase, one call per shape-kind group */
  for (PetscInt l = 0; l < sim->nlaw; l++) skin = PetscMax(skin, sim->laws[l]->activation);
  cl->n = 0;
  for (PetscInt gi = 0; gi < nl->ngroups; gi++) {
    DemPairBatch pb;
    DemCollideFn fn;
    PetscBool    sw;
    PetscInt     s0 = nl->gstart[gi], s1 = nl->gstart[gi + 1];
    if (skip && skip[gi]) continue;
    if (!pair) { /* made only when some group is not the fused laws' (neighbour.c) */
      PetscCall(DemNeighbourPairIdx_Private(sim, &pair));
      if (sim->periodic[0] || sim->periodic[1] || sim->periodic[2]) PetscCall(DemNeighbourShifts_Private(sim, &shift));
    }
    PetscCall(DemColliderGet_Private(nl->gka[gi], nl->gkb[gi], &fn, &sw));
    PetscCall(PetscMemzero(&pb, sizeof(pb)));
    pb.ka    = nl->gka[gi];
    pb.kb    = nl->gkb[gi];
    pb.n     = s1 - s0;
    pb.a     = nl->a + s0;
    pb.b     = nl->b + s0;
    pb.pair  = pair + s0;
    pb.shift = shift ? shift + 3 * s0 : NULL;
    pb.sim   = sim;
    pb.state = st;
    PetscCall(fn(pb.ka, pb.kb, &pb, skin, cl));
  }
  /* law of each contact, relative velocity at the contact point, effective mass */
  PetscCall(DemForcesReserve(sim, cl->n));
  for (PetscInt c = 0; c < cl->n; c++) {
    PetscInt a = cl->a[c], b = cl->b[c];
    cl->law[c] = sim->pairlaw[bs->material[a] * sim->nmat + bs->material[b]];
  }
  if (sim->bonds) { /* bonded pairs (bonds.c): their own law, at any distance */
    PetscCall(DemBondsDetect_Private(sim, st));
    PetscCall(DemForcesReserve(sim, cl->n));
  }
  if (sim->nlaw > 1) PetscCall(DemContactsSortByLaw(sim));
  else {
    sim->lawstart[0] = 0;
    sim->lawstart[1] = cl->n;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactsDetect(DemSim sim, const DemState *st)
{
  PetscFunctionBegin;
  PetscCall(DemContactsDetectGroups(sim, st, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemContactBatchOfLaw_Private - the batch of law l's contacts in sim->cl (the range
  [lawstart[l], lawstart[l + 1]) that DemContactsDetect groups by law), with the gap and
  relative-velocity columns taken from gap and vrel (full-length columns, e.g. cl->gap and
  sim->vrel, or an integrator's own), offset to the batch. Returns its length (0: nothing to
  compute). Not collective.
*/
PetscInt DemContactBatchOfLaw_Private(DemSim sim, PetscInt l, const PetscReal *gap, const PetscReal *vrel, DemContactBatch *cb)
{
  const DemContactList *cl = &sim->cl;
  const PetscInt        c0 = sim->lawstart[l], n = sim->lawstart[l + 1] - c0;

  memset(cb, 0, sizeof(*cb));
  if (!n) return 0; /* the columns may be NULL: no offsets */
  cb->n        = n;
  cb->a        = cl->a + c0;
  cb->b        = cl->b + c0;
  cb->hist     = cl->hist + c0;
  cb->feature  = cl->feature + c0;
  cb->nrm      = cl->nrm + 3 * c0;
  cb->gap      = gap + c0;
  cb->reff     = cl->reff + c0;
  cb->ra       = cl->ra + 3 * c0;
  cb->rb       = cl->rb + 3 * c0;
  cb->vrel     = vrel + 3 * c0;
  cb->meff     = sim->meff + c0;
  cb->history  = sim->nl.history;
  cb->histsize = sim->histsize;
  cb->mp       = &sim->laws[l]->mp;
  return n;
}

/* DemContactForcesOffset_Private - the output columns of the contacts from c0 on: each column
   of cols (full-length) offset to contact c0 */
void DemContactForcesOffset_Private(const DemContactForces *cols, PetscInt c0, DemContactForces *o)
{
  o->fn       = cols->fn + c0;
  o->ft       = cols->ft + 3 * c0;
  o->dfn_dgap = cols->dfn_dgap + c0;
  o->cn       = cols->cn + c0;
  o->kt       = cols->kt + c0;
  o->energy   = cols->energy + c0;
  o->dissip   = cols->dissip + c0;
  o->slip     = cols->slip + c0;
  o->fdamp    = cols->fdamp + 3 * c0;
  o->eslip    = cols->eslip + c0;
}

/* zeroes the history rows (hs values each) of the slots k0 <= k < k1 not marked in touched.
   The friction laws' 4-value rows (friction.h) by four stores: written as a loop over hs, GCC
   makes each row a memset call, about 40 instructions for 32 bytes, on every neighbour pair
   not in contact (superquadric_settle README, session 12) */
static void DemHistoryZeroUntouched(PetscReal *hist, PetscInt hs, const char *touched, PetscInt k0, PetscInt k1)
{
  if (hs == 4) {
    for (PetscInt k = k0; k < k1; k++)
      if (!touched[k]) {
        PetscReal *h = hist + 4 * k;
        h[0] = 0, h[1] = 0, h[2] = 0, h[3] = 0;
      }
    return;
  }
  for (PetscInt k = k0; k < k1; k++)
    if (!touched[k])
      for (PetscInt j = 0; j < hs; j++) hist[k * hs + j] = 0;
}

static PetscErrorCode DemForcesCompute_Internal(DemSim sim, const DemState *st, PetscBool want_jacobian, PetscBool commit, PetscBool fast, DemForceOut *out)
{
  DemBodyStore     *bs = &sim->bodies;
  DemNeighbourList *nl = &sim->nl;
  DemContactList   *cl = &sim->cl;
  DemContactForces *cf = &sim->cf;
  const PetscInt    nb = bs->n + bs->nghost;
  PetscReal        *f = out->f, *t = out->t;
  const PetscReal  *g = sim->gravity;
  PetscBool         skip[DEM_KIND_MAX * DEM_KIND_MAX];

  PetscFunctionBegin;
  PetscCheck(!want_jacobian || out->J, sim->comm, PETSC_ERR_ARG_NULL, "want_jacobian needs a matrix in out->J");
  /* one pass: gravity on every mobile owned body (MPI: not on ghosts, whose forces go to their
     owners; fixed bodies and walls report only their reactions), zero torques, and zero
     dissipative parts when wanted */
  { /* restrict-qualified copies, and the test of fd outside the loop: the compiler keeps g in
       registers instead of reloading it after every store */
    const PetscReal g0 = g[0], g1 = g[1], g2 = g[2], *restrict im = bs->inv_m, *restrict mass = bs->m;
    PetscReal *restrict ff = f, *restrict tt = t, *restrict fd = out->fd, *restrict td = out->td;
    const PetscInt      n  = bs->n;
    if (fd && sim->prezeroed) { /* the integrator's last pass over the bodies did it (verlet) */
    } else if (fd)
      for (PetscInt i = 0; i < n; i++) {
        const PetscReal m = im[i] == 0 ? 0.0 : mass[i];
        ff[3 * i] = 0.0 + m * g0, ff[3 * i + 1] = 0.0 + m * g1, ff[3 * i + 2] = 0.0 + m * g2;
        tt[3 * i] = tt[3 * i + 1] = tt[3 * i + 2] = 0;
        fd[3 * i] = fd[3 * i + 1] = fd[3 * i + 2] = 0;
        td[3 * i] = td[3 * i + 1] = td[3 * i + 2] = 0;
      }
    else
      for (PetscInt i = 0; i < n; i++) {
        const PetscReal m = im[i] == 0 ? 0.0 : mass[i];
        ff[3 * i] = 0.0 + m * g0, ff[3 * i + 1] = 0.0 + m * g1, ff[3 * i + 2] = 0.0 + m * g2;
        tt[3 * i] = tt[3 * i + 1] = tt[3 * i + 2] = 0;
      }
  }
  sim->prezeroed = PETSC_FALSE;
  if (nb > bs->n) {
    PetscCall(PetscArrayzero(f + 3 * bs->n, 3 * (nb - bs->n)));
    PetscCall(PetscArrayzero(t + 3 * bs->n, 3 * (nb - bs->n)));
  }
  /* external loads: force at a body-frame point, plus a moment; linear ramp in time */
  for (PetscInt l = 0; l < sim->nload; l++) {
    const DemLoad *ld = &sim->loads[l];
    PetscReal      s  = DemRampFactor(ld, sim->time);
    for (PetscInt k = 0; k < ld->nids; k++) {
      PetscInt  i = ld->ids[k];
      PetscReal F[3] = {s * ld->force[0], s * ld->force[1], s * ld->force[2]}, r[3] = {0, 0, 0};
      if (ld->haspoint) DemQuatRotate(&st->q[4 * i], ld->point, r);
      for (int j = 0; j < 3; j++) f[3 * i + j] += F[j];
      t[3 * i] += r[1] * F[2] - r[2] * F[1] + s * ld->moment[0];
      t[3 * i + 1] += r[2] * F[0] - r[0] * F[2] + s * ld->moment[1];
      t[3 * i + 2] += r[0] * F[1] - r[1] * F[0] + s * ld->moment[2];
    }
  }
  out->pe_contact  = 0;
  out->dissip_rate = 0;
  out->ncontacts   = 0;
  out->eslip       = 0;
  if (out->fd && nb > bs->n) {
    PetscCall(PetscArrayzero(out->fd + 3 * bs->n, 3 * (nb - bs->n)));
    PetscCall(PetscArrayzero(out->td + 3 * bs->n, 3 * (nb - bs->n)));
  }
  /* fused kernels: one pass per group for a single law that knows the group's shape kinds */
  PetscCall(PetscArrayzero(skip, DEM_KIND_MAX * DEM_KIND_MAX));
  if (fast && !sim->no_fused && sim->nlaw == 1 && sim->laws[0]->ops->fusedpairs && !sim->record_contacts) {
    for (PetscInt gi = 0; gi < nl->ngroups; gi++) {
      DemPairBatch pb;
      PetscInt     s0 = nl->gstart[gi], s1 = nl->gstart[gi + 1];
      PetscCall(PetscMemzero(&pb, sizeof(pb)));
      pb.ka    = nl->gka[gi];
      pb.kb    = nl->gkb[gi];
      pb.n     = s1 - s0;
      pb.a     = nl->a + s0;
      pb.b     = nl->b + s0;
      /* the first pair's index only, and no shift vectors (demimpl.h, fusedpairs): neither
         per-pair array is made for the fused laws */
      pb.pair  = &s0;
      pb.shift = NULL;
      pb.sim   = sim;
      pb.state = st;
      PetscCall((*sim->laws[0]->ops->fusedpairs)(sim->laws[0], &pb, sim->dt, commit, out, &skip[gi]));
    }
  }
  PetscCall(DemContactsDetectGroups(sim, st, skip));
  { /* restrict-qualified copies: the stores into vrel and meff do not make the compiler
       reload the columns (the same arithmetic in the same order) */
    const PetscReal *restrict v = st->v, *restrict w = st->w, *restrict invm = bs->inv_m;
    const PetscReal *restrict cra = cl->ra, *restrict crb = cl->rb;
    const PetscInt *restrict  ca = cl->a, *restrict cb = cl->b;
    PetscReal *restrict       vr = sim->vrel, *restrict meff = sim->meff;
    const PetscInt            nc = cl->n;
    for (PetscInt c = 0; c < nc; c++) {
      PetscInt         a = ca[c], b = cb[c];
      const PetscReal *ra = cra + 3 * c, *rb = crb + 3 * c, *wa = w + 3 * a, *wb = w + 3 * b;
      PetscReal        im = invm[a] + invm[b];
      vr[3 * c]     = (v[3 * a] + wa[1] * ra[2] - wa[2] * ra[1]) - (v[3 * b] + wb[1] * rb[2] - wb[2] * rb[1]);
      vr[3 * c + 1] = (v[3 * a + 1] + wa[2] * ra[0] - wa[0] * ra[2]) - (v[3 * b + 1] + wb[2] * rb[0] - wb[0] * rb[2]);
      vr[3 * c + 2] = (v[3 * a + 2] + wa[0] * ra[1] - wa[1] * ra[0]) - (v[3 * b + 2] + wb[0] * rb[1] - wb[1] * rb[0]);
      meff[c]       = im > 0 ? 1.0 / im : PETSC_MAX_REAL;
    }
  }
  /* contact laws, one call per law batch */
  for (PetscInt l = 0; l < sim->nlaw; l++) {
    DemContactBatch  cb;
    DemContactForces o;
    if (!DemContactBatchOfLaw_Private(sim, l, cl->gap, sim->vrel, &cb)) continue;
    DemContactForcesOffset_Private(cf, sim->lawstart[l], &o);
    PetscCall(DemContactLawCompute(sim->laws[l], &cb, sim->dt, commit, &o));
  }
  /* assembly; restrict-qualified copies and the sums in locals (the stores into f, t, fd, td
     do not make the compiler reload the columns and out's fields; the same additions in the
     same order) */
  {
    const PetscInt *restrict  ca = cl->a, *restrict cb = cl->b, *restrict claw = cl->law;
    const PetscReal *restrict nrm = cl->nrm, *restrict cra = cl->ra, *restrict crb = cl->rb, *restrict gap = cl->gap;
    const PetscReal *restrict fn = cf->fn, *restrict ft = cf->ft, *restrict fdamp = cf->fdamp;
    const PetscReal *restrict energy = cf->energy, *restrict dissip = cf->dissip, *restrict eslip = cf->eslip;
    PetscReal *restrict       ff = f, *restrict tt = t, *restrict fd = out->fd, *restrict td = out->td;
    DemContactLaw *const      laws = sim->laws;
    const PetscInt            nc   = cl->n;
    PetscReal                 pe = out->pe_contact, dr = out->dissip_rate, es = out->eslip;
    PetscInt                  nact = out->ncontacts;
    for (PetscInt c = 0; c < nc; c++) {
      PetscInt         a = ca[c], b = cb[c];
      const PetscReal *n = nrm + 3 * c, *ra = cra + 3 * c, *rb = crb + 3 * c;
      PetscReal        F[3];
      F[0] = fn[c] * n[0] + ft[3 * c];
      F[1] = fn[c] * n[1] + ft[3 * c + 1];
      F[2] = fn[c] * n[2] + ft[3 * c + 2];
      DemPairForceApply_Private(ff, tt, a, b, ra, rb, F);
      pe += energy[c];
      dr += dissip[c];
      es += eslip[c];
      if (fd) DemPairForceApply_Private(fd, td, a, b, ra, rb, fdamp + 3 * c);
      nact += gap[c] < laws[claw[c]]->activation; /* barrier laws: active below g_bar */
    }
    out->pe_contact  = pe;
    out->dissip_rate = dr;
    out->eslip       = es;
    out->ncontacts   = nact;
  }
  /* a pair that is not in contact forgets its history */
  if (commit && sim->histsize > 0) {
    const PetscInt hs = sim->histsize;
    PetscInt       nslot = nl->npairs + DemNeighbourFeatureCount_Private(sim); /* + feature slots (featslot.c) */
    if (nslot > sim->touchcap) {
      PetscCall(PetscFree(sim->touched));
      sim->touchcap = DemGrowCap_Private(nslot);
      PetscCall(PetscMalloc1(sim->touchcap, &sim->touched));
    }
    char      *touched = sim->touched;
    PetscReal *hist    = nl->history;
    PetscBool  allfused = (cl->n == 0 && nslot == nl->npairs) ? PETSC_TRUE : PETSC_FALSE;
    for (PetscInt gi = 0; gi < nl->ngroups; gi++) allfused = allfused && skip[gi];
    if (allfused) nslot = 0; /* the fused kernels kept every pair's history: nothing to do */
    if (nslot) memset(touched, 0, (size_t)nslot); /* touched is NULL without pairs (UBSan) */
    for (PetscInt c = 0; c < cl->n; c++)
      if (cl->hist[c] >= 0 && cl->gap[c] < sim->laws[cl->law[c]]->activation) touched[cl->hist[c]] = 1;
    for (PetscInt gi = 0; gi < nl->ngroups; gi++) {
      if (skip[gi]) continue; /* the fused kernel kept these pairs' history itself */
      DemHistoryZeroUntouched(hist, hs, touched, nl->gstart[gi], nl->gstart[gi + 1]);
    }
    DemHistoryZeroUntouched(hist, hs, touched, nl->npairs, nslot);
  }
  if (fast && cl->n == 0 && cl->cap > 0) { /* the fused kernels took every group: the contact
                                               columns the set-up evaluation (or a VTK frame) left
                                               behind stay empty; give their memory back (about
                                               1 kB per body of a packed bed) */
    PetscBool allfused = nl->ngroups > 0 ? PETSC_TRUE : PETSC_FALSE;
    for (PetscInt gi = 0; gi < nl->ngroups; gi++) allfused = allfused && skip[gi];
    if (allfused) PetscCall(DemForcesRelease(sim));
  }
  if (DemDecompActive_Private(sim)) PetscCall(DemDecompReverseForces_Private(sim, out)); /* MPI: ghost forces to owners, sums (decomp.c) */
  PetscCall(DemFieldsCompute_Private(sim, st, out)); /* drag and near-field forces (fields.c) */
  if (sim->dim == 2) PetscCall(DemSimConstrain(sim, f, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemForcesCompute - forces, torques, contact energy and dissipation at `state` through the
  generic pipeline (narrow phase -> contact list -> laws -> assembly); sim->cl and sim->cf hold
  every contact afterwards. Collective.
*/
PetscErrorCode DemForcesCompute(DemSim sim, const DemState *st, PetscBool want_jacobian, PetscBool commit, DemForceOut *out)
{
  PetscFunctionBegin;
  PetscCall(DemForcesCompute_Internal(sim, st, want_jacobian, commit, PETSC_FALSE, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemForcesComputeFast - the same forces, with the laws' fused kernels where they exist (unless
  sim->record_contacts asks for the contact list, e.g. before a VTK frame): sim->cl and sim->cf
  then hold only the contacts of groups no fused kernel took. For explicit integrators.
*/
PetscErrorCode DemForcesComputeFast(DemSim sim, const DemState *st, PetscBool commit, DemForceOut *out)
{
  PetscFunctionBegin;
  PetscCall(DemForcesCompute_Internal(sim, st, PETSC_FALSE, commit, PETSC_TRUE, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}
