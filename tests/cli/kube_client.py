"""The Python Kubernetes client (Debian's python3-kubernetes) against a
running `corral apiserver`: load a kubeconfig (HTTPS, bearer token), list,
create, watch, patch (strategic merge for pods, merge for custom objects)
and delete, checking every answer. Called by test_python_client.sh with the
kubeconfig path; exits non-zero with a message on the first failure."""
import sys
import threading

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def main(kubeconfig):
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    version = client.VersionApi().get_code()
    check(version.major == "1" and version.minor == "20", "version %s.%s" % (version.major, version.minor))

    names = [n.metadata.name for n in v1.list_namespace().items]
    check("default" in names and "kube-system" in names, "namespaces: %s" % names)
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")))

    # A watch in a thread sees the pod created after it started.
    seen = []
    started = threading.Event()

    def watcher():
        w = watch.Watch()
        started.set()
        for ev in w.stream(v1.list_namespaced_pod, "py", timeout_seconds=10):
            seen.append((ev["type"], ev["object"].metadata.name))
            if ev["type"] == "MODIFIED":
                w.stop()

    t = threading.Thread(target=watcher)
    t.start()
    started.wait()

    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="trainer", labels={"app": "train"}),
        spec=client.V1PodSpec(containers=[client.V1Container(
            name="c", image="pytorch:2",
            env=[client.V1EnvVar(name="A", value="1")],
            resources=client.V1ResourceRequirements(limits={"nvidia.com/gpu": "2"}))]))
    created = v1.create_namespaced_pod("py", pod)
    check(created.metadata.uid, "created pod has no uid")
    check(created.spec.containers[0].resources.requests == {"nvidia.com/gpu": "2"},
          "requests defaulted from limits: %s" % created.spec.containers[0].resources.requests)

    pods = v1.list_namespaced_pod("py", label_selector="app=train")
    check([p.metadata.name for p in pods.items] == ["trainer"], "label selector list")
    check(v1.list_pod_for_all_namespaces(field_selector="metadata.namespace=py").items,
          "field selector list")

    # A dict body is a strategic merge patch: env merges by name.
    patched = v1.patch_namespaced_pod("trainer", "py", {
        "metadata": {"labels": {"tier": "gpu"}},
        "spec": {"containers": [{"name": "c", "env": [{"name": "B", "value": "2"}]}]}})
    env = {e.name: e.value for e in patched.spec.containers[0].env}
    check(env == {"A": "1", "B": "2"}, "strategic merge of env: %s" % env)
    check(patched.metadata.labels == {"app": "train", "tier": "gpu"}, "labels %s" % patched.metadata.labels)

    t.join(15)
    check(("ADDED", "trainer") in seen and ("MODIFIED", "trainer") in seen, "watch saw %s" % seen)

    # Custom objects: Volcano queues (merge patch).
    co = client.CustomObjectsApi()
    q = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
         "metadata": {"name": "py-queue"}, "spec": {"weight": 2}}
    co.create_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues", q)
    got = co.patch_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues", "py-queue",
                                         {"spec": {"weight": 5}})
    check(got["spec"]["weight"] == 5 and got["spec"]["reclaimable"] is True, "queue patch %s" % got)
    queues = co.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues")
    check("py-queue" in [i["metadata"]["name"] for i in queues["items"]], "queue list")

    # Errors are ApiExceptions with kube's status codes.
    try:
        v1.read_namespaced_pod("nope", "py")
        check(False, "read of a missing pod succeeded")
    except ApiException as e:
        check(e.status == 404, "missing pod: %s" % e.status)
    try:
        v1.create_namespaced_pod("py", pod)
        check(False, "duplicate create succeeded")
    except ApiException as e:
        check(e.status == 409, "duplicate: %s" % e.status)

    # events.k8s.io/v1 serves the core v1 Events in another shape.
    ev1 = client.EventsV1Api()
    ev1.create_namespaced_event("py", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "py-ev"},
        "eventTime": "2024-01-02T03:04:05.000000Z", "reportingController": "corral.dev/test",
        "reportingInstance": "py", "action": "Testing", "reason": "Tested", "type": "Normal",
        "note": "from python", "regarding": {"kind": "Pod", "name": "trainer", "namespace": "py"}})
    evs = ev1.list_namespaced_event("py", field_selector="regarding.name=trainer")
    got = [(e.metadata.name, e.note, e.regarding.name) for e in evs.items]
    check(("py-ev", "from python", "trainer") in got, "events.k8s.io list %s" % got)
    core = v1.read_namespaced_event("py-ev", "py")
    check(core.message == "from python" and core.involved_object.name == "trainer" and
          core.reporting_component == "corral.dev/test", "core view of the event %s" % core)
    ev1.delete_namespaced_event("py-ev", "py")

    v1.delete_namespaced_pod("trainer", "py")
    check(not v1.list_namespaced_pod("py").items, "pod deleted")
    co.delete_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues", "py-queue")
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
