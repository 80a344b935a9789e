//! The Rust plugin loaded into a real cxshell (`--plugin librustkv.so`), beside the C
//! plugin, reached through the line protocol like a built-in one.
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// `cxshell serve` with `plugins` loaded and `lines` on its input: status, output, errors.
fn serve(plugins: &[PathBuf], lines: &[&str]) -> (i32, Vec<String>, String) {
    let shell = std::env::var("CXSHELL").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.build/debug/cxshell")
    });
    let mut command = Command::new(shell);
    command.arg("serve");
    for plugin in plugins {
        command.arg("--plugin").arg(plugin);
    }
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("cxshell");
    let mut input = child.stdin.take().unwrap();
    for line in lines {
        writeln!(input, "{}", line).unwrap();
    }
    drop(input);
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).lines().map(String::from).collect();
    (output.status.code().unwrap_or(-1), text, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// This crate's library, beside the test binary's directory (target/debug). `cargo test`
/// builds a cdylib only for `cargo build`, so the test builds it (offline, into the same
/// target directory) when a fresh checkout has none yet.
fn this_library() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let library = deps.parent().unwrap().join("librustkv.so");
    if !library.exists() {
        let target = deps.parent().unwrap().parent().unwrap();
        let built = Command::new(env!("CARGO"))
            .args(["build", "--offline", "--lib", "--manifest-path"])
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target)
            .status()
            .expect("cargo");
        assert!(built.success(), "cargo build of the plugin's library failed");
    }
    library
}

fn c_library() -> PathBuf {
    std::env::var("CX_LIB_DIR").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build/lib")
    }).join("libkvstore.so")
}

#[test]
fn the_store_answers_and_streams_its_changes_in_each_app() {
    let (status, lines, errors) = serve(
        &[this_library(), c_library()],
        &[
            r#"{"op":"device","platform":"android"}"#,
            r#"{"op":"launch"}"#,
            r#"{"op":"subscribe","key":"w","plugin":"store","stream":"changes","input":""}"#,
            r#"{"op":"call","plugin":"store","method":"set","input":"{\"key\":\"a\",\"value\":\"1\"}"}"#,
            r#"{"op":"call","plugin":"store","method":"get","input":"{\"key\":\"a\"}"}"#,
            r#"{"op":"call","plugin":"store","method":"set","input":"{\"value\":\"1\"}"}"#,
            r#"{"op":"call","plugin":"kv","method":"get","input":"{\"key\":\"a\"}"}"#,
            r#"{"op":"unsubscribe","key":"w"}"#,
            r#"{"op":"call","plugin":"store","method":"set","input":"{\"key\":\"a\",\"value\":\"2\"}"}"#,
        ],
    );
    assert_eq!(status, 0, "{}", errors);
    assert_eq!(lines[3], r#"{"delivery":"w","device":"d1","ok":true,"output":"{\"key\":\"a\",\"value\":\"1\"}"}"#);
    assert_eq!(lines[4], r#"{"reply":null,"ok":true,"output":"{\"key\":\"a\",\"previous\":null}"}"#);
    assert_eq!(lines[5], r#"{"reply":null,"ok":true,"output":"{\"key\":\"a\",\"value\":\"1\"}"}"#);
    assert!(lines[6].contains(r#""ok":false"#) && lines[6].contains("needs \\\"key\\\""), "{}", lines[6]);
    // The C plugin in the same app: its own store.
    assert_eq!(lines[7], r#"{"reply":null,"ok":true,"output":"{\"key\":\"a\",\"value\":null}"}"#);
    // After the unsubscribe, a set delivers nothing: its reply is the next line.
    assert_eq!(lines[9], r#"{"reply":null,"ok":true,"output":"{\"key\":\"a\",\"previous\":\"1\"}"}"#);
    assert_eq!(lines.len(), 10);
}

#[test]
fn loading_it_twice_is_refused_naming_the_file() {
    let library = this_library();
    let (status, lines, errors) = serve(&[library.clone(), library.clone()], &[r#"{"op":"device","platform":"ios"}"#]);
    assert_eq!(status, 2);
    assert!(lines.is_empty());
    assert!(errors.contains(&format!("{} registers a plugin under a name the shell already has", library.display())), "{}", errors);
}
