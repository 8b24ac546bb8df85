#include "testutil.h"
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

int tu_passed, tu_failed;

int tu_check_ok(cort_status *st, const char *file, int line, const char *expr) {
    if (!st) { tu_passed++; return 1; }
    tu_failed++;
    fprintf(stderr, "%s:%d: %s failed: [%s] %s\n", file, line, expr, cort_code_name(cort_status_code(st)),
            cort_status_message(st));
    cort_status_free(st);
    return 0;
}

int tu_check_code(cort_status *st, cort_code code, const char *file, int line, const char *expr, const char *needle) {
    int ok = cort_status_code(st) == code && (!needle || strstr(cort_status_message(st), needle));
    if (ok) tu_passed++;
    else {
        tu_failed++;
        fprintf(stderr, "%s:%d: %s: expected %s%s%s, got [%s] %s\n", file, line, expr, cort_code_name(code),
                needle ? " containing " : "", needle ? needle : "", cort_code_name(cort_status_code(st)),
                cort_status_message(st));
    }
    cort_status_free(st);
    return ok;
}

int tu_finish(void) {
    printf("%d passed, %d failed\n", tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

void *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    fclose(f);
    if (buf && len) *len = (size_t)n;
    return buf;
}

extern char **environ;

int tu_spawn_self(pid_t *pid, char *const args[], char *const envp[]) {
    /* Under an emulator (qemu-aarch64 for the cross-built tests) /proc/self/exe is the emulator's
     * host binary: CORT_TEST_EMULATOR names the command that runs a test binary, and the child is
     * spawned through it. */
    const char *emu = getenv("CORT_TEST_EMULATOR");
    if (!emu || !*emu) return posix_spawn(pid, "/proc/self/exe", NULL, NULL, args, envp);
    char buf[512], *argv[64];
    size_t n = 0, len = strlen(emu);
    if (len >= sizeof buf) return -1;
    memcpy(buf, emu, len + 1);
    for (char *tok = strtok(buf, " "); tok && n < 32; tok = strtok(NULL, " ")) argv[n++] = tok;
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);   /* qemu-user reports the guest binary */
    if (sl <= 0) return -1;
    self[sl] = 0;
    argv[n++] = self;
    for (size_t i = 1; args[i] && n < 63; i++) argv[n++] = args[i];
    argv[n] = NULL;
    return posix_spawnp(pid, argv[0], NULL, NULL, argv, envp);
}

int tu_fresh_process_trials(const char *name, char *argv0, int trials, int expect_failures) {
    int failed = 0, crashed = 0;
    for (int t = 0; t < trials; t++) {
        char *args[] = { argv0, (char *)"--trial", NULL };
        pid_t pid;
        if (tu_spawn_self(&pid, args, environ)) { perror("posix_spawn"); return 2; }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status)) crashed++;
        if (!WIFEXITED(status) || WEXITSTATUS(status)) failed++;
    }
    printf("%s trials: %d, failed: %d (crashed: %d)\n", name, trials, failed, crashed);
    if (expect_failures) {
        CHECK_MSG(failed * 2 >= trials, "negative control: only %d of %d trials failed", failed, trials);
    } else {
        CHECK_MSG(failed == 0, "%d of %d fresh-process trials failed", failed, trials);
    }
    return 0;
}
