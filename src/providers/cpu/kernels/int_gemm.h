/* Exact 8-bit integer GEMM: C[i][j] = sum_k (A[i][k] - za[i]) * (B[k][j] - zb[j]) in int32.
 * Both operands are widened to int16 with their zero points already subtracted (|v| <= 255), and
 * K is consumed in pairs: a pair of int16 products summed into int32 (vpmaddwd) is at most
 * 2 * 255 * 255, so nothing saturates and the int32 sum is the one the scalar loop computes
 * (wrapping alike on overflow). Subtracting the zero points while widening costs nothing extra
 * (the widening pass runs anyway) and saves the row/column-sum corrections.
 * Packed B: panels of NR columns; panel jp holds, for each k pair p, NR (b[2p][j], b[2p+1][j])
 * int16 pairs. Packed A: rows padded to a multiple of MR, each row kp int16 (K rounded up to
 * even, zero-filled). */
#ifndef CORT_CPU_KERNELS_INT_GEMM_H
#define CORT_CPU_KERNELS_INT_GEMM_H
#include <stddef.h>
#include <stdint.h>
#include "../../../core/cpu_features.h"
#include "../../../core/threadpool.h"

/* One MR x NR tile: c[i * ldc + j] = sum_p a[i * lda + 2p .. 2p+1] . b[p * 2NR + 2j .. 2j+1]
 * over kp2 = kp / 2 pairs; a is packed A (lda int16 per row), b one packed B panel. */
