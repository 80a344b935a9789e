//! The C ABI of cx.h and cx_device.h, declared once. Every type mirrors the header's
//! layout (`#[repr(C)]`); nothing here is called outside this crate's safe wrappers.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

pub type cx_status = c_int;
pub const CX_OK: cx_status = 0;
pub const CX_ERR_SHUT_DOWN: cx_status = 4;
pub const CX_UNKNOWN_KEY: cx_status = 10;
pub const CX_ERR_INVALID_ARGUMENT: cx_status = 11;

pub const CX_DELIVERY_RESPONSE: c_int = 0;
pub const CX_DELIVERY_ITEM: c_int = 1;
pub const CX_DELIVERY_END: c_int = 2;

/// The ABI version this crate was written against (cx.h's CX_ABI_VERSION).
pub const CX_ABI_VERSION: u32 = 1;

#[repr(C)]
pub struct cx_delivery {
    pub kind: c_int,
    pub request_id: u64,
    pub key: *const c_char,
    pub key_len: usize,
    pub ok: bool,
    pub output: *const c_char,
    pub output_len: usize,
}

#[repr(C)]
pub struct cx_host {
    _opaque: [u8; 0],
}

pub type cx_delivery_fn = extern "C" fn(context: *mut c_void, delivery: *const cx_delivery);

#[repr(C)]
pub struct cx_reply {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct cx_emitter {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct cx_str {
    pub ptr: *const c_char,
    pub len: usize,
}

#[repr(C)]
pub struct cx_plugin {
    pub context: *mut c_void,
    pub call: Option<
        extern "C" fn(
            context: *mut c_void,
            op: *const c_char,
            op_len: usize,
            input: *const c_char,
            input_len: usize,
            reply: *mut cx_reply,
        ) -> c_int,
    >,
    pub start_stream: Option<
        extern "C" fn(
            context: *mut c_void,
            stream: *const c_char,
            stream_len: usize,
            input: *const c_char,
            input_len: usize,
            emitter: *mut cx_emitter,
        ),
    >,
    pub stop_stream: Option<extern "C" fn(context: *mut c_void, emitter: *mut cx_emitter)>,
    pub release: Option<extern "C" fn(context: *mut c_void)>,
}

extern "C" {
    pub fn cx_abi_version() -> u32;
    pub fn cx_status_name(status: cx_status) -> *const c_char;
    pub fn cx_host_create(deliver: cx_delivery_fn, context: *mut c_void, out: *mut *mut cx_host) -> cx_status;
    pub fn cx_call(
        host: *mut cx_host,
        request_id: u64,
        plugin: *const c_char,
        plugin_len: usize,
        op: *const c_char,
        op_len: usize,
        input: *const c_char,
        input_len: usize,
    ) -> cx_status;
    pub fn cx_notify(
        host: *mut cx_host,
        plugin: *const c_char,
        plugin_len: usize,
        op: *const c_char,
        op_len: usize,
        input: *const c_char,
        input_len: usize,
    ) -> cx_status;
    pub fn cx_subscribe(
        host: *mut cx_host,
        key: *const c_char,
        key_len: usize,
        plugin: *const c_char,
        plugin_len: usize,
        stream: *const c_char,
        stream_len: usize,
        input: *const c_char,
        input_len: usize,
    ) -> cx_status;
    pub fn cx_unsubscribe(host: *mut cx_host, key: *const c_char, key_len: usize) -> cx_status;
    pub fn cx_wait_idle(host: *mut cx_host) -> cx_status;
    pub fn cx_host_destroy(host: *mut cx_host) -> cx_status;
    pub fn cx_register_plugin(
        host: *mut cx_host,
        name: *const c_char,
        name_len: usize,
        ops: *const cx_str,
        op_count: usize,
        streams: *const cx_str,
        stream_count: usize,
        plugin: *const cx_plugin,
    ) -> cx_status;
    pub fn cx_reply_send(reply: *mut cx_reply, ok: bool, output: *const c_char, output_len: usize) -> cx_status;
    pub fn cx_emit(emitter: *mut cx_emitter, ok: bool, output: *const c_char, output_len: usize) -> cx_status;
    pub fn cx_end(emitter: *mut cx_emitter) -> cx_status;
    pub fn cx_emitter_release(emitter: *mut cx_emitter) -> cx_status;
}

#[cfg(feature = "world")]
pub use world::*;

#[cfg(feature = "world")]
mod world {
    use super::{cx_delivery, cx_status};
    use std::os::raw::{c_char, c_void};

    #[repr(C)]
    pub struct cx_device {
        _opaque: [u8; 0],
    }

    pub type cx_device_delivery_fn =
        extern "C" fn(context: *mut c_void, device: *const c_char, device_len: usize, delivery: *const cx_delivery);

    extern "C" {
        pub fn cx_device_create(
            deliver: cx_device_delivery_fn,
            context: *mut c_void,
            out: *mut *mut cx_device,
        ) -> cx_status;
        pub fn cx_device_request(
            world: *mut cx_device,
            line: *const c_char,
            line_len: usize,
            reply: *mut *mut c_char,
            reply_len: *mut usize,
        ) -> cx_status;
        pub fn cx_device_destroy(world: *mut cx_device) -> cx_status;
        pub fn cx_device_free(pointer: *mut c_void);
    }
}
