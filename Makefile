# blectl: build, test, demo and install.  `make help` lists the targets.
#
# Everything goes through SwiftPM; this file only names the usual invocations.
# Variables (override on the command line, e.g. `make test SWIFTFLAGS=-v`):
#   SWIFT       the swift driver                       (swift)
#   SWIFTFLAGS  extra flags for every swift build/test  ()
#   TESTFLAGS   extra flags for swift test only, e.g. --filter BlectlCLITests
#   SCRATCH     SwiftPM's build directory               (.build)
#   VENV        Python venv with bleak, for sim-smoke and bench (.venv)
#   BLEAK       what pip installs into it               (bleak==3.1.0, the version sim/ was tested with)
#   BTHOME_BLE, IBEACON_BLE, BLUETOOTH_SIG  the decoders Home Assistant uses and the GATT one, pip-installed into VENV as the
#               advertisement- and value-decoding tests' oracles (bthome-ble==3.25.0, ibeacon-ble==1.2.0, bluetooth-sig==0.6.0)
#   JSONSCHEMA  the validator profiles/validate uses, pip-installed into VENV with them (jsonschema==4.26.0)
#   APT_LOCK_TIMEOUT  seconds deps waits for another apt's lock (600)
#   PREFIX      install prefix                          (/usr/local)
#   STRIP, OBJCOPY  binutils for install's stripping and its debug file (strip, objcopy)
#   DESTDIR     staging root for packagers              ()
#   DEB_DIR     where `make deb` stages and writes the .deb  ($(SCRATCH)/deb)
#   REALBLUEZ_SCRATCH  SwiftPM build dir for test-real's blectl   (.build/realbluez)
#   BLECTL_BIN         test-real: test this binary instead of building one  ()

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

SWIFT      ?= swift
SWIFTFLAGS ?=
TESTFLAGS  ?=
SCRATCH    ?= .build
VENV       ?= .venv
BLEAK      ?= bleak==3.1.0
BTHOME_BLE ?= bthome-ble==3.25.0
BLUETOOTH_SIG ?= bluetooth-sig==0.6.0
IBEACON_BLE ?= ibeacon-ble==1.2.0
JSONSCHEMA ?= jsonschema==4.26.0
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
STRIP      ?= strip
OBJCOPY    ?= objcopy
# blectl-sim's Python files (the launcher goes in BINDIR).
SIMDIR     ?= $(PREFIX)/share/blectl/sim
# serve's profile schema and example profile.
PROFILEDIR ?= $(PREFIX)/share/blectl/profiles

# Debian 12 packages: libdbus headers (CDBus, via pkg-config), libmosquitto's header
# (CMosquitto; the library itself is loaded only for --mqtt, libmosquitto1), the dbus-daemon and
# Python bindings the simulator needs, and bluez for bluetoothctl (sim-smoke); pip and
# PyYAML for scripts/gen-assigned-numbers (make check-assigned-numbers); mosquitto, its
# clients for the --mqtt tests and make test-gateway, and systemd (systemd-analyze) for the latter.
APT_PACKAGES := libdbus-1-dev libmosquitto-dev dbus-daemon python3-dbus python3-gi bluez pkg-config zsh fish python3-yaml python3-pip python3-cryptography \
                mosquitto mosquitto-clients systemd

# `apt-get` as root, through sudo otherwise. It waits up to APT_LOCK_TIMEOUT seconds for
# the dpkg and package-list locks (another apt, such as unattended-upgrades at boot,
# holding them) instead of failing at once (scripts/apt-get-waiting).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT_LOCK_TIMEOUT ?= 600
APT_GET := $(SUDO) env APT_LOCK_TIMEOUT=$(APT_LOCK_TIMEOUT) scripts/apt-get-waiting

# Link the Swift runtime statically into the release binary when the toolchain
# ships it (swift_static beside the compiler); otherwise build a dynamic one.
# `make build STATIC_STDLIB=` forces the dynamic link.
SWIFT_BIN     := $(realpath $(shell command -v $(SWIFT) 2>/dev/null))
STATIC_STDLIB ?= $(if $(wildcard $(dir $(SWIFT_BIN))../lib/swift_static/linux/static-stdlib-args.lnk),--static-swift-stdlib,)

