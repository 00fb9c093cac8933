/*
 * corral logs POD [-c CONTAINER] [-f] [--tail N]: a pod's container log
 * from the API server's pods/log subresource (which the node agent
 * serves), printed as it arrives; with -f it follows until the container
 * ends or the command is interrupted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"

static void logs_usage(FILE *fp)
{
    fprintf(fp, "usage: corral logs POD [-c CONTAINER] [-f] [--tail N] [-n NS]\n"
                "\n"
                "  -c, --container NAME  the container (default: the pod's only one)\n"
                "  -f, --follow          keep printing as the log grows\n"
                "      --tail N          only the last N lines\n"
                "  -p, --previous        the previous instance of a restarted "
                "container\n\n" CORRAL__CLI_HELP);
}

static int print_line(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    fwrite(text, 1, len, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    return 0;
}

int corral_cmd_logs(int argc, char **argv)
{
    static const struct option opts[] = {{"container", required_argument, NULL, 'c'},
                                         {"follow", no_argument, NULL, 'f'},
                                         {"tail", required_argument, NULL, 't'},
                                         {"previous", no_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         CORRAL__CLI_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
    corral__cli_t k;
    corral__cli_init(&k, "corral logs");
    const char *container = NULL, *tail = NULL;
    bool follow = false, previous = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:fphn:s:", opts, NULL)) != -1) {
        char *end = NULL;
        if (c == 'c') {
            container = optarg;
        } else if (c == 'f') {
            follow = true;
        } else if (c == 'p') {
            previous = true;
        } else if (c == 't') {
            tail = optarg;
            if (strtol(optarg, &end, 10) < 0 || !*optarg || *end) {
                fprintf(stderr, "corral logs: --tail wants a number of lines\n");
                return CORRAL_EXIT_INVALID;
            }
        } else if (c == 'h') {
            logs_usage(stdout);
            return CORRAL_EXIT_OK;
        } else if (!corral__cli_opt(&k, c, optarg)) {
            logs_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    if (argc - optind != 1) {
        logs_usage(stderr);
        return CORRAL_EXIT_INVALID;
    }
    const char *pod = argv[optind];
    if (!strncmp(pod, "pod/", 4) || !strncmp(pod, "pods/", 5))
        pod = strchr(pod, '/') + 1;
    if (!corral__cli_connect(&k))
        return CORRAL_EXIT_FAIL;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t q;
    corral_buf_init(&q);
    if (container)
        corral_buf_printf(&q, "&container=%s", container);
    if (follow)
        corral_buf_puts(&q, "&follow=true");
    if (previous)
        corral_buf_puts(&q, "&previous=true");
    if (tail)
        corral_buf_printf(&q, "&tailLines=%s", tail);
    const char *path = corral__cli_path(&a, corral_kind_get(CORRAL_KIND_POD), k.ns, pod, "log");
    if (q.len)
        path = corral_arena_printf(&a, "%s?%s", path, q.p + 1);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_stream(k.c, path, print_line, NULL, &r);
    int exit_code = CORRAL_EXIT_OK;
    if (rc != 0 || r.code != 200) {
        corral__cli_error(&k, &r);
        exit_code = CORRAL_EXIT_FAIL;
    }
    corral_client_resp_fini(&r);
    corral_buf_fini(&q);
    corral_arena_fini(&a);
    corral__cli_fini(&k);
    return exit_code;
}
