# Front door of the OSN build. CMake + Ninja do the real work; this file only strings the steps
# together so that one word does each job. Each target installs the Debian packages of its own
# tier and no more (scripts/deps.sh --list shows the tiers):
#
#   make               [build tier] configure build/ and build osn, its library and man page
#                      (optimised, -O2 with link-time optimisation; tests and benchmarks are not
#                      built here)
#   make release       [build tier] the same, profile-guided, in build-release/: an instrumented
#                      osn in build-pgo/ first runs a short mix of the examples
#                      (scripts/pgo-train.sh), then build-release/ compiles with the counts
#   make demo          [demo tier] build, then scripts/demo.sh (a tour: solve, sweep, simulate,
#                      the fluid model, a SIP network, then three real nodes driven by SIPp)
#   make check         [test tier] build everything in build/ and run the tests, then again with
#                      ASan + UBSan in build-asan/, then the clang-format gate (what .ci/run
#                      calls)
#   make bench         [bench tier] the release build, then bench/run.sh (every benchmark beside
#                      its peer: the solver against SciPy, ..., osn node's CPU per call and
#                      highest call rate against Kamailio's); its main figures go into
#                      docs/performance.md as a dated table (scripts/perf_record.py)
#   make testbed       [test tier] build, then `osn node` on the wire (about 80 minutes):
#                      osn testbed examples/node_collapse.ini (osn sim beside the real network,
#                      none/loss/rate at 1x/3x/10x, table + testbed-out/testbed.{csv,json,png}) and
#                      the long node tests: interop (2,000 calls per chain), overload at 3x
#                      for 60 s after a 35 s warm-up (none collapses; loss with Kamailio
#                      upstream), reliability (20x for 60 s, kill -9 of the core), callers
#                      who give up and retry at 3x, osn node generator beside osn sim for
#                      none/loss/rate (tests/test_node_abandon_sim.sh, 35 + 30 s each), the
#                      fan-out of two cores under loss (tests/test_testbed_fanout.sh, 35 + 60
#                      s); the sim-beside-real table goes into docs/performance.md, dated; and
#                      the soak
#                      (tests/test_node_soak.sh: every control at 20x for SOAK_SECONDS, default
#                      300, then 40 s idle: RSS flat, transactions back to 0, every call
#                      accounted for)
#   make fuzz          [test tier] the libFuzzer targets, FUZZ_CPU_SECONDS of CPU time each
#                      (default 1800, 30 CPU-minutes): the SIP parser's and the node's (datagram
#                      sequences and clock steps), built with clang-16 + ASan + UBSan in
#                      build-fuzz/ (scripts/fuzz.sh, which says why CPU time); `make check`
#                      runs each for 60 s (CTest fuzz_parser_60s, fuzz_node_60s of build/)
#   make format        clang-format -i on every C file in the repository
#   make format-check  clang-format --dry-run --Werror on the same files
#   make install       build, then install into PREFIX (default /usr/local; DESTDIR stages):
#                      bin/osn, lib/libosn.so + include/osn/ + lib/pkgconfig/osn.pc, the man
#                      page osn.1 and the Python module `osn` (cmake/install.cmake)
#   make clean         remove build/, build-release/, build-asan/, build-pgo/, build-fuzz/ and
#                      demo/
#
# The steps are sequential even under `make -j`: each one runs ninja, which is parallel itself.

BUILD        ?= build
RELEASE_BUILD ?= build-release
ASAN_BUILD   ?= build-asan
PGO_BUILD    ?= build-pgo
FUZZ_BUILD   ?= build-fuzz
FUZZ_CPU_SECONDS ?= 1800
PGO_PROFILE   = $(abspath $(PGO_BUILD))/profile
CMAKE        ?= cmake
CTEST        ?= ctest
NINJA        ?= ninja
CLANG_FORMAT ?= clang-format
PREFIX       ?= /usr/local

# Tracked C files plus new ones not yet added, but never those in build trees inside the
# repository (CMake writes CMakeCCompilerId.c there): in a clean clone, the same set as
# `git ls-files '*.c' '*.h'`.
C_FILES = git ls-files -z --cached --others --exclude-standard -- '*.c' '*.h' ':!:build*/**'

.NOTPARALLEL:
.PHONY: all deps deps-demo deps-test deps-bench configure profile build release build-all asan \
	demo check test test-asan bench testbed format format-check clean fuzz install

all: build

deps:
	@scripts/deps.sh build

deps-demo:
	@scripts/deps.sh demo

deps-test:
	@scripts/deps.sh test

deps-bench:
	@scripts/deps.sh bench

