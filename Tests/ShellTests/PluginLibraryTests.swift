import Foundation
import Testing

/// `cxshell --plugin LIBRARY` (cx.h's `cx_plugin_entry`): a real shared library, built
/// here with `cc` from the repository's C plugin or from a few lines, loaded into a real
/// `cxshell`. The library leaves the cx_* functions undefined: the shell provides them.
@Suite struct PluginLibraryTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where this test's libraries and scenarios are written; gone when the test ends.
    let scratch = ScratchDirectory("cx-plugins")

    /// Builds a shared library from C files and source text; its path.
    func library(_ name: String, files: [String] = [], source: String? = nil) throws -> String {
        let directory = scratch.url.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var inputs = files.map { Self.root.appendingPathComponent($0).path }
        if let source {
            let file = directory.appendingPathComponent("\(name).c")
            try source.write(to: file, atomically: true, encoding: .utf8)
            inputs.append(file.path)
        }
        let output = directory.appendingPathComponent("lib\(name).so").path
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments =
            ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared"]
            + ["-I", Self.root.appendingPathComponent("Sources/CCX/include").path]
            + ["-I", Self.root.appendingPathComponent("Plugins/KVStore").path] + inputs + ["-ljansson", "-o", output]
        try cc.run()
        cc.waitUntilExit()
        #expect(cc.terminationStatus == 0)
        return output
    }

    func kvstore() throws -> String {
        try library("kvstore", files: ["Plugins/KVStore/kvstore.c", "Plugins/KVStore/kvstore_entry.c"])
    }

    /// `cxshell ARGUMENTS` with `lines` on standard input: its status, output and errors.
    func shell(_ arguments: [String], _ lines: [String] = []) throws -> (status: Int32, output: [String], error: String)
    {
        let process = Process()
        process.executableURL = ServeProcessTests.executable
        process.arguments = arguments
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        input.fileHandleForWriting.write(Data(lines.map { $0 + "\n" }.joined().utf8))
        try input.fileHandleForWriting.close()
        let written = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: written, as: UTF8.self).split(separator: "\n").map(String.init),
            String(decoding: complaint, as: UTF8.self)
        )
    }

    @Test func theCPluginServesEveryAppLikeABuiltInOne() throws {
        let served = try shell(
            ["serve", "--plugin", try kvstore()],
            [
                #"{"op":"device","platform":"ios"}"#, #"{"op":"launch"}"#,
                #"{"op":"subscribe","key":"c","plugin":"kv","stream":"changes","input":""}"#,
                #"{"op":"call","plugin":"kv","method":"set","input":"{\"key\":\"a\",\"value\":1}"}"#,
                #"{"op":"device","platform":"android"}"#, #"{"op":"launch"}"#,
                #"{"op":"call","plugin":"kv","method":"get","input":"{\"key\":\"a\"}"}"#,
                #"{"op":"call","plugin":"kv","method":"drop","input":""}"#,
            ])
        #expect(served.status == 0, "\(served.error)")
        #expect(served.output[2] == #"{"reply":null,"ok":true}"#)
        #expect(served.output[3] == #"{"delivery":"c","device":"d1","ok":true,"output":"{\"key\":\"a\",\"value\":1}"}"#)
        // Each app host has its own store: d2's is empty.
        #expect(served.output[7] == #"{"reply":null,"ok":true,"output":"{\"key\":\"a\",\"value\":null}"}"#)
        // The host answers an op the plugin does not have, naming what it has.
        #expect(served.output[8].contains(#""ok":false"#) && served.output[8].contains("get, set"))
    }

    @Test func aScenarioReachesALoadedPluginToo() throws {
        let directory = scratch.url.appendingPathComponent("scenario")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scenario = directory.appendingPathComponent("kv.cxs")
        try """
        device {"platform":"android"}
        launch
        call {"plugin":"kv","method":"set","input":"{\\"key\\":\\"k\\",\\"value\\":\\"v\\"}"}
        < reply {"ok":true}

        """.write(to: scenario, atomically: true, encoding: .utf8)
        let tested = try shell(["test", "--plugin", try kvstore(), scenario.path])
        #expect(tested.status == 0 && tested.output.last == "Scenarios: 1 passed, 0 failed", "\(tested)")
        let without = try shell(["test", scenario.path])
        #expect(without.status == 1)  // no kv plugin: the host answers ok false
    }

    @Test func aLibraryIsRefusedAtStartWithASentenceNamingIt() throws {
        let noEntry = try library("noentry", source: "int cx_something_else(void) { return 0; }\n")
        let otherABI = try library(
            "otherabi",
            source: """
                #include "cx.h"
                cx_status cx_plugin_entry(cx_host *host, uint32_t abi_version) {
                    (void)host;
                    return abi_version == 2 ? CX_OK : CX_ERR_INVALID_ARGUMENT;
                }

                """)
        let clash = try library(
            "clash",
            source: """
                #include "cx.h"
                static int call(void *c, const char *o, size_t ol, const char *i, size_t il, cx_reply *r) {
                    (void)c, (void)o, (void)ol, (void)i, (void)il;
                    cx_reply_send(r, true, "", 0);
                    return 0;
                }
                cx_status cx_plugin_entry(cx_host *host, uint32_t abi_version) {
                    (void)abi_version;
                    cx_str ops[] = {{"x", 1}};
                    cx_plugin plugin = {.call = call};
                    return cx_register_plugin(host, "push", 4, ops, 1, NULL, 0, &plugin);
                }

                """)
        let kv = try kvstore()
        let cases: [([String], String)] = [
            (["/nowhere/libnothing.so"], "/nowhere/libnothing.so cannot be loaded"),
            ([noEntry], "\(noEntry) has no cx_plugin_entry"),
            ([otherABI], "\(otherABI) refused ABI version 1 (CX_ERR_INVALID_ARGUMENT)"),
            ([clash], "\(clash) registers a plugin under a name the shell already has (push, echo)"),
            ([kv, kv], "\(kv) registers a plugin under a name the shell already has (push, echo, kv)"),
        ]
        for (libraries, words) in cases {
            for command in ["serve", "test"] {
                let arguments =
                    [command] + libraries.flatMap { ["--plugin", $0] } + (command == "test" ? ["x.cxs"] : [])
                let refused = try shell(arguments, [#"{"op":"device","platform":"ios"}"#])
                #expect(refused.status == 2, "\(arguments)")
                #expect(refused.output.isEmpty)  // nothing was served
                #expect(refused.error.contains(words), "\(refused.error)")
            }
        }
    }
}
