//! Plugins written in Rust (cx.h's plugin side): a type implementing [`Plugin`],
//! registered with [`Registrar::register`], answers calls through [`Answer`] and feeds
//! streams through [`Emitter`], from any thread. A plugin library that `cxshell --plugin`
//! loads declares its entry with [`export_plugin!`] and builds with the crate's `plugin`
//! feature, so the cx_* functions stay undefined and the shell provides them.

use crate::{bytes, ffi, Error};
use std::os::raw::{c_char, c_int, c_void};

/// What the host asks of a plugin. Every method may run on any thread, and never while
/// the host holds a lock of its own.
pub trait Plugin: Send + Sync + 'static {
    /// One call or notify for an op the plugin registered: answer once, now or later.
    fn call(&self, op: &str, input: &str, answer: Answer);
    /// Starts a stream the plugin registered; emit until it is stopped or you end it.
    fn start_stream(&self, _stream: &str, _input: &str, emitter: Emitter) {
        let _ = emitter.end();
    }
    /// The core ended the stream of the emitter with this id: drop that emitter.
    fn stop_stream(&self, _emitter: EmitterId) {}
}

/// A call's answer. Dropped without being sent, it answers `ok: false` itself.
pub struct Answer {
    raw: *mut ffi::cx_reply,
}

// SAFETY: cx.h lets a reply be answered from any thread.
unsafe impl Send for Answer {}

impl Answer {
    /// Answers the call (once: this consumes the answer).
    pub fn send(mut self, ok: bool, text: &str) -> Result<(), Error> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        // SAFETY: `raw` is the live reply handle the host gave `call`; cx_reply_send
        // releases it whatever it returns, and it is never used again (null above).
        let status = unsafe { ffi::cx_reply_send(raw, ok, text.as_ptr() as *const c_char, text.len()) };
        crate::check(status, "cx_reply_send")
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            let text = "the plugin dropped its answer without sending it";
            // SAFETY: as in `send`: the handle is live and used this once.
            unsafe { ffi::cx_reply_send(self.raw, false, text.as_ptr() as *const c_char, text.len()) };
        }
    }
}

/// Names one stream's emitter, as `stop_stream` tells which stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EmitterId(usize);

/// One stream's emitter; released when dropped.
pub struct Emitter {
    raw: *mut ffi::cx_emitter,
}

// SAFETY: cx.h lets an emitter be used from any thread.
unsafe impl Send for Emitter {}
// SAFETY: as for Send; the host serializes what it must.
unsafe impl Sync for Emitter {}

impl Emitter {
    pub fn id(&self) -> EmitterId {
        EmitterId(self.raw as usize)
    }

    /// One item; an error (`CX_ERR_INACTIVE`) once the stream has ended.
    pub fn emit(&self, ok: bool, text: &str) -> Result<(), Error> {
        // SAFETY: `raw` is live until Drop releases it.
        crate::check(unsafe { ffi::cx_emit(self.raw, ok, text.as_ptr() as *const c_char, text.len()) }, "cx_emit")
    }

    /// Ends the stream: the core gets one end.
    pub fn end(&self) -> Result<(), Error> {
        // SAFETY: as for `emit`.
        crate::check(unsafe { ffi::cx_end(self.raw) }, "cx_end")
    }
}

impl Drop for Emitter {
    fn drop(&mut self) {
        // SAFETY: the handle is ours until this one release (cx.h: "yours until you pass
        // it to cx_emitter_release").
        unsafe { ffi::cx_emitter_release(self.raw) };
    }
}

/// A host a plugin library's entry registers its plugins on.
pub struct Registrar {
    host: *mut ffi::cx_host,
}

impl Registrar {
    /// Wraps the handle `cx_plugin_entry` was given. Used by `export_plugin!`.
    #[doc(hidden)]
    pub fn from_entry(host: *mut c_void) -> Registrar {
        Registrar { host: host as *mut ffi::cx_host }
    }

