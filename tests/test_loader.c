/* The ONNX loader: model IR, tensors (raw, typed, external, sparse), values (.pb) and their
 * serialization, and malformed input (truncation, bad varints, lengths, depth bombs, unsafe
 * external paths, allocation failures). Models are built here as protobuf bytes. Run from the repo root. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "core/alloc.h"
#include "core/status.h"
#include "core/types.h"
#include "onnx/onnx.h"
#include "onnx/wire.h"

#define TESTDATA "/usr/share/libonnx-testdata/data"

/* ---- protobuf building ---- */
typedef cort_pb_writer W;
static void w_free(W *w) { cort_free(w->buf); memset(w, 0, sizeof *w); }
static void put_msg(W *w, uint32_t f, W *sub) { cort_pbw_len_field(w, f, sub->buf, sub->len); w_free(sub); }
static void put_str(W *w, uint32_t f, const char *s) { cort_pbw_len_field(w, f, s, strlen(s)); }
static void put_int(W *w, uint32_t f, uint64_t v) { cort_pbw_tag(w, f, CORT_PB_VARINT); cort_pbw_varint(w, v); }
static void put_f32(W *w, uint32_t f, float v) { cort_pbw_tag(w, f, CORT_PB_I32); cort_pbw_bytes(w, &v, 4); }
static void put_packed_ints(W *w, uint32_t f, const int64_t *v, size_t n) {
    W p = { 0 };
    for (size_t i = 0; i < n; i++) cort_pbw_varint(&p, (uint64_t)v[i]);
    put_msg(w, f, &p);
}

/* TensorProto header: dims, data_type, name */
static void tensor_head(W *t, const char *name, cort_type type, const int64_t *dims, size_t rank) {
    for (size_t i = 0; i < rank; i++) put_int(t, 1, (uint64_t)dims[i]);
    put_int(t, 2, type);
    if (name) put_str(t, 8, name);
}

static void value_info(W *g, uint32_t field, const char *name, cort_type type, int rank, const int64_t *dims,
                       const char *const *params) {
    W vi = { 0 }, tp = { 0 }, tt = { 0 }, sh = { 0 };
    put_str(&vi, 1, name);
    put_int(&tt, 1, type);
    if (rank >= 0) {
        for (int i = 0; i < rank; i++) {
            W d = { 0 };
            if (params && params[i]) put_str(&d, 2, params[i]);
            else if (dims[i] >= 0) put_int(&d, 1, (uint64_t)dims[i]);
            put_msg(&sh, 1, &d);
        }
        put_msg(&tt, 2, &sh);
    }
    put_msg(&tp, 1, &tt);
    put_msg(&vi, 2, &tp);
    put_msg(g, field, &vi);
}

static void opset(W *m, const char *domain, int64_t v) {
    W o = { 0 };
    put_str(&o, 1, domain);
    put_int(&o, 2, (uint64_t)v);
    put_msg(m, 8, &o);
}

static cort_model_ir *load_mem_ok(const W *m, const char *what) {
    cort_model_ir *ir = NULL;
    cort_status *st = cort_model_load_memory(m->buf, m->len, &ir);
    CHECK_MSG(!st, "%s: %s", what, cort_status_message(st));
    cort_status_free(st);
    return ir;
}

static size_t in_use(void) {
    cort_allocator_stats s;
    cort_status_free(cort_allocator_get_stats(&s));
    return s.bytes_in_use;
}

/* A model exercising most features. `pad` shifts the initializer's raw_data to test alignment.
 * The graph is the last field so every proper prefix of the bytes is an invalid model. */
