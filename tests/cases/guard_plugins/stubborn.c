/*
  stubborn.c - test plugin for tests/cases/failure.sh: integrator `stubborn`, a semi-implicit
  Euler step (kick with the forces of the current state, drift, forces at the new state) that
  misbehaves on request, to exercise the time loop's protocol (src/core/guard.c, run.c):

    reject_from N   from step N on, reject every step (state untouched) and suggest dt / 2
                    (`no_smaller: true`: suggest nothing)
    error_at N      raise an error inside step N, after moving the bodies half way
    dt_min          the smallest dt it may suggest (ig->dt_min)
    wobble          keep private state between steps: an accepted-step counter that sets the
                    next dt to dt0 (1 + wobble ((count mod 3) - 1)); restarted runs equal
                    uninterrupted ones only through the checkpoint method
    checkpoint      provide the checkpoint method [true]

  Built by failure.sh with plugins/Makefile; loaded with --plugin.
*/
#include <demimpl.h>
#include <dem_plugin.h>

static const DemHostAPI *api;

typedef struct {
  PetscInt  reject_from, error_at, count;
  PetscBool no_smaller, ckpt;
  PetscReal wobble, dt0;
} Stubborn;

static PetscErrorCode StubbornSetFromConfig(DemIntegrator ig, DemNode cfg)
{
  Stubborn         *s     = (Stubborn *)ig->data;
  const char *const own[] = {"reject_from", "error_at", "no_smaller", "dt_min", "wobble", "checkpoint", NULL};

  PetscFunctionBegin;
  PetscCall(api->integrator_allow_keys(cfg, own));
  PetscCall(api->node_get_int(cfg, "reject_from", PETSC_FALSE, &s->reject_from));
  PetscCall(api->node_get_int(cfg, "error_at", PETSC_FALSE, &s->error_at));
  PetscCall(api->node_get_bool(cfg, "no_smaller", PETSC_FALSE, &s->no_smaller));
  PetscCall(api->node_get_real(cfg, "dt_min", PETSC_FALSE, &ig->dt_min));
  PetscCall(api->node_get_real(cfg, "wobble", PETSC_FALSE, &s->wobble));
  PetscCall(api->node_get_bool(cfg, "checkpoint", PETSC_FALSE, &s->ckpt));
  if (!s->ckpt) ig->ops->checkpoint = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode StubbornStep(DemIntegrator ig, DemSim sim, PetscReal dt, DemStepInfo *info)
{
  Stubborn     *s = (Stubborn *)ig->data;
  DemBodyStore *bs;
  DemForceOut   fo;
  DemState      st;
  PetscReal     t;
  PetscInt      step;

  PetscFunctionBegin;
  PetscCall(api->sim_get_bodies(sim, &bs));
  PetscCall(api->sim_get_time(sim, &t, &step));
  if (s->dt0 == 0) s->dt0 = dt;
  if (s->reject_from >= 0 && step + 1 >= s->reject_from) {
    info->accepted   = PETSC_FALSE;
    info->converged  = PETSC_FALSE;
    info->iterations = 7;
    info->residual   = 0.25;
    info->dt_next    = s->no_smaller ? 0 : 0.5 * dt;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscInt i = 0; i < bs->n; i++) {
    const PetscReal hm = dt * bs->inv_m[i];
    for (int d = 0; d < 3; d++) bs->v[3 * i + d] += hm * bs->f[3 * i + d];
  }
  for (PetscInt i = 0; i < bs->n; i++) {
    if (bs->inv_m[i] == 0 && !(bs->flags[i] & DEM_PRESCRIBED)) continue;
    for (int d = 0; d < 3; d++) bs->x[3 * i + d] += (step + 1 == s->error_at ? 0.5 : 1.0) * dt * bs->v[3 * i + d];
  }
  PetscCheck(step + 1 != s->error_at, PETSC_COMM_SELF, PETSC_ERR_LIB, "stubborn: a failure inside step %" PetscInt_FMT " (error_at)", step + 1);
  PetscCall(api->sim_advance_time(sim, dt));
  PetscCall(api->sim_update_neighbours(sim, NULL, PETSC_FALSE));
  st = (DemState){bs->x, bs->v, bs->w, bs->q};
  PetscCall(PetscMemzero(&fo, sizeof(fo)));
  fo.f = bs->f;
  fo.t = bs->t;
  PetscCall(api->forces_compute(sim, &st, PETSC_FALSE, PETSC_TRUE, &fo));
  PetscCall(api->sim_record_step(sim, dt, &fo));
  info->iterations = 1;
  if (s->wobble > 0) {
    s->count++;
    info->dt_next = s->dt0 * (1 + s->wobble * ((s->count % 3) - 1));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode StubbornCheckpoint(DemIntegrator ig, FILE *fp, PetscBool write)
{
  Stubborn *s       = (Stubborn *)ig->data;
  int32_t   version = 1;

  PetscFunctionBegin;
  PetscCheck((write ? fwrite(&version, sizeof(version), 1, fp) : fread(&version, sizeof(version), 1, fp)) == 1 && version == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "stubborn: checkpoint version");
  PetscCheck((write ? fwrite(&s->count, sizeof(s->count), 1, fp) : fread(&s->count, sizeof(s->count), 1, fp)) == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "stubborn: checkpoint count");
  PetscCheck((write ? fwrite(&s->dt0, sizeof(s->dt0), 1, fp) : fread(&s->dt0, sizeof(s->dt0), 1, fp)) == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "stubborn: checkpoint dt0");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode StubbornDestroy(DemIntegrator ig)
{
  PetscFunctionBegin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode StubbornCreate(DemIntegrator ig)
{
  Stubborn *s;

  PetscFunctionBegin;
  PetscCall(PetscNew(&s));
  s->reject_from         = -1;
  s->error_at            = -1;
  s->ckpt                = PETSC_TRUE;
  ig->data               = s;
  ig->ops->setfromconfig = StubbornSetFromConfig;
  ig->ops->step          = StubbornStep;
  ig->ops->destroy       = StubbornDestroy;
  ig->ops->checkpoint    = StubbornCheckpoint;
  ig->stability          = DEM_INTEGRATOR_EXPLICIT;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_PLUGIN_DEFINE("stubborn", "1.0", "test integrator stubborn: semi-implicit Euler that rejects or fails on request");

PetscErrorCode dem_plugin_init(const DemHostAPI *host, DemPlugin self)
{
  PetscFunctionBegin;
  PetscCheck(host->abi_major == DEM_PLUGIN_ABI_MAJOR, PETSC_COMM_SELF, PETSC_ERR_LIB, "stubborn: host plugin ABI %u, built for %d", (unsigned)host->abi_major, DEM_PLUGIN_ABI_MAJOR);
  api = host;
  PetscCall(api->register_integrator(self, "stubborn", StubbornCreate));
  PetscFunctionReturn(PETSC_SUCCESS);
}