    /// Registers `plugin` under `name`, offering `ops` and `streams`.
    pub fn register<P: Plugin>(&self, name: &str, ops: &[&str], streams: &[&str], plugin: P) -> Result<(), Error> {
        let strings = |names: &[&str]| -> Vec<ffi::cx_str> {
            names.iter().map(|n| ffi::cx_str { ptr: n.as_ptr() as *const c_char, len: n.len() }).collect()
        };
        let (ops, streams) = (strings(ops), strings(streams));
        let context: *mut Box<dyn Plugin> = Box::into_raw(Box::new(Box::new(plugin)));
        let table = ffi::cx_plugin {
            context: context as *mut c_void,
            call: Some(call_trampoline),
            start_stream: Some(start_trampoline),
            stop_stream: Some(stop_trampoline),
            release: Some(release_trampoline),
        };
        // SAFETY: the names are copied before this returns; the table's context stays
        // allocated until the host calls `release` once (or is freed below on refusal).
        let status = unsafe {
            ffi::cx_register_plugin(
                self.host,
                name.as_ptr() as *const c_char,
                name.len(),
                ops.as_ptr(),
                ops.len(),
                streams.as_ptr(),
                streams.len(),
                &table,
            )
        };
        if status != ffi::CX_OK {
            // SAFETY: refused, so the host keeps no reference to the context.
            drop(unsafe { Box::from_raw(context) });
        }
        crate::check(status, "cx_register_plugin")
    }
}

/// The plugin behind a table's context.
///
/// SAFETY (for callers): `context` is the `Box<Box<dyn Plugin>>` `register` made, which
/// lives until `release_trampoline` (the host calls nothing after `release`).
unsafe fn plugin<'a>(context: *mut c_void) -> &'a dyn Plugin {
    &**(context as *const Box<dyn Plugin>)
}

extern "C" fn call_trampoline(
    context: *mut c_void,
    op: *const c_char,
    op_len: usize,
    input: *const c_char,
    input_len: usize,
    reply: *mut ffi::cx_reply,
) -> c_int {
    // SAFETY: see `plugin`; the strings are valid during this call (cx.h).
    unsafe {
        let op = String::from_utf8_lossy(bytes(op, op_len));
        let input = String::from_utf8_lossy(bytes(input, input_len));
        plugin(context).call(&op, &input, Answer { raw: reply });
    }
    0
}

extern "C" fn start_trampoline(
    context: *mut c_void,
    stream: *const c_char,
    stream_len: usize,
    input: *const c_char,
    input_len: usize,
    emitter: *mut ffi::cx_emitter,
) {
    // SAFETY: as for `call_trampoline`; the emitter handle is the plugin's until released.
    unsafe {
        let stream = String::from_utf8_lossy(bytes(stream, stream_len));
        let input = String::from_utf8_lossy(bytes(input, input_len));
        plugin(context).start_stream(&stream, &input, Emitter { raw: emitter });
    }
}

extern "C" fn stop_trampoline(context: *mut c_void, emitter: *mut ffi::cx_emitter) {
    // SAFETY: see `plugin`.
    unsafe { plugin(context).stop_stream(EmitterId(emitter as usize)) };
}

extern "C" fn release_trampoline(context: *mut c_void) {
    // SAFETY: called once, last: the box `register` made is freed here.
    drop(unsafe { Box::from_raw(context as *mut Box<dyn Plugin>) });
}

/// Declares a plugin library's `cx_plugin_entry` (cx.h): `setup` registers the
/// library's plugins on each app host. Another ABI version is refused for you.
///
/// ```text
/// cx::export_plugin!(|host: &cx::plugin::Registrar| host.register("kv", &["get", "set"], &["changes"], Store::new()));
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($setup:expr) => {
        #[no_mangle]
        pub extern "C" fn cx_plugin_entry(host: *mut ::std::os::raw::c_void, abi_version: u32) -> i32 {
            if abi_version != $crate::ABI_VERSION {
                return $crate::plugin::INVALID_ARGUMENT;
            }
            let registrar = $crate::plugin::Registrar::from_entry(host);
            let setup: fn(&$crate::plugin::Registrar) -> Result<(), $crate::Error> = $setup;
            match setup(&registrar) {
                Ok(()) => 0,
                Err(error) => error.status,
            }
        }
    };
}

/// cx.h's CX_ERR_INVALID_ARGUMENT, what an entry answers another ABI version.
pub const INVALID_ARGUMENT: i32 = ffi::CX_ERR_INVALID_ARGUMENT;