$(BUILD)/build.ninja:
	$(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

$(RELEASE_BUILD)/build.ninja:
	$(CMAKE) -S . -B $(RELEASE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSN_PGO=use \
		-DOSN_PGO_DIR=$(PGO_PROFILE)

$(PGO_BUILD)/build.ninja:
	$(CMAKE) -S . -B $(PGO_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSN_PGO=generate \
		-DOSN_PGO_DIR=$(PGO_PROFILE)

# The 60 s fuzz run is build/'s test only: it has its own sanitized build, so once is enough.
$(ASAN_BUILD)/build.ninja:
	$(CMAKE) -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOSN_SANITIZE=ON \
		-DOSN_FUZZ_TEST=OFF

configure: deps $(BUILD)/build.ninja

# The counts are taken again only when the instrumented osn changed (a stamp beside them).
profile: deps $(PGO_BUILD)/build.ninja
	$(NINJA) -C $(PGO_BUILD) osn
	@if [ ! -f $(PGO_PROFILE)/.stamp ] || [ $(PGO_BUILD)/osn -nt $(PGO_PROFILE)/.stamp ]; then \
		echo "pgo: training run (scripts/pgo-train.sh)"; \
		rm -rf $(PGO_PROFILE) && mkdir -p $(PGO_PROFILE) && \
		bash scripts/pgo-train.sh $(PGO_BUILD)/osn && touch $(PGO_PROFILE)/.stamp; \
	fi

# osn, the library the C API installs, and the man page: what `make install` needs.
build: configure
	$(NINJA) -C $(BUILD) osn osn_shared osn_man

release: deps profile $(RELEASE_BUILD)/build.ninja
	$(NINJA) -C $(RELEASE_BUILD) osn osn_shared osn_man

# Everything, tests and benchmarks too. CMake runs again first: a build/ configured before the
# test tier was installed left the tests out.
build-all: deps-test $(BUILD)/build.ninja
	$(CMAKE) $(BUILD) >/dev/null
	$(NINJA) -C $(BUILD)

test: build-all
	$(CTEST) --test-dir $(BUILD) --output-on-failure

asan: deps-test $(ASAN_BUILD)/build.ninja
	$(NINJA) -C $(ASAN_BUILD)

# Under the sanitizers the load tests of osn node would measure the sanitizers' speed, not the
# node's: they run in the plain build only (guide_wire too, docs/guide.md's check on the wire);
# RFC 4475 on the wire runs in both. sim_memory likewise: under ASan its redzones and quarantine
# are part of the peak RSS it measures (276-287 bytes a live call against the plain build's 248,
# 2026-12-07), so it checks docs/performance.md's figure in the plain build only.
test-asan: asan
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(CTEST) --test-dir $(ASAN_BUILD) --output-on-failure -E '^(node_(interop|overload)|guide_wire|sim_memory)$$'

check: test test-asan format-check

demo: deps-demo build
	bash scripts/demo.sh $(BUILD)/osn

# Both write a dated table into docs/performance.md at the end (scripts/perf_record.py), with the
# load average read before the run.
bench: deps-bench release
	$(CMAKE) $(RELEASE_BUILD) >/dev/null
	$(NINJA) -C $(RELEASE_BUILD)
	@load=$$(cut -d' ' -f1-3 /proc/loadavg); figs=$$(mktemp); \
	OSN_BUILD=$(RELEASE_BUILD) OSN_BENCH_FIGURES=$$figs bash bench/run.sh && \
	python3 scripts/perf_record.py bench docs/performance.md $$figs --load-start "$$load"; \
	rc=$$?; rm -f $$figs; exit $$rc

# Every step runs even when one fails; the target fails if any did.
testbed: deps-test build
	@rc=0; load=$$(cut -d' ' -f1-3 /proc/loadavg); \
	mkdir -p testbed-out && $(BUILD)/osn testbed examples/node_collapse.ini \
		--set net.replications=20 --csv testbed-out/testbed.csv --json testbed-out/testbed.json \
		--plot testbed-out/testbed.png && \
	python3 scripts/perf_record.py testbed docs/performance.md testbed-out/testbed.csv \
		--load-start "$$load" --columns control,load,rate,sim_goodput,sim_goodput_hw,real_goodput,sim_p99_s,real_p99_s,sim_replications,sim_goodput_min,sim_goodput_max,sim_below_real \
		|| rc=1; \
	bash tests/test_node_interop.sh $(BUILD)/osn . || rc=1; \
	bash tests/test_node_overload.sh $(BUILD)/osn . --control none --warm 35 --window 60 || rc=1; \
	bash tests/test_node_overload.sh $(BUILD)/osn . --control loss --warm 35 --window 60 \
		--no-oc || rc=1; \
	bash tests/test_node_reliability.sh $(BUILD)/osn . || rc=1; \
	bash tests/test_node_abandon_sim.sh $(BUILD)/osn . --controls "none loss rate" --warm 35 \
		--window 30 || rc=1; \
	bash tests/test_testbed_fanout.sh $(BUILD)/osn . 35 60 || rc=1; \
	bash tests/test_node_soak.sh $(BUILD)/osn . || rc=1; \
	exit $$rc
fuzz: deps-test
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_CPU_SECONDS)cpu fuzz_sip
	bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_CPU_SECONDS)cpu fuzz_node

# PREFIX is given to cmake --install, so changing it needs no new configure; DESTDIR is read
# from the environment by cmake (make passes its variables there).
install: build
	DESTDIR=$(DESTDIR) $(CMAKE) --install $(BUILD) --prefix $(PREFIX)

format:
	$(C_FILES) | xargs -0 -r $(CLANG_FORMAT) -i

format-check:
	@echo "clang-format --dry-run --Werror (all C files)"
	@$(C_FILES) | xargs -0 -r $(CLANG_FORMAT) --dry-run --Werror

clean:
	rm -rf $(BUILD) $(RELEASE_BUILD) $(ASAN_BUILD) $(PGO_BUILD) $(FUZZ_BUILD) demo
