# Fleet: the Linux 6.12 LTS base named in BASE plus the quilt series in
# series/patches/, with new files overlaid from kernel/ mm/ net/ ... .
#
#   make              build the Fleet kernel (out/bzImage, out/modules, out/manifest)
#   make check        static checks, then every test suite in QEMU
#   make check SUITES="fleet gidle"   only those suites
#   make tree         prepare build/tree (base + overlay + series) for quilt work
#   make vm ARGS="--smp 4 -- uname -a"   boot the built kernel, run a command
#   make export       self-contained mails in out/export (new files folded in)
#   make bench BENCH=swift   run bench/swift/run in the VM (shape: bench/swift/vm),
#                    or bench/<name>/host-run on the host (it boots its own VMs)
#   make DEBUG=1 tests SUITES=defer   the same on the lockdep debug variant
#   make clean        remove build output (keeps the base and ccache caches)
#
# See README for set-up and the patch workflow.

SHELL := /bin/bash
export QUILT_PATCHES := $(CURDIR)/patches
export QUILT_SERIES := $(CURDIR)/series
# make DEBUG=1 [tests|vm|bench]: the debug variant (configs/debug.config,
# build/obj-debug, out/debug), see scripts/variant.
export FLEET_DEBUG := $(DEBUG)

.PHONY: all kernel tree check static tests vm export bench clean distclean deps

all: kernel

deps:
	@scripts/deps

kernel: deps
	@scripts/build

tree: deps
	@scripts/tree >/dev/null
	@echo "build/tree: base $$(cat BASE) + overlay + series; use scripts/quilt there"

check: kernel
	@scripts/check $(if $(SUITES),--suites "$(SUITES)")

static: kernel
	@scripts/check --no-tests

tests: kernel
	@scripts/check --no-static $(if $(SUITES),--suites "$(SUITES)")

vm:
	@scripts/vm $(ARGS)

bench: kernel
	@test -n "$(BENCH)" || { echo "make bench BENCH=<name>: one of $$(ls bench)"; exit 2; }
	@if [ -x bench/$(BENCH)/host-run ]; then bench/$(BENCH)/host-run; else \
	scripts/vm $$(grep -v '^#' bench/$(BENCH)/vm 2>/dev/null || echo --smp 2) --timeout 3600 \
		-- env FLEET_TOP=$(CURDIR) $(CURDIR)/bench/$(BENCH)/run; fi

export:
	@scripts/export $(if $(STATUS),--status "$(STATUS)")

clean:
	rm -rf build/obj build/obj-debug build/obj-base build/tests build/tests-obj build/vm build/results out

distclean:
	rm -rf build out
