/* `cort` command-line tool: dispatches to one command per file (cmd_*.c). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "core/cpu_features.h"

static const char usage[] =
    "usage: cort COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  info MODEL              inputs/outputs, opsets, operator histogram, size\n"
    "  run MODEL [OPTIONS]     run a model once on given or random inputs\n"
    "  test DIR...             run ONNX backend-test folders and compare with expected outputs\n"
    "  bench MODEL [OPTIONS]   measure session creation and run latency\n"
    "  demo MODEL SAMPLES_DIR  classify the demo digit samples\n"
    "  quantize MODE IN OUT    int8 quantization, dynamic or static (runs python3 -m cort.quantization;\n"
    "                          see 'cort quantize --help')\n"
    "  serve [OPTIONS] MODELS  serve models over the KServe v2 REST API (runs cort-serve; see\n"
    "                          'cort serve --help')\n"
    "\n"
    "'cort COMMAND --help' describes a command. Exit status: 0 success, 1 failure, 2 usage error.\n";

/* `cort --version`: the version, the ISA level in use ("isa: ...", see cort_cpu_describe) and the
 * levels this CPU supports whatever CORT_ISA says ("levels: generic avx2 avx512"; scripts/run_tests.sh
 * runs one lane per level). A bad CORT_ISA prints the error and fails. */
static int print_isa(void) {
    char levels[64] = "";
    cort_isa_level lv[CORT_ISA_LEVEL_COUNT];
    const int n = cort_cpu_levels(lv, CORT_ISA_LEVEL_COUNT);
    for (int i = 0, len = 0; i < n && len < (int)sizeof levels; i++)
        len += snprintf(levels + len, sizeof levels - (size_t)len, "%s%s", i ? " " : "", cort_isa_name(lv[i]));
    char line[512];
    cort_status *st = cort_cpu_describe(line, sizeof line, NULL);
    if (st) {
        fprintf(stderr, "cort: %s\n", cort_status_message(st));
        cort_status_free(st);
        printf("levels: %s\n", levels);
        return CLI_EXIT_FAIL;
    }
    printf("%s\nlevels: %s\n", line, levels);
    return CLI_EXIT_OK;
}

/* `cort serve ...` runs the cort-serve program installed next to this one: the server links
 * libmicrohttpd and jansson, which the CLI and libcort do not. */
static int run_serve(char **argv) {
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
    if (n <= 0) {
        fprintf(stderr, "cort: cannot locate this program to find cort-serve next to it\n");
        return CLI_EXIT_FAIL;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    strcpy(slash ? slash + 1 : self, "cort-serve");
    argv[0] = self;
    execv(self, argv);
    fprintf(stderr, "cort: %s not found: this build has no server (it needs libmicrohttpd-dev and libjansson-dev)\n", self);
    return CLI_EXIT_FAIL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("cort %s\n", cort_version());
        return print_isa();
    }
    if (strcmp(cmd, "serve") == 0) return run_serve(argv + 1);
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        { "info", cli_cmd_info }, { "run", cli_cmd_run }, { "test", cli_cmd_test },
        { "bench", cli_cmd_bench }, { "demo", cli_cmd_demo },
        { "quantize", cli_cmd_quantize },
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "cort: unknown command '%s'\n\n%s", cmd, usage);
    return CLI_EXIT_USAGE;
}
