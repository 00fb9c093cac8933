# tests/cli/test_scheduler.sh (binding, eviction, leader-election failover between
# two schedulers) against `corral apiserver --strict` (docs/apiserver.md,
# "Strict mode"): the scheduler works with kube-apiserver's rules, no Corral-only
# shortcut.
CORRAL_APISERVER_ARGS=--strict exec bash tests/cli/test_scheduler.sh
