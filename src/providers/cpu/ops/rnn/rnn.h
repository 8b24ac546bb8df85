/* RNN / GRU / LSTM: attribute state and the per-run argument block shared by the float and double
 * instantiations of ops/rnn/rnn_cell_impl.h. */
#ifndef CORT_CPU_MI_RNN_H
#define CORT_CPU_MI_RNN_H
#include "../misc_common.h"

enum { MI_CELL_RNN = 0, MI_CELL_GRU = 1, MI_CELL_LSTM = 2 };
enum { MI_DIR_FORWARD = 0, MI_DIR_REVERSE = 1, MI_DIR_BIDI = 2 };
enum {
    MI_ACT_RELU, MI_ACT_TANH, MI_ACT_SIGMOID, MI_ACT_AFFINE, MI_ACT_LEAKYRELU, MI_ACT_THRESHOLDEDRELU,
    MI_ACT_SCALEDTANH, MI_ACT_HARDSIGMOID, MI_ACT_ELU, MI_ACT_SOFTSIGN, MI_ACT_SOFTPLUS
};

typedef struct mi_act { int kind; float alpha, beta; } mi_act;

typedef struct mi_rnn_state {
    int     cell;
    int     direction, n_dir;
    int64_t hidden;                  /* hidden_size attribute; 0 = take it from R */
    int     has_clip;
    float   clip;
    int     input_forget, linear_before_reset, layout;
    int     n_act;                   /* activations per direction: 1 RNN, 2 GRU, 3 LSTM */
    mi_act  act[6];                  /* [dir * n_act + k] */
} mi_rnn_state;

/* Validated shapes and raw data of one run. Pointers are NULL for absent inputs / unused outputs. */
typedef struct mi_rnn_args {
    const mi_rnn_state *st;
    int64_t S, Bt, I, H, D, G;      /* sequence length, batch, input size, hidden, directions, gates */
    const void *X, *W, *R, *B, *init_h, *init_c, *P;
    const int64_t *lens;             /* per batch, already validated to [0, S] */
    void *Y, *Y_h, *Y_c;
    cort_pool *pool;
    cort_kernel_ctx *kctx;           /* cancellation checks between timesteps; scratch (NULL: the allocator) */
} mi_rnn_args;

cort_status *mi_rnn_compute_f32(const mi_rnn_args *a);
cort_status *mi_rnn_compute_f64(const mi_rnn_args *a);
#endif
