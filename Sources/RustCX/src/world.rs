//! The headless world of simulated devices (`cx_device.h`), for a core's tests: make
//! phones, play their user and OS and the outside world with line-protocol requests
//! (Docs/Shell.md), and run the core against a phone's app through [`App`], which is a
//! [`Host`] like the real one.

use crate::{bytes, ffi, json, Error, Host, Reply, Routes};
use std::collections::HashMap;
use std::os::raw::{c_char, c_void};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

/// Where a device's stream deliveries go: the routes of the app made for it.
trait StreamSink: Send + Sync {
    fn deliver(&self, kind: i32, key: &[u8], ok: bool, output: &[u8]);
}

impl<T: Clone + Send> StreamSink for Routes<T> {
    fn deliver(&self, kind: i32, key: &[u8], ok: bool, output: &[u8]) {
        Routes::deliver(self, kind, 0, key, ok, output);
    }
}

type Sinks = Mutex<HashMap<Vec<u8>, Arc<dyn StreamSink>>>;

/// One world of simulated devices.
pub struct World {
    raw: *mut ffi::cx_device,
    sinks: *mut Sinks,
}

// SAFETY: cx_device.h lets any thread call in; the sinks are behind a Mutex.
unsafe impl Send for World {}
// SAFETY: as for Send.
unsafe impl Sync for World {}

extern "C" fn deliver_to_sinks(
    context: *mut c_void,
    device: *const c_char,
    device_len: usize,
    delivery: *const ffi::cx_delivery,
) {
    // SAFETY: `context` is the Sinks box `World::new` gave cx_device_create; Drop
    // destroys the world (no callback after) before freeing it. The device id, the
    // delivery and its strings are valid until this returns (cx_device.h).
    unsafe {
        let sinks = &*(context as *const Sinks);
        let delivery = &*delivery;
        let sink = sinks.lock().ok().and_then(|sinks| sinks.get(bytes(device, device_len)).cloned());
        if let Some(sink) = sink {
            sink.deliver(
                delivery.kind,
                bytes(delivery.key, delivery.key_len),
                delivery.ok,
                bytes(delivery.output, delivery.output_len),
            );
        }
    }
}

impl World {
    /// An empty world.
    pub fn new() -> Result<World, Error> {
        let sinks: *mut Sinks = Box::into_raw(Box::new(Mutex::new(HashMap::new())));
        let mut raw = std::ptr::null_mut();
        // SAFETY: the callback matches cx_device_delivery_fn; `sinks` lives until Drop.
        let status = unsafe { ffi::cx_device_create(deliver_to_sinks, sinks as *mut c_void, &mut raw) };
        if status != ffi::CX_OK {
            // SAFETY: no world refers to it.
            drop(unsafe { Box::from_raw(sinks) });
            return Err(Error::from_status(status, "cx_device_create"));
        }
        Ok(World { raw, sinks })
    }

    /// One request line (Docs/Shell.md); its reply line. The deliveries it caused have
    /// reached their apps' channels before this returns.
    pub fn request(&self, line: &str) -> Result<String, Error> {
        let mut reply: *mut c_char = std::ptr::null_mut();
        let mut reply_len = 0;
        // SAFETY: `raw` is live until Drop; the line is passed as pointer + length; on
        // CX_OK `reply` is a NUL-terminated allocation of `reply_len` bytes we free below.
        let status = unsafe {
            ffi::cx_device_request(self.raw, line.as_ptr() as *const c_char, line.len(), &mut reply, &mut reply_len)
        };
        if status != ffi::CX_OK {
            return Err(Error::from_status(status, "cx_device_request"));
        }
        // SAFETY: as above; copied before it is freed.
        let text = String::from_utf8_lossy(unsafe { bytes(reply, reply_len) }).into_owned();
        // SAFETY: allocated by the library for us, freed once.
        unsafe { ffi::cx_device_free(reply as *mut c_void) };
        Ok(text)
    }

