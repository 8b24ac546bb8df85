/* Sequence operators (opset 11+). Sequences are immutable values: every operator that "changes" one
 * builds a new sequence whose items are retained references to the old items, never copies. */
#include <string.h>
#include "../misc_common.h"

/* ---- shared helpers ---- */
static cort_status *want_seq(const cort_kernel_ctx *ctx, size_t i, const char *what) {
    const cort_value *v = mi_in(ctx, i);
    if (!v) return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' is missing", i, what);
    if (v->kind != CORT_VKIND_SEQUENCE)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu '%s' must be a sequence (got value kind %d)",
                               i, what, (int)v->kind);
    return NULL;
}

/* Reads an optional position input; *has = 0 when absent. */
static cort_status *read_position(const cort_kernel_ctx *ctx, size_t i, int *has, int64_t *pos) {
    *has = 0;
    if (!mi_in(ctx, i)) return NULL;
    CORT_TRY(mi_scalar_i64(ctx, i, "position", pos));
    *has = 1;
    return NULL;
}

static void set_seq_info(cort_tinfo *t, cort_type elem) {
    cort_tinfo_unknown(t);
    t->kind = CORT_VKIND_SEQUENCE;
    t->elem = elem;
}

static cort_type in_elem(const cort_infer_ctx *ctx, size_t i) {
    const cort_tinfo *t = mi_tin(ctx, i);
    return t ? t->elem : CORT_TYPE_UNDEFINED;
}

static cort_status *infer_seq_like_input0(cort_infer_ctx *ctx) {
    if (ctx->n_outputs) set_seq_info(&ctx->outputs[0], in_elem(ctx, 0));
    return NULL;
}

/* ---- SequenceEmpty ---- */
static cort_status *seq_empty_infer(cort_infer_ctx *ctx) {
    if (ctx->n_outputs) set_seq_info(&ctx->outputs[0], (cort_type)cort_attr_int(ctx->node, "dtype", CORT_TYPE_FLOAT));
    return NULL;
}
static cort_status *seq_empty_run(cort_kernel_ctx *ctx) {
    int64_t dt = cort_attr_int(ctx->node, "dtype", CORT_TYPE_FLOAT);
    if (cort_type_size((cort_type)dt) == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "attribute 'dtype' is %lld, not a tensor element type",
                               (long long)dt);
    cort_value *out;
    CORT_TRY(cort_sequence_new((cort_type)dt, &out));
    cort_kernel_set_output(ctx, 0, out);
    return NULL;
}

/* ---- SequenceConstruct ---- */
static cort_status *seq_construct_run(cort_kernel_ctx *ctx) {
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        CORT_TRY(mi_want_tensor(ctx, i, "inputs"));
        if (ctx->inputs[i]->type != ctx->inputs[0]->type)
            return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input %zu has type %s, expected %s like input 0", i,
                                   cort_type_name(ctx->inputs[i]->type), cort_type_name(ctx->inputs[0]->type));
    }
    if (ctx->n_inputs == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_MODEL, "SequenceConstruct needs at least one input");
    cort_value *out;
    CORT_TRY(cort_sequence_new(ctx->inputs[0]->type, &out));
    for (size_t i = 0; i < ctx->n_inputs; i++) {
        cort_status *st = cort_sequence_push(out, ctx->inputs[i]);
        if (st) { cort_value_release(out); return st; }
    }
    cort_kernel_set_output(ctx, 0, out);
    return NULL;
}

/* ---- SequenceAt ---- */
static cort_status *seq_at_infer(cort_infer_ctx *ctx) {
    if (ctx->n_outputs) cort_tinfo_tensor(&ctx->outputs[0], in_elem(ctx, 0));
    return NULL;
}
static cort_status *seq_at_run(cort_kernel_ctx *ctx) {
    CORT_TRY(want_seq(ctx, 0, "input_sequence"));
    int64_t pos;
    CORT_TRY(mi_scalar_i64(ctx, 1, "position", &pos));
    const cort_value *s = ctx->inputs[0];
    int64_t n = (int64_t)s->n_items;
    if (pos < -n || pos >= n)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 'position' is %lld, out of range for a sequence of length %lld", (long long)pos,
                               (long long)n);
    if (pos < 0) pos += n;
    cort_kernel_set_output(ctx, 0, cort_value_retain(s->items[pos]));
    return NULL;
}