static void build_rich_model(W *m, int pad) {
    W g = { 0 };
    put_int(m, 1, 8);
    put_str(m, 2, "cort-test");
    put_str(m, 3, "1.0");
    put_str(m, 4, "test.domain");
    put_int(m, 5, 3);
    put_str(m, 6, "model doc");
    opset(m, "", 17);
    opset(m, "ai.onnx.ml", 3);
    {   W e = { 0 };
        put_str(&e, 1, "author");
        put_str(&e, 2, "me");
        put_msg(m, 14, &e);
    }
    {   /* function with attribute defaults */
        W fn = { 0 }, nd = { 0 }, at = { 0 }, o = { 0 };
        put_str(&fn, 1, "MyFn");
        put_str(&fn, 10, "custom");
        put_str(&fn, 4, "x");
        put_str(&fn, 5, "y");
        put_str(&fn, 6, "alpha");
        put_str(&nd, 1, "x");
        put_str(&nd, 2, "y");
        put_str(&nd, 4, "LeakyRelu");
        put_str(&at, 1, "alpha");
        put_str(&at, 21, "alpha");
        put_int(&at, 20, CORT_ATTR_FLOAT);
        put_msg(&nd, 5, &at);
        put_msg(&fn, 7, &nd);
        put_str(&at, 1, "beta");
        put_f32(&at, 2, 0.5f);
        put_int(&at, 20, CORT_ATTR_FLOAT);
        put_msg(&fn, 11, &at);
        put_str(&o, 1, "");
        put_int(&o, 2, 17);
        put_msg(&fn, 9, &o);
        put_msg(m, 25, &fn);
    }
    put_str(&g, 2, "main");
    put_str(&g, 10, "graph doc");
    {   /* node 0: Add(X, W) -> T, domain ai.onnx, missing optional input */
        W nd = { 0 };
        put_str(&nd, 1, "X");
        put_str(&nd, 1, "W");
        put_str(&nd, 1, "");
        put_str(&nd, 2, "T");
        put_str(&nd, 3, "add0");
        put_str(&nd, 4, "Add");
        put_str(&nd, 7, "ai.onnx");
        put_msg(&g, 1, &nd);
    }
    {   /* node 1: every attribute type */
        W nd = { 0 }, a = { 0 };
        put_str(&nd, 1, "T");
        put_str(&nd, 2, "Y");
        put_str(&nd, 4, "Everything");
        put_str(&nd, 7, "custom");
        put_str(&a, 1, "f"); put_f32(&a, 2, 1.5f); put_int(&a, 20, CORT_ATTR_FLOAT); put_msg(&nd, 5, &a);
        put_str(&a, 1, "i"); put_int(&a, 3, (uint64_t)-7); put_int(&a, 20, CORT_ATTR_INT); put_msg(&nd, 5, &a);
        put_str(&a, 1, "s"); cort_pbw_len_field(&a, 4, "a\0b", 3); put_int(&a, 20, CORT_ATTR_STRING); put_msg(&nd, 5, &a);
        {   W t = { 0 };
            int64_t d[1] = { 2 };
            tensor_head(&t, "c", CORT_TYPE_INT64, d, 1);
            put_packed_ints(&t, 7, (const int64_t[]){ 5, -6 }, 2);
            put_str(&a, 1, "t"); put_msg(&a, 5, &t); put_int(&a, 20, CORT_ATTR_TENSOR); put_msg(&nd, 5, &a);
        }
        {   W sg = { 0 }, sn = { 0 };
            put_str(&sg, 2, "body");
            put_str(&sn, 1, "T"); put_str(&sn, 2, "Z"); put_str(&sn, 4, "Identity");
            put_msg(&sg, 1, &sn);
            value_info(&sg, 12, "Z", CORT_TYPE_FLOAT, -1, NULL, NULL);
            put_str(&a, 1, "g"); put_msg(&a, 6, &sg); put_int(&a, 20, CORT_ATTR_GRAPH); put_msg(&nd, 5, &a);
        }
        {   /* floats: one packed run and one unpacked element */
            W p = { 0 };
            float fv[2] = { 1.f, 2.f };
            cort_pbw_bytes(&p, fv, 8);
            put_str(&a, 1, "floats"); put_msg(&a, 7, &p); put_f32(&a, 7, 3.f); put_int(&a, 20, CORT_ATTR_FLOATS);
            put_msg(&nd, 5, &a);
        }
        {   put_str(&a, 1, "ints"); put_int(&a, 8, 1); put_packed_ints(&a, 8, (const int64_t[]){ 2, -3 }, 2);
            put_int(&a, 20, CORT_ATTR_INTS); put_msg(&nd, 5, &a);
        }
        {   put_str(&a, 1, "strings"); put_str(&a, 9, "x"); put_str(&a, 9, "yz"); put_int(&a, 20, CORT_ATTR_STRINGS);
            put_msg(&nd, 5, &a);
        }
        {   W t1 = { 0 }, t2 = { 0 };
            tensor_head(&t1, NULL, CORT_TYPE_FLOAT, NULL, 0); put_f32(&t1, 4, 9.f);
            tensor_head(&t2, NULL, CORT_TYPE_STRING, (const int64_t[]){ 1 }, 1); put_str(&t2, 6, "hello");
            put_str(&a, 1, "tensors"); put_msg(&a, 10, &t1); put_msg(&a, 10, &t2); put_int(&a, 20, CORT_ATTR_TENSORS);
            put_msg(&nd, 5, &a);
        }
        {   W g1 = { 0 }, g2 = { 0 };
            put_str(&g1, 2, "g1"); put_str(&g2, 2, "g2");
            put_str(&a, 1, "graphs"); put_msg(&a, 11, &g1); put_msg(&a, 11, &g2); put_int(&a, 20, CORT_ATTR_GRAPHS);
            put_msg(&nd, 5, &a);
        }
        {   /* sparse [2,3] with values at (0,1)=4 and (1,2)=5, [NNZ,rank] indices */
            W sp = { 0 }, v = { 0 }, ix = { 0 };
            tensor_head(&v, "sp", CORT_TYPE_FLOAT, (const int64_t[]){ 2 }, 1);
            put_f32(&v, 4, 4.f); put_f32(&v, 4, 5.f);
            tensor_head(&ix, NULL, CORT_TYPE_INT64, (const int64_t[]){ 2, 2 }, 2);
            put_packed_ints(&ix, 7, (const int64_t[]){ 0, 1, 1, 2 }, 4);
            put_msg(&sp, 1, &v); put_msg(&sp, 2, &ix);
            put_packed_ints(&sp, 3, (const int64_t[]){ 2, 3 }, 2);
            put_str(&a, 1, "sparse"); put_msg(&a, 22, &sp); put_int(&a, 20, CORT_ATTR_SPARSE_TENSOR); put_msg(&nd, 5, &a);
        }
        {   /* type protos: seq(tensor(float)) and map(string, tensor(int64)) */
            W tp = { 0 }, sq = { 0 }, in = { 0 }, tt = { 0 }, mp = { 0 };
            put_int(&tt, 1, CORT_TYPE_FLOAT); put_msg(&in, 1, &tt); put_msg(&sq, 1, &in); put_msg(&tp, 4, &sq);
            put_str(&a, 1, "tp"); put_msg(&a, 14, &tp); put_int(&a, 20, CORT_ATTR_TYPE_PROTO); put_msg(&nd, 5, &a);
            put_int(&tt, 1, CORT_TYPE_FLOAT); put_msg(&in, 1, &tt); put_msg(&sq, 1, &in); put_msg(&tp, 4, &sq);
            put_int(&mp, 1, CORT_TYPE_STRING); put_int(&tt, 1, CORT_TYPE_INT64); put_msg(&in, 1, &tt); put_msg(&mp, 2, &in);
            put_msg(&in, 5, &mp);
            put_str(&a, 1, "tps"); put_msg(&a, 15, &tp); put_msg(&a, 15, &in); put_int(&a, 20, CORT_ATTR_TYPE_PROTOS);
            put_msg(&nd, 5, &a);
        }
        /* no type field: inferred INT */
        put_str(&a, 1, "old"); put_int(&a, 3, 42); put_msg(&nd, 5, &a);
        put_msg(&g, 1, &nd);
    }
    {   /* initializer W: float [3] raw_data, preceded by `pad` bytes of doc_string to shift alignment */
        W t = { 0 };
        float wv[3] = { 1.f, 2.f, 3.f };
        int64_t d[1] = { 3 };
        tensor_head(&t, "W", CORT_TYPE_FLOAT, d, 1);
        char doc[16] = "xxxxxxxxxxxxxxx";
        cort_pbw_len_field(&t, 12, doc, (size_t)pad);
        cort_pbw_len_field(&t, 9, wv, sizeof wv);
        put_msg(&g, 5, &t);
    }
    {   /* sparse initializer S: [4] linear indices */
        W sp = { 0 }, v = { 0 }, ix = { 0 };
        tensor_head(&v, "S", CORT_TYPE_INT32, (const int64_t[]){ 2 }, 1);
        put_packed_ints(&v, 5, (const int64_t[]){ -1, 7 }, 2);
        tensor_head(&ix, NULL, CORT_TYPE_INT64, (const int64_t[]){ 2 }, 1);
        put_packed_ints(&ix, 7, (const int64_t[]){ 3, 0 }, 2);
        put_msg(&sp, 1, &v); put_msg(&sp, 2, &ix);
        put_int(&sp, 3, 4);
        put_msg(&g, 15, &sp);
    }
    value_info(&g, 11, "X", CORT_TYPE_FLOAT, 2, (const int64_t[]){ -1, 3 }, (const char *const[]){ "N", NULL });
    value_info(&g, 11, "W", CORT_TYPE_FLOAT, 1, (const int64_t[]){ 3 }, NULL);
    value_info(&g, 12, "Y", CORT_TYPE_FLOAT, 2, (const int64_t[]){ -1, -1 }, NULL);   /* dims with no value */
    value_info(&g, 13, "T", CORT_TYPE_FLOAT, -1, NULL, NULL);
    put_msg(m, 7, &g);
}

