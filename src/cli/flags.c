/*
 * Numeric and duration flag values, checked the same way by every
 * subcommand that starts a component (agent, controller, scheduler, up),
 * with one error wording: "corral CMD: --FLAG wants ..., got "VALUE"".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "corral/timefmt.h"

bool corral__flag_int(const char *cmd, const char *flag, const char *s, long long min,
                      long long max, long long *out)
{
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < min || v > max) {
        fprintf(stderr, "corral %s: --%s wants an integer from %lld to %lld, got \"%s\"\n", cmd,
                flag, min, max, s);
        return false;
    }
    *out = v;
    return true;
}

bool corral__flag_duration(const char *cmd, const char *flag, const char *s, int64_t *ns)
{
    if (corral_duration_parse(s, strlen(s), ns) != 0 || *ns <= 0) {
        fprintf(stderr, "corral %s: --%s wants a duration like 15s or 500ms, got \"%s\"\n", cmd,
                flag, s);
        return false;
    }
    return true;
}

bool corral__flag_days(const char *cmd, const char *flag, const char *s, int64_t *ns)
{
    size_t n = strlen(s);
    if (n > 1 && s[n - 1] == 'd') {
        char *end;
        long long d = strtoll(s, &end, 10);
        if (end == s + n - 1 && d > 0 && d <= 100000) {
            *ns = (int64_t)d * 86400 * CORRAL_NS_PER_SEC;
            return true;
        }
        fprintf(stderr, "corral %s: --%s wants a duration like 7d, 12h or 30m, got \"%s\"\n", cmd,
                flag, s);
        return false;
    }
    return corral__flag_duration(cmd, flag, s, ns);
}
