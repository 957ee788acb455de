/*
  decomp.c - MPI spatial domain decomposition (DESIGN.md "MPI").

  The domain box is cut into a Cartesian grid of subdomains, one per rank (MPI_Dims_create,
  the gravity axis left uncut, the larger factors along the longer extents; or mpi.grid). A
  rank owns the particles whose (periodically wrapped) centres lie in its subdomain; along a
  non-periodic dimension the first and last slabs reach to -inf and +inf. Walls are replicated
  on every rank (owned everywhere); their reactions are summed over the ranks.

  Ghosts: a particle is copied to every other rank whose subdomain lies within the ghost range
  2 r_max + skin of its centre (periodic minimum image). Every pair the neighbour search can
  form with an owned body is then present on the owner's rank: the search needs one copy of
  each body and finds periodic images by itself (neighbour.c), as in a serial run.
  Pairs: a pair is evaluated on exactly one rank, the one that owns the body of lower global id
  (walls have the highest ids, so a wall pair lives with its particle); ghosts send their force,
  torque and dissipative parts back to their owners after each evaluation (reverse
  communication), contact energy, dissipation and contact counts are summed over the ranks.
  verlet skips those sums at the steps whose energies, counts and wall reactions nothing reads
  (no thermo row, checkpoint or VTK frame after them: sim->defer_sums); each rank books its
  share of the dissipation (sim->dissip_pending), summed with the next read step's powers or
  before a checkpoint written at a signal (DemDecompFlushPending_Private). With the failure
  test and the signal agreed in one reduction (DemDecompAgree_Private), a verlet step
  synchronises the ranks four times: the rebuild decision, the ghosts' states, their forces,
  the end-of-step agreement; three when every other rank is a ghost neighbour both ways
  (2 ranks; decided at each rebuild, d->fused): each rank's rebuild flag then travels beside
  the ghosts' states in the same round of messages (DemDecompForward) instead of a reduction
  of its own, the ghosts left unpacked when any rank rebuilds. Measured (callgrind, 16000-body
  settled bed of benchmarks/settle tiled 1 x 2, 200 verlet steps, instructions of the steps
  outside the MPI library): 1 rank 3.434e9, 2 ranks 3.523e9 summed (+2.6 %; the contact kernel
  and the two passes over the bodies cost the same on 1 and 2 ranks; the rest is the forward
  and reverse copies of the ghosts and the zeroing of their forces).
  Every step the ghosts receive the owners' positions, velocities and orientations. The
  neighbour list is rebuilt on every rank when any body moved more than half the skin since
  the last build (the same rule as serial, decided collectively); at a rebuild:
    1. the contact history of every pair is taken out of the list, keyed by global ids;
    2. owned positions are wrapped into the periodic box;
    3. bodies that left the subdomain migrate to their new owners, with their dissipative
       forces (energy bookkeeping); the history of a pair goes with its lower-id body;
    4. load balance: when max/mean owned particles exceeds mpi.balance_threshold, the cut planes
       of every cut dimension move to the quantiles of the particles' coordinates (shifting cut
       planes; a subdomain never gets narrower than the ghost range) and step 3 is repeated;
    5. owned bodies are sorted by global id (walls last), the ghosts are exchanged, the list is
       built by neighbour.c over owned + ghost bodies, the pairs this rank does not evaluate are
       dropped, and the history goes back beside its pair.
  Evaluation order: owned bodies in global-id order, then the ghost contributions rank by rank.
  Summation order thus differs from a serial run: results agree with serial to round-off, not
  bitwise (tests/cases/mpi_*.sh). On one rank none of this runs (sim->decomp is NULL).

  Loads, bonds, output.track: their body lists are kept by global id (DemDecompRemap, after
  every rebuild): a load's ids become the store indices of its bodies this rank owns (it acts
  once, on the owner); a bond is evaluated by the rank owning its lower-id body, with the
  partner owned or a ghost, else (a bond stretched beyond the ghost range) every rank stops
  with one message naming the pair; track rows are summed onto rank 0 with -0.0 from the
  ranks that do not own the body (DemDecompTrackRows_Private: bit-exact).
  Implicit integrators (trapezoid): before every force evaluation at an iterate the owners'
  trial arrays (x, v, w, q and the increments dx, alpha_D) go to the ghosts
  (DemDecompForwardState_Private, the ghost lists of the last rebuild); the evaluation's
  reverse step returns the ghosts' forces; error measures, the early-rebuild decision and the
  dissipation sums are reductions. Exchanges per step: one forward + one reverse per
  evaluation. trapezoid's Gauss-Seidel colours are per rank (block Jacobi between ranks, every
  rank evaluating as often as the one with the most colours).
  Restart (--restart) on any number of ranks: DemDecompDistribute_Private waits while every
  rank holds every body; the checkpoint (serial layout, any writer rank count) is applied on
  every rank, then DemDecompRestored_Private distributes it, the history taken from the
  checkpoint's list with the pairs (step 1 above also in the replicated case).

  cd (apgd): contacts come from the filtered neighbour list, so each belongs to one rank;
  every mat-vec N f = dt B M^-1 B^T f sums M^-1 B^T f over the ranks (DemDecompReverseAddArray,
  then DemDecompForwardArray_Private: two exchanges per iteration); dot products and the
  residual's norms are reductions. cd (pgs): a block-Jacobi + Gauss-Seidel hybrid, each rank
  sweeping its own contacts (Gauss-Seidel), the velocities recomputed from every rank's forces
  between sweeps (the same two exchanges: Jacobi between ranks), the residual reduced. cd's
  warm starts (its own map, keyed by gids, registered with DemDecompPairMap_Private) are taken
  out at step 1 of a rebuild, travel point to point with their pair's lower-id body like the
  history (DemDecompRoute: only the migrating entries are sent) and go back into the map after
  the build (MMDEM_DECOMP_VERBOSE prints each rank's entries held, sent and received). The compatibility
  post-solve (cd_compat_mpi.c) is a distributed PETSc problem: rows the owned bodies' DOF,
  columns the rank's contacts; its row norms and cluster flags are summed into the owners
  (DemDecompReverseAddArray_Private) and sent back to the ghosts (DemDecompForwardArray_Private),
  TAOALMM and the Newton polish run on the communicator (tests/cases/mpi_cd_compat.sh).

  variational (src/integrators/variational.c): after every rebuild the unknowns are renumbered,
  six per owned mobile body, in global-id order on each rank and rank after rank; ghosts get
  their owners' global rows (one forward exchange, DemJacobianNumberingGlobal_Private). The
  Newton matrix is a MATMPIBAIJ / MATMPISBAIJ preallocated from this rank's pairs, the counts of
  a ghost's row summed into its owner's (one reverse exchange), its pattern assembled once with
  zeros; the blocks of a pair with a ghost are added with global indices and PETSc moves the
  ghost's rows to its owner at assembly (DemJacobianCreateGlobal_Private). Every evaluation
  sends the owners' trial state to the ghosts (DemDecompForwardState_Private); the dissipative
  parts come back like the forces (DemDecompReverseAddArray_Private), the walls' are summed;
  KSP (CG + Jacobi) and TAO run on the communicator, the increment norms, the skip test and the
  quasi-static scales are reductions. CG with Jacobi does not depend on the order of the
  unknowns, so the Newton iterates are the serial ones up to round-off
  (tests/cases/mpi_variational.sh). jacobian: matrix_free is refused.

  Superquadrics: their per-pair warm starts (superquadric.c's slots, keyed by global ids) are
  taken out at step 1 of a rebuild, travel with the pair's lower-id body like the history
  (DemDecompRoute) and go into the shape's gid map after the build, where the lookups of
  the new list find them (only slots of the list being replaced: slots not taken since the
  previous rebuild were taken out there, and may be stale). Checkpoints gather every rank's
  slot records and the map entries of its pairs by global ids (superquadric.c
  DemShapeSuperquadricExport_Private); a restart's distribution holds the checkpoint's records
  and puts each into the slot of its pair in the new list (Hold / Place): with the list cut
  to the checkpoint's pairs (DemDecompRestored_Private), a restart on the writer's number of
  ranks is bitwise the uninterrupted run (tests/cases/mpi_sq.sh).

  Mesh walls (and superquadric / mesh contacts): a wall is replicated on every rank, a contact
  with it lives with the particle (lower id). Its history sits in feature slots (featslot.c:
  one per touching face, edge or vertex) beside the pair; at a rebuild (step 1c) the slots are
  taken out by (gid a, gid b, feature), travel with the particle (DemDecompRoute, like the
  warm starts) and go into the list's feature map after the build, from which featslot.c makes
  the slots of the new list on first touch (a serial rebuild does the same through its map, at
  the same steps: tests/cases/mpi_mesh.sh). Checkpoints gather the slots beside their pairs and
  every rank's feature map. A restart on several ranks (DemDecompRestored_Private) builds its
  list at the restart step with twice the skin and then sets the positions of the last build
  (x0) back to the checkpoint's, so that the later rebuilds happen at the uninterrupted run's
  steps (a rebuild changes contact state: a contact that passes to another mesh feature in the
  first step after it does not inherit the spring, which the carry-over reads from the slots,
  not the map); the feature slots, zeroed ones too, and the map are made again as the
  checkpoint holds them (featslot.c DemNeighbourFeatureExport_Private / Import). Restarts on
  any number of ranks then continue to round-off (tests/cases/mpi_mesh.sh: 5.5e-12 of the box;
  6.3e-3 with the list's x0 taken at the restart step). When the subdomains are narrower than
  2 r_max + 2 skin, the list is built with the ordinary skin at the restart step (not exact).
  cd's warm starts: gathered on rank 0 while it writes a checkpoint (ops->mpigather, cd.c).

  newmark (src/integrators/newmark.c, newmark_mpi.c): the distributed assembly of variational
  (global numbering after every rebuild, MATMPIBAIJ from DemJacobianCreateGlobal_Private, the
  owners' trial state forwarded before every residual / Jacobian evaluation, SNES and KSP on
  the communicator with block Jacobi / ILU(0) in place of the serial ILU(0)). Its state
  between steps (accelerations and moments at i) is a per-body field registered after the
  distribution (DemDecompFieldsChanged_Private), so the body records carry it through
  migrations; the field's name starts with '~' and checkpoints skip it (newmark writes the
  values itself, in the serial layout). The step-control decisions (the list's reach, the
  rotation and penetration tests, night owls) are reductions; the contacts at i of the
  penetration test are gathered on every rank. A night-owl re-search rebuilds the list at the
  converged positions (bodies may migrate): the positions at i and the converged increments
  travel in the same field and the iterate is rebuilt in the new layout
  (tests/cases/mpi_newmark.sh).

  Polyhedra: a ghost polyhedron is its record (position, orientation, shape index, radius; the
  colliders carry its surface to the world frame from them at every evaluation); the pointwise
  contacts of a pair keep their history (barrier_hybrid's elastic spring) in feature slots,
  which travel like a mesh wall's; the feature-level Verlet lists of polyhedron_contact.c are
  caches dropped at every rebuild; thermo's contacts_bb / contacts_bw are sums over the ranks
  (tests/cases/mpi_poly.sh).

  Supported on more than one rank: integrators that declare ig->mpi (verlet, trapezoid,
  variational, cd, newmark),
  spheres, superquadrics, polyhedra, plane and mesh walls, loads, bonds, output.track; not yet
  (refused with a message): the other integrators, fields.

  Keys (top level `mpi:`): grid [px, py, pz] (product = number of ranks; default chosen as
  above), balance [true], balance_threshold [1.1] (max/mean owned particles, > 1), balance_by
  [particles | time].

  Where the time goes (MMDEM_MPI_TIMERS=1; DemDecompTick): the steps are a timeline of phases,
  each ending at a mark in this file (the forward exchange's packing, waiting and unpacking,
  the kernel up to the reverse exchange, its three parts, the reductions, the end-of-step
  agreement, the rebuild; `other` is the rest: the integration passes, walls, output), printed
  per rank at the end with the kernel's time per pair and the waits' spread over the steps.
  Measured on bed-64k (benchmarks/settle/README.md): the kernel and the Verlet passes cost the
  same on 1 and 2 ranks (perf samples within 3 %), the ghost copies about 1.5 %; the rest of
  the 2-rank loss is waiting, mostly for a rank whose core runs slower at the time.
  balance_by time: every DEM_BAL_EVERY steps the ranks compare their work (the phases outside
  the waits and rebuilds); when the same rank was the slowest by more than balance_threshold in
  two windows running, the next step rebuilds with the cut planes at the quantiles of the
  particles weighted by their rank's work per particle (DemDecompBalance), and the particle
  count no longer triggers rebalances. The migration steps then depend on timings: results
  stay within round-off of other rank counts but two runs are not bitwise equal.
*/
#include "demimpl.h"
#include "guard.h" /* DemBuf, DemCheckpointSerialize_Private (checkpoint sections) */

/* reals per body record (migration and ghosts), before the plugins' per-body fields */
#define DEM_DREC 38
/* reals per body of output.track: x, v, w, q, f, t */
#define DEM_TREC 19
/* the phases of MMDEM_MPI_TIMERS (each ends at a DemDecompTick of its own) */
enum {
  DEM_DT_OTHER,      /* from the last mark to the next forward exchange: integration passes, walls, output */
  DEM_DT_FWD_PACK,   /* forward: owners' states into the send buffer, messages posted */
  DEM_DT_FWD_WAIT,   /* forward: waiting for the messages (and for the other rank to arrive) */
  DEM_DT_FWD_UNPACK, /* forward: the ghosts' states out of the receive buffer */
  DEM_DT_REBUILD,    /* rebuild: history out, wrap, migration, balance, ghosts, list, filter */
  DEM_DT_KERNEL,     /* from the forward exchange (or rebuild) to the reverse: the force evaluation */
  DEM_DT_REV_PACK,   /* reverse: the ghosts' forces into the buffer, messages posted */
  DEM_DT_REV_WAIT,   /* reverse: waiting */
  DEM_DT_REV_UNPACK, /* reverse: the ghosts' forces added to the owners' */
  DEM_DT_SUMS,       /* reductions of energies, counts, wall reactions, dissipation */
  DEM_DT_AGREE,      /* the end-of-step agreement (failure, signal) */
  DEM_DT_N
};
#define DEM_DT_NSTEP 65536
/* mpi.balance_by: time compares the ranks' work every this many force evaluations */
#define DEM_BAL_EVERY 50
static const char *const DemDecompPhaseNames[DEM_DT_N] = {"other", "fwd_pack", "fwd_wait", "fwd_unpack", "rebuild", "kernel", "rev_pack", "rev_wait", "rev_unpack", "sums", "agree"};

