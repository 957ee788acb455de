/*
  hooke_fused.c - the fused kernels of law `hooke` for sphere/sphere and sphere/plane candidate
  pairs: narrow phase, law and force assembly in one pass over the pair list, with the pair's
  history beside it (no contact columns in between). Same model as the generic pipeline
  (sphere.h, plane.c geometry; hooke.h law, friction.h spring), so the two give the same
  forces to rounding; the generic pipeline remains for every other case and whenever the
  contact list itself is wanted (VTK contact output, implicit integrators). This is the hot
  loop of explicit runs (DESIGN.md: one call per batch; plain C over arrays inside).

  Sphere/sphere lever arms are parallel to the normal: la = -sa n, lb = sb n with
  sa = r_a + gap/2 and sb = r_b + gap/2 (the middle of the overlap, as sphere.h), so the
  contact point velocity is v - s (w x n) and a torque is -s (n x F) = -s (n x Ft): the normal
  force has no moment. The loop is specialised at compile time on commit, periodicity and
  whether the dissipative parts (fd, td) are wanted, so its body carries no tests of them.
*/
#include "hooke.h"
#include "../shapes/sphere.h"
#include "dem_isa.h"
#include <unistd.h>

typedef struct {
  PetscReal pe, es, dr;
  PetscInt  nc;
} DemFusedSums;

/* one inverse mass im0 and one radius r0 shared by the bodies of a batch (fixed bodies: inverse
   mass 0), and what the blocked loop derives from them: c1 = im0 and c2 = im0 + im0 (the
   values 1/m_a + 1/m_b then takes), m1 = 1/c1, m2 = 1/c2, reff = r0 r0 / (r0 + r0); set = 0:
   none (DemHookeFusedUniformSet); nblk, nuni: blocks of the blocked loop, and those of them
   that used the constants */
typedef struct {
  int       set;
  PetscReal c1, c2, m1, m2, r0, reff;
  PetscInt  nblk, nuni;
} DemFusedUniform;

/*
  The sphere/sphere pairs [0, npair) of a group, in two passes: a tight filter that collects
  the touching pairs into touch[] (branch-free), then the contacts themselves. Most candidate
  pairs of a packed bed do not touch, and the filter keeps their cost to a distance test.
  History of the pairs that do not touch must be zero after a committed evaluation. The filter
  keeps one byte per pair, was[k]: the pair touched at the last committed evaluation of the
  same list. When those bytes are known (`known`), only a pair that came apart (was[k] set, not
  touching now; rare, so the branch is predictable) has its history cleared; otherwise (first
  evaluation after a build or a restart) every non-touching pair's history is cleared (reset).
  Only committed evaluations (`commit`) clear history or update was[].
*/
#define DEM_PF_FILTER 16
/* candidate pairs per chunk of the explicit step (DemHookeFusedChunked): each chunk's last block
   of DEM_VB contacts is part padding, so larger chunks pad less, while the chunk's pair indices,
   touching list and kept columns (~100 KB at 2048) still stay in the second-level cache.
   Session 18, in-run A/B of the force phase (2048 against 512 alternating every 25 steps):
   bed-8k 0.965 0.967, chute 0.985 0.967, bed-8k-hertz 0.972 0.968, bed-64k 0.940 0.944,
   bed-64k-hertz 0.943 0.978; 4096 against 2048: 0.99-1.02. The chunks do not change any result */
#define DEM_CHUNK     2048
#define DEM_PD        (DEM_CHUNK + 8) /* stride of the AVX-512 filter's kept columns (DemHookeFusedFilterKnown_V4) */
/* the prefetches (the filter's and the blocked loop's) are made when the bodies' columns the
   kernel reads and updates at random (184 B per body) exceed four times the second-level cache
   (sysconf; 4 MiB, the earlier fixed threshold, when it does not tell). Measured on two
   machines: on a Zen 3 (512 KiB L2, 32 MiB L3 shared), 8000 bodies (1.5 MB, 3 L2) ran 4-6 %
   slower with them (their lines stay in L3 and the prefetches only add instructions), 32000
   (5.9 MB, 12 L2) and 64000 (11.8 MB, 23 L2) 10-30 % faster (benchmarks/settle/README.md,
   session 12); on a Sapphire Rapids class machine (2 MiB L2, 300 MiB L3; session 19, in-run
   A/B of the force phase, without against with, alternating every 25 steps) the chute's 32000
   bodies (3 L2) 0.958-0.970 in four runs and 0.978, 0.991 later, bed-64k (6 L2) 0.977-1.054 in
   ten (mean 1.012). MMDEM_PREFETCH=0 or 1 overrides the rule (never, always); prefetches change
   no value (tests/cases/fused_uniform.py) */
static double DemHookeFusedPfMinBytes(void)
{
  static double lim = -1;
  if (lim < 0) {
    const char *e  = getenv("MMDEM_PREFETCH");
    const long  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    lim            = l2 > 0 ? 4.0 * (double)l2 : 4.0 * 1048576;
    if (e && !strcmp(e, "0")) lim = 1e300;
    else if (e && !strcmp(e, "1")) lim = 0;
  }
  return lim;
}
DEM_HOT_INLINE PetscInt DemHookeFusedFilter(PetscInt k0, PetscInt npair, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict rad, PetscInt *restrict touch, unsigned char *restrict was, const int commit, const int known, const int periodic, const int pf)
{
  PetscInt nt = 0;

  for (PetscInt k = k0; k < npair; k++) {
    const size_t     a = (size_t)A[k], b = (size_t)B[k];
    if (pf) { /* the second body of the pair DEM_PF_FILTER ahead requested now (see the blocked loop) */
      const size_t bp = (size_t)B[k + DEM_PF_FILTER < npair ? k + DEM_PF_FILTER : k];
      __builtin_prefetch(x + 3 * bp), __builtin_prefetch(rad + bp);
    }
    const PetscReal *xa = x + 3 * a, *xb = x + 3 * b, rs = rad[a] + rad[b];
    PetscReal        d0 = xa[0] - xb[0], d1 = xa[1] - xb[1], d2 = xa[2] - xb[2];
    int              in;
    if (periodic) {
      const PetscReal *sh = tbl[S[k]];
      d0 -= sh[0], d1 -= sh[1], d2 -= sh[2];
    }
    in        = d0 * d0 + d1 * d1 + d2 * d2 < rs * rs;
    touch[nt] = k;
    nt += in;
    if (commit) {
      if (known) {
        if (was[k] > in) DemFrictionReset_Private(hist + DEM_FRICTION_HISTSIZE * k); /* came apart */
      } else { /* not touching: the pair forgets its history (x 0; x 1 keeps it exactly) */
        PetscReal *restrict h = hist + DEM_FRICTION_HISTSIZE * k;
        const PetscReal keep = in ? 1.0 : 0.0;
        h[0] *= keep, h[1] *= keep, h[2] *= keep, h[3] *= keep;
      }
      was[k] = (unsigned char)in;
    }
  }
  return nt;
}

#if DEM_HAVE_ISA_V4
  #include <immintrin.h>
/*
  The filter of the pairs without an image shift on a step whose was[] bytes are known
  (DemHookeFusedFilter with commit, known, not periodic: the common case of an explicit run),
  eight pairs per iteration with AVX-512: the positions and radii gathered, the touching pairs'
  indices written to touch[] by a compress store, was[] read and written eight bytes at a time,
  and the rare pair that came apart reset in scalar code. The distance is rounded as the AVX2+FMA
  copy of DemHookeFusedFilter rounds it (the compiler's contraction of d0 d0 + d1 d1 + d2 d2
  there: fma(d2, d2, fma(d0, d0, d1 d1))), so both select the same pairs. The last npair % 8
  pairs take a masked iteration. With pd, the touching pairs' x_a - x_b (three components) and
  radii are kept too, compressed as touch[] is, in the five columns pd + c DEM_PD (c = 0 ... 4),
  for the blocked loop's gather (DemHookeFusedGather_V4), which then does not gather them again.
*/
DEM_ISA_V4 static PetscInt DemHookeFusedFilterKnown_V4(PetscInt k0, PetscInt npair, const PetscInt *restrict A, const PetscInt *restrict B, PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict rad, PetscInt *restrict touch, unsigned char *restrict was, PetscReal *restrict pd)
{
  PetscInt      nt = 0;
  const __m256i three = _mm256_set1_epi32(3), iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512d zero = _mm512_setzero_pd();

  for (PetscInt k = k0; k < npair; k += 8) {
    const __mmask8 m  = npair - k >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (npair - k)) - 1);
    const __m256i  ia = _mm256_maskz_loadu_epi32(m, A + k), ib = _mm256_maskz_loadu_epi32(m, B + k);
    const __m256i  xa = _mm256_mullo_epi32(ia, three), xb = _mm256_mullo_epi32(ib, three);
    const __m512d  d0 = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, xa, x, 8), _mm512_mask_i32gather_pd(zero, m, xb, x, 8));
    const __m512d  d1 = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, xa, x + 1, 8), _mm512_mask_i32gather_pd(zero, m, xb, x + 1, 8));
    const __m512d  d2 = _mm512_sub_pd(_mm512_mask_i32gather_pd(zero, m, xa, x + 2, 8), _mm512_mask_i32gather_pd(zero, m, xb, x + 2, 8));
    const __m512d  ra = _mm512_mask_i32gather_pd(zero, m, ia, rad, 8), rb = _mm512_mask_i32gather_pd(zero, m, ib, rad, 8), rs = _mm512_add_pd(ra, rb);
    const __m512d  r2 = _mm512_fmadd_pd(d2, d2, _mm512_fmadd_pd(d0, d0, _mm512_mul_pd(d1, d1)));
    const __mmask8 in = _mm512_mask_cmp_pd_mask(m, r2, _mm512_mul_pd(rs, rs), _CMP_LT_OQ);
    const __m128i  wb = _mm_maskz_loadu_epi8((__mmask16)m, was + k);
    unsigned       apart = (unsigned)(_mm_test_epi8_mask(wb, wb) & (__mmask16)(~in & 0xff)); /* touched, not now */

    _mm256_mask_compressstoreu_epi32(touch + nt, in, _mm256_add_epi32(_mm256_set1_epi32((int)k), iota));
    if (pd) { /* eight lanes stored from nt on, of which the touching ones count (DEM_PD >= DEM_CHUNK + 8) */
      _mm512_storeu_pd(pd + nt, _mm512_maskz_compress_pd(in, d0));
      _mm512_storeu_pd(pd + DEM_PD + nt, _mm512_maskz_compress_pd(in, d1));
      _mm512_storeu_pd(pd + 2 * DEM_PD + nt, _mm512_maskz_compress_pd(in, d2));
      _mm512_storeu_pd(pd + 3 * DEM_PD + nt, _mm512_maskz_compress_pd(in, ra));
      _mm512_storeu_pd(pd + 4 * DEM_PD + nt, _mm512_maskz_compress_pd(in, rb));
    }
    nt += _mm_popcnt_u32((unsigned)in);
    while (apart) { /* came apart: rare */
      DemFrictionReset_Private(hist + DEM_FRICTION_HISTSIZE * (k + __builtin_ctz(apart)));
      apart &= apart - 1;
    }
    _mm_mask_storeu_epi8(was + k, (__mmask16)m, _mm_maskz_set1_epi8((__mmask16)in, 1));
  }
  return nt;
}
#endif

