/* What the agent's unit tests share: loading the fake NVML library
 * (tests/agent/fake_nvml.c, built by make beside the unit test binary). */
#ifndef CORRAL_TESTS_AGENT_TEST_H
#define CORRAL_TESTS_AGENT_TEST_H

#include <criterion/criterion.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Make NVML the fake library in mode (see fake_nvml.c), with no injected
 * XID or lost GPU; returns its path. */
static inline const char *fake_nvml(const char *mode)
{
    static char path[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    cr_assert_gt(n, 0);
    exe[n] = '\0';
    snprintf(path, sizeof(path), "%s/fake_nvml.so", dirname(exe));
    cr_assert_eq(access(path, R_OK), 0, "%s is built by make with the unit tests", path);
    setenv("CORRAL_NVML_LIB", path, 1);
    setenv("FAKE_NVML_MODE", mode, 1);
    unsetenv("FAKE_NVML_XID");
    unsetenv("FAKE_NVML_LOST");
    return path;
}

#endif