struct _DemDecomp {
  PetscBool    active;      /* bodies distributed (DemDecompDistribute_Private) */
  PetscInt     grid[3], coord[3];
  PetscBool    grid_set, balance;
  PetscReal    threshold;
  DemNode      node;        /* the mpi: mapping (messages), may be NULL */
  PetscReal   *cut[3];      /* [grid[d] + 1] cut planes along d */
  PetscReal    cutoff;      /* ghost range: 2 r_max + skin */
  PetscInt     rec;         /* reals per body record */
  /* ghost lists, fixed between rebuilds: owned bodies sent to rank r are sidx[soff[r] ..
     soff[r] + scnt[r]); ghosts from rank r are store slots n + roff[r] .. */
  PetscMPIInt *scnt, *soff, *rcnt, *roff, *tcnt, *toff, *ucnt, *uoff;
  PetscInt    *sidx, sidxcap;
  PetscInt     nsend, nrecv;
  PetscReal   *sbuf, *rbuf;
  size_t       sbufcap, rbufcap;
  MPI_Request *req;         /* [4 size] */
  PetscReal   *flg;         /* [2 size] the rebuild flags sent and received with the forward exchange */
  PetscBool    fused;       /* every other rank sends and receives ghosts: the rebuild decision
                               rides on the forward exchange (DemDecompForward) */
  int64_t     *wallgid;     /* [nwall] */
  DemHistoryMap hmap;       /* contact history through a rebuild */
  /* history entries in transit: gids (2 per entry) and values */
  int64_t     *hg;
  PetscReal   *hv;
  PetscInt     nh, hcap;
  PetscInt     nrebalance;
  PetscReal    imbalance;   /* at the last rebuild */
  PetscInt     nowned;      /* owned particles after the last rebuild */
  PetscBool    restored;    /* --restart: the checkpoint is applied, distribute now */
  DemHistoryMap *ckpairs;   /* --restart, its distribution: the checkpoint list's pairs (lower,
                               higher gid); the list built then keeps only these */
  /* loads, bonds and output.track by global id: their store indices change at every rebuild
     (DemDecompRemap) */
  PetscInt   **loadgid;     /* [nload][loadn[l]] the ids of the run description */
  PetscInt    *loadn;
  int64_t     *bondgid;     /* [2 nbond] every bond's bodies (a, b) by global id */
  PetscInt     nbond;
  int64_t     *lkg;         /* gid -> store index of owned and ghost bodies, by gid */
  PetscInt    *lki, lkcap;
  PetscReal   *trk;         /* [DEM_TREC ntrack] rows of output.track (DemDecompTrackRows) */
  PetscReal   *red;         /* [4 + 6 nwall] the sums of DemDecompReverseForces_Private */
  /* superquadric warm starts in transit with their pairs (like the history): gids (2 per
     entry), then per entry the shape index and wrec reals; wrec 0: no such shapes */
  PetscInt     wrec, nw, wcap;
  int64_t     *wg;
  PetscReal   *wv;
  /* feature-slot histories (featslot.c: sphere / mesh-wall contacts, one per face, edge or
     vertex) in transit with their pairs: gids (2 per entry), then per entry the feature key
     (int64 in a real) and histsize reals */
  PetscInt     nf, fcap;
  int64_t     *fg;
  PetscReal   *fv;
  /* an integrator's per-pair map (cd's warm starts, DemDecompPairMap_Private), in transit with
     its pairs like the superquadric warm starts: gids (2 per entry), then per entry the map's
     third key (int64 in a real) and its values; npheld / npsent / nprecv: entries taken out,
     sent to and received from other ranks over the rebuilds (MMDEM_DECOMP_VERBOSE) */
  DemHistoryMap *pmap;
  PetscInt     np, pcap;
  int64_t     *pg;
  PetscReal   *pv;
  PetscInt64   npheld, npsent, nprecv;
  PetscBool    pever;     /* a pair map was registered */
  PetscInt     nmigrated, nwrapped, nrebuilds; /* bodies sent to another rank, periodic wraps of
                                                  owned bodies, rebuilds (MMDEM_DECOMP_VERBOSE) */
  /* MMDEM_MPI_TIMERS: wall time per phase of the steps (DemDecompTick), printed per rank at
     the end; off: one test of `timers` per phase boundary */
  PetscBool    timers, ticking; /* ticking: timers or bytime (the phases are measured) */
  double       tm[DEM_DT_N], tlast;
  /* mpi.balance_by: time: every DEM_BAL_EVERY evaluations the ranks compare their work (wall
     time outside the waits); above balance_threshold (max/mean) a rebuild moves the cut planes
     to the quantiles of the particles weighted by their rank's work per particle */
  PetscBool    bytime, tbal;  /* tbal: the next rebuild is such a rebalance */
  PetscInt     tcount;        /* evaluations since the last comparison */
  double       twork0;        /* the work (DemDecompWork) at the start of this window */
  double       twprev;        /* this rank's work in the previous window */
  int          tslow;         /* the slowest rank of the previous window when above the threshold, else -1 */
  PetscReal    tweight;       /* this rank's work per owned particle / the mean over the ranks */
  PetscReal    timbalance;    /* max/mean work at the last comparison */
  PetscInt     ntrebalance;
  PetscInt     tsteps;  /* force evaluations reversed (DEM_DT_KERNEL intervals) */
  double       tpairs;  /* pairs of this rank's list summed over those evaluations */
  double      *twait;   /* [DEM_DT_NSTEP] per evaluation: the waits of its reverse and of the next forward exchange (quantiles at the end) */
};

/* the phase that ends at a DemDecompTick: a timeline of consecutive intervals, so the phases
   add up to the wall time from the first forward exchange to the last mark */
static void DemDecompTick(struct _DemDecomp *d, int phase)
{
  const double now = MPI_Wtime();
  if (d->tlast > 0) {
    d->tm[phase] += now - d->tlast;
    if ((phase == DEM_DT_REV_WAIT || phase == DEM_DT_FWD_WAIT) && d->twait && d->tsteps > 0 && d->tsteps <= DEM_DT_NSTEP) d->twait[d->tsteps - 1] += now - d->tlast;
  }
  d->tlast = now;
}
#define DEM_DECOMP_TICK(d, phase) \
  do { \
    if ((d)->ticking) DemDecompTick(d, phase); \
  } while (0)
/* this rank's work so far: the phases' wall time outside the waits for the other ranks and
   the rebuilds (which every rank makes) */
static double DemDecompWork(const struct _DemDecomp *d)
{
  double w = 0;
  for (int k = 0; k < DEM_DT_N; k++)
    if (k != DEM_DT_FWD_WAIT && k != DEM_DT_REV_WAIT && k != DEM_DT_AGREE && k != DEM_DT_SUMS && k != DEM_DT_REBUILD) w += d->tm[k];
  return w;
}

