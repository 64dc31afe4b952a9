# Alcedo: two commands set up everything on a fresh Debian 12 machine.
#   make demo   installs what is missing, builds, runs the main job
#   make serve  installs what is missing, builds, serves the sample images (an example URL is printed)
#   make test   installs what is missing, builds, runs every test
#   make coverage   runs every test with code coverage and prints the library's line coverage
#   make release OTEL=1   (and make install OTEL=1) adds request tracing over OTLP
#   make install [PREFIX=/usr/local] [DESTDIR=]   the stripped binary, completions and man page
#   make uninstall [PREFIX=/usr/local]            removes exactly what make install wrote
#   make test-otel runs the tracing tests against alcedo built with OTEL=1 (an OTLP receiver)
#   make examples  builds and tests the example apps (Examples/VaporApp, Examples/HummingbirdApp)
#   make container-check   runs the release binary in a fresh Debian holding only the container
#                          image's runtime packages (downloads a base system; not part of make test)
SWIFT ?= swift
SWIFT_FLAGS ?=
# Release builds link the Swift runtime and Foundation into the executables, with lld,
# packed relocations, no exported symbol table and the functions short commands run side
# by side (see scripts/release-flags.sh): an `alcedo` process starts in about a third of the
# CPU time and half the memory of a plain release build.
RELEASE_FLAGS ?= $(shell bash scripts/release-flags.sh)
# The binary that the demo runs and that every process-level test runs is the release
# `alcedo`, built exactly as `make install` builds it: a crash that only the shipped build
# shows fails `make test`. The test targets themselves are debug builds.
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path)/alcedo
# OTEL=1 builds `alcedo` with the OpenTelemetry trait: `serve` exports request traces over
# OTLP/HTTP or OTLP/gRPC (IMGPROXY_OPEN_TELEMETRY_ENABLE). Off by default: swift-otel and its
# gRPC stack take longer to build than Alcedo itself.
OTEL ?=
TRAIT_FLAGS = $(if $(filter 1 yes true,$(OTEL)),--traits OpenTelemetry,)
# `make test-otel` builds that binary apart, in its own build folder, as `make release OTEL=1` does.
OTEL_SCRATCH = $(CURDIR)/.build-otel

.PHONY: test-otel demo serve test coverage build deps release fuzz bench clean install uninstall container-check examples

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) $(TRAIT_FLAGS) $(SWIFT_FLAGS)
	@bash scripts/check-release-binary.sh

# The demo runs the release binary (`make release`, as `make install` installs it); `make test`
# after `make demo` builds the debug test targets and reuses that binary.
demo: release
	@ALCEDO_BINARY="$(RELEASE_BIN)" bash scripts/demo.sh

serve: release
	@bash scripts/serve.sh

# Prints how long the test build and the tests took (the release binary's build is `make release`).
# The XCTest cases (Kingfisher's own tests, which mostly wait on their timers) run beside the
# Swift Testing tests, from the same test binary, with a cache folder of their own; their log
# follows. Either library failing fails `make test`.
test: release
	start=$$(date +%s); \
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product generate-manual $(SWIFT_FLAGS) && \
	$(SWIFT) build --build-tests $(SWIFT_FLAGS) && \
	built=$$(date +%s) && \
	{ bundle="$$($(SWIFT) build --show-bin-path $(SWIFT_FLAGS))/AlcedoPackageTests.xctest"; xdir=$$(mktemp -d); \
	  XDG_CACHE_HOME="$$xdir" ALCEDO_TEST_BINARY="$(RELEASE_BIN)" "$$bundle" > "$$xdir/xctest.log" 2>&1 & xctest=$$!; \
	  ALCEDO_TEST_BINARY="$(RELEASE_BIN)" $(SWIFT) test --skip-build --disable-xctest $(SWIFT_FLAGS); status=$$?; \
	  wait $$xctest || status=1; cat "$$xdir/xctest.log"; rm -rf "$$xdir"; \
	  echo "make test: test build $$((built - start)) s, tests $$(($$(date +%s) - built)) s"; exit $$status; }

# The tracing tests, against `alcedo` built with the OpenTelemetry trait and a real OTLP receiver.
test-otel: deps
	$(SWIFT) build -c release $(RELEASE_FLAGS) --traits OpenTelemetry --scratch-path "$(OTEL_SCRATCH)" --product alcedo $(SWIFT_FLAGS)
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	ALCEDO_OTEL_BINARY="$(OTEL_SCRATCH)/release/alcedo" ALCEDO_TEST_BINARY="$(RELEASE_BIN)" \
	  $(SWIFT) test --skip-build --filter OpenTelemetryExportTests $(SWIFT_FLAGS)

coverage: release
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product generate-manual $(SWIFT_FLAGS)
	$(SWIFT) build --build-tests --enable-code-coverage $(SWIFT_FLAGS)
	ALCEDO_TEST_BINARY="$(RELEASE_BIN)" $(SWIFT) test --skip-build --enable-code-coverage $(SWIFT_FLAGS)
	@SWIFT="$(SWIFT)" bash scripts/coverage.sh

PREFIX ?= /usr/local
DESTDIR ?=

install: release
	@bash scripts/install.sh install --prefix "$(PREFIX)" --destdir "$(DESTDIR)"

uninstall:
	@bash scripts/install.sh uninstall --prefix "$(PREFIX)" --destdir "$(DESTDIR)"

container-check: release
	@bash scripts/container-check.sh

# Each example is a package of its own that depends on this one by path, as an app would by URL.
# They build in this package's .build: the modules `make test` compiled (Alcedo's, SwiftNIO's,
# Hummingbird's…) are reused, and only the example and what it adds (Vapor) are compiled.
EXAMPLES = Examples/HummingbirdApp Examples/VaporApp
examples: deps
	@set -e; for example in $(EXAMPLES); do \
	  echo "examples: $$example"; \
	  $(SWIFT) build --package-path $$example --scratch-path "$(CURDIR)/.build" --build-tests $(SWIFT_FLAGS); \
	  $(SWIFT) test --package-path $$example --scratch-path "$(CURDIR)/.build" --skip-build $(SWIFT_FLAGS); \
	done

fuzz: deps
	@bash scripts/fuzz.sh

bench: deps
	@bash Benchmarks/run.sh

clean:
	rm -rf .build