# ASan links with the toolchain's lld when there is one (gold warns about the
# ASan runtime's symbols); LeakSanitizer is off: libdbus and Dispatch keep
# process-lifetime allocations on purpose.
LLD_FLAGS    ?= $(if $(shell command -v ld.lld 2>/dev/null),-Xswiftc -use-ld=lld,)
ASAN_OPTIONS ?= detect_leaks=0

SWIFT_BUILD   := $(SWIFT) build --scratch-path $(SCRATCH) $(SWIFTFLAGS)
SWIFT_TEST    := $(SWIFT) test --scratch-path $(SCRATCH) $(SWIFTFLAGS)
# The release binary packs its relative relocations (DT_RELR, lld's -z pack-relative-relocs;
# glibc 2.36+, Debian 12): the static Swift runtime leaves tens of thousands of them, which the
# dynamic loader otherwise applies one by one at every start, writing to every page of data
# they lie in. What it saves: BENCHMARKS.md, "Mechanisms kept for speed" (as for each flag
# below). `make build RELR_FLAGS=` links without, and without lld: the code layout
# (ORDER_FLAGS, below) goes too; `RELR_FLAGS="-Xswiftc -use-ld=lld"` drops only the packing.
RELR_FLAGS    ?= $(if $(LLD_FLAGS),$(LLD_FLAGS) -Xlinker -z -Xlinker pack-relative-relocs,)
# The static Swift runtime is C++ and needs libstdc++; linked as a shared library, the dynamic
# loader resolves some 1,700 of its symbols at every start. Linked statically (GCC Runtime
# Library Exception), only what the runtime uses comes in and is bound at link time. SwiftPM
# cannot ask for it, so the link searches first a directory holding only libstdc++.a.
# `make build STATIC_CXX=` links the shared one.
STATIC_CXX_A  := $(shell $(dir $(SWIFT_BIN))clang -print-file-name=libstdc++.a 2>/dev/null)
STATIC_CXX    ?= $(if $(and $(STATIC_STDLIB),$(filter /%,$(STATIC_CXX_A))),$(abspath $(SCRATCH))/static-libstdc++,)
# Generic types are instantiated through their metadata accessors, with the conformances
# passed in, instead of from mangled type names: the runtime otherwise demangles each name
# and looks up each conformance a generic requirement needs by scanning the binary's
# conformance tables, at every start.
# A frontend option, so it stays here rather than in Package.swift (unsafe flags would keep
# BlueZKit from being a dependency). `make build METADATA_FLAGS=` builds without.
METADATA_FLAGS ?= -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
# The release binary's code is laid out for what the commands run: each of blectl's
# functions in a section of its own (-function-sections), lld places those that
# packaging/symbol-order.txt lists first, in its order (scripts/gen-symbol-order profiles the
# commands; `make symbol-order`), and packaging/text-layout.ld gathers the compiler's small
# local helpers after the rest. The code a run executes then shares pages instead of touching
# one in every few of the 6.7 MB of text, and as the kernel maps a file's pages 64 KB around each
# fault, the resident set is smaller and start-up takes fewer page faults. A name the binary no
# longer has is skipped; the list only places code, never changes it (`make symbol-order`
# after changing the code the commands run). Only with lld (RELR_FLAGS); `make build
# ORDER_FLAGS=` links without.
SYMBOL_ORDER  := packaging/symbol-order.txt
TEXT_LAYOUT   := packaging/text-layout.ld
# SwiftPM does not know the list and the script are inputs of the link: `build` removes the
# binary when either is newer, so that it is linked again with them.
RELINK_IF_LAYOUT_CHANGED = bin="$(RELEASE_BIN)"; for input in $(SYMBOL_ORDER) $(TEXT_LAYOUT); do \
                               if [[ -e "$$bin" && "$$input" -nt "$$bin" ]]; then rm -f "$$bin"; fi; done