static PetscErrorCode DemDecompEnsure(void **p, size_t *cap, size_t need, size_t elem)
{
  PetscFunctionBegin;
  if (need <= *cap) PetscFunctionReturn(PETSC_SUCCESS);
  need = PetscMax(need, 2 * *cap);
  PetscCall(PetscFree(*p));
  PetscCall(PetscMalloc(need * elem, p));
  *cap = need;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscBool DemDecompActive_Private(DemSim sim)
{
  return (sim->decomp && sim->decomp->active) ? PETSC_TRUE : PETSC_FALSE;
}

/*
  DemDecompSetFromConfig_Private - reads the optional top-level `mpi:` mapping. Every rank
  validates; on one rank the keys are checked and nothing else happens.
*/
PetscErrorCode DemDecompSetFromConfig_Private(DemSim sim, DemNode root)
{
  const char *const keys[] = {"grid", "balance", "balance_threshold", "balance_by", NULL};
  const char *const bychoice[] = {"particles", "time", NULL};
  PetscInt          by = 0;
  DemNode           mn, kn;
  PetscReal         g[3] = {0, 0, 0}, thr = 1.1;
  PetscBool         bal = PETSC_TRUE, gset = PETSC_FALSE;
  struct _DemDecomp *d;

  PetscFunctionBegin;
  PetscCall(DemNodeGet(root, "mpi", &mn));
  if (mn) {
    DemNodeCheck(mn, DemNodeGetType(mn) == DEM_NODE_MAP, "mpi must be a mapping {grid: [px, py, pz], balance: true, balance_threshold: 1.1}");
    PetscCall(DemNodeAllowKeys(mn, keys));
    PetscCall(DemNodeGet(mn, "grid", &kn));
    if (kn) {
      PetscCall(DemNodeGetRealArray(mn, "grid", PETSC_TRUE, 3, g));
      for (int k = 0; k < 3; k++) DemNodeCheck(kn, g[k] >= 1 && g[k] == PetscFloorReal(g[k]) && g[k] < 1e6, "mpi.grid must be three integers >= 1 (ranks along x, y, z; got %g at position %d)", (double)g[k], k + 1);
      DemNodeCheck(kn, g[0] * g[1] * g[2] == sim->size, "mpi.grid [%g, %g, %g] needs %g ranks, this run has %d; give a grid whose product is the number of ranks, or omit mpi.grid", (double)g[0], (double)g[1], (double)g[2], (double)(g[0] * g[1] * g[2]), (int)sim->size);
      gset = PETSC_TRUE;
    }
    PetscCall(DemNodeGetBool(mn, "balance", PETSC_FALSE, &bal));
    PetscCall(DemNodeGetChoice(mn, "balance_by", bychoice, PETSC_FALSE, &by));
    PetscCall(DemNodeGetReal(mn, "balance_threshold", PETSC_FALSE, &thr));
    PetscCall(DemNodeGet(mn, "balance_threshold", &kn));
    DemNodeCheck(kn ? kn : mn, thr > 1, "mpi.balance_threshold must be > 1 (max/mean owned particles per rank; got %g)", (double)thr);
  }
  if (sim->size == 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscNew(&d));
  d->grid_set  = gset;
  d->balance   = bal;
  d->threshold = thr;
  d->node      = mn;
  d->timers    = getenv("MMDEM_MPI_TIMERS") ? PETSC_TRUE : PETSC_FALSE;
  d->bytime    = (bal && by == 1) ? PETSC_TRUE : PETSC_FALSE;
  d->ticking   = d->timers || d->bytime;
  d->tweight   = 1;
  d->tslow     = -1;
  if (d->timers) PetscCall(PetscCalloc1(DEM_DT_NSTEP, &d->twait));
  for (int k = 0; k < 3; k++) d->grid[k] = gset ? (PetscInt)g[k] : 0;
  sim->decomp = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemDecompDestroy_Private(DemSim sim)
{
  struct _DemDecomp *d = sim->decomp;

  PetscFunctionBegin;
  if (!d) PetscFunctionReturn(PETSC_SUCCESS);
  if (d->active && getenv("MMDEM_DECOMP_VERBOSE")) {
    PetscCall(PetscPrintf(sim->comm, "decomp: imbalance %.4f (max/mean owned particles) at the last rebuild; cut planes", (double)d->imbalance));
    for (int k = 0; k < 3; k++) {
      PetscCall(PetscPrintf(sim->comm, " %c:", "xyz"[k]));
      for (PetscInt j = 0; j <= d->grid[k]; j++) PetscCall(PetscPrintf(sim->comm, " %.17g", (double)d->cut[k][j]));
    }
    PetscCall(PetscPrintf(sim->comm, "; ghost range %.17g\n", (double)d->cutoff));
    PetscCall(PetscSynchronizedPrintf(sim->comm, "decomp: rank %d: %" PetscInt_FMT " rebuilds, %" PetscInt_FMT " bodies migrated away, %" PetscInt_FMT " periodic wraps, %" PetscInt_FMT " rebalances, %" PetscInt_FMT " owned at the end\n", (int)sim->rank, d->nrebuilds, d->nmigrated, d->nwrapped, d->nrebalance, d->nowned));
    if (d->pever) PetscCall(PetscSynchronizedPrintf(sim->comm, "decomp: rank %d: integrator pair map: %lld entries taken out at the rebuilds, %lld sent to, %lld received from other ranks\n", (int)sim->rank, (long long)d->npheld, (long long)d->npsent, (long long)d->nprecv));
    PetscCall(PetscSynchronizedFlush(sim->comm, PETSC_STDOUT));
    if (d->bytime) PetscCall(PetscPrintf(sim->comm, "decomp: %" PetscInt_FMT " rebalances by time; max/mean work %.4f at the last comparison\n", d->ntrebalance, (double)d->timbalance));
  }
  if (d->active && d->timers) {
    double tot = 0;
    for (int k = 0; k < DEM_DT_N; k++) tot += d->tm[k];
    PetscCall(PetscSynchronizedPrintf(sim->comm, "mpi timers: rank %d: %.4f s from the first forward exchange; %" PetscInt_FMT " evaluations, %.1f pairs per evaluation, %" PetscInt_FMT " owned particles and %" PetscInt_FMT " ghosts at the last rebuild, kernel %.3f ns per pair\n", (int)sim->rank, tot, d->tsteps,
                                          d->tsteps ? d->tpairs / (double)d->tsteps : 0.0, d->nowned, d->nrecv, d->tpairs > 0 ? 1e9 * d->tm[DEM_DT_KERNEL] / d->tpairs : 0.0));
    for (int k = 0; k < DEM_DT_N; k++) PetscCall(PetscSynchronizedPrintf(sim->comm, "mpi timers: rank %d: %-10s %10.4f s %6.2f %%\n", (int)sim->rank, DemDecompPhaseNames[k], d->tm[k], tot > 0 ? 100 * d->tm[k] / tot : 0.0));
    { /* how the waits are distributed over the evaluations: steady (every step) or a few long ones (preemption) */
      const PetscInt ns = PetscMin(d->tsteps, DEM_DT_NSTEP);
      double         big = 0, all = 0;
      if (ns > 0) {
        PetscCall(PetscSortReal(ns, d->twait));
        for (PetscInt k = 0; k < ns; k++) all += d->twait[k], big += d->twait[k] > 1e-3 ? d->twait[k] : 0;
        PetscCall(PetscSynchronizedPrintf(sim->comm, "mpi timers: rank %d: waits per evaluation (us): median %.1f, 90 %% %.1f, 99 %% %.1f, max %.1f; %.4f s of %.4f s in waits over 1 ms\n", (int)sim->rank, 1e6 * d->twait[ns / 2], 1e6 * d->twait[(9 * ns) / 10], 1e6 * d->twait[(99 * ns) / 100], 1e6 * d->twait[ns - 1], big, all));
      }
    }
    PetscCall(PetscSynchronizedFlush(sim->comm, PETSC_STDOUT));
  }
  for (int k = 0; k < 3; k++) PetscCall(PetscFree(d->cut[k]));
  PetscCall(PetscFree4(d->scnt, d->soff, d->rcnt, d->roff));
  PetscCall(PetscFree4(d->tcnt, d->toff, d->ucnt, d->uoff));
  PetscCall(PetscFree(d->sidx));
  PetscCall(PetscFree(d->sbuf));
  PetscCall(PetscFree(d->rbuf));
  PetscCall(PetscFree(d->req));
  PetscCall(PetscFree(d->flg));
  PetscCall(PetscFree(d->wallgid));
  PetscCall(PetscFree(d->hg));
  PetscCall(PetscFree(d->hv));
  for (PetscInt l = 0; d->loadgid && l < sim->nload; l++) PetscCall(PetscFree(d->loadgid[l]));
  PetscCall(PetscFree2(d->loadgid, d->loadn));
  PetscCall(PetscFree(d->bondgid));
  PetscCall(PetscFree2(d->lkg, d->lki));
  PetscCall(PetscFree(d->trk));
  PetscCall(PetscFree(d->red));
  PetscCall(PetscFree(d->wg));
  PetscCall(PetscFree(d->wv));
  PetscCall(PetscFree(d->fg));
  PetscCall(PetscFree(d->pg));
  PetscCall(PetscFree(d->pv));
  PetscCall(PetscFree(d->fv));
  PetscCall(PetscFree(d->twait));
  if (d->hmap.cap) PetscCall(DemHistoryMapFree(&d->hmap));
  PetscCall(PetscFree(sim->decomp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- geometry ---- */

static inline PetscMPIInt DemDecompRankOf(const struct _DemDecomp *d, const PetscInt c[3])
{
  return (PetscMPIInt)(c[0] + d->grid[0] * (c[1] + d->grid[1] * c[2]));
}

/* slab of coordinate y along d */
static inline PetscInt DemDecompSlab(const struct _DemDecomp *d, int dd, PetscReal y)
{
  const PetscReal *c = d->cut[dd];
  PetscInt         k = 0;
  while (k < d->grid[dd] - 1 && y >= c[k + 1]) k++;
  return k;
}

static inline PetscMPIInt DemDecompOwner(const struct _DemDecomp *d, const PetscReal x[3])
{
  PetscInt c[3];
  for (int dd = 0; dd < 3; dd++) c[dd] = DemDecompSlab(d, dd, x[dd]);
  return DemDecompRankOf(d, c);
}

/* squared distance from x to the subdomain of rank r, periodic minimum image; the first and
   last slabs of a non-periodic dimension are unbounded outwards */
static PetscReal DemDecompDist2(DemSim sim, const struct _DemDecomp *d, PetscMPIInt r, const PetscReal x[3])
{
  PetscInt  c[3];
  PetscReal s = 0;
  c[0] = r % d->grid[0];
  c[1] = (r / d->grid[0]) % d->grid[1];
  c[2] = r / (d->grid[0] * d->grid[1]);
  for (int dd = 0; dd < 3; dd++) {
    PetscReal a = d->cut[dd][c[dd]], b = d->cut[dd][c[dd] + 1], best = PETSC_MAX_REAL, L = sim->hi[dd] - sim->lo[dd];
    if (!sim->periodic[dd]) {
      if (c[dd] == 0) a = -PETSC_MAX_REAL;
      if (c[dd] == d->grid[dd] - 1) b = PETSC_MAX_REAL;
    }
    for (int img = -1; img <= 1; img++) {
      PetscReal y = x[dd] + img * L, e;
      if (img && !sim->periodic[dd]) continue;
      e    = y < a ? a - y : y > b ? y - b : 0;
      best = PetscMin(best, e);
    }
    s += best * best;
  }
  return s;
}

/* wraps a coordinate into the periodic box exactly as neighbour.c does */
static inline PetscReal DemDecompWrap(DemSim sim, int dd, PetscReal y)
{
  const PetscReal L = sim->hi[dd] - sim->lo[dd];
  if (y < sim->lo[dd] || y >= sim->hi[dd]) {
    y -= L * PetscFloorReal((y - sim->lo[dd]) / L);
    if (y >= sim->hi[dd]) y = sim->lo[dd];
  }
  return y;
}

/* ---- body records ---- */

static void DemDecompPack(DemSim sim, PetscInt i, PetscReal *r)
{
  const DemBodyStore *bs = &sim->bodies;
  PetscInt            o  = DEM_DREC;
  memcpy(&r[0], &bs->gid[i], sizeof(int64_t));
  for (int k = 0; k < 3; k++) {
    r[1 + k]  = bs->x[3 * i + k];
    r[4 + k]  = bs->v[3 * i + k];
    r[7 + k]  = bs->w[3 * i + k];
    r[14 + k] = bs->f[3 * i + k];
    r[17 + k] = bs->t[3 * i + k];
    r[22 + k] = bs->I[3 * i + k];
    r[25 + k] = bs->inv_I[3 * i + k];
    r[32 + k] = sim->fd ? sim->fd[3 * i + k] : 0;
    r[35 + k] = sim->td ? sim->td[3 * i + k] : 0;
  }
  for (int k = 0; k < 4; k++) r[10 + k] = bs->q[4 * i + k];
  r[20] = bs->m[i];
  r[21] = bs->inv_m[i];
  r[28] = bs->radius[i];
  r[29] = bs->shape[i];
  r[30] = bs->material[i];
  r[31] = bs->flags[i];
  for (PetscInt e = 0; e < bs->nextra; e++)
    for (PetscInt k = 0; k < bs->extra_ncomp[e]; k++) r[o++] = bs->extra[e][bs->extra_ncomp[e] * i + k];
}

static void DemDecompUnpack(DemSim sim, PetscInt i, const PetscReal *r, unsigned addflags)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      o  = DEM_DREC;
  memcpy(&bs->gid[i], &r[0], sizeof(int64_t));
  for (int k = 0; k < 3; k++) {
    bs->x[3 * i + k]     = r[1 + k];
    bs->v[3 * i + k]     = r[4 + k];
    bs->w[3 * i + k]     = r[7 + k];
    bs->f[3 * i + k]     = r[14 + k];
    bs->t[3 * i + k]     = r[17 + k];
    bs->I[3 * i + k]     = r[22 + k];
    bs->inv_I[3 * i + k] = r[25 + k];
    sim->fd[3 * i + k]   = r[32 + k];
    sim->td[3 * i + k]   = r[35 + k];
  }
  for (int k = 0; k < 4; k++) bs->q[4 * i + k] = r[10 + k];
  bs->m[i]        = r[20];
  bs->inv_m[i]    = r[21];
  bs->radius[i]   = r[28];
  bs->shape[i]    = (int)r[29];
  bs->material[i] = (int)r[30];
  bs->flags[i]    = ((unsigned)r[31] & ~DEM_GHOST) | addflags;
  for (PetscInt e = 0; e < bs->nextra; e++)
    for (PetscInt k = 0; k < bs->extra_ncomp[e]; k++) bs->extra[e][bs->extra_ncomp[e] * i + k] = r[o++];
}

static inline int64_t DemDecompRecGid(const PetscReal *r)
{
  int64_t g;
  memcpy(&g, r, sizeof(g));
  return g;
}

/* store capacity for nb bodies, and the dissipative arrays (sim->fd, td) beside it, keeping
   the first `keep` bodies of both */
static PetscErrorCode DemDecompReserve(DemSim sim, PetscInt nb, PetscInt keep)
{
  DemBodyStore *bs = &sim->bodies;

  PetscFunctionBegin;
  if (nb > bs->cap) PetscCall(DemBodyStoreReserve(bs, PetscMax(nb, 2 * bs->cap)));
  if (3 * nb > sim->fdcap || !sim->fd) {
    PetscReal *fd, *td;
    PetscInt   cap = PetscMax(3 * nb, 2 * sim->fdcap);
    PetscCall(PetscCalloc1(cap, &fd));
    PetscCall(PetscCalloc1(cap, &td));
    if (sim->fd && keep > 0) {
      PetscCall(PetscArraycpy(fd, sim->fd, 3 * keep));
      PetscCall(PetscArraycpy(td, sim->td, 3 * keep));
    }
    PetscCall(PetscFree(sim->fd));
    PetscCall(PetscFree(sim->td));
    sim->fd = fd, sim->td = td, sim->fdcap = cap;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  int64_t  gid;
  PetscInt k;
} DemGidIdx;

static int DemGidIdxCmp(const void *a, const void *b)
{
  const DemGidIdx *x = (const DemGidIdx *)a, *y = (const DemGidIdx *)b;
  return x->gid < y->gid ? -1 : x->gid > y->gid ? 1 : 0;
}

/* ---- migration ---- */

/* history entries (gids, values) into the transit arrays */
static PetscErrorCode DemDecompHistReserve(struct _DemDecomp *d, PetscInt n, PetscInt hs)
{
  PetscFunctionBegin;
  if (n <= d->hcap) PetscFunctionReturn(PETSC_SUCCESS);
  {
    PetscInt   cap = PetscMax(n, 2 * d->hcap);
    int64_t   *hg;
    PetscReal *hv;
    PetscCall(PetscMalloc1(2 * cap, &hg));
    PetscCall(PetscMalloc1(PetscMax(hs, 1) * cap, &hv));
    if (d->nh) {
      PetscCall(PetscArraycpy(hg, d->hg, 2 * d->nh));
      PetscCall(PetscArraycpy(hv, d->hv, hs * d->nh));
    }
    PetscCall(PetscFree(d->hg));
    PetscCall(PetscFree(d->hv));
    d->hg = hg, d->hv = hv, d->hcap = cap;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* room for `need` per-pair entries in transit (gids g: 2 per entry, values v: W per entry),
   keeping the n there are */
static PetscErrorCode DemDecompPairReserve(int64_t **g, PetscReal **v, PetscInt n, PetscInt *cap, PetscInt need, PetscInt W)
{
  PetscFunctionBegin;
  if (need <= *cap) PetscFunctionReturn(PETSC_SUCCESS);
  {
    PetscInt   c = PetscMax(need, 2 * *cap);
    int64_t   *ng;
    PetscReal *nv;
    PetscCall(PetscMalloc1(2 * c, &ng));
    PetscCall(PetscMalloc1(W * c, &nv));
    if (n) {
      PetscCall(PetscArraycpy(ng, *g, 2 * n));
      PetscCall(PetscArraycpy(nv, *v, W * n));
    }
    PetscCall(PetscFree(*g));
    PetscCall(PetscFree(*v));
    *g = ng, *v = nv, *cap = c;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemDecompWarmReserve(struct _DemDecomp *d, PetscInt n)
{
  PetscFunctionBegin;
  PetscCall(DemDecompPairReserve(&d->wg, &d->wv, d->nw, &d->wcap, n, 1 + d->wrec));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* per-pair entries in transit (gids g, W values each: superquadric warm starts, feature-slot
   histories, an integrator's pair map) go where the lower-id body of their pair goes (left:
   the departing bodies by gid with their destinations, sorted); replicated: the entries of
   departing bodies are dropped (every rank has them). Only the departing entries travel: one
   count per rank pair (MPI_Alltoall), then the entries themselves. nsent (optional): the
   entries sent. Collective. */
static PetscErrorCode DemDecompRoute(DemSim sim, const DemGidIdx *left, PetscInt nleave, PetscBool replicated, PetscInt W, int64_t **gp, PetscReal **vp, PetscInt *np, PetscInt *capp, PetscInt *nsent)
{
  struct _DemDecomp *d = sim->decomp;
  const PetscInt     rec = 2 + W;
  const PetscMPIInt  size = sim->size;
  PetscMPIInt       *hd, *cnt, nin;
  PetscReal         *out, *in;
  PetscInt           nout = 0, kept = 0, n = *np;
  int64_t           *g = *gp;
  PetscReal         *v = *vp;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(n + 1, &hd, size, &cnt));
  PetscCall(PetscArrayzero(d->tcnt, size));
  for (PetscInt e = 0; e < n; e++) {
    DemGidIdx key = {PetscMin(g[2 * e], g[2 * e + 1]), 0}, *f;
    f     = nleave ? (DemGidIdx *)bsearch(&key, left, (size_t)nleave, sizeof(DemGidIdx), DemGidIdxCmp) : NULL;
    hd[e] = f ? (PetscMPIInt)f->k : sim->rank;
    if (hd[e] != sim->rank && !replicated) d->tcnt[hd[e]] += (PetscMPIInt)rec, nout++;
  }
  d->toff[0] = 0;
  for (PetscMPIInt r = 1; r < size; r++) d->toff[r] = d->toff[r - 1] + d->tcnt[r - 1];
  if (nsent) *nsent = nout;
  PetscCallMPI(MPI_Alltoall(d->tcnt, 1, MPI_INT, d->ucnt, 1, MPI_INT, sim->comm));
  d->uoff[0] = 0;
  for (PetscMPIInt r = 1; r < size; r++) d->uoff[r] = d->uoff[r - 1] + d->ucnt[r - 1];
  nin = (d->uoff[size - 1] + d->ucnt[size - 1]) / (PetscMPIInt)rec;
  PetscCall(PetscMalloc2((size_t)rec * (nout + 1), &out, (size_t)rec * (nin + 1), &in));
  PetscCall(PetscArrayzero(cnt, size));
  for (PetscInt e = 0; e < n; e++) {
    if (hd[e] == sim->rank) { /* stays: compact in place */
      g[2 * kept] = g[2 * e], g[2 * kept + 1] = g[2 * e + 1];
      for (PetscInt j = 0; j < W; j++) v[W * kept + j] = v[W * e + j];
      kept++;
    } else if (!replicated) {
      PetscReal *o = out + d->toff[hd[e]] + rec * cnt[hd[e]]++;
      memcpy(&o[0], &g[2 * e], sizeof(int64_t));
      memcpy(&o[1], &g[2 * e + 1], sizeof(int64_t));
      for (PetscInt j = 0; j < W; j++) o[2 + j] = v[W * e + j];
    }
  }
  *np = kept;
  PetscCallMPI(MPI_Alltoallv(out, d->tcnt, d->toff, MPIU_REAL, in, d->ucnt, d->uoff, MPIU_REAL, sim->comm));
  PetscCall(DemDecompPairReserve(gp, vp, *np, capp, *np + nin, W));
  g = *gp, v = *vp;
  for (PetscInt e = 0; e < nin; e++) {
    const PetscReal *o = in + rec * e;
    memcpy(&g[2 * *np], &o[0], sizeof(int64_t));
    memcpy(&g[2 * *np + 1], &o[1], sizeof(int64_t));
    for (PetscInt j = 0; j < W; j++) v[W * *np + j] = o[2 + j];
    (*np)++;
  }
  PetscCall(PetscFree2(out, in));
  PetscCall(PetscFree2(hd, cnt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Moves every owned particle whose centre is outside this rank's subdomain to its owner, and
  every history entry whose lower-id body moves with it. replicated: every rank holds every
  body (the first distribution); the others' bodies are dropped, nothing is sent.
  Afterwards the owned bodies are in global-id order (walls last) and there are no ghosts.
*/
static PetscErrorCode DemDecompMigrate(DemSim sim, PetscBool replicated)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  const PetscInt     n = bs->n, rec = d->rec, hs = sim->histsize, hrec = 2 + hs;
  PetscMPIInt        size = sim->size, *dest, nleave = 0, nin, hin;
  PetscReal         *keep, *out, *in, *hout, *hinb;
  PetscInt           nkeep = 0, *cnt, hleave = 0;
  DemGidIdx         *left;
  MPI_Comm           comm = sim->comm;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(n + 1, &dest));
  for (PetscInt i = 0; i < n; i++) {
    dest[i] = sim->rank;
    if (bs->flags[i] & DEM_WALL) continue;
    dest[i] = DemDecompOwner(d, bs->x + 3 * i);
    if (dest[i] != sim->rank) nleave++;
  }
  if (!replicated) d->nmigrated += nleave;
  /* counts per destination */
  PetscCall(PetscArrayzero(d->tcnt, size));
  for (PetscInt i = 0; i < n; i++)
    if (dest[i] != sim->rank && !replicated) d->tcnt[dest[i]] += (PetscMPIInt)rec;
  d->toff[0] = 0;
  for (PetscMPIInt r = 1; r < size; r++) d->toff[r] = d->toff[r - 1] + d->tcnt[r - 1];
  PetscCallMPI(MPI_Alltoall(d->tcnt, 1, MPI_INT, d->ucnt, 1, MPI_INT, comm));
  d->uoff[0] = 0;
  for (PetscMPIInt r = 1; r < size; r++) d->uoff[r] = d->uoff[r - 1] + d->ucnt[r - 1];
  nin = (d->uoff[size - 1] + d->ucnt[size - 1]) / (PetscMPIInt)rec;
  PetscCall(PetscMalloc3((size_t)rec * (n - nleave + 1), &keep, (size_t)rec * (replicated ? 1 : nleave + 1), &out, (size_t)rec * (nin + 1), &in));
  PetscCall(PetscMalloc1(size, &cnt));
  PetscCall(PetscArrayzero(cnt, size));
  PetscCall(PetscMalloc1(nleave + 1, &left));
  for (PetscInt i = 0, nl = 0; i < n; i++) {
    if (dest[i] == sim->rank) DemDecompPack(sim, i, keep + rec * nkeep++);
    else {
      left[nl].gid = bs->gid[i], left[nl].k = dest[i], nl++;
      if (!replicated) DemDecompPack(sim, i, out + d->toff[dest[i]] + rec * cnt[dest[i]]++);
    }
  }
  PetscCallMPI(MPI_Alltoallv(out, d->tcnt, d->toff, MPIU_REAL, in, d->ucnt, d->uoff, MPIU_REAL, comm));
  /* history entries follow their lower-id body */
  if (nleave > 1) qsort(left, (size_t)nleave, sizeof(DemGidIdx), DemGidIdxCmp);
  PetscCall(PetscArrayzero(d->tcnt, size));
  {
    PetscMPIInt *hd;
    PetscCall(PetscMalloc1(d->nh + 1, &hd));
    for (PetscInt e = 0; e < d->nh; e++) {
      DemGidIdx key = {PetscMin(d->hg[2 * e], d->hg[2 * e + 1]), 0}, *f;
      f     = nleave ? (DemGidIdx *)bsearch(&key, left, (size_t)nleave, sizeof(DemGidIdx), DemGidIdxCmp) : NULL;
      hd[e] = f ? (PetscMPIInt)f->k : sim->rank;
      if (hd[e] != sim->rank && !replicated) d->tcnt[hd[e]] += (PetscMPIInt)hrec, hleave++;
    }
    d->toff[0] = 0;
    for (PetscMPIInt r = 1; r < size; r++) d->toff[r] = d->toff[r - 1] + d->tcnt[r - 1];
    PetscCallMPI(MPI_Alltoall(d->tcnt, 1, MPI_INT, d->ucnt, 1, MPI_INT, comm));
    d->uoff[0] = 0;
    for (PetscMPIInt r = 1; r < size; r++) d->uoff[r] = d->uoff[r - 1] + d->ucnt[r - 1];
    hin = (d->uoff[size - 1] + d->ucnt[size - 1]) / (PetscMPIInt)hrec;
    PetscCall(PetscMalloc2((size_t)hrec * (hleave + 1), &hout, (size_t)hrec * (hin + 1), &hinb));
    PetscCall(PetscArrayzero(cnt, size));
    {
      PetscInt kept = 0;
      for (PetscInt e = 0; e < d->nh; e++) {
        if (hd[e] == sim->rank) { /* stays: compact in place */
          d->hg[2 * kept] = d->hg[2 * e], d->hg[2 * kept + 1] = d->hg[2 * e + 1];
          for (PetscInt j = 0; j < hs; j++) d->hv[hs * kept + j] = d->hv[hs * e + j];
          kept++;
        } else if (!replicated) {
          PetscReal *o = hout + d->toff[hd[e]] + hrec * cnt[hd[e]]++;
          memcpy(&o[0], &d->hg[2 * e], sizeof(int64_t));
          memcpy(&o[1], &d->hg[2 * e + 1], sizeof(int64_t));
          for (PetscInt j = 0; j < hs; j++) o[2 + j] = d->hv[hs * e + j];
        }
      }
      d->nh = kept;
    }
    PetscCallMPI(MPI_Alltoallv(hout, d->tcnt, d->toff, MPIU_REAL, hinb, d->ucnt, d->uoff, MPIU_REAL, comm));
    PetscCall(DemDecompHistReserve(d, d->nh + hin, hs));
    for (PetscInt e = 0; e < hin; e++) {
      const PetscReal *o = hinb + hrec * e;
      memcpy(&d->hg[2 * d->nh], &o[0], sizeof(int64_t));
      memcpy(&d->hg[2 * d->nh + 1], &o[1], sizeof(int64_t));
      for (PetscInt j = 0; j < hs; j++) d->hv[hs * d->nh + j] = o[2 + j];
      d->nh++;
    }
    PetscCall(PetscFree2(hout, hinb));
    PetscCall(PetscFree(hd));
  }
  if (d->wrec) PetscCall(DemDecompRoute(sim, left, nleave, replicated, 1 + d->wrec, &d->wg, &d->wv, &d->nw, &d->wcap, NULL)); /* superquadric warm starts, the same way */
  if (hs > 0) PetscCall(DemDecompRoute(sim, left, nleave, replicated, 1 + hs, &d->fg, &d->fv, &d->nf, &d->fcap, NULL)); /* feature-slot histories (mesh walls) */
  if (d->pmap) { /* an integrator's pair map (cd's warm starts) */
    PetscInt before = d->np, sent;
    PetscCall(DemDecompRoute(sim, left, nleave, replicated, 1 + d->pmap->histsize, &d->pg, &d->pv, &d->np, &d->pcap, &sent));
    d->npsent += sent;
    d->nprecv += d->np - (before - sent);
  }
  /* owned = kept + received, in global-id order */
  if (nleave || nin) {
    PetscInt   tot = nkeep + nin;
    DemGidIdx *ord;
    PetscCall(PetscMalloc1(tot + 1, &ord));
    for (PetscInt k = 0; k < nkeep; k++) ord[k].gid = DemDecompRecGid(keep + rec * k), ord[k].k = k;
    for (PetscInt k = 0; k < nin; k++) ord[nkeep + k].gid = DemDecompRecGid(in + rec * k), ord[nkeep + k].k = nkeep + k;
    if (tot > 1) qsort(ord, (size_t)tot, sizeof(DemGidIdx), DemGidIdxCmp);
    bs->n = 0, bs->nghost = 0;
    PetscCall(DemDecompReserve(sim, tot, 0));
    for (PetscInt k = 0; k < tot; k++) {
      PetscInt s = ord[k].k;
      DemDecompUnpack(sim, k, s < nkeep ? keep + rec * s : in + rec * (s - nkeep), 0);
    }
    bs->n = tot;
    PetscCall(PetscFree(ord));
  }
  bs->nghost = 0;
  /* walls: their new places */
  for (PetscInt w = 0, i = 0; w < sim->nwall; w++) {
    while (i < bs->n && bs->gid[i] != d->wallgid[w]) i++;
    PetscCheck(i < bs->n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "decomposition lost wall %" PetscInt_FMT, w);
    sim->walls[w].body = i;
  }
  PetscCall(PetscFree3(keep, out, in));
  PetscCall(PetscFree(cnt));
  PetscCall(PetscFree(left));
  PetscCall(PetscFree(dest));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* shifting cut planes: every cut dimension's planes at the quantiles of the particles'
   coordinates, no subdomain narrower than the ghost range */
static PetscErrorCode DemDecompBalance(DemSim sim)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  const PetscInt     nbin = 4096;
  PetscReal         *h, *hg;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(nbin, &h, nbin, &hg));
  for (int dd = 0; dd < 3; dd++) {
    const PetscInt  g  = d->grid[dd];
    const PetscReal lo = sim->lo[dd], L = sim->hi[dd] - sim->lo[dd], wb = L / nbin;
    PetscReal       tot = 0, acc = 0, *c = d->cut[dd];
    PetscInt        k = 1;
    if (g == 1) continue;
    if (g * d->cutoff > L) continue; /* no room to move */
    PetscCall(PetscArrayzero(h, nbin));
    for (PetscInt i = 0; i < bs->n; i++) {
      PetscReal y;
      PetscInt  b;
      if (bs->flags[i] & DEM_WALL) continue;
      y = (bs->x[3 * i + dd] - lo) / wb;
      b = y < 0 ? 0 : y >= nbin ? nbin - 1 : (PetscInt)y;
      h[b] += d->tweight; /* 1, or balance_by time: this rank's work per particle / the mean */
    }
    PetscCallMPI(MPI_Allreduce(h, hg, (PetscMPIInt)nbin, MPIU_REAL, MPIU_SUM, sim->comm));
    for (PetscInt b = 0; b < nbin; b++) tot += hg[b];
    if (tot <= 0) continue;
    for (PetscInt b = 0; b < nbin && k < g; b++) {
      while (k < g && acc + hg[b] >= tot * k / g) { /* quantile k/g inside bin b */
        PetscReal fr = hg[b] > 0 ? (tot * k / g - acc) / hg[b] : 0;
        c[k]         = lo + wb * (b + fr);
        k++;
      }
      acc += hg[b];
    }
    for (; k < g; k++) c[k] = sim->hi[dd];
    c[0] = lo, c[g] = sim->hi[dd];
    /* at least the ghost range wide: forwards from the bottom, then backwards from the top */
    for (k = 1; k < g; k++) c[k] = PetscMax(c[k], c[k - 1] + d->cutoff);
    for (k = g - 1; k >= 1; k--) c[k] = PetscMin(c[k], c[k + 1] - d->cutoff);
  }
  PetscCall(PetscFree2(h, hg));
  d->nrebalance++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemDecompImbalance(DemSim sim, PetscReal *imb)
{
  DemBodyStore *bs = &sim->bodies;
  PetscReal     loc = 0, mx, sum;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < bs->n; i++) loc += !(bs->flags[i] & DEM_WALL);
  PetscCallMPI(MPI_Allreduce(&loc, &mx, 1, MPIU_REAL, MPIU_MAX, sim->comm));
  PetscCallMPI(MPI_Allreduce(&loc, &sum, 1, MPIU_REAL, MPIU_SUM, sim->comm));
  *imb = sum > 0 ? mx / (sum / sim->size) : 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ghosts: copies of owned particles for every rank within the ghost range */
static PetscErrorCode DemDecompGhosts(DemSim sim)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  const PetscInt     n = bs->n, rec = d->rec;
  const PetscReal    c2 = d->cutoff * d->cutoff;
  PetscMPIInt        size = sim->size;
  PetscInt           tot = 0;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(d->scnt, size));
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      d->soff[0] = 0;
      for (PetscMPIInt r = 1; r < size; r++) d->soff[r] = d->soff[r - 1] + d->scnt[r - 1];
      tot = d->soff[size - 1] + d->scnt[size - 1];
      if (tot > d->sidxcap) {
        PetscCall(PetscFree(d->sidx));
        d->sidxcap = PetscMax(tot, 2 * d->sidxcap);
        PetscCall(PetscMalloc1(d->sidxcap, &d->sidx));
      }
      PetscCall(PetscArrayzero(d->scnt, size));
    }
    for (PetscInt i = 0; i < n; i++) {
      if (bs->flags[i] & DEM_WALL) continue;
      for (PetscMPIInt r = 0; r < size; r++) {
        if (r == sim->rank || DemDecompDist2(sim, d, r, bs->x + 3 * i) >= c2) continue;
        if (pass == 1) d->sidx[d->soff[r] + d->scnt[r]] = i;
        d->scnt[r]++;
      }
    }
  }
  PetscCallMPI(MPI_Alltoall(d->scnt, 1, MPI_INT, d->rcnt, 1, MPI_INT, sim->comm));
  d->roff[0] = 0;
  for (PetscMPIInt r = 1; r < size; r++) d->roff[r] = d->roff[r - 1] + d->rcnt[r - 1];
  { /* every pair of ranks exchanges ghosts both ways (2 ranks, small grids): the forward
       exchange reaches every rank, so the next rebuild decisions ride on it (DemDecompForward) */
    PetscMPIInt all = 1;
    for (PetscMPIInt r = 0; r < size; r++)
      if (r != sim->rank && !(d->scnt[r] > 0 && d->rcnt[r] > 0)) all = 0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, sim->comm));
    d->fused = all ? PETSC_TRUE : PETSC_FALSE;
  }
  d->nsend = tot;
  d->nrecv = d->roff[size - 1] + d->rcnt[size - 1];
  PetscCall(DemDecompEnsure((void **)&d->sbuf, &d->sbufcap, (size_t)rec * (d->nsend + 1), sizeof(PetscReal)));
  PetscCall(DemDecompEnsure((void **)&d->rbuf, &d->rbufcap, (size_t)rec * (d->nrecv + 1), sizeof(PetscReal)));
  for (PetscInt k = 0; k < d->nsend; k++) DemDecompPack(sim, d->sidx[k], d->sbuf + rec * k);
  for (PetscMPIInt r = 0; r < size; r++) {
    d->tcnt[r] = d->scnt[r] * (PetscMPIInt)rec, d->toff[r] = d->soff[r] * (PetscMPIInt)rec;
    d->ucnt[r] = d->rcnt[r] * (PetscMPIInt)rec, d->uoff[r] = d->roff[r] * (PetscMPIInt)rec;
  }
  PetscCallMPI(MPI_Alltoallv(d->sbuf, d->tcnt, d->toff, MPIU_REAL, d->rbuf, d->ucnt, d->uoff, MPIU_REAL, sim->comm));
  PetscCall(DemDecompReserve(sim, n + d->nrecv, n));
  for (PetscInt k = 0; k < d->nrecv; k++) {
    DemDecompUnpack(sim, n + k, d->rbuf + rec * k, DEM_GHOST);
    for (int j = 0; j < 3; j++) bs->f[3 * (n + k) + j] = bs->t[3 * (n + k) + j] = 0;
  }
  bs->nghost = d->nrecv;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* drops the pairs another rank evaluates (lower-id body not owned here) and pairs of two
   immobile particles, regroups, and puts the history back beside each pair */
static PetscErrorCode DemDecompFilterPairs(DemSim sim)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  DemNeighbourList  *nl = &sim->nl;
  const PetscInt     hs = sim->histsize, n = bs->n;
  PetscInt           m = 0, ng = 0, start[DEM_KIND_MAX * DEM_KIND_MAX + 1];

  PetscFunctionBegin;
  for (PetscInt g = 0; g < nl->ngroups; g++) {
    PetscInt s0 = nl->gstart[g], s1 = nl->gstart[g + 1], m0 = m;
    for (PetscInt k = s0; k < s1; k++) {
      PetscInt a = nl->a[k], b = nl->b[k], lo = bs->gid[a] < bs->gid[b] ? a : b;
      unsigned im = DEM_FIXED | DEM_PRESCRIBED;
      if (lo >= n) continue;
      if ((bs->flags[a] & im) && (bs->flags[b] & im) && !((bs->flags[a] | bs->flags[b]) & DEM_WALL)) continue;
      if (d->ckpairs && !DemHistoryMapGet(d->ckpairs, PetscMin(bs->gid[a], bs->gid[b]), PetscMax(bs->gid[a], bs->gid[b]), 0)) continue;
      nl->a[m]        = a;
      nl->b[m]        = b;
      nl->shiftidx[m] = nl->shiftidx[k];
      m++;
    }
    if (m > m0) {
      nl->gka[ng] = nl->gka[g], nl->gkb[ng] = nl->gkb[g];
      start[ng++] = m0;
    }
  }
  for (PetscInt g = 0; g < ng; g++) nl->gstart[g] = start[g];
  nl->gstart[ng] = m;
  nl->ngroups     = ng;
  nl->npairs      = m;
  nl->shift_valid = PETSC_FALSE; /* the kept pairs' shift vectors on demand (neighbour.c); their
                                    indices stay the identity */
  if (hs > 0)
    for (PetscInt k = 0; k < m; k++) {
      PetscReal *h = d->hmap.cap ? DemHistoryMapGet(&d->hmap, bs->gid[nl->a[k]], bs->gid[nl->b[k]], 0) : NULL;
      if (h) PetscCall(PetscArraycpy(nl->history + k * hs, h, hs));
      else PetscCall(PetscArrayzero(nl->history + k * hs, hs));
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* store index of global id g among owned and ghost bodies (DemDecompRemap's table), or -1 */
static PetscInt DemDecompLocal(const struct _DemDecomp *d, PetscInt nb, int64_t g)
{
  PetscInt lo = 0, hi = nb - 1;
  while (lo <= hi) {
    PetscInt mid = (lo + hi) / 2;
    if (d->lkg[mid] == g) return d->lki[mid];
    if (d->lkg[mid] < g) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int DemDecompI64Cmp(const void *a, const void *b)
{
  const int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
  return (x > y) - (x < y);
}

/*
  after a rebuild: the loads' body lists become the store indices of this rank's owned bodies
  among them (a load acts once, on the owner); the bonds become those this rank evaluates (the
  rule of the pairs: the bond's lower-id body is owned here) with both bodies' store indices.
  A bond whose partner is neither owned nor a ghost here (stretched beyond the ghost range) is
  an error on every rank. Collective.
*/
static PetscErrorCode DemDecompRemap(DemSim sim)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  const PetscInt     nb = bs->n + bs->nghost;
  DemBondList       *bl = sim->bonds;
  PetscBool          bad = PETSC_FALSE, any;
  char               msg[512] = "";

  PetscFunctionBegin;
  if (!sim->nload && !bl && !sim->out.ntrack) PetscFunctionReturn(PETSC_SUCCESS);
  if (nb > d->lkcap) {
    PetscCall(PetscFree2(d->lkg, d->lki));
    d->lkcap = PetscMax(nb, 2 * d->lkcap);
    PetscCall(PetscMalloc2(d->lkcap, &d->lkg, d->lkcap, &d->lki));
  }
  {
    DemGidIdx *ord; /* scratch: the ghost buffers are free between the exchange and the step */
    PetscCall(DemDecompEnsure((void **)&d->sbuf, &d->sbufcap, (size_t)(nb + 1) * (sizeof(DemGidIdx) / sizeof(PetscReal) + 1), sizeof(PetscReal)));
    ord = (DemGidIdx *)d->sbuf;
    for (PetscInt i = 0; i < nb; i++) ord[i].gid = bs->gid[i], ord[i].k = i;
    if (nb > 1) qsort(ord, (size_t)nb, sizeof(DemGidIdx), DemGidIdxCmp);
    for (PetscInt i = 0; i < nb; i++) d->lkg[i] = ord[i].gid, d->lki[i] = ord[i].k;
  }
  for (PetscInt l = 0; l < sim->nload; l++) {
    DemLoad *ld = &sim->loads[l];
    ld->nids    = 0;
    for (PetscInt k = 0; k < d->loadn[l]; k++) {
      PetscInt i = DemDecompLocal(d, nb, d->loadgid[l][k]);
      if (i >= 0 && i < bs->n) ld->ids[ld->nids++] = i;
    }
  }
  if (bl) {
    int64_t *rec; /* scratch: key, a, b per bond evaluated here */
    PetscInt m = 0;
    PetscCall(DemDecompEnsure((void **)&d->rbuf, &d->rbufcap, (size_t)3 * (d->nbond + 1), sizeof(PetscReal)));
    rec = (int64_t *)d->rbuf;
    for (PetscInt k = 0; k < d->nbond; k++) {
      const int64_t ga = d->bondgid[2 * k], gb = d->bondgid[2 * k + 1];
      PetscInt      ia = DemDecompLocal(d, nb, ga), ib = DemDecompLocal(d, nb, gb), lo = ga < gb ? ia : ib;
      if (lo < 0 || lo >= bs->n) continue; /* another rank evaluates it */
      if (ia < 0 || ib < 0) {
        if (!bad) PetscCall(PetscSNPrintf(msg, sizeof(msg), "bonds: the bonded bodies %lld and %lld are farther apart than the ghost range 2 r_max + skin = %g m around rank %d's subdomain at step %" PetscInt_FMT ": on several MPI ranks a bond needs both bodies within the ghost range; run on one rank, or raise search.skin", (long long)ga, (long long)gb, (double)d->cutoff, (int)sim->rank, sim->step));
        bad = PETSC_TRUE;
        continue;
      }
      rec[3 * m]     = PetscMin(ia, ib) * (int64_t)nb + PetscMax(ia, ib);
      rec[3 * m + 1] = ia, rec[3 * m + 2] = ib;
      m++;
    }
    if (m > 1) qsort(rec, (size_t)m, 3 * sizeof(int64_t), DemDecompI64Cmp);
    for (PetscInt k = 0; k < m; k++) bl->key[k] = rec[3 * k], bl->a[k] = (PetscInt)rec[3 * k + 1], bl->b[k] = (PetscInt)rec[3 * k + 2];
    bl->n = m;
    PetscCall(PetscFree(bl->hasbond));
    PetscCall(PetscCalloc1(nb + 1, &bl->hasbond));
    for (PetscInt k = 0; k < m; k++) bl->hasbond[bl->a[k]] = bl->hasbond[bl->b[k]] = 1;
  }
  PetscCall(DemDecompAgree_Private(sim, bad, &any, msg, sizeof(msg)));
  PetscCheck(!any, sim->comm, PETSC_ERR_SUP, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rebuild of the header comment, steps 1-5 */
static PetscErrorCode DemDecompRebuild(DemSim sim, PetscBool replicated)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  DemNeighbourList  *nl = &sim->nl;
  const PetscInt     hs = sim->histsize;
  DemHistoryMap      fx; /* replicated: the feature slots and map (step 0) */

  PetscFunctionBegin;
  /* 0. replicated (a restart's distribution): every feature slot and map entry, by global ids,
     to be made again as they are (featslot.c), so that the contacts see what the uninterrupted
     run's list holds (a contact passing to another mesh feature inherits from the slots) */
  if (replicated) PetscCall(DemNeighbourFeatureExport_Private(sim, &fx));
  /* 0b. a restart's distribution: the checkpoint's superquadric slots and gid maps, held by
     global ids until the new list is built (superquadric.c) */
  for (PetscInt k = 0; k < sim->nshape && replicated && d->restored; k++)
    if (DemShapeSuperquadricWarmReals_Private(sim->shapes[k])) PetscCall(DemShapeSuperquadricHold_Private(sim->shapes[k], sim));
  /* 1. history out of the list, by global ids (replicated: the list of a checkpoint) */
  d->nh = 0;
  if (hs > 0) {
    PetscInt cnt = 0;
    for (PetscInt k = 0; k < nl->npairs; k++) {
      const PetscReal *h   = nl->history + k * hs;
      PetscBool        any = PETSC_FALSE;
      for (PetscInt j = 0; j < hs; j++) any = any || h[j] != 0.0;
      cnt += any;
    }
    PetscCall(DemDecompHistReserve(d, cnt, hs));
    for (PetscInt k = 0; k < nl->npairs; k++) {
      const PetscReal *h   = nl->history + k * hs;
      PetscBool        any = PETSC_FALSE;
      for (PetscInt j = 0; j < hs; j++) any = any || h[j] != 0.0;
      if (!any) continue;
      d->hg[2 * d->nh]     = bs->gid[nl->a[k]];
      d->hg[2 * d->nh + 1] = bs->gid[nl->b[k]];
      PetscCall(PetscArraycpy(d->hv + hs * d->nh, h, hs));
      d->nh++;
    }
  }
  /* 1b. the superquadric warm starts of the pairs, by global ids (superquadric.c) */
  d->nw = 0;
  for (PetscInt k = 0; k < sim->nshape && d->wrec; k++) {
    const PetscInt ns = DemShapeSuperquadricWarmSlots_Private(sim->shapes[k], sim), W = 1 + d->wrec;
    PetscCall(DemDecompWarmReserve(d, d->nw + ns));
    for (PetscInt j = 0; j < ns; j++)
      if (DemShapeSuperquadricWarmGet_Private(sim->shapes[k], j, &d->wg[2 * d->nw], &d->wg[2 * d->nw + 1], d->wv + W * d->nw + 1)) d->wv[W * d->nw++] = (PetscReal)k;
  }
  /* 1c. the feature slots' histories (featslot.c: one per touching face, edge or vertex of a
     mesh wall), by global ids and feature; no slot is left (their pair indices change) */
  d->nf = 0;
  if (hs > 0 && nl->fbuild == nl->nbuilds + 1) {
    const PetscInt W = 1 + hs;
    PetscCall(DemDecompPairReserve(&d->fg, &d->fv, 0, &d->fcap, nl->nfeat, W));
    for (PetscInt s = 0; s < nl->nfeat; s++) {
      const PetscReal *h   = nl->history + hs * (nl->npairs + s);
      PetscBool        any = PETSC_FALSE;
      for (PetscInt j = 0; j < hs; j++) any = any || h[j] != 0.0;
      if (!any) continue;
      d->fg[2 * d->nf]     = bs->gid[nl->a[nl->fpair[s]]];
      d->fg[2 * d->nf + 1] = bs->gid[nl->b[nl->fpair[s]]];
      memcpy(&d->fv[W * d->nf], &nl->fkey[s], sizeof(int64_t));
      PetscCall(PetscArraycpy(d->fv + W * d->nf + 1, h, hs));
      d->nf++;
    }
  }
  /* 1d. an integrator's pair map (cd's warm starts, keyed by global ids and a feature), taken
     out whole: after the build it holds what goes with this rank's pairs */
  d->np = 0;
  if (d->pmap) {
    DemHistoryMap *m = d->pmap;
    const PetscInt W = 1 + m->histsize;
    PetscCall(DemDecompPairReserve(&d->pg, &d->pv, 0, &d->pcap, m->count, W));
    for (PetscInt i = 0; i < m->cap; i++) {
      if (!m->used[i]) continue;
      d->pg[2 * d->np]     = m->ka[i];
      d->pg[2 * d->np + 1] = m->kb[i];
      memcpy(&d->pv[W * d->np], &m->kf[i], sizeof(int64_t));
      PetscCall(PetscArraycpy(d->pv + W * d->np + 1, m->val + m->histsize * i, m->histsize));
      d->np++;
    }
    d->npheld += d->np;
    PetscCall(DemHistoryMapClear(m));
  }
  nl->nfeat  = 0;
  nl->npairs = 0; /* its body indices are about to change */
  nl->ngroups = 0;
  bs->nghost = 0;
  /* 2. wrap */
  for (PetscInt i = 0; i < bs->n; i++) {
    if (bs->flags[i] & DEM_WALL) continue;
    for (int dd = 0; dd < 3; dd++)
      if (sim->periodic[dd]) {
        PetscReal y = DemDecompWrap(sim, dd, bs->x[3 * i + dd]);
        d->nwrapped += y != bs->x[3 * i + dd];
        bs->x[3 * i + dd] = y;
      }
  }
  d->nrebuilds++;
  /* 3., 4. migration, load balance */
  PetscCall(DemDecompMigrate(sim, replicated));
  PetscCall(DemDecompImbalance(sim, &d->imbalance));
  if (d->balance && (d->bytime ? d->tbal : d->imbalance > d->threshold)) {
    PetscReal before = d->imbalance;
    PetscCall(DemDecompBalance(sim));
    PetscCall(DemDecompMigrate(sim, PETSC_FALSE));
    PetscCall(DemDecompImbalance(sim, &d->imbalance));
    PetscCall(PetscInfo(NULL, "decomp: rebalanced at step %" PetscInt_FMT ": imbalance %g -> %g\n", sim->step, (double)before, (double)d->imbalance));
    if (getenv("MMDEM_DECOMP_VERBOSE")) {
      if (d->bytime) PetscCall(PetscPrintf(sim->comm, "decomp: step %" PetscInt_FMT " rebalanced by time: max/mean work %.4f; max/mean owned particles %.4f -> %.4f\n", sim->step, (double)d->timbalance, (double)before, (double)d->imbalance));
      else PetscCall(PetscPrintf(sim->comm, "decomp: step %" PetscInt_FMT " rebalanced: max/mean owned particles %.4f -> %.4f\n", sim->step, (double)before, (double)d->imbalance));
    }
    d->tbal    = PETSC_FALSE;
    d->tweight = 1;
    d->ntrebalance += d->bytime;
  }
  /* 5. history map, ghosts, build, filter */
  if (hs > 0) {
    if (!d->hmap.cap) PetscCall(DemHistoryMapInit(&d->hmap, hs));
    PetscCall(DemHistoryMapClear(&d->hmap));
    for (PetscInt e = 0; e < d->nh; e++) PetscCall(DemHistoryMapPut(&d->hmap, d->hg[2 * e], d->hg[2 * e + 1], 0, d->hv + hs * e));
  }
  d->nowned = bs->n - sim->nwall;
  PetscCall(DemDecompGhosts(sim));
  PetscCall(DemNeighbourBuild_Private(sim, bs->x));
  PetscCall(DemDecompFilterPairs(sim));
  if (d->nf) { /* the feature histories into the map from which featslot.c makes the slots */
    PetscCheck(nl->fmap, PETSC_COMM_SELF, PETSC_ERR_PLIB, "decomposition: no feature map after a build");
    for (PetscInt e = 0; e < d->nf; e++) {
      int64_t f;
      memcpy(&f, &d->fv[(1 + hs) * e], sizeof(int64_t));
      PetscCall(DemHistoryMapPut((DemHistoryMap *)nl->fmap, d->fg[2 * e], d->fg[2 * e + 1], f, d->fv + (1 + hs) * e + 1));
    }
  }
  if (replicated) { /* step 0's slots and map entries of this rank's pairs */
    PetscCall(DemNeighbourFeatureImport_Private(sim, &fx));
    PetscCall(DemHistoryMapFree(&fx));
  }
  for (PetscInt k = 0; k < sim->nshape && replicated && d->restored; k++) /* step 0b's records into the slots of this rank's pairs */
    if (DemShapeSuperquadricWarmReals_Private(sim->shapes[k])) PetscCall(DemShapeSuperquadricPlace_Private(sim->shapes[k], sim));
  for (PetscInt e = 0; e < d->nw; e++) { /* the warm starts where the lookups of the new list find them */
    const PetscReal *v = d->wv + (1 + d->wrec) * e;
    PetscCall(DemShapeSuperquadricWarmPut_Private(sim->shapes[(PetscInt)v[0]], sim, d->wg[2 * e], d->wg[2 * e + 1], v + 1));
  }
  for (PetscInt e = 0; e < d->np && d->pmap; e++) { /* the integrator's pair map, this rank's part */
    const PetscInt W = 1 + d->pmap->histsize;
    int64_t        f;
    memcpy(&f, &d->pv[W * e], sizeof(int64_t));
    PetscCall(DemHistoryMapPut(d->pmap, d->pg[2 * e], d->pg[2 * e + 1], f, d->pv + W * e + 1));
  }
  PetscCall(DemDecompRemap(sim));
  DEM_DECOMP_TICK(d, DEM_DT_REBUILD);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- per-step communication ---- */

/* forward: the owners' x, v, w, q into the ghosts (13 reals per ghost). With `rebuild`
   (d->fused: every other rank is a ghost neighbour), this rank's rebuild flag *rebuild goes to
   every rank in the same round of messages and comes back as their maximum; the ghosts are
   then not unpacked when a rebuild follows. */
static PetscErrorCode DemDecompForward(DemSim sim, PetscMPIInt *rebuild)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  const PetscInt     n = bs->n, R = 13;
  PetscMPIInt        nreq = 0;

  PetscFunctionBegin;
  DEM_DECOMP_TICK(d, DEM_DT_OTHER);
  if (rebuild) {
    for (PetscMPIInt r = 0; r < sim->size; r++) {
      d->flg[r] = (PetscReal)*rebuild;
      if (r == sim->rank) continue;
      PetscCallMPI(MPI_Irecv(d->flg + sim->size + r, 1, MPIU_REAL, r, 74, sim->comm, &d->req[nreq++]));
      PetscCallMPI(MPI_Isend(d->flg + r, 1, MPIU_REAL, r, 74, sim->comm, &d->req[nreq++]));
    }
  }
  /* fixed-size copies (the compiler emits vector moves): this runs every step */
  for (PetscInt k = 0; k < d->nsend; k++) {
    const PetscInt i = d->sidx[k];
    PetscReal     *o = d->sbuf + R * k;
    memcpy(o, bs->x + 3 * i, 3 * sizeof(PetscReal));
    memcpy(o + 3, bs->v + 3 * i, 3 * sizeof(PetscReal));
    memcpy(o + 6, bs->w + 3 * i, 3 * sizeof(PetscReal));
    memcpy(o + 9, bs->q + 4 * i, 4 * sizeof(PetscReal));
  }
  for (PetscMPIInt r = 0; r < sim->size; r++) {
    if (d->rcnt[r]) PetscCallMPI(MPI_Irecv(d->rbuf + R * d->roff[r], (PetscMPIInt)R * d->rcnt[r], MPIU_REAL, r, 71, sim->comm, &d->req[nreq++]));
    if (d->scnt[r]) PetscCallMPI(MPI_Isend(d->sbuf + R * d->soff[r], (PetscMPIInt)R * d->scnt[r], MPIU_REAL, r, 71, sim->comm, &d->req[nreq++]));
  }
  DEM_DECOMP_TICK(d, DEM_DT_FWD_PACK);
  PetscCallMPI(MPI_Waitall(nreq, d->req, MPI_STATUSES_IGNORE));
  DEM_DECOMP_TICK(d, DEM_DT_FWD_WAIT);
  if (rebuild) {
    for (PetscMPIInt r = 0; r < sim->size; r++)
      if (r != sim->rank && d->flg[sim->size + r] > 0) *rebuild = 1;
    if (*rebuild) PetscFunctionReturn(PETSC_SUCCESS); /* the rebuild makes the ghosts anew */
  }
  { /* the ghosts are the store slots n .. n + nrecv - 1, in the order received */
    const PetscReal *o = d->rbuf;
    PetscReal       *x = bs->x + 3 * n, *v = bs->v + 3 * n, *w = bs->w + 3 * n, *q = bs->q + 4 * n;
    for (PetscInt k = 0; k < d->nrecv; k++, o += R, x += 3, v += 3, w += 3, q += 4) {
      memcpy(x, o, 3 * sizeof(PetscReal));
      memcpy(v, o + 3, 3 * sizeof(PetscReal));
      memcpy(w, o + 6, 3 * sizeof(PetscReal));
      memcpy(q, o + 9, 4 * sizeof(PetscReal));
    }
  }
  DEM_DECOMP_TICK(d, DEM_DT_FWD_UNPACK);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the owners' entries of arrays (store layout, wid[a] reals per body; NULL skipped) into
   their ghosts (forward), or the ghosts' entries added to their owners' (reverse), over the
   ghost lists of the last rebuild. Collective. */
static PetscErrorCode DemDecompExchange(DemSim sim, PetscInt narr, PetscReal *arr[], const PetscInt wid[], PetscBool reverse)
{
  struct _DemDecomp *d = sim->decomp;
  const PetscInt     n = sim->bodies.n;
  PetscInt           R = 0;
  PetscMPIInt        nreq = 0;
  PetscReal         *out, *in;
  PetscMPIInt       *ocnt, *ooff, *icnt, *ioff;

  PetscFunctionBegin;
  if (!d || !d->active) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt a = 0; a < narr; a++) R += arr[a] ? wid[a] : 0;
  PetscCheck(R <= d->rec, PETSC_COMM_SELF, PETSC_ERR_PLIB, "decomposition: %" PetscInt_FMT " reals per body exceed the record of %" PetscInt_FMT, R, d->rec);
  /* forward: owned (sbuf, sidx) -> ghosts (rbuf); reverse: ghosts (rbuf) -> owners (sbuf) */
  out  = reverse ? d->rbuf : d->sbuf;
  in   = reverse ? d->sbuf : d->rbuf;
  ocnt = reverse ? d->rcnt : d->scnt, ooff = reverse ? d->roff : d->soff;
  icnt = reverse ? d->scnt : d->rcnt, ioff = reverse ? d->soff : d->roff;
  for (PetscInt k = 0; k < (reverse ? d->nrecv : d->nsend); k++) {
    PetscInt   i = reverse ? n + k : d->sidx[k];
    PetscReal *o = out + R * k;
    for (PetscInt a = 0; a < narr; a++)
      if (arr[a])
        for (PetscInt j = 0; j < wid[a]; j++) *o++ = arr[a][wid[a] * i + j];
  }
  for (PetscMPIInt r = 0; r < sim->size; r++) {
    if (icnt[r]) PetscCallMPI(MPI_Irecv(in + R * ioff[r], (PetscMPIInt)R * icnt[r], MPIU_REAL, r, 73, sim->comm, &d->req[nreq++]));
    if (ocnt[r]) PetscCallMPI(MPI_Isend(out + R * ooff[r], (PetscMPIInt)R * ocnt[r], MPIU_REAL, r, 73, sim->comm, &d->req[nreq++]));
  }
  PetscCallMPI(MPI_Waitall(nreq, d->req, MPI_STATUSES_IGNORE));
  for (PetscInt k = 0; k < (reverse ? d->nsend : d->nrecv); k++) {
    PetscInt         i = reverse ? d->sidx[k] : n + k;
    const PetscReal *o = in + R * k;
    for (PetscInt a = 0; a < narr; a++)
      if (arr[a])
        for (PetscInt j = 0; j < wid[a]; j++) {
          if (reverse) arr[a][wid[a] * i + j] += *o++;
          else arr[a][wid[a] * i + j] = *o++;
        }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompForwardState_Private - the owners' entries of trial-state arrays (laid out as the
  store: 3 reals per body, 4 for q; NULL arrays are skipped) copied into the ghosts' entries,
  over the ghost lists of the last rebuild. The implicit integrators call it before every force
  evaluation at an iterate, so that a pair with a ghost sees the owner's current iterate.
  Collective.
*/
PetscErrorCode DemDecompForwardState_Private(DemSim sim, PetscReal *x, PetscReal *v, PetscReal *w, PetscReal *q, PetscReal *dx, PetscReal *alpha)
{
  PetscReal     *arr[6] = {x, v, w, q, dx, alpha};
  const PetscInt wid[6] = {3, 3, 3, 4, 3, 3};

  PetscFunctionBegin;
  PetscCall(DemDecompExchange(sim, 6, arr, wid, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompForwardArray_Private, DemDecompReverseAddArray_Private - one array of `width` reals
  per body (store layout): the owners' entries into their ghosts; the ghosts' entries added to
  their owners' (the ghosts' entries are left as they are). Collective.
*/
PetscErrorCode DemDecompForwardArray_Private(DemSim sim, PetscReal *a, PetscInt width)
{
  PetscFunctionBegin;
  PetscCall(DemDecompExchange(sim, 1, &a, &width, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemDecompReverseAddArray_Private(DemSim sim, PetscReal *a, PetscInt width)
{
  PetscFunctionBegin;
  PetscCall(DemDecompExchange(sim, 1, &a, &width, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemDecompSum_Private(DemSim sim, PetscReal *v, PetscInt n)
{
  PetscFunctionBegin;
  if (!sim->decomp || n <= 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, (PetscMPIInt)n, MPIU_REAL, MPIU_SUM, sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompUpdateNeighbours_Private - DemSimUpdateNeighbours on several ranks: ghosts refreshed,
  or, when any body on any rank moved more than half the skin (or `force`), a rebuild with
  migration; moved >= 0: this rank's displacement test was made by the caller. Collective.
*/
PetscErrorCode DemDecompUpdateNeighbours_Private(DemSim sim, const PetscReal *x, PetscBool force, PetscInt moved)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore *bs = &sim->bodies;
  PetscMPIInt   loc = force ? 1 : 0, glob;

  PetscFunctionBegin;
  PetscCheck(!x || x == bs->x, PETSC_COMM_SELF, PETSC_ERR_SUP, "the MPI decomposition updates neighbours at the store's positions only");
  if (d->bytime) { /* mpi.balance_by: time: compare the ranks' work every DEM_BAL_EVERY calls;
                      rebalance when the same rank was the slowest by more than the threshold
                      in two windows running (not on one window's noise: a preempted rank) */
    if (d->tcount == 0) d->twork0 = DemDecompWork(d);
    if (++d->tcount > DEM_BAL_EVERY) {
      const PetscInt own = PetscMax(d->nowned, 1);
      const double   w   = DemDecompWork(d) - d->twork0;
      double         lw[2] = {w, (w + d->twprev) / own}, sw[2];
      struct {
        double v;
        int    r;
      } me = {w, (int)sim->rank}, mx;
      PetscCallMPI(MPI_Allreduce(lw, sw, 2, MPI_DOUBLE, MPI_SUM, sim->comm));
      PetscCallMPI(MPI_Allreduce(&me, &mx, 1, MPI_DOUBLE_INT, MPI_MAXLOC, sim->comm));
      d->timbalance = sw[0] > 0 ? (PetscReal)(mx.v / (sw[0] / sim->size)) : 1;
      d->tcount     = 0;
      d->twprev     = w;
      if (d->timbalance > d->threshold && mx.r == d->tslow && sw[1] > 0) { /* the same decision on every rank */
        d->tbal    = PETSC_TRUE;
        d->tweight = (PetscReal)(lw[1] / (sw[1] / sim->size)); /* work per particle over both windows / the mean */
        d->tslow   = -1;
        loc        = 1;
      } else d->tslow = d->timbalance > d->threshold ? mx.r : -1;
    }
  }
  if (!loc && moved >= 0) loc = moved ? 1 : 0; /* the caller's pass decided it (verlet) */
  else if (!loc) {
    const PetscReal *x0  = sim->nl.x0;
    const PetscReal  lim = 0.25 * sim->skin * sim->skin;
    if (!x0 || sim->nl.x0cap < 3 * bs->n) loc = 1;
    else
      for (PetscInt i = 0; i < bs->n; i++) {
        PetscReal d0 = bs->x[3 * i] - x0[3 * i], d1 = bs->x[3 * i + 1] - x0[3 * i + 1], d2 = bs->x[3 * i + 2] - x0[3 * i + 2];
        if (d0 * d0 + d1 * d1 + d2 * d2 > lim) { loc = 1; break; }
      }
  }
  if (sim->decomp->fused) { /* the decision in the forward exchange's round of messages: one synchronisation */
    glob = loc;
    PetscCall(DemDecompForward(sim, &glob));
  } else {
    PetscCallMPI(MPI_Allreduce(&loc, &glob, 1, MPI_INT, MPI_MAX, sim->comm));
    if (!glob) PetscCall(DemDecompForward(sim, NULL));
  }
  if (glob) PetscCall(DemDecompRebuild(sim, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompTrackRows_Private - the bodies of output.track on rank 0, DEM_TREC = 19 reals each
  (x, v, w, q, f, t) in the order of output.track (other ranks: NULL). Each body is owned by
  one rank; the others contribute -0.0, the exact identity of IEEE addition, so the sum is
  the owner's values bit for bit (signed zeros included). Collective.
*/
PetscErrorCode DemDecompTrackRows_Private(DemSim sim, const PetscReal **rows)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  const PetscInt     nt = sim->out.ntrack, R = DEM_TREC;
  PetscReal         *own = (PetscReal *)d->sbuf;

  PetscFunctionBegin;
  *rows = NULL;
  PetscCall(DemDecompEnsure((void **)&d->sbuf, &d->sbufcap, (size_t)R * nt + 1, sizeof(PetscReal)));
  own = (PetscReal *)d->sbuf;
  for (PetscInt k = 0; k < R * nt; k++) own[k] = -0.0;
  for (PetscInt k = 0; k < nt; k++) {
    PetscInt   i = DemDecompLocal(d, bs->n + bs->nghost, sim->out.track[k]);
    PetscReal *o = own + R * k;
    if (i < 0 || i >= bs->n) continue;
    for (int j = 0; j < 3; j++) o[j] = bs->x[3 * i + j], o[3 + j] = bs->v[3 * i + j], o[6 + j] = bs->w[3 * i + j];
    for (int j = 0; j < 4; j++) o[9 + j] = bs->q[4 * i + j];
    for (int j = 0; j < 3; j++) o[13 + j] = bs->f[3 * i + j], o[16 + j] = bs->t[3 * i + j];
  }
  PetscCallMPI(MPI_Reduce(own, d->trk, (PetscMPIInt)(R * nt), MPIU_REAL, MPIU_SUM, 0, sim->comm));
  if (sim->rank == 0) *rows = d->trk;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompReverseForces_Private - after a force evaluation: the ghosts' force, torque (and
  dissipative parts) added to their owners, contact energy, dissipation power, friction losses
  and contact counts summed over the ranks, wall reactions summed. Collective.
*/
PetscErrorCode DemDecompReverseForces_Private(DemSim sim, DemForceOut *out)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  const PetscInt     n = bs->n, R = out->fd ? 12 : 6, nw = sim->nwall;
  PetscMPIInt        nreq = 0;
  PetscReal         *red;

  PetscFunctionBegin;
  DEM_DECOMP_TICK(d, DEM_DT_KERNEL);
  if (d->timers) d->tsteps++, d->tpairs += (double)sim->nl.npairs;
  if (!d->red) PetscCall(PetscMalloc1(4 + 6 * nw, &d->red)); /* once: the implicit integrators call this every iteration */
  red = d->red;
  for (PetscInt k = 0; k < d->nrecv; k++) { /* ghosts -> rbuf, back to their owners */
    const PetscInt i = n + k;
    PetscReal     *o = d->rbuf + R * k;
    memcpy(o, out->f + 3 * i, 3 * sizeof(PetscReal));
    memcpy(o + 3, out->t + 3 * i, 3 * sizeof(PetscReal));
    if (R == 12) {
      memcpy(o + 6, out->fd + 3 * i, 3 * sizeof(PetscReal));
      memcpy(o + 9, out->td + 3 * i, 3 * sizeof(PetscReal));
    }
  }
  for (PetscMPIInt r = 0; r < sim->size; r++) {
    if (d->scnt[r]) PetscCallMPI(MPI_Irecv(d->sbuf + R * d->soff[r], (PetscMPIInt)R * d->scnt[r], MPIU_REAL, r, 72, sim->comm, &d->req[nreq++]));
    if (d->rcnt[r]) PetscCallMPI(MPI_Isend(d->rbuf + R * d->roff[r], (PetscMPIInt)R * d->rcnt[r], MPIU_REAL, r, 72, sim->comm, &d->req[nreq++]));
  }
  DEM_DECOMP_TICK(d, DEM_DT_REV_PACK);
  PetscCallMPI(MPI_Waitall(nreq, d->req, MPI_STATUSES_IGNORE));
  DEM_DECOMP_TICK(d, DEM_DT_REV_WAIT);
  if (R == 12) /* the two layouts in separate loops: no test per body (every step) */
    for (PetscInt k = 0; k < d->nsend; k++) {
      const PetscInt   i = d->sidx[k];
      const PetscReal *o = d->sbuf + 12 * k;
      PetscReal       *f = out->f + 3 * i, *t = out->t + 3 * i, *fd = out->fd + 3 * i, *td = out->td + 3 * i;
      for (int j = 0; j < 3; j++) f[j] += o[j], t[j] += o[3 + j], fd[j] += o[6 + j], td[j] += o[9 + j];
    }
  else
    for (PetscInt k = 0; k < d->nsend; k++) {
      const PetscInt   i = d->sidx[k];
      const PetscReal *o = d->sbuf + 6 * k;
      PetscReal       *f = out->f + 3 * i, *t = out->t + 3 * i;
      for (int j = 0; j < 3; j++) f[j] += o[j], t[j] += o[3 + j];
    }
  DEM_DECOMP_TICK(d, DEM_DT_REV_UNPACK);
  /* a verlet step that no output reads: contact energy, dissipation, friction losses, contact
     counts and wall reactions stay this rank's (verlet books its share of the dissipation and
     sums it at the next step that is read, DemDecompSumPowersPending_Private) */
  if (sim->defer_sums) PetscFunctionReturn(PETSC_SUCCESS);
  /* global sums */
  red[0] = out->pe_contact, red[1] = out->dissip_rate, red[2] = out->eslip, red[3] = (PetscReal)out->ncontacts;
  for (PetscInt w = 0; w < nw; w++) {
    PetscInt i = sim->walls[w].body;
    for (int j = 0; j < 3; j++) red[4 + 6 * w + j] = out->f[3 * i + j], red[7 + 6 * w + j] = out->t[3 * i + j];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, red, (PetscMPIInt)(4 + 6 * nw), MPIU_REAL, MPIU_SUM, sim->comm));
  out->pe_contact = red[0], out->dissip_rate = red[1], out->eslip = red[2], out->ncontacts = (PetscInt)(red[3] + 0.5);
  for (PetscInt w = 0; w < nw; w++) {
    PetscInt i = sim->walls[w].body;
    for (int j = 0; j < 3; j++) out->f[3 * i + j] = red[4 + 6 * w + j], out->t[3 * i + j] = red[7 + 6 * w + j];
  }
  DEM_DECOMP_TICK(d, DEM_DT_SUMS);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the default rank grid: the gravity axis (if any) uncut, larger factors on longer extents */
static PetscErrorCode DemDecompChooseGrid(DemSim sim, PetscInt grid[3])
{
  int       dims[3] = {0, 0, 0}, free[3], nf = 0, gax = -1;
  PetscReal gm = 0;

  PetscFunctionBegin;
  for (int k = 0; k < 3; k++)
    if (PetscAbsReal(sim->gravity[k]) > gm) gm = PetscAbsReal(sim->gravity[k]), gax = k;
  if (sim->dim == 2) dims[2] = 1;
  else if (gax >= 0) dims[gax] = 1;
  PetscCallMPI(MPI_Dims_create(sim->size, 3, dims));
  /* MPI_Dims_create orders free factors non-increasingly: give them to the longer extents */
  for (int k = 0; k < 3; k++)
    if (!(sim->dim == 2 && k == 2) && k != (sim->dim == 2 ? -1 : gax)) free[nf++] = k;
  {
    int f[3], nfac = 0;
    for (int k = 0; k < nf; k++) f[nfac++] = dims[free[k]];
    for (int a = 0; a < nf; a++) /* free dimensions by decreasing extent */
      for (int b = a + 1; b < nf; b++)
        if (sim->hi[free[b]] - sim->lo[free[b]] > sim->hi[free[a]] - sim->lo[free[a]]) {
          int t = free[a];
          free[a] = free[b], free[b] = t;
        }
    for (int a = 0; a < nfac; a++) /* factors decreasing */
      for (int b = a + 1; b < nfac; b++)
        if (f[b] > f[a]) {
          int t = f[a];
          f[a] = f[b], f[b] = t;
        }
    for (int k = 0; k < nf; k++) dims[free[k]] = f[k];
  }
  for (int k = 0; k < 3; k++) grid[k] = dims[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompDistribute_Private - called by DemSimSetUp once the initial configuration has been
  checked on every rank (all ranks hold all bodies): refuses what does not run on several ranks
  yet, chooses the grid, keeps each rank's own bodies, exchanges ghosts and builds the lists.
  Collective.
*/
PetscErrorCode DemDecompDistribute_Private(DemSim sim)
{
  struct _DemDecomp *d = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  PetscReal          rmax = 0;
  const char        *what = NULL;

  PetscFunctionBegin;
  if (!d || d->active) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(sim->integ->mpi, sim->comm, PETSC_ERR_SUP, "integrator %s does not run on more than one MPI rank yet (this run has %d); run it on one rank (MPI-capable: verlet, trapezoid, variational, cd, newmark)", sim->integ->type_name, (int)sim->size);
  if (sim->fields) what = "fields";
  PetscCheck(!what, sim->comm, PETSC_ERR_SUP, "%s: not supported on more than one MPI rank yet (this run has %d); run on one rank", what, (int)sim->size);
  /* spheres, superquadrics (their warm starts migrate: DemDecompRoute), polyhedra, plane and
     mesh walls (their feature slots' histories migrate: DemDecompRoute; a ghost polyhedron is
     its record: position, orientation, shape index, radius) only */
  for (PetscInt k = 0; k < sim->nshape; k++) {
    PetscBool mesh, poly;
    PetscCall(PetscStrcmp(DemShapeKindName(sim->shapes[k]->kind), "mesh", &mesh));
    PetscCall(PetscStrcmp(DemShapeKindName(sim->shapes[k]->kind), "polyhedron", &poly));
    PetscCheck(sim->shapes[k]->kind == DEM_KIND_SPHERE || sim->shapes[k]->kind == DEM_KIND_PLANE || mesh || poly || DemShapeSuperquadricWarmReals_Private(sim->shapes[k]) > 0, sim->comm, PETSC_ERR_SUP, "shape '%s' (%s): only spheres, superquadrics, polyhedra, plane and mesh walls run on more than one MPI rank yet (this run has %d); run on one rank", sim->shapes[k]->name, sim->shapes[k]->type_name ? sim->shapes[k]->type_name : "?", (int)sim->size);
  }
  /* --restart: every rank keeps every body (the serial layout of the checkpoint) until
     DemDecompRestored_Private, after the checkpoint is applied */
  if (sim->restart[0] && !d->restored) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < bs->n; i++)
    if (!(bs->flags[i] & DEM_WALL)) rmax = PetscMax(rmax, bs->radius[i]);
  d->cutoff = 2 * rmax + sim->skin;
  for (PetscInt k = 0; k < sim->nshape; k++) d->wrec = PetscMax(d->wrec, DemShapeSuperquadricWarmReals_Private(sim->shapes[k]));
  d->rec    = DEM_DREC;
  for (PetscInt e = 0; e < bs->nextra; e++) d->rec += bs->extra_ncomp[e];
  if (!d->grid_set) PetscCall(DemDecompChooseGrid(sim, d->grid));
  d->coord[0] = sim->rank % d->grid[0];
  d->coord[1] = (sim->rank / d->grid[0]) % d->grid[1];
  d->coord[2] = sim->rank / (d->grid[0] * d->grid[1]);
  for (int k = 0; k < 3; k++) {
    PetscReal L = sim->hi[k] - sim->lo[k];
    if (d->grid[k] > 1 && L / d->grid[k] < d->cutoff) {
      if (d->node) return DemNodeError(d->node, "%" PetscInt_FMT " ranks along %c make subdomains %g m wide, narrower than the ghost range 2 r_max + skin = %g m; use fewer ranks along %c (mpi.grid)", d->grid[k], "xyz"[k], (double)(L / d->grid[k]), (double)d->cutoff, "xyz"[k]);
      SETERRQ(sim->comm, PETSC_ERR_ARG_OUTOFRANGE, "%s: %" PetscInt_FMT " ranks along %c make subdomains %g m wide, narrower than the ghost range 2 r_max + skin = %g m; give mpi.grid with fewer ranks along %c", sim->file, d->grid[k], "xyz"[k], (double)(L / d->grid[k]), (double)d->cutoff, "xyz"[k]);
    }
    PetscCall(PetscMalloc1(d->grid[k] + 1, &d->cut[k]));
    for (PetscInt j = 0; j <= d->grid[k]; j++) d->cut[k][j] = sim->lo[k] + L * j / d->grid[k];
    d->cut[k][d->grid[k]] = sim->hi[k];
  }
  PetscCall(PetscMalloc4(sim->size, &d->scnt, sim->size, &d->soff, sim->size, &d->rcnt, sim->size, &d->roff));
  PetscCall(PetscMalloc4(sim->size, &d->tcnt, sim->size, &d->toff, sim->size, &d->ucnt, sim->size, &d->uoff));
  PetscCall(PetscMalloc1(4 * sim->size, &d->req));
  PetscCall(PetscMalloc1(2 * sim->size, &d->flg));
  PetscCall(PetscMalloc1(sim->nwall + 1, &d->wallgid));
  for (PetscInt w = 0; w < sim->nwall; w++) d->wallgid[w] = bs->gid[sim->walls[w].body];
  PetscCall(DemDecompReserve(sim, bs->n, 0));
  /* loads, bonds, track by global id (every rank holds every body here) */
  if (sim->nload) {
    PetscCall(PetscMalloc2(sim->nload, &d->loadgid, sim->nload, &d->loadn));
    for (PetscInt l = 0; l < sim->nload; l++) {
      d->loadn[l] = sim->loads[l].nids;
      PetscCall(PetscMalloc1(d->loadn[l] + 1, &d->loadgid[l]));
      for (PetscInt k = 0; k < d->loadn[l]; k++) d->loadgid[l][k] = (PetscInt)bs->gid[sim->loads[l].ids[k]];
    }
  }
  if (sim->bonds) {
    d->nbond = sim->bonds->n;
    PetscCall(PetscMalloc1(2 * d->nbond + 2, &d->bondgid));
    for (PetscInt k = 0; k < d->nbond; k++) d->bondgid[2 * k] = bs->gid[sim->bonds->a[k]], d->bondgid[2 * k + 1] = bs->gid[sim->bonds->b[k]];
  }
  if (sim->out.ntrack) PetscCall(PetscMalloc1(DEM_TREC * sim->out.ntrack, &d->trk));
  d->active = PETSC_TRUE;
  PetscCall(DemDecompRebuild(sim, PETSC_TRUE));
  if (getenv("MMDEM_DECOMP_VERBOSE")) {
    PetscInt loc = 0;
    for (PetscInt i = 0; i < bs->n; i++) loc += !(bs->flags[i] & DEM_WALL);
    PetscCall(PetscPrintf(sim->comm, "decomp: grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", ghost range %g m\n", d->grid[0], d->grid[1], d->grid[2], (double)d->cutoff));
    PetscCall(PetscSynchronizedPrintf(sim->comm, "decomp: rank %d owns %" PetscInt_FMT " particles, %" PetscInt_FMT " ghosts\n", (int)sim->rank, loc, bs->nghost));
    PetscCall(PetscSynchronizedFlush(sim->comm, PETSC_STDOUT));
  }
  d->tlast = 0; /* the phase timeline (MMDEM_MPI_TIMERS, balance_by time) starts at the first step */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompRestored_Private - --restart on several ranks: the checkpoint (the gathered state in
  serial layout, written on any number of ranks) has been applied on every rank, which holds
  every body and the checkpoint's neighbour list with its history; each rank now keeps its
  subdomain, with the history of its pairs (DemDecompRebuild with every body replicated).
  The continuation agrees with the uninterrupted run to round-off (the neighbour lists are
  rebuilt at the restart step). Collective.
*/
PetscErrorCode DemDecompRestored_Private(DemSim sim)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies;
  DemNeighbourList  *nl = &sim->nl;
  const PetscReal    skin = sim->skin;
  PetscReal          rmax = 0, *x0 = NULL;
  int64_t           *g0 = NULL;
  PetscInt           n0 = bs->n, grid[3];
  PetscBool          keep = (skin > 0 && nl->x0 && nl->x0cap >= 3 * bs->n) ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBegin;
  if (!d || d->active) PetscFunctionReturn(PETSC_SUCCESS);
  d->restored = PETSC_TRUE;
  /* The uninterrupted run rebuilds its list when a body has moved half the skin from x0, the
     positions of its last build (in the checkpoint); the distribution builds a list now. To
     keep the uninterrupted run's rebuild steps (what a rebuild does to contact state, e.g. the
     feature slots of mesh walls going through the map, happens at the same steps), the list is
     built with twice the skin (every pair that can touch before a body moves half the skin from
     x0: each moves at most a skin from here) and x0 is set back afterwards. Only when the
     subdomains are wide enough for the wider ghost range. */
  for (PetscInt i = 0; i < bs->n; i++)
    if (!(bs->flags[i] & DEM_WALL)) rmax = PetscMax(rmax, bs->radius[i]);
  if (d->grid_set) for (int k = 0; k < 3; k++) grid[k] = d->grid[k];
  else PetscCall(DemDecompChooseGrid(sim, grid));
  for (int k = 0; k < 3; k++)
    if (grid[k] > 1 && (sim->hi[k] - sim->lo[k]) / grid[k] < 2 * rmax + 2 * skin) keep = PETSC_FALSE;
  if (keep) { /* the store is in global-id order (the checkpoint's serial layout) */
    PetscCall(PetscMalloc2(n0 + 1, &g0, 3 * n0 + 1, &x0));
    PetscCall(PetscArraycpy(g0, bs->gid, n0));
    PetscCall(PetscArraycpy(x0, nl->x0, 3 * n0));
    for (PetscInt i = 1; i < n0; i++) PetscCheck(g0[i] > g0[i - 1], PETSC_COMM_SELF, PETSC_ERR_PLIB, "restart: bodies not in id order");
    sim->skin = 2 * skin;
    /* and of the pairs that twice the skin adds, those not in the checkpoint's list go: no
       body comes within reach of them before the next rebuild, and the superquadrics' solver
       would keep records for them (certificates, warm starts) that the uninterrupted run has
       not (the list is then the uninterrupted run's, split over the ranks) */
    PetscCall(PetscNew(&d->ckpairs));
    PetscCall(DemHistoryMapInit(d->ckpairs, 1));
    for (PetscInt k = 0; k < nl->npairs; k++) {
      const int64_t   ga = bs->gid[nl->a[k]], gb = bs->gid[nl->b[k]];
      const PetscReal one = 1;
      PetscCall(DemHistoryMapPut(d->ckpairs, PetscMin(ga, gb), PetscMax(ga, gb), 0, &one));
    }
  }
  PetscCall(DemDecompDistribute_Private(sim));
  if (d->ckpairs) {
    PetscCall(DemHistoryMapFree(d->ckpairs));
    PetscCall(PetscFree(d->ckpairs));
  }
  if (keep) {
    sim->skin = skin;
    d->cutoff -= skin; /* the ghost range of the next rebuilds */
    for (PetscInt i = 0; i < bs->n; i++) {
      int64_t *f = (int64_t *)bsearch(&bs->gid[i], g0, (size_t)n0, sizeof(int64_t), DemDecompI64Cmp);
      PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "restart: body %lld not in the checkpoint", (long long)bs->gid[i]);
      for (int k = 0; k < 3; k++) {
        PetscReal y = x0[3 * (f - g0) + k], L = sim->hi[k] - sim->lo[k];
        if (sim->periodic[k] && !(bs->flags[i] & DEM_WALL)) y += L * PetscFloorReal((bs->x[3 * i + k] - y) / L + 0.5); /* the image beside the (wrapped) position */
        nl->x0[3 * i + k] = y;
      }
    }
    PetscCall(PetscFree2(g0, x0));
  }
  d->tlast = 0; /* the phase timeline (MMDEM_MPI_TIMERS, balance_by time) starts at the first step */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every rank's owned particles (rank 0 adds the walls) in global-id order into `all` on rank 0
   (other ranks: an empty store); with fd, x0 also their dissipative forces and torques
   ([3n] each, fd then td) and the positions of the last neighbour build. Collective. */
static PetscErrorCode DemDecompGather(DemSim sim, DemBodyStore *all, PetscReal **fdtd, PetscReal **x0)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies, save;
  const PetscInt     rec = d->rec, R = rec + 3;
  PetscInt           nloc = 0, tot = 0;
  PetscMPIInt       *cnt = NULL, *off = NULL, mine;
  PetscReal         *sb, *rb = NULL, *fdsave = sim->fd, *tdsave = sim->td;
  PetscInt           fdcapsave = sim->fdcap;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < bs->n; i++) nloc += !(bs->flags[i] & DEM_WALL) || sim->rank == 0;
  PetscCall(PetscMalloc1(R * (nloc + 1), &sb));
  for (PetscInt i = 0, k = 0; i < bs->n; i++) {
    if ((bs->flags[i] & DEM_WALL) && sim->rank != 0) continue;
    DemDecompPack(sim, i, sb + R * k);
    for (int j = 0; j < 3; j++) sb[R * k + rec + j] = (sim->nl.x0 && sim->nl.x0cap >= 3 * bs->n) ? sim->nl.x0[3 * i + j] : bs->x[3 * i + j];
    k++;
  }
  mine = (PetscMPIInt)(R * nloc);
  if (sim->rank == 0) PetscCall(PetscMalloc2(sim->size, &cnt, sim->size, &off));
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, sim->comm));
  if (sim->rank == 0) {
    off[0] = 0;
    for (PetscMPIInt r = 1; r < sim->size; r++) off[r] = off[r - 1] + cnt[r - 1];
    tot = (off[sim->size - 1] + cnt[sim->size - 1]) / R;
    PetscCall(PetscMalloc1(R * (tot + 1), &rb));
  }
  PetscCallMPI(MPI_Gatherv(sb, mine, MPIU_REAL, rb, cnt, off, MPIU_REAL, 0, sim->comm));
  PetscCall(DemBodyStoreInit(all));
  for (PetscInt e = 0; e < bs->nextra; e++) PetscCall(DemBodyStoreRegisterField(all, bs->extra_name[e], bs->extra_ncomp[e], NULL));
  if (fdtd) *fdtd = NULL;
  if (x0) *x0 = NULL;
  if (sim->rank == 0) {
    DemGidIdx *ord;
    PetscCall(PetscMalloc1(tot + 1, &ord));
    for (PetscInt k = 0; k < tot; k++) ord[k].gid = DemDecompRecGid(rb + R * k), ord[k].k = k;
    if (tot > 1) qsort(ord, (size_t)tot, sizeof(DemGidIdx), DemGidIdxCmp);
    PetscCall(DemBodyStoreReserve(all, tot + 1));
    /* unpack through the simulation's store: point it at `all` for a moment */
    save = *bs;
    *bs  = *all;
    PetscCall(PetscCalloc1(6 * (tot + 1), &sim->fd));
    sim->td = sim->fd + 3 * tot;
    for (PetscInt k = 0; k < tot; k++) DemDecompUnpack(sim, k, rb + R * ord[k].k, 0);
    bs->n = tot;
    *all  = *bs;
    *bs   = save;
    if (fdtd) *fdtd = sim->fd;
    else PetscCall(PetscFree(sim->fd));
    sim->fd = fdsave, sim->td = tdsave, sim->fdcap = fdcapsave;
    if (x0) {
      PetscCall(PetscMalloc1(3 * (tot + 1), x0));
      for (PetscInt k = 0; k < tot; k++)
        for (int j = 0; j < 3; j++) (*x0)[3 * k + j] = rb[R * ord[k].k + rec + j];
    }
    PetscCall(PetscFree(ord));
    PetscCall(PetscFree2(cnt, off));
    PetscCall(PetscFree(rb));
  }
  PetscCall(PetscFree(sb));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompGatherBodies_Private - every rank's owned particles, then the walls, in global-id
  order, into `all` on rank 0 (other ranks: empty). Collective.
*/
PetscErrorCode DemDecompGatherBodies_Private(DemSim sim, DemBodyStore *all)
{
  PetscFunctionBegin;
  PetscCall(DemDecompGather(sim, all, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompSerialize_Private - a checkpoint of a decomposed run: the state gathered on rank 0
  in the layout of a serial run (bodies in id order, walls last; every rank's pairs with their
  history and periodic images, by global ids, grouped by shape kinds), serialized by
  checkpoint.c. A run on any number of ranks restarts from it on one rank. Other ranks leave
  b empty (only rank 0 writes). Collective.
*/
PetscErrorCode DemDecompSerialize_Private(DemSim sim, DemBuf *b)
{
  struct _DemDecomp *d  = sim->decomp;
  DemBodyStore      *bs = &sim->bodies, all, save;
  DemNeighbourList  *nl = &sim->nl, sh, nlsave;
  const PetscInt     hs = sim->histsize, P = 5 + hs;
  PetscReal         *fdtd = NULL, *x0 = NULL, *sp, *rp = NULL, *fdsave, *tdsave, *fr = NULL;
  PetscInt           fdcapsave, tot = 0, nft = 0, nmt = 0;
  PetscReal         *mr = NULL; /* the feature maps' entries (F reals each), on rank 0 */
  const PetscInt     F = 3 + hs; /* reals per feature slot */
  DemHistoryMap      pm;         /* (gid a, gid b) -> index of the pair in the gathered list */
  PetscMPIInt       *cnt = NULL, *off = NULL, mine;
  PetscInt          *sqn;  /* per shape: superquadric records gathered on rank 0 */
  PetscReal        **sqr;  /* their records (DEM_SQ_EXPORT_REALS each) */
  PetscInt64        *sqc;  /* their counters summed over the ranks */

  PetscFunctionBegin;
  PetscCall(DemDecompGather(sim, &all, &fdtd, &x0));
  /* pairs: gid a, gid b, image, kinds, history */
  PetscCall(PetscMalloc1(P * (nl->npairs + 1), &sp));
  for (PetscInt g = 0; g < nl->ngroups; g++)
    for (PetscInt k = nl->gstart[g]; k < nl->gstart[g + 1]; k++) {
      PetscReal *o = sp + P * k;
      memcpy(&o[0], &bs->gid[nl->a[k]], sizeof(int64_t));
      memcpy(&o[1], &bs->gid[nl->b[k]], sizeof(int64_t));
      o[2] = nl->shiftidx[k], o[3] = nl->gka[g], o[4] = nl->gkb[g];
      for (PetscInt j = 0; j < hs; j++) o[5 + j] = nl->history[hs * k + j];
    }
  mine = (PetscMPIInt)(P * nl->npairs);
  if (sim->rank == 0) PetscCall(PetscMalloc2(sim->size, &cnt, sim->size, &off));
  PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, sim->comm));
  if (sim->rank == 0) {
    off[0] = 0;
    for (PetscMPIInt r = 1; r < sim->size; r++) off[r] = off[r - 1] + cnt[r - 1];
    tot = (off[sim->size - 1] + cnt[sim->size - 1]) / P;
    PetscCall(PetscMalloc1(P * (tot + 1), &rp));
  }
  PetscCallMPI(MPI_Gatherv(sp, mine, MPIU_REAL, rp, cnt, off, MPIU_REAL, 0, sim->comm));
  PetscCall(PetscFree(sp));
  { /* the feature maps (featslot.c: values kept across the last build for the slots made on
       first touch): gid a, gid b, feature, history, on rank 0 */
    DemHistoryMap *fm = (hs > 0 && nl->fmap) ? (DemHistoryMap *)nl->fmap : NULL;
    PetscInt       e  = 0;
    PetscCall(PetscMalloc1(F * ((fm ? fm->count : 0) + 1), &sp));
    for (PetscInt i = 0; fm && i < fm->cap; i++) {
      PetscReal *o = sp + F * e;
      if (!fm->used[i]) continue;
      memcpy(&o[0], &fm->ka[i], sizeof(int64_t));
      memcpy(&o[1], &fm->kb[i], sizeof(int64_t));
      memcpy(&o[2], &fm->kf[i], sizeof(int64_t));
      for (PetscInt j = 0; j < hs; j++) o[3 + j] = fm->val[hs * i + j];
      e++;
    }
    mine = (PetscMPIInt)(F * e);
    PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, sim->comm));
    if (sim->rank == 0) {
      off[0] = 0;
      for (PetscMPIInt r = 1; r < sim->size; r++) off[r] = off[r - 1] + cnt[r - 1];
      nmt = (off[sim->size - 1] + cnt[sim->size - 1]) / F;
      PetscCall(PetscMalloc1(F * (nmt + 1), &mr));
    }
    PetscCallMPI(MPI_Gatherv(sp, mine, MPIU_REAL, mr, cnt, off, MPIU_REAL, 0, sim->comm));
    PetscCall(PetscFree(sp));
  }
  { /* feature slots (mesh walls, featslot.c): gid a, gid b, feature, history, on rank 0 */
    const PetscInt nfl = (hs > 0 && nl->fbuild == nl->nbuilds + 1) ? nl->nfeat : 0;
    PetscCall(PetscMalloc1(F * (nfl + 1), &sp));
    for (PetscInt k = 0; k < nfl; k++) {
      PetscReal *o = sp + F * k;
      memcpy(&o[0], &bs->gid[nl->a[nl->fpair[k]]], sizeof(int64_t));
      memcpy(&o[1], &bs->gid[nl->b[nl->fpair[k]]], sizeof(int64_t));
      memcpy(&o[2], &nl->fkey[k], sizeof(int64_t));
      for (PetscInt j = 0; j < hs; j++) o[3 + j] = nl->history[hs * (nl->npairs + k) + j];
    }
    mine = (PetscMPIInt)(F * nfl);
    PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, 0, sim->comm));
    if (sim->rank == 0) {
      off[0] = 0;
      for (PetscMPIInt r = 1; r < sim->size; r++) off[r] = off[r - 1] + cnt[r - 1];
      nft = (off[sim->size - 1] + cnt[sim->size - 1]) / F;
      PetscCall(PetscMalloc1(F * (nft + 1), &fr));
    }
    PetscCallMPI(MPI_Gatherv(sp, mine, MPIU_REAL, fr, cnt, off, MPIU_REAL, 0, sim->comm));
    PetscCall(PetscFree(sp));
  }
  if (sim->integ && sim->integ->ops->mpigather) PetscCall((*sim->integ->ops->mpigather)(sim->integ, sim, PETSC_TRUE)); /* the integrator's per-rank state onto rank 0 (cd.c) */
  /* the superquadric solver's state of every rank (superquadric.c): slot records and map
     entries by global ids, and the counters summed, on rank 0 */
  PetscCall(PetscCalloc3(sim->nshape + 1, &sqn, sim->nshape + 1, &sqr, DEM_SQ_COUNTERS * (sim->nshape + 1), &sqc));
  for (PetscInt k = 0; k < sim->nshape; k++) {
    const PetscInt W = DEM_SQ_EXPORT_REALS(sim->shapes[k]);
    PetscInt64     c[DEM_SQ_COUNTERS];
    PetscInt       ne;
    PetscMPIInt   *rc = NULL, *ro = NULL;
    if (!DemShapeSuperquadricWarmReals_Private(sim->shapes[k])) continue;
    PetscCall(DemShapeSuperquadricExport_Private(sim->shapes[k], sim, &ne, &sp, c));
    PetscCallMPI(MPI_Reduce(c, sqc + DEM_SQ_COUNTERS * k, DEM_SQ_COUNTERS, MPIU_INT64, MPI_SUM, 0, sim->comm));
    mine = (PetscMPIInt)(W * ne);
    if (sim->rank == 0) PetscCall(PetscMalloc2(sim->size, &rc, sim->size, &ro));
    PetscCallMPI(MPI_Gather(&mine, 1, MPI_INT, rc, 1, MPI_INT, 0, sim->comm));
    if (sim->rank == 0) {
      ro[0] = 0;
      for (PetscMPIInt r = 1; r < sim->size; r++) ro[r] = ro[r - 1] + rc[r - 1];
      sqn[k] = (ro[sim->size - 1] + rc[sim->size - 1]) / W;
      PetscCall(PetscMalloc1(W * (sqn[k] + 1), &sqr[k]));
    }
    PetscCallMPI(MPI_Gatherv(sp, mine, MPIU_REAL, sqr[k], rc, ro, MPIU_REAL, 0, sim->comm));
    PetscCall(PetscFree(sp));
    PetscCall(PetscFree2(rc, ro));
  }
  b->n = 0;
  if (sim->rank == 0) {
    PetscInt gcount[DEM_KIND_MAX * DEM_KIND_MAX + 1], *grp;
    PetscCall(PetscMemzero(&sh, sizeof(sh)));
    /* no shift vectors nor pair indices: the serializer makes the shifts it writes from the
       image indices (checkpoint.c) */
    PetscCall(PetscMalloc3(tot + 1, &sh.a, tot + 1, &sh.b, tot + 1, &sh.shiftidx));
    PetscCall(PetscMalloc2(PetscMax(hs, 1) * (tot + nft + 1), &sh.history, tot + 1, &grp));
    PetscCall(DemHistoryMapInit(&pm, 1));
    PetscCall(PetscArrayzero(gcount, DEM_KIND_MAX * DEM_KIND_MAX + 1));
    for (PetscInt k = 0; k < tot; k++) {
      grp[k] = (PetscInt)rp[P * k + 3] * DEM_KIND_MAX + (PetscInt)rp[P * k + 4];
      gcount[grp[k] + 1]++;
    }
    for (PetscInt g = 0; g < DEM_KIND_MAX * DEM_KIND_MAX; g++) gcount[g + 1] += gcount[g];
    for (PetscInt g = 0; g < DEM_KIND_MAX * DEM_KIND_MAX; g++) {
      if (gcount[g + 1] == gcount[g]) continue;
      sh.gka[sh.ngroups]    = (DemShapeKind)(g / DEM_KIND_MAX);
      sh.gkb[sh.ngroups]    = (DemShapeKind)(g % DEM_KIND_MAX);
      sh.gstart[sh.ngroups] = gcount[g];
      sh.ngroups++;
    }
    sh.gstart[sh.ngroups] = tot;
    for (PetscInt k = 0; k < tot; k++) {
      const PetscReal *o = rp + P * k;
      PetscInt         dst = gcount[grp[k]]++, s;
      int64_t          ga, gb;
      DemGidIdx        key, *fa, *fb;
      memcpy(&ga, &o[0], sizeof(ga));
      memcpy(&gb, &o[1], sizeof(gb));
      /* index in the gathered store: it is sorted by gid */
      key.gid = ga, key.k = 0;
      fa      = NULL, fb = NULL;
      {
        PetscInt lo = 0, hi = all.n - 1;
        while (lo <= hi) {
          PetscInt mid = (lo + hi) / 2;
          if (all.gid[mid] == ga) { sh.a[dst] = mid; fa = &key; break; }
          if (all.gid[mid] < ga) lo = mid + 1;
          else hi = mid - 1;
        }
        lo = 0, hi = all.n - 1;
        while (lo <= hi) {
          PetscInt mid = (lo + hi) / 2;
          if (all.gid[mid] == gb) { sh.b[dst] = mid; fb = &key; break; }
          if (all.gid[mid] < gb) lo = mid + 1;
          else hi = mid - 1;
        }
      }
      PetscCheck(fa && fb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "checkpoint: pair %lld-%lld refers to a body no rank owns", (long long)ga, (long long)gb);
      s                  = (PetscInt)o[2];
      sh.shiftidx[dst]   = s;
      for (PetscInt j = 0; j < hs; j++) sh.history[hs * dst + j] = o[5 + j];
      if (nft) {
        PetscReal pd = (PetscReal)dst;
        PetscCall(DemHistoryMapPut(&pm, ga, gb, 0, &pd));
      }
    }
    sh.npairs = sh.cap = tot;
    sh.histcap = tot + nft;
    sh.x0     = x0;
    sh.x0cap  = 3 * all.n;
    sh.nbuilds = nl->nbuilds;
    PetscCall(PetscMalloc2(nft + 1, &sh.fpair, nft + 1, &sh.fkey));
    for (PetscInt k = 0; k < nft; k++) { /* the feature slots beside their pairs */
      const PetscReal *o = fr + F * k, *pi;
      int64_t          ga, gb;
      memcpy(&ga, &o[0], sizeof(ga));
      memcpy(&gb, &o[1], sizeof(gb));
      pi = DemHistoryMapGet(&pm, ga, gb, 0);
      PetscCheck(pi, PETSC_COMM_SELF, PETSC_ERR_PLIB, "checkpoint: feature slot of pair %lld-%lld without its pair", (long long)ga, (long long)gb);
      sh.fpair[sh.nfeat] = (PetscInt)pi[0];
      memcpy(&sh.fkey[sh.nfeat], &o[2], sizeof(int64_t));
      for (PetscInt j = 0; j < hs; j++) sh.history[hs * (tot + sh.nfeat) + j] = o[3 + j];
      sh.nfeat++;
    }
    sh.featcap = nft;
    sh.fbuild  = sh.nbuilds + 1; /* the slots belong to this list */
    if (nmt) { /* and the feature map, so that a restart makes the same slots on first touch */
      DemHistoryMap *m;
      PetscCall(PetscNew(&m));
      PetscCall(DemHistoryMapInit(m, hs));
      for (PetscInt k = 0; k < nmt; k++) {
        int64_t g[3];
        memcpy(g, mr + F * k, 3 * sizeof(int64_t));
        PetscCall(DemHistoryMapPut(m, g[0], g[1], g[2], mr + F * k + 3));
      }
      sh.fmap = m;
    }
    /* serialize the serial-layout state */
    save = *bs, nlsave = *nl, fdsave = sim->fd, tdsave = sim->td, fdcapsave = sim->fdcap;
    *bs = all, *nl = sh, sim->fd = fdtd, sim->td = fdtd + 3 * all.n, sim->fdcap = 3 * all.n;
    d->active = PETSC_FALSE;
    PetscErrorCode ierr = PETSC_SUCCESS;
    for (PetscInt k = 0; k < sim->nshape && !ierr; k++)
      if (DemShapeSuperquadricWarmReals_Private(sim->shapes[k])) ierr = DemShapeSuperquadricGathered_Private(sim->shapes[k], sim, sqn[k], sqr[k], sqc + DEM_SQ_COUNTERS * k, PETSC_TRUE);
    if (!ierr) ierr = DemCheckpointSerialize_Private(sim, b);
    for (PetscInt k = 0; k < sim->nshape; k++) /* each shape its own state back, whatever failed */
      if (DemShapeSuperquadricWarmReals_Private(sim->shapes[k])) {
        PetscErrorCode e2 = DemShapeSuperquadricGathered_Private(sim->shapes[k], sim, 0, NULL, NULL, PETSC_FALSE);
        if (!ierr) ierr = e2;
      }
    d->active = PETSC_TRUE;
    *bs = save, *nl = nlsave, sim->fd = fdsave, sim->td = tdsave, sim->fdcap = fdcapsave;
    PetscCall(ierr);
    PetscCall(PetscFree3(sh.a, sh.b, sh.shiftidx));
    PetscCall(PetscFree2(sh.history, grp));
    PetscCall(PetscFree2(sh.fpair, sh.fkey));
    if (sh.fmap) {
      PetscCall(DemHistoryMapFree((DemHistoryMap *)sh.fmap));
      PetscCall(PetscFree(sh.fmap));
    }
    PetscCall(PetscFree(mr));
    PetscCall(DemHistoryMapFree(&pm));
    PetscCall(PetscFree(x0));
    PetscCall(PetscFree(fdtd));
    PetscCall(PetscFree2(cnt, off));
    PetscCall(PetscFree(rp));
    PetscCall(PetscFree(fr));
  }
  if (sim->integ && sim->integ->ops->mpigather) PetscCall((*sim->integ->ops->mpigather)(sim->integ, sim, PETSC_FALSE));
  for (PetscInt k = 0; k < sim->nshape; k++) PetscCall(PetscFree(sqr[k]));
  PetscCall(PetscFree3(sqn, sqr, sqc));
  PetscCall(DemBodyStoreFree(&all));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the same with the dissipation this rank booked at the steps whose sums it deferred (verlet:
   sim->defer_sums), summed too and cleared */
PetscErrorCode DemDecompSumPowersPending_Private(DemSim sim, PetscReal *p0, PetscReal *p1, PetscReal *pending)
{
  PetscReal p[3] = {*p0, *p1, *pending};

  PetscFunctionBegin;
  DEM_DECOMP_TICK(sim->decomp, DEM_DT_OTHER);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, p, 3, MPIU_REAL, MPIU_SUM, sim->comm));
  DEM_DECOMP_TICK(sim->decomp, DEM_DT_SUMS);
  *p0 = p[0], *p1 = p[1], *pending = p[2];
  PetscFunctionReturn(PETSC_SUCCESS);
}
/* the deferred dissipation of every rank into sim->dissipated (before a checkpoint written at a
   step whose sums were deferred: a signal). Collective. */
PetscErrorCode DemDecompFlushPending_Private(DemSim sim)
{
  PetscReal p = sim->dissip_pending;

  PetscFunctionBegin;
  if (!sim->decomp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &p, 1, MPIU_REAL, MPIU_SUM, sim->comm));
  sim->dissipated += p;
  sim->dissip_pending = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
PetscErrorCode DemDecompSumPowers_Private(DemSim sim, PetscReal *p0, PetscReal *p1)
{
  PetscReal p[2] = {*p0, *p1};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, p, 2, MPIU_REAL, MPIU_SUM, sim->comm));
  *p0 = p[0], *p1 = p[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompPairMap_Private - an integrator's map of per-pair values keyed by (gid a, gid b,
  feature) (cd's warm starts) that must stay with the rank evaluating its pair: from now on
  every rebuild takes its entries out, sends those whose pair's lower-id body migrates along
  with it (DemDecompRoute: point to point, like the contact history) and puts this rank's back.
  NULL: none. Not collective.
*/
PetscErrorCode DemDecompPairMap_Private(DemSim sim, DemHistoryMap *m)
{
  PetscFunctionBegin;
  if (sim->decomp) sim->decomp->pmap = m, sim->decomp->pever = (PetscBool)(sim->decomp->pever || m);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemDecompAgree_Private(DemSim sim, PetscBool failed, PetscBool *any, char msg[], size_t len)
{
  /* one reduction for both questions of the end of a step: the lowest failing rank (as
     size - rank under a maximum), and the signal caught on any rank, which the guard then
     uses at this step instead of a reduction of its own (guard.c) */
  PetscMPIInt mine[2] = {failed ? sim->size - sim->rank : 0, DemGuardSignalCaught_Private()}, red[2], first;

  PetscFunctionBegin;
  DEM_DECOMP_TICK(sim->decomp, DEM_DT_OTHER);
  PetscCallMPI(MPI_Allreduce(mine, red, 2, MPI_INT, MPI_MAX, sim->comm));
  DEM_DECOMP_TICK(sim->decomp, DEM_DT_AGREE);
  first = red[0] ? sim->size - red[0] : sim->size;
  PetscCall(DemGuardSignalAgreed_Private(sim, red[1]));
  *any = first < sim->size ? PETSC_TRUE : PETSC_FALSE;
  if (*any) PetscCallMPI(MPI_Bcast(msg, (PetscMPIInt)len, MPI_CHAR, first, sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemDecompFieldsChanged_Private - a per-body field registered after the distribution (an
  integrator's state that must travel with its body: newmark.c's accelerations): the body
  records of migration and ghosts carry every registered field from the next rebuild on.
*/
PetscErrorCode DemDecompFieldsChanged_Private(DemSim sim)
{
  struct _DemDecomp *d = sim->decomp;

  PetscFunctionBegin;
  if (!d || !d->active) PetscFunctionReturn(PETSC_SUCCESS); /* not yet distributed: set then */
  d->rec = DEM_DREC;
  for (PetscInt e = 0; e < sim->bodies.nextra; e++) d->rec += sim->bodies.extra_ncomp[e];
  PetscFunctionReturn(PETSC_SUCCESS);
}
