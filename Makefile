# Alcedo: two commands set up everything on a fresh Debian 12 machine.
#   make demo   installs what is missing, builds, runs the main job
#   make serve  installs what is missing, builds, serves the sample images (an example URL is printed)
#   make test   installs what is missing, builds, runs every test
SWIFT ?= swift
SWIFT_FLAGS ?=

.PHONY: demo serve test build deps release fuzz bench clean

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(SWIFT_FLAGS)

demo: release
	@bash scripts/demo.sh

serve: release
	@bash scripts/serve.sh

test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_FLAGS)

fuzz: deps
	@bash scripts/fuzz.sh

bench: deps
	@bash Benchmarks/run.sh

clean:
	rm -rf .build
