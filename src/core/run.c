/*
  run.c - the time loop: step the integrator, write output, show progress, and stop with a
  diagnosis when the state stops being finite (which body, which contact, which step).
  On a terminal a live progress line; in a pipe, plain thermo lines.
  Guards (guard.c): --restart, SIGINT/SIGTERM (checkpoint at the end of the step, then stop),
  output.checkpoint_every, bodies leaving the domain, the rejected-step protocol (dt_min),
  errors inside a step. A failed run writes the checkpoint of its last good thermo step,
  closes its output (whole files) and stops with a diagnosis.
*/
#include "demimpl.h"
#include <unistd.h>

static void DemFormatDuration(double s, char *buf, size_t len)
{
  if (!(s >= 0) || s > 3.6e6) snprintf(buf, len, "--");
  else if (s < 60) snprintf(buf, len, "%.0fs", s);
  else if (s < 3600) snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)s % 60);
  else snprintf(buf, len, "%dh%02dm", (int)(s / 3600), ((int)s % 3600) / 60);
}

/* first mobile body with a non-finite position or velocity, or -1 */
static PetscInt DemFindNonFinite(DemSim sim)
{
  const DemBodyStore *bs = &sim->bodies;
  const PetscInt      n  = bs->n;
  const PetscReal    *x = bs->x, *v = bs->v, *w = bs->w, *q = bs->q;
  PetscReal           s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  /* sums over everything: NaN and Inf propagate; search body by body only when one fails.
     Four sums, each one addition per body, so that the additions do not wait on each other
     (one chained sum over 13 values per body cost more than the rest of a verlet step's
     bookkeeping) */
  for (PetscInt i = 0; i < n; i++) {
    s0 += 0 * (x[3 * i] + v[3 * i] + w[3 * i]);
    s1 += 0 * (x[3 * i + 1] + v[3 * i + 1] + w[3 * i + 1]);
    s2 += 0 * (x[3 * i + 2] + v[3 * i + 2] + w[3 * i + 2]);
    s3 += 0 * ((q[4 * i] + q[4 * i + 1]) + (q[4 * i + 2] + q[4 * i + 3])); /* orientations too */
  }
  if (isfinite(s0 + s1 + s2 + s3)) return -1;
  for (PetscInt i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++)
      if (!isfinite(x[3 * i + d]) || !isfinite(v[3 * i + d]) || !isfinite(w[3 * i + d])) return i;
    for (int d = 0; d < 4; d++)
      if (!isfinite(q[4 * i + d])) return i;
  }
  return -1;
}

