/*
 * bench/pb_codec: the API server's and the client's cost per object of a
 * PodList of 1000 pods (each as the API server stores a scheduled GPU pod:
 * labels, annotations, managedFields, one container with resources, env,
 * ports and a probe, tolerations, status with conditions and a container
 * status) in protobuf against JSON. Per round: JSON text -> tree (parse)
 * and tree -> JSON text (emit); tree -> protobuf (corral_pb_encode) and
 * protobuf -> tree (corral_pb_decode). Prints process CPU time per object
 * of each step and the body sizes.
 *
 *   build/bench/pb_codec [ROUNDS] [PODS]      (defaults 20, 1000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "corral/json.h"
#include "corral/pb.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pod(corral_buf_t *b, int i)
{
    corral_buf_printf(
        b,
        "{\"metadata\":{\"name\":\"train-%d\",\"namespace\":\"team-a\",\"uid\":"
        "\"6f1c2b9e-0000-4000-8000-%012d\",\"resourceVersion\":\"%d\",\"generation\":1,"
        "\"creationTimestamp\":\"2026-12-02T10:00:00Z\",\"labels\":{\"app\":\"train\","
        "\"volcano.sh/job-name\":\"job-%d\",\"corral.dev/queue\":\"research\"},\"annotations\":{"
        "\"corral.dev/gpu-ids\":\"0,1,2,3\",\"scheduling.k8s.io/group-name\":\"pg-%d\"},"
        "\"managedFields\":[{\"manager\":\"corral-controller\",\"operation\":\"Update\","
        "\"apiVersion\":\"v1\",\"time\":\"2026-12-02T10:00:00Z\",\"fieldsType\":\"FieldsV1\","
        "\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},\"f:spec\":{"
        "\"f:containers\":{}}}}]},\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":"
        "\"ghcr.io/corral-dev/train:1.2\",\"command\":[\"python\",\"train.py\"],\"args\":["
        "\"--epochs\",\"10\"],\"ports\":[{\"name\":\"metrics\",\"containerPort\":9400,"
        "\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"RANK\",\"value\":\"%d\"},{\"name\":"
        "\"WORLD\",\"value\":\"1000\"}],\"resources\":{\"limits\":{\"cpu\":\"8\",\"memory\":"
        "\"64Gi\",\"nvidia.com/gpu\":\"4\"},\"requests\":{\"cpu\":\"8\",\"memory\":\"64Gi\","
        "\"nvidia.com/gpu\":\"4\"}},\"readinessProbe\":{\"httpGet\":{\"path\":\"/healthz\","
        "\"port\":9400,\"scheme\":\"HTTP\"},\"periodSeconds\":10,\"timeoutSeconds\":1,"
        "\"successThreshold\":1,\"failureThreshold\":3},\"terminationMessagePath\":"
        "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":"
        "\"IfNotPresent\"}],\"restartPolicy\":\"Never\",\"terminationGracePeriodSeconds\":30,"
        "\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"default\",\"nodeName\":"
        "\"gpu-node-%d\",\"schedulerName\":\"corral\",\"tolerations\":[{\"key\":"
        "\"nvidia.com/gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"},{\"key\":"
        "\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\","
        "\"tolerationSeconds\":300}],\"priority\":0,\"enableServiceLinks\":true},\"status\":{"
        "\"phase\":\"Running\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\","
        "\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-12-02T10:00:01Z\"},{\"type\":"
        "\"Ready\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":"
        "\"2026-12-02T10:00:09Z\"}],\"hostIP\":\"10.0.0.%d\",\"podIP\":\"10.244.%d.%d\","
        "\"startTime\":\"2026-12-02T10:00:01Z\",\"containerStatuses\":[{\"name\":\"main\","
        "\"state\":{\"running\":{\"startedAt\":\"2026-12-02T10:00:05Z\"}},\"lastState\":{},"
        "\"ready\":true,\"restartCount\":0,\"image\":\"ghcr.io/corral-dev/train:1.2\","
        "\"imageID\":\"\",\"started\":true}],\"qosClass\":\"Guaranteed\"}}",
        i, i, 1000 + i, i / 8, i / 8, i, i / 8, i % 250, i / 250, i % 250);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 20;
    int pods = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 1000;
    corral_buf_t json;
    corral_buf_init(&json);
    corral_buf_puts(&json, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
                           "\"resourceVersion\":\"5000\"},\"items\":[");
    for (int i = 0; i < pods; i++) {
        if (i)
            corral_buf_putc(&json, ',');
        pod(&json, i);
    }
    corral_buf_puts(&json, "]}");
    double t_parse = 0, t_emit = 0, t_enc = 0, t_dec = 0;
    size_t pb_len = 0, json_len = 0;
    for (int r = 0; r < rounds; r++) {
        corral_arena_t a;
        corral_arena_init(&a);
        corral_val_t *v = NULL, *back = NULL;
        double t0 = cpu_s();
        if (corral_json_parse(&a, json.p, json.len, &v, NULL) != 0)
            return 1;
        double t1 = cpu_s();
        corral_buf_t out, pb;
        corral_buf_init(&out);
        corral_buf_init(&pb);
        corral_val_to_json(v, &out, false);
        double t2 = cpu_s();
        char why[256];
        if (corral_pb_encode(v, &pb, why, sizeof(why)) != 0) {
            fprintf(stderr, "encode: %s\n", why);
            return 1;
        }
        double t3 = cpu_s();
        if (corral_pb_decode(&a, pb.p, pb.len, &back, why, sizeof(why)) != 0) {
            fprintf(stderr, "decode: %s\n", why);
            return 1;
        }
        double t4 = cpu_s();
        t_parse += t1 - t0;
        t_emit += t2 - t1;
        t_enc += t3 - t2;
        t_dec += t4 - t3;
        pb_len = pb.len;
        json_len = out.len;
        corral_buf_fini(&out);
        corral_buf_fini(&pb);
        corral_arena_fini(&a);
    }
    double n = (double)rounds * pods / 1e6; /* per object, in microseconds */
    printf("PodList of %d pods, %d rounds: JSON %zu bytes, protobuf %zu bytes (%.0f%%)\n", pods,
           rounds, json_len, pb_len, 100.0 * (double)pb_len / (double)json_len);
    printf("CPU per object (us): JSON parse %.1f, JSON emit %.1f, parse+emit %.1f\n", t_parse / n,
           t_emit / n, (t_parse + t_emit) / n);
    printf("CPU per object (us): protobuf decode %.1f, protobuf encode %.1f, decode+encode %.1f\n",
           t_dec / n, t_enc / n, (t_dec + t_enc) / n);
    corral_buf_fini(&json);
    return 0;
}