DEM_HOT_INLINE void DemHookeFusedSS(const DemContactLaw_Hooke *hk, PetscInt nt, const PetscInt *restrict touch, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict v, const PetscReal *restrict w, const PetscReal *restrict rad, const PetscReal *restrict im, PetscReal *restrict f, PetscReal *restrict t, PetscReal *restrict fd, PetscReal *restrict td, PetscReal dt, const int commit, const int periodic, const int withfd, const int withdr, const int withpe, const int hertz, DemFusedSums *sum)
{
  PetscReal pe = 0, es_sum = 0, dr = 0;
  /* the law's parameters in a local copy: the compiler keeps them in registers instead of
     reloading them after every store to f and t (which it cannot prove do not alias them) */
  const DemContactLaw_Hooke law = *hk;

  for (PetscInt i = 0; i < nt; i++) {
    const PetscInt k = touch[i];
    const size_t   a = (size_t)A[k], b = (size_t)B[k];
    PetscReal *restrict h = hist + DEM_FRICTION_HISTSIZE * k;
    const PetscReal ra = rad[a], rb = rad[b];
    PetscReal d0, d1, d2, r2;
    PetscReal n[3], vr[3], ft[3], D[3], c[3], gap, dist, inv, sa, sb, imab, m, fn, dfn, cn, kt, en, dis, es;
    int       slip;

    d0 = x[3 * a] - x[3 * b];
    d1 = x[3 * a + 1] - x[3 * b + 1];
    d2 = x[3 * a + 2] - x[3 * b + 2];
    if (periodic) {
      const PetscReal *sh = tbl[S[k]];
      d0 -= sh[0], d1 -= sh[1], d2 -= sh[2];
    }
    r2 = d0 * d0 + d1 * d1 + d2 * d2;
    /* geometry as sphere.h */
    dist = PetscSqrtReal(r2);
    if (dist > 0) {
      inv  = 1.0 / dist;
      n[0] = d0 * inv, n[1] = d1 * inv, n[2] = d2 * inv;
    } else n[0] = n[1] = 0, n[2] = 1;
    gap = dist - (ra + rb);
    sa  = ra + 0.5 * gap;
    sb  = rb + 0.5 * gap;
    { /* velocity of a relative to b at the contact point: va - sa wa x n - (vb + sb wb x n) */
      const PetscReal *wa = w + 3 * a, *wb = w + 3 * b;
      const PetscReal  u0 = sa * wa[0] + sb * wb[0], u1 = sa * wa[1] + sb * wb[1], u2 = sa * wa[2] + sb * wb[2];
      vr[0] = v[3 * a] - v[3 * b] - (u1 * n[2] - u2 * n[1]);
      vr[1] = v[3 * a + 1] - v[3 * b + 1] - (u2 * n[0] - u0 * n[2]);
      vr[2] = v[3 * a + 2] - v[3 * b + 2] - (u0 * n[1] - u1 * n[0]);
    }
    imab = im[a] + im[b];
    m    = imab > 0 ? 1.0 / imab : PETSC_MAX_REAL;
    DemHookeContact_Private(&law, n, vr, gap, m, hertz ? ra * rb / (ra + rb) : 0, hertz, h, dt, commit, &fn, ft, &dfn, &cn, &kt, &en, &dis, &slip, D, &es);
    /* forces: F = fn n + ft on a, -F on b; torques -sa n x ft on a, -sb n x ft on b */
    f[3 * a] += fn * n[0] + ft[0];
    f[3 * a + 1] += fn * n[1] + ft[1];
    f[3 * a + 2] += fn * n[2] + ft[2];
    f[3 * b] -= fn * n[0] + ft[0];
    f[3 * b + 1] -= fn * n[1] + ft[1];
    f[3 * b + 2] -= fn * n[2] + ft[2];
    c[0] = n[1] * ft[2] - n[2] * ft[1];
    c[1] = n[2] * ft[0] - n[0] * ft[2];
    c[2] = n[0] * ft[1] - n[1] * ft[0];
    t[3 * a] -= sa * c[0], t[3 * a + 1] -= sa * c[1], t[3 * a + 2] -= sa * c[2];
    t[3 * b] -= sb * c[0], t[3 * b + 1] -= sb * c[1], t[3 * b + 2] -= sb * c[2];
    if (withfd) { /* the same for the dissipative part D */
      fd[3 * a] += D[0], fd[3 * a + 1] += D[1], fd[3 * a + 2] += D[2];
      fd[3 * b] -= D[0], fd[3 * b + 1] -= D[1], fd[3 * b + 2] -= D[2];
      c[0] = n[1] * D[2] - n[2] * D[1];
      c[1] = n[2] * D[0] - n[0] * D[2];
      c[2] = n[0] * D[1] - n[1] * D[0];
      td[3 * a] -= sa * c[0], td[3 * a + 1] -= sa * c[1], td[3 * a + 2] -= sa * c[2];
      td[3 * b] -= sb * c[0], td[3 * b + 1] -= sb * c[1], td[3 * b + 2] -= sb * c[2];
    }
    if (withpe) pe += en; /* else the compiler drops the energy arithmetic */
    es_sum += es;
    if (withdr) dr += dis; /* else the compiler drops the power arithmetic */
  }
  sum->pe += pe;
  sum->es += es_sum;
  sum->dr += dr;
  sum->nc += nt;
}

/*
  The sphere/sphere contacts of an explicit step (commit, with fd/td, no power column, law
  hooke), in blocks of DEM_VB contacts: (1) gather each contact's inputs (positions, radii,
  velocities, history) into small arrays, (2) compute every contact of the block in one loop of
  fixed trip count without branches (selects instead), which the compiler vectorises (4
  contacts per AVX2 instruction in the V3 copy), (3) scatter the forces, torques and history.
  The arithmetic is DemHookeContact_Private's and DemFrictionSpring_Private's (hooke.h,
  friction.h) written branch-free: each select takes the value the scalar code's branch would
  compute (a lane's unused side may be inf or NaN and is discarded). The tail block is padded
  with harmless dummy contacts whose results are not scattered.
  DEM_VB = 32: four 8-lane (AVX-512) or eight 4-lane (AVX2) iterations of step (2), whose chains
  of square roots and divisions (six or more per contact, each waiting for the last) then
  overlap in the out-of-order window; with 16 (two AVX-512 iterations) perf put a third of the
  step's samples just after them. Session 18, Sapphire Rapids class, in-run A/B of the force
  phase (32 against 16 alternating every 25 steps): bed-8k 0.929 0.923, chute 0.920 0.939,
  bed-64k 0.937 0.915, bed-8k-hertz 1.017 0.991, bed-64k-hertz 0.962 1.012, MMDEM_ISA=avx2
  bed-8k 0.954 0.961; 64 against 32: 1.03-1.09; 24 against 32: 0.99-1.01 (on a Zen 3, session
  10, 32 against 16 with AVX2 was 1.013). The order of the pairs, so every result, does not
  depend on it.
*/
#define DEM_VB 32

