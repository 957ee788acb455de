/*
  guard.h - private to checkpoint.c and guard.c: the state of a running simulation's guards
  (sim->guard), created by DemGuardBegin_Private (or by a restart check) and freed by
  DemGuardEnd_Private.
*/
#pragma once
#include "demimpl.h"
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
  unsigned char *p;
  size_t         n, cap;
  PetscBool      count;  /* only count the bytes (n) and the sections' lengths: the sizing pass */
  FILE          *fp;     /* not NULL: write to this file instead of p (checkpoint.c: streaming) */
  uint32_t       crc;    /* streaming: running CRC-32 state of the payload */
  size_t        *lens;   /* the sections' lengths (counted; read back while streaming) */
  size_t         nlens, caplens, ilen;
  int            ioerr;  /* streaming: errno of the first failed write, else 0 */
} DemBuf;

typedef struct {
  /* signals: the handlers in place before the run */
  struct sigaction old_int, old_term;
  PetscBool        installed;
  /* the canonical run description (checkpoint.c), computed once: the model (without run:,
     output:, compare:, integrator:) and the integrator: section */
  DemBuf           conf, iconf;
  PetscBool        hasconf;
  PetscBool        newinteg; /* restart with other integrator settings than the checkpoint's */
  /* the checkpoint of the last good thermo step, streamed to DIR/.mmdem-last-good.ckpt
     (guard.c); on a failure it becomes DIR/checkpoints/step-<snapstep>.ckpt */
  PetscInt         snapstep;
  PetscBool        hassnap, started, snapwarned;
  /* what the output continues from on restart */
  DemRestartOutput ro;
  /* the time-step protocol */
  PetscReal        dt_config; /* dt after set-up, before a restart changed it */
  PetscBool        domain_given;
  /* the domain scan's margin: after a scan at list build dom_builds found every mobile body at
     least dom_margin inside the 3-radii limit, bodies that move under the list's rule (within
     half the skin of the build's positions) cannot pass the limit before the next build when
     dom_margin > skin, and the scan is skipped; dom_builds -1: no such scan */
  PetscInt         dom_builds;
  PetscReal        dom_margin;
  /* the signal agreed over the ranks at step sig_step (DemGuardSignalAgreed_Private) */
  PetscInt         sig_step;
  PetscMPIInt      sig_any;
  /* debugging aids for tests (environment): MMDEM_DEBUG_NAN_STEP, MMDEM_DEBUG_SIGNAL_STEP */
  PetscInt         debug_nan_step, debug_nan_body, debug_signal_step;
  PetscBool        debug_nan_force; /* MMDEM_DEBUG_NAN_WHAT=force: the NaN goes into the force */
  int              debug_signal;
} DemGuard;

PETSC_EXTERN PetscErrorCode DemGuardGet_Private(DemSim, DemGuard **);
PETSC_EXTERN PetscErrorCode DemBufPut_Private(DemBuf *, const void *, size_t);
PETSC_EXTERN PetscErrorCode DemBufFree_Private(DemBuf *);
/* serializes the current state into b (a complete checkpoint file) */
PETSC_EXTERN PetscErrorCode DemCheckpointSerialize_Private(DemSim, DemBuf *b);
/* the same for a run decomposed over several MPI ranks: gathered on rank 0 (decomp.c) */
PETSC_EXTERN PetscErrorCode DemDecompSerialize_Private(DemSim, DemBuf *b);
/* writes bytes to DIR/checkpoints/step-<step>.ckpt atomically (rank 0; collective) */
PETSC_EXTERN PetscErrorCode DemCheckpointStreamFile_Private(DemSim, const char path[], PetscBool sync, char err[], size_t errlen, PetscBool *ok);
PETSC_EXTERN PetscErrorCode DemCheckpointAdopt_Private(DemSim, const char src[], PetscInt step, char path[], size_t len);