ORDER_FLAGS   ?= $(if $(findstring use-ld=lld,$(RELR_FLAGS)),-Xswiftc -Xfrontend -Xswiftc -function-sections \
                 -Xlinker --symbol-ordering-file=$(abspath $(SYMBOL_ORDER)) -Xlinker --no-warn-symbol-ordering \
                 -Xlinker -T -Xlinker $(abspath $(TEXT_LAYOUT)),)
# No RUNPATH: SwiftPM gives an executable `$ORIGIN`, and the dynamic loader then looked for
# libdbus and the C libraries in the binary's own directory (and its glibc-hwcaps, tls and
# x86_64 subdirectories) before the system's, 23 failed openat/stat calls at every start, and
# an installed blectl would load a libdbus-1.so.3 dropped beside it. Nothing blectl loads lives
# there (the Swift runtime is linked in). `make build RPATH_FLAGS=` keeps SwiftPM's.
RPATH_FLAGS   ?= --disable-local-rpath
# C targets (Sources/CProcessArguments) get DWARF 4, as the Swift code has: clang's default,
# DWARF 5, mixed into one binary with the Swift code's DWARF 4 makes valgrind 3.19 (Debian 12)
# give up on the binary ("Possibly corrupted debuginfo file"), and the benchmarks count
# instructions with callgrind. `make build DWARF_FLAGS=` builds with clang's default.
DWARF_FLAGS   ?= -Xcc -gdwarf-4
RELEASE_FLAGS := -c release $(DWARF_FLAGS) $(STATIC_STDLIB) $(RPATH_FLAGS) $(RELR_FLAGS) $(ORDER_FLAGS) $(METADATA_FLAGS) $(if $(STATIC_CXX),-Xswiftc -L$(STATIC_CXX),)
# The release binary, computed when a recipe needs it (SwiftPM knows the triple).
RELEASE_BIN = $$($(SWIFT_BUILD) $(RELEASE_FLAGS) --show-bin-path)/blectl

.PHONY: help deps venv oracles bthome-objects check-bthome-objects build debug man test test-signals test-tsan test-asan test-timeouts test-install test-gateway soak demo sim-smoke symbol-order bench \
        assigned-numbers check-assigned-numbers gatt-formats check-gatt-formats install install-debug install-sim uninstall clean distclean pkg-deps lint-man deb test-deb

help: ## Show this list.
	@echo "blectl make targets (see README.md):"
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | \
	    awk 'BEGIN { FS = ":.*## " } { printf "  %-14s %s\n", $$1, $$2 }'
	@echo "Variables: SWIFT SWIFTFLAGS TESTFLAGS SCRATCH VENV BLEAK PREFIX DESTDIR STATIC_STDLIB"

deps: ## Install the Debian packages needed to build, test and demo (apt-get).
	export DEBIAN_FRONTEND=noninteractive; \
	$(APT_GET) update || { sleep 10; $(APT_GET) update; }; \
	$(APT_GET) install -y $(APT_PACKAGES)

venv: $(VENV)/.bleak-installed ## Make the Python venv (VENV, default .venv) with bleak, for sim-smoke and bench.

$(VENV)/.bleak-installed:
	if ! /usr/bin/python3 -c 'import ensurepip' 2>/dev/null; then \
	    DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y python3-venv; \
	fi
	/usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(VENV)/bin/pip install --disable-pip-version-check '$(BLEAK)'
	touch $@

# The tests decode beacon frames with blectl and with these (AdvertisementOracleTests,
# which finds the venv's python as BLECTL_ORACLE_PYTHON or .venv/bin/python), and jsonschema,
# with which profiles/validate checks connect --values' output against the profile schema (ProfileSchemaTests).
oracles: $(VENV)/.oracles-installed ## Install the PyPI decoders the tests compare against (bthome-ble, ibeacon-ble, bluetooth-sig) and jsonschema into VENV.

$(VENV)/.oracles-installed: $(VENV)/.bleak-installed Makefile
	$(VENV)/bin/pip install --disable-pip-version-check '$(BTHOME_BLE)' '$(IBEACON_BLE)' '$(BLUETOOTH_SIG)' '$(JSONSCHEMA)'
	touch $@

