/*
  guard.c - what stops a run cleanly instead of letting it crash, hang or run out of memory,
  and what makes it recoverable (issue "Reliability"; the time loop is run.c).

  Time-step protocol:
    - at set-up, an integrator that declares itself explicit (ig->stability ==
      DEM_INTEGRATOR_EXPLICIT) refuses a dt above the shortest collision time tc of the
      material pairs present; the message names dt, tc, the law and the pair. Implicit ones
      (DEM_INTEGRATOR_IMPLICIT) take any dt; an undeclared one gets a warning.
    - a step the integrator rejects (DemStepInfo accepted false, the state left as it was) is
      retried with its suggested dt_next when dt_min <= dt_next < dt; dt_min is ig->dt_min,
      or 1e-9 of the configured dt. Otherwise the integrator cannot go on: the run stops with
      a diagnosis naming the step, time, dt, dt_next, dt_min, iterations and residual.
  Failures: a state that is no longer finite (run.c's diagnosis), a body that left the domain,
  an integrator that cannot converge, or any error inside a step. A body has left the domain
  when, in a non-periodic direction of a domain given in the YAML, its centre is more than 3
  of its radii outside (LAMMPS stops on "lost atoms" at fixed boundaries likewise; without a
  domain: key nothing is checked, the bodies' box is only a hint for the search). The run then
  prints the diagnosis (step, time, body, its deepest contact, values), writes the checkpoint
  of the last good state, closes the output (a last thermo row and VTK frame, bodies_final.csv;
  every file is whole) and exits non-zero.
  Last good state: at every thermo step whose state passed the checks (and at the start), the
  checkpoint is streamed to DIR/.mmdem-last-good.ckpt (through a .tmp file renamed when whole;
  about 300 bytes per body plus 48 + 8 histsize bytes per neighbour pair, written once per
  thermo_every steps and never held in memory, which a copy of the state would double). The
  file goes when the run ends; on a failure it becomes DIR/checkpoints/step-<S>.ckpt (a
  rename), S the last good thermo step, whose thermo row and VTK frames
  are in the files; `mmdem run FILE --restart` it with other integrator settings (--set
  integrator.dt=...: integrator keys may change on restart, with a warning).
  Signals: SIGINT and SIGTERM set a flag; at the end of the current step the run writes its
  checkpoint DIR/checkpoints/step-<step>.ckpt, closes the output and stops with a message and
  exit status 128 + the signal. A second signal ends the process at once.
  Memory: DemGuardCheckMemory_Private.
  For tests (environment): MMDEM_DEBUG_NAN_STEP=N writes a NaN into the velocity of body
  MMDEM_DEBUG_NAN_BODY (an id; default the mobile body of the lowest id) after step N;
  MMDEM_DEBUG_SIGNAL_STEP=N raises MMDEM_DEBUG_SIGNAL (TERM [default] or INT) after step N.
*/
#include "guard.h"
#include <unistd.h>

static volatile sig_atomic_t dem_signal_caught = 0;
static int                   dem_signal_stopped = 0;

