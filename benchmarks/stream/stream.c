/*
  stream.c - a STREAM-like memory bandwidth measurement for the roofline estimate of
  benchmarks/stream/README.md: copy (a = b), scale (a = s b), add (a = b + c) and triad
  (a = b + s c) over arrays larger than the last-level cache, best of REPEAT passes, bytes
  counted as STREAM does (copy and scale 16 B per element, add and triad 24 B).
  Single thread. Usage: stream [MiB per array, default 256] [repeat, default 5]
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
  size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256, n = mib * 1024 * 1024 / sizeof(double);
  int    rep = argc > 2 ? atoi(argv[2]) : 5;
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
  const char *name[4] = {"copy", "scale", "add", "triad"};
  const double bytes[4] = {16, 16, 24, 24};
  double best[4] = {1e30, 1e30, 1e30, 1e30}, s = 3.0, chk = 0;

  if (!a || !b || !c || rep < 1) {
    fprintf(stderr, "stream: cannot allocate 3 x %zu MiB\n", mib);
    return 1;
  }
  for (size_t i = 0; i < n; i++) a[i] = 1.0, b[i] = 2.0, c[i] = 0.5;
  for (int r = 0; r < rep; r++) {
    double t;
    t = now();
    for (size_t i = 0; i < n; i++) a[i] = b[i];
    t = now() - t; if (t < best[0]) best[0] = t;
    t = now();
    for (size_t i = 0; i < n; i++) b[i] = s * a[i];
    t = now() - t; if (t < best[1]) best[1] = t;
    t = now();
    for (size_t i = 0; i < n; i++) c[i] = a[i] + b[i];
    t = now() - t; if (t < best[2]) best[2] = t;
    t = now();
    for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
    t = now() - t; if (t < best[3]) best[3] = t;
  }
  for (size_t i = 0; i < n; i += 4096) chk += a[i] + b[i] + c[i]; /* keeps the loops */
  printf("arrays: 3 x %zu MiB, best of %d (checksum %g)\n", mib, rep, chk);
  for (int k = 0; k < 4; k++) printf("%-6s %8.2f GB/s\n", name[k], bytes[k] * n / best[k] / 1e9);
  free(a), free(b), free(c);
  return 0;
}