typedef void (*nn_igemm_ukr_fn)(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
/* A byte (quad) kernel's MR x NR tile: a holds uint8 rows (lda bytes each), b one panel of int8 k quads (per
 * quad q, NR columns x 4 bytes); c[i * ldc + j] = sum_k a * b - rz[2i + 1] * cz[j] - rz[2i] * cz[NR + j] over
 * kq4 quads (wrapping int32), the zero-point corrections of the byte format (see nn_igemm_kernel.quad). */
typedef void (*nn_igemm_qukr_fn)(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                 const int32_t *rz, const int32_t *cz);
/* The conv byte kernel's tile for only the first n columns of its panel (see nn_igemm_kernel.qukr_cols). */
typedef void (*nn_igemm_cols_fn)(size_t kq4, const uint8_t *a, const int8_t *b, size_t n, int32_t *c, size_t ldc,
                                 const int32_t *rz, const int32_t *cz);
/* Requantization of a GEMM's int32 results into 8-bit y (conv outputs): row i of tile (i0, j0) ends as
 * y[(i0 + i) * ldy + j0 + j] = the rq_row expression (int_gemm.h, nn_qrq_row_fn) of its value with
 * bias[i0 + i] (0 without bias) and mult[i0 + i]. */
typedef struct nn_igemm_rq {
    const int32_t *bias;
    const float *mult;   /* every one finite */
    int32_t yzp;
    int is_signed;
    uint8_t *y;
    size_t ldy;
    /* 1: bias already holds each row's zero-point correction (weights' zero points all 0, the activations'
     * one value), so the kernel adds it and skips the per-row products with rz and cz */
    int folded;
} nn_igemm_rq;
/* The conv byte kernel's full-width tile (all nr columns, the first `rows` rows) requantized in registers. */
typedef void (*nn_igemm_rq_fn)(size_t kq4, const uint8_t *a, const int8_t *b, const int32_t *rz, const int32_t *cz,
                               const nn_igemm_rq *rq, size_t i0, size_t rows, size_t j0);
/* The widest edge an nn_igemm_cols_fn takes. */
#define NN_CUKR_COLS_MAX 12

/* ukr_half: the same tile for the first nr / 2 columns only (it reads half of each packed-B row and
 * writes nr / 2 columns): edge panels with at most nr / 2 real columns (a 7x7 plane leaves 1 of 16)
 * cost half.
 * ukr1: one row of A against one panel (lda and ldc unused): products of at most mr / 2 rows (a
 * batch-1 fully connected layer) run it per row instead of a tile of mostly zero rows. */
typedef struct nn_igemm_kernel {
    const char     *name;
    cort_isa_level  isa;
    size_t          mr, nr;
    nn_igemm_ukr_fn ukr;
    nn_igemm_ukr_fn ukr_half;
    nn_igemm_ukr_fn ukr1;
    /* quad: a byte kernel (vpdpbusd: uint8 x int8, 4 k per int32 lane) instead of the int16 pairs above
     * (ukr, ukr_half, ukr1 NULL). Its packs keep the bytes as given, moved into the kernel's signedness by
     * flipping the top bit (x ^ 0x80 = x +- 128, the zero point moved alike), plus per row of A its zero
     * point za and sum_k (a - za), per column of B its zero point zb and sum_k b, from which
     * sum (a - za)(b - zb) = sum a * b - zb * sum (a - za) - za * sum b (exact mod 2^32, as the int16
     * kernels' wrapping sums). Only nn_igemm_pack_a / _pack_b / nn_igemm / nn_igemm_epi handle its packs. */
    /* quad 2: the conv byte kernel, signedness swapped: a holds int8 weights (broadcast), b uint8 panels (the
     * activations, the vector operand of vpdpbusd); rz/cz and the correction as for quad 1 with the roles
     * of the types exchanged. Its A interleaves each tile of mr rows by k quad: byte p of row i of a tile
     * at (p / 4) * 4 mr + 4 i + p % 4 (the tile still mr * kq bytes, the row corrections after all tiles);
     * no qukr1 (few-row tiles run the full kernel). Packed by the conv code itself; nn_igemm /
     * nn_igemm_epi run it. */
    int              quad;
    nn_igemm_qukr_fn qukr;
    nn_igemm_qukr_fn qukr1;
    /* quad 2 only, optional: the tile for the first n (1 .. cols_max) columns of a panel (c[i * ldc + j],
     * j < n), for edge panels with few real columns; its cost grows with n instead of being nr's. */
    nn_igemm_cols_fn qukr_cols;
    size_t           cols_max;
    /* quad 2 only, optional: the full-width tile requantized in registers (nn_igemm_rq) */
    nn_igemm_rq_fn   qukr_rq;
    /* optional: the tile for the first mr / 2 rows (edge tiles of at most mr / 2 rows; with a qukr1,
     * those of 3 or more: qukr1 per row would reread the panel too often) */
    nn_igemm_qukr_fn qukr_top;
    /* quad 2 only: 1 when A's rows are stored whole (row i of a tile at i * kq bytes, the K quads in
     * order) instead of interleaved by quad (the AMX tile reads rows) */
    int              a_rows;
    /* optional: called on the worker's thread before and after each range of tiles (AMX loads its tile
     * configuration and releases the tile state there) */
    void (*qbegin)(void);
    void (*qend)(void);
} nn_igemm_kernel;

/* The int16-pair kernel the ISA level in use picks first (the conv code builds int16 packs itself). */
const nn_igemm_kernel *nn_igemm_best_kernel(void);
/* The kernel for callers that pack only through nn_igemm_pack_a / _pack_b (MatMul-like ops): a byte
 * kernel where the CPU has one at the level in use, else nn_igemm_best_kernel(). */
const nn_igemm_kernel *nn_igemm_best_mm_kernel(void);
/* Every kernel the level in use may run (tests run each): the int16-pair kernels best first, then the
 * byte kernel if the CPU has one. */
size_t nn_igemm_kernels(const nn_igemm_kernel *const **out);

/* The conv byte kernel (quad 2) the level in use offers, or NULL (then the int16-pair kernels). */
const nn_igemm_kernel *nn_igemm_conv_kernel(void);
/* The conv byte kernel for a group's M output channels of K taps: nn_igemm_conv_kernel, except that an
 * AMX tile is used only from NN_AMX_CONV_MIN_M channels and NN_AMX_CONV_MIN_K taps (else the next). */
#ifndef NN_AMX_CONV_MIN_M
#define NN_AMX_CONV_MIN_M 64
#endif
#ifndef NN_AMX_CONV_MIN_K
#define NN_AMX_CONV_MIN_K 256
#endif
const nn_igemm_kernel *nn_igemm_conv_kernel_for(size_t M, size_t K);
/* Every conv byte kernel the level in use may run (tests run each); may be 0. */
size_t nn_igemm_conv_kernels(const nn_igemm_kernel *const **out);

/* K rounded up to even. */
static inline size_t nn_igemm_kp(size_t K) { return K + (K & 1); }
/* K rounded up to a multiple of 4 (a byte kernel's row length). */
static inline size_t nn_igemm_kq(size_t K) { return (K + 3) & ~(size_t)3; }
/* int16 elements of packed B / packed A (0 on size overflow). */
size_t nn_igemm_b_size(const nn_igemm_kernel *k, size_t K, size_t N);
size_t nn_igemm_a_size(const nn_igemm_kernel *k, size_t M, size_t K);

/* An 8-bit operand: elements of `data` (int8 if is_signed, else uint8); the zero point is zp[0]
 * (zp_count 1), zp[idx] (zp_count > 1: per row of A / per column of B), or 0 (zp NULL). */
typedef struct nn_i8_operand {
    const void *data;
    int         is_signed;
    size_t      ld;            /* row stride in elements */
    const void *zp;
    int         zp_signed;
    size_t      zp_count;
} nn_i8_operand;

void nn_igemm_pack_b(const nn_igemm_kernel *k, size_t K, size_t N, const nn_i8_operand *b, int16_t *out);
void nn_igemm_pack_a(const nn_igemm_kernel *k, size_t M, size_t K, const nn_i8_operand *a, int16_t *out);
/* C (M x N, row stride ldc) from packed operands; threaded over tiles. */
void nn_igemm(cort_pool *pool, const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
              const int16_t *bpack, int32_t *c, size_t ldc);

/* Integer conv helpers per ISA level (QLinearConv / ConvInteger):
 * dw_taps: depthwise over a flattened plane, y[o] = sum_{t<ntaps} x[off[t] + o] * w[t] for o < n (x int16 with
 *   the zero point subtracted, w int16 taps; exact int32, wrapping like the scalar loop's uint32 sum).
 * rq_row: dst[q] = sat8(nn_q_add_sat(round_half_even((float)(int32)(acc[q] + bias) * mult), yzp)), int8 when
 *   is_signed else uint8 (QLinearConv's requantization; mult must be finite).
 * pack2_16: interleave two int16 rows into 16-column packed-B panels: for q < n (a multiple of 16),
 *   out[(q / 16) * pstride + 2 * (q % 16)] = ra[q] and [.. + 1] = rb[q].
 * widen: out[i] = x[i] - zp for i < n (x int8 if is_signed, else uint8).
 * widen2: the same, deinterleaved: ev[i] = x[2i] - zp for i < (n + 1) / 2, od[i] = x[2i + 1] - zp for i < n / 2.
 * rq_tile_cols: the same without bias and with one multiplier per column: dst[r * ldd + q] =
 *   sat8(nn_q_add_sat(round_half_even((float)acc[r * ldt + q] * mult[q]), yzp)) for q < cols <= 16 (QLinearMatMul's
 *   per-column weight scales; any multiplier: a non-finite one takes the portable expression).
 * rq_tile: rq_row for rows r < rows of a GEMM tile: acc + r * ldt (cols <= 16 values) with bias[r] (0 when bias
 *   is NULL) and mult[r] (any value: a non-finite one takes the portable expression) into dst + r * ldd.
 * pack2_8: pack2_16 straight from 8-bit rows: ra[q] = xa[q] - zp, rb[q] = xb[q] - zp (0 when xb is NULL) for
 *   q < n, and 0 for the columns from n to the next multiple of 16.
 * wino_in: Winograd F(2x2, 3x3) input transform of n tiles along a tile row: e[i], o[i] (i < 4, n + 1 each)
 *   hold the even and odd columns of the tile row's input row i; v[xi * vstride + t] = (B^T d B)[xi / 4][xi % 4]
 *   of tile t, d the 4x4 block (e[i][t], o[i][t], e[i][t+1], o[i][t+1]). |d| <= 255 keeps |v| <= 1020. */
typedef void (*nn_qdw_taps_fn)(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps,
                               const int16_t *w);
typedef void (*nn_qrq_row_fn)(const int32_t *acc, size_t n, int32_t bias, float mult, int32_t yzp, int is_signed,
                              void *dst);
typedef void (*nn_qpack2_fn)(const int16_t *ra, const int16_t *rb, size_t n, int16_t *out, size_t pstride);
typedef void (*nn_qwiden_fn)(const void *x, size_t n, int is_signed, int32_t zp, int16_t *out);
typedef void (*nn_qwiden2_fn)(const void *x, size_t n, int is_signed, int32_t zp, int16_t *ev, int16_t *od);
typedef void (*nn_qwino_in_fn)(const int16_t *const *e, const int16_t *const *o, size_t n, int16_t *v,
                               size_t vstride);
typedef void (*nn_qpack2_8_fn)(const void *xa, const void *xb, size_t n, int is_signed, int32_t zp, int16_t *out,
                               size_t pstride);
typedef void (*nn_qrq_tile_fn)(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                               const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd);
typedef void (*nn_qrq_tile_cols_fn)(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const float *mult,
                                    int32_t yzp, int is_signed, uint8_t *dst, size_t ldd);
/* quad4: four byte rows into a conv byte kernel's 16-column B panels: for q < n (a multiple of 16),
 *   out[(q / 16) * pstride + 4 * (q % 16) + r] = row r's byte q ^ flip. */
typedef void (*nn_qquad4_fn)(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, size_t n,
                             uint8_t flip, uint8_t *out, size_t pstride);
/* dwc16: a 2-D depthwise conv of nch <= 16 channels (one output channel per input channel) with the channels
 *   in vector lanes. x: nch planes of ih x iw bytes, plane stride xstride, int8 if is_signed, minus xzp;
 *   zero padding pt (top), pl (left) inside the hp x wp padded plane (which covers every tap);
 *   w: [kh * kw][16] floats, tap-major, the weights minus their zero point (lanes >= nch 0);
 *   out: nch planes of oh * ow int32 (plane stride oh * ow), out[c][i * ow + j] = sum over taps (ki, kj)
 *   of x[c][i * sh + ki * dh - pt][j * sw + kj * dw - pl] * w[ki * kw + kj][c], padding 0: exactly the
 *   integer sum when kh * kw <= NN_QDWC16_MAX_TAPS; or, when y is set, those sums requantized as rq_row does
 *   (bias[c], finite mult[c], yzp, y_signed) into nch planes of bytes at y (plane stride oh * ow); out
 *   may then be used as scratch (it must hold nch * oh * ow int32 either way).
 *   Scratch: xb hp * wp * 16 floats, tmp oh * ow * 16 int32. */
#define NN_QDWC16_MAX_TAPS 256
typedef struct nn_qdwc16_args {
    const uint8_t *x;
    size_t xstride, nch, ih, iw;
    int is_signed;
    int32_t xzp;
    size_t pt, pl, hp, wp;
    size_t kh, kw, sh, sw, dh, dw, oh, ow;
    const float *w;
    float *xb;
    int32_t *tmp;
    int32_t *out;
    uint8_t *y;
    const int32_t *bias;
    const float *mult;
    int32_t yzp;
    int y_signed;
} nn_qdwc16_args;
typedef void (*nn_qdwc16_fn)(const nn_qdwc16_args *a);
/* dwr16: one plane of a 2-D depthwise conv straight from its bytes, 16 outputs of a row per vector. Each
 *   kernel row's taps go in groups of four, one dword of int8 weights per group (taps past kw 0), against
 *   the four input bytes each output reads there, so a group is one multiply-add of bytes per 16 outputs.
 *   x: the ih x iw input plane, each byte XORed with flip (0x80 turns int8 into uint8) before use;
 *   outside the plane (padding) the byte is fill (the zero point as stored, also XORed).
 *   w: [kh][ng] dwords, group g of row r holding taps 4g..4g+3 as int8 (so kw <= 4 ng).
 *   sums: s[i][j] = bias + sum over r < kh, t < 4 ng of xb(i * sh + r * dh - pt, j * sw + t - pl) * w_r[t]
 *   (xb the flipped byte or fill, int32 wrapping): with bias = conv bias - zp_u * sum(w), zp_u the flipped
 *   zero point, this is the exact integer conv plus its bias. y set: s requantized as rq_row's expression
 *   (finite mult, yzp, y_signed) into the oh x ow bytes at y; else s stored at yint (oh x ow int32).
 *   Needs sw <= NN_QDWR16_MAX_SW (16 outputs' bytes in one 64-byte load). */
#define NN_QDWR16_MAX_SW 4
#define NN_QDWR16_MAX_ROWS 16
#define NN_QDWR16_MAX_GROUPS 2
typedef struct nn_qdwr16_args {
    const uint8_t *x;
    size_t ih, iw, oh, ow;
    size_t kh, ng, sh, sw, dh, pt, pl;
    uint8_t fill, flip;
    const int32_t *w;
    int32_t bias;
    float mult;
    int32_t yzp;
    int y_signed;
    uint8_t *y;
    int32_t *yint;
} nn_qdwr16_args;
typedef void (*nn_qdwr16_fn)(const nn_qdwr16_args *a);
/* cdirect16: one tile of a 2-D stride-1 conv computed from a quad-interleaved copy of its input, 16 output
 *   channels by 16 consecutive positions of the padded-width grid (positions p = oh * wp + ow, ow < wp, wp
 *   the padded input width; only ow < OW are outputs).
 *   The copy: per channel quad q, (hp * wp + slack) positions of 4 bytes, position (r, c) holding channels
 *   4q..4q+3 of padded input row r, column c, each byte XORed to uint8 (padding and missing channels: the
 *   zero point so XORed). x points at the tile's first position; off[t] is k quad t's byte offset from it:
 *   t = (q * kh + i) * kw + j at q * plane + (i * wp + j) * 4.
 *   a: the tile's weights, quad t of row r at 64 t + 4 r (int8 taps, zero point 0; rows past the real ones 0).
 *   sums: s[r][j] = bias[r] + sum over t of dot(x[off[t] + 4 j .. + 3], a[64 t + 4 r .. + 3]) (int32, wrapping);
 *   with bias = conv bias - zp_u * sum(w) (zp_u the XORed zero point) this is the exact integer conv plus
 *   its bias. Each s requantized as rq_row's expression (finite mult, yzp, is_signed) into row r < rows:
 *   byte j goes to y + r * ldy + delta[s] + j for the segment s whose mask has bit j (segments disjoint).
 *   bias and mult hold 16 entries. */
#define NN_QCDIRECT_MAX_SEG 3
typedef struct nn_qcdirect_args {
    size_t nq;
    const uint8_t *a;
    const uint8_t *x;
    const int32_t *off;
    const int32_t *bias;
    const float *mult;
    int32_t yzp;
    int is_signed;
    size_t rows;
    uint8_t *y;
    size_t ldy;
    size_t nseg;
    ptrdiff_t delta[NN_QCDIRECT_MAX_SEG];
    uint16_t mask[NN_QCDIRECT_MAX_SEG];
} nn_qcdirect_args;
typedef void (*nn_qcdirect_fn)(const nn_qcdirect_args *a);
typedef struct nn_qconv_ops {
    const char *name;
    nn_qdw_taps_fn dw_taps;
    nn_qrq_row_fn rq_row;
    nn_qpack2_fn pack2_16;
    nn_qwiden_fn widen;
    nn_qwiden2_fn widen2;
    nn_qwino_in_fn wino_in;
    nn_qpack2_8_fn pack2_8;
    nn_qrq_tile_fn rq_tile;
    nn_qrq_tile_cols_fn rq_tile_cols;
    nn_qquad4_fn quad4;
    nn_qdwc16_fn dwc16;   /* NULL: the level has none (depthwise convs take dw_taps) */
    nn_qdwr16_fn dwr16;   /* NULL: the set has none (the per-plane int16 path) */
    nn_qcdirect_fn cdirect16;   /* NULL: the set has none (im2col and the packed GEMM) */
} nn_qconv_ops;
const nn_qconv_ops *nn_qconv_best_ops(void);
/* Every set the level in use may run, best first (tests run each). */
size_t nn_qconv_ops_list(const nn_qconv_ops *const **out);
void nn_qdw_taps_generic(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps, const int16_t *w);
void nn_qrq_row_generic(const int32_t *acc, size_t n, int32_t bias, float mult, int32_t yzp, int is_signed, void *dst);
void nn_qpack2_16_generic(const int16_t *ra, const int16_t *rb, size_t n, int16_t *out, size_t pstride);
void nn_qwiden_generic(const void *x, size_t n, int is_signed, int32_t zp, int16_t *out);
void nn_qwiden2_generic(const void *x, size_t n, int is_signed, int32_t zp, int16_t *ev, int16_t *od);
void nn_qwino_in_generic(const int16_t *const *e, const int16_t *const *o, size_t n, int16_t *v, size_t vstride);
void nn_qpack2_8_generic(const void *xa, const void *xb, size_t n, int is_signed, int32_t zp, int16_t *out,
                         size_t pstride);
void nn_qrq_tile_generic(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                         const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd);
void nn_qquad4_generic(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, size_t n,
                       uint8_t flip, uint8_t *out, size_t pstride);
void nn_qrq_tile_cols_generic(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const float *mult, int32_t yzp,
                              int is_signed, uint8_t *dst, size_t ldd);

/* C = A * B with an epilogue instead of a store: each finished tile (rows x cols at (i0, j0), row
 * stride ldt) goes to fn while it is in L1, so no M x N int32 buffer makes a round trip to memory. */
typedef void (*nn_igemm_epi_fn)(void *ctx, const int32_t *tile, size_t ldt, size_t i0, size_t rows, size_t j0,
                                size_t cols);
void nn_igemm_epi(cort_pool *pool, const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
                  const int16_t *bpack, nn_igemm_epi_fn fn, void *ctx);
/* Byte (quad) kernels only: whether nn_igemm / nn_igemm_epi order their tiles by rows of A instead of by
 * panels of B (A the larger operand), and the tiles of panels [jp0, jp1) alone on the calling thread, panel
 * by panel, into c (ldc) or through fn when fn is set: for callers that pack their B panels inside their
 * own parallel loop, each thread multiplying the panels it just packed while they are in its cache. The
 * packs and their corrections are laid out as for nn_igemm (all panels' bytes, then their corrections). */
int nn_igemm_rows_major(const nn_igemm_kernel *k, size_t M, size_t N);
void nn_igemm_panels(const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
                     const int16_t *bpack, size_t jp0, size_t jp1, int32_t *c, size_t ldc, nn_igemm_epi_fn fn,
                     void *ctx, const nn_igemm_rq *rq);
/* nn_igemm_epi where full-width tiles go through the kernel's qukr_rq with rq when it has one (fn gets
 * the others). rq NULL: nn_igemm_epi. */
void nn_igemm_epi_rq(cort_pool *pool, const nn_igemm_kernel *k, size_t M, size_t N, size_t K, const int16_t *apack,
                     const int16_t *bpack, nn_igemm_epi_fn fn, void *ctx, const nn_igemm_rq *rq);

void nn_igemm_ukr_generic_4x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_generic_4x16_half(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_generic_1x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
#if defined(__x86_64__) || defined(__i386__)
#define NN_HAVE_X86_IGEMM 1
void nn_igemm_ukr_avx2_6x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avx2_6x16_half(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avx2_1x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avxvnni_6x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avxvnni_6x16_half(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avxvnni_1x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avx512_16x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avx512_16x16_half(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avx512_1x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avx512vnni_16x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_ukr_avx512vnni_16x16_half(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c,
                                        size_t ldc);
void nn_igemm_ukr_avx512vnni_1x16(size_t kp2, const int16_t *a, size_t lda, const int16_t *b, int32_t *c, size_t ldc);
void nn_igemm_qukr_avx512vnni_16x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                    const int32_t *rz, const int32_t *cz);
void nn_igemm_qukr_avx512vnni_1x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                   const int32_t *rz, const int32_t *cz);
void nn_igemm_qukr_avx512vnni_8x32(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                   const int32_t *rz, const int32_t *cz);
void nn_igemm_qukr_avx512vnni_1x32(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                   const int32_t *rz, const int32_t *cz);
void nn_igemm_qukr_amx_32x32(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                             const int32_t *rz, const int32_t *cz);
void nn_igemm_qukr_amx_16x32(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                             const int32_t *rz, const int32_t *cz);
void nn_igemm_cukr_amx_64x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                             const int32_t *rz, const int32_t *cz);
void nn_igemm_cukr_amx_32x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                             const int32_t *rz, const int32_t *cz);
void nn_igemm_amx_begin(void);
void nn_igemm_amx_end(void);
void nn_igemm_cukr_avx512vnni_16x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                    const int32_t *rz, const int32_t *cz);
void nn_igemm_cukr_rq_avx512vnni_16x16(size_t kq4, const uint8_t *a, const int8_t *b, const int32_t *rz,
                                       const int32_t *cz, const nn_igemm_rq *rq, size_t i0, size_t rows, size_t j0);
