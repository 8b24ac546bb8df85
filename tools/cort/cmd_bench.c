/* `cort bench MODEL`: session creation time, first-run time, steady-state latency distribution and
 * peak RSS, as text or one JSON object. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "valueio.h"
#include "core/alloc.h"
#include "core/status.h"

static const char bench_usage[] =
    "usage: cort bench MODEL [OPTIONS]\n"
    "  --threads N             intra-op threads (0 = one per core)\n"
    "  --no-spin               idle pool workers sleep at once instead of spinning briefly\n"
    "  --custom-op-library P   load custom operators from shared library P (repeatable)\n"
    "  --profile-json FILE     write ONNX Runtime's chrome-trace profile (per node and run) to FILE\n"
    "  --save-optimized FILE   write the graph after cort's optimizations to FILE (ONNX)\n"
    "  --runs N                timed runs (default 20)\n"
    "  --warmup N              untimed runs after the first run (default 3)\n"
    "  --input-dir DIR         inputs from DIR/input_K.pb or .npy (others random)\n"
    "  --provider NAME, --optimization 0|1|2, --dim NAME=VALUE, --seed S   as for 'cort run'\n"
    "  --json                  print one JSON object with keys create_ms, first_run_ms, median_ms,\n"
    "                          p90_ms, min_ms, runs, peak_rss_kb\n"
    "  --profile [N]           per-node timing of the timed runs: time per op type, then the N\n"
    "                          slowest nodes (default 15); adds two clock reads per node. With\n"
    "                          --json: a \"profile\" array of {name, op, provider, ms, calls}\n";

typedef struct prof_row { const char *key; const char *op; double ms; uint64_t count; } prof_row;

static int prof_cmp(const void *a, const void *b) {
    double x = ((const prof_row *)a)->ms, y = ((const prof_row *)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Prints time per op type (with provider) and the `top` slowest nodes, per run, over `runs` runs. */
static cort_status *print_profile(const cort_session *s, long long runs, long long top, double median) {
    size_t n = cort_session_node_count(s), nt = 0;
    prof_row *nodes = cort_calloc(n ? n : 1, sizeof *nodes), *types = cort_calloc(n ? n : 1, sizeof *types);
    if (!nodes || !types) { cort_free(nodes); cort_free(types); return cort_error_oom(); }
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t ns = 0, cnt = 0;
        const char *name, *op, *prov;
        cort_status *st = cort_session_node_info(s, i, &name, &op, &prov);
        if (!st) st = cort_session_node_profile(s, i, &ns, &cnt);
        if (st) { cort_free(nodes); cort_free(types); return st; }
        nodes[i] = (prof_row){ name, op, ns / 1e6 / (double)runs, cnt };
        sum += nodes[i].ms;
        if (!cnt) continue;
        size_t t = 0;
        while (t < nt && strcmp(types[t].op, op)) t++;
        if (t == nt) types[nt++] = (prof_row){ prov, op, 0, 0 };
        types[t].ms += nodes[i].ms;
        types[t].count += 1;
    }
    qsort(types, nt, sizeof *types, prof_cmp);
    qsort(nodes, n, sizeof *nodes, prof_cmp);
    printf("profile:        node time %.4g ms per run (%.1f%% of the median latency)\n", sum,
           median > 0 ? 100.0 * sum / median : 0.0);
    printf("  %-24s %8s %10s %7s\n", "op type", "nodes", "ms/run", "share");
    for (size_t t = 0; t < nt; t++)
        printf("  %-24s %8llu %10.4f %6.1f%%\n", types[t].op, (unsigned long long)types[t].count, types[t].ms,
               sum > 0 ? 100.0 * types[t].ms / sum : 0.0);
    printf("  %-40s %-16s %10s %7s\n", "slowest nodes", "op type", "ms/run", "share");
    for (size_t i = 0; i < n && (long long)i < top && nodes[i].count; i++)
    {
        const char *k = nodes[i].key[0] ? nodes[i].key : "(unnamed)";
        size_t len = strlen(k);
        printf("  %s%-40s %-16s %10.4f %6.1f%%\n", len > 40 ? "..." : "", len > 40 ? k + len - 37 : k, nodes[i].op,
               nodes[i].ms, sum > 0 ? 100.0 * nodes[i].ms / sum : 0.0);
    }
    cort_free(nodes);
    cort_free(types);
    return NULL;
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

