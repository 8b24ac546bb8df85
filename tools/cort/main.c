/* `cort` command-line tool: dispatches to one command per file (cmd_*.c). */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const char usage[] =
    "usage: cort COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  info MODEL              inputs/outputs, opsets, operator histogram, size\n"
    "  run MODEL [OPTIONS]     run a model once on given or random inputs\n"
    "  test DIR...             run ONNX backend-test folders and compare with expected outputs\n"
    "  bench MODEL [OPTIONS]   measure session creation and run latency\n"
    "  demo MODEL SAMPLES_DIR  classify the demo digit samples\n"
    "\n"
    "'cort COMMAND --help' describes a command. Exit status: 0 success, 1 failure, 2 usage error.\n";

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
        return CLI_EXIT_OK;
    }
    static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        { "info", cli_cmd_info }, { "run", cli_cmd_run }, { "test", cli_cmd_test },
        { "bench", cli_cmd_bench }, { "demo", cli_cmd_demo },
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "cort: unknown command '%s'\n\n%s", cmd, usage);
    return CLI_EXIT_USAGE;
}
