/*
 * corral: entry point and subcommand table.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "corral/agent.h"

#define CORRAL_VERSION "0.1.0"

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command_t;

static const command_t commands[] = {
    {"validate", corral_cmd_validate,
     "check manifests (files, directories or -) and report every error with its line"},
    {"apiserver", corral_cmd_apiserver, "serve the Kubernetes API from a data directory (SQLite)"},
    {"sim", corral_cmd_sim, "run the scheduler on a scenario file in virtual time"},
    {"apply", corral_cmd_apply, "create or update the objects of manifests on an API server"},
    {"get", corral_cmd_get, "list objects as tables, JSON, YAML or names; -w to watch"},
    {"describe", corral_cmd_describe, "show one object in detail with its events"},
    {"delete", corral_cmd_delete, "delete objects by kind and name, or those of manifests"},
    {"logs", corral_cmd_logs, "print a pod's container log (-f to follow)"},
    {"top", corral_cmd_top, "CPU, memory and GPU use of nodes, pods and each GPU"},
    {"agent", corral_cmd_agent, "the node agent: register a node with its GPUs and run its pods"},
    {"agent-shim", corral_cmd_agent_shim, NULL},             /* internal: runs one container */
    {"standin-kubelet", corral_agent_standin_kubelet, NULL}, /* tests: kubelet's device manager */
    {"controller", corral_cmd_controller,
     "run the Job, PodGroup/Queue status, garbage collection and node controllers"},
    {"up", corral_cmd_up, "run the platform on this machine (API server, scheduler, agents...)"},
    {"scheduler", corral_cmd_scheduler, "schedule pods through an API server (the live engine)"},
    {"standin-llm", corral_cmd_standin,
     "a stand-in LLM server for tests and demos (OpenAI API, vLLM metrics): not vLLM"},
    {"router", corral_cmd_router,
     "the inference router: HTTP proxy to InferenceServices (split, tags, scale from zero)"},
    {"report", corral_cmd_report, "GPU accounting: `report usage` from UsageRecords (sacct-like)"},
};

static void usage(FILE *fp)
{
    fprintf(fp, "usage: corral <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (commands[i].summary)
            fprintf(fp, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "  %-11s %s\n", "version", "print the version");
    fprintf(fp, "\nRun 'corral <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CORRAL_EXIT_INVALID;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return CORRAL_EXIT_OK;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("corral %s\n", CORRAL_VERSION);
        return CORRAL_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "corral: unknown command \"%s\"\n\n", cmd);
    usage(stderr);
    return CORRAL_EXIT_INVALID;
}
