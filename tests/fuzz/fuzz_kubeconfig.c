/* libFuzzer target: kubeconfig files through corral_kubeconfig_parse (the
 * YAML loader, context/cluster/user resolution, base64 of the -data
 * fields). Must never crash, leak or hang; on success the configuration
 * has a server, and an error always has a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "corral/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (256 << 10))
        return 0;
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[512] = "";
    int rc = corral_kubeconfig_parse((const char *)data, size, "/fuzz/kubeconfig", NULL, &c, err,
                                     sizeof(err));
    if (rc == 0 && !c.server)
        abort();
    if (rc != 0 && !err[0])
        abort();
    corral_client_config_fini(&c);
    return 0;
}