    /// Makes a device (`ios`, `android` or `web`) with the app installed; its id.
    pub fn device(&self, platform: &str) -> Result<String, Error> {
        let reply = self.request(&json::object(&[("op", "device"), ("platform", platform)]))?;
        json::field(&reply, "device").ok_or_else(|| refused(&reply))
    }

    /// The app on `device` as a host for a core, and the receiver its answers arrive on.
    /// One app per device: a second replaces the first's stream routes.
    pub fn app<T: Clone + Send + 'static>(&self, device: &str) -> (App<'_, T>, Receiver<(T, Reply)>) {
        let (routes, receiver) = Routes::new();
        let routes = Arc::new(routes);
        // SAFETY: `sinks` is the box made in `new`, freed only in Drop.
        if let Ok(mut sinks) = unsafe { &*self.sinks }.lock() {
            sinks.insert(device.as_bytes().to_vec(), routes.clone());
        }
        (App { world: self, device: device.to_string(), routes }, receiver)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // SAFETY: the world is destroyed first (no callback after), then its sinks.
        unsafe {
            ffi::cx_device_destroy(self.raw);
            drop(Box::from_raw(self.sinks));
        }
    }
}

fn refused(reply: &str) -> Error {
    Error { status: -1, message: json::field(reply, "error").unwrap_or_else(|| reply.to_string()) }
}

/// A simulated phone's app as a core's host: the core's requests become the line
/// protocol's `call`, `notify`, `subscribe` and `unsubscribe` on that device, and what
/// its app's host delivers comes back as `(tag, Reply)`.
pub struct App<'w, T> {
    world: &'w World,
    device: String,
    routes: Arc<Routes<T>>,
}

impl<'w, T: Clone + Send + 'static> App<'w, T> {
    /// The device this app runs on ("d1").
    pub fn device(&self) -> &str {
        &self.device
    }

    fn line(&self, op: &str, members: &[(&str, &str)]) -> Result<String, Error> {
        let mut all = vec![("op", op), ("device", self.device.as_str())];
        all.extend_from_slice(members);
        self.world.request(&json::object(&all))
    }
}

impl<'w, T: Clone + Send + 'static> Host<T> for App<'w, T> {
    fn plugin(&self, plugin: &str, op: &str, input: &str, tag: T) -> Result<(), Error> {
        let reply = self.line("call", &[("plugin", plugin), ("method", op), ("input", input)])?;
        // A plugin's answer has `output`; a request the shell refused (the app is not
        // running) has `error`: either way the core gets its answer, as from a host.
        let text = json::field(&reply, "output").or_else(|| json::field(&reply, "error")).unwrap_or_default();
        self.routes.send(tag, Reply { ok: json::flag(&reply, "ok") == Some(true), text, end: false });
        Ok(())
    }

    fn notify(&self, plugin: &str, op: &str, input: &str) -> Result<(), Error> {
        let reply = self.line("notify", &[("plugin", plugin), ("method", op), ("input", input)])?;
        if json::flag(&reply, "ok") == Some(true) {
            Ok(())
        } else {
            Err(refused(&reply))
        }
    }

    fn subscribe(&self, key: &str, plugin: &str, stream: &str, input: &str, tag: T) -> Result<(), Error> {
        // The tag waits first: a buffered event is delivered during the request.
        if let Ok(mut streams) = self.routes.streams.lock() {
            streams.insert(key.as_bytes().to_vec(), tag);
        }
        let reply = self.line("subscribe", &[("key", key), ("plugin", plugin), ("stream", stream), ("input", input)])?;
        if json::flag(&reply, "ok") == Some(true) {
            return Ok(());
        }
        if let Ok(mut streams) = self.routes.streams.lock() {
            streams.remove(key.as_bytes());
        }
        Err(refused(&reply))
    }

    fn unsubscribe(&self, key: &str) -> Result<bool, Error> {
        let known = self.routes.streams.lock().map(|mut streams| streams.remove(key.as_bytes()).is_some());
        let reply = self.line("unsubscribe", &[("key", key)])?;
        if json::flag(&reply, "ok") != Some(true) {
            return Err(refused(&reply));
        }
        Ok(known.unwrap_or(false))
    }
}
