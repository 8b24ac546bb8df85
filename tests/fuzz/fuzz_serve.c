/* libFuzzer target: cort-serve's request parser and response builder (tools/cort-serve/
 * tensor_json.c) on arbitrary bytes. The input is the request body; a NUL byte, which JSON text
 * cannot hold, splits it: what precedes is the JSON header, what follows the binary tensor data
 * (Inference-Header-Content-Length). The first byte picks one of tests/fuzz/serve_models/ (an Identity
 * per v2 datatype, and an Add with two outputs) and is not part of the body; a request that parses is
 * run and its response built, so both directions are fuzzed. Every body is also parsed with
 * jansson alone (json_fast_path_off), which must give the same result bit for bit, or the same error
 * message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serve.h"

static const char *const k_models[] = { "add", "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16",
                                         "INT32", "INT64", "FP16", "FP32", "FP64", "BF16", "BYTES" };
#define N_MODELS (sizeof k_models / sizeof k_models[0])
static serve_model g_models[N_MODELS];
static char g_paths[N_MODELS][512];

static int load_models(void) {
    serve_defaults d = { .threads = 1, .max_queue = 1, .optimization_level = -1 };
    char err[512];
    for (size_t i = 0; i < N_MODELS; i++) {
        snprintf(g_paths[i], sizeof g_paths[i], "%s/tests/fuzz/serve_models/%s.onnx", CORT_SOURCE_DIR, k_models[i]);
        g_models[i].name = (char *)k_models[i];
        g_models[i].version = (char *)"1";
        g_models[i].path = g_paths[i];
        g_models[i].threads = 1;
        if (serve_model_load(&g_models[i], &d, err, sizeof err)) return -1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int loaded = -1;
    if (loaded < 0) loaded = load_models() == 0;
    if (!loaded) abort();   /* the committed models must load: a broken build, not a finding */
    if (size < 1) return 0;
    serve_model *const m = &g_models[data[0] % N_MODELS];
    data++;
    size--;
    const uint8_t *nul = memchr(data, 0, size);
    const size_t header = nul ? (size_t)(nul - data) : size;
    char *body = malloc(size ? size : 1);
    if (!body) return 0;
    memcpy(body, data, header);
    const size_t bin = nul ? size - header - 1 : 0;
    if (bin) memcpy(body + header, nul + 1, bin);
    serve_limits limits = { .max_elements = 1u << 16 };
    serve_request req;
    memset(&req, 0, sizeof req);
    char err[1024];
    err[0] = 0;
    const int rc = serve_parse_request(m, body, header + bin, header, &limits, &req, err, sizeof err);
    /* jansson alone must give the same answer: the fast path for data arrays changes nothing */
    {
        serve_limits slow_limits = limits;
        slow_limits.json_fast_path_off = 1;
        serve_request slow;
        memset(&slow, 0, sizeof slow);
        char slow_err[1024];
        slow_err[0] = 0;
        const int slow_rc = serve_parse_request(m, body, header + bin, header, &slow_limits, &slow, slow_err, sizeof slow_err);
        if (slow_rc != rc || (rc && strcmp(err, slow_err) != 0)) abort();
        if (rc == 0) {
            if (slow.n_inputs != req.n_inputs || slow.n_outputs != req.n_outputs) abort();
            if ((slow.id == NULL) != (req.id == NULL) || (slow.id && strcmp(slow.id, req.id) != 0)) abort();
            for (size_t i = 0; i < req.n_inputs; i++) {
                const cort_value *a = req.inputs[i], *b = slow.inputs[i];
                if (req.input_names[i] != slow.input_names[i] || cort_tensor_type(a) != cort_tensor_type(b) ||
                    cort_tensor_rank(a) != cort_tensor_rank(b) ||
                    memcmp(cort_tensor_shape(a), cort_tensor_shape(b), cort_tensor_rank(a) * sizeof(int64_t)) != 0)
                    abort();
                if (cort_tensor_type(a) == CORT_TYPE_STRING) {
                    char *const *x = cort_tensor_data(a), *const *y = cort_tensor_data(b);
                    for (size_t k = 0; k < cort_tensor_element_count(a); k++)
                        if (strcmp(x[k] ? x[k] : "", y[k] ? y[k] : "") != 0) abort();
                } else if (cort_tensor_bytes(a) && memcmp(cort_tensor_data(a), cort_tensor_data(b), cort_tensor_bytes(a)) != 0)
                    abort();   /* bit patterns: NaN payloads and -0 included */
            }
            for (size_t i = 0; i < req.n_outputs; i++)
                if (req.output_names[i] != slow.output_names[i] || req.output_binary[i] != slow.output_binary[i]) abort();
        }
        serve_request_free(&slow);
    }
    if (rc == 0) {
        cort_value *outs[32] = { 0 };
        cort_status *st = cort_session_run(m->session, NULL, (const char *const *)req.input_names, req.inputs,
                                           req.n_inputs, req.output_names, req.n_outputs, outs);
        if (!st) {
            serve_response resp;
            if (serve_build_response(m, &req, outs, &resp, err, sizeof err) == 0) free(resp.body);
            for (size_t i = 0; i < req.n_outputs; i++) cort_value_release(outs[i]);
        }
        cort_status_free(st);
    } else if (!err[0]) abort();   /* every refusal must say why */
    serve_request_free(&req);
    free(body);
    return 0;
}
