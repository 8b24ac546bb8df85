/* Float and double instantiations of the recurrent cell math (ops/rnn/rnn_cell_impl.h): the entry
 * points mi_rnn_compute_f32 and mi_rnn_compute_f64 (rnn.h) are defined there under MI_COMPUTE. */
#include <math.h>
#include <string.h>
#include "rnn.h"

#define MI_T float
#define MI_FN(name) name##_f32
#define MI_COMPUTE mi_rnn_compute_f32
#define MI_EXP expf
#define MI_TANH tanhf
#define MI_LOG1P log1pf
#include "rnn_cell_impl.h"
#undef MI_T
#undef MI_FN
#undef MI_COMPUTE
#undef MI_EXP
#undef MI_TANH
#undef MI_LOG1P

#define MI_T double
#define MI_FN(name) name##_f64
#define MI_COMPUTE mi_rnn_compute_f64
#define MI_EXP exp
#define MI_TANH tanh
#define MI_LOG1P log1p
#include "rnn_cell_impl.h"
