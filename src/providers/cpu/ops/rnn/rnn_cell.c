/* Float and double instantiations of the recurrent cell math (ops/rnn/rnn_cell_impl.h). */
#include <math.h>
#include <string.h>
#include "rnn.h"

#define MI_T float
#define MI_FN(name) name##_f32
#define MI_EXP expf
#define MI_TANH tanhf
#define MI_LOG1P log1pf
#include "rnn_cell_impl.h"
#undef MI_T
#undef MI_FN
#undef MI_EXP
#undef MI_TANH
#undef MI_LOG1P

#define MI_T double
#define MI_FN(name) name##_f64
#define MI_EXP exp
#define MI_TANH tanh
#define MI_LOG1P log1p
#include "rnn_cell_impl.h"
