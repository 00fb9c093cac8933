/*
 * A plain driver for the fuzz targets: runs LLVMFuzzerTestOneInput once on
 * every file named on the command line or found in a directory named there
 * (not recursively), as libFuzzer's `-runs=0 DIR` does, so `make test`
 * replays the corpora with the ASan/UBSan build instead of building the
 * library a third time for libFuzzer. Arguments starting with '-' are
 * libFuzzer's flags and are ignored. A finding aborts (the sanitizers run
 * with abort_on_error); an unreadable input is an error.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Corpus inputs are small; a bigger file is a mistake, not an input. */
#define REPLAY_MAX_INPUT (64u << 20)

static int run_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size > REPLAY_MAX_INPUT) {
        fprintf(stderr, "replay: %s: not a readable input of at most 64 MiB\n", path);
        fclose(fp);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *data = malloc(n ? n : 1);
    if (!data || fread(data, 1, n, fp) != n) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(data);
        fclose(fp);
        return -1;
    }
    fclose(fp);
    LLVMFuzzerTestOneInput(data, n);
    free(data);
    return 0;
}

static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        return -1;
    }
    int rc = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path)) {
            rc = -1;
            continue;
        }
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (run_file(path) != 0)
            rc = -1;
        else
            (*count)++;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue;
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (run_dir(argv[i], &count) != 0)
                rc = 1;
        } else if (run_file(argv[i]) != 0) {
            rc = 1;
        } else {
            count++;
        }
    }
    fprintf(stderr, "replay: %zu inputs ran\n", count);
    return rc;
}