int cli_cmd_bench(int argc, char **argv) {
    const char *model = NULL, *input_dir = NULL, *v = NULL;
    long long runs = 20, warmup = 3, seed = 0;
    int json = 0;
    long long profile_top = -1;
    cli_session_args sargs;
    cli_session_args_init(&sargs);
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) { fputs(bench_usage, stdout); return CLI_EXIT_OK; }
        if ((r = cli_session_arg("bench", argc, argv, &i, &sargs)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            continue;
        }
        if ((r = cli_opt(argc, argv, &i, "--runs", &v)) != 0) {
            if (r < 0 || !cli_parse_int("bench", "--runs", v, 1, 100000000, &runs)) return CLI_EXIT_USAGE;
        } else if ((r = cli_opt(argc, argv, &i, "--warmup", &v)) != 0) {
            if (r < 0 || !cli_parse_int("bench", "--warmup", v, 0, 100000000, &warmup)) return CLI_EXIT_USAGE;
        } else if ((r = cli_opt(argc, argv, &i, "--seed", &v)) != 0) {
            if (r < 0 || !cli_parse_int("bench", "--seed", v, 0, INT64_MAX, &seed)) return CLI_EXIT_USAGE;
        } else if ((r = cli_opt(argc, argv, &i, "--input-dir", &v)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            input_dir = v;
        } else if (strcmp(argv[i], "--profile") == 0) {
            profile_top = 15;
            if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9' &&
                !cli_parse_int("bench", "--profile", argv[++i], 0, 100000000, &profile_top))
                return CLI_EXIT_USAGE;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("bench", "unknown option '%s'", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("bench", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!model) return cli_usage_error("bench", "missing MODEL");

    cort_session_options *opts = NULL;
    cort_session *s = NULL;
    cort_value **inputs = NULL, **outputs = NULL;
    const char **in_names = NULL, **out_names = NULL;
    double *lat = NULL;
    size_t n_in = 0, n_out = 0;
    cort_status *st = NULL;
    cli_rng rng;
    cli_rng_seed(&rng, (uint64_t)seed);

    if ((st = cli_session_options(&sargs, &opts))) goto error;
    if (profile_top >= 0 && (st = cort_session_options_set_profiling(opts, 1))) goto error;
    double t0 = cli_now_ms();
    if ((st = cort_session_create(model, opts, &s))) goto error;
    double create_ms = cli_now_ms() - t0;
    n_in = cort_session_input_count(s);
    n_out = cort_session_output_count(s);
    inputs = cort_calloc(n_in ? n_in : 1, sizeof *inputs);
    in_names = cort_calloc(n_in ? n_in : 1, sizeof *in_names);
    outputs = cort_calloc(n_out ? n_out : 1, sizeof *outputs);
    out_names = cort_calloc(n_out ? n_out : 1, sizeof *out_names);
    lat = cort_calloc((size_t)runs, sizeof *lat);
    if (!inputs || !in_names || !outputs || !out_names || !lat) { st = cort_error_oom(); goto error; }
    for (size_t k = 0; k < n_in; k++) in_names[k] = cort_session_input_name(s, k);
    for (size_t k = 0; k < n_out; k++) out_names[k] = cort_session_output_name(s, k);
    if (input_dir) {
        size_t found = 0;
        if (!cli_dir_exists(input_dir)) {
            st = cort_error(CORT_ERROR_IO, "--input-dir '%s' is not a directory", input_dir);
            goto error;
        }
        if ((st = cli_load_input_dir(s, input_dir, inputs, &found))) goto error;
    }
    if ((st = cli_fill_random_inputs(s, model, &sargs, &rng, inputs))) goto error;

    double first_ms = 0;
    long long total = 1 + warmup + runs;
    for (long long r = 0; r < total; r++) {
        if (r % 16 == 0 || r == total - 1) cli_progress("bench: run %lld/%lld", r + 1, total);
        t0 = cli_now_ms();
        st = cort_session_run(s, NULL, in_names, (cort_value *const *)inputs, n_in, out_names, n_out, outputs);
        double ms = cli_now_ms() - t0;
        for (size_t k = 0; k < n_out; k++) { cort_value_release(outputs[k]); outputs[k] = NULL; }
        if (st) goto error;
        if (r == warmup && profile_top >= 0) cort_session_profile_reset(s);
        if (r == 0) first_ms = ms;
        else if (r > warmup) lat[r - 1 - warmup] = ms;
    }
    cli_progress_clear();
    qsort(lat, (size_t)runs, sizeof *lat, cli_cmp_double);
    double median = cli_quantile(lat, (size_t)runs, 0.5), p90 = cli_quantile(lat, (size_t)runs, 0.9), mn = lat[0];
    long rss = cli_peak_rss_kb();
    if (json) {
        printf("{\"model\": ");
        json_string(stdout, model);
        printf(", \"threads\": %d, \"create_ms\": %.4f, \"first_run_ms\": %.4f, \"median_ms\": %.4f, "
               "\"p90_ms\": %.4f, \"min_ms\": %.4f, \"runs\": %lld, \"warmup\": %lld, \"peak_rss_kb\": %ld",
               sargs.threads < 0 ? 0 : sargs.threads, create_ms, first_ms, median, p90, mn, runs, warmup, rss);
        if (profile_top >= 0) {   /* every node: name, op type, provider, ms per run */
            printf(", \"profile\": [");
            for (size_t i = 0; i < cort_session_node_count(s); i++) {
                const char *name, *op, *prov;
                uint64_t ns = 0, cnt = 0;
                if ((st = cort_session_node_info(s, i, &name, &op, &prov)) ||
                    (st = cort_session_node_profile(s, i, &ns, &cnt)))
                    goto error;
                printf("%s{\"name\": ", i ? ", " : "");
                json_string(stdout, name);
                printf(", \"op\": ");
                json_string(stdout, op);
                printf(", \"provider\": ");
                json_string(stdout, prov);
                printf(", \"ms\": %.5f, \"calls\": %llu}", ns / 1e6 / (double)runs, (unsigned long long)cnt);
            }
            printf("]");
        }
        printf("}\n");
    } else {
        printf("model:          %s\n", model);
        if (sargs.threads >= 0) printf("threads:        %d\n", sargs.threads);
        else printf("threads:        default\n");
        printf("session create: %.4g ms\n", create_ms);
        printf("first run:      %.4g ms\n", first_ms);
        printf("latency:        median %.4g ms, p90 %.4g ms, min %.4g ms (%lld runs, %lld warmup)\n", median, p90, mn,
               runs, warmup);
        printf("peak RSS:       %ld kB\n", rss);
        if (profile_top >= 0 && (st = print_profile(s, runs, profile_top, median))) goto error;
    }
    if ((st = cli_session_finish(&sargs, s))) goto error;
    for (size_t k = 0; k < n_in; k++) cort_value_release(inputs[k]);
    cort_free(inputs); cort_free(outputs); cort_free(in_names); cort_free(out_names); cort_free(lat);
    cort_session_release(s);
    cort_session_options_free(opts);
    return CLI_EXIT_OK;
error:
    cli_progress_clear();
    for (size_t k = 0; inputs && k < n_in; k++) cort_value_release(inputs[k]);
    cort_free(inputs); cort_free(outputs); cort_free(in_names); cort_free(out_names); cort_free(lat);
    cort_session_release(s);
    cort_session_options_free(opts);
    return cli_fail("bench", st);
}
