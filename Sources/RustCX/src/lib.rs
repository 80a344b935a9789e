//! A safe Rust API over `cx.h`, the cx plugin host, for app cores written the Mobiler way:
//! the core asks a plugin with a tag (`cx.plugin("push", "register", "", Msg::PushToken)`)
//! and the answer comes back into its update loop as `(tag, Reply)`.
//!
//! Answers arrive on a channel (`std::sync::mpsc`), not through a callback: a Mobiler
//! core's `update(Msg)` runs on the core's own thread, one message at a time, and a
//! channel hands every answer and stream item to that thread in the order the host
//! delivered them, without the core's code ever running on the host's delivery thread.
//!
//! The [`Host`] trait is what a core is written against. [`Cx`] is the real host (libcx);
//! with the `world` feature, [`world::App`] is a simulated phone's app in the headless
//! world of `cx_device.h`, so a core's own tests run the push contract without a phone.
//! [`plugin`] is the other side: plugins written in Rust, and libraries `cxshell
//! --plugin` loads (the `plugin` feature).

mod ffi;
pub mod json;
pub mod plugin;
#[cfg(feature = "world")]
pub mod world;

use std::collections::HashMap;
use std::ffi::CStr;
use std::fmt;
use std::os::raw::{c_char, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;

/// The ABI version of the cx.h this crate speaks (CX_ABI_VERSION).
pub const ABI_VERSION: u32 = ffi::CX_ABI_VERSION;

/// A plugin's answer to a call, or one item of a stream. `end` is true for the one
/// delivery that says a stream ended because the plugin ended it (its `text` is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub ok: bool,
    pub text: String,
    pub end: bool,
}

/// A request the host refused, with cx.h's status and its name (`CX_ERR_SHUT_DOWN`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: i32,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl Error {
    fn from_status(status: ffi::cx_status, during: &str) -> Error {
        // SAFETY: cx_status_name never returns NULL and points to static storage (cx.h).
        let name = unsafe { CStr::from_ptr(ffi::cx_status_name(status)) }.to_string_lossy().into_owned();
        Error { status, message: format!("{} failed: {}", during, name) }
    }
}

/// What a core asks of its host (host.md): one-shot calls, notifies and keyed
/// streams. Answers and items come back as `(tag, Reply)` on the receiver the host
/// was made with.
pub trait Host<T: Clone> {
    /// A one-shot call (H-1), answered exactly once with `tag`.
    fn plugin(&self, plugin: &str, op: &str, input: &str, tag: T) -> Result<(), Error>;
    /// A call whose answer is not wanted (H-2).
    fn notify(&self, plugin: &str, op: &str, input: &str) -> Result<(), Error>;
    /// A stream under `key` (H-3, H-4): each item comes with `tag`. A key in use is
    /// replaced.
    fn subscribe(&self, key: &str, plugin: &str, stream: &str, input: &str, tag: T) -> Result<(), Error>;
    /// Ends the stream under `key`: nothing more arrives on it. False when there was none.
    fn unsubscribe(&self, key: &str) -> Result<bool, Error>;
}

/// Where answers go: the tags waiting for them, and the core's channel. Shared by the
/// host's delivery thread (through cx.h's context pointer) and the core's calls.
struct Routes<T> {
    calls: Mutex<HashMap<u64, T>>,
    streams: Mutex<HashMap<Vec<u8>, T>>,
    // A Mutex, so Routes is Sync on every Rust that has Sender !Sync.
    sender: Mutex<Sender<(T, Reply)>>,
}

impl<T: Clone> Routes<T> {
    fn new() -> (Routes<T>, Receiver<(T, Reply)>) {
        let (sender, receiver) = channel();
        let routes = Routes {
            calls: Mutex::new(HashMap::new()),
            streams: Mutex::new(HashMap::new()),
            sender: Mutex::new(sender),
        };
        (routes, receiver)
    }

    fn send(&self, tag: T, reply: Reply) {
        // A core that dropped its receiver wants nothing more: the send's error is moot.
        if let Ok(sender) = self.sender.lock() {
            let _ = sender.send((tag, reply));
        }
    }

