/* `cort quantize`: post-training int8 quantization. The quantizer is the Python package
 * cort.quantization (numpy and onnx do the graph work); this command runs it with Debian's
 * python3, pointing PYTHONPATH at the package that belongs to this build or installation. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define PYTHON "/usr/bin/python3"

/* dir/rel if it holds cort/quantization/__main__.py, resolved into out. */
static int find_package(const char *dir, const char *rel, char *out) {
    char path[PATH_MAX + 64], probe[PATH_MAX + 128];
    if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path) return 0;
    if (snprintf(probe, sizeof probe, "%s/cort/quantization/__main__.py", path) >= (int)sizeof probe) return 0;
    if (access(probe, R_OK) != 0) return 0;
    return realpath(path, out) != NULL;
}

int cli_cmd_quantize(int argc, char **argv) {
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "cort quantize: cannot locate this program to find the cort Python package\n");
        return CLI_EXIT_FAIL;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;   /* self is now the directory of the binary */

    /* The source tree (build/bin/cort -> python/) first, then an installation (PREFIX/bin/cort ->
     * PREFIX/lib/python3/dist-packages, where python/install.sh puts the package). */
    char pkg[PATH_MAX];
    if (!find_package(self, "../../python", pkg) && !find_package(self, "../lib/python3/dist-packages", pkg)) {
        fprintf(stderr, "cort quantize: the cort Python package (cort/quantization) is neither in the source tree "
                        "nor installed next to %s\n", self);
        return CLI_EXIT_FAIL;
    }
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(pkg) + (old && *old ? strlen(old) + 1 : 0) + 1;
    char *pythonpath = malloc(len);
    if (!pythonpath) {
        fprintf(stderr, "cort quantize: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    snprintf(pythonpath, len, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", pythonpath, 1);
    free(pythonpath);
    /* Calibration runs models through the Python binding: let it load the library of this build
     * rather than another one found first. */
    char lib[PATH_MAX + 32];
    if (!getenv("CORT_LIBRARY") && snprintf(lib, sizeof lib, "%s/../lib/libcort.so", self) < (int)sizeof lib &&
        access(lib, R_OK) == 0) {
        char resolved[PATH_MAX];
        if (realpath(lib, resolved)) setenv("CORT_LIBRARY", resolved, 1);
    }

    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) {
        fprintf(stderr, "cort quantize: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    args[0] = PYTHON;
    args[1] = "-m";
    args[2] = "cort.quantization";
    for (int i = 1; i < argc; i++) args[i + 2] = argv[i];
    execv(PYTHON, args);
    fprintf(stderr, "cort quantize: cannot run %s (the quantizer needs Python 3 with numpy and onnx)\n", PYTHON);
    free(args);
    return CLI_EXIT_FAIL;
}
