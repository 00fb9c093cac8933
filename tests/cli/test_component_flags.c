/* The long-running components' shared client flags (src/cli/kube.c):
 * kube-scheduler's defaults and names, values checked. */
#include <criterion/criterion.h>

#include "cli/kubecli.h"

TestSuite(component_flags, .timeout = 10);

Test(component_flags, defaults_and_values)
{
    corral_client_flags_t f = {0};
    corral__component_flags_init(&f);
    cr_assert_eq(f.qps, 50);
    cr_assert_eq(f.burst, 100);
    cr_assert_str_eq(f.accept, "application/vnd.kubernetes.protobuf");
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_QPS, "20.5"), 1);
    cr_assert_eq(f.qps, 20.5);
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_QPS, "-1"), 1);
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_QPS, "0"), -1);
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_QPS, "fast"), -1);
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_BURST, "7"), 1);
    cr_assert_eq(f.burst, 7);
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_BURST, "0"), -1);
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_CONTENT_TYPE, "application/json"), 1);
    cr_assert_str_eq(f.accept, "application/json");
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_CONTENT_TYPE, "text/yaml"), -1);
    cr_assert_eq(corral__component_flag("t", &f, CORRAL__OPT_KUBECONFIG, "/k"), 1);
    cr_assert_str_eq(f.kubeconfig, "/k");
    cr_assert_eq(corral__component_flag("t", &f, 's', "http://h"), 1);
    cr_assert_str_eq(f.server, "http://h");
    cr_assert_eq(corral__component_flag("t", &f, 'n', "ns"), 0);
    cr_assert_eq(corral__component_flag("t", &f, 9999, "x"), 0);
}