build: ## Release build of blectl (Swift runtime linked statically when available).
	$(if $(STATIC_CXX),mkdir -p '$(STATIC_CXX)' && ln -sf '$(STATIC_CXX_A)' '$(STATIC_CXX)/libstdc++.a')
	$(if $(ORDER_FLAGS),$(RELINK_IF_LAYOUT_CHANGED))
	$(SWIFT_BUILD) $(RELEASE_FLAGS)
	@echo "built $(RELEASE_BIN)"

debug: ## Debug build of blectl.
	$(SWIFT_BUILD)
	@echo "built $$($(SWIFT_BUILD) --show-bin-path)/blectl"

# The generated blocks of the man page (SYNOPSIS entries, section headings, the entry of each
# argument and option) come from the declarations through blectl's hidden `__manual`, which
# reads the page and prints it with those blocks rewritten (a new option's entry is added
# after the one before it); the prose around them is not touched. ManPageTests fails until
# the page is what this makes.
man: ## Rewrite man/blectl.1's generated blocks (SYNOPSIS, the commands' headings and options) from the declarations.
	$(SWIFT_BUILD) --product blectl
	"$$($(SWIFT_BUILD) --show-bin-path)/blectl" __manual < man/blectl.1 > man/blectl.1.new || { rm -f man/blectl.1.new; exit 1; }
	mv man/blectl.1.new man/blectl.1

test: oracles ## Build, then run every test (they start their own dbus-daemon and simulator).
	$(SWIFT_BUILD) --build-tests
	BLECTL_ORACLE_PYTHON="$(abspath $(VENV))/bin/python" BLECTL_BIN="$$($(SWIFT_BUILD) --show-bin-path)/blectl" $(SWIFT_TEST) --skip-build $(TESTFLAGS)

test-signals: ## SIGINT/SIGTERM at 52 points of each subcommand's run; the simulator must be left clean.
	$(SWIFT_BUILD) --build-tests
	BLECTL_SIGNAL_SWEEP=1 BLECTL_BIN="$$($(SWIFT_BUILD) --show-bin-path)/blectl" \
	    $(SWIFT_TEST) --skip-build --filter SignalSweep

test-tsan: ## The tests under ThreadSanitizer (separate build in .build/tsan; the end-to-end tests run the instrumented blectl).
	$(SWIFT) build --scratch-path $(SCRATCH)/tsan $(SWIFTFLAGS) --sanitize=thread --build-tests
	BLECTL_BIN="$$($(SWIFT) build --scratch-path $(SCRATCH)/tsan $(SWIFTFLAGS) --sanitize=thread --show-bin-path)/blectl" \
	    TSAN_OPTIONS=halt_on_error=1 \
	    $(SWIFT) test --skip-build --scratch-path $(SCRATCH)/tsan $(SWIFTFLAGS) --sanitize=thread $(TESTFLAGS)

test-asan: ## The tests under AddressSanitizer (separate build in .build/asan; the end-to-end tests run the instrumented blectl).
	$(SWIFT) build --scratch-path $(SCRATCH)/asan $(SWIFTFLAGS) --sanitize=address $(LLD_FLAGS) --build-tests
	BLECTL_BIN="$$($(SWIFT) build --scratch-path $(SCRATCH)/asan $(SWIFTFLAGS) --sanitize=address $(LLD_FLAGS) --show-bin-path)/blectl" \
	    ASAN_OPTIONS='$(ASAN_OPTIONS)' \
	    $(SWIFT) test --skip-build --scratch-path $(SCRATCH)/asan $(SWIFTFLAGS) --sanitize=address $(LLD_FLAGS) $(TESTFLAGS)

test-timeouts: build ## Every simulator fault x every subcommand with --timeout 2: overruns past the timeout reported, fails past 1 s (scripts/timeout-sweep).
	scripts/timeout-sweep "$(RELEASE_BIN)" -j 2

soak: build ## 60 s scan, 2,000 advertisers changing RSSI: flat memory, no line lost (scripts/soak).
	scripts/soak "$(RELEASE_BIN)"

demo: build ## scan, connect, get-version, get-battery against the simulator.
	BLECTL="$(RELEASE_BIN)" scripts/demo