    /// A delivery of cx.h's three kinds, routed to the tag it was asked with.
    fn deliver(&self, kind: i32, request_id: u64, key: &[u8], ok: bool, output: &[u8]) {
        let text = String::from_utf8_lossy(output).into_owned();
        let tag = match kind {
            ffi::CX_DELIVERY_RESPONSE => self.calls.lock().ok().and_then(|mut calls| calls.remove(&request_id)),
            ffi::CX_DELIVERY_ITEM => self.streams.lock().ok().and_then(|streams| streams.get(key).cloned()),
            ffi::CX_DELIVERY_END => self.streams.lock().ok().and_then(|mut streams| streams.remove(key)),
            _ => None,
        };
        if let Some(tag) = tag {
            self.send(tag, Reply { ok, text, end: kind == ffi::CX_DELIVERY_END });
        }
    }
}

/// Bytes the host passed to a callback, copied out of its storage.
///
/// SAFETY (for callers): `pointer` is NULL with `len` 0, or points to `len` readable
/// bytes that stay valid for the call (cx.h: valid until the callback returns).
unsafe fn bytes<'a>(pointer: *const c_char, len: usize) -> &'a [u8] {
    if pointer.is_null() || len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(pointer as *const u8, len)
    }
}

/// The real host (libcx): plugins registered with it answer the core's requests.
pub struct Cx<T> {
    host: *mut ffi::cx_host,
    routes: *mut Routes<T>,
    next_id: AtomicU64,
}

// SAFETY: cx.h lets any thread call into a host; the routes are behind Mutexes and the
// tags they hold are Send.
unsafe impl<T: Send> Send for Cx<T> {}
// SAFETY: as for Send: every method takes &self and the host serializes what it must.
unsafe impl<T: Send> Sync for Cx<T> {}

extern "C" fn deliver_to_routes<T: Clone>(context: *mut c_void, delivery: *const ffi::cx_delivery) {
    // SAFETY: `context` is the Routes box `Cx::new` gave cx_host_create; `Cx::drop`
    // destroys the host (after which no callback runs) before it frees the box.
    // `delivery` and its strings are valid until this returns (cx.h).
    unsafe {
        let routes = &*(context as *const Routes<T>);
        let delivery = &*delivery;
        routes.deliver(
            delivery.kind,
            delivery.request_id,
            bytes(delivery.key, delivery.key_len),
            delivery.ok,
            bytes(delivery.output, delivery.output_len),
        );
    }
}

impl<T: Clone + Send + 'static> Cx<T> {
    /// A host with no plugins yet, and the receiver its answers arrive on. Refuses a
    /// library of another ABI version.
    pub fn new() -> Result<(Cx<T>, Receiver<(T, Reply)>), Error> {
        // SAFETY: no arguments; it reads a constant.
        let version = unsafe { ffi::cx_abi_version() };
        if version != ffi::CX_ABI_VERSION {
            return Err(Error {
                status: -1,
                message: format!("libcx has ABI version {}, this crate speaks {}", version, ffi::CX_ABI_VERSION),
            });
        }
        let (routes, receiver) = Routes::new();
        let routes = Box::into_raw(Box::new(routes));
        let mut host = std::ptr::null_mut();
        // SAFETY: the callback matches cx_delivery_fn; `routes` stays allocated until
        // Drop, after the host is destroyed; `host` is a valid out-pointer.
        let status = unsafe { ffi::cx_host_create(deliver_to_routes::<T>, routes as *mut c_void, &mut host) };
        if status != ffi::CX_OK {
            // SAFETY: the host was not made, so nothing else refers to `routes`.
            drop(unsafe { Box::from_raw(routes) });
            return Err(Error::from_status(status, "cx_host_create"));
        }
        Ok((Cx { host, routes, next_id: AtomicU64::new(1) }, receiver))
    }

    /// The raw handle, for registering plugins written in C (`cx_register_plugin`).
    pub fn raw_host(&self) -> *mut c_void {
        self.host as *mut c_void
    }

    /// Blocks until every request so far was handled and its answers are on the channel.
    pub fn wait_idle(&self) -> Result<(), Error> {
        // SAFETY: `host` is live until Drop.
        check(unsafe { ffi::cx_wait_idle(self.host) }, "cx_wait_idle")
    }

    fn routes(&self) -> &Routes<T> {
        // SAFETY: `routes` is the box made in `new`, freed only in Drop.
        unsafe { &*self.routes }
    }
}

