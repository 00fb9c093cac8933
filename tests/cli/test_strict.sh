# `corral apiserver --strict` (docs/apiserver.md, "Strict mode"): each
# Corral-only shortcut is refused with kube-apiserver's answer, and what the
# default mode allows is checked beside it. The components against a strict
# server: tests/cli/test_strict_{scheduler,controller,agent}.sh.
. tests/cli/lib.bash
. tests/cli/apiserver_lib.bash
trap 'stop_server; rm -rf "$TMP"' EXIT

POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME"},"spec":{"containers":[{"name":"c","image":"busybox:1"}]}}'
pod() { printf '%s' "${POD/NAME/$1}"; }
P=/api/v1/namespaces/default/pods
JOB='{"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j"},"spec":{"tasks":[{"name":"t","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}]}}'
DEPLOY='{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d","v":"1"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}'
MP=application/merge-patch+json

for mode in default strict; do
    args=""
    [ "$mode" = strict ] && args=--strict
    rm -rf "$TMP/data"
    start_server "$TMP/data" $args

    # /version
    call GET /version
    if [ "$mode" = strict ]; then expect_body '"minor":"32"'; else expect_body '"minor":"20"'; fi

    # A pod's spec: nodeName only through pods/binding.
    expect_call 201 POST $P "$(pod p1)"
    call PATCH $P/p1 '{"spec":{"nodeName":"n1"}}' $MP
    if [ "$mode" = strict ]; then
        [ "$CODE" = 422 ] || fail "strict: spec.nodeName by patch: HTTP $CODE"
        expect_body 'Pod \"p1\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`'
        expect_call 422 PATCH $P/p1 '{"spec":{"restartPolicy":"Never"}}' $MP
    else
        [ "$CODE" = 200 ] || fail "default: spec.nodeName by patch: HTTP $CODE"
        expect_call 201 POST $P "$(pod p1b)"
    fi
    expect_call 200 PATCH $P/p1 '{"spec":{"containers":[{"name":"c","image":"busybox:2"}]}}' \
        application/strategic-merge-patch+json
    expect_call 200 PATCH $P/p1 '{"spec":{"tolerations":[{"key":"k","operator":"Exists"}]}}' $MP
    expect_call 201 POST $P "$(pod p2)"
    expect_call 201 POST $P/p2/binding '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p2"},"target":{"kind":"Node","name":"n1"}}'
    [ "$(jv $P/p2 "o['spec']['nodeName']")" = n1 ] || fail "$mode: binding did not set nodeName"
    expect_call 409 POST $P/p2/binding '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p2"},"target":{"kind":"Node","name":"n2"}}'

    # A pod being deleted goes when its agent deletes it (strict), not on its terminal status.
    expect_call 200 DELETE $P/p2
    expect_call 200 PATCH $P/p2/status '{"metadata":{"labels":{"done":"yes"}},"status":{"phase":"Succeeded"}}' $MP
    if [ "$mode" = strict ]; then
        [ "$(jv $P/p2 "o['metadata']['labels']['done']")" = yes ] || fail "strict: labels through pods/status"
        uid=$(jv $P/p2 "o['metadata']['uid']")
        expect_call 200 DELETE "$P/p2?gracePeriodSeconds=0" "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"$uid\"}}"
    fi
    expect_call 404 GET $P/p2

    # The globalDefault PriorityClass; its value is immutable.
    expect_call 201 POST /apis/scheduling.k8s.io/v1/priorityclasses '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"normal"},"value":7,"globalDefault":true}'
    expect_call 201 POST $P "$(pod p3)"
    if [ "$mode" = strict ]; then
        [ "$(jv $P/p3 "o['spec']['priority'], o['spec']['priorityClassName']")" = "7 normal" ] ||
            fail "strict: global default priority: $(jv $P/p3 "o['spec']")"
        expect_call 422 PATCH /apis/scheduling.k8s.io/v1/priorityclasses/normal '{"value":8}' $MP
        expect_body 'value: Forbidden: may not be changed in an update.'
    else
        [ "$(jv $P/p3 "o['spec']['priority']")" = 0 ] || fail "default: priority"
        expect_call 200 PATCH /apis/scheduling.k8s.io/v1/priorityclasses/normal '{"value":8}' $MP
    fi

    # A Deployment's selector is immutable; its /scale is upstream's.
    expect_call 201 POST /apis/apps/v1/namespaces/default/deployments "$DEPLOY"
    call PATCH /apis/apps/v1/namespaces/default/deployments/d '{"spec":{"selector":{"matchLabels":{"app":"d","v":"1"}}}}' $MP
    if [ "$mode" = strict ]; then
        [ "$CODE" = 422 ] || fail "strict: selector change: HTTP $CODE"
        expect_body 'spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"d\",\"v\":\"1\"}}: field is immutable'
    else
        [ "$CODE" = 200 ] || fail "default: selector change: HTTP $CODE $BODY"
    fi
    expect_call 200 PUT /apis/apps/v1/namespaces/default/deployments/d/scale '{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":4}}'

    # Volcano Jobs have no scale subresource upstream.
    expect_call 201 POST /apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs "$JOB"
    call GET /apis/batch.volcano.sh/v1alpha1
    if [ "$mode" = strict ]; then
        case "$BODY" in *jobs/scale*) fail "strict: discovery lists jobs/scale" ;; esac
        expect_call 404 GET /apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/j/scale
        expect_body "the server could not find the requested resource"
    else
        expect_body '"jobs/scale"'
        expect_call 200 GET /apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/j/scale
    fi
    call GET /apis/apps/v1
    expect_body '"deployments/scale"'

    # resourceVersion on create: kube-apiserver's 500.
    call POST $P '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p4","resourceVersion":"5"},"spec":{"containers":[{"name":"c","image":"i"}]}}'
    if [ "$mode" = strict ]; then want=500; else want=400; fi
    [ "$CODE" = $want ] || fail "$mode: resourceVersion on create: HTTP $CODE (want $want)"
    expect_body "resourceVersion should not be set on objects to be created"

    # Unknown query parameters are ignored, as kube-apiserver ignores them.
    expect_call 200 GET "$P?bogus=1"
    stop_server
done

finish