static const cort_attr_ir *find_attr(const cort_node_ir *n, const char *name) {
    for (size_t i = 0; i < n->n_attrs; i++)
        if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

static void check_rich_model(const cort_model_ir *m) {
    CHECK(m->ir_version == 8);
    CHECK(!strcmp(m->producer_name, "cort-test") && !strcmp(m->producer_version, "1.0"));
    CHECK(!strcmp(m->domain, "test.domain") && m->model_version == 3 && !strcmp(m->doc, "model doc"));
    CHECK(m->n_opsets == 2 && !strcmp(m->opsets[0].domain, "") && m->opsets[0].version == 17);
    CHECK(m->n_opsets == 2 && !strcmp(m->opsets[1].domain, "ai.onnx.ml") && m->opsets[1].version == 3);
    CHECK(m->n_metadata == 1 && !strcmp(m->metadata[0].key, "author") && !strcmp(m->metadata[0].value, "me"));
    CHECK(m->n_functions == 1);
    if (m->n_functions == 1) {
        const cort_function_ir *fn = &m->functions[0];
        CHECK(!strcmp(fn->name, "MyFn") && !strcmp(fn->domain, "custom"));
        CHECK(fn->n_inputs == 1 && fn->n_outputs == 1 && fn->n_attributes == 1 && !strcmp(fn->attributes[0], "alpha"));
        CHECK(fn->n_nodes == 1 && fn->nodes[0].n_attrs == 1 && fn->nodes[0].attrs[0].ref_attr_name &&
              !strcmp(fn->nodes[0].attrs[0].ref_attr_name, "alpha"));
        CHECK(fn->n_attr_defaults == 1 && !strcmp(fn->attr_defaults[0].name, "beta") && fn->attr_defaults[0].f == 0.5f);
        CHECK(fn->n_opsets == 1 && fn->opsets[0].version == 17);
    }
    const cort_graph_ir *g = m->graph;
    CHECK(g && !strcmp(g->name, "main") && !strcmp(g->doc, "graph doc"));
    if (!g) return;
    CHECK(g->n_nodes == 2);
    if (g->n_nodes == 2) {
        const cort_node_ir *n = &g->nodes[0];
        CHECK(!strcmp(n->op_type, "Add") && !strcmp(n->domain, "") && !strcmp(n->name, "add0"));
        CHECK(n->n_inputs == 3 && !strcmp(n->inputs[1], "W") && !strcmp(n->inputs[2], ""));
        CHECK(n->n_outputs == 1 && !strcmp(n->outputs[0], "T"));
        n = &g->nodes[1];
        CHECK(!strcmp(n->domain, "custom") && !strcmp(n->name, ""));
        const cort_attr_ir *a;
        CHECK((a = find_attr(n, "f")) && a->type == CORT_ATTR_FLOAT && a->f == 1.5f);
        CHECK((a = find_attr(n, "i")) && a->type == CORT_ATTR_INT && a->i == -7);
        CHECK((a = find_attr(n, "s")) && a->type == CORT_ATTR_STRING && a->s_len == 3 && !memcmp(a->s, "a\0b", 4));
        CHECK((a = find_attr(n, "t")) && a->type == CORT_ATTR_TENSOR && a->t && a->t->type == CORT_TYPE_INT64 &&
              a->t->count == 2 && ((int64_t *)a->t->data)[1] == -6);
        CHECK((a = find_attr(n, "g")) && a->type == CORT_ATTR_GRAPH && a->g && !strcmp(a->g->name, "body") &&
              a->g->n_nodes == 1 && a->g->n_outputs == 1 && a->g->outputs[0].type.rank == -1);
        CHECK((a = find_attr(n, "floats")) && a->type == CORT_ATTR_FLOATS && a->n == 3 && a->floats[0] == 1.f &&
              a->floats[2] == 3.f);
        CHECK((a = find_attr(n, "ints")) && a->type == CORT_ATTR_INTS && a->n == 3 && a->ints[0] == 1 && a->ints[2] == -3);
        CHECK((a = find_attr(n, "strings")) && a->n == 2 && !strcmp(a->strings[1], "yz") && a->string_lens[1] == 2);
        CHECK((a = find_attr(n, "tensors")) && a->n == 2 && a->tensors[0]->rank == 0 &&
              ((float *)a->tensors[0]->data)[0] == 9.f && !strcmp(cort_string_get(a->tensors[1], 0), "hello"));
        CHECK((a = find_attr(n, "graphs")) && a->n == 2 && !strcmp(a->graphs[1]->name, "g2"));
        CHECK((a = find_attr(n, "sparse")) && a->type == CORT_ATTR_SPARSE_TENSOR && a->t && a->t->count == 6 &&
              ((float *)a->t->data)[1] == 4.f && ((float *)a->t->data)[5] == 5.f && ((float *)a->t->data)[0] == 0.f);
        CHECK((a = find_attr(n, "tp")) && a->type == CORT_ATTR_TYPE_PROTO && a->tp && a->tp->kind == CORT_VKIND_SEQUENCE &&
              a->tp->inner && a->tp->inner->kind == CORT_VKIND_TENSOR && a->tp->inner->elem_type == CORT_TYPE_FLOAT);
        CHECK((a = find_attr(n, "tps")) && a->n == 2 && a->tp[1].kind == CORT_VKIND_MAP &&
              a->tp[1].key_type == CORT_TYPE_STRING && a->tp[1].inner && a->tp[1].inner->elem_type == CORT_TYPE_INT64);
        CHECK((a = find_attr(n, "old")) && a->type == CORT_ATTR_INT && a->i == 42);
    }
    CHECK(g->n_initializers == 2);
    if (g->n_initializers == 2) {
        const cort_value *w = g->initializers[0].value;
        CHECK(!strcmp(g->initializers[0].name, "W") && w->type == CORT_TYPE_FLOAT && w->count == 3 &&
              ((float *)w->data)[2] == 3.f);
        const cort_value *s = g->initializers[1].value;
        CHECK(!strcmp(g->initializers[1].name, "S") && s->type == CORT_TYPE_INT32 && s->count == 4 &&
              ((int32_t *)s->data)[3] == -1 && ((int32_t *)s->data)[0] == 7 && ((int32_t *)s->data)[1] == 0);
    }
    CHECK(g->n_inputs == 2 && g->inputs[0].type.kind == CORT_VKIND_TENSOR && g->inputs[0].type.rank == 2 &&
          g->inputs[0].type.dims[0] == -1 && g->inputs[0].type.dim_params[0] &&
          !strcmp(g->inputs[0].type.dim_params[0], "N") && g->inputs[0].type.dims[1] == 3 &&
          !g->inputs[0].type.dim_params[1]);
    CHECK(g->n_outputs == 1 && g->outputs[0].type.rank == 2 && g->outputs[0].type.dims[1] == -1 &&
          !g->outputs[0].type.dim_params[1]);
    CHECK(g->n_value_infos == 1 && g->value_infos[0].type.rank == -1);
}

static int in_blob(const cort_model_ir *m, const void *p) {
    const uint8_t *b = m->blob->data;
    return (const uint8_t *)p >= b && (const uint8_t *)p < b + m->blob->bytes;
}

static void test_rich_model(void) {
    for (int pad = 0; pad < 4; pad++) {
        W m = { 0 };
        build_rich_model(&m, pad);
        cort_model_ir *ir = load_mem_ok(&m, "rich model");
        if (ir) {
            check_rich_model(ir);
            const cort_value *w = ir->graph->initializers[0].value;
            int aligned = ((uintptr_t)w->data & 3) == 0;
            /* in place exactly when aligned: a view of the private copy, never the caller's bytes */
            CHECK(!in_blob(ir, w->data) || aligned);
            CHECK((w->base == ir->blob) == in_blob(ir, w->data));
            CHECK(!((const uint8_t *)w->data >= m.buf && (const uint8_t *)w->data < m.buf + m.len));
            CHECK(ir->n_owned_values >= 2);
            cort_model_free(ir);
        }
        /* the same bytes from a file: a view of the mapping when aligned */
        char path[] = "/tmp/cort_loader_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        if (fd < 0) { w_free(&m); continue; }
        CHECK(write(fd, m.buf, m.len) == (ssize_t)m.len);
        close(fd);
        cort_model_ir *fm = NULL;
        if (CHECK_OK(cort_model_load_file(path, &fm))) {
            check_rich_model(fm);
            const cort_value *w = fm->graph->initializers[0].value;
            int in_map = in_blob(fm, w->data);
            CHECK(in_map == (((uintptr_t)w->data & 3) == 0) || !in_map);
            CHECK(fm->blob->release_fn != NULL);
            CHECK(fm->dir && !strcmp(fm->dir, "/tmp"));
            /* a retained initializer outlives the model (the mapping stays alive through its base) */
            cort_value *keep = cort_value_retain(fm->graph->initializers[0].value);
            cort_model_free(fm);
            CHECK(((float *)keep->data)[1] == 2.f);
            cort_value_release(keep);
        }
        unlink(path);
        w_free(&m);
    }
}

/* Every proper prefix must fail cleanly (the graph is the last field), without leaking. */
static void test_truncation(void) {
    W m = { 0 };
    build_rich_model(&m, 1);
    size_t before = in_use();
    int all_invalid = 1;
    for (size_t n = 0; n < m.len; n++) {
        uint8_t *copy = malloc(n ? n : 1);   /* exact-size buffer so ASan sees over-reads */
        memcpy(copy, m.buf, n);
        cort_model_ir *ir = NULL;
        cort_status *st = cort_model_load_memory(copy, n, &ir);
        if (cort_status_code(st) != CORT_ERROR_INVALID_MODEL) {
            all_invalid = 0;
            fprintf(stderr, "prefix %zu: [%s] %s\n", n, cort_code_name(cort_status_code(st)), cort_status_message(st));
            cort_model_free(ir);
        }
        cort_status_free(st);
        free(copy);
    }
    CHECK(all_invalid);
    CHECK(in_use() == before);
    w_free(&m);
}

/* Every allocation of a load fails in turn: OOM each time, nothing leaks, then success. */
static void test_alloc_failures(void) {
    W m = { 0 };
    build_rich_model(&m, 0);
    size_t before = in_use();
    int ok = 0, bad = 0;
    for (long k = 1; k < 100000; k++) {
        cort_model_ir *ir = NULL;
        cort_test_alloc_fail_at(k);
        cort_status *st = cort_model_load_memory(m.buf, m.len, &ir);
        cort_test_alloc_fail_at(0);
        if (!st) { ok = 1; cort_model_free(ir); break; }
        if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY) {
            bad++;
            fprintf(stderr, "alloc failure %ld: [%s] %s\n", k, cort_code_name(cort_status_code(st)), cort_status_message(st));
        }
        cort_status_free(st);
    }
    CHECK(ok && !bad);
    CHECK(in_use() == before);
    w_free(&m);
    /* the file path (mmap, folder name, external data) */
    static const char *const files[] = { "tests/data/loader/if_function.onnx", "tests/data/loader/external.onnx" };
    for (size_t f = 0; f < 2; f++) {
        ok = 0; bad = 0;
        before = in_use();
        for (long k = 1; k < 100000 && !ok; k++) {
            cort_model_ir *ir = NULL;
            cort_test_alloc_fail_at(k);
            cort_status *st = cort_model_load_file(files[f], &ir);
            cort_test_alloc_fail_at(0);
            if (!st) { ok = 1; cort_model_free(ir); }
            else if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY) {
                bad++;
                fprintf(stderr, "%s alloc failure %ld: %s\n", files[f], k, cort_status_message(st));
                if (cort_status_code(st) == CORT_ERROR_IO) break;   /* not run from the repo root */
            }
            cort_status_free(st);
        }
        CHECK_MSG(ok && !bad, "%s under allocation failures", files[f]);
        CHECK(in_use() == before);
    }
}

