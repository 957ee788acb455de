/*
  run.c - the time loop: step the integrator, write output, show progress, and stop with a
  diagnosis when the state stops being finite (which body, which contact, which step).
  On a terminal a live progress line; in a pipe, plain thermo lines.
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
  const PetscReal    *x = bs->x, *v = bs->v, *w = bs->w;
  PetscReal           s  = 0;
  /* one sum over everything: NaN and Inf propagate; search body by body only when it fails */
  for (PetscInt k = 0; k < 3 * n; k++) s += 0 * (x[k] + v[k] + w[k]);
  if (isfinite(s)) return -1;
  for (PetscInt i = 0; i < n; i++)
    for (int d = 0; d < 3; d++)
      if (!isfinite(x[3 * i + d]) || !isfinite(v[3 * i + d]) || !isfinite(w[3 * i + d])) return i;
  return -1;
}

static PetscErrorCode DemDiagnose(DemSim sim, PetscInt i, char *msg, size_t len)
{
  DemBodyStore *bs = &sim->bodies;
  PetscInt      worst = -1;
  char          cbuf[512] = "no contact on it";

  PetscFunctionBegin;
  for (PetscInt c = 0; c < sim->cl.n; c++)
    if ((sim->cl.a[c] == i || sim->cl.b[c] == i) && (worst < 0 || !(sim->cl.gap[c] >= sim->cl.gap[worst]))) worst = c;
  if (worst >= 0) {
    PetscInt a = sim->cl.a[worst], b = sim->cl.b[worst];
    PetscCall(PetscSNPrintf(cbuf, sizeof(cbuf), "deepest contact: bodies %" PetscInt_FMT "-%" PetscInt_FMT " gap %g m (%.3g radii), normal force %g N", (PetscInt)bs->gid[a], (PetscInt)bs->gid[b], (double)sim->cl.gap[worst], (double)(sim->cl.gap[worst] / PetscMax(bs->radius[a], 1e-300)), (double)sim->cf.fn[worst]));
  }
  PetscCall(PetscSNPrintf(msg, len, "the state is no longer finite at step %" PetscInt_FMT " (t = %g s): body %" PetscInt_FMT " x = [%g, %g, %g] v = [%g, %g, %g] f = [%g, %g, %g]; %s. dt = %g s is %.3g of the shortest collision time; reduce dt or check stiffness and overlaps", sim->step, (double)sim->time, (PetscInt)bs->gid[i], (double)bs->x[3 * i], (double)bs->x[3 * i + 1], (double)bs->x[3 * i + 2], (double)bs->v[3 * i], (double)bs->v[3 * i + 1], (double)bs->v[3 * i + 2], (double)bs->f[3 * i], (double)bs->f[3 * i + 1], (double)bs->f[3 * i + 2], cbuf, (double)sim->dt, (double)(sim->dt / sim->tc_min)));
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

  PetscFunctionBegin;
  PetscCall(DemSimSetUp(sim));
  PetscCall(PetscTime(&sim->wall0));
  PetscCall(DemSimView(sim, stdout));
  PetscCall(DemOutputOpen_Private(sim));
  t_end = sim->end_time > 0 ? sim->end_time : PETSC_MAX_REAL;
  if (!tty && !sim->out.quiet) PetscCall(PetscPrintf(sim->comm, "%10s %12s %14s %14s %8s\n", "step", "time", "kinetic", "e_balance", "contacts"));
  while ((sim->max_steps > 0 && sim->step < sim->max_steps) || (sim->max_steps <= 0 && sim->time < t_end - 1e-9 * sim->dt)) {
    DemStepInfo info;
    PetscInt    bad;
    PetscCall(DemIntegratorStep(sim->integ, sim, sim->dt, &info));
    if (!info.accepted) { /* the integrator left the state as it was: retry with its smaller dt */
      PetscCheck(info.dt_next > 0 && info.dt_next < sim->dt, sim->comm, PETSC_ERR_NOT_CONVERGED, "integrator %s rejected the step at t = %g s without suggesting a smaller dt (dt_next = %g s)", sim->integ->type_name, (double)sim->time, (double)info.dt_next);
      sim->dt = info.dt_next;
      continue;
    }
    if (info.dt_next > 0) sim->dt = info.dt_next;
    sim->step++;
    sim->iterations = info.iterations;
    bad             = DemFindNonFinite(sim);
    if (bad >= 0) {
      char msg[2048];
      PetscCall(DemDiagnose(sim, bad, msg, sizeof(msg)));
      DemSetLastError("%s", msg);
      PetscCall(DemOutputClose_Private(sim));
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
  }
  if (tty) printf("\n");
  PetscCall(DemOutputClose_Private(sim));
  PetscCall(PetscTime(&now));
  PetscCall(PetscPrintf(sim->comm, "done: %" PetscInt_FMT " steps, t = %g s, %.2f s wall, output in %s\n", sim->step, (double)sim->time, (double)(now - sim->wall0), sim->out.dir));
  PetscFunctionReturn(PETSC_SUCCESS);
}