sim-smoke: venv ## bluetoothctl and bleak against the simulator (sim/smoke/run).
	BLESIM_VENV="$(abspath $(VENV))" sim/smoke/run

symbol-order: build ## Re-profile the commands into packaging/symbol-order.txt (needs valgrind and lld), then relink.
	$(if $(ORDER_FLAGS),,$(error make symbol-order: the layout needs lld (ORDER_FLAGS is empty)))
	SWIFT='$(SWIFT_BIN)' scripts/gen-symbol-order "$(RELEASE_BIN)" $(SYMBOL_ORDER)
	$(RELINK_IF_LAYOUT_CHANGED)
	$(SWIFT_BUILD) $(RELEASE_FLAGS)

bench: build venv ## Run the benchmarks (bench/run; see BENCHMARKS.md).
	if [[ -x bench/run ]]; then \
	    BLECTL="$(RELEASE_BIN)" BLESIM_VENV="$(abspath $(VENV))" bench/run; \
	else \
	    echo "make bench: no bench/run in this tree; nothing to run" >&2; \
	fi

# test-real: the acceptance suite against a real bluetoothd in a qemu (TCG) VM with a
# bumble virtual controller and peripheral, one VM per Debian suite in REALBLUEZ_SUITES:
# bookworm (bluetoothd 5.66), trixie (5.82), forky (5.87), one after the other (about 6 min
# each); fails if any fails, a summary line per suite at the end. See realbluez/README.md.
# The VM images are cached per suite in ${XDG_CACHE_HOME:-~/.cache}/blectl-realbluez.
#   make test-real REALBLUEZ_SUITES=trixie      one rig only
REALBLUEZ_SCRATCH ?= $(CURDIR)/.build/realbluez
BLECTL_BIN        ?=
REALBLUEZ_SUITES  ?= bookworm trixie forky
REALBLUEZ_APT_PACKAGES := qemu-system-x86 debootstrap cpio zstd xz-utils curl python3-pip python3-dbus dbus \
                          libdbus-1-dev pkg-config

realbluez-deps: ## Install what test-real needs on the host (apt-get: qemu, debootstrap, ...).
	export DEBIAN_FRONTEND=noninteractive; \
	missing=$$(dpkg-query -W -f '$${Package} $${Status}\n' $(REALBLUEZ_APT_PACKAGES) 2>/dev/null | \
	           awk '$$NF != "installed" { print $$1 }'; \
	           for p in $(REALBLUEZ_APT_PACKAGES); do dpkg-query -W $$p >/dev/null 2>&1 || echo $$p; done); \
	if [[ -n "$$missing" ]]; then \
	    $(APT_GET) update || { sleep 10; $(APT_GET) update; }; \
	    $(APT_GET) install -y --no-install-recommends $$missing; \
	fi

test-real: realbluez-deps ## Acceptance tests against a real bluetoothd in a qemu VM (realbluez/).
	BLECTL_BIN='$(BLECTL_BIN)' REALBLUEZ_SCRATCH='$(REALBLUEZ_SCRATCH)' REALBLUEZ_SUITES='$(REALBLUEZ_SUITES)' \
	    realbluez/run-suites

test-gateway: debug ## The gateway recipe (scan and notify piped to mosquitto_pub) into a private mosquitto, against the simulator; the systemd unit verified.
	scripts/gateway-test "$$($(SWIFT_BUILD) --show-bin-path)/blectl"

assigned-numbers: ## Regenerate Sources/BlueZKit/AssignedNumbers+Tables.swift from the pinned Bluetooth SIG data (pip download; README: Assigned numbers).
	scripts/gen-assigned-numbers

bthome-objects: oracles ## Regenerate Sources/BlueZKit/BTHome+Objects.swift from bthome-ble's object table (BTHOME_BLE).
	$(VENV)/bin/python scripts/gen-bthome-objects

check-bthome-objects: oracles ## Check that the BTHome object table is what scripts/gen-bthome-objects makes.
	$(VENV)/bin/python scripts/gen-bthome-objects --check