static void expect_invalid(const void *bytes, size_t len, const char *needle, const char *what) {
    cort_model_ir *ir = NULL;
    cort_status *st = cort_model_load_memory(bytes, len, &ir);
    int ok = cort_status_code(st) == CORT_ERROR_INVALID_MODEL && (!needle || strstr(cort_status_message(st), needle));
    CHECK_MSG(ok, "%s: [%s] %s", what, cort_code_name(cort_status_code(st)), cort_status_message(st));
    if (!st) cort_model_free(ir);
    cort_status_free(st);
}

/* A graph with one node and the given extra bytes appended inside the NodeProto. */
static void model_with_node_bytes(W *m, const void *extra, size_t n) {
    W g = { 0 }, nd = { 0 };
    put_str(&nd, 4, "Relu");
    cort_pbw_bytes(&nd, extra, n);
    put_msg(&g, 1, &nd);
    put_int(m, 1, 8);
    put_msg(m, 7, &g);
}

static void test_malformed_wire(void) {
    /* 11-byte varint */
    static const uint8_t long_varint[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    expect_invalid(long_varint, sizeof long_varint, "varint", "long varint");
    /* 10-byte varint with bits beyond 64 */
    static const uint8_t big_varint[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
    expect_invalid(big_varint, sizeof big_varint, "varint", "varint > 64 bits");
    /* length past the end */
    static const uint8_t past_end[] = { 0x3a, 0x80, 0x01, 0x00 };
    expect_invalid(past_end, sizeof past_end, "exceeds buffer", "length past end");
    /* huge length (2^63) */
    static const uint8_t huge_len[] = { 0x3a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
    expect_invalid(huge_len, sizeof huge_len, "exceeds buffer", "huge length");
    /* field number 0 */
    static const uint8_t field0[] = { 0x00, 0x01 };
    expect_invalid(field0, sizeof field0, "field number", "field 0");
    /* groups */
    static const uint8_t group[] = { 0x0b, 0x0c };
    expect_invalid(group, sizeof group, "group", "group");
    /* invalid wire types 6, 7 */
    static const uint8_t wire6[] = { 0x0e, 0x00 };
    expect_invalid(wire6, sizeof wire6, "wire type", "wire type 6");
    /* wrong wire type for a known field: graph as varint */
    static const uint8_t graph_varint[] = { 0x38, 0x01 };
    expect_invalid(graph_varint, sizeof graph_varint, "field 7", "graph as varint");
    /* files that cannot be read */
    cort_model_ir *none = NULL;
    CHECK_CODE(cort_model_load_file("/nonexistent/model.onnx", &none), CORT_ERROR_IO);
    CHECK_CODE(cort_model_load_file("/tmp", &none), CORT_ERROR_IO);
    CHECK(none == NULL);
    /* empty model: no graph */
    expect_invalid("", 0, "no graph", "empty model");
    /* error path names the nested message and byte offset */
    W m = { 0 };
    static const uint8_t bad_len_in_node[] = { 0x0a, 0x7f, 'x' };
    model_with_node_bytes(&m, bad_len_in_node, sizeof bad_len_in_node);
    expect_invalid(m.buf, m.len, "ModelProto.graph.node[0] (NodeProto) field 1 at byte", "nested error path");
    w_free(&m);
    /* unknown fields of every valid wire type are skipped */
    static const uint8_t unknown[] = { 0xf8, 0x07, 0x05, 0xf9, 0x07, 1, 2, 3, 4, 5, 6, 7, 8, 0xfd, 0x07, 1, 2, 3, 4,
                                       0xfa, 0x07, 0x02, 'h', 'i' };
    model_with_node_bytes(&m, unknown, sizeof unknown);
    cort_model_ir *ir = load_mem_ok(&m, "unknown fields");
    CHECK(ir && ir->graph->n_nodes == 1 && !strcmp(ir->graph->nodes[0].op_type, "Relu"));
    cort_model_free(ir);
    w_free(&m);
    /* node without op_type */
    {   W g = { 0 }, nd = { 0 };
        put_str(&nd, 3, "nameless");
        put_msg(&g, 1, &nd);
        put_msg(&m, 7, &g);
        expect_invalid(m.buf, m.len, "op_type", "no op_type");
        w_free(&m);
    }
    /* attribute with an unknown type code */
    {   W a = { 0 };
        put_str(&a, 1, "x"); put_int(&a, 20, 99);
        W nd = { 0 };
        put_msg(&nd, 5, &a);
        model_with_node_bytes(&m, nd.buf, nd.len);
        expect_invalid(m.buf, m.len, "invalid type", "attr type 99");
        w_free(&m); w_free(&nd);
    }
}

/* graph -> node -> attribute(g) -> graph ... `levels` deep; tp_levels deep sequence TypeProto. */
static void nested_graph(W *out, int levels) {
    W g = { 0 };
    put_str(&g, 2, "leaf");
    for (int i = 0; i < levels; i++) {
        W nd = { 0 }, a = { 0 }, outer = { 0 };
        put_str(&a, 1, "body");
        put_int(&a, 20, CORT_ATTR_GRAPH);
        put_msg(&a, 6, &g);
        put_str(&nd, 4, "If");
        put_msg(&nd, 5, &a);
        put_msg(&outer, 1, &nd);
        g = outer;
    }
    put_int(out, 1, 8);
    put_msg(out, 7, &g);
}

static void test_depth(void) {
    W m = { 0 };
    nested_graph(&m, 20);
    cort_model_ir *ir = load_mem_ok(&m, "20 nested graphs");
    cort_model_free(ir);
    w_free(&m);
    nested_graph(&m, 2000);
    expect_invalid(m.buf, m.len, "nested deeper", "graph depth bomb");
    w_free(&m);
    /* TypeProto depth bomb: sequence(sequence(...)) */
    W tp = { 0 };
    {   W tt = { 0 };
        put_int(&tt, 1, CORT_TYPE_FLOAT);
        put_msg(&tp, 1, &tt);
    }
    for (int i = 0; i < 5000; i++) {
        W sq = { 0 }, outer = { 0 };
        put_msg(&sq, 1, &tp);
        put_msg(&outer, 4, &sq);
        tp = outer;
    }
    W g = { 0 }, vi = { 0 };
    put_str(&vi, 1, "x");
    put_msg(&vi, 2, &tp);
    put_msg(&g, 11, &vi);
    put_msg(&m, 7, &g);
    expect_invalid(m.buf, m.len, "nested deeper", "type depth bomb");
    w_free(&m);
    /* SequenceProto depth bomb through cort_value_parse */
    W s = { 0 };
    put_int(&s, 2, 3);
    for (int i = 0; i < 5000; i++) {
        W outer = { 0 };
        put_int(&outer, 2, 3);
        put_msg(&outer, 5, &s);
        s = outer;
    }
    cort_value *v = NULL;
    CHECK_ERR(cort_value_parse(s.buf, s.len, CORT_VKIND_SEQUENCE, &v), CORT_ERROR_INVALID_MODEL, "nested deeper");
    w_free(&s);
}

/* ---- tensors ---- */

static void model_with_initializer(W *m, W *t) {
    W g = { 0 };
    put_msg(&g, 5, t);
    put_int(m, 1, 8);
    put_msg(m, 7, &g);
}

static cort_value *parse_tensor_ok(const W *t, const char *what) {
    cort_value *v = NULL;
    cort_status *st = cort_tensor_parse(t->buf, t->len, &v);
    CHECK_MSG(!st, "%s: %s", what, cort_status_message(st));
    cort_status_free(st);
    return v;
}

static void test_typed_fields(void) {
    W t = { 0 };
    cort_value *v;
    /* float_data packed + unpacked */
    tensor_head(&t, "f", CORT_TYPE_FLOAT, (const int64_t[]){ 3 }, 1);
    {   W p = { 0 }; float f2[2] = { 1.5f, -2.f }; cort_pbw_bytes(&p, f2, 8); put_msg(&t, 4, &p); }
    put_f32(&t, 4, 7.f);
    if ((v = parse_tensor_ok(&t, "float_data"))) {
        CHECK(v->type == CORT_TYPE_FLOAT && v->count == 3 && ((float *)v->data)[0] == 1.5f && ((float *)v->data)[2] == 7.f);
        cort_value_release(v);
    }
    w_free(&t);
    /* int32_data for small types */
    static const struct { cort_type t; int64_t in[3]; } small[] = {
        { CORT_TYPE_INT8, { -128, 5, 127 } }, { CORT_TYPE_UINT8, { 0, 200, 255 } }, { CORT_TYPE_INT16, { -300, 0, 32767 } },
        { CORT_TYPE_UINT16, { 65535, 1, 2 } }, { CORT_TYPE_BOOL, { 1, 0, 1 } }, { CORT_TYPE_FLOAT16, { 0x3c00, 0xc000, 0 } },
        { CORT_TYPE_BFLOAT16, { 0x3f80, 0x4000, 0xbf80 } }, { CORT_TYPE_INT32, { -2147483647 - 1, 3, 2147483647 } },
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        tensor_head(&t, NULL, small[i].t, (const int64_t[]){ 3 }, 1);
        put_packed_ints(&t, 5, small[i].in, 2);
        put_int(&t, 5, (uint64_t)small[i].in[2]);   /* one unpacked */
        if ((v = parse_tensor_ok(&t, cort_type_name(small[i].t)))) {
            int ok = v->type == small[i].t && v->count == 3;
            for (size_t k = 0; k < 3 && ok; k++) ok = cort_load_i64(v->data, v->type, k) == small[i].in[k] ||
                (v->type == CORT_TYPE_FLOAT16 || v->type == CORT_TYPE_BFLOAT16 ? ((uint16_t *)v->data)[k] == small[i].in[k] : 0);
            CHECK_MSG(ok, "int32_data for %s", cort_type_name(small[i].t));
            cort_value_release(v);
        }
        w_free(&t);
    }
    /* int64_data */
    tensor_head(&t, NULL, CORT_TYPE_INT64, (const int64_t[]){ 2 }, 1);
    put_int(&t, 7, (uint64_t)INT64_MIN); put_int(&t, 7, 9);
    if ((v = parse_tensor_ok(&t, "int64_data"))) {
        CHECK(((int64_t *)v->data)[0] == INT64_MIN && ((int64_t *)v->data)[1] == 9);
        cort_value_release(v);
    }
    w_free(&t);
    /* uint64_data for uint32 and uint64 */
    tensor_head(&t, NULL, CORT_TYPE_UINT32, (const int64_t[]){ 1 }, 1);
    put_int(&t, 11, 4000000000u);
    if ((v = parse_tensor_ok(&t, "uint32"))) { CHECK(((uint32_t *)v->data)[0] == 4000000000u); cort_value_release(v); }
    w_free(&t);
    tensor_head(&t, NULL, CORT_TYPE_UINT64, (const int64_t[]){ 1 }, 1);
    put_int(&t, 11, UINT64_MAX);
    if ((v = parse_tensor_ok(&t, "uint64"))) { CHECK(((uint64_t *)v->data)[0] == UINT64_MAX); cort_value_release(v); }
    w_free(&t);
    /* double_data (packed) and complex128 via double_data, complex64 via float_data */
    tensor_head(&t, NULL, CORT_TYPE_COMPLEX128, (const int64_t[]){ 1 }, 1);
    {   W p = { 0 }; double d2[2] = { 1.25, -3.5 }; cort_pbw_bytes(&p, d2, 16); put_msg(&t, 10, &p); }
    if ((v = parse_tensor_ok(&t, "complex128"))) {
        CHECK(v->bytes == 16 && ((double *)v->data)[1] == -3.5);
        cort_value_release(v);
    }
    w_free(&t);
    tensor_head(&t, NULL, CORT_TYPE_COMPLEX64, (const int64_t[]){ 1 }, 1);
    put_f32(&t, 4, 1.f); put_f32(&t, 4, 2.f);
    if ((v = parse_tensor_ok(&t, "complex64"))) { CHECK(((float *)v->data)[1] == 2.f); cort_value_release(v); }
    w_free(&t);
    tensor_head(&t, NULL, CORT_TYPE_DOUBLE, NULL, 0);
    cort_pbw_tag(&t, 10, CORT_PB_I64); { double d = 0.125; cort_pbw_bytes(&t, &d, 8); }
    if ((v = parse_tensor_ok(&t, "double scalar"))) { CHECK(v->rank == 0 && ((double *)v->data)[0] == 0.125); cort_value_release(v); }
    w_free(&t);
    /* strings */
    tensor_head(&t, NULL, CORT_TYPE_STRING, (const int64_t[]){ 2 }, 1);
    put_str(&t, 6, ""); put_str(&t, 6, "abc");
    if ((v = parse_tensor_ok(&t, "strings"))) {
        CHECK(!strcmp(cort_string_get(v, 0), "") && !strcmp(cort_string_get(v, 1), "abc"));
        cort_value_release(v);
    }
    w_free(&t);
    /* empty tensor with no data */
    tensor_head(&t, NULL, CORT_TYPE_FLOAT, (const int64_t[]){ 0, 3 }, 2);
    if ((v = parse_tensor_ok(&t, "empty"))) { CHECK(v->count == 0 && v->rank == 2); cort_value_release(v); }
    w_free(&t);

    /* counts that disagree with dims */
    tensor_head(&t, "bad", CORT_TYPE_FLOAT, (const int64_t[]){ 2, 3 }, 2);
    put_f32(&t, 4, 1.f);
    v = NULL;
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "float_data");
    {   W m = { 0 }; model_with_initializer(&m, &t); expect_invalid(m.buf, m.len, "initializer[0]", "float_data count"); w_free(&m); }
    tensor_head(&t, "bad", CORT_TYPE_INT64, (const int64_t[]){ 4 }, 1);
    put_packed_ints(&t, 7, (const int64_t[]){ 1, 2, 3, 4, 5 }, 5);
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "int64_data");
    w_free(&t);
    tensor_head(&t, "bad", CORT_TYPE_FLOAT, (const int64_t[]){ 2 }, 1);
    cort_pbw_len_field(&t, 9, "abc", 3);
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "raw_data has 3 bytes");
    w_free(&t);
    tensor_head(&t, "big", CORT_TYPE_FLOAT, (const int64_t[]){ INT64_MAX, INT64_MAX }, 2);
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "overflow");
    w_free(&t);
    tensor_head(&t, "nt", CORT_TYPE_UNDEFINED, NULL, 0);
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "data_type");
    w_free(&t);
    tensor_head(&t, "t27", (cort_type)27, NULL, 0);   /* past INT2 (26), the last type cort knows */
    CHECK_CODE(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_NOT_IMPLEMENTED);
    w_free(&t);
    {   W seg = { 0 };
        tensor_head(&t, "seg", CORT_TYPE_FLOAT, NULL, 0);
        put_int(&seg, 1, 0);
        put_msg(&t, 3, &seg);
        CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_NOT_IMPLEMENTED, "segment");
        w_free(&t);
    }
    int64_t d17[17];
    for (int i = 0; i < 17; i++) d17[i] = 1;
    tensor_head(&t, "r17", CORT_TYPE_FLOAT, d17, 17);
    CHECK_CODE(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_NOT_IMPLEMENTED);
    w_free(&t);
    /* packed varint wider than 64 bits */
    tensor_head(&t, "w", CORT_TYPE_INT64, (const int64_t[]){ 1 }, 1);
    cort_pbw_len_field(&t, 7, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "64 bits");
    w_free(&t);
    /* packed varint cut short */
    tensor_head(&t, "w", CORT_TYPE_INT64, (const int64_t[]){ 1 }, 1);
    cort_pbw_len_field(&t, 7, "\xff", 1);
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "truncated packed varint");
    w_free(&t);
    /* packed float payload not a multiple of 4 */
    tensor_head(&t, "p", CORT_TYPE_FLOAT, (const int64_t[]){ 1 }, 1);
    cort_pbw_len_field(&t, 4, "abcde", 5);
    CHECK_ERR(cort_tensor_parse(t.buf, t.len, &v), CORT_ERROR_INVALID_MODEL, "multiple of 4");
    w_free(&t);
    /* sparse index out of range */
    {   W g = { 0 }, sp = { 0 }, vv = { 0 }, ix = { 0 }, m = { 0 };
        tensor_head(&vv, "S", CORT_TYPE_FLOAT, (const int64_t[]){ 1 }, 1); put_f32(&vv, 4, 1.f);
        tensor_head(&ix, NULL, CORT_TYPE_INT64, (const int64_t[]){ 1 }, 1); put_int(&ix, 7, 4);
        put_msg(&sp, 1, &vv); put_msg(&sp, 2, &ix); put_int(&sp, 3, 4);
        put_msg(&g, 15, &sp); put_msg(&m, 7, &g);
        expect_invalid(m.buf, m.len, "out of range", "sparse index");
        w_free(&m);
    }
    /* a few bytes that would densify into a terabyte */
    {   W g = { 0 }, sp = { 0 }, vv = { 0 }, m = { 0 };
        tensor_head(&vv, "S", CORT_TYPE_FLOAT, (const int64_t[]){ 0 }, 1);
        put_msg(&sp, 1, &vv); put_int(&sp, 3, 1 << 20); put_int(&sp, 3, 1 << 20);
        put_msg(&g, 15, &sp); put_msg(&m, 7, &g);
        expect_invalid(m.buf, m.len, "densifies", "sparse bomb");
        w_free(&m);
    }
}

