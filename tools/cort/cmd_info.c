/* `cort info MODEL`: declared inputs/outputs, opsets, operator histogram and size. Reads the model
 * IR directly (no session), so it also works for models with unsupported operators. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "core/alloc.h"
#include "core/status.h"
#include "onnx/onnx.h"

static const char info_usage[] =
    "usage: cort info MODEL [--provider NAME]... [--nodes] [--threads N] [--optimization 0|1|2] [--dim NAME=VALUE]...\n"
    "Prints the model's inputs and outputs (name, type, shape with symbolic dims), imported opsets,\n"
    "operator histogram (subgraphs included), initializer count and sizes.\n"
    "With --provider or --nodes it also creates a session and shows which provider runs each node\n"
    "(--nodes lists every node; otherwise a count per provider and per op).\n";

/* Creates a session and prints where each node of the execution plan runs. */
static int print_placement(const char *path, const cli_session_args *sa, int list_nodes) {
    cort_session_options *o = NULL;
    cort_session *s = NULL;
    cort_status *st = cli_session_options(sa, &o);
    if (!st) st = cort_session_create(path, o, &s);
    cort_session_options_free(o);
    if (st) return cli_fail("info", st);
    size_t n = cort_session_node_count(s);
    typedef struct pc { const char *provider, *op; size_t count; } pc;
    pc *counts = calloc(n + 1, sizeof *counts);
    size_t n_counts = 0;
    printf("placement (%zu nodes in the execution plan):\n", n);
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL, *op = NULL, *prov = NULL;
        cort_status_free(cort_session_node_info(s, i, &name, &op, &prov));
        const char *note = cort_session_node_note(s, i);
        if (list_nodes)
            printf("  %-40s %-24s %s%s%s%s\n", name && name[0] ? name : "(unnamed)", op, prov, note && !strcmp(prov, "cpu") ? "  (" : "",
                   note && !strcmp(prov, "cpu") ? note : "", note && !strcmp(prov, "cpu") ? ")" : "");
        size_t k = 0;
        while (k < n_counts && (strcmp(counts[k].provider, prov) || strcmp(counts[k].op, op))) k++;
        if (k == n_counts && counts) { counts[k].provider = prov; counts[k].op = op; n_counts++; }
        if (counts) counts[k].count++;
    }
    if (!list_nodes)
        for (size_t k = 0; k < n_counts; k++) printf("  %-10s %-24s %zu\n", counts[k].provider, counts[k].op, counts[k].count);
    free(counts);
    cort_session_release(s);
    return CLI_EXIT_OK;
}

static size_t format_type(const cort_type_ir *t, char *buf, size_t len, int depth) {
    size_t o = 0;
#define OUT(...) do { if (o < len) o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__); } while (0)
    if (!t || depth > 8) { OUT("?"); return o; }
    switch (t->kind) {
    case CORT_VKIND_TENSOR:
        OUT("%s", t->elem_type ? cort_type_name(t->elem_type) : "?");
        if (t->rank < 0) { OUT("[unknown rank]"); break; }
        OUT("[");
        for (int i = 0; i < t->rank; i++) {
            if (i) OUT(",");
            if (t->dim_params && t->dim_params[i] && t->dim_params[i][0]) OUT("%s", t->dim_params[i]);
            else if (t->dims[i] >= 0) OUT("%" PRId64, t->dims[i]);
            else OUT("?");
        }
        OUT("]");
        break;
    case CORT_VKIND_SEQUENCE:
        OUT("seq(");
        if (o < len) o += format_type(t->inner, buf + o, len - o, depth + 1);
        OUT(")");
        break;
    case CORT_VKIND_OPTIONAL:
        OUT("optional(");
        if (o < len) o += format_type(t->inner, buf + o, len - o, depth + 1);
        OUT(")");
        break;
    case CORT_VKIND_MAP:
        OUT("map(%s, ", cort_type_name(t->key_type));
        if (o < len) o += format_type(t->inner, buf + o, len - o, depth + 1);
        OUT(")");
        break;
    default:
        OUT("?");
    }
#undef OUT
    return o;
}

typedef struct op_count { const char *domain, *op; size_t count; } op_count;
typedef struct op_hist { op_count *items; size_t n, cap; size_t nodes; } op_hist;

static cort_status *hist_add(op_hist *h, const char *domain, const char *op) {
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->items[i].op, op) == 0 && strcmp(h->items[i].domain, domain) == 0) {
            h->items[i].count++;
            return NULL;
        }
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 32;
        op_count *p = cort_realloc(h->items, cap * sizeof *p);
        if (!p) return cort_error_oom();
        h->items = p;
        h->cap = cap;
    }
    h->items[h->n++] = (op_count){ domain, op, 1 };
    return NULL;
}

static cort_status *hist_graph(op_hist *h, const cort_graph_ir *g, int depth) {
    if (!g || depth > 32) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const cort_node_ir *n = &g->nodes[i];
        CORT_TRY(hist_add(h, n->domain ? n->domain : "", n->op_type ? n->op_type : "?"));
        h->nodes++;
        for (size_t a = 0; a < n->n_attrs; a++) {
            const cort_attr_ir *at = &n->attrs[a];
            if (at->type == CORT_ATTR_GRAPH) CORT_TRY(hist_graph(h, at->g, depth + 1));
            if (at->type == CORT_ATTR_GRAPHS)
                for (size_t k = 0; k < at->n; k++) CORT_TRY(hist_graph(h, at->graphs[k], depth + 1));
        }
    }
    return NULL;
}