check-assigned-numbers: ## Check that the assigned-numbers table is what scripts/gen-assigned-numbers makes (pip download).
	scripts/gen-assigned-numbers --check

gatt-formats: ## Regenerate Sources/BlueZKit/CharacteristicFormats+Tables.swift from the pinned GATT Specification Supplement (pip download; HACKING.md: Assigned numbers).
	scripts/gen-gatt-formats

check-gatt-formats: ## Check that the characteristic formats table is what scripts/gen-gatt-formats makes (pip download).
	scripts/gen-gatt-formats --check

# install puts a stripped blectl in BINDIR (its debug info and symbols, about 45% of the
# release binary, go to $(SCRATCH)/blectl.debug, which the binary names in its
# .gnu_debuglink); install-debug adds that file as BINDIR/.debug/blectl.debug, where gdb
# and eu-stack look for it.
install: build install-sim ## Install bin/blectl (stripped), man1/blectl.1 and the bash/zsh/fish completions, and blectl-sim (install-sim), under DESTDIR+PREFIX (/usr/local).
	$(OBJCOPY) --only-keep-debug "$(RELEASE_BIN)" '$(SCRATCH)/blectl.debug'
	$(STRIP) --strip-all -o '$(SCRATCH)/blectl.stripped' "$(RELEASE_BIN)"
	cd '$(SCRATCH)' && $(OBJCOPY) --add-gnu-debuglink=blectl.debug blectl.stripped
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(BASHCOMPDIR)' '$(DESTDIR)$(ZSHCOMPDIR)' '$(DESTDIR)$(FISHCOMPDIR)'
	install -m 0755 '$(SCRATCH)/blectl.stripped' '$(DESTDIR)$(BINDIR)/blectl'
	install -m 0644 man/blectl.1 '$(DESTDIR)$(MANDIR)/man1/blectl.1'
	"$(RELEASE_BIN)" completions bash > '$(DESTDIR)$(BASHCOMPDIR)/blectl'
	"$(RELEASE_BIN)" completions zsh > '$(DESTDIR)$(ZSHCOMPDIR)/_blectl'
	"$(RELEASE_BIN)" completions fish > '$(DESTDIR)$(FISHCOMPDIR)/blectl.fish'
	chmod 0644 '$(DESTDIR)$(BASHCOMPDIR)/blectl' '$(DESTDIR)$(ZSHCOMPDIR)/_blectl' '$(DESTDIR)$(FISHCOMPDIR)/blectl.fish'
	install -d '$(DESTDIR)$(PROFILEDIR)'
	install -m 0644 profiles/blectl-profile.schema.json profiles/heart-rate.json '$(DESTDIR)$(PROFILEDIR)/'

install-debug: install ## Also install blectl's debug info as bin/.debug/blectl.debug (for gdb, backtraces).
	install -d '$(DESTDIR)$(BINDIR)/.debug'
	install -m 0644 '$(SCRATCH)/blectl.debug' '$(DESTDIR)$(BINDIR)/.debug/blectl.debug'

# The version every artefact carries: blectl --version, blectl-sim --version, the .deb.
VERSION := $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/BlectlCLI/Blectl.swift)