/* ---- external data ---- */

static void external_model(W *m, const char *location, const char *offset, const char *length) {
    W g = { 0 }, t = { 0 };
    tensor_head(&t, "E", CORT_TYPE_FLOAT, (const int64_t[]){ 2 }, 1);
    const char *kv[3][2] = { { "location", location }, { "offset", offset }, { "length", length } };
    for (int i = 0; i < 3; i++) {
        if (!kv[i][1]) continue;
        W e = { 0 };
        put_str(&e, 1, kv[i][0]);
        put_str(&e, 2, kv[i][1]);
        put_msg(&t, 13, &e);
    }
    put_int(&t, 14, 1);
    put_msg(&g, 5, &t);
    put_msg(m, 7, &g);
}

static void write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(p, 1, n, f); fclose(f); }
}

static void expect_file(const char *dir, const W *m, cort_code code, const char *needle, const char *what) {
    char path[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    write_bytes(path, m->buf, m->len);
    cort_model_ir *ir = NULL;
    cort_status *st = cort_model_load_file(path, &ir);
    int ok = code == CORT_OK ? !st : cort_status_code(st) == code && (!needle || strstr(cort_status_message(st), needle));
    CHECK_MSG(ok, "%s: [%s] %s", what, cort_code_name(cort_status_code(st)), cort_status_message(st));
    if (!st && code == CORT_OK && ir->graph->n_initializers == 1) {
        const float *e = ir->graph->initializers[0].value->data;
        CHECK(e[0] == 3.f && e[1] == 4.f);
    }
    cort_model_free(ir);
    cort_status_free(st);
}

static void test_external_data(void) {
    char dir[] = "/tmp/cort_ext_XXXXXX";
    if (!mkdtemp(dir)) { CHECK(0); return; }
    char sub[600], path[700];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);
    float data[4] = { 1.f, 2.f, 3.f, 4.f };
    snprintf(path, sizeof path, "%s/weights.bin", sub);
    write_bytes(path, data, sizeof data);
    snprintf(path, sizeof path, "%s/outside.bin", dir);
    write_bytes(path, data, sizeof data);

    W m = { 0 };
    external_model(&m, "weights.bin", "8", "8");
    expect_file(sub, &m, CORT_OK, NULL, "external data");
    /* from memory: no folder to resolve against */
    expect_invalid(m.buf, m.len, "file path", "external from memory");
    w_free(&m);
    external_model(&m, "./weights.bin", "8", NULL);
    expect_file(sub, &m, CORT_OK, NULL, "external without length");
    w_free(&m);
    external_model(&m, "../outside.bin", "8", "8");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "'..'", "external ..");
    w_free(&m);
    external_model(&m, "a/../../outside.bin", "8", "8");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "'..'", "external nested ..");
    w_free(&m);
    external_model(&m, path, "8", "8");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "absolute", "external absolute");
    w_free(&m);
    external_model(&m, "weights.bin", "12", "8");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "exceeds", "external past end");
    w_free(&m);
    external_model(&m, "weights.bin", "0", "12");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "length 12", "external wrong length");
    w_free(&m);
    external_model(&m, "weights.bin", "-1", NULL);
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "offset", "external bad offset");
    w_free(&m);
    external_model(&m, "missing.bin", NULL, NULL);
    expect_file(sub, &m, CORT_ERROR_IO, "missing.bin", "external missing file");
    w_free(&m);
    external_model(&m, NULL, NULL, NULL);
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "no location", "external no location");
    w_free(&m);
    /* links (issue 23): a symbolic link that stays inside the folder is read; one leading out of it
     * (to a file, or a folder link making a path leave) is refused by the real-path rule, a second
     * hard link by the link-count rule, a folder by the regular-file rule */
    char lnk[700];
    snprintf(lnk, sizeof lnk, "%s/inside.bin", sub);
    CHECK(symlink("weights.bin", lnk) == 0);
    external_model(&m, "inside.bin", "8", "8");
    expect_file(sub, &m, CORT_OK, NULL, "external symlink inside the folder");
    w_free(&m);
    unlink(lnk);
    snprintf(lnk, sizeof lnk, "%s/link.bin", sub);
    CHECK(symlink("/etc/passwd", lnk) == 0);
    external_model(&m, "link.bin", "0", NULL);
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "outside the model's folder", "external symlink to /etc/passwd");
    w_free(&m);
    unlink(lnk);
    CHECK(symlink("../outside.bin", lnk) == 0);
    external_model(&m, "link.bin", "8", "8");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "outside the model's folder", "external symlink to ../outside.bin");
    w_free(&m);
    unlink(lnk);
    snprintf(lnk, sizeof lnk, "%s/up", sub);
    CHECK(symlink("..", lnk) == 0);
    external_model(&m, "up/outside.bin", "8", "8");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "outside the model's folder", "external through a folder link");
    w_free(&m);
    unlink(lnk);
    snprintf(lnk, sizeof lnk, "%s/hard.bin", sub);
    CHECK(link(path, lnk) == 0);   /* path: outside.bin in the parent folder */
    external_model(&m, "hard.bin", "8", "8");
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "hard links", "external hard link");
    w_free(&m);
    unlink(lnk);
    snprintf(lnk, sizeof lnk, "%s/adir", sub);
    CHECK(mkdir(lnk, 0700) == 0);
    external_model(&m, "adir", NULL, NULL);
    expect_file(sub, &m, CORT_ERROR_INVALID_MODEL, "not a regular file", "external folder");
    w_free(&m);
    rmdir(lnk);
    snprintf(path, sizeof path, "%s/model.onnx", sub); unlink(path);
    snprintf(path, sizeof path, "%s/weights.bin", sub); unlink(path);
    snprintf(path, sizeof path, "%s/outside.bin", dir); unlink(path);
    rmdir(sub);
    rmdir(dir);
}

