# tests/cli/test_controller.sh against `corral apiserver --strict` (docs/apiserver.md,
# "Strict mode"): the controller works with kube-apiserver's rules, no Corral-only
# shortcut.
CORRAL_APISERVER_ARGS=--strict exec bash tests/cli/test_controller.sh