#if DEM_HAVE_ISA_V4
/* step (3) of the blocked loop for the AVX-512 copy: each body's three components of f, t,
   fd and td updated by one masked 3-lane load, add (t, td: fnmadd with the lever arm, as the
   scalar t -= s C rounds) and store, instead of three scalar read-modify-writes; the order of
   the updates, and so every sum, is the scalar loop's. The first body a of consecutive pairs
   is often the same (the list is built body by body, ~2.4 touching pairs per run in a packed
   bed): its four rows stay in registers over such a run, loaded at its first pair and stored
   after its last. No other pair of the run updates a's rows (its b is never a), so the sums
   are the same operations in the same order, bitwise the scalar loop's, with 4 masked loads
   and stores per run instead of per pair (bed-8k, session 15: paired median 0.967 of the time).
   The block's columns (F, C, D, E and the new history, one value per pair) are first turned
   into rows of four, eight pairs at a time, by in-register transposes (DemHookeFusedRows_V4:
   8 shuffles per eight rows), so that each pair reads its five rows with five loads instead
   of building them from twenty scalars (session 16: -8 % of the scatter's cycles, rdtsc
   totals of the two variants alternating every 25 steps in one bed-8k run). At a new run the
   new body's rows are loaded before the last one's are stored: a masked 3-lane store covers
   32 bytes, the next body's row (usually a + 1) starts 24 bytes on, and its load waited for
   that store (perf: a quarter of the scatter's samples on that load; paired median 0.979) */
DEM_ISA_V4 static inline void DemHookeFusedRows_V4(__m512d x, __m512d y, __m512d z, __m512d u, __m512d *r)
{
  const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  const __m512d t0 = _mm512_unpacklo_pd(x, y), t1 = _mm512_unpackhi_pd(x, y), t2 = _mm512_unpacklo_pd(z, u), t3 = _mm512_unpackhi_pd(z, u);

  r[0] = _mm512_permutex2var_pd(t0, lo, t2); /* the rows (x y z u) of lanes 0 and 4 */
  r[1] = _mm512_permutex2var_pd(t1, lo, t3); /* 1 and 5 */
  r[2] = _mm512_permutex2var_pd(t0, hi, t2); /* 2 and 6 */
  r[3] = _mm512_permutex2var_pd(t1, hi, t3); /* 3 and 7 */
}

DEM_ISA_V4 static void DemHookeFusedScatter_V4(PetscInt nb, const PetscInt *restrict tk, const PetscInt *restrict A, const PetscInt *restrict B, PetscReal *restrict hist, PetscReal *restrict f, PetscReal *restrict t, PetscReal *restrict fd, PetscReal *restrict td, const PetscReal *F0, const PetscReal *F1, const PetscReal *F2, const PetscReal *C0, const PetscReal *C1, const PetscReal *C2, const PetscReal *D0, const PetscReal *D1, const PetscReal *D2, const PetscReal *E0, const PetscReal *E1, const PetscReal *E2, const PetscReal *SA, const PetscReal *SB, const PetscReal *h0, const PetscReal *h1, const PetscReal *h2, const PetscReal *h3)
{
  /* R[g][q][s]: of the pairs 8g ... 8g + 7, quantity q (F, C, D, E, history), the rows of
     lanes s and s + 4 (a row: 4 doubles, the fourth 0 for F, C, D, E) */
  __m512d        R[DEM_VB / 8][5][4];
  const __m512d  z  = _mm512_setzero_pd();
  const __mmask8 m3 = 0x7;

  for (int g = 0; g < DEM_VB / 8 && 8 * g < nb; g++) {
    const int o = 8 * g;
    DemHookeFusedRows_V4(_mm512_loadu_pd(F0 + o), _mm512_loadu_pd(F1 + o), _mm512_loadu_pd(F2 + o), z, R[g][0]);
    DemHookeFusedRows_V4(_mm512_loadu_pd(C0 + o), _mm512_loadu_pd(C1 + o), _mm512_loadu_pd(C2 + o), z, R[g][1]);
    DemHookeFusedRows_V4(_mm512_loadu_pd(D0 + o), _mm512_loadu_pd(D1 + o), _mm512_loadu_pd(D2 + o), z, R[g][2]);
    DemHookeFusedRows_V4(_mm512_loadu_pd(E0 + o), _mm512_loadu_pd(E1 + o), _mm512_loadu_pd(E2 + o), z, R[g][3]);
    DemHookeFusedRows_V4(_mm512_loadu_pd(h0 + o), _mm512_loadu_pd(h1 + o), _mm512_loadu_pd(h2 + o), _mm512_loadu_pd(h3 + o), R[g][4]);
  }
  const PetscReal *rows = (const PetscReal *)R;
  size_t           ca   = 3 * (size_t)A[tk[0]]; /* the run's first body and its rows */
  __m256d          rF = _mm256_maskz_loadu_pd(m3, f + ca), rT = _mm256_maskz_loadu_pd(m3, t + ca);
  __m256d          rD = _mm256_maskz_loadu_pd(m3, fd + ca), rE = _mm256_maskz_loadu_pd(m3, td + ca);
  for (PetscInt j = 0; j < nb; j++) {
    const PetscInt   k = tk[j];
    const size_t     a = 3 * (size_t)A[k], b = 3 * (size_t)B[k];
    const PetscReal *rj = rows + 160 * (j >> 3) + 8 * (j & 3) + 4 * ((j >> 2) & 1); /* R[j / 8][0][j % 4], half (j / 4) % 2 */
    const __m256d    F = _mm256_loadu_pd(rj), C = _mm256_loadu_pd(rj + 32), D = _mm256_loadu_pd(rj + 64), E = _mm256_loadu_pd(rj + 96);
    const __m256d    sa = _mm256_set1_pd(SA[j]), sb = _mm256_set1_pd(SB[j]);
    if (a != ca) { /* a new run: the last one's rows back, this one's in */
      const __m256d nF = _mm256_maskz_loadu_pd(m3, f + a), nT = _mm256_maskz_loadu_pd(m3, t + a);
      const __m256d nD = _mm256_maskz_loadu_pd(m3, fd + a), nE = _mm256_maskz_loadu_pd(m3, td + a);
      _mm256_mask_storeu_pd(f + ca, m3, rF), _mm256_mask_storeu_pd(t + ca, m3, rT);
      _mm256_mask_storeu_pd(fd + ca, m3, rD), _mm256_mask_storeu_pd(td + ca, m3, rE);
      ca = a, rF = nF, rT = nT, rD = nD, rE = nE;
    }
    rF = _mm256_add_pd(rF, F), rT = _mm256_fnmadd_pd(sa, C, rT);
    rD = _mm256_add_pd(rD, D), rE = _mm256_fnmadd_pd(sa, E, rE);
    _mm256_mask_storeu_pd(f + b, m3, _mm256_sub_pd(_mm256_maskz_loadu_pd(m3, f + b), F));
    _mm256_mask_storeu_pd(t + b, m3, _mm256_fnmadd_pd(sb, C, _mm256_maskz_loadu_pd(m3, t + b)));
    _mm256_mask_storeu_pd(fd + b, m3, _mm256_sub_pd(_mm256_maskz_loadu_pd(m3, fd + b), D));
    _mm256_mask_storeu_pd(td + b, m3, _mm256_fnmadd_pd(sb, E, _mm256_maskz_loadu_pd(m3, td + b)));
    _mm256_storeu_pd(hist + DEM_FRICTION_HISTSIZE * (size_t)k, _mm256_loadu_pd(rj + 128));
  }
  _mm256_mask_storeu_pd(f + ca, m3, rF), _mm256_mask_storeu_pd(t + ca, m3, rT);
  _mm256_mask_storeu_pd(fd + ca, m3, rD), _mm256_mask_storeu_pd(td + ca, m3, rE);
}

/* step (1) of the blocked loop for the AVX-512 copy, eight pairs per instruction: the pair
   indices, the bodies a and b and every input column gathered (vgatherdpd), the differences
   formed as the scalar gather forms them (x_a - x_b, then minus the image shift; v_a - v_b;
   1/m_a + 1/m_b: the same roundings), and each stored with one vector store per eight values
   instead of eight scalar stores, which the compute loop's vector loads then read without
   waiting for eight separate stores to drain. The padding lanes get the scalar gather's
   dummy (two unit spheres 1 apart along z, at rest). Session 16: -15 % of the gather's
   cycles (rdtsc, the two variants alternating every 25 steps in one bed-8k run). The pair
   and body indices are 32-bit (dem_isa.h: no AVX-512 copy with 64-bit PetscInt) */