/* ---- SequenceInsert ---- */
static cort_status *seq_insert_run(cort_kernel_ctx *ctx) {
    CORT_TRY(want_seq(ctx, 0, "input_sequence"));
    CORT_TRY(mi_want_tensor(ctx, 1, "tensor"));
    const cort_value *s = ctx->inputs[0];
    cort_value *item = ctx->inputs[1];
    if (s->type != CORT_TYPE_UNDEFINED && item->type != s->type)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 'tensor' has type %s, expected the sequence's element type %s",
                               cort_type_name(item->type), cort_type_name(s->type));
    int has;
    int64_t pos, n = (int64_t)s->n_items;
    CORT_TRY(read_position(ctx, 2, &has, &pos));
    if (!has) pos = n;
    if (pos < -n || pos > n)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 2 'position' is %lld, out of range for a sequence of length %lld", (long long)pos,
                               (long long)n);
    if (pos < 0) pos += n;
    cort_value *out;
    CORT_TRY(cort_sequence_new(s->type != CORT_TYPE_UNDEFINED ? s->type : item->type, &out));
    cort_status *st = NULL;
    for (int64_t i = 0; i <= n && !st; i++) {
        if (i == pos) st = cort_sequence_push(out, item);
        if (i < n && !st) st = cort_sequence_push(out, s->items[i]);
    }
    if (st) { cort_value_release(out); return st; }
    cort_kernel_set_output(ctx, 0, out);
    return NULL;
}

/* ---- SequenceErase ---- */
static cort_status *seq_erase_run(cort_kernel_ctx *ctx) {
    CORT_TRY(want_seq(ctx, 0, "input_sequence"));
    const cort_value *s = ctx->inputs[0];
    int has;
    int64_t pos, n = (int64_t)s->n_items;
    CORT_TRY(read_position(ctx, 1, &has, &pos));
    if (n == 0)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input_sequence' is empty; nothing to erase");
    if (!has) pos = -1;
    if (pos < -n || pos >= n)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT,
                               "input 1 'position' is %lld, out of range for a sequence of length %lld", (long long)pos,
                               (long long)n);
    if (pos < 0) pos += n;
    cort_value *out;
    CORT_TRY(cort_sequence_new(s->type, &out));
    for (int64_t i = 0; i < n; i++) {
        if (i == pos) continue;
        cort_status *st = cort_sequence_push(out, s->items[i]);
        if (st) { cort_value_release(out); return st; }
    }
    cort_kernel_set_output(ctx, 0, out);
    return NULL;
}

/* ---- SequenceLength ---- */
static cort_status *seq_length_infer(cort_infer_ctx *ctx) {
    if (ctx->n_outputs) cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_INT64, NULL, 0);
    return NULL;
}
static cort_status *seq_length_run(cort_kernel_ctx *ctx) {
    CORT_TRY(want_seq(ctx, 0, "input_sequence"));
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, CORT_TYPE_INT64, NULL, 0, &out));
    *(int64_t *)out->data = (int64_t)ctx->inputs[0]->n_items;
    return NULL;
}

