/* Operator definitions of the elementwise family, declared for the files that define them; the provider lists them in op_table.c. */
#ifndef CORT_CPU_EW_OPS_H
#define CORT_CPU_EW_OPS_H
#include "../../../../graph/op.h"

#define EW_OPS_UNARY(X) X(abs) X(neg) X(floor) X(ceil) X(round) X(sqrt) X(reciprocal) X(exp) X(log) \
    X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(asinh) X(acosh) X(atanh) X(erf) X(sign) \
    X(isnan) X(isinf) X(not) X(bitwise_not)
#define EW_OPS_ACTIVATION(X) X(relu) X(leaky_relu) X(elu) X(selu) X(celu) X(sigmoid) X(hard_sigmoid) \
    X(hard_swish) X(tanh) X(softplus) X(softsign) X(thresholded_relu) X(shrink) X(mish) X(clip) X(prelu)
#define EW_OPS_BINARY(X) X(add) X(sub) X(mul) X(div) X(pow) X(mod)
#define EW_OPS_BITWISE(X) X(bitshift) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(and) X(or) X(xor)
#define EW_OPS_COMPARE(X) X(equal) X(greater) X(greater_or_equal) X(less) X(less_or_equal)
#define EW_OPS_VARIADIC(X) X(sum) X(mean) X(max) X(min)
#define EW_OPS_OTHER(X) X(where) X(cast) X(cast_like)
#define EW_OPS_ALL(X) EW_OPS_UNARY(X) EW_OPS_ACTIVATION(X) EW_OPS_BINARY(X) EW_OPS_BITWISE(X) \
    EW_OPS_COMPARE(X) EW_OPS_VARIADIC(X) EW_OPS_OTHER(X)

#define EW_DECLARE_OP(var) extern const cort_op_def ew_op_##var;
EW_OPS_ALL(EW_DECLARE_OP)
#undef EW_DECLARE_OP
#endif
