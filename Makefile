# The two commands a newcomer needs: `make demo` and `make test`.
# Everything else here is what those two need, spelled out.

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: deps build demo test

# jansson is the one outside dependency (a Debian package); install it only when
# pkg-config cannot find it.
deps:
	@pkg-config --exists jansson || { \
		echo "jansson not found: installing libjansson-dev"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y libjansson-dev; }

# Warnings are errors: the project builds with zero warnings in Swift 6 mode.
build: deps
	$(SWIFT) build -Xswiftc -warnings-as-errors

# The seed's four checks on iOS and on Android, played by the headless shell.
demo: build
	@.build/debug/cxshell run Tests/Scenarios/ios-seed-checks.cxs Tests/Scenarios/android-seed-checks.cxs

test: deps
	Tests/run-all