/* ---- SplitToSequence ---- */
static cort_status *split_to_seq_run(cort_kernel_ctx *ctx) {
    CORT_TRY(mi_want_tensor(ctx, 0, "input"));
    const cort_value *x = ctx->inputs[0];
    const cort_node *node = ctx->node;
    int64_t r = (int64_t)x->rank, axis = cort_attr_int(node, "axis", 0);
    int keepdims = cort_attr_int(node, "keepdims", 1) != 0;
    if (axis < -r || axis >= r)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' is %lld, out of range for input 0 of rank %lld",
                               (long long)axis, (long long)r);
    if (axis < 0) axis += r;
    const int64_t dim = x->shape[axis];
    size_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; k++) outer *= (size_t)x->shape[k];
    for (int64_t k = axis + 1; k < r; k++) inner *= (size_t)x->shape[k];

    /* chunk sizes: from `split` (scalar = equal chunks, last one shorter; 1-D = explicit), else ones */
    const cort_value *sp = mi_in(ctx, 1);
    int64_t n_chunks, chunk = 1;
    const cort_value *sizes = NULL;
    int squeeze = 0;
    if (sp) {
        CORT_TRY(mi_want_tensor(ctx, 1, "split"));
        if (!cort_type_is_int(sp->type) || sp->rank > 1)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'split' has type %s and rank %zu, expected an integer scalar or 1-D tensor",
                                   cort_type_name(sp->type), sp->rank);
        if (sp->rank == 0) {
            chunk = cort_load_i64(sp->data, sp->type, 0);
            if (chunk <= 0)
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'split' is %lld, expected > 0", (long long)chunk);
            n_chunks = dim / chunk + (dim % chunk != 0);   /* dim + chunk - 1 may overflow */
        } else {
            sizes = sp;
            n_chunks = sp->shape[0];
            int64_t sum = 0;
            for (int64_t i = 0; i < n_chunks; i++) {
                int64_t v = cort_load_i64(sp->data, sp->type, (size_t)i);
                if (v < 0 || v > dim)
                    return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 1 'split' has value %lld at %lld, expected 0..%lld",
                                           (long long)v, (long long)i, (long long)dim);
                sum += v;
            }
            if (sum != dim)
                return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT,
                                       "input 1 'split' sums to %lld, expected the axis %lld dimension %lld", (long long)sum,
                                       (long long)axis, (long long)dim);
        }
    } else {
        n_chunks = dim;
        squeeze = !keepdims;
    }
    cort_value *out;
    CORT_TRY(cort_sequence_new(x->type, &out));
    cort_status *st = NULL;
    int64_t off = 0;
    for (int64_t c = 0; c < n_chunks && !st; c++) {
        int64_t len = sizes ? cort_load_i64(sizes->data, sizes->type, (size_t)c) : (chunk < dim - off ? chunk : dim - off);
        int64_t dims[CORT_MAX_RANK];
        size_t rank = 0;
        for (int64_t k = 0; k < r; k++) {
            if (k == axis) { if (!squeeze) dims[rank++] = len; }
            else dims[rank++] = x->shape[k];
        }
        cort_value *item = NULL;
        st = cort_tensor_alloc(x->type, dims, rank, &item);
        for (size_t o = 0; o < outer && !st; o++)
            st = mi_copy_elems(item, o * (size_t)len * inner, x, (o * (size_t)dim + (size_t)off) * inner, (size_t)len * inner);
        if (!st) st = cort_sequence_push(out, item);
        cort_value_release(item);
        off += len;
    }
    if (st) { cort_value_release(out); return st; }
    cort_kernel_set_output(ctx, 0, out);
    return NULL;
}

