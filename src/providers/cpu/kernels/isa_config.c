/* One nn_isa_config per ISA level; see isa_config.h. */
#include "isa_config.h"
#include "copy_ukernels.h"
#include "act_ukernels.h"
#include "quant_ukernels.h"

static const nn_isa_config generic_config = { .isa = CORT_ISA_GENERIC };
static const nn_isa_config neon_config = { .isa = CORT_ISA_NEON };

#ifdef NN_HAVE_X86_UKERNELS
static const nn_isa_config avx2_config = {
    .isa = CORT_ISA_AVX2,
    .copy_stride2 = nn_copy_stride2_avx2,
    .copy_stride2_u8 = nn_copy_stride2_u8_avx2,
    .copy_rep2 = nn_copy_rep2_avx2,
    .interleave2 = nn_interleave2_avx2,
    .transpose16 = nn_transpose16_avx2,
    .transpose_scaled = nn_transpose_avx2,
    .minmax = nn_minmax_f32_avx2,
    .quantize8 = nn_quantize8_f32_avx2,
    .lut16_u8 = nn_lut16_u8_avx2,
    .dequantize8 = nn_dequantize8_f32_avx2,
    .qadd8_fixed = nn_qadd8_fixed_avx2,
    .i32_scale = nn_i32_scale_f32_avx2,
    .u8_sum = nn_u8_sum_avx2,
    .pool_rows_max = nn_pool_rows_max_avx2,
    .pool_rows_sum = nn_pool_rows_sum_avx2,
    .pool_window_max = nn_pool_window_max_avx2,
    .pool_window_avg = nn_pool_window_avg_avx2,
    .pool_max_k2s2 = nn_pool_max_k2s2_avx2,
    .pool_max_k3s2 = nn_pool_max_k3s2_avx2,
    .pool_sum = nn_pool_sum_avx2,
    .pool_max = nn_pool_max_avx2,
    .pool_rows_max8 = nn_pool_rows_max8_avx2,
    .pool_window_max8 = nn_pool_window_max8_avx2,
    .act_all = nn_act_all_avx2,
    .act_sigmoid_silu = nn_act_avx2,
    .gelu = nn_gelu_avx2,
    .exp_shift_sum = nn_exp_shift_sum_avx2,
};

static const nn_isa_config avx512_config = {
    .isa = CORT_ISA_AVX512,
    .copy_stride2 = nn_copy_stride2_avx512,
    .copy_stride2_u8 = nn_copy_stride2_u8_avx512,
    .copy_rep2 = nn_copy_rep2_avx512,
    .interleave2 = nn_interleave2_avx512,
    .transpose16 = nn_transpose16_avx512,
    .transpose_scaled = nn_transpose_avx512,
    .minmax = nn_minmax_f32_avx2,
    .quantize8 = nn_quantize8_f32_avx512,
    .lut16_u8 = nn_lut16_u8_avx512,
    .dequantize8 = nn_dequantize8_f32_avx512,
    .qbinary8 = nn_qbinary8_avx512,
    .i32_scale = nn_i32_scale_f32_avx512,
    .u8_sum = nn_u8_sum_avx512,
    .pool_rows_max = nn_pool_rows_max_avx512,
    .pool_rows_sum = nn_pool_rows_sum_avx512,
    .pool_max2d = nn_pool_max2d_avx512,
    .pool_avg2d = nn_pool_avg2d_avx512,
    .pool_sum = nn_pool_sum_avx512,
    .pool_max = nn_pool_max_avx512,
    .pool_rows_max8 = nn_pool_rows_max8_avx512,
    .pool_window_max8 = nn_pool_window_max8_avx512,
    .act_all = nn_act_avx512,
    .act_sigmoid_silu = nn_act_avx2,
    .gelu = nn_gelu_avx512,
    .exp_shift_sum = nn_exp_shift_sum_avx512,
};
#endif

const nn_isa_config *nn_isa(void) {
    switch (cort_cpu_isa()) {
#ifdef NN_HAVE_X86_UKERNELS
    case CORT_ISA_AVX512: return &avx512_config;
    case CORT_ISA_AVX2: return &avx2_config;
#endif
    case CORT_ISA_NEON: return &neon_config;
    default: return &generic_config;
    }
}

nn_lut8_fn nn_isa_lut8(void) {
#ifdef NN_HAVE_X86_UKERNELS
    if (cort_cpu_isa() == CORT_ISA_AVX512 && (cort_cpu_flags() & CORT_CPU_AVX512VBMI)) return nn_lut8_u8_avx512vbmi;
#endif
    return NULL;
}
