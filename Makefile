# One way to build and test agentbox. Every target installs what it needs first.
#   make demo    install, build, show agentbox doing its job
#   make test    install, build (Release + ASan/UBSan), run every test tier, run the fuzzers
.PHONY: all deps build build-asan build-fuzz test test-release test-asan fuzz demo lint bench install clean

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 30
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

all: build

deps-%:
	@scripts/install-deps $*

build: deps-build
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# clang, so that every test run also proves clang builds cleanly.
build-asan: deps-test
	@cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
	  -DAGENTBOX_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)

build-fuzz: deps-test
	@cmake -S . -B $(BUILD_FUZZ) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
	  -DAGENTBOX_FUZZ=ON -DBUILD_TESTING=ON >/dev/null
	@cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzzers

test-release: build deps-test
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	@cd $(BUILD_ASAN) && ctest --output-on-failure -j $(JOBS)

fuzz: build-fuzz
	@scripts/run-fuzzers $(BUILD_FUZZ) $(FUZZ_SECONDS)

# Fuzzers first, so that the last summary printed is ctest's.
test: fuzz test-release test-asan

demo: build
	@$(BUILD)/agentbox demo --no-pause

lint: deps-lint build
	@scripts/lint $(BUILD)

# Whole-process comparisons against peers (bench/results.md); BENCH_FLAGS=--static-variant also
# times a static-pie build.
BENCH_FLAGS ?=
bench: build deps-bench
	@bench/compare --agentbox $(BUILD)/agentbox $(BENCH_FLAGS)

install: build
	install -D -m 0755 $(BUILD)/agentbox $(DESTDIR)$(PREFIX)/bin/agentbox
	ln -sfn agentbox $(DESTDIR)$(PREFIX)/bin/lxc-exec

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