install-sim: ## Install blectl-sim (bin/blectl-sim, the simulator in share/blectl/sim, man1/blectl-sim.1); part of install.
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(SIMDIR)/bluezsim'
	install -m 0755 sim/bluez-sim '$(DESTDIR)$(SIMDIR)/bluez-sim'
	install -m 0644 sim/bus.conf '$(DESTDIR)$(SIMDIR)/bus.conf'
	install -m 0644 sim/bluezsim/*.py '$(DESTDIR)$(SIMDIR)/bluezsim/'
	sed -e "s|^SIM_DIR = None$$|SIM_DIR = '$(SIMDIR)'|" -e 's|^VERSION = ".*"$$|VERSION = "$(VERSION)"|' \
	    sim/blectl-sim > '$(DESTDIR)$(BINDIR)/blectl-sim'
	chmod 0755 '$(DESTDIR)$(BINDIR)/blectl-sim'
	install -m 0644 man/blectl-sim.1 '$(DESTDIR)$(MANDIR)/man1/blectl-sim.1'

uninstall: ## Remove what install and install-debug put there.
	rm -f '$(DESTDIR)$(BINDIR)/blectl' '$(DESTDIR)$(BINDIR)/.debug/blectl.debug' '$(DESTDIR)$(MANDIR)/man1/blectl.1' \
	    '$(DESTDIR)$(BASHCOMPDIR)/blectl' '$(DESTDIR)$(ZSHCOMPDIR)/_blectl' '$(DESTDIR)$(FISHCOMPDIR)/blectl.fish'
	rmdir '$(DESTDIR)$(BINDIR)/.debug' 2>/dev/null || true
	rm -f '$(DESTDIR)$(BINDIR)/blectl-sim' '$(DESTDIR)$(MANDIR)/man1/blectl-sim.1'
	rm -rf '$(DESTDIR)$(SIMDIR)' '$(DESTDIR)$(PROFILEDIR)'
	rmdir '$(DESTDIR)$(dir $(SIMDIR:/=))' 2>/dev/null || true

test-install: build ## install + install-debug into a scratch DESTDIR: stripped, debuglink, debug file, man page; uninstall clean (scripts/check-install).
	STATIC_CXX='$(STATIC_CXX)' scripts/check-install '$(MAKE)'

# Debian packaging and man-page lint (CI: .ci/run). What they need beyond `make deps`:
# lintian, mandoc (mandoc -Tlint), groff-base (groff -ww), dpkg-dev (dpkg-shlibdeps),
# file, man-db and bash-completion (test-deb checks `man -w` and loads the completions).
PKG_APT_PACKAGES := lintian mandoc groff-base dpkg-dev file man-db bash-completion
DEB_DIR ?= $(SCRATCH)/deb
MAN_PAGES := man/blectl.1 man/blectl-sim.1

pkg-deps: ## Install what lint-man, deb and test-deb need (apt-get: lintian, mandoc, groff, dpkg-dev).
	export DEBIAN_FRONTEND=noninteractive; \
	missing=$$(for p in $(PKG_APT_PACKAGES); do \
	               dpkg-query -W -f '$${Status}\n' $$p 2>/dev/null | grep -q ' installed$$' || echo $$p; done); \
	if [[ -n "$$missing" ]]; then \
	    $(SUDO) apt-get update || { sleep 10; $(SUDO) apt-get update; }; \
	    $(SUDO) apt-get install -y --no-install-recommends $$missing; \
	fi

lint-man: pkg-deps ## The man pages through mandoc -Tlint and groff -ww: no message allowed.
	status=0; \
	for page in $(MAN_PAGES); do \
	    out=$$( { mandoc -Tlint -W style "$$page"; LC_ALL=C.UTF-8 groff -ww -z -man -K utf8 "$$page"; } 2>&1) || status=1; \
	    if [[ -n "$$out" ]]; then echo "$$out" >&2; status=1; else echo "lint-man: $$page: clean"; fi; \
	done; \
	if (( status )); then echo "lint-man: fix the lines above (scripts/man-wrap PAGE breaks text lines over 80 bytes)" >&2; fi; \
	exit $$status

deb: build ## Build the Debian package blectl_VERSION_ARCH.deb in DEB_DIR (stripped binary, man pages, completions, blectl-sim).
	rm -rf '$(DEB_DIR)/root'
	$(MAKE) --no-print-directory install DESTDIR='$(abspath $(DEB_DIR))/root' PREFIX=/usr \
	    ZSHCOMPDIR=/usr/share/zsh/vendor-completions
	scripts/build-deb '$(DEB_DIR)/root' '$(DEB_DIR)' '$(VERSION)'

test-deb: pkg-deps deb ## lintian, then dpkg -i the .deb, check what it installed (blectl-sim's three-line script too), dpkg --purge, check nothing is left.
	scripts/test-deb "$$(cat '$(DEB_DIR)/latest')"

clean: ## Remove build products (.build, sanitizer builds included, and bench/out).
	rm -rf '$(SCRATCH)' bench/out

distclean: clean ## clean, and remove the venv.
	rm -rf '$(VENV)'
