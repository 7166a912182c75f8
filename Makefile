# Fleet: the Linux 6.12 LTS base named in BASE plus the quilt series in
# series/patches/, with new files overlaid from kernel/ mm/ net/ ... .
#
#   make              build the Fleet kernel (out/bzImage, out/modules, out/manifest)
#   make check        static checks, then every test suite in QEMU
#   make check SUITES="fleet gidle"   only those suites
#   make check-bisect every prefix of the series builds (cached by prefix)
#   make tree         prepare build/tree (base + overlay + series) for quilt work
#   make vm ARGS="--smp 4 -- uname -a"   boot the built kernel, run a command
#   make export       self-contained mails in out/export (new files folded in)
#   make bench BENCH=swift   run bench/swift/run in the VM (shape: bench/swift/vm),
#                    or bench/<name>/host-run on the host (it boots its own VMs)
#   make static       only the static checks; make tests: only the suites
#   make DEBUG=1 tests SUITES=defer   the same on the lockdep debug variant
#   make clean        remove build output (keeps build/tree, the base and ccache)
#   make distclean    also remove build/tree
#   make help         this list
#
# See README for set-up and the patch workflow.

SHELL := /bin/bash
export QUILT_PATCHES := $(CURDIR)/patches
export QUILT_SERIES := $(CURDIR)/series
# make DEBUG=1 [tests|vm|bench]: the debug variant (configs/debug.config,
# build/obj-debug, out/debug), see scripts/variant.
export FLEET_DEBUG := $(DEBUG)

.PHONY: all kernel tree check check-bisect static tests vm export bench clean distclean deps help

all: kernel

# A typo in BENCH fails here, before any build or boot.
ifneq ($(filter bench,$(MAKECMDGOALS)),)
ifeq ($(wildcard bench/$(BENCH)/run bench/$(BENCH)/host-run),)
$(error make bench BENCH=<name>: "$(BENCH)" is not one of: $(notdir $(wildcard bench/*)))
endif
endif

help:
	@sed -n 's/^#   //p' Makefile

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

check-bisect: kernel
	@scripts/check --only-bisect

tests: kernel
	@scripts/check --no-static $(if $(SUITES),--suites "$(SUITES)")

vm:
	@scripts/vm $(ARGS)

bench: kernel
	@if [ -x bench/$(BENCH)/host-run ]; then bench/$(BENCH)/host-run; else \
	scripts/vm $$(grep -v '^#' bench/$(BENCH)/vm 2>/dev/null || echo --smp 2) --timeout 3600 \
		-- env FLEET_TOP=$(CURDIR) $(CURDIR)/bench/$(BENCH)/run; fi

export:
	@scripts/export $(if $(STATUS),--status "$(STATUS)")

# Everything under build/ but the work tree (and its edits), and out/.
clean:
	find build -mindepth 1 -maxdepth 1 ! -name tree -exec rm -rf {} + 2>/dev/null || true
	rm -rf out

distclean:
	@if [ -d build/tree ] && [ -n "$$(. scripts/lib && tree_unrefreshed build/tree)" ]; then \
		echo "distclean: build/tree has edits not refreshed into patches/; refresh them or rm -rf build/tree"; \
		exit 1; fi
	rm -rf build out
