/* Volcano HyperNode decoding: tier, members with exactly one selector (exact
 * name, POSIX extended regex, label selector), status, and the messages. */
#include "model_test.h"

#define HN_HEAD                                                                                    \
    "apiVersion: topology.volcano.sh/v1alpha1\n"                                                   \
    "kind: HyperNode\n"                                                                            \
    "metadata:\n"                                                                                  \
    "  name: rack-1\n"                                                                             \
    "spec:\n"

TestSuite(hypernode);

Test(hypernode, rack_with_regex)
{
    mt_t t;
    int rc = mt_decode(&t, HN_HEAD "  tier: 1\n"
                                   "  tierName: rack\n"
                                   "  members:\n"
                                   "  - type: Node\n"
                                   "    selector:\n"
                                   "      regexMatch:\n"
                                   "        pattern: \"^rack1-gpu-[0-9]+$\"\n"
                                   "status:\n"
                                   "  nodeCount: 16\n"
                                   "  conditions: []\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->info->kind, CORRAL_KIND_HYPERNODE);
    cr_assert_null(t.obj->meta.namespace);
    const corral_hypernode_t *hn = t.obj->u.hn;
    cr_assert_eq(hn->tier, 1);
    cr_assert_eq(hn->nmembers, 1);
    cr_assert_eq(hn->members[0].type, CORRAL_HN_NODE);
    cr_assert_str_eq(hn->members[0].regex, "^rack1-gpu-[0-9]+$");
    cr_assert_null(hn->members[0].exact_name);
    cr_assert_not(hn->members[0].has_labels);
    cr_assert_eq(hn->node_count, 16);
    mt_fini(&t);
}

Test(hypernode, spine_of_racks)
{
    mt_t t;
    int rc = mt_decode(&t, HN_HEAD "  tier: 2\n"
                                   "  members:\n"
                                   "  - type: HyperNode\n"
                                   "    selector: {exactMatch: {name: rack-1}}\n"
                                   "  - type: HyperNode\n"
                                   "    selector: {exactMatch: {name: rack-2}}\n"
                                   "  - type: Node\n"
                                   "    selector:\n"
                                   "      labelMatch:\n"
                                   "        matchLabels: {topology.corral.dev/spine: s1}\n"
                                   "        matchExpressions:\n"
                                   "        - {key: gpu, operator: Exists}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_hypernode_t *hn = t.obj->u.hn;
    cr_assert_eq(hn->tier, 2);
    cr_assert_eq(hn->nmembers, 3);
    cr_assert_eq(hn->members[0].type, CORRAL_HN_HYPERNODE);
    cr_assert_str_eq(hn->members[0].exact_name, "rack-1");
    cr_assert_str_eq(hn->members[1].exact_name, "rack-2");
    cr_assert_eq(hn->members[2].type, CORRAL_HN_NODE);
    cr_assert(hn->members[2].has_labels);
    cr_assert_eq(hn->members[2].labels.n, 2);
    cr_assert_str_eq(hn->members[2].labels.reqs[0].key, "topology.corral.dev/spine");
    cr_assert_eq(hn->members[2].labels.reqs[1].op, CORRAL_SEL_EXISTS);
    mt_fini(&t);
}

Test(hypernode, tier_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  members:\n"
                                       "  - {type: Node, selector: {exactMatch: {name: n1}}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.tier", "required");
    mt_fini(&t);
}

Test(hypernode, tier_below_one)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 0\n"
                                       "  members:\n"
                                       "  - {type: Node, selector: {exactMatch: {name: n1}}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.tier", "at least 1", "got 0");
    mt_fini(&t);
}

Test(hypernode, tier_quoted)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: \"1\"\n"
                                       "  members:\n"
                                       "  - {type: Node, selector: {exactMatch: {name: n1}}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.tier", "remove the quotes");
    cr_assert_eq(t.diag.n, 1, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(hypernode, members_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.members", "at least one member");
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n  members: []\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.members", "at least one member");
    mt_fini(&t);
}

Test(hypernode, member_type_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - selector: {exactMatch: {name: n1}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.members[0].type", "required", "Node or HyperNode");
    mt_fini(&t);
}

Test(hypernode, member_type_typo)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Hypernode\n"
                                       "    selector: {exactMatch: {name: n1}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.members[0].type", "did you mean `HyperNode`");
    mt_fini(&t);
}

Test(hypernode, selector_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.members[0].selector", "required", "exactMatch",
                   "regexMatch", "labelMatch");
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector: {}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.members[0].selector", "required");
    mt_fini(&t);
}

Test(hypernode, selector_only_one)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector:\n"
                                       "      exactMatch: {name: n1}\n"
                                       "      regexMatch: {pattern: \"n[0-9]\"}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:11:", "spec.members[0].selector.regexMatch", "only one of",
                   "exactMatch is set too");
    mt_fini(&t);
}

Test(hypernode, bad_regex)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector:\n"
                                       "      regexMatch:\n"
                                       "        pattern: \"node-[0-9+\"\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:11:", "spec.members[0].selector.regexMatch.pattern",
                   "invalid regular expression", "node-[0-9+");
    mt_fini(&t);
}

Test(hypernode, empty_regex)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector: {regexMatch: {pattern: \"\"}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.members[0].selector.regexMatch.pattern", "required");
    mt_fini(&t);
}

Test(hypernode, exact_name_invalid)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector:\n"
                                       "      exactMatch:\n"
                                       "        name: GPU_Node_1\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:11:", "spec.members[0].selector.exactMatch.name", "invalid name",
                   "RFC 1123 subdomain");
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector: {exactMatch: {}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.members[0].selector.exactMatch.name", "required");
    mt_fini(&t);
}

Test(hypernode, label_match_errors)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector:\n"
                                       "      labelMatch:\n"
                                       "        matchExpressions:\n"
                                       "        - {key: zone, operator: In}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.members[0].selector.labelMatch.matchExpressions[0].values",
                   "non-empty");
    mt_fini(&t);
}

Test(hypernode, unknown_fields_warn_with_hint)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HN_HEAD "  tier: 1\n"
                                       "  members:\n"
                                       "  - type: Node\n"
                                       "    selector:\n"
                                       "      exactMatch: {name: n1}\n"
                                       "      regexMach: {pattern: x}\n"),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:11:", "warning:", "spec.members[0].selector.regexMach",
                   "did you mean `regexMatch`");
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, HN_HEAD "  teir: 1\n"
                                       "  members:\n"
                                       "  - {type: Node, selector: {exactMatch: {name: n1}}}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "warning:", "spec.teir", "did you mean `tier`");
    mt_assert_diag(&t, "spec.tier", "required");
    mt_fini(&t);
}

Test(hypernode, namespace_ignored)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: topology.volcano.sh/v1alpha1\n"
                               "kind: HyperNode\n"
                               "metadata: {name: s1, namespace: ml}\n"
                               "spec:\n"
                               "  tier: 3\n"
                               "  members: [{type: HyperNode, selector: {regexMatch: {pattern: "
                               "\"^spine-\"}}}]\n"),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "warning:", "cluster-scoped");
    cr_assert_null(t.obj->meta.namespace);
    cr_assert_eq(t.obj->u.hn->members[0].type, CORRAL_HN_HYPERNODE);
    mt_fini(&t);
}