DEM_ISA_V4 static void DemHookeFusedGather_V4(PetscInt nb, const PetscInt *restrict tk, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], const PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict v, const PetscReal *restrict w, const PetscReal *restrict rad, const PetscReal *restrict im, const PetscReal *restrict pd, const int periodic, PetscReal *restrict d0, PetscReal *restrict d1, PetscReal *restrict d2, PetscReal *restrict rA, PetscReal *restrict rB, PetscReal *restrict u0, PetscReal *restrict u1, PetscReal *restrict u2, PetscReal *restrict wa0, PetscReal *restrict wa1, PetscReal *restrict wa2, PetscReal *restrict wb0, PetscReal *restrict wb1, PetscReal *restrict wb2, PetscReal *restrict imab, PetscReal *restrict h0, PetscReal *restrict h1, PetscReal *restrict h2, PetscReal *restrict h3)
{
  const __m256i three = _mm256_set1_epi32(3), hs = _mm256_set1_epi32(DEM_FRICTION_HISTSIZE), zi = _mm256_setzero_si256();
  const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd();

  for (int j = 0; j < DEM_VB; j += 8) {
    const int      nl = (int)nb - j;
    const __mmask8 m  = nl >= 8 ? (__mmask8)0xff : (nl > 0 ? (__mmask8)((1u << nl) - 1) : (__mmask8)0);
    const __m256i  kk = _mm256_maskz_loadu_epi32(m, tk + j);
    const __m256i  ia = _mm256_mmask_i32gather_epi32(zi, m, kk, A, 4), ib = _mm256_mmask_i32gather_epi32(zi, m, kk, B, 4);
    const __m256i  a3 = _mm256_mullo_epi32(ia, three), b3 = _mm256_mullo_epi32(ib, three), kh = _mm256_mullo_epi32(kk, hs);
    __m512d        e0, e1, e2;

    if (pd) { /* the filter's (DemHookeFusedFilterKnown_V4) */
      e0 = _mm512_maskz_loadu_pd(m, pd + j), e1 = _mm512_maskz_loadu_pd(m, pd + DEM_PD + j), e2 = _mm512_mask_loadu_pd(one, m, pd + 2 * DEM_PD + j);
      _mm512_storeu_pd(rA + j, _mm512_mask_loadu_pd(one, m, pd + 3 * DEM_PD + j));
      _mm512_storeu_pd(rB + j, _mm512_mask_loadu_pd(one, m, pd + 4 * DEM_PD + j));
    } else {
      e0 = _mm512_maskz_sub_pd(m, _mm512_mask_i32gather_pd(zero, m, a3, x, 8), _mm512_mask_i32gather_pd(zero, m, b3, x, 8));
      e1 = _mm512_maskz_sub_pd(m, _mm512_mask_i32gather_pd(zero, m, a3, x + 1, 8), _mm512_mask_i32gather_pd(zero, m, b3, x + 1, 8));
      e2 = _mm512_mask_sub_pd(one, m, _mm512_mask_i32gather_pd(zero, m, a3, x + 2, 8), _mm512_mask_i32gather_pd(zero, m, b3, x + 2, 8));
      _mm512_storeu_pd(rA + j, _mm512_mask_i32gather_pd(one, m, ia, rad, 8));
      _mm512_storeu_pd(rB + j, _mm512_mask_i32gather_pd(one, m, ib, rad, 8));
    }
    if (periodic) { /* minus the pair's image shift, tbl[S[k]] */
      const __m256i s3 = _mm256_mullo_epi32(_mm256_mmask_i32gather_epi32(zi, m, kk, S, 4), three);
      e0 = _mm512_mask_sub_pd(e0, m, e0, _mm512_mask_i32gather_pd(zero, m, s3, &tbl[0][0], 8));
      e1 = _mm512_mask_sub_pd(e1, m, e1, _mm512_mask_i32gather_pd(zero, m, s3, &tbl[0][1], 8));
      e2 = _mm512_mask_sub_pd(e2, m, e2, _mm512_mask_i32gather_pd(zero, m, s3, &tbl[0][2], 8));
    }
    _mm512_storeu_pd(d0 + j, e0), _mm512_storeu_pd(d1 + j, e1), _mm512_storeu_pd(d2 + j, e2);
    _mm512_storeu_pd(u0 + j, _mm512_maskz_sub_pd(m, _mm512_mask_i32gather_pd(zero, m, a3, v, 8), _mm512_mask_i32gather_pd(zero, m, b3, v, 8)));
    _mm512_storeu_pd(u1 + j, _mm512_maskz_sub_pd(m, _mm512_mask_i32gather_pd(zero, m, a3, v + 1, 8), _mm512_mask_i32gather_pd(zero, m, b3, v + 1, 8)));
    _mm512_storeu_pd(u2 + j, _mm512_maskz_sub_pd(m, _mm512_mask_i32gather_pd(zero, m, a3, v + 2, 8), _mm512_mask_i32gather_pd(zero, m, b3, v + 2, 8)));
    _mm512_storeu_pd(wa0 + j, _mm512_mask_i32gather_pd(zero, m, a3, w, 8));
    _mm512_storeu_pd(wa1 + j, _mm512_mask_i32gather_pd(zero, m, a3, w + 1, 8));
    _mm512_storeu_pd(wa2 + j, _mm512_mask_i32gather_pd(zero, m, a3, w + 2, 8));
    _mm512_storeu_pd(wb0 + j, _mm512_mask_i32gather_pd(zero, m, b3, w, 8));
    _mm512_storeu_pd(wb1 + j, _mm512_mask_i32gather_pd(zero, m, b3, w + 1, 8));
    _mm512_storeu_pd(wb2 + j, _mm512_mask_i32gather_pd(zero, m, b3, w + 2, 8));
    _mm512_storeu_pd(imab + j, _mm512_mask_add_pd(one, m, _mm512_mask_i32gather_pd(zero, m, ia, im, 8), _mm512_mask_i32gather_pd(zero, m, ib, im, 8)));
    _mm512_storeu_pd(h0 + j, _mm512_mask_i32gather_pd(zero, m, kh, hist, 8));
    _mm512_storeu_pd(h1 + j, _mm512_mask_i32gather_pd(zero, m, kh, hist + 1, 8));
    _mm512_storeu_pd(h2 + j, _mm512_mask_i32gather_pd(zero, m, kh, hist + 2, 8));
    _mm512_storeu_pd(h3 + j, _mm512_mask_i32gather_pd(zero, m, kh, hist + 3, 8));
  }
}
#endif

/* the bodies b of the touching pairs [i1, i1 + DEM_VB) requested into the cache: what the
   blocked loop's gather reads at random (the pair's history, v, w and 1/m of b). Not the rows
   of a (the list runs through the a in order: the hardware prefetchers follow them), nor b's
   position and radius (the filter has just read them, and with the AVX-512 filter the gather
   does not read them again), nor b's f, t, fd, td (the scatter's read-modify-writes). Session
   16, force phase, rdtsc, with and without alternating every 25 steps in one run: without a's
   rows bed-64k 0.88-0.95, chute 0.96-1.00; then without b's x and radius bed-64k 0.96-0.99,
   chute 0.975-0.98; then without b's f, t, fd, td bed-64k 0.93-0.98, chute 0.96-0.99; while
   dropping the history (1.01-1.09) or v, w, 1/m (1.01-1.04) as well cost time */
DEM_HOT_INLINE void DemHookeFusedPrefetchBodies(PetscInt i1, PetscInt nt, const PetscInt *restrict touch, const PetscInt *restrict B, const PetscReal *hist, const PetscReal *v, const PetscReal *w, const PetscReal *im)
{
  const PetscInt i2 = nt - i1 < DEM_VB ? nt : i1 + DEM_VB;
  for (PetscInt i = i1; i < i2; i++) {
    const PetscInt k = touch[i];
    const size_t   b = (size_t)B[k];
    __builtin_prefetch(hist + DEM_FRICTION_HISTSIZE * (size_t)k, 1);
    __builtin_prefetch(v + 3 * b), __builtin_prefetch(w + 3 * b), __builtin_prefetch(im + b);
  }
}

/* a block's columns (DEM_VB contacts): the gathered inputs, the history (in and out), the
   forces, torque arms and energies of step (2), which step (3) scatters */
typedef struct {
  PetscReal d0[DEM_VB], d1[DEM_VB], d2[DEM_VB], rA[DEM_VB], rB[DEM_VB], u0[DEM_VB], u1[DEM_VB], u2[DEM_VB];
  PetscReal wa0[DEM_VB], wa1[DEM_VB], wa2[DEM_VB], wb0[DEM_VB], wb1[DEM_VB], wb2[DEM_VB], imab[DEM_VB];
  PetscReal h0[DEM_VB], h1[DEM_VB], h2[DEM_VB], h3[DEM_VB];
  PetscReal F0[DEM_VB], F1[DEM_VB], F2[DEM_VB], C0[DEM_VB], C1[DEM_VB], C2[DEM_VB], SA[DEM_VB], SB[DEM_VB];
  PetscReal D0[DEM_VB], D1[DEM_VB], D2[DEM_VB], E0[DEM_VB], E1[DEM_VB], E2[DEM_VB], EN[DEM_VB], ES[DEM_VB];
} DemFusedBlock;

