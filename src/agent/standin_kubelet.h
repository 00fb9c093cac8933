/*
 * A stand-in for kubelet's device manager (`corral standin-kubelet`), to test
 * device plugins without a node: it serves the Registration service on
 * DIR/kubelet.sock, then calls each registered plugin as kubelet does
 * (GetDevicePluginOptions, ListAndWatch, GetPreferredAllocation when the
 * plugin offers it, Allocate), tracking which devices pods use.
 */
#ifndef CORRAL_AGENT_STANDIN_KUBELET_H
#define CORRAL_AGENT_STANDIN_KUBELET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"

typedef struct corral__skl corral__skl_t;

/* Start as kubelet does: remove the sockets in dir (a restarted kubelet's
 * plugins must register again), serve DIR/kubelet.sock. NULL with err. */
corral__skl_t *corral__skl_start(const char *dir, char *err, size_t errlen);
/* Stop: close the plugins' streams, remove kubelet.sock, free. */
void corral__skl_stop(corral__skl_t *k);

/* A plugin's state as this kubelet sees it: registrations of resource,
 * ListAndWatch updates received, devices (healthy ones counted). -1 when
 * no plugin registered resource. */
int corral__skl_plugin(corral__skl_t *k, const char *resource, uint64_t *registrations,
                       uint64_t *updates, int *healthy);
/* Wait until cond holds: at least min_regs registrations and min_updates
 * updates of resource; false after timeout_ms. */
bool corral__skl_wait(corral__skl_t *k, const char *resource, uint64_t min_regs,
                      uint64_t min_updates, int timeout_ms);

/* Admit a pod whose one container wants n devices of resource, as kubelet:
 * free healthy devices, the plugin's preference, Allocate. Appends the JSON
 * line ({"pod":..,"devices":[..],"envs":{..},"annotations":{..},
 * "cdiDevices":[..]}, no newline) to line. 0, or a negative code with err
 * (not enough devices, plugin error). */
int corral__skl_admit(corral__skl_t *k, const char *pod, const char *resource, int n,
                      corral_buf_t *line, char *err, size_t errlen);
/* The pod is gone: its devices are free again. */
void corral__skl_release(corral__skl_t *k, const char *pod);

#endif
