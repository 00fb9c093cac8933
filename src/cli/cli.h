/*
 * The corral command-line tool: one binary, subcommands. Each subcommand is a
 * function taking its own argv (argv[0] is the subcommand name) and returning
 * the process exit status: 0 success, 1 a check failed, 2 invalid input or
 * usage.
 */
#ifndef CORRAL_CLI_H
#define CORRAL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#define CORRAL_EXIT_OK      0
#define CORRAL_EXIT_FAIL    1
#define CORRAL_EXIT_INVALID 2

/* Flag values (src/cli/flags.c): an integer in [min, max], a positive
 * duration ("15s", "500ms") in nanoseconds. On a bad value they print
 * "corral CMD: --FLAG wants ..." and return false. flag is without "--". */
bool corral__flag_int(const char *cmd, const char *flag, const char *s, long long min,
                      long long max, long long *out);
bool corral__flag_duration(const char *cmd, const char *flag, const char *s, int64_t *ns);
/* The same, also in whole days ("90d", as retention and report windows are
 * written). */
bool corral__flag_days(const char *cmd, const char *flag, const char *s, int64_t *ns);

int corral_cmd_validate(int argc, char **argv);
int corral_cmd_report(int argc, char **argv);
int corral_cmd_apiserver(int argc, char **argv);
int corral_cmd_sim(int argc, char **argv);
int corral_cmd_agent(int argc, char **argv);
int corral_cmd_agent_shim(int argc, char **argv);
/* Clients of an API server (src/cli/kubecli.h). */
int corral_cmd_apply(int argc, char **argv);
int corral_cmd_get(int argc, char **argv);
int corral_cmd_describe(int argc, char **argv);
int corral_cmd_delete(int argc, char **argv);
int corral_cmd_logs(int argc, char **argv);
int corral_cmd_top(int argc, char **argv);
int corral_cmd_controller(int argc, char **argv);
/* The whole platform on this machine (src/cli/up.c, src/up). */
int corral_cmd_up(int argc, char **argv);
int corral_cmd_scheduler(int argc, char **argv);
/* The stand-in model server (src/standin). */
int corral_cmd_standin(int argc, char **argv);
/* The inference router (src/router). */
int corral_cmd_router(int argc, char **argv);

#endif