fn check(status: ffi::cx_status, during: &str) -> Result<(), Error> {
    if status == ffi::CX_OK {
        Ok(())
    } else {
        Err(Error::from_status(status, during))
    }
}

impl<T: Clone + Send + 'static> Host<T> for Cx<T> {
    fn plugin(&self, plugin: &str, op: &str, input: &str, tag: T) -> Result<(), Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // The tag waits before the call: its answer may come before cx_call returns.
        if let Ok(mut calls) = self.routes().calls.lock() {
            calls.insert(id, tag);
        }
        // SAFETY: `host` is live; every string is passed as pointer + length and copied
        // by the host before it returns.
        let status = unsafe {
            ffi::cx_call(
                self.host,
                id,
                plugin.as_ptr() as *const c_char,
                plugin.len(),
                op.as_ptr() as *const c_char,
                op.len(),
                input.as_ptr() as *const c_char,
                input.len(),
            )
        };
        // CX_ERR_SHUT_DOWN is answered through the channel too ("the answer, at once").
        if status != ffi::CX_OK && status != ffi::CX_ERR_SHUT_DOWN {
            if let Ok(mut calls) = self.routes().calls.lock() {
                calls.remove(&id);
            }
        }
        check(status, "cx_call")
    }

    fn notify(&self, plugin: &str, op: &str, input: &str) -> Result<(), Error> {
        // SAFETY: as for `plugin`.
        let status = unsafe {
            ffi::cx_notify(
                self.host,
                plugin.as_ptr() as *const c_char,
                plugin.len(),
                op.as_ptr() as *const c_char,
                op.len(),
                input.as_ptr() as *const c_char,
                input.len(),
            )
        };
        check(status, "cx_notify")
    }

    fn subscribe(&self, key: &str, plugin: &str, stream: &str, input: &str, tag: T) -> Result<(), Error> {
        if let Ok(mut streams) = self.routes().streams.lock() {
            streams.insert(key.as_bytes().to_vec(), tag);
        }
        // SAFETY: as for `plugin`.
        let status = unsafe {
            ffi::cx_subscribe(
                self.host,
                key.as_ptr() as *const c_char,
                key.len(),
                plugin.as_ptr() as *const c_char,
                plugin.len(),
                stream.as_ptr() as *const c_char,
                stream.len(),
                input.as_ptr() as *const c_char,
                input.len(),
            )
        };
        if status != ffi::CX_OK {
            if let Ok(mut streams) = self.routes().streams.lock() {
                streams.remove(key.as_bytes());
            }
        }
        check(status, "cx_subscribe")
    }

    fn unsubscribe(&self, key: &str) -> Result<bool, Error> {
        // SAFETY: as for `plugin`.
        let status = unsafe { ffi::cx_unsubscribe(self.host, key.as_ptr() as *const c_char, key.len()) };
        // Once it returns nothing more is delivered on the key: its tag can go.
        if let Ok(mut streams) = self.routes().streams.lock() {
            streams.remove(key.as_bytes());
        }
        match status {
            ffi::CX_OK => Ok(true),
            ffi::CX_UNKNOWN_KEY => Ok(false),
            _ => Err(Error::from_status(status, "cx_unsubscribe")),
        }
    }
}

impl<T> Drop for Cx<T> {
    fn drop(&mut self) {
        // SAFETY: the host is destroyed first: no callback runs after cx_host_destroy
        // returns, so the routes box can be freed. A Cx is never dropped inside its own
        // delivery callback (the callback only sends on the channel).
        unsafe {
            ffi::cx_host_destroy(self.host);
            drop(Box::from_raw(self.routes));
        }
    }
}
