//! The cx crate links libcx.so from its directory; this adds the rpath for this
//! package's own binaries (its tests), which link arguments of a dependency do not reach.
fn main() {
    if let Ok(directory) = std::env::var("DEP_CX_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", directory);
    }
}