/* ---- values: parse / serialize round trip ---- */

static int values_equal(const cort_value *a, const cort_value *b) {
    if (!a || !b) return a == b;
    if (a->kind != b->kind) return 0;
    switch (a->kind) {
    case CORT_VKIND_TENSOR:
        if (a->type != b->type || a->rank != b->rank || a->count != b->count) return 0;
        if (memcmp(a->shape, b->shape, a->rank * sizeof a->shape[0])) return 0;
        if (a->type == CORT_TYPE_STRING) {
            for (size_t i = 0; i < a->count; i++)
                if (strcmp(cort_string_get(a, i), cort_string_get(b, i))) return 0;
            return 1;
        }
        return !a->bytes || !memcmp(a->data, b->data, a->bytes);
    case CORT_VKIND_SEQUENCE:
        if (a->n_items != b->n_items) return 0;
        for (size_t i = 0; i < a->n_items; i++)
            if (!values_equal(a->items[i], b->items[i])) return 0;
        return 1;
    case CORT_VKIND_OPTIONAL: return values_equal(a->elem, b->elem);
    case CORT_VKIND_MAP: return values_equal(a->map_keys, b->map_keys) && values_equal(a->map_values, b->map_values);
    default: return 0;
    }
}

/* parse -> serialize -> parse -> serialize: the values and the two serializations agree. */
static int roundtrip(const void *bytes, size_t len, int hint, const char *what) {
    cort_value *a = NULL, *b = NULL;
    void *s1 = NULL, *s2 = NULL;
    size_t n1 = 0, n2 = 0;
    cort_status *st = cort_value_parse(bytes, len, hint, &a);
    if (!st) st = cort_value_serialize(a, "x", &s1, &n1);
    if (!st) st = cort_value_parse(s1, n1, hint ? hint : (int)a->kind, &b);
    if (!st) st = cort_value_serialize(b, "x", &s2, &n2);
    int ok = !st && values_equal(a, b) && n1 == n2 && !memcmp(s1, s2, n1);
    if (!ok) fprintf(stderr, "roundtrip %s: %s\n", what, st ? cort_status_message(st) : "values differ");
    cort_status_free(st);
    cort_value_release(a);
    cort_value_release(b);
    cort_free(s1);
    cort_free(s2);
    return ok;
}

