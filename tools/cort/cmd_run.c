/* `cort run MODEL`: one inference on inputs from files (or seeded random values), then outputs are
 * written to a folder (output_K.npy / .pb) or summarized on stdout. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "npy.h"
#include "valueio.h"
#include "core/alloc.h"
#include "core/status.h"

static const char run_usage[] =
    "usage: cort run MODEL [OPTIONS]\n"
    "  --input NAME=FILE       input value from FILE (.npy, or .pb TensorProto/SequenceProto/\n"
    "                          OptionalProto/MapProto); repeatable\n"
    "  --input-dir DIR         feed DIR/input_K.pb (or .npy), K = index among the graph inputs\n"
    "                          that are not initializers (backend-test layout)\n"
    "  --output-dir DIR        write output K to DIR/output_K.npy (or .pb); without it a summary\n"
    "                          (name, type, shape, first values) is printed\n"
    "  --output-format npy|pb  file format of --output-dir (default npy; non-tensors and bfloat16\n"
    "                          are always written as .pb)\n"
    "  --threads N             intra-op threads (0 = one per core)\n"
    "  --no-spin               idle pool workers sleep at once instead of spinning briefly\n"
    "  --custom-op-library P   load custom operators from shared library P (repeatable)\n"
    "  --provider NAME         execution provider (repeatable; cpu is the fallback)\n"
    "  --optimization 0|1|2    graph optimization level\n"
    "  --max-tensor-bytes N    refuse any tensor above N bytes (default 1 TiB)\n"
    "  --fold-budget N         bytes constant folding may create beyond twice the initializers\n"
    "                          (default 16 MiB)\n"
    "  --dim NAME=VALUE        value of a symbolic dimension (repeatable)\n"
    "  --seed S                seed of the random values for inputs not given (default 0)\n"
    "Inputs not given are seeded random values of the declared type (symbolic dims = 1 unless --dim).\n";

typedef struct run_input_arg { const char *name, *file; } run_input_arg;

int cli_cmd_run(int argc, char **argv) {
    const char *model = NULL, *input_dir = NULL, *output_dir = NULL, *v = NULL;
    int pb_output = 0;
    long long seed = 0;
    cli_session_args sargs;
    cli_session_args_init(&sargs);
    run_input_arg given[64];
    size_t n_given = 0;

    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) { fputs(run_usage, stdout); return CLI_EXIT_OK; }
        if ((r = cli_session_arg("run", argc, argv, &i, &sargs)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            continue;
        }
        if ((r = cli_opt(argc, argv, &i, "--input-dir", &v)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            input_dir = v;
        } else if ((r = cli_opt(argc, argv, &i, "--input", &v)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1]) return cli_usage_error("run", "--input expects NAME=FILE, got '%s'", v);
            if (n_given == sizeof given / sizeof given[0]) return cli_usage_error("run", "too many --input options");
            ((char *)eq)[0] = '\0';   /* split NAME=FILE inside argv */
            given[n_given++] = (run_input_arg){ v, eq + 1 };
        } else if ((r = cli_opt(argc, argv, &i, "--output-dir", &v)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            output_dir = v;
        } else if ((r = cli_opt(argc, argv, &i, "--output-format", &v)) != 0) {
            if (r < 0) return CLI_EXIT_USAGE;
            if (strcmp(v, "npy") == 0) pb_output = 0;
            else if (strcmp(v, "pb") == 0) pb_output = 1;
            else return cli_usage_error("run", "--output-format must be npy or pb, got '%s'", v);
        } else if ((r = cli_opt(argc, argv, &i, "--seed", &v)) != 0) {
            if (r < 0 || !cli_parse_int("run", "--seed", v, 0, INT64_MAX, &seed)) return CLI_EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("run", "unknown option '%s'", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("run", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!model) return cli_usage_error("run", "missing MODEL");

    cort_session_options *opts = NULL;
    cort_session *s = NULL;
    cort_value **inputs = NULL, **outputs = NULL;
    const char **in_names = NULL, **out_names = NULL;
    size_t n_in = 0, n_out = 0;
    cort_status *st = NULL;
    cli_rng rng;
    cli_rng_seed(&rng, (uint64_t)seed);

    if ((st = cli_session_options(&sargs, &opts))) goto error;
    double t0 = cli_now_ms();
    if ((st = cort_session_create(model, opts, &s))) goto error;
    double create_ms = cli_now_ms() - t0;
    n_in = cort_session_input_count(s);
    n_out = cort_session_output_count(s);
    inputs = cort_calloc(n_in ? n_in : 1, sizeof *inputs);
    in_names = cort_calloc(n_in ? n_in : 1, sizeof *in_names);
    outputs = cort_calloc(n_out ? n_out : 1, sizeof *outputs);
    out_names = cort_calloc(n_out ? n_out : 1, sizeof *out_names);
    if (!inputs || !in_names || !outputs || !out_names) { st = cort_error_oom(); goto error; }
    for (size_t k = 0; k < n_in; k++) in_names[k] = cort_session_input_name(s, k);
    for (size_t k = 0; k < n_out; k++) out_names[k] = cort_session_output_name(s, k);

    for (size_t g = 0; g < n_given; g++) {
        size_t k = 0;
        while (k < n_in && strcmp(in_names[k], given[g].name) != 0) k++;
        if (k == n_in) {
            char list[512] = "";
            size_t o = 0;
            for (size_t j = 0; j < n_in && o < sizeof list; j++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s'%s'", j ? ", " : "", in_names[j]);
            st = cort_error(CORT_ERROR_INVALID_ARGUMENT, "--input: the model has no input '%s' (inputs: %s)",
                            given[g].name, n_in ? list : "none");
            goto error;
        }
        cort_value_type ty = {0, CORT_TYPE_UNDEFINED, -1};
        if ((st = cort_session_input_type(s, k, &ty, NULL, 0))) goto error;
        cort_value_release(inputs[k]);
        inputs[k] = NULL;
        if ((st = cli_load_value(given[g].file, ty.kind, &inputs[k]))) goto error;
        if ((st = cli_retype_input(&inputs[k], &ty))) goto error;
    }
    if (input_dir) {
        size_t found = 0;
        if (!cli_dir_exists(input_dir)) {
            st = cort_error(CORT_ERROR_IO, "--input-dir '%s' is not a directory", input_dir);
            goto error;
        }
        if ((st = cli_load_input_dir(s, input_dir, inputs, &found))) goto error;
    }
    int random_used = 0;
    for (size_t k = 0; k < n_in; k++) random_used |= !inputs[k];
    if ((st = cli_fill_random_inputs(s, model, &sargs, &rng, inputs))) goto error;

    t0 = cli_now_ms();
    st = cort_session_run(s, NULL, in_names, (cort_value *const *)inputs, n_in, out_names, n_out, outputs);
    double run_ms = cli_now_ms() - t0;
    if (st) goto error;

    if (output_dir) {
        if ((st = cli_mkdirs(output_dir))) goto error;
        for (size_t k = 0; k < n_out; k++) {
            char file[64];
            int as_pb = pb_output || cort_value_kind(outputs[k]) != 1 || !npy_type_supported(cort_tensor_type(outputs[k]));
            if (as_pb && !pb_output)
                fprintf(stderr, "cort run: output %zu '%s' cannot be stored as .npy; writing .pb\n", k, out_names[k]);
            snprintf(file, sizeof file, "output_%zu.%s", k, as_pb ? "pb" : "npy");
            char *path = cli_path_join(output_dir, file);
            if (!path) { st = cort_error_oom(); goto error; }
            st = cli_save_value(path, outputs[k], out_names[k]);
            if (!st) printf("%s: %s\n", out_names[k], path);
            cort_free(path);
            if (st) goto error;
        }
    } else {
        if (random_used) printf("inputs (random values where not given, seed %lld):\n", seed);
        else printf("inputs:\n");
        for (size_t k = 0; k < n_in; k++) { fputs("  ", stdout); cli_print_value(stdout, in_names[k], inputs[k], 8); }
        printf("outputs:\n");
        for (size_t k = 0; k < n_out; k++) { fputs("  ", stdout); cli_print_value(stdout, out_names[k], outputs[k], 8); }
        printf("session create %.2f ms, run %.2f ms\n", create_ms, run_ms);
    }
    for (size_t k = 0; k < n_in; k++) cort_value_release(inputs[k]);
    for (size_t k = 0; k < n_out; k++) cort_value_release(outputs[k]);
    cort_free(inputs); cort_free(outputs); cort_free(in_names); cort_free(out_names);
    cort_session_release(s);
    cort_session_options_free(opts);
    return CLI_EXIT_OK;
error:
    for (size_t k = 0; inputs && k < n_in; k++) cort_value_release(inputs[k]);
    for (size_t k = 0; outputs && k < n_out; k++) cort_value_release(outputs[k]);
    cort_free(inputs); cort_free(outputs); cort_free(in_names); cort_free(out_names);
    cort_session_release(s);
    cort_session_options_free(opts);
    return cli_fail("run", st);
}