/* ---- ConcatFromSequence ---- */
static cort_status *concat_from_seq_infer(cort_infer_ctx *ctx) {
    if (ctx->n_outputs) cort_tinfo_tensor(&ctx->outputs[0], in_elem(ctx, 0));
    return NULL;
}
static cort_status *concat_from_seq_init(const cort_node *node, void **state) {
    if (!cort_attr_get(node, "axis"))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "required attribute 'axis' is missing");
    *state = NULL;
    return NULL;
}
static cort_status *concat_from_seq_run(cort_kernel_ctx *ctx) {
    CORT_TRY(want_seq(ctx, 0, "input_sequence"));
    const cort_node *node = ctx->node;
    const cort_value *s = ctx->inputs[0];
    if (s->n_items == 0)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'input_sequence' is empty; nothing to concatenate");
    int new_axis = cort_attr_int(node, "new_axis", 0) != 0;
    const cort_value *first = s->items[0];
    for (size_t i = 0; i < s->n_items; i++)
        if (!s->items[i] || s->items[i]->kind != CORT_VKIND_TENSOR)
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "sequence item %zu is not a tensor", i);
    int64_t r = (int64_t)first->rank, axis = cort_attr_int(node, "axis", 0);
    int64_t lo = new_axis ? -r - 1 : -r, hi = new_axis ? r : r - 1;
    if (axis < lo || axis > hi)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "attribute 'axis' is %lld, expected %lld..%lld for items of rank %lld",
                               (long long)axis, (long long)lo, (long long)hi, (long long)r);
    if (axis < 0) axis += hi + 1;
    if (new_axis && r + 1 > CORT_MAX_RANK)
        return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "result rank %lld exceeds %d", (long long)(r + 1), CORT_MAX_RANK);
    int64_t total = 0;
    for (size_t i = 0; i < s->n_items; i++) {
        const cort_value *it = s->items[i];
        int ok = it->type == first->type && it->rank == first->rank;
        for (int64_t k = 0; ok && k < r; k++) ok = it->shape[k] == first->shape[k] || (!new_axis && k == axis);
        if (!ok) {
            char a[128], b[128];
            return cort_node_error(node, CORT_ERROR_INVALID_ARGUMENT, "sequence item %zu is %s%s, incompatible with item 0 %s%s", i,
                                   cort_type_name(it->type), cort_shape_str(it->shape, it->rank, a, sizeof a),
                                   cort_type_name(first->type), cort_shape_str(first->shape, first->rank, b, sizeof b));
        }
        total += new_axis ? 1 : it->shape[axis];
    }
    int64_t dims[CORT_MAX_RANK];
    size_t rank = 0;
    for (int64_t k = 0; k < r + new_axis; k++) {
        if (k == axis) dims[rank++] = total;
        else dims[rank++] = first->shape[new_axis && k > axis ? k - 1 : k];
    }
    size_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; k++) outer *= (size_t)dims[k];
    for (size_t k = (size_t)axis + 1; k < rank; k++) inner *= (size_t)dims[k];
    cort_value *out;
    CORT_TRY(cort_kernel_output(ctx, 0, first->type, dims, rank, &out));
    size_t off = 0;
    for (size_t i = 0; i < s->n_items; i++) {
        const cort_value *it = s->items[i];
        size_t len = new_axis ? 1 : (size_t)it->shape[axis];
        for (size_t o = 0; o < outer; o++)
            CORT_TRY(mi_copy_elems(out, (o * (size_t)total + off) * inner, it, o * len * inner, len * inner));
        off += len;
    }
    return NULL;
}

#define SEQ_OP(var, P_NAME, P_INIT, P_INFER, P_RUN) \
    const cort_op_def var = { .name = P_NAME, .domain = "", .min_opset = 11, .max_opset = CORT_OPSET_MAX, \
    .init = P_INIT, .infer = P_INFER, .run = P_RUN }
SEQ_OP(mi_op_sequence_empty, "SequenceEmpty", NULL, seq_empty_infer, seq_empty_run);
SEQ_OP(mi_op_sequence_construct, "SequenceConstruct", NULL, infer_seq_like_input0, seq_construct_run);
SEQ_OP(mi_op_sequence_at, "SequenceAt", NULL, seq_at_infer, seq_at_run);
SEQ_OP(mi_op_sequence_insert, "SequenceInsert", NULL, infer_seq_like_input0, seq_insert_run);
SEQ_OP(mi_op_sequence_erase, "SequenceErase", NULL, infer_seq_like_input0, seq_erase_run);
SEQ_OP(mi_op_sequence_length, "SequenceLength", NULL, seq_length_infer, seq_length_run);
SEQ_OP(mi_op_split_to_sequence, "SplitToSequence", NULL, infer_seq_like_input0, split_to_seq_run);
SEQ_OP(mi_op_concat_from_sequence, "ConcatFromSequence", concat_from_seq_init, concat_from_seq_infer, concat_from_seq_run);