static void test_values(void) {
    /* built values: sequence, optional (full, empty), map with tensor and sequence values */
    cort_value *t1, *t2, *seq, *opt, *empty, *keys, *vals, *map, *skeys, *map2;
    int64_t d2[2] = { 2, 2 }, d3 = 3;
    if (!CHECK_OK(cort_tensor_alloc(CORT_TYPE_FLOAT, d2, 2, &t1))) return;
    for (int i = 0; i < 4; i++) ((float *)t1->data)[i] = (float)i;
    CHECK_OK(cort_tensor_alloc(CORT_TYPE_STRING, &d3, 1, &t2));
    CHECK_OK(cort_string_set(t2, 1, "mid", 3));
    CHECK_OK(cort_sequence_new(CORT_TYPE_UNDEFINED, &seq));
    CHECK_OK(cort_sequence_push(seq, t1));
    CHECK_OK(cort_sequence_push(seq, t1));
    CHECK_OK(cort_optional_new(seq, CORT_VKIND_SEQUENCE, CORT_TYPE_FLOAT, &opt));
    CHECK_OK(cort_optional_new(NULL, CORT_VKIND_TENSOR, CORT_TYPE_FLOAT, &empty));
    CHECK_OK(cort_tensor_alloc(CORT_TYPE_INT64, &d3, 1, &keys));
    CHECK_OK(cort_tensor_alloc(CORT_TYPE_FLOAT, &d3, 1, &vals));
    for (int i = 0; i < 3; i++) { ((int64_t *)keys->data)[i] = -i * 1000; ((float *)vals->data)[i] = (float)i / 2; }
    CHECK_OK(cort_map_create(keys, vals, &map));
    CHECK_OK(cort_tensor_alloc(CORT_TYPE_STRING, &d3, 1, &skeys));
    CHECK_OK(cort_string_set(skeys, 0, "k", 1));
    cort_value *seq3;
    CHECK_OK(cort_sequence_new(CORT_TYPE_UNDEFINED, &seq3));
    for (int i = 0; i < 3; i++) CHECK_OK(cort_sequence_push(seq3, t1));
    CHECK_OK(cort_map_create(skeys, seq3, &map2));
    const cort_value *all[] = { t1, t2, seq, opt, empty, map, map2 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        void *buf = NULL;
        size_t n = 0;
        if (!CHECK_OK(cort_value_serialize(all[i], NULL, &buf, &n))) continue;
        cort_value *back = NULL;
        if (CHECK_OK(cort_value_parse(buf, n, (int)all[i]->kind, &back))) {
            CHECK_MSG(values_equal(all[i], back), "value %zu round trip", i);
            cort_value_release(back);
        }
        CHECK_MSG(roundtrip(buf, n, (int)all[i]->kind, "built"), "value %zu double round trip", i);
        /* the guess finds the same kind (an empty optional of a tensor is byte-identical to an empty
         * sequence of tensors, which the guess prefers) */
        if (all[i] != empty && CHECK_OK(cort_value_parse(buf, n, 0, &back))) {
            CHECK_MSG(back->kind == all[i]->kind, "guess for value %zu: kind %d", i, back->kind);
            cort_value_release(back);
        }
        /* every proper prefix fails cleanly or parses into something (no crash) */
        for (size_t k = 0; k < n; k++) {
            cort_value *p = NULL;
            cort_status *st = cort_value_parse(buf, k, 0, &p);
            cort_status_free(st);
            cort_value_release(p);
        }
        cort_free(buf);
    }
    /* allocation failures while parsing and serializing a map: OOM, no leak */
    {   void *buf = NULL;
        size_t n = 0, before = in_use();
        int ok = 0, bad = 0;
        if (CHECK_OK(cort_value_serialize(map2, "m", &buf, &n))) {
            before = in_use();
            for (long k = 1; k < 10000 && !ok; k++) {
                cort_value *p = NULL;
                void *s2 = NULL;
                size_t n2 = 0;
                cort_test_alloc_fail_at(k);
                cort_status *st = cort_value_parse(buf, n, 0, &p);
                if (!st) st = cort_value_serialize(p, "m", &s2, &n2);
                cort_test_alloc_fail_at(0);
                if (!st) ok = 1;
                else if (cort_status_code(st) != CORT_ERROR_OUT_OF_MEMORY) bad++;
                cort_status_free(st);
                cort_value_release(p);
                cort_free(s2);
            }
            CHECK(ok && !bad);
            CHECK(in_use() == before);
            cort_free(buf);
        }
    }
    cort_value_release(t1); cort_value_release(t2); cort_value_release(seq); cort_value_release(opt);
    cort_value_release(empty); cort_value_release(keys); cort_value_release(vals); cort_value_release(map);
    cort_value_release(skeys); cort_value_release(seq3); cort_value_release(map2);
}

/* ---- the backend test suite ---- */

static int is_dir(const char *p) { struct stat s; return !stat(p, &s) && S_ISDIR(s.st_mode); }
static int is_file(const char *p) { struct stat s; return !stat(p, &s) && S_ISREG(s.st_mode); }

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void test_backend_suite(void) {
    static const char *const suites[] = { "node", "pytorch-converted", "pytorch-operator", "simple", "real" };
    if (!is_dir(TESTDATA)) { printf("skipping backend suite: %s not found\n", TESTDATA); return; }
    int models = 0, model_fail = 0, pbs = 0, pb_fail = 0;
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        char sdir[512];
        snprintf(sdir, sizeof sdir, "%s/%s", TESTDATA, suites[s]);
        DIR *d = opendir(sdir);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char mpath[1024];
            snprintf(mpath, sizeof mpath, "%s/%s/model.onnx", sdir, e->d_name);
            if (!is_file(mpath)) continue;
            models++;
            cort_model_ir *ir = NULL;
            cort_status *st = cort_model_load_file(mpath, &ir);
            if (st) {
                model_fail++;
                fprintf(stderr, "%s: [%s] %s\n", mpath, cort_code_name(cort_status_code(st)), cort_status_message(st));
                cort_status_free(st);
                continue;
            }
            /* the same bytes from memory give the same IR shape */
            size_t len;
            void *bytes = tu_read_file(mpath, &len);
            cort_model_ir *ir2 = NULL;
            st = bytes ? cort_model_load_memory(bytes, len, &ir2) : cort_error(CORT_ERROR_IO, "read");
            if (st || ir2->graph->n_nodes != ir->graph->n_nodes || ir2->graph->n_initializers != ir->graph->n_initializers ||
                ir2->n_owned_values != ir->n_owned_values) {
                model_fail++;
                fprintf(stderr, "%s: memory load differs: %s\n", mpath, cort_status_message(st));
            }
            cort_status_free(st);
            free(bytes);
            cort_model_free(ir2);
            /* inputs/outputs: use the declared kind of the graph input/output as the hint */
            cort_value_info_ir *ins[64];
            size_t n_in = 0;
            for (size_t i = 0; i < ir->graph->n_inputs && n_in < 64; i++) {
                int init = 0;
                for (size_t k = 0; k < ir->graph->n_initializers && !init; k++)
                    init = !strcmp(ir->graph->initializers[k].name, ir->graph->inputs[i].name);
                if (!init) ins[n_in++] = &ir->graph->inputs[i];
            }
            char ddir[1024];
            snprintf(ddir, sizeof ddir, "%s/%s", sdir, e->d_name);
            DIR *dd = opendir(ddir);
            char *sets[64];
            size_t n_sets = 0;
            struct dirent *de;
            while (dd && (de = readdir(dd)))
                if (!strncmp(de->d_name, "test_data_set_", 14) && n_sets < 64) sets[n_sets++] = strdup(de->d_name);
            if (dd) closedir(dd);
            qsort(sets, n_sets, sizeof sets[0], cmp_str);
            for (size_t si = 0; si < n_sets; si++) {
                for (int io = 0; io < 2; io++)
                    for (size_t k = 0; k < 64; k++) {
                        char p[1200];
                        snprintf(p, sizeof p, "%s/%s/%s_%zu.pb", ddir, sets[si], io ? "output" : "input", k);
                        if (!is_file(p)) break;
                        const cort_value_info_ir *vi = io ? (k < ir->graph->n_outputs ? &ir->graph->outputs[k] : NULL)
                                                          : (k < n_in ? ins[k] : NULL);
                        int hint = vi ? (int)vi->type.kind : 0;
                        void *pb = tu_read_file(p, &len);
                        pbs++;
                        if (!pb || !roundtrip(pb, len, hint, p)) pb_fail++;
                        else if (hint == CORT_VKIND_TENSOR) {
                            /* the declared element type matches */
                            cort_value *v = NULL;
                            if (!cort_tensor_parse(pb, len, &v)) {
                                /* the suite stores bfloat16 tensors as uint16 (onnx 1.12 quirk) */
                                int bf16_quirk = vi->type.elem_type == CORT_TYPE_BFLOAT16 && v->type == CORT_TYPE_UINT16;
                                if (vi->type.elem_type && v->type != vi->type.elem_type && !bf16_quirk) {
                                    pb_fail++;
                                    fprintf(stderr, "%s: type %s, declared %s\n", p, cort_type_name(v->type),
                                            cort_type_name(vi->type.elem_type));
                                }
                                cort_value_release(v);
                            }
                        }
                        free(pb);
                    }
                free(sets[si]);
            }
            cort_model_free(ir);
        }
        closedir(d);
    }
    printf("backend suite: %d models (%d failed), %d .pb files (%d failed)\n", models, model_fail, pbs, pb_fail);
    CHECK(model_fail == 0);
    CHECK(pb_fail == 0);
    CHECK(models > 0);
}

