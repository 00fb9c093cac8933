/* libFuzzer target: an exec credential plugin's output through
 * corral_exec_credential_parse (JSON, apiVersion and kind checks, status
 * token / certificate pair, expirationTimestamp). Must never crash, leak or
 * hang; on success there is a token or a certificate and key, and an error
 * always has a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "corral/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 20) + 16)
        return 0;
    corral_client_cred_t cr;
    char err[512] = "";
    const char *api = size && (data[0] & 1) ? "client.authentication.k8s.io/v1beta1"
                                            : "client.authentication.k8s.io/v1";
    int rc = corral_exec_credential_parse((const char *)data, size, api, &cr, err, sizeof(err));
    if (rc == 0 && !cr.token && !(cr.cert_data && cr.key_data))
        abort();
    if (rc != 0 && !err[0])
        abort();
    if (rc == 0)
        corral_client_cred_fini(&cr);
    return 0;
}
