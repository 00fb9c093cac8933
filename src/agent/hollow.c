/*
 * The hollow runtime (placeholder until written).
 */
#include "agent/agent_int.h"

int corral_agent_hollow_run(const corral_agent_opts_t *o, const corral_client_config_t *cfg)
{
    (void)o;
    (void)cfg;
    corral__log("hollow runtime: not yet");
    return CORRAL_EUNSUPPORTED;
}
