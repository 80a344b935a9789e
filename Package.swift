// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "cx",
    products: [
        .library(name: "CXHost", targets: ["CXHost"]),
        .library(name: "OrderedJSON", targets: ["OrderedJSON"]),
        .library(name: "EchoPlugin", targets: ["EchoPlugin"]),
        .library(name: "PushPlugin", targets: ["PushPlugin"]),
        .executable(name: "cxshell", targets: ["cxshell"]),
        // The C ABI (cx.h) as a shared library an outside C or Rust program links.
        .library(name: "cx", type: .dynamic, targets: ["CX"]),
        // The headless world of simulated devices (cx_device.h), for a core's tests only.
        .library(name: "cxdevice", type: .dynamic, targets: ["CXDevice"]),
    ],
    targets: [
        // jansson from the system (Debian: libjansson-dev), found through pkg-config.
        .systemLibrary(
            name: "CJansson",
            path: "Sources/CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        // OpenSSL from the system (Debian: libssl-dev): TLS, certificates, signatures.
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // nghttp2 from the system (Debian: libnghttp2-dev): HTTP/2 framing and flow control.
        .systemLibrary(
            name: "CNGHTTP2",
            path: "Sources/CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        // http-parser from the system (Debian: libhttp-parser-dev; it ships no .pc file).
        .systemLibrary(name: "CHTTPParser", path: "Sources/CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        // libmosquitto from the system (Debian: libmosquitto-dev): the MQTT client.
        .systemLibrary(
            name: "CMosquitto",
            path: "Sources/CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // jansson's allocations during a parse, from a block each thread reuses.
        .target(name: "CJanssonArena", dependencies: ["CJansson"], path: "Sources/CJanssonArena"),
        .target(name: "CByteScan", path: "Sources/CByteScan"),
        .target(name: "OrderedJSON", dependencies: ["CJansson", "CJanssonArena", "CByteScan"], path: "Sources/OrderedJSON"),
        .target(name: "CXHost", path: "Sources/CXHost"),
        .target(name: "CCX", path: "Sources/CCX"),
        .target(name: "CArguments", dependencies: ["CCX", "CXHost"], path: "Sources/CArguments"),
        .target(name: "CX", dependencies: ["CCX", "CArguments", "CXHost"], path: "Sources/CX"),
        .target(name: "CCXDevice", dependencies: ["CCX"], path: "Sources/CCXDevice"),
        .target(
            name: "CXDevice", dependencies: ["CCX", "CCXDevice", "CArguments", "CXHost", "ShellKit", "OrderedJSON"],
            path: "Sources/CXDevice"),
        .target(name: "EchoPlugin", dependencies: ["CXHost"], path: "Plugins/Echo"),
        .target(name: "PushPlugin", dependencies: ["CXHost", "OrderedJSON"], path: "Plugins/Push"),
        .target(name: "PushServices", dependencies: ["OrderedJSON", "HTTPMessage"], path: "Shell/PushServices"),
        .target(
            name: "SimulatedDevice",
            dependencies: ["CXHost", "PushPlugin", "EchoPlugin", "PushServices", "OrderedJSON", "MQTTClient"],
            path: "Shell/SimulatedDevice"),
        .target(
            name: "ShellKit",
            dependencies: [
                "CXHost", "PushPlugin", "PushServices", "SimulatedDevice", "OrderedJSON", "HTTPMessage", "Credentials",
                "MQTTClient",
            ],
            path: "Shell/ShellKit"),
        .target(name: "CTestCA", dependencies: ["COpenSSL"], path: "Shell/CTestCA"),
        .target(name: "HTTPMessage", path: "Shell/HTTPMessage"),
        .target(name: "Loopback", path: "Shell/Loopback"),
        // libmosquitto's connect without the socket pair it opens for a loop of its own.
        .target(name: "CMosquittoConnect", dependencies: ["CMosquitto"], path: "Shell/CMosquittoConnect"),
        .target(
            name: "MQTTClient", dependencies: ["CMosquitto", "CMosquittoConnect", "CXHost", "Loopback", "OrderedJSON"],
            path: "Shell/MQTTClient"),
        .target(name: "Credentials", dependencies: ["COpenSSL", "OrderedJSON"], path: "Shell/Credentials"),
        .target(
            name: "CFrontDoor", dependencies: ["COpenSSL", "CNGHTTP2", "CHTTPParser"], path: "Shell/CFrontDoor",
            // http-parser has no .pc file, and a C target does not autolink its module map.
            linkerSettings: [.linkedLibrary("http_parser")]),
        .target(
            name: "FrontDoor", dependencies: ["CTestCA", "CFrontDoor", "HTTPMessage", "CXHost"],
            path: "Shell/FrontDoor"),
        // Plugin libraries loaded with --plugin (dlopen): they call cx.h's functions,
        // which cxshell provides, so its symbols are exported to them.
        .target(name: "PluginLoader", dependencies: ["CCX", "CX", "CXHost"], path: "Shell/PluginLoader"),
        .executableTarget(
            name: "cxshell",
            dependencies: ["ShellKit", "FrontDoor", "HTTPMessage", "PluginLoader", "CXHost", "OrderedJSON"],
            path: "Shell/cxshell",
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic"])]),
        .executableTarget(
            name: "cxbench",
            dependencies: [
                "CXHost", "PushPlugin", "OrderedJSON", "CJansson", "ShellKit", "Loopback", "Credentials", "HTTPMessage",
                "MQTTClient",
            ],
            path: "Tests/Benchmarks/cxbench"),
        .testTarget(
            name: "OrderedJSONTests", dependencies: ["OrderedJSON", "CJansson", "CJanssonArena"],
            path: "Tests/OrderedJSONTests"),
        .testTarget(
            name: "PushPluginTests", dependencies: ["PushPlugin", "CXHost", "OrderedJSON"],
            path: "Tests/PushPluginTests"),
        .testTarget(
            name: "ShellTests",
            dependencies: [
                "ShellKit", "SimulatedDevice", "PushServices", "PushPlugin", "CXHost", "OrderedJSON", "FrontDoor",
                "Credentials", "COpenSSL", "MQTTClient", "CMosquittoConnect", "CNGHTTP2", "HTTPMessage",
            ],
            path: "Tests/ShellTests"),
        .testTarget(name: "CXHostTests", dependencies: ["CXHost", "EchoPlugin"], path: "Tests/CXHostTests"),
        .testTarget(name: "CXTests", dependencies: ["CX", "CCX"], path: "Tests/CXTests"),
    ],
    swiftLanguageModes: [.v6]
)
