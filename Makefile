# Corral: one non-recursive GNU Makefile.
#
#   make                      build build/corral
#   make up                   install deps, build, run the platform here: `corral up $(UP_ARGS)`
#                             (docs/up.md; e.g. make up UP_ARGS="--sim-nodes 4")
#   make test                 install test deps, lint, unit + scenario + CLI tests,
#                             the unit tests again under ASan/UBSan, fuzz corpus replay
#   make SAN=address,undefined   sanitizer build under build/san/
#   make CC=clang fuzz        libFuzzer targets under build/fuzz/
#   make lint                 clang-format check, cppcheck, banned functions
#   make bench                benchmarks under build/bench/
#   make bench-sim            the trace-simulation comparison (docs/efficiency.md)
#   make bench-cv             cross-validation of corral's score constants (docs/efficiency.md)
#
# Variants build into their own directory so they never mix objects.

.DEFAULT_GOAL := all
SHELL := /bin/bash

# Compile on every core unless the caller chose (-j N, -j1): `make test` on a
# fresh clone builds three variants (plain, ASan/UBSan, fuzz). The test
# suites themselves still run one after another (each is one recipe line).
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif

CC ?= cc
SAN ?=
ifeq ($(origin CC),default)
CC := gcc
endif

ifneq ($(FUZZ),)
B := build/fuzz
else ifneq ($(SAN),)
B := build/san
else
B := build
endif

PKGS := libfyaml jansson sqlite3 libcurl libevent libevent_pthreads libevent_openssl openssl \
        libnghttp2 libprotobuf-c
# Only the benchmarks link these (bench/http_choice.c compares HTTP libraries).
BENCH_PKGS := libmicrohttpd
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE $(WARN) -Iinclude -Isrc -I$(B)/gen $(CFLAGS) -MMD -MP
LDLIBS := -lm -lpthread
ifneq ($(FUZZ),)
ALL_CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -O1
LDFLAGS += -fsanitize=fuzzer,address,undefined
else ifneq ($(SAN),)
ALL_CFLAGS += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all -O1
LDFLAGS += -fsanitize=$(SAN)
endif

# pkg-config is only asked once the deps are installed (see deps below).
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

LIB_SRCS := $(sort $(filter-out src/cli/main.c,$(wildcard src/*/*.c)))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/obj/%.o)
CLI_OBJS := $(B)/obj/src/cli/main.o
UNIT_SRCS := $(sort $(wildcard tests/*/test_*.c))
UNIT_OBJS := $(UNIT_SRCS:%.c=$(B)/obj/%.o)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(B)/bench/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/bin/%)
# Protobuf messages generated at build time by protoc-c (protobuf-c-compiler)
# into $(B)/gen/, never checked in: the kubelet device plugin API.
PROTOS := src/agent/deviceplugin.proto
GEN_HDRS := $(PROTOS:src/agent/%.proto=$(B)/gen/%.pb-c.h)
GEN_OBJS := $(PROTOS:src/agent/%.proto=$(B)/gen/%.pb-c.o)

.PHONY: all up bench-sim bench-cv deps deps-test deps-bench test unit unit-san scenarios scenarios-san cli-san cli-tests fuzz fuzz-bins fuzz-replay fuzz-replay-san \
        lint format bench clean

all: $(B)/corral

# The platform on this machine, in the foreground until Ctrl-C.
UP_ARGS ?=
up: deps
	+@$(M) all
	$(B)/corral up $(UP_ARGS)

# Order-only: checking packages never forces a rebuild.
deps:
	@tools/deps.sh build
deps-test:
	@tools/deps.sh test
deps-bench:
	@tools/deps.sh bench

# Quiet by default; `make V=1` shows the commands.
Q := $(if $(V),,@)

# Objects depend on the compiler and flags they were built with, so that
# `make CFLAGS="-O0 -g"` rebuilds everything instead of mixing objects.
FLAGS_STAMP := $(B)/.cflags
$(shell mkdir -p $(B) && { echo '$(CC) $(ALL_CFLAGS)' | cmp -s - $(FLAGS_STAMP) || echo '$(CC) $(ALL_CFLAGS)' >$(FLAGS_STAMP); })

$(B)/obj/%.o: %.c $(FLAGS_STAMP) | deps $(GEN_HDRS)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: src/agent/%.proto | deps
	@mkdir -p $(@D)
	@$(if $(V),,echo "  PROTOC  $@")
	$(Q)protoc-c --c_out=$(B)/gen --proto_path=src/agent $<

$(B)/gen/%.pb-c.o: $(B)/gen/%.pb-c.c $(FLAGS_STAMP)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(PKG_CFLAGS) -c $< -o $@