void nn_igemm_cukr_avx512vnni_16xn(size_t kq4, const uint8_t *a, const int8_t *b, size_t n, int32_t *c, size_t ldc,
                                   const int32_t *rz, const int32_t *cz);
void nn_igemm_qukr_avxvnni_6x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                const int32_t *rz, const int32_t *cz);
void nn_igemm_qukr_avxvnni_1x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                const int32_t *rz, const int32_t *cz);
void nn_igemm_cukr_avxvnni_6x16(size_t kq4, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,
                                const int32_t *rz, const int32_t *cz);
void nn_qquad4_avx2(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, size_t n, uint8_t flip,
                    uint8_t *out, size_t pstride);
void nn_qdw_taps_avx2(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps, const int16_t *w);
void nn_qpack2_16_avx2(const int16_t *ra, const int16_t *rb, size_t n, int16_t *out, size_t pstride);
void nn_qwiden_avx2(const void *x, size_t n, int is_signed, int32_t zp, int16_t *out);
void nn_qwiden2_avx2(const void *x, size_t n, int is_signed, int32_t zp, int16_t *ev, int16_t *od);
void nn_qwino_in_avx2(const int16_t *const *e, const int16_t *const *o, size_t n, int16_t *v, size_t vstride);
void nn_qpack2_8_avx2(const void *xa, const void *xb, size_t n, int is_signed, int32_t zp, int16_t *out,
                      size_t pstride);
