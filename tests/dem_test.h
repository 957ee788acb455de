/*
  dem_test.h - the assertions of mmdem's C tests. Each check prints one line,
  "ok - NAME" or "not ok - NAME: detail"; tests/run.sh counts them and prints
  "N passed, N failed". A test program returns the number of failed checks.
*/
#pragma once
#include <stdio.h>
#include <math.h>

static int dem_test_failed = 0;

#define DEM_CHECK(name, cond, ...) \
  do { \
    if (cond) printf("ok - %s\n", name); \
    else { \
      printf("not ok - %s: ", name); \
      printf(__VA_ARGS__); \
      printf("\n"); \
      dem_test_failed++; \
    } \
    fflush(stdout); \
  } while (0)

/* |val - ref| <= rtol * |ref| (or <= rtol when ref == 0) */
#define DEM_CHECK_REL(name, val, ref, rtol) \
  do { \
    double _v = (double)(val), _r = (double)(ref), _t = (double)(rtol); \
    double _e = fabs(_v - _r) / (fabs(_r) > 0 ? fabs(_r) : 1.0); \
    DEM_CHECK(name, _e <= _t && _v == _v, "got %.12g, expected %.12g, rel. error %.3g > %.3g", _v, _r, _e, _t); \
  } while (0)

#define DEM_CHECK_ABS(name, val, ref, atol) \
  do { \
    double _v = (double)(val), _r = (double)(ref), _t = (double)(atol); \
    DEM_CHECK(name, fabs(_v - _r) <= _t && _v == _v, "got %.12g, expected %.12g, abs. error %.3g > %.3g", _v, _r, fabs(_v - _r), _t); \
  } while (0)