$(B)/libcorral.a: $(LIB_OBJS) $(GEN_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/corral: $(CLI_OBJS) $(B)/libcorral.a
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

# Test hooks (store fault injection, server start failures) are compiled
# only into these copies of their files, linked into the unit tests ahead of
# the library; libcorral.a and the corral binary have none.
HOOK_SRCS := src/apiserver/store.c src/apiserver/store_writer.c src/apiserver/server.c
HOOK_OBJS := $(HOOK_SRCS:%.c=$(B)/obj-hooks/%.o)
$(UNIT_OBJS): ALL_CFLAGS += -DCORRAL_TEST_HOOKS
$(B)/obj-hooks/%.o: %.c | deps $(GEN_HDRS)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -DCORRAL_TEST_HOOKS $(PKG_CFLAGS) -c $< -o $@

$(B)/tests/unit: $(UNIT_OBJS) $(HOOK_OBJS) $(B)/libcorral.a | deps-test $(B)/tests/fake_nvml.so
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcriterion $(PKG_LIBS) $(LDLIBS)

# A fake libnvidia-ml that tests/agent/test_gpu.c loads (CORRAL_NVML_LIB) from
# next to the test binary, so the NVML path runs without a GPU. Not sanitized:
# it stands in for the driver's library.
$(B)/tests/fake_nvml.so: tests/agent/fake_nvml.c src/agent/nvml_abi.h
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) -std=c17 $(WARN) -Isrc -O1 -g -fPIC -shared -o $@ $<

$(B)/obj/bench/%.o: PKG_CFLAGS += $(shell pkg-config --cflags $(BENCH_PKGS) 2>/dev/null)
$(B)/bench/%: $(B)/obj/bench/%.o $(B)/libcorral.a | deps-bench
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(shell pkg-config --libs $(BENCH_PKGS)) $(LDLIBS)

# --- tests ------------------------------------------------------------------

# Every suite writes its counts to build/test-results/<suite>; a suite that
# failed to build or run leaves no file and the summary counts it as failed.
# Suites keep going after another fails, so one run reports everything.
SUITES := lint unit cli scenarios unit-san scenarios-san cli-san fuzz
M := $(MAKE) --no-print-directory

# After the plain build the suites run three at a time (make -j3 below):
# the CLI scripts, which mostly wait on the servers they start (several at a
# time, tools/run-scripts.sh), beside two that keep a CPU busy, niced so that
# they fill the time the scripts wait and yield the CPU to the scripts'
# servers when they need it. A suite starts in the order test-suites lists
# it, once what it needs is done; each suite's output is printed whole when
# it ends (-Oline). A new suite: a test-NAME target here, NAME in SUITES.
# docs/decisions.md, "make test: suites side by side".
test: deps-test
	@rm -rf build/test-results && mkdir -p build/test-results
	+@tools/timed.sh build/test-results/build.time $(M) all build/tests/unit
	+@$(M) -j3 -Oline test-suites
	@tools/test-summary.sh build/test-results $(SUITES)

.PHONY: test-suites test-cli test-san-build test-cli-san test-lint test-unit test-scenarios \
        test-unit-san test-scenarios-san test-fuzz
NICE := nice -n 10
SANM := $(M) SAN=address,undefined CC=clang
test-suites: test-cli test-san-build test-cli-san test-lint test-unit test-scenarios \
             test-unit-san test-scenarios-san test-fuzz
T = tools/timed.sh build/test-results/$(1).time
test-cli:
	+@$(call T,cli) $(M) cli-tests || true
# (not niced: the sanitized CLI scripts wait for it once the plain ones end)
test-san-build:
	+@$(call T,san-build) $(SANM) build/san/corral build/san/tests/unit $(REPLAY_BINS_SAN) || true
test-cli-san: test-san-build | test-cli
	+@$(call T,cli-san) $(SANM) cli-san || true
test-lint:
	+@$(call T,lint) $(NICE) env CORRAL_ANALYZER=shallow $(M) lint && echo "1 0 0" > build/test-results/lint || echo "0 1 0" > build/test-results/lint
test-unit:
	+@$(call T,unit) $(NICE) $(M) unit || true
test-scenarios:
	+@$(call T,scenarios) $(NICE) $(M) scenarios || true
test-unit-san: test-san-build
	+@$(call T,unit-san) $(NICE) $(SANM) unit-san || true
test-scenarios-san: test-san-build
	+@$(call T,scenarios-san) $(NICE) $(SANM) scenarios-san || true
# The corpora replay through the ASan/UBSan build with a plain driver
# (tests/fuzz/replay_main.c): the same checks as libFuzzer's -runs=0 without
# a third build of the library (`make fuzz` builds the libFuzzer one).
test-fuzz: test-san-build
	+@$(call T,fuzz) $(NICE) $(SANM) fuzz-replay-san || true

unit: build/tests/unit
	@tools/run-criterion.sh build/tests/unit build/test-results/unit

