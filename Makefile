# Alcedo: two commands set up everything on a fresh Debian 12 machine.
#   make demo   installs what is missing, builds, runs the main job
#   make serve  installs what is missing, builds, serves the sample images (an example URL is printed)
#   make test   installs what is missing, builds, runs every test
#   make coverage   runs every test with code coverage and prints the library's line coverage
#   make install [PREFIX=/usr/local] [DESTDIR=]   the stripped binary, completions and man page
#   make uninstall [PREFIX=/usr/local]            removes exactly what make install wrote
#   make container-check   runs the release binary in a fresh Debian holding only the container
#                          image's runtime packages (downloads a base system; not part of make test)
SWIFT ?= swift
SWIFT_FLAGS ?=
# Release builds link the Swift runtime and Foundation into the executables, with lld,
# packed relocations, no exported symbol table and the functions short commands run side
# by side (see scripts/release-flags.sh): an `alcedo` process starts in about a third of the
# CPU time and half the memory of a plain release build.
RELEASE_FLAGS ?= $(shell bash scripts/release-flags.sh)

.PHONY: demo serve test coverage build deps release fuzz bench clean install uninstall container-check

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) $(SWIFT_FLAGS)
	@bash scripts/check-release-binary.sh

# The demo runs the debug build, the configuration `make test` builds too: `make test` after
# `make demo` compiles only the test targets. `make release` (used by serve, install and the
# benchmarks) builds the optimised binary.
demo: deps
	$(SWIFT) build --product alcedo $(SWIFT_FLAGS)
	@bash scripts/demo.sh

serve: release
	@bash scripts/serve.sh

test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) build --product generate-manual $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_FLAGS)

coverage: deps
	$(SWIFT) build --build-tests --enable-code-coverage $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build --enable-code-coverage $(SWIFT_FLAGS)
	@SWIFT="$(SWIFT)" bash scripts/coverage.sh

PREFIX ?= /usr/local
DESTDIR ?=

install: release
	@bash scripts/install.sh install --prefix "$(PREFIX)" --destdir "$(DESTDIR)"

uninstall:
	@bash scripts/install.sh uninstall --prefix "$(PREFIX)" --destdir "$(DESTDIR)"

container-check: release
	@bash scripts/container-check.sh

fuzz: deps
	@bash scripts/fuzz.sh

bench: deps
	@bash Benchmarks/run.sh

clean:
	rm -rf .build