static void DemSignalHandler(int sig)
{
  if (dem_signal_caught) { /* a second signal: the user means it */
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  dem_signal_caught = sig;
}

int DemGuardSignal(void)
{
  return dem_signal_stopped;
}

PetscErrorCode DemGuardGet_Private(DemSim sim, DemGuard **g)
{
  PetscFunctionBegin;
  if (!sim->guard) {
    DemGuard *ng;
    PetscCall(PetscNew(&ng));
    ng->snapstep = -1;
    sim->guard   = ng;
  }
  *g = (DemGuard *)sim->guard;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscInt DemEnvInt(const char name[], PetscInt def)
{
  const char *s = getenv(name);
  char       *end;
  long        v;
  if (!s || !*s) return def;
  v = strtol(s, &end, 10);
  return *end ? def : (PetscInt)v;
}

/* the file of the last good state (DemGuardAfterOutput_Private) */
static void DemGuardSnapPath(DemSim sim, char *p, size_t n)
{
  snprintf(p, n, "%s/.mmdem-last-good.ckpt", sim->out.dir);
}

/* ---------------------------------------------------------------- time step */

/*
  DemGuardCheckTimeStep_Private - at set-up, after dt is chosen: dt above the shortest
  collision time is refused for explicit integrators (they are unstable from about 0.64 tc
  for a linear spring, 2 / omega), allowed for implicit ones, warned about otherwise.
*/
PetscErrorCode DemGuardCheckTimeStep_Private(DemSim sim)
{
  PetscReal tc, vchar = 0;
  PetscInt  ma, mb;
  DemNode   in = NULL, dn = NULL;
  char      what[512];

  PetscFunctionBegin;
  if (!sim->integ || sim->integ->stability == DEM_INTEGRATOR_IMPLICIT) PetscFunctionReturn(PETSC_SUCCESS);
  if (!(sim->tc_min < PETSC_MAX_REAL) || !(sim->dt > sim->tc_min)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemShortestCollision_Private(sim, &tc, &ma, &mb, &vchar));
  if (ma < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscSNPrintf(what, sizeof(what), "dt = %g s exceeds the shortest collision time tc = %g s (law %s between materials %s and %s, smallest bodies, impact speed %g m/s)", (double)sim->dt, (double)sim->tc_min, sim->laws[sim->pairlaw[ma * sim->nmat + mb]]->type_name, sim->mat[ma].name, sim->mat[mb].name, (double)vchar));
  if (sim->root) PetscCall(DemNodeGet(sim->root, "integrator", &in));
  if (in) PetscCall(DemNodeGet(in, "dt", &dn));
  if (sim->integ->stability == DEM_INTEGRATOR_EXPLICIT) {
    if (dn || in) return DemNodeError(dn ? dn : in, "%s: the explicit integrator %s is unstable above about 0.64 tc; use dt <= 0.1 tc (dt: auto takes dt_fraction [0.02] of tc) or an implicit integrator", what, sim->integ->type_name);
    SETERRQ(sim->comm, PETSC_ERR_USER_INPUT, "%s: the explicit integrator %s is unstable above about 0.64 tc", what, sim->integ->type_name);
  }
  PetscCall(PetscFPrintf(sim->comm, PETSC_STDERR, "mmdem: warning: %s; integrator %s does not declare whether it is explicit (explicit schemes are unstable there)\n", what, sim->integ->type_name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the rejected-step protocol (run.c): *fail when the integrator cannot go on */
PetscErrorCode DemGuardStepRejected_Private(DemSim sim, const DemStepInfo *info, PetscBool *fail, char msg[], size_t len)
{
  DemGuard *g;
  PetscReal dtmin;

  PetscFunctionBegin;
  PetscCall(DemGuardGet_Private(sim, &g));
  dtmin = sim->integ->dt_min > 0 ? sim->integ->dt_min : 1e-9 * (g->dt_config > 0 ? g->dt_config : sim->dt);
  *fail = (info->dt_next > 0 && info->dt_next < sim->dt && info->dt_next >= dtmin) ? PETSC_FALSE : PETSC_TRUE;
  if (!*fail) PetscFunctionReturn(PETSC_SUCCESS);
  if (info->dt_next > 0 && info->dt_next < dtmin)
    PetscCall(PetscSNPrintf(msg, len, "integrator %s cannot converge at step %" PetscInt_FMT " (t = %.10g s): the step with dt = %g s was rejected (%s, %" PetscInt_FMT " iterations, residual %g) and the dt it suggests next, %g s, is below dt_min = %g s%s. Check the configuration (stiffness, overlaps, loads), raise the integrator's iteration limit or tolerance, or lower dt_min", sim->integ->type_name, sim->step + 1, (double)sim->time, (double)sim->dt, info->converged ? "converged but not accepted" : "not converged", info->iterations, (double)info->residual, (double)info->dt_next, (double)dtmin, sim->integ->dt_min > 0 ? "" : " (1e-9 of the configured dt)"));
  else
    PetscCall(PetscSNPrintf(msg, len, "integrator %s rejected step %" PetscInt_FMT " (t = %.10g s, dt = %g s; %s, %" PetscInt_FMT " iterations, residual %g) without suggesting a smaller dt (dt_next = %g s)", sim->integ->type_name, sim->step + 1, (double)sim->time, (double)sim->dt, info->converged ? "converged" : "not converged", info->iterations, (double)info->residual, (double)info->dt_next));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- memory */

/* bytes, from "123", "1.5e9", "512M", "8G", "8GiB", "2T", or "80%" of the physical memory;
   < 0 when malformed */
static double DemParseBytes(const char *s, double phys)
{
  char  *end;
  double v;
  if (!s) return -1;
  v = strtod(s, &end);
  if (end == s || !(v >= 0) || !isfinite(v)) return -1;
  while (*end == ' ') end++;
  switch (*end) {
  case 0:
    return v;
  case '%':
    return end[1] ? -1 : v / 100 * phys;
  case 'k': case 'K': v *= 1024.0; break;
  case 'm': case 'M': v *= 1024.0 * 1024; break;
  case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
  case 't': case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
  default:
    return -1;
  }
  end++;
  if (!strcmp(end, "") || !strcmp(end, "B") || !strcmp(end, "iB")) return v;
  return -1;
}

static void DemFormatBytes(double b, char *buf, size_t len)
{
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int         k   = 0;
  while (b >= 1024 && k < 6) b /= 1024, k++;
  snprintf(buf, len, k ? "%.3g %s" : "%.0f %s", b, u[k]);
}

/*
  DemGuardCheckMemory_Private - refuses, before anything is allocated for them, `nbodies`
  bodies whose estimated memory exceeds the limit. Estimate per body: the store's columns and
  the body -> set map (exact, with the plugins' fields registered so far), the dissipative
  force columns, the neighbour list (build positions, cell links, 8 pairs per body with their
  history, image shift and build buffer), the contact columns of 4 contacts per body (what a
  dense packing reaches; the last good state is streamed to a file, not held); times the ranks
  of this node (every rank holds every body). Implicit integrators need more (Jacobian blocks).
  Limit: run.memory_limit, else MMDEM_MEMORY_LIMIT, else 80 % of the physical memory; bytes,
  with a suffix K, M, G, T (binary), or a percentage of the physical memory.
*/
PetscErrorCode DemGuardCheckMemory_Private(DemSim sim, DemNode at, double nbodies)
{
  const double hs = (double)PetscMax(sim->histsize, 0), pairs = 8, contacts = 4;
  double       phys, limit = -1, per, store, nlist, cont, need;
  long         pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGE_SIZE);
  const char  *src = "80 % of the physical memory", *env;
  DemNode      rn = NULL, kn = NULL;
  PetscMPIInt  nlocal = 1;
  char         b1[32], b2[32], b3[32];

  PetscFunctionBegin;
  phys = (pages > 0 && psize > 0) ? (double)pages * (double)psize : 16.0 * 1024 * 1024 * 1024;
  if (sim->root) PetscCall(DemNodeGet(sim->root, "run", &rn));
  if (rn && DemNodeGetType(rn) == DEM_NODE_MAP) PetscCall(DemNodeGet(rn, "memory_limit", &kn));
  if (kn) {
    limit = DemParseBytes(DemNodeScalar(kn), phys);
    DemNodeCheck(kn, limit > 0, "memory_limit must be a number of bytes, with an optional suffix K, M, G or T, or a percentage of the physical memory such as 50%% (got '%s')", DemNodeScalar(kn) ? DemNodeScalar(kn) : "(not a scalar)");
    src = "run.memory_limit";
  } else if ((env = getenv("MMDEM_MEMORY_LIMIT")) && *env) {
    limit = DemParseBytes(env, phys);
    PetscCheck(limit > 0, sim->comm, PETSC_ERR_USER_INPUT, "MMDEM_MEMORY_LIMIT must be a number of bytes, with an optional suffix K, M, G or T, or a percentage of the physical memory (got '%s')", env);
    src = "MMDEM_MEMORY_LIMIT";
  } else limit = 0.8 * phys;
  {
    MPI_Comm node;
    PetscCallMPI(MPI_Comm_split_type(sim->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_size(node, &nlocal));
    PetscCallMPI(MPI_Comm_free(&node));
  }
  store = sizeof(int64_t) + 28 * sizeof(PetscReal) + 2 * sizeof(int) + sizeof(unsigned) + sizeof(PetscInt) + 6 * sizeof(PetscReal);
  for (PetscInt k = 0; k < sim->bodies.nextra; k++) store += sim->bodies.extra_ncomp[k] * sizeof(PetscReal);
  nlist = 3 * sizeof(PetscReal) + 2 * sizeof(PetscInt) + pairs * (8 * sizeof(PetscInt) + (3 + hs) * sizeof(PetscReal) + 1);
  cont  = contacts * (5 * sizeof(PetscInt) + sizeof(int64_t) + 26 * sizeof(PetscReal) + sizeof(int));
  per   = store + nlist + cont;
  need  = nbodies * per * nlocal;
  if (need <= limit) PetscFunctionReturn(PETSC_SUCCESS);
  DemFormatBytes(need, b1, sizeof(b1));
  DemFormatBytes(per, b2, sizeof(b2));
  DemFormatBytes(limit, b3, sizeof(b3));
  {
    char ranks[64] = "";
    if (nlocal > 1) PetscCall(PetscSNPrintf(ranks, sizeof(ranks), " x %d ranks on this node", nlocal));
    return DemNodeError(at, "these bodies would need about %s of memory (%.4g bodies x %s per body%s: store %.0f B, neighbour list %.0f B at %g pairs per body, contacts %.0f B at %g per body), more than the limit of %s (%s); use fewer bodies or raise the limit with run.memory_limit or MMDEM_MEMORY_LIMIT", b1, nbodies, b2, ranks, store + 6 * sizeof(PetscReal), nlist, pairs, cont, contacts, b3, src);
  }
}

/* ---------------------------------------------------------------- the time loop */

PetscErrorCode DemGuardBegin_Private(DemSim sim)
{
  DemGuard        *g;
  struct sigaction sa;
  const char      *s;

  PetscFunctionBegin;
  PetscCall(DemGuardGet_Private(sim, &g));
  g->dt_config = sim->dt;
  if (sim->root) {
    DemNode dn;
    PetscCall(DemNodeGet(sim->root, "domain", &dn));
    g->domain_given = dn ? PETSC_TRUE : PETSC_FALSE;
  }
  g->dom_builds        = -1;
  g->sig_step          = -1;
  g->debug_nan_step    = DemEnvInt("MMDEM_DEBUG_NAN_STEP", -1);
  g->debug_nan_body    = DemEnvInt("MMDEM_DEBUG_NAN_BODY", -1);
  g->debug_nan_force   = getenv("MMDEM_DEBUG_NAN_WHAT") && !strcmp(getenv("MMDEM_DEBUG_NAN_WHAT"), "force") ? PETSC_TRUE : PETSC_FALSE;
  g->debug_signal_step = DemEnvInt("MMDEM_DEBUG_SIGNAL_STEP", -1);
  s                    = getenv("MMDEM_DEBUG_SIGNAL");
  g->debug_signal      = (s && !strcmp(s, "INT")) ? SIGINT : SIGTERM;
  dem_signal_caught    = 0;
  dem_signal_stopped   = 0;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = DemSignalHandler;
  sa.sa_flags   = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (!g->installed) {
    sigaction(SIGINT, &sa, &g->old_int);
    sigaction(SIGTERM, &sa, &g->old_term);
    g->installed = PETSC_TRUE;
  }
  PetscCall(DemCheckpointRestore_Private(sim));
  g->snapstep = -1;
  g->hassnap  = PETSC_FALSE;
  g->started  = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemGuardEnd_Private(DemSim sim)
{
  DemGuard *g = (DemGuard *)sim->guard;

  PetscFunctionBegin;
  if (!g) PetscFunctionReturn(PETSC_SUCCESS);
  if (g->installed) {
    sigaction(SIGINT, &g->old_int, NULL);
    sigaction(SIGTERM, &g->old_term, NULL);
  }
  PetscCall(DemBufFree_Private(&g->conf));
  PetscCall(DemBufFree_Private(&g->iconf));
  if (sim->rank == 0 && sim->out.dir[0]) { /* the last good state's file: gone with the run */
    char spath[PETSC_MAX_PATH_LEN + 32];
    DemGuardSnapPath(sim, spath, sizeof(spath));
    (void)unlink(spath);
  }
  PetscCall(PetscFree(g->ro.vtktime));
  PetscCall(PetscFree(sim->guard));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the deepest contact on body i at the current state, for messages (the run stops: the
   contact list may be overwritten) */
static PetscErrorCode DemDeepestContact(DemSim sim, PetscInt i, char *buf, size_t len)
{
  DemBodyStore *bs    = &sim->bodies;
  DemState      st    = {bs->x, bs->v, bs->w, bs->q};
  PetscInt      worst = -1;

  PetscFunctionBegin;
  snprintf(buf, len, "no contact on it");
  PetscCall(DemContactsDetect(sim, &st));
  for (PetscInt c = 0; c < sim->cl.n; c++)
    if ((sim->cl.a[c] == i || sim->cl.b[c] == i) && (worst < 0 || sim->cl.gap[c] < sim->cl.gap[worst])) worst = c;
  if (worst >= 0) {
    PetscInt a = sim->cl.a[worst], b = sim->cl.b[worst];
    snprintf(buf, len, "deepest contact: bodies %lld-%lld, gap %g m (%.3g radii)", (long long)bs->gid[a], (long long)bs->gid[b], (double)sim->cl.gap[worst], (double)(sim->cl.gap[worst] / PetscMax(bs->radius[i], 1e-300)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the signal caught on this rank (0: none), and the one agreed over the ranks at the end of
   this step by DemDecompAgree_Private, which DemGuardAfterOutput_Private then uses */
PetscMPIInt DemGuardSignalCaught_Private(void)
{
  return (PetscMPIInt)dem_signal_caught;
}
PetscErrorCode DemGuardSignalAgreed_Private(DemSim sim, PetscMPIInt any)
{
  DemGuard *g;

  PetscFunctionBegin;
  PetscCall(DemGuardGet_Private(sim, &g));
  g->sig_step = sim->step;
  g->sig_any  = any;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether the debugging option MMDEM_DEBUG_NAN_STEP may put a NaN into a velocity after a step
   (run.c then always scans for it; with MMDEM_DEBUG_NAN_WHAT=force it goes into a force, which
   the next step turns into a velocity, found by the integrator's own check where it has one) */
PetscBool DemGuardInjectsNaN_Private(DemSim sim)
{
  DemGuard *g = (DemGuard *)sim->guard;
  return g && g->debug_nan_step >= 0 && !g->debug_nan_force ? PETSC_TRUE : PETSC_FALSE;
}

/* after each accepted step's state: test injections, bodies that left the domain; bounded:
   the step kept every body within half the skin of its position at the last list build
   (DemStepInfo.bounded), so that a scan's margin can stand for the scans until the next build */
PetscErrorCode DemGuardCheckState_Private(DemSim sim, PetscBool bounded, PetscBool *bad, char msg[], size_t len)
{
  DemGuard     *g;
  DemBodyStore *bs = &sim->bodies;

  PetscFunctionBegin;
  *bad = PETSC_FALSE;
  PetscCall(DemGuardGet_Private(sim, &g));
  if (g->debug_signal_step >= 0 && sim->step == g->debug_signal_step) raise(g->debug_signal);
  if (g->debug_nan_step >= 0 && sim->step == g->debug_nan_step) {
    PetscInt j = -1; /* the body of that id, or the mobile body of the lowest id (the store may be reordered: sort.c) */
    for (PetscInt i = 0; i < bs->n; i++) {
      if (g->debug_nan_body >= 0 ? bs->gid[i] != g->debug_nan_body : bs->inv_m[i] == 0) continue;
      if (j < 0 || bs->gid[i] < bs->gid[j]) j = i;
    }
    if (j >= 0) {
      if (g->debug_nan_force) bs->f[3 * j] = NAN; /* the next step's kick makes it a velocity */
      else bs->v[3 * j] = NAN;
    }
  }
  if (!g->domain_given) PetscFunctionReturn(PETSC_SUCCESS);
  if (!bounded) g->dom_builds = -1;
  else if (g->dom_builds == sim->nl.nbuilds && g->dom_margin > sim->skin) PetscFunctionReturn(PETSC_SUCCESS); /* see guard.h */
  { /* a branch-free scan first (periodic directions never flag): out > 3 r with
       out = max(lo - x, x - hi), which is the test below for r >= 0; the loop below then
       finds the body and words the diagnosis. The smallest 3 r - out of the mobile bodies is
       the margin: a body is at most skin/2 from its position at the last build, so at most
       `skin` from where this scan saw it, until the next build */
    PetscReal       lo[3], hi[3], margin = PETSC_MAX_REAL;
    const PetscReal *x = bs->x, *r = bs->radius, *im = bs->inv_m;
    int             any = 0;
    for (int d = 0; d < 3; d++) {
      lo[d] = sim->periodic[d] ? -PETSC_INFINITY : sim->lo[d];
      hi[d] = sim->periodic[d] ? PETSC_INFINITY : sim->hi[d];
    }
    if (sim->periodic[0] || sim->periodic[1] || sim->periodic[2]) { /* the bounded directions only */
      for (int d = 0; d < 3; d++) {
        const PetscReal l = lo[d], u = hi[d];
        if (sim->periodic[d]) continue;
        for (PetscInt i = 0; i < bs->n; i++) {
          const PetscReal out = PetscMax(l - x[3 * i + d], x[3 * i + d] - u), m = im[i] != 0 ? 3 * r[i] - out : PETSC_MAX_REAL;
          any |= (im[i] != 0) & (out > 3 * r[i]);
          margin = m < margin ? m : margin;
        }
      }
    } else
      for (PetscInt i = 0; i < bs->n; i++) {
        const PetscReal r3 = 3 * r[i];
        const PetscReal o0 = PetscMax(lo[0] - x[3 * i], x[3 * i] - hi[0]);
        const PetscReal o1 = PetscMax(lo[1] - x[3 * i + 1], x[3 * i + 1] - hi[1]);
        const PetscReal o2 = PetscMax(lo[2] - x[3 * i + 2], x[3 * i + 2] - hi[2]);
        const PetscReal m  = im[i] != 0 ? r3 - PetscMax(PetscMax(o0, o1), o2) : PETSC_MAX_REAL;
        any |= (im[i] != 0) & ((o0 > r3) | (o1 > r3) | (o2 > r3));
        margin = m < margin ? m : margin;
      }
    if (!any) {
      if (bounded) g->dom_builds = sim->nl.nbuilds, g->dom_margin = margin;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(DemIntegratorSync_Private(sim)); /* the diagnosis reads v and f of the step's end */
  for (PetscInt i = 0; i < bs->n; i++) {
    const PetscReal *x = bs->x + 3 * i, r = bs->radius[i];
    if (bs->inv_m[i] == 0) continue;
    for (int d = 0; d < 3; d++) {
      PetscReal out;
      char      cbuf[256];
      if (sim->periodic[d]) continue;
      out = x[d] < sim->lo[d] ? sim->lo[d] - x[d] : x[d] - sim->hi[d];
      if (!(out > 3 * r)) continue;
      {
        const PetscReal *v = bs->v + 3 * i;
        PetscReal        sp = PetscSqrtReal(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        PetscCall(DemDeepestContact(sim, i, cbuf, sizeof(cbuf)));
        PetscCall(PetscSNPrintf(msg, len, "body %lld left the domain at step %" PetscInt_FMT " (t = %.10g s): x = [%g, %g, %g] is %.3g radii beyond %s %c = %g m (the domain is not periodic in %c), v = [%g, %g, %g] (|v| dt = %.3g radii per step), f = [%g, %g, %g]; %s. dt = %g s is %.3g of the shortest collision time: a body moving that fast passes through walls, or a deep overlap ejected it; reduce dt, or enlarge the domain if bodies may leave it", (long long)bs->gid[i], sim->step, (double)sim->time, (double)x[0], (double)x[1], (double)x[2], (double)(out / PetscMax(r, 1e-300)), x[d] < sim->lo[d] ? "lo" : "hi", "xyz"[d], (double)(x[d] < sim->lo[d] ? sim->lo[d] : sim->hi[d]), "xyz"[d], (double)v[0], (double)v[1], (double)v[2], (double)(sp * sim->dt / PetscMax(r, 1e-300)), (double)bs->f[3 * i], (double)bs->f[3 * i + 1], (double)bs->f[3 * i + 2], cbuf, (double)sim->dt, (double)(sim->dt / sim->tc_min)));
      }
      *bad = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemGuardAfterOutput_Private - after a good step's output (and once after the output is
  opened): the last good state at thermo steps, output.checkpoint_every, and signals.
*/
PetscErrorCode DemGuardAfterOutput_Private(DemSim sim, PetscBool *stop, char msg[], size_t len)
{
  DemGuard   *g;
  PetscMPIInt sig = (PetscMPIInt)dem_signal_caught, any;
  char        path[PETSC_MAX_PATH_LEN];
  PetscBool   start, ckpt;

  PetscFunctionBegin;
  *stop = PETSC_FALSE;
  PetscCall(DemGuardGet_Private(sim, &g));
  start      = g->started ? PETSC_FALSE : PETSC_TRUE;
  g->started = PETSC_TRUE;
  if (start || sim->step % sim->out.thermo_every == 0) {
    /* the last good state, streamed to a file (not kept in memory: it is as large as the
       state itself, ~0.65 kB per body of a packed bed); a failure to write it is a warning,
       once, and the run goes on without it */
    char      spath[PETSC_MAX_PATH_LEN + 32], err[2 * PETSC_MAX_PATH_LEN + 256];
    PetscBool ok;
    DemGuardSnapPath(sim, spath, sizeof(spath));
    PetscCall(DemCheckpointStreamFile_Private(sim, spath, PETSC_FALSE, err, sizeof(err), &ok));
    g->hassnap  = ok;
    g->snapstep = ok ? sim->step : -1;
    if (!ok && !g->snapwarned) {
      PetscCall(PetscFPrintf(sim->comm, stderr, "mmdem: warning: the last good state could not be saved (%s); the run goes on, but a failure will leave no checkpoint to continue from\n", err));
      g->snapwarned = PETSC_TRUE;
    }
  }
  ckpt = (!start && sim->checkpoint_every > 0 && sim->step % sim->checkpoint_every == 0) ? PETSC_TRUE : PETSC_FALSE;
  if (ckpt) PetscCall(DemCheckpointWrite_Private(sim, path, sizeof(path)));
  any = sig;
  if (sim->size > 1 && g->sig_step == sim->step) any = g->sig_any; /* agreed with the step's failure test (decomp.c) */
  else if (sim->size > 1) PetscCallMPI(MPI_Allreduce(&sig, &any, 1, MPI_INT, MPI_MAX, sim->comm));
  if (!any) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemIntegratorSync_Private(sim)); /* the step's end (a deferred kick: verlet) */
  if (!ckpt) {
    PetscCall(DemDecompFlushPending_Private(sim)); /* MPI: the dissipation of deferred steps (verlet) */
    PetscCall(DemCheckpointWrite_Private(sim, path, sizeof(path)));
  } /* else written just above */
  dem_signal_stopped = any;
  *stop              = PETSC_TRUE;
  PetscCall(PetscSNPrintf(msg, len, "interrupted by %s at step %" PetscInt_FMT " (t = %.10g s): checkpoint written to %s; continue with: mmdem run %s --restart %s", any == SIGINT ? "SIGINT" : any == SIGTERM ? "SIGTERM" : "a signal", sim->step, (double)sim->time, path, sim->file, path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemGuardFailure_Private - writes the snapshot of the last good thermo step as its
  checkpoint and appends where it is to msg. Never raises: a failure to write is reported in
  msg, so that the diagnosis survives. Collective.
*/
PetscErrorCode DemGuardFailure_Private(DemSim sim, char msg[], size_t len)
{
  DemGuard      *g = (DemGuard *)sim->guard;
  char           path[PETSC_MAX_PATH_LEN], save[4096];
  size_t         l = strlen(msg);
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (!g || !g->hassnap || g->snapstep < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrncpy(save, DemLastError(), sizeof(save)));
  {
    char spath[PETSC_MAX_PATH_LEN + 32];
    DemGuardSnapPath(sim, spath, sizeof(spath));
    ierr = DemCheckpointAdopt_Private(sim, spath, g->snapstep, path, sizeof(path));
  }
  if (ierr) snprintf(msg + l, len - l, " (the last good state, step %" PetscInt_FMT ", could not be saved: %s)", g->snapstep, DemLastError());
  else snprintf(msg + l, len - l, ". The last good state, step %" PetscInt_FMT ", is in %s: continue from it with mmdem run %s --restart %s (integrator settings may change, e.g. --set integrator.dt=...)", g->snapstep, path, sim->file, path);
  DemSetLastError("%s", save);
  PetscFunctionReturn(PETSC_SUCCESS);
}
