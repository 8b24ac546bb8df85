/* The CPU provider's op table (src/providers/cpu/op_table.c): sorted by (domain, name, first
 * version) as its binary search assumes, version ranges of one op disjoint, every entry complete,
 * and lookups find exactly the entry whose range holds the opset. */
#include <string.h>
#include "testutil.h"
#include "graph/op.h"

int main(void) {
    const cort_op_def *const *t = NULL;
    size_t n = cort_op_table(&t);
    CHECK(n > 150);
    for (size_t i = 0; i < n; i++) {
        const cort_op_def *e = t[i];
        CHECK(e->name && e->name[0] && e->domain && e->infer && e->run);
        CHECK(strcmp(e->domain, "ai.onnx") != 0);   /* ai.onnx is spelled "" */
        CHECK(e->min_opset >= 1 && e->min_opset <= e->max_opset && e->max_opset <= CORT_OPSET_MAX);
        if (i) {
            const cort_op_def *p = t[i - 1];
            int c = strcmp(p->domain, e->domain);
            if (!c) c = strcmp(p->name, e->name);
            CHECK_MSG(c < 0 || (c == 0 && p->max_opset < e->min_opset), "%s:%s %d-%d after %s:%s %d-%d", e->domain,
                      e->name, e->min_opset, e->max_opset, p->domain, p->name, p->min_opset, p->max_opset);
        }
        CHECK(cort_op_find(e->domain, e->name, e->min_opset) == e);
        CHECK(cort_op_find(e->domain, e->name, e->max_opset) == e);
        int lo = 0, hi = 0;
        CHECK(cort_op_known(e->domain, e->name, &lo, &hi) && lo <= e->min_opset && hi >= e->max_opset);
    }
    /* Every ai.onnx op is selected up to the newest opset (its newest version handles every later
     * opset until ONNX defines another), except the ops ONNX removed (Upsample after 9, Scatter
     * after 10) and those still waiting for their versions with the new element types. */
    static const char *const capped[] = { "Upsample", "Scatter", "Cast", "CastLike", "QuantizeLinear",
                                          "DequantizeLinear", "QLinearMatMul" };
    for (size_t i = 0; i < n; i++) {
        const cort_op_def *e = t[i];
        if (e->domain[0] || (i + 1 < n && !t[i + 1]->domain[0] && !strcmp(t[i + 1]->name, e->name))) continue;
        int exempt = 0;
        for (size_t k = 0; k < sizeof capped / sizeof capped[0]; k++) exempt |= !strcmp(capped[k], e->name);
        if (!exempt) CHECK_MSG(e->max_opset == CORT_OPSET_MAX, "ai.onnx %s ends at opset %d", e->name, e->max_opset);
    }
    CHECK(cort_op_find("ai.onnx", "Relu", 14) == cort_op_find("", "Relu", 14));
    CHECK(cort_op_find("", "Relu", 14) != NULL);
    CHECK(cort_op_find("", "Conv", 0) == NULL);
    CHECK(cort_op_find("", "NoSuchOp", 13) == NULL);
    CHECK(cort_op_find("com.example", "Relu", 13) == NULL);
    CHECK(!cort_op_known("", "NoSuchOp", NULL, NULL));
    CHECK(cort_op_find("", "Resize", 9) == NULL && cort_op_find("", "Upsample", 9) != NULL);
    return tu_finish();
}