static PetscErrorCode DemDiagnose(DemSim sim, PetscInt i, char *msg, size_t len)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      worst = -1;
  char          cbuf[512] = "no contact on it";

  PetscFunctionBegin;
  { /* the contacts at the bad state (fused kernels leave no contact list behind) */
    DemState st = {bs->x, bs->v, bs->w, bs->q};
    PetscCall(DemContactsDetect(sim, &st));
  }
  for (PetscInt c = 0; c < sim->cl.n; c++)
    if ((sim->cl.a[c] == i || sim->cl.b[c] == i) && (worst < 0 || !(sim->cl.gap[c] >= sim->cl.gap[worst]))) worst = c;
  if (worst >= 0) {
    PetscInt a = sim->cl.a[worst], b = sim->cl.b[worst];
    PetscCall(PetscSNPrintf(cbuf, sizeof(cbuf), "deepest contact: bodies %" PetscInt_FMT "-%" PetscInt_FMT " gap %g m (%.3g radii)", (PetscInt)bs->gid[a], (PetscInt)bs->gid[b], (double)sim->cl.gap[worst], (double)(sim->cl.gap[worst] / PetscMax(bs->radius[a], 1e-300))));
  }
  PetscCall(PetscSNPrintf(msg, len, "the state is no longer finite at step %" PetscInt_FMT " (t = %g s): body %" PetscInt_FMT " x = [%g, %g, %g] v = [%g, %g, %g] w = [%g, %g, %g] q = [%g, %g, %g, %g] f = [%g, %g, %g] t = [%g, %g, %g]; %s. dt = %g s is %.3g of the shortest collision time; reduce dt or check stiffness and overlaps", sim->step, (double)sim->time, (PetscInt)bs->gid[i], (double)bs->x[3 * i], (double)bs->x[3 * i + 1], (double)bs->x[3 * i + 2], (double)bs->v[3 * i], (double)bs->v[3 * i + 1], (double)bs->v[3 * i + 2], (double)bs->w[3 * i], (double)bs->w[3 * i + 1], (double)bs->w[3 * i + 2], (double)bs->q[4 * i], (double)bs->q[4 * i + 1], (double)bs->q[4 * i + 2], (double)bs->q[4 * i + 3], (double)bs->f[3 * i], (double)bs->f[3 * i + 1], (double)bs->f[3 * i + 2], (double)bs->t[3 * i], (double)bs->t[3 * i + 1], (double)bs->t[3 * i + 2], cbuf, (double)sim->dt, (double)(sim->dt / sim->tc_min)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a failed run: the last good checkpoint, the output closed, the guards ended; msg stays the
   error message */
static PetscErrorCode DemRunFail(DemSim sim, char msg[], size_t len)
{
  PetscFunctionBegin;
  if (sim->rank == 0 && isatty(STDOUT_FILENO)) printf("\n");
  PetscCall(DemGuardFailure_Private(sim, msg, len));
  PetscCall(DemOutputClose_Private(sim));
  PetscCall(DemGuardEnd_Private(sim));
  DemSetLastError("%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemSimRun - runs to run.end_time or run.steps, writing the output of DESIGN.md. Collective.
*/
PetscErrorCode DemSimRun(DemSim sim)
{
  PetscBool      tty = (sim->rank == 0 && isatty(STDOUT_FILENO)) ? PETSC_TRUE : PETSC_FALSE;
  PetscLogDouble now, last = 0;
  PetscReal      t_end;
  PetscBool      stop = PETSC_FALSE;
  char           msg[2000]; /* PETSc keeps 2048 characters of an error message */

  PetscFunctionBegin;
  PetscCall(DemSimSetUp(sim));
  PetscCall(PetscTime(&sim->wall0));
  PetscCall(DemSimView(sim, stdout));
  PetscCall(DemGuardBegin_Private(sim)); /* signals; --restart: the checkpoint's state */
  PetscCall(DemOutputOpen_Private(sim));
  PetscCall(DemGuardAfterOutput_Private(sim, &stop, msg, sizeof(msg))); /* the start's snapshot */
  t_end = sim->end_time > 0 ? sim->end_time : PETSC_MAX_REAL;
  if (!tty && !sim->out.quiet) PetscCall(PetscPrintf(sim->comm, "%10s %12s %14s %14s %8s\n", "step", "time", "kinetic", "e_balance", "contacts"));
  while (!stop && ((sim->max_steps > 0 && sim->step < sim->max_steps) || (sim->max_steps <= 0 && sim->time < t_end - 1e-9 * sim->dt))) {
    DemStepInfo    info;
    PetscInt       bad;
    PetscBool      lost, scan;
    PetscErrorCode ierr;
    const PetscInt  s1   = sim->step + 1;
    const PetscBool final = (sim->max_steps > 0 ? s1 >= sim->max_steps : sim->time + sim->dt >= t_end - 1e-9 * sim->dt) ? PETSC_TRUE : PETSC_FALSE; /* the run's last step */
    /* a VTK frame with the contact network after this step needs the full contact list */
    sim->record_contacts = (sim->out.contacts && DemOutputVTKDue_Private(sim, sim->time + sim->dt, final)) ? PETSC_TRUE : PETSC_FALSE;
    /* is pe_contact read after this step? thermo rows (and the progress line) and the guard's
       snapshot at thermo steps, checkpoints, the last step; a checkpoint written on a signal
       holds the pe_contact of the last such step */
    sim->energy_idle = (s1 % sim->out.thermo_every && !(sim->checkpoint_every > 0 && s1 % sim->checkpoint_every == 0) && !final) ? PETSC_TRUE : PETSC_FALSE;
    sim->output_idle = (sim->energy_idle && !DemOutputVTKDue_Private(sim, sim->time + sim->dt, final)) ? PETSC_TRUE : PETSC_FALSE; /* nothing after the step reads energies, counts or wall reactions */
    ierr             = DemIntegratorStep(sim->integ, sim, sim->dt, &info);
    sim->energy_idle = sim->output_idle = PETSC_FALSE;
    if (ierr) { /* an error inside the step: its message, and the last good state saved */
      PetscCall(PetscStrncpy(msg, DemLastError()[0] ? DemLastError() : "error in an integrator step", sizeof(msg)));
      PetscCall(DemRunFail(sim, msg, sizeof(msg)));
      return ierr;
    }
    if (!info.accepted) { /* the integrator left the state as it was: retry with its smaller dt */
      PetscBool fail;
      PetscCall(DemGuardStepRejected_Private(sim, &info, &fail, msg, sizeof(msg)));
      if (fail) {
        PetscCall(DemRunFail(sim, msg, sizeof(msg)));
        SETERRQ(sim->comm, PETSC_ERR_NOT_CONVERGED, "%s", msg);
      }
      sim->dt = info.dt_next;
      sim->rejected++;
      continue;
    }
    if (info.dt_next > 0) sim->dt = info.dt_next;
    sim->step++;
    sim->iterations = info.iterations;
    PetscCall(DemGuardCheckState_Private(sim, info.bounded, &lost, msg, sizeof(msg))); /* left the domain */
    /* NaN or Inf: the integrator's own check on its passes over the bodies when it made one
       (verlet), unless the guard's debug option put a NaN in after the step */
    scan = (info.finite != 1 || DemGuardInjectsNaN_Private(sim)) ? PETSC_TRUE : PETSC_FALSE;
    if (scan) PetscCall(DemIntegratorSync_Private(sim)); /* the step's end (a deferred kick: verlet) for the search and diagnosis */
    bad = scan ? DemFindNonFinite(sim) : -1;
    if (bad >= 0) PetscCall(DemDiagnose(sim, bad, msg, sizeof(msg)));
    if (sim->decomp) PetscCall(DemDecompAgree_Private(sim, bad >= 0 || lost, &lost, msg, sizeof(msg))); /* MPI: any rank's failure stops all, with its message (decomp.c) */
    if (bad >= 0 || lost) {
      PetscCall(DemRunFail(sim, msg, sizeof(msg)));
      SETERRQ(sim->comm, PETSC_ERR_NOT_CONVERGED, "%s", msg);
    }
    PetscCall(DemOutputStep_Private(sim, PETSC_FALSE));
    if (!sim->out.quiet && sim->step % sim->out.thermo_every == 0) {
      PetscReal kt, kr, pg;
      PetscCall(DemSimEnergies_Private(sim, &kt, &kr, &pg));
      PetscCall(PetscTime(&now));
      if (tty) {
        if (now - last > 0.25) {
          double frac = sim->max_steps > 0 ? (double)sim->step / sim->max_steps : sim->time / t_end;
          char   eta[32];
          DemFormatDuration(frac > 0 ? (now - sim->wall0) * (1 - frac) / frac : -1, eta, sizeof(eta));
          printf("\rstep %" PetscInt_FMT "  t %.5g s  %5.1f%%  ETA %s  contacts %" PetscInt_FMT "  E %.6g J   ", sim->step, (double)sim->time, 100 * frac, eta, sim->ncontacts, (double)(kt + kr + pg + sim->pe_contact + sim->dissipated));
          fflush(stdout);
          last = now;
        }
      } else PetscCall(PetscPrintf(sim->comm, "%10" PetscInt_FMT " %12.6g %14.8g %14.8g %8" PetscInt_FMT "\n", sim->step, (double)sim->time, (double)(kt + kr), (double)(kt + kr + pg + sim->pe_contact + sim->dissipated), sim->ncontacts));
    }
    PetscCall(DemGuardAfterOutput_Private(sim, &stop, msg, sizeof(msg))); /* snapshot, checkpoints, signals */
  }
  if (tty) printf("\n");
  PetscCall(DemIntegratorSync_Private(sim)); /* none deferred past the last step; kept for safety */
  PetscCall(DemOutputClose_Private(sim));
  PetscCall(DemGuardEnd_Private(sim));
  if (stop) { /* interrupted: the checkpoint is written, the output closed */
    DemSetLastError("%s", msg);
    SETERRQ(sim->comm, PETSC_ERR_SIG, "%s", msg);
  }
  PetscCall(PetscTime(&now));
  PetscCall(PetscPrintf(sim->comm, "done: %" PetscInt_FMT " steps, t = %g s, %.2f s wall, output in %s\n", sim->step, (double)sim->time, (double)(now - sim->wall0), sim->out.dir));
  PetscFunctionReturn(PETSC_SUCCESS);
}
