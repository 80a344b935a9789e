# The two commands a newcomer needs: `make demo` and `make test`.
# Everything else here is what those two need, spelled out.

SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: deps python-deps build demo test lib c-test rust-test browser-test fuzz-findings transport-test bench bench-scaling fuzz sanitize soak install package package-test

# The Debian packages the project builds and tests with, each installed only when it is
# missing: jansson (JSON), OpenSSL (TLS, the front door's test CA, and the command the
# tests verify it with), nghttp2 (HTTP/2), http-parser (HTTP/1.1), and curl, nghttp and h2load
# (the front door tests' clients), nghttpd (the HTTP/2 server the front door's speed
# is measured beside), libmosquitto (the devices' MQTT client), and the mosquitto
# broker and its command-line clients (Appwrite Push's tests start a real broker), and
# cargo (the Rust crate over cx.h and the core written with it; built offline).
deps:
	@missing=""; \
	pkg-config --exists jansson || missing="$$missing libjansson-dev"; \
	pkg-config --exists openssl || missing="$$missing libssl-dev"; \
	command -v openssl >/dev/null || missing="$$missing openssl"; \
	pkg-config --exists libnghttp2 || missing="$$missing libnghttp2-dev"; \
	[ -f /usr/include/http_parser.h ] || missing="$$missing libhttp-parser-dev"; \
	command -v curl >/dev/null || missing="$$missing curl"; \
	command -v h2load >/dev/null || missing="$$missing nghttp2-client"; \
	command -v nghttpd >/dev/null || missing="$$missing nghttp2-server"; \
	pkg-config --exists libmosquitto || missing="$$missing libmosquitto-dev"; \
	[ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null || missing="$$missing mosquitto"; \
	command -v mosquitto_pub >/dev/null || missing="$$missing mosquitto-clients"; \
	command -v cargo >/dev/null || missing="$$missing cargo"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y $$missing; \
	fi

# The Python the tests use, in a virtual environment of the build's: Playwright (the
# inspector's page is tested in Debian's chromium; Playwright's own browser download is
# not used), the OpenAPI validator, and the real clients that meet chaos rules
# (firebase-admin, httpx with HTTP/2, the PubNub SDK), Appwrite's server SDK, a HAR
# library (haralyzer) and the official MCP SDK (its stdio client drives `cxshell mcp`).
PYTHON_VENV := .build/python-venv
PYTHON_PACKAGES := playwright openapi-spec-validator firebase-admin httpx[http2] pubnub appwrite==27.0.0 haralyzer mcp==2.3.0
python-deps: deps
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	python3 -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y $$missing; \
	fi
	@[ -x $(PYTHON_VENV)/bin/python ] && \
		$(PYTHON_VENV)/bin/python -c 'import playwright, openapi_spec_validator, firebase_admin, httpx, h2, pubnub, appwrite, haralyzer, mcp' 2>/dev/null || { \
		python3 -m venv $(PYTHON_VENV) && $(PYTHON_VENV)/bin/pip install --quiet $(PYTHON_PACKAGES); }

# The page, clicked through in chromium against a real shell (Tests/Browser).
browser-test: python-deps
	$(SWIFT) build --product cxshell -Xswiftc -warnings-as-errors
	$(PYTHON_VENV)/bin/python Tests/Browser/inspector_test.py

# Warnings are errors: the project builds with zero warnings in Swift 6 mode.
build: deps
	$(SWIFT) build -Xswiftc -warnings-as-errors

# The seed's four checks on iOS and on Android, then one short scenario per channel
# (Appwrite over a real broker, XMTP webhooks, PubNub), played by the headless shell.
demo: build
	@.build/debug/cxshell run Tests/Scenarios/ios-seed-checks.cxs Tests/Scenarios/android-seed-checks.cxs \
		Tests/Scenarios/APW-appwrite-push-over-mqtt.cxs Tests/Scenarios/APW-server-createpush-reaches-a-users-two-devices.cxs \
		Tests/Scenarios/XM-2-webhook-hints-reach-the-running-app.cxs \
		Tests/Scenarios/PN-pubnub-gateway-fans-out-to-apns-and-fcm.cxs Tests/Scenarios/CHAOS-a-retrying-backend.cxs \
		Tests/Scenarios/CHAOS-offline-phone.cxs Tests/Scenarios/PH-actions.cxs \
		Tests/Scenarios/PH-channels-and-resources.cxs Tests/Scenarios/PH-doze.cxs Tests/Scenarios/PH-token-expiry.cxs

test: deps python-deps
	Tests/run-all

# The C ABI as an outside program sees it: the host (cx.h, libcx.so), which an app
# embeds, and the headless world of simulated devices (cx_device.h, libcxdevice.so),
# which only a core's tests link.
PREFIX ?= build
lib: deps
	$(SWIFT) build --product cx -Xswiftc -warnings-as-errors
	$(SWIFT) build --product cxdevice -Xswiftc -warnings-as-errors
	mkdir -p $(PREFIX)/include $(PREFIX)/lib
	cp Sources/CCX/include/cx.h Sources/CCXDevice/include/cx_device.h $(PREFIX)/include/
	cp .build/debug/libcx.so .build/debug/libcxdevice.so $(PREFIX)/lib/
	# The C plugin as a library cxshell loads (--plugin build/lib/libkvstore.so): cx_*
	# stay undefined in it, the loading process provides them.
	cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -I$(PREFIX)/include -IPlugins/KVStore \
		Plugins/KVStore/kvstore.c Plugins/KVStore/kvstore_entry.c -ljansson -o $(PREFIX)/lib/libkvstore.so

# The core written in C, with the C plugin, linked like an outsider; then the same
# program under AddressSanitizer (leaks included). It also checks that libcx.so
# holds the host alone: no simulator symbol may be in it.
C_FLAGS := -std=c11 -g -Wall -Wextra -Werror -I$(PREFIX)/include -IPlugins/KVStore
C_LINK := -L$(PREFIX)/lib -lcx -lcxdevice -ljansson -lpthread -Wl,-rpath,$(abspath $(PREFIX)/lib)
C_SOURCES := Tests/CCore/core_test.c Plugins/KVStore/kvstore.c
c-test: lib
	@! nm -D --defined-only $(PREFIX)/lib/libcx.so | grep -E 'cx_device|ShellKit|SimulatedDevice|PushServices' \
		|| { echo "libcx.so must hold the host only"; exit 1; }
	# The JSON writer's and readers' block scans (Sources/CByteScan), with SSE2 and without.
	cc $(C_FLAGS) -ISources/CByteScan/include Tests/CByteScan/byte_scan_test.c -o $(PREFIX)/byte_scan_test
	$(PREFIX)/byte_scan_test
	cc $(C_FLAGS) -U__SSE2__ -ISources/CByteScan/include Tests/CByteScan/byte_scan_test.c -o $(PREFIX)/byte_scan_test_portable
	$(PREFIX)/byte_scan_test_portable
	cc $(C_FLAGS) $(C_SOURCES) $(C_LINK) -o $(PREFIX)/core_test
	$(PREFIX)/core_test
	cc $(C_FLAGS) -fsanitize=address -fno-omit-frame-pointer $(C_SOURCES) $(C_LINK) -o $(PREFIX)/core_test_asan
	ASAN_OPTIONS=detect_leaks=1 $(PREFIX)/core_test_asan

# The Rust crate over cx.h (Sources/RustCX), the booking core written with it
# (Tests/RustCore), whose tests run the seed's checks in the headless world, and the
# plugin written with it (Plugins/RustKV), loaded into cxshell with --plugin beside the
# C one. Offline: they take no crate from a registry.
CARGO_TARGET := $(abspath .build/cargo)
rust-test: lib
	$(SWIFT) build --product cxshell -Xswiftc -warnings-as-errors
	CX_LIB_DIR=$(abspath $(PREFIX)/lib) CARGO_TARGET_DIR=$(CARGO_TARGET) \
		cargo test --offline --manifest-path Sources/RustCX/Cargo.toml --features world
	CX_LIB_DIR=$(abspath $(PREFIX)/lib) CARGO_TARGET_DIR=$(CARGO_TARGET) \
		cargo test --offline --manifest-path Tests/RustCore/Cargo.toml
	# The plugin's tests load its library, which they build when it is missing.
	CX_LIB_DIR=$(abspath $(PREFIX)/lib) CARGO_TARGET_DIR=$(CARGO_TARGET) CXSHELL=$(abspath .build/debug/cxshell) \
		cargo test --offline --manifest-path Plugins/RustKV/Cargo.toml

# The inputs that once found a bug in the front door's transport, replayed through its
# fuzz harness under AddressSanitizer (leaks included) without libFuzzer.
FUZZ_FINDINGS := $(wildcard Tests/Fuzz/regressions/FrontDoor/*)
fuzz-findings: deps
	$(SWIFT) build --product cxshell
	.build/debug/cxshell ca $(PREFIX)/fuzz-ca >/dev/null
	cc -std=c11 -g -Wall -Wextra -Werror -fsanitize=address -fno-omit-frame-pointer -IShell/CFrontDoor/include \
		Shell/CFrontDoor/*.c Tests/Fuzz/FuzzFrontDoor.c Tests/Fuzz/replay.c \
		-lssl -lcrypto -lnghttp2 -lhttp_parser -o $(PREFIX)/fuzz_findings
	CX_FUZZ_CA=$(PREFIX)/fuzz-ca ASAN_OPTIONS=detect_leaks=1 $(PREFIX)/fuzz_findings $(FUZZ_FINDINGS)

# The transport's own C tests under AddressSanitizer (Tests/CFrontDoor), each with the
# transport's other files linked beside it: the table of answers given later against a
# model, a streamed piece framed where it lies, and the ops and streams the door keeps to
# reuse, bounded and freed.
TRANSPORT_TESTS := later_index_test chunk_in_place_test spares_test
transport-test: deps
	mkdir -p $(PREFIX)
	for test in $(TRANSPORT_TESTS); do \
		cc -std=c11 -g -Wall -Wextra -Werror -fsanitize=address -fno-omit-frame-pointer -IShell/CFrontDoor/include \
			-IShell/CFrontDoor Tests/CFrontDoor/$$test.c $(filter-out Shell/CFrontDoor/later.c,$(wildcard Shell/CFrontDoor/*.c)) \
			-lssl -lcrypto -lnghttp2 -lhttp_parser -o $(PREFIX)/$$test \
		&& ASAN_OPTIONS=detect_leaks=1 $(PREFIX)/$$test || exit 1; \
	done

# Every performance figure, one JSON line each, in release mode (Docs/Performance.md).
# The instruction counts run both servers under valgrind's callgrind.
bench: deps
	@command -v valgrind >/dev/null || { echo "installing: valgrind"; $(SUDO) apt-get update && $(SUDO) apt-get install -y valgrind; }
	$(SWIFT) build -c release --product cxshell
	$(SWIFT) build -c release --product cxbench
	.build/release/cxbench

# How the host and shell figures change from one core to two (taskset); the subscriber
# counts (1, 8, 64) are in every run of `cxbench host`.
bench-scaling: deps
	$(SWIFT) build -c release --product cxshell
	$(SWIFT) build -c release --product cxbench
	taskset -c 0 .build/release/cxbench host shell
	taskset -c 0,1 .build/release/cxbench host shell

# libFuzzer over the JSON layer, APNs validation + payload → event, FCM validation and
# the shell's line handling, FUZZ_SECONDS each, from a corpus built from the scenarios.
FUZZ_SECONDS ?= 60
fuzz: deps
	Tests/Fuzz/run $(FUZZ_SECONDS)

# The host and push tests (with the concurrency stress test) and the front door under
# load (the shell it starts is built with the same sanitizer) under ThreadSanitizer,
# and every Swift test under AddressSanitizer.
# A run that stops making progress is ended after SANITIZE_MINUTES, not left to
# CI's own limit.
SANITIZE_MINUTES ?= 30
sanitize: deps
	timeout $(SANITIZE_MINUTES)m $(SWIFT) test --sanitize=thread --scratch-path .build/tsan --filter "CXHostTests|PushPluginTests|FrontDoorTests|RequestHandoffTests|HandoffRingTests|InspectorTests|ChaosTests|AppwriteChannelTests|AppwriteServerTests"
	LSAN_OPTIONS=suppressions=$(abspath Tests/lsan.supp) timeout $(SANITIZE_MINUTES)m $(SWIFT) test --sanitize=address --scratch-path .build/asan

# The model-based random tests at length: SOAK_SEQUENCES seeded single-device
# sequences, and a third as many worlds of 2-3 devices, on the reference model and
# the real shell side by side (make test plays 300 and 100).
SOAK_SEQUENCES ?= 10000
soak: deps
	SOAK_SEQUENCES=$(SOAK_SEQUENCES) $(SWIFT) test --filter ModelBasedTests

# cxshell as a service people run: a release build, installed under PREFIX/bin.
install: deps
	$(SWIFT) build -c release --product cxshell -Xswiftc -warnings-as-errors
	mkdir -p $(PREFIX)/bin
	install -m 0755 .build/release/cxshell $(PREFIX)/bin/cxshell

# cxshell for machines without Swift (Docs/Install.md): build/cxshell_<version>_amd64.deb
# and build/cxshell-<version>-linux-x86_64.tar.gz, the Swift runtime linked in statically.
package: deps
	Packaging/package

# The .deb installed and used in a bare Debian bookworm made with debootstrap (root only).
package-test: package python-deps
	@command -v debootstrap >/dev/null || { $(SUDO) apt-get update && $(SUDO) apt-get install -y debootstrap; }
	$(SUDO) Packaging/package-test