void nn_qrq_tile_cols_avx2(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const float *mult, int32_t yzp,
                           int is_signed, uint8_t *dst, size_t ldd);
void nn_qrq_tile_avx2(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                      const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd);
void nn_qrq_row_avx2(const int32_t *acc, size_t n, int32_t bias, float mult, int32_t yzp, int is_signed, void *dst);
void nn_qdw_taps_avx512(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps, const int16_t *w);
void nn_qdw_taps_avx512vnni(int32_t *y, size_t n, const int16_t *x, const size_t *off, size_t ntaps, const int16_t *w);
void nn_qwiden_avx512(const void *x, size_t n, int is_signed, int32_t zp, int16_t *out);
void nn_qwiden2_avx512(const void *x, size_t n, int is_signed, int32_t zp, int16_t *ev, int16_t *od);
void nn_qquad4_avx512(const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3, size_t n,
                      uint8_t flip, uint8_t *out, size_t pstride);
void nn_qrq_tile_avx512(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const int32_t *bias,
                        const float *mult, int32_t yzp, int is_signed, uint8_t *dst, size_t ldd);
void nn_qrq_row_avx512(const int32_t *acc, size_t n, int32_t bias, float mult, int32_t yzp, int is_signed, void *dst);
void nn_qrq_tile_cols_avx512(const int32_t *acc, size_t ldt, size_t rows, size_t cols, const float *mult,
                             int32_t yzp, int is_signed, uint8_t *dst, size_t ldd);
void nn_qdwc16_avx512(const nn_qdwc16_args *a);
void nn_qdwc16_avx2(const nn_qdwc16_args *a);
void nn_qdwr16_avx512vbmi(const nn_qdwr16_args *a);
void nn_qcdirect16_avx512vnni(const nn_qcdirect_args *a);
#endif
#endif