static int cmp_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    int d = strcmp(x->domain, y->domain);
    return d ? d : strcmp(x->op, y->op);
}

static int is_initializer(const cort_graph_ir *g, const char *name) {
    for (size_t i = 0; i < g->n_initializers; i++)
        if (strcmp(g->initializers[i].name, name) == 0) return 1;
    return 0;
}

static void human_bytes(double b, char *buf, size_t len) {
    const char *u[] = { "B", "KiB", "MiB", "GiB" };
    int i = 0;
    while (b >= 1024 && i < 3) { b /= 1024; i++; }
    snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

int cli_cmd_info(int argc, char **argv) {
    const char *path = NULL;
    cli_session_args sa;
    cli_session_args_init(&sa);
    int list_nodes = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { fputs(info_usage, stdout); return CLI_EXIT_OK; }
        int r = cli_session_arg("info", argc, argv, &i, &sa);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(argv[i], "--nodes")) { list_nodes = 1; continue; }
        if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("info", "unknown option '%s'", argv[i]);
        if (path) return cli_usage_error("info", "expected one MODEL, got '%s' too", argv[i]);
        path = argv[i];
    }
    if (!path) return cli_usage_error("info", "missing MODEL");

    cort_model_ir *m = NULL;
    op_hist h = {0};
    cort_status *st = cort_model_load_file(path, &m);
    if (st) return cli_fail("info", st);
    const cort_graph_ir *g = m->graph;
    char buf[1024], sz[64];

    struct stat sb;
    printf("model: %s\n", path);
    printf("ir_version: %" PRId64 "\n", m->ir_version);
    if (m->producer_name && m->producer_name[0])
        printf("producer: %s %s\n", m->producer_name, m->producer_version ? m->producer_version : "");
    if (g && g->name && g->name[0]) printf("graph: %s\n", g->name);
    printf("opsets:");
    for (size_t i = 0; i < m->n_opsets; i++)
        printf("%s %s %" PRId64, i ? "," : "", m->opsets[i].domain && m->opsets[i].domain[0] ? m->opsets[i].domain : "ai.onnx",
               m->opsets[i].version);
    printf("\n");

    size_t n_in = 0;
    for (size_t i = 0; g && i < g->n_inputs; i++) n_in += !is_initializer(g, g->inputs[i].name);
    printf("inputs (%zu):\n", n_in);
    for (size_t i = 0, k = 0; g && i < g->n_inputs; i++) {
        if (is_initializer(g, g->inputs[i].name)) continue;
        format_type(&g->inputs[i].type, buf, sizeof buf, 0);
        printf("  %zu %s: %s\n", k++, g->inputs[i].name, buf);
    }
    printf("outputs (%zu):\n", g ? g->n_outputs : 0);
    for (size_t i = 0; g && i < g->n_outputs; i++) {
        format_type(&g->outputs[i].type, buf, sizeof buf, 0);
        printf("  %zu %s: %s\n", i, g->outputs[i].name, buf);
    }

    if ((st = hist_graph(&h, g, 0))) goto error;
    if (h.n) qsort(h.items, h.n, sizeof *h.items, cmp_count);
    printf("operators (%zu nodes, %zu types):\n", h.nodes, h.n);
    for (size_t i = 0; i < h.n; i++) {
        if (h.items[i].domain[0]) snprintf(buf, sizeof buf, "%s.%s", h.items[i].domain, h.items[i].op);
        else snprintf(buf, sizeof buf, "%s", h.items[i].op);
        printf("  %-28s %zu\n", buf, h.items[i].count);
    }
    if (m->n_functions) printf("functions: %zu\n", m->n_functions);

    double params = 0, pbytes = 0;
    for (size_t i = 0; g && i < g->n_initializers; i++) {
        const cort_value *v = g->initializers[i].value;
        if (cort_value_kind(v) != 1) continue;
        params += (double)cort_tensor_element_count(v);
        pbytes += (double)cort_tensor_bytes(v);
    }
    human_bytes(pbytes, sz, sizeof sz);
    printf("initializers: %zu (%.0f parameters, %s)\n", g ? g->n_initializers : 0, params, sz);
    if (stat(path, &sb) == 0) {
        human_bytes((double)sb.st_size, sz, sizeof sz);
        printf("size: %lld bytes (%s)\n", (long long)sb.st_size, sz);
    }
    for (size_t i = 0; i < m->n_metadata; i++) printf("metadata %s: %s\n", m->metadata[i].key, m->metadata[i].value);
    cort_free(h.items);
    cort_model_free(m);
    if (sa.n_providers || list_nodes) return print_placement(path, &sa, list_nodes);
    return CLI_EXIT_OK;
error:
    cort_free(h.items);
    cort_model_free(m);
    return cli_fail("info", st);
}