/*
  Step (2) of the blocked loop: the contacts of a block, branch-free. With uni (a compile-time
  constant; DemFusedUniform), 1/(1/m_a + 1/m_b) and, for law hertz, r_eff come from the batch's
  constants, which are the quotients the general form computes from the same values (so the
  same results) without its divisions: one of the seven divisions and square roots per contact
  for law hooke, two of nine for hertz.
*/
DEM_HOT_INLINE void DemHookeFusedLanes(DemFusedBlock *restrict bk, const DemContactLaw_Hooke *hk, const DemFusedUniform *un, PetscReal dt, const int withpe, const int from_e, const int hertz, const int uni)
{
  const PetscReal kn = hk->kn, kt = hk->kt, mu_s = hk->mu_s, mu_d = hk->mu_d, gnc = hk->gamma_n, gtc = hk->gamma_t, z2 = 2 * hk->zeta;
  const int       has_gt = hk->has_gamma_t ? 1 : 0, kt_pos = kt > 0;
  const PetscReal uc2 = un->c2, um1 = un->m1, um2 = un->m2, ureff = un->reff;
  const PetscReal *restrict d0 = bk->d0, *restrict d1 = bk->d1, *restrict d2 = bk->d2, *restrict rA = bk->rA, *restrict rB = bk->rB, *restrict u0 = bk->u0, *restrict u1 = bk->u1, *restrict u2 = bk->u2, *restrict wa0 = bk->wa0, *restrict wa1 = bk->wa1, *restrict wa2 = bk->wa2, *restrict wb0 = bk->wb0, *restrict wb1 = bk->wb1, *restrict wb2 = bk->wb2, *restrict imab = bk->imab;
  PetscReal *restrict h0 = bk->h0, *restrict h1 = bk->h1, *restrict h2 = bk->h2, *restrict h3 = bk->h3, *restrict F0 = bk->F0, *restrict F1 = bk->F1, *restrict F2 = bk->F2, *restrict C0 = bk->C0, *restrict C1 = bk->C1, *restrict C2 = bk->C2, *restrict D0 = bk->D0, *restrict D1 = bk->D1, *restrict D2 = bk->D2, *restrict E0 = bk->E0, *restrict E1 = bk->E1, *restrict E2 = bk->E2, *restrict SA = bk->SA, *restrict SB = bk->SB, *restrict EN = bk->EN, *restrict ES = bk->ES;

  for (PetscInt j = 0; j < DEM_VB; j++) {
    const PetscReal r2 = d0[j] * d0[j] + d1[j] * d1[j] + d2[j] * d2[j], dist = PetscSqrtReal(r2);
    const PetscReal invd = 1.0 / (dist > 0 ? dist : 1.0), inv = dist > 0 ? invd : 0.0;
    const PetscReal n0 = d0[j] * inv, n1 = d1[j] * inv, n2 = dist > 0 ? d2[j] * inv : 1.0;
    const PetscReal gap = dist - (rA[j] + rB[j]), sa = rA[j] + 0.5 * gap, sb = rB[j] + 0.5 * gap;
    const PetscReal q0 = sa * wa0[j] + sb * wb0[j], q1 = sa * wa1[j] + sb * wb1[j], q2 = sa * wa2[j] + sb * wb2[j];
    const PetscReal vr0 = u0[j] - (q1 * n2 - q2 * n1), vr1 = u1[j] - (q2 * n0 - q0 * n2), vr2 = u2[j] - (q0 * n1 - q1 * n0);
    const PetscReal minv = uni ? (imab[j] == uc2 ? um2 : um1) : 1.0 / (imab[j] > 0 ? imab[j] : 1.0), m = imab[j] > 0 ? minv : PETSC_MAX_REAL;
    const PetscReal gn0 = from_e ? z2 * PetscSqrtReal(kn / m) : gnc, gt0 = has_gt ? gtc : 0.5 * gn0; /* from_e: a compile-time constant */
    const PetscReal delta = -gap;
    /* law `hertz` (hertz a compile-time constant): springs and dashpots times
       p = sqrt(delta r_eff), as hooke.h */
    const PetscReal p = hertz ? PetscSqrtReal(delta * (uni ? ureff : rA[j] * rB[j] / (rA[j] + rB[j]))) : 1.0;
    const PetscReal kne = hertz ? kn * p : kn, kte = hertz ? kt * p : kt, gn = hertz ? gn0 * p : gn0, gt = hertz ? gt0 * p : gt0;
    const PetscReal cn = m * gn, ct = m * gt;
    const PetscReal vn = vr0 * n0 + vr1 * n1 + vr2 * n2, fn = kne * delta - cn * vn;
    /* friction.h: the spring rotated into the tangent plane, keeping its magnitude */
    const PetscReal s2 = h0[j] * h0[j] + h1[j] * h1[j] + h2[j] * h2[j], sn = h0[j] * n0 + h1[j] * n1 + h2[j] * n2;
    const PetscReal p0 = h0[j] - sn * n0, p1 = h1[j] - sn * n1, p2 = h2[j] - sn * n2, sr2 = p0 * p0 + p1 * p1 + p2 * p2;
    const PetscReal rr0 = PetscSqrtReal(s2 / (sr2 > 0 ? sr2 : 1.0)), rr = ((s2 > 0) & (sr2 > 1e-24 * s2)) ? rr0 : 0.0;
    const PetscReal so0 = s2 > 0 ? p0 * rr : 0.0, so1 = s2 > 0 ? p1 * rr : 0.0, so2 = s2 > 0 ? p2 * rr : 0.0;
    const PetscReal vt0 = vr0 - vn * n0, vt1 = vr1 - vn * n1, vt2 = vr2 - vn * n2;
    const PetscReal st0 = so0 + vt0 * dt, st1 = so1 + vt1 * dt, st2 = so2 + vt2 * dt;
    const PetscReal fv0 = -kte * st0 - ct * vt0, fv1 = -kte * st1 - ct * vt1, fv2 = -kte * st2 - ct * vt2;
    const PetscReal f2 = fv0 * fv0 + fv1 * fv1 + fv2 * fv2, mu = h3[j] > 0.5 ? mu_d : mu_s, flim = mu * (fn > 0 ? fn : 0.0);
    const int       atl = f2 > flim * flim;
    const PetscReal cl = flim / PetscSqrtReal(f2 > 0 ? f2 : 1.0), c = atl ? (flim > 0 ? cl : 0.0) : 1.0;
    const PetscReal ft0 = atl ? c * fv0 : fv0, ft1 = atl ? c * fv1 : fv1, ft2 = atl ? c * fv2 : fv2;
    const PetscReal cs = atl ? (kt_pos ? c : 0.0) : 1.0;
    const PetscReal s0 = cs * st0, s1 = cs * st1, s2n = cs * st2;
    const PetscReal es = atl ? 0.5 * kte * ((so0 + s0) * (st0 - s0) + (so1 + s1) * (st1 - s1) + (so2 + s2n) * (st2 - s2n)) : 0.0;
    const PetscReal fdt0 = atl ? ft0 + kte * s0 : -ct * vt0, fdt1 = atl ? ft1 + kte * s1 : -ct * vt1, fdt2 = atl ? ft2 + kte * s2n : -ct * vt2;
    const PetscReal dd0 = -cn * vn * n0 + fdt0, dd1 = -cn * vn * n1 + fdt1, dd2 = -cn * vn * n2 + fdt2;
    F0[j] = fn * n0 + ft0, F1[j] = fn * n1 + ft1, F2[j] = fn * n2 + ft2;
    C0[j] = n1 * ft2 - n2 * ft1, C1[j] = n2 * ft0 - n0 * ft2, C2[j] = n0 * ft1 - n1 * ft0;
    D0[j] = dd0, D1[j] = dd1, D2[j] = dd2;
    E0[j] = n1 * dd2 - n2 * dd1, E1[j] = n2 * dd0 - n0 * dd2, E2[j] = n0 * dd1 - n1 * dd0;
    SA[j] = sa, SB[j] = sb;
    h0[j] = s0, h1[j] = s1, h2[j] = s2n, h3[j] = atl ? 1.0 : 0.0;
    EN[j] = withpe ? (hertz ? 0.4 : 0.5) * kne * delta * delta + 0.5 * kte * (s0 * s0 + s1 * s1 + s2n * s2n) : 0.0;
    ES[j] = es;
  }
}