/* The kind guess on the suite's sequence/optional files (hint 0) parses them all. */
static void test_guess_on_suite(void) {
    static const char *const files[] = {
        "node/test_sequence_insert_at_back/test_data_set_0/input_0.pb",
        "node/test_optional_has_element_empty/test_data_set_0/input_0.pb",
        "node/test_optional_get_element_sequence/test_data_set_0/input_0.pb",
        "node/test_loop13_seq/test_data_set_0/input_2.pb",
        "node/test_identity_opt/test_data_set_0/input_0.pb",
    };
    static const int kinds[] = { CORT_VKIND_SEQUENCE, CORT_VKIND_OPTIONAL, CORT_VKIND_OPTIONAL, CORT_VKIND_SEQUENCE,
                                 CORT_VKIND_OPTIONAL };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", TESTDATA, files[i]);
        size_t len;
        void *b = tu_read_file(p, &len);
        if (!b) continue;
        cort_value *v = NULL;
        if (CHECK_OK(cort_value_parse(b, len, 0, &v))) {
            CHECK_MSG(v->kind == (cort_vkind)kinds[i], "%s: guessed kind %d", files[i], v->kind);
            cort_value_release(v);
        }
        free(b);
    }
}

static void check_if_function(const cort_model_ir *m) {
    const cort_graph_ir *g = m->graph;
    CHECK(!strcmp(m->producer_name, "make_test_models"));
    CHECK(m->n_metadata == 1 && !strcmp(m->metadata[0].key, "purpose"));
    CHECK(m->n_functions == 1 && !strcmp(m->functions[0].name, "MyLeaky") && !strcmp(m->functions[0].domain, "local") &&
          m->functions[0].n_nodes == 1 && m->functions[0].nodes[0].attrs[0].ref_attr_name);
    CHECK(g->n_nodes == 2 && !strcmp(g->nodes[0].op_type, "If") && g->nodes[0].n_attrs == 2);
    if (g->n_nodes == 2 && g->nodes[0].n_attrs == 2) {
        const cort_attr_ir *t = find_attr(&g->nodes[0], "then_branch"), *e = find_attr(&g->nodes[0], "else_branch");
        CHECK(t && t->type == CORT_ATTR_GRAPH && t->g->n_nodes == 1 && !strcmp(t->g->nodes[0].op_type, "Identity"));
        CHECK(e && e->g && !strcmp(e->g->nodes[0].op_type, "Neg") && !strcmp(e->g->outputs[0].name, "y_else"));
        const cort_attr_ir *al = find_attr(&g->nodes[1], "alpha");
        CHECK(al && al->type == CORT_ATTR_FLOAT && al->f == 0.2f && !strcmp(g->nodes[1].domain, "local"));
    }
    CHECK(g->n_inputs == 2 && g->inputs[1].type.rank == 1 && !strcmp(g->inputs[1].type.dim_params[0], "N"));
    CHECK(g->n_inputs == 2 && g->inputs[0].type.rank == 0 && g->inputs[0].type.elem_type == CORT_TYPE_BOOL);
    CHECK(g->n_initializers == 4);
    for (size_t i = 0; i < g->n_initializers; i++) {
        const cort_initializer_ir *in = &g->initializers[i];
        const cort_value *v = in->value;
        if (!strcmp(in->name, "i8")) CHECK(v->type == CORT_TYPE_INT8 && ((int8_t *)v->data)[0] == -1 && ((int8_t *)v->data)[2] == 127);
        else if (!strcmp(in->name, "b")) CHECK(v->type == CORT_TYPE_BOOL && ((uint8_t *)v->data)[0] == 1 && ((uint8_t *)v->data)[1] == 0);
        else if (!strcmp(in->name, "h")) CHECK(v->type == CORT_TYPE_FLOAT16 && cort_f16_to_f32(((uint16_t *)v->data)[1]) == -2.f);
        else if (!strcmp(in->name, "sp"))
            CHECK(v->rank == 2 && v->count == 6 && ((float *)v->data)[0] == 1.f && ((float *)v->data)[5] == 2.f &&
                  ((float *)v->data)[3] == 0.f);
        else CHECK_MSG(0, "unexpected initializer %s", in->name);
    }
}

static void test_checked_in_models(void) {
    DIR *d = opendir("tests/data/loader");
    if (!d) { printf("skipping tests/data/loader (run from the repo root)\n"); return; }
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 5, ".onnx")) continue;
        char p[512];
        snprintf(p, sizeof p, "tests/data/loader/%s", e->d_name);
        cort_model_ir *ir = NULL;
        int expect_bad = !strncmp(e->d_name, "bad_", 4);
        cort_status *st = cort_model_load_file(p, &ir);
        CHECK_MSG(expect_bad ? cort_status_code(st) == CORT_ERROR_INVALID_MODEL : !st, "%s: %s", p, cort_status_message(st));
        cort_status_free(st);
        if (ir && !strcmp(e->d_name, "if_function.onnx")) check_if_function(ir);
        if (ir && !strcmp(e->d_name, "external.onnx")) {
            const cort_value *w = ir->graph->n_initializers == 1 ? ir->graph->initializers[0].value : NULL;
            CHECK(w && w->count == 6 && ((float *)w->data)[5] == 5.f && w->owns_data);
        }
        if (ir && !strcmp(e->d_name, "typed_strings.onnx")) {
            const cort_graph_ir *g = ir->graph;
            CHECK(g->n_initializers == 2 && !strcmp(cort_string_get(g->initializers[0].value, 0), "hello") &&
                  ((double *)g->initializers[1].value->data)[1] == -1.25);
        }
        cort_model_free(ir);
        n++;
    }
    closedir(d);
    CHECK(n >= 5);
}

int main(void) {
    test_rich_model();
    test_truncation();
    test_alloc_failures();
    test_malformed_wire();
    test_depth();
    test_typed_fields();
    test_external_data();
    test_values();
    test_checked_in_models();
    test_guess_on_suite();
    test_backend_suite();
    return tu_finish();
}
