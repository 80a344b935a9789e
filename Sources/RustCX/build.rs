//! Links libcx.so (and libcxdevice.so with the `world` feature) from `CX_LIB_DIR`, by
//! default the project's `build/lib` (`make lib` puts them there), with an rpath so
//! tests run without LD_LIBRARY_PATH; with the `plugin` feature, nothing.
use std::env;
use std::path::PathBuf;

fn main() {
    let directory = env::var("CX_LIB_DIR").map(PathBuf::from).unwrap_or_else(|_| {
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../build/lib")
    });
    let directory = directory.canonicalize().unwrap_or(directory);
    println!("cargo:rerun-if-env-changed=CX_LIB_DIR");
    println!("cargo:lib_dir={}", directory.display());
    if env::var_os("CARGO_FEATURE_PLUGIN").is_some() {
        return; // the loading process provides cx_*
    }
    println!("cargo:rustc-link-search=native={}", directory.display());
    println!("cargo:rustc-link-lib=dylib=cx");
    if env::var_os("CARGO_FEATURE_WORLD").is_some() {
        println!("cargo:rustc-link-lib=dylib=cxdevice");
    }
    // Link arguments reach only this package's own targets: dependents add the rpath
    // from `lib_dir` above (DEP_CX_LIB_DIR in their build scripts).
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", directory.display());
}