DEM_HOT_INLINE void DemHookeFusedSSVec(const DemContactLaw_Hooke *hk, PetscInt nt, const PetscInt *restrict touch, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict v, const PetscReal *restrict w, const PetscReal *restrict rad, const PetscReal *restrict im, const PetscReal *restrict pd, PetscReal *restrict f, PetscReal *restrict t, PetscReal *restrict fd, PetscReal *restrict td, PetscReal dt, const int periodic, const int withpe, const int from_e, const int hertz, const int v4, const int pf, DemFusedUniform *un, DemFusedSums *sum)
{
  PetscReal pe = sum->pe, es_sum = sum->es; /* a run of calls adds to the same two sums, in pair order */

  for (PetscInt i0 = 0; i0 < nt; i0 += DEM_VB) {
    const PetscInt nb = nt - i0 < DEM_VB ? nt - i0 : DEM_VB;
    DemFusedBlock  bk;
    PetscReal *restrict d0 = bk.d0, *restrict d1 = bk.d1, *restrict d2 = bk.d2, *restrict rA = bk.rA, *restrict rB = bk.rB, *restrict u0 = bk.u0, *restrict u1 = bk.u1, *restrict u2 = bk.u2, *restrict wa0 = bk.wa0, *restrict wa1 = bk.wa1, *restrict wa2 = bk.wa2, *restrict wb0 = bk.wb0, *restrict wb1 = bk.wb1, *restrict wb2 = bk.wb2, *restrict imab = bk.imab, *restrict h0 = bk.h0, *restrict h1 = bk.h1, *restrict h2 = bk.h2, *restrict h3 = bk.h3, *restrict F0 = bk.F0, *restrict F1 = bk.F1, *restrict F2 = bk.F2, *restrict C0 = bk.C0, *restrict C1 = bk.C1, *restrict C2 = bk.C2, *restrict D0 = bk.D0, *restrict D1 = bk.D1, *restrict D2 = bk.D2, *restrict E0 = bk.E0, *restrict E1 = bk.E1, *restrict E2 = bk.E2, *restrict SA = bk.SA, *restrict SB = bk.SB, *restrict EN = bk.EN, *restrict ES = bk.ES;

    /* (0) the next block's second bodies requested now, a block (~1 us) before its gather and
       scatter read them: the b of a pair sits at one of a few index offsets from a (the
       list's cells), a stream the hardware prefetchers do not follow, so without this each b
       costs several cache misses in a row once the store leaves the cache (bed-64k); a
       prefetch does not change any value */
    if (pf) DemHookeFusedPrefetchBodies(i0 + DEM_VB, nt, touch, B, hist, v, w, im);
    /* (1) gather; the padding lanes get two unit spheres 1 apart along z, at rest */
#if DEM_HAVE_ISA_V4
    if (v4) DemHookeFusedGather_V4(nb, touch + i0, A, B, S, tbl, hist, x, v, w, rad, im, pd ? pd + i0 : NULL, periodic, d0, d1, d2, rA, rB, u0, u1, u2, wa0, wa1, wa2, wb0, wb1, wb2, imab, h0, h1, h2, h3);
    else
#endif
    for (PetscInt j = 0; j < DEM_VB; j++) {
      if (j < nb) {
        const PetscInt k = touch[i0 + j];
        const size_t   a = (size_t)A[k], b = (size_t)B[k];
        const PetscReal *hh = hist + DEM_FRICTION_HISTSIZE * k;
        d0[j] = x[3 * a] - x[3 * b];
        d1[j] = x[3 * a + 1] - x[3 * b + 1];
        d2[j] = x[3 * a + 2] - x[3 * b + 2];
        if (periodic) {
          const PetscReal *sh = tbl[S[k]];
          d0[j] -= sh[0], d1[j] -= sh[1], d2[j] -= sh[2];
        }
        rA[j] = rad[a], rB[j] = rad[b];
        u0[j] = v[3 * a] - v[3 * b], u1[j] = v[3 * a + 1] - v[3 * b + 1], u2[j] = v[3 * a + 2] - v[3 * b + 2];
        wa0[j] = w[3 * a], wa1[j] = w[3 * a + 1], wa2[j] = w[3 * a + 2];
        wb0[j] = w[3 * b], wb1[j] = w[3 * b + 1], wb2[j] = w[3 * b + 2];
        imab[j] = im[a] + im[b];
        h0[j] = hh[0], h1[j] = hh[1], h2[j] = hh[2], h3[j] = hh[3];
      } else {
        d0[j] = d1[j] = 0, d2[j] = 1, rA[j] = rB[j] = 1;
        u0[j] = u1[j] = u2[j] = wa0[j] = wa1[j] = wa2[j] = wb0[j] = wb1[j] = wb2[j] = 0;
        imab[j] = 1, h0[j] = h1[j] = h2[j] = h3[j] = 0;
      }
    }
    /* (2) the contacts of the block, with the uniform constants if every contact of the block
       has 1/m_a + 1/m_b equal to c1, c2 or 0 and, for law hertz, both radii r0 */
    {
      const PetscReal c1 = un->c1, c2 = un->c2, r0 = un->r0;
      int             uni = un->set;
      for (PetscInt j = 0; j < DEM_VB; j++) {
        const int live = j < nb, mok = (imab[j] == c2) | (imab[j] == c1) | (imab[j] == 0), rok = !hertz || ((rA[j] == r0) & (rB[j] == r0));
        uni &= (!live) | (mok & rok);
      }
      un->nblk++;
      un->nuni += uni;
      if (uni) DemHookeFusedLanes(&bk, hk, un, dt, withpe, from_e, hertz, 1);
      else DemHookeFusedLanes(&bk, hk, un, dt, withpe, from_e, hertz, 0);
    }
    /* (3) scatter, in the order of the pairs */
#if DEM_HAVE_ISA_V4
    if (v4) {
      DemHookeFusedScatter_V4(nb, touch + i0, A, B, hist, f, t, fd, td, F0, F1, F2, C0, C1, C2, D0, D1, D2, E0, E1, E2, SA, SB, h0, h1, h2, h3);
      for (PetscInt j = 0; j < nb; j++) {
        if (withpe) pe += EN[j];
        es_sum += ES[j];
      }
      continue;
    }
#endif
    for (PetscInt j = 0; j < nb; j++) {
      const PetscInt k = touch[i0 + j];
      const size_t   a = (size_t)A[k], b = (size_t)B[k];
      PetscReal *restrict hh = hist + DEM_FRICTION_HISTSIZE * k;
      f[3 * a] += F0[j], f[3 * a + 1] += F1[j], f[3 * a + 2] += F2[j];
      f[3 * b] -= F0[j], f[3 * b + 1] -= F1[j], f[3 * b + 2] -= F2[j];
      t[3 * a] -= SA[j] * C0[j], t[3 * a + 1] -= SA[j] * C1[j], t[3 * a + 2] -= SA[j] * C2[j];
      t[3 * b] -= SB[j] * C0[j], t[3 * b + 1] -= SB[j] * C1[j], t[3 * b + 2] -= SB[j] * C2[j];
      fd[3 * a] += D0[j], fd[3 * a + 1] += D1[j], fd[3 * a + 2] += D2[j];
      fd[3 * b] -= D0[j], fd[3 * b + 1] -= D1[j], fd[3 * b + 2] -= D2[j];
      td[3 * a] -= SA[j] * E0[j], td[3 * a + 1] -= SA[j] * E1[j], td[3 * a + 2] -= SA[j] * E2[j];
      td[3 * b] -= SB[j] * E0[j], td[3 * b + 1] -= SB[j] * E1[j], td[3 * b + 2] -= SB[j] * E2[j];
      hh[0] = h0[j], hh[1] = h1[j], hh[2] = h2[j], hh[3] = h3[j];
      if (withpe) pe += EN[j];
      es_sum += ES[j];
    }
  }
  sum->pe = pe;
  sum->es = es_sum;
  sum->nc += nt;
}

/* the blocked loop's variants for touching pairs with (periodic) or without an image shift:
   stored energy wanted or not (withpe), gamma_n from the restitution or given, law hertz or
   hooke (periodic and hertz constants at each call); adds to the running sums of `run` */
DEM_HOT_INLINE void DemHookeFusedSSVecRun(const DemContactLaw_Hooke *hk, PetscInt nt, const PetscInt *restrict touch, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict v, const PetscReal *restrict w, const PetscReal *restrict rad, const PetscReal *restrict im, const PetscReal *restrict pd, DemForceOut *out, PetscReal dt, const int periodic, int withpe, const int hertz, const int v4, const int pf, DemFusedUniform *un, DemFusedSums *run)
{
#define DEM_SSV(E, R) DemHookeFusedSSVec(hk, nt, touch, A, B, S, tbl, hist, x, v, w, rad, im, pd, out->f, out->t, out->fd, out->td, dt, periodic, E, R, hertz, v4, pf, un, run)
  if (hk->from_e) {
    if (withpe) DEM_SSV(1, 1);
    else DEM_SSV(0, 1);
  } else {
    if (withpe) DEM_SSV(1, 0);
    else DEM_SSV(0, 0);
  }
#undef DEM_SSV
}

/* the pair filter of [k0, k1) with the flags of the call (known, pf, v4 constants) */
DEM_HOT_INLINE PetscInt DemHookeFusedFilterRange(PetscInt k0, PetscInt k1, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict rad, PetscInt *restrict touch, unsigned char *restrict was, PetscReal *restrict pd, const int commit, const int known, const int periodic, const int v4, const int pf)
{
#if DEM_HAVE_ISA_V4
  if (known && v4 && !periodic) return DemHookeFusedFilterKnown_V4(k0, k1, A, B, hist, x, rad, touch, was, pd);
#endif
  if (known) return pf ? DemHookeFusedFilter(k0, k1, A, B, S, tbl, hist, x, rad, touch, was, 1, 1, periodic, 1) : DemHookeFusedFilter(k0, k1, A, B, S, tbl, hist, x, rad, touch, was, 1, 1, periodic, 0);
  return DemHookeFusedFilter(k0, k1, A, B, S, tbl, hist, x, rad, touch, was, commit, 0, periodic, pf);
}

/*
  The explicit step's pairs [lo, hi) (all with or all without an image shift), filter and
  blocked loop chunk by chunk: DEM_CHUNK candidate pairs filtered, then their touching pairs
  computed, while the chunk's a, b and the bodies' x and radius the filter just read are still
  in the first- and second-level caches (one pass over the list where filter and contacts
  were two, each over the whole list). The pairs go through the blocked loop in the same
  (ascending) order as before and the energies are summed in that order over the chunks, so the
  results do not depend on the chunk size. Adds the range's sums to `sum`.
*/
DEM_HOT_INLINE PetscInt DemHookeFusedChunked(const DemContactLaw_Hooke *hk, PetscInt lo, PetscInt hi, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict v, const PetscReal *restrict w, const PetscReal *restrict rad, const PetscReal *restrict im, PetscInt *restrict touch, unsigned char *restrict was, DemForceOut *out, PetscReal dt, const int known, const int periodic, int withpe, const int hertz, const int v4, const int pf, DemFusedUniform *un, DemFusedSums *sum)
{
  DemFusedSums run = {0, 0, 0, 0};
  /* the AVX-512 filter's x_a - x_b and radii of the touching pairs (DemHookeFusedFilterKnown_V4) */
  PetscReal      pdbuf[v4 && known && !periodic ? 5 * DEM_PD : 1];
  PetscReal     *pd = v4 && known && !periodic ? pdbuf : NULL;

  for (PetscInt c0 = lo; c0 < hi; c0 += DEM_CHUNK) {
    const PetscInt c1 = hi - c0 > DEM_CHUNK ? c0 + DEM_CHUNK : hi;
    const PetscInt m  = DemHookeFusedFilterRange(c0, c1, A, B, S, tbl, hist, x, rad, touch, was, pd, 1, known, periodic, v4, pf);
    DemHookeFusedSSVecRun(hk, m, touch, A, B, S, tbl, hist, x, v, w, rad, im, pd, out, dt, periodic, withpe, hertz, v4, pf, un, &run);
  }
  if (run.nc) { /* as a single call over the range's touching pairs would add them */
    sum->pe += run.pe;
    sum->es += run.es;
    sum->nc += run.nc;
  }
  return run.nc;
}

