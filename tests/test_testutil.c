/* The float comparison helpers of testutil.c: the magnitude-scaled tolerance and the ULP distance. */
#include <math.h>
#include <string.h>
#include "testutil.h"

int main(void) {
    /* the case that motivated the scaled atol: a near-zero output among values ~500, off by 2.6e-4
     * after a reordered sum, passes; the same error on a value of 1 among values ~1 does not */
    const float want[4] = { 500.0f, -480.0f, 0.001f, 250.0f };
    float got[4] = { 500.00018f, -480.0f, 0.001f + 2.6e-4f, 250.0f };
    CHECK(tu_close_err(got, want, 4, TU_TOL(1e-4, 1e-5, 0), NULL) <= 1);
    CHECK(tu_close_err(got, want, 4, TU_TOL(1e-4, 0, 1e-6), NULL) > 1);   /* purely relative: fails */
    const float small_want[3] = { 1.0f, 0.5f, 0.001f };
    const float small_got[3] = { 1.0f, 0.5f, 0.001f + 2.6e-4f };
    size_t at = 9;
    CHECK(tu_close_err(small_got, small_want, 3, TU_TOL(1e-4, 1e-5, 0), &at) > 1 && at == 2);
    /* NaN matches NaN only, infinities only themselves */
    const float nw[3] = { NAN, INFINITY, 1.0f }, ng[3] = { NAN, INFINITY, 1.0f };
    CHECK(tu_close_err(ng, nw, 3, TU_TOL(0, 0, 0), NULL) == 0);
    const float ng2[3] = { 0.0f, INFINITY, 1.0f }, ng3[3] = { NAN, -INFINITY, 1.0f }, ng4[3] = { NAN, INFINITY, NAN };
    CHECK(isinf(tu_close_err(ng2, nw, 3, TU_TOL(1, 1, 1), &at)) && at == 0);
    CHECK(isinf(tu_close_err(ng3, nw, 3, TU_TOL(1, 1, 1), &at)) && at == 1);
    CHECK(isinf(tu_close_err(ng4, nw, 3, TU_TOL(1, 1, 1), &at)) && at == 2);
    /* all-zero reference with zero tolerance: only exact zeros pass */
    const float z[2] = { 0.0f, -0.0f }, zg[2] = { -0.0f, 1e-30f };
    CHECK(tu_close_err(zg, z, 1, TU_TOL(0, 0, 0), NULL) == 0);
    CHECK(tu_close_err(zg, z, 2, TU_TOL(0, 0, 0), NULL) > 1);
    CHECK(CHECK_CLOSE(got, want, 4, TU_TOL(1e-4, 1e-5, 0), "motivating case"));
    /* ULPs: next representable float is 1 ulp, across zero counts both sides, +0 == -0 */
    float a[4] = { 1.0f, 0.0f, -1e-45f, NAN }, b[4] = { 1.0f, -0.0f, 1e-45f, NAN };
    CHECK(tu_max_ulp(a, b, 4, NULL) == 2);                  /* -denorm_min vs +denorm_min */
    b[0] = nextafterf(1.0f, 2.0f);
    CHECK(tu_max_ulp(a, b, 2, &at) == 1 && at == 0);
    b[3] = 1.0f;
    CHECK(tu_max_ulp(a, b, 4, &at) == UINT32_MAX && at == 3);
    CHECK(tu_max_ulp(a, a, 3, NULL) == 0);
    return tu_finish();
}