unit-san: $(B)/tests/unit
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  tools/run-criterion.sh $(B)/tests/unit build/test-results/unit-san

cli-tests: build/corral
	@tools/run-scripts.sh build/test-results/cli tests/cli/test_*.sh

scenarios: build/corral
	@tools/run-scenarios.sh build/test-results/scenarios build/corral tests/scenarios

# The CLI tests through the ASan/UBSan binary, but the valgrind ones
# (valgrind cannot run a sanitized binary) and the two that check Corral
# against outside programs, a real Prometheus and a browser: what they drive
# (agent metrics, the node proxy, the API server's and the scheduler's
# /metrics, the dashboard's API calls) runs under the sanitizers in
# test_agent_metrics, test_top, test_usage and test_e2e, and the two cost a
# minute and a half of the 20 that `make test` may take. The inference
# end-to-end test runs once too: its parts (controller, autoscaler, router,
# agent serving, stand-in) run under the sanitizers in test_isvc,
# test_router, test_agent_serving and test_standin.
# Also left out there, what would only repeat itself: test_layers reads the objects, not the
# binary; test_strict_scheduler and test_strict_controller rerun scripts
# that run here against a strict server (test_strict and test_kube_kinds run
# the strict server sanitized); test_kube_deploy is kubectl and Python
# around a dry run test_kube_kinds makes too.
CLI_SAN_SKIP_DUP := tests/cli/test_layers.sh tests/cli/test_strict_scheduler.sh \
                    tests/cli/test_strict_controller.sh tests/cli/test_kube_deploy.sh
CLI_SAN_SKIP := tests/cli/test_valgrind% tests/cli/test_prometheus.sh tests/cli/test_ui.sh \
                tests/cli/test_inference.sh $(CLI_SAN_SKIP_DUP)
cli-san: $(B)/corral
	@CORRAL=$(B)/corral ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  tools/run-scripts.sh build/test-results/cli-san $(filter-out $(CLI_SAN_SKIP),$(wildcard tests/cli/test_*.sh))

# The same scenarios through the ASan/UBSan build of the binary.
scenarios-san: $(B)/corral
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  tools/run-scenarios.sh build/test-results/scenarios-san $(B)/corral tests/scenarios

# --- fuzzing ----------------------------------------------------------------

# The library is built once with -fsanitize=fuzzer-no-link (FUZZ=1 variant);
# each target links it with the libFuzzer driver.
build/fuzz/bin/%: build/fuzz/obj/tests/fuzz/%.o build/fuzz/libcorral.a
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

fuzz:
	+@$(M) FUZZ=1 CC=clang fuzz-bins
fuzz-bins: $(FUZZ_BINS)

# Replay every corpus (and every past crash kept there) as a regression test.
fuzz-replay: fuzz
	@tools/replay-fuzz.sh build/test-results/fuzz $(FUZZ_BINS)

# The same replay with the targets linked to a plain driver and the library
# of this variant (make test: SAN=address,undefined).
REPLAY_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/fuzz-replay/%)
REPLAY_BINS_SAN := $(FUZZ_SRCS:tests/fuzz/%.c=build/san/fuzz-replay/%)
$(B)/fuzz-replay/%: $(B)/obj/tests/fuzz/%.o $(B)/obj/tests/fuzz/replay_main.o $(B)/libcorral.a
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)
fuzz-replay-san: $(REPLAY_BINS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  tools/replay-fuzz.sh build/test-results/fuzz $(REPLAY_BINS)

# --- lint -------------------------------------------------------------------

C_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find src include tests bench -name '*.[ch]')

lint: deps-test build/gen/deviceplugin.pb-c.h
	@tools/lint.sh $(C_FILES)

format:
	clang-format -i $(C_FILES)

bench: $(BENCH_BINS)

# The efficiency comparison of docs/efficiency.md (FGD protocol on the openb
# lists, Philly replay); results in build/bench-sim/.
bench-sim: build/corral
	@bench/sim.sh

# Cross-validation of the corral policy's score constants on the openb lists
# and held-out lists built from them (about 30 minutes); build/bench-cv/.
bench-cv: build/bench/fgd_cv
	@bench/fgd_cv.sh

clean:
	rm -rf build

# Keep objects make would treat as intermediate (fuzz and bench mains).
.SECONDARY:

# src/up/rbac.c assembles deploy/rbac/*.yaml into the binary (.incbin).
$(B)/obj/src/up/rbac.o: $(wildcard deploy/rbac/*.yaml)
# src/apiserver/ui.c assembles the web dashboard's files (.incbin).
$(B)/obj/src/apiserver/ui.o: $(wildcard src/apiserver/ui/*)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(UNIT_OBJS:.o=.d) $(BENCH_SRCS:%.c=$(B)/obj/%.d) $(HOOK_OBJS:.o=.d)