/*
  One sphere/sphere batch: the filter, then the contacts (explicit steps: chunk by chunk,
  DemHookeFusedChunked), in the variant of the flags (each specialised at compile time). Compiled twice (dem_isa.h): for the baseline x86-64 and, called
  when the processor has them, with AVX2 and FMA (fused multiply-adds: about a fifth fewer
  instructions in this kernel; results differ from the baseline build in the last bits).
*/
DEM_HOT_INLINE PetscInt DemHookeFusedBatch_Inline(const DemContactLaw_Hooke *hk, PetscInt npair, const PetscInt *restrict A, const PetscInt *restrict B, const PetscInt *restrict S, PetscReal (*restrict tbl)[3], PetscReal *restrict hist, const PetscReal *restrict x, const PetscReal *restrict v, const PetscReal *restrict w, const PetscReal *restrict rad, const PetscReal *restrict im, PetscInt *restrict touch, unsigned char *restrict was, DemForceOut *out, PetscReal dt, int commit, int known, int withfd, int withpe, int noshift_first, int hertz, const int v4, const int pf, DemFusedUniform *un, DemFusedSums *sum)
{
  PetscInt nt0, nt, n0 = npair;

  /* the pairs [0, n0) have no image shift: those of a periodic list too when the list has
     them first (neighbour.c), found by bisection; they take the variants without shifts */
  if (S) {
    if (noshift_first) {
      PetscInt lo = 0, hi = npair;
      while (lo < hi) {
        const PetscInt mid = lo + (hi - lo) / 2;
        if (S[mid] == DEM_NOSHIFT) lo = mid + 1;
        else hi = mid;
      }
      n0 = lo;
    } else n0 = 0;
  }
  /* explicit steps commit and want fd (verlet), and book dissipation from fd and td, not
     from the power column: the blocked loop's variants are specialised and skip the power,
     and the stored energy too on steps whose pe_contact no output reads (withpe 0); law
     hertz's scaling compiled in or not */
  if (commit && withfd) {
    if (known) {
      if (hertz) return DemHookeFusedChunked(hk, 0, n0, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 1, 0, withpe, 1, v4, pf, un, sum) + DemHookeFusedChunked(hk, n0, npair, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 1, 1, withpe, 1, v4, pf, un, sum);
      return DemHookeFusedChunked(hk, 0, n0, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 1, 0, withpe, 0, v4, pf, un, sum) + DemHookeFusedChunked(hk, n0, npair, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 1, 1, withpe, 0, v4, pf, un, sum);
    }
    if (hertz) return DemHookeFusedChunked(hk, 0, n0, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 0, 0, withpe, 1, v4, pf, un, sum) + DemHookeFusedChunked(hk, n0, npair, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 0, 1, withpe, 1, v4, pf, un, sum);
    return DemHookeFusedChunked(hk, 0, n0, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 0, 0, withpe, 0, v4, pf, un, sum) + DemHookeFusedChunked(hk, n0, npair, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, 0, 1, withpe, 0, v4, pf, un, sum);
  }
#if DEM_HAVE_ISA_V4
  if (known && v4) nt0 = DemHookeFusedFilterKnown_V4(0, n0, A, B, hist, x, rad, touch, was, NULL);
  else
#endif
    if (known) nt0 = pf ? DemHookeFusedFilter(0, n0, A, B, S, tbl, hist, x, rad, touch, was, 1, 1, 0, 1) : DemHookeFusedFilter(0, n0, A, B, S, tbl, hist, x, rad, touch, was, 1, 1, 0, 0);
  else nt0 = DemHookeFusedFilter(0, n0, A, B, S, tbl, hist, x, rad, touch, was, commit, 0, 0, pf);
  nt = nt0;
  if (n0 < npair) {
    if (known) nt += pf ? DemHookeFusedFilter(n0, npair, A, B, S, tbl, hist, x, rad, touch + nt0, was, 1, 1, 1, 1) : DemHookeFusedFilter(n0, npair, A, B, S, tbl, hist, x, rad, touch + nt0, was, 1, 1, 1, 0);
    else nt += DemHookeFusedFilter(n0, npair, A, B, S, tbl, hist, x, rad, touch + nt0, was, commit, 0, 1, pf);
  }
#define DEM_HOOKE_SS(N, T, C, P, W, R, E) DemHookeFusedSS(hk, N, T, A, B, S, tbl, hist, x, v, w, rad, im, out->f, out->t, out->fd, out->td, dt, C, P, W, R, E, 0, sum)
  /* the rest (no fd wanted or not committed): the scalar loop with the power column */
  if (hertz) {
#define DEM_HERTZ_SS(N, T, C, P, W, R, E) DemHookeFusedSS(hk, N, T, A, B, S, tbl, hist, x, v, w, rad, im, out->f, out->t, out->fd, out->td, dt, C, P, W, R, E, 1, sum)
    DEM_HERTZ_SS(nt0, touch, commit, 0, withfd, 1, 1);
    if (nt > nt0) DEM_HERTZ_SS(nt - nt0, touch + nt0, commit, 1, withfd, 1, 1);
#undef DEM_HERTZ_SS
  } else {
    DEM_HOOKE_SS(nt0, touch, commit, 0, withfd, 1, 1);
    if (nt > nt0) DEM_HOOKE_SS(nt - nt0, touch + nt0, commit, 1, withfd, 1, 1);
  }
#undef DEM_HOOKE_SS
  return nt;
}

static PetscInt DemHookeFusedBatch_Generic(const DemContactLaw_Hooke *hk, PetscInt npair, const PetscInt *A, const PetscInt *B, const PetscInt *S, PetscReal (*tbl)[3], PetscReal *hist, const PetscReal *x, const PetscReal *v, const PetscReal *w, const PetscReal *rad, const PetscReal *im, PetscInt *touch, unsigned char *was, DemForceOut *out, PetscReal dt, int commit, int known, int withfd, int withpe, int noshift_first, int hertz, int pf, DemFusedUniform *un, DemFusedSums *sum)
{
  return DemHookeFusedBatch_Inline(hk, npair, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, commit, known, withfd, withpe, noshift_first, hertz, 0, pf, un, sum);
}

#if DEM_HAVE_ISA_V3
DEM_ISA_V3 static PetscInt DemHookeFusedBatch_V3(const DemContactLaw_Hooke *hk, PetscInt npair, const PetscInt *A, const PetscInt *B, const PetscInt *S, PetscReal (*tbl)[3], PetscReal *hist, const PetscReal *x, const PetscReal *v, const PetscReal *w, const PetscReal *rad, const PetscReal *im, PetscInt *touch, unsigned char *was, DemForceOut *out, PetscReal dt, int commit, int known, int withfd, int withpe, int noshift_first, int hertz, int pf, DemFusedUniform *un, DemFusedSums *sum)
{
  return DemHookeFusedBatch_Inline(hk, npair, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, commit, known, withfd, withpe, noshift_first, hertz, 0, pf, un, sum);
}
#endif

#if DEM_HAVE_ISA_V4
/* the AVX-512 copy: the AVX-512 filter, and the blocks of contacts eight per instruction */
DEM_ISA_V4 __attribute__((target("prefer-vector-width=512"))) static PetscInt DemHookeFusedBatch_V4(const DemContactLaw_Hooke *hk, PetscInt npair, const PetscInt *A, const PetscInt *B, const PetscInt *S, PetscReal (*tbl)[3], PetscReal *hist, const PetscReal *x, const PetscReal *v, const PetscReal *w, const PetscReal *rad, const PetscReal *im, PetscInt *touch, unsigned char *was, DemForceOut *out, PetscReal dt, int commit, int known, int withfd, int withpe, int noshift_first, int hertz, int pf, DemFusedUniform *un, DemFusedSums *sum)
{
  return DemHookeFusedBatch_Inline(hk, npair, A, B, S, tbl, hist, x, v, w, rad, im, touch, was, out, dt, commit, known, withfd, withpe, noshift_first, hertz, 1, pf, un, sum);
}
#endif

/* sphere/plane pairs: the plane's world normal n, gap = (x_a - x_b).n - r_a, as plane.c */
static PetscErrorCode DemHookeFusedSP(const DemContactLaw_Hooke *hk, DemSim sim, const DemPairBatch *pb, PetscReal *hist, PetscReal dt, PetscBool commit, DemForceOut *out, DemFusedSums *sum)
{
  DemBodyStore    *bs;
  const PetscReal *x = pb->state->x, *v = pb->state->v, *w = pb->state->w, *q = pb->state->q;
  PetscReal       *f = out->f, *t = out->t, *fd = out->fd, *td = out->td;
  PetscInt         lastb = -1;        /* the plane whose world normal n holds: found again only when */
  PetscReal        n[3]  = {0, 0, 1}; /* the plane changes (a wall's pairs are consecutive) */

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt a = pb->a[k], b = pb->b[k];
    PetscReal     *h = hist + DEM_FRICTION_HISTSIZE * k;
    PetscReal      d[3], n0[3], la[3], lb[3], vr[3], F[3], D[3], ft[3], hgt, gap, fn, dfn, cn, kt, en, dis, es, m;
    int            slip;
    if (b != lastb) {
      PetscCall(DemPlaneGetNormal(sim->shapes[bs->shape[b]], n0));
      DemQuatRotate(&q[4 * b], n0, n);
      lastb = b;
    }
    for (int j = 0; j < 3; j++) d[j] = x[3 * a + j] - x[3 * b + j];
    hgt = d[0] * n[0] + d[1] * n[1] + d[2] * n[2];
    gap = hgt - bs->radius[a];
    if (!(gap < 0)) {
      if (commit) DemFrictionReset_Private(h);
      continue;
    }
    for (int j = 0; j < 3; j++) {
      la[j] = -(bs->radius[a] + 0.5 * gap) * n[j];
      lb[j] = d[j] + la[j];
    }
    {
      const PetscReal *wa = w + 3 * a, *wb = w + 3 * b;
      vr[0] = (v[3 * a] + wa[1] * la[2] - wa[2] * la[1]) - (v[3 * b] + wb[1] * lb[2] - wb[2] * lb[1]);
      vr[1] = (v[3 * a + 1] + wa[2] * la[0] - wa[0] * la[2]) - (v[3 * b + 1] + wb[2] * lb[0] - wb[0] * lb[2]);
      vr[2] = (v[3 * a + 2] + wa[0] * la[1] - wa[1] * la[0]) - (v[3 * b + 2] + wb[0] * lb[1] - wb[1] * lb[0]);
    }
    {
      const PetscReal imab = bs->inv_m[a] + bs->inv_m[b];
      m = imab > 0 ? 1.0 / imab : PETSC_MAX_REAL;
    }
    DemHookeContact_Private(hk, n, vr, gap, m, bs->radius[a], hk->hertz, h, dt, commit, &fn, ft, &dfn, &cn, &kt, &en, &dis, &slip, D, &es);
    for (int j = 0; j < 3; j++) F[j] = fn * n[j] + ft[j];
    DemPairForceApply_Private(f, t, a, b, la, lb, F);
    if (fd) DemPairForceApply_Private(fd, td, a, b, la, lb, D);
    sum->pe += en;
    sum->es += es;
    sum->dr += dis;
    sum->nc++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the constants of DemFusedUniform from the batch's first pair: im0 the inverse mass of its first
   mobile body (none: set = 0), r0 the radius of its first body; each block of the blocked loop
   checks its own contacts against them. MMDEM_NO_UNIFORM=1: never (tests/cases/fused_uniform.py
   compares) */
static void DemHookeFusedUniformSet(const DemPairBatch *pb, const DemBodyStore *bs, DemFusedUniform *un)
{
  static int      off = -1;
  const PetscInt  a = pb->a[0], b = pb->b[0];
  const PetscReal im0 = bs->inv_m[a] > 0 ? bs->inv_m[a] : bs->inv_m[b], r0 = bs->radius[a];

  if (off < 0) off = getenv("MMDEM_NO_UNIFORM") && strcmp(getenv("MMDEM_NO_UNIFORM"), "0") ? 1 : 0;
  un->nblk = un->nuni = 0;
  un->set  = !off && im0 > 0 && PetscIsNormalReal(im0) && r0 > 0 && PetscIsNormalReal(r0);
  un->c1   = im0;
  un->c2   = im0 + im0;
  un->m1   = un->set ? 1.0 / un->c1 : 0;
  un->m2   = un->set ? 1.0 / un->c2 : 0;
  un->r0   = r0;
  un->reff = un->set ? r0 * r0 / (r0 + r0) : 0;
}

PetscErrorCode DemContactLawFusedPairs_Hooke(DemContactLaw law, const DemPairBatch *pb, PetscReal dt, PetscBool commit, DemForceOut *out, PetscBool *handled)
{
  const DemContactLaw_Hooke *hk  = (const DemContactLaw_Hooke *)law->data;
  DemSim                     sim = pb->sim;
  DemBodyStore              *bs;
  PetscReal                 *hist;
  DemFusedSums               sum = {0, 0, 0, 0};

  PetscFunctionBegin;
  *handled = PETSC_FALSE;
  /* with one law the history stride is this law's 4 reals (friction.h) */
  if (sim->histsize != DEM_FRICTION_HISTSIZE) PetscFunctionReturn(PETSC_SUCCESS);
  if (pb->ka != DEM_KIND_SPHERE || (pb->kb != DEM_KIND_SPHERE && pb->kb != DEM_KIND_PLANE)) PetscFunctionReturn(PETSC_SUCCESS);
  if (!pb->n) {
    *handled = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DemSimGetBodies(sim, &bs));
  /* the pairs of a batch are consecutive in the list: their history too */
  hist = sim->nl.history + DEM_FRICTION_HISTSIZE * pb->pair[0];
  if (pb->kb == DEM_KIND_SPHERE) {
    /* periodic: the pairs' image indices (neighbour.c); pb->shift is not read (forces.c passes
       none to the fused laws: the shift vectors are made only for the generic pipeline) */
    const PetscInt  *S = (sim->periodic[0] || sim->periodic[1] || sim->periodic[2]) ? sim->nl.shiftidx + pb->pair[0] : NULL;
    const PetscReal *x = pb->state->x, *v = pb->state->v, *w = pb->state->w;
    PetscReal        tbl[27][3];
    const int        withfd = out->fd && out->td;
    const int        withpe = !(commit && sim->skip_pe); /* pe_contact wanted (run.c, verlet.c) */
    /* software prefetch only where the columns the loop reads and updates at random (x, v, w,
       f, t, fd, td, radius, 1/m: 184 B per body) outgrow four second-level caches
       (DemHookeFusedPfMinBytes) */
    const int        pf = (double)(bs->n + bs->nghost) * 184.0 > DemHookeFusedPfMinBytes();
    if (S) { /* image shifts from the image index (neighbour.c): no per-pair shift vectors read */
      const PetscReal L[3] = {sim->hi[0] - sim->lo[0], sim->hi[1] - sim->lo[1], sim->hi[2] - sim->lo[2]};
      for (int s = 0; s < 27; s++) DemImageShift_Private(s, L, tbl[s]);
    }
    DemContactLaw_Hooke *hw = (DemContactLaw_Hooke *)law->data;
    PetscInt             nt;
    PetscBool            known;
    DemFusedUniform      un;
    /* touch[]: explicit steps (commit, fd wanted) go chunk by chunk (DemHookeFusedChunked) and
       need one chunk's touching pairs only, 8 KB instead of 4 B per pair of the list (chute,
       136000 pairs: 0.6 MB allocated, of which the pages once written stayed resident; peak
       RSS over 300 steps 65812 -> 65584 kB); the other variants a batch's */
    const PetscInt ntouch = commit && withfd ? PetscMin(pb->n, DEM_CHUNK) : pb->n;
    if (pb->n > hw->wascap) {
      PetscCall(PetscFree(hw->was));
      hw->wascap     = DemGrowCap_Private(pb->n);
      hw->prev_valid = PETSC_FALSE;
      PetscCall(PetscMalloc1(hw->wascap, &hw->was));
    }
    if (ntouch > hw->touchcap) {
      PetscCall(PetscFree(hw->touch));
      hw->touchcap = ntouch == pb->n ? DemGrowCap_Private(ntouch) : ntouch;
      PetscCall(PetscMalloc1(hw->touchcap, &hw->touch));
    }
    /* was[] holds the touching pairs of the last committed evaluation if it was the last
       step's on this same list (no rebuild, no generic-pipeline step, no restart in between) */
    DemHookeFusedUniformSet(pb, bs, &un);
    known = (commit && hw->prev_valid && hw->prev_step == sim->step - 1 && hw->prev_builds == sim->nl.nbuilds && hw->prev_npair == pb->n && hw->prev_pair0 == pb->pair[0] && hw->prev_hist == sim->nl.history) ? PETSC_TRUE : PETSC_FALSE;
#if DEM_HAVE_ISA_V4
    if (DemIsaV4()) nt = DemHookeFusedBatch_V4(hk, pb->n, pb->a, pb->b, S, tbl, hist, x, v, w, bs->radius, bs->inv_m, hw->touch, hw->was, out, dt, commit ? 1 : 0, known ? 1 : 0, withfd, withpe, sim->nl.noshift_first ? 1 : 0, hk->hertz ? 1 : 0, pf, &un, &sum);
    else
#endif
#if DEM_HAVE_ISA_V3
    if (DemIsaV3()) nt = DemHookeFusedBatch_V3(hk, pb->n, pb->a, pb->b, S, tbl, hist, x, v, w, bs->radius, bs->inv_m, hw->touch, hw->was, out, dt, commit ? 1 : 0, known ? 1 : 0, withfd, withpe, sim->nl.noshift_first ? 1 : 0, hk->hertz ? 1 : 0, pf, &un, &sum);
    else
#endif
      nt = DemHookeFusedBatch_Generic(hk, pb->n, pb->a, pb->b, S, tbl, hist, x, v, w, bs->radius, bs->inv_m, hw->touch, hw->was, out, dt, commit ? 1 : 0, known ? 1 : 0, withfd, withpe, sim->nl.noshift_first ? 1 : 0, hk->hertz ? 1 : 0, pf, &un, &sum);
    (void)nt;
    hw->nblk += un.nblk;
    hw->nuni += un.nuni;
    if (commit) { /* was[] now describes this evaluation */
      hw->prev_valid  = PETSC_TRUE;
      hw->prev_step   = sim->step;
      hw->prev_builds = sim->nl.nbuilds;
      hw->prev_npair  = pb->n;
      hw->prev_pair0  = pb->pair[0];
      hw->prev_hist   = sim->nl.history;
    }
  } else PetscCall(DemHookeFusedSP(hk, sim, pb, hist, dt, commit, out, &sum));
  out->pe_contact += sum.pe;
  out->eslip += sum.es;
  out->dissip_rate += sum.dr;
  out->ncontacts += sum.nc;
  *handled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
