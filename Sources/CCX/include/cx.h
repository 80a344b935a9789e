/*
 * cx.h: the C ABI of the cx plugin host.
 *
 * An app core written in C, Rust or anything with a C FFI embeds the host through
 * this header: it creates a host, makes one-shot calls, notifies and keyed stream
 * subscriptions, and receives every answer through one delivery callback. Plugins
 * written in C register themselves through the same header. The rules the host
 * keeps (H-1 … H-8) are in shared/spec/host.md; Docs/C-ABI.md explains this file.
 * This is the host only: the headless simulated devices, for a core's tests, are a
 * separate header and library (cx_device.h, libcxdevice.so) that an app never ships.
 *
 * Conventions, for every function here:
 *  - Strings cross as pointer + length, UTF-8, never assumed NUL-terminated. A NULL
 *    pointer is accepted only with length 0 (the empty string).
 *  - Nothing traps or aborts on a bad argument: every function returns a cx_status.
 *  - Handles (cx_host, cx_reply, cx_emitter) are opaque. A handle that was
 *    never issued, was released, or is of another kind gives CX_ERR_BAD_HANDLE.
 *  - Pointers the host passes to your callbacks are valid only during the callback;
 *    copy what you keep. Pointers you pass in are copied before the function returns.
 *  - Any thread with at least 256 KiB of stack may call in. Input that could recurse
 *    deeper (JSON nested past 128 levels, an FCM condition past 32) is refused with an
 *    error that says so before anything recurses, so no input can exhaust that stack.
 */
#ifndef CX_H
#define CX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. Compare it with cx_abi_version() at startup:
   a library with another major version must not be used. */
#define CX_ABI_VERSION 1u

/* The ABI version of the loaded library. */
uint32_t cx_abi_version(void);

typedef enum cx_status {
    CX_OK = 0,
    /* A required pointer (handle, out-parameter, callback) is NULL, or a string is
       NULL with a non-zero length. */
    CX_ERR_NULL = 1,
    /* A string is not valid UTF-8. */
    CX_ERR_UTF8 = 2,
    /* The handle was never issued, was released or destroyed, or is of another kind. */
    CX_ERR_BAD_HANDLE = 3,
    /* The host was shut down; the request was not dispatched (it is answered by this status). */
    CX_ERR_SHUT_DOWN = 4,
    /* cx_call: a call with this request id is still waiting for its answer. */
    CX_ERR_DUPLICATE_ID = 5,
    /* cx_register_plugin: a plugin with this name is already registered. */
    CX_ERR_DUPLICATE_PLUGIN = 6,
    /* Not allowed from inside the delivery callback: waiting there would wait for the
       callback itself (cx_wait_idle, cx_host_destroy; cx_device.h's cx_device_request). */
    CX_ERR_IN_CALLBACK = 7,
    /* cx_reply_send: the call was already answered (for example by shutdown). */
    CX_ERR_ALREADY_ANSWERED = 8,
    /* cx_emit / cx_end: the stream has ended (the core unsubscribed or replaced it, or
       the plugin ended it). The item was dropped; nothing was delivered. */
    CX_ERR_INACTIVE = 9,
    /* cx_unsubscribe: no stream under that key. Nothing changed (not an error). */
    CX_UNKNOWN_KEY = 10,
    /* An argument is out of range (an empty plugin name, a count without an array). */
    CX_ERR_INVALID_ARGUMENT = 11,
    /* Not allowed from inside a plugin function the host is running on this thread
       (a plugin's call, start_stream or stop_stream): waiting there would wait for that
       function itself (cx_wait_idle, cx_host_shutdown, cx_host_destroy). Nothing was done. */
    CX_ERR_IN_PLUGIN = 12
} cx_status;

/* A short English name for a status ("CX_ERR_NULL"); never NULL, static storage. */
const char *cx_status_name(cx_status status);

/* ------------------------------------------------------------------------------ */
/* Deliveries: everything the core receives.                                      */

typedef enum cx_delivery_kind {
    /* The answer to cx_call with `request_id`: exactly once per call. */
    CX_DELIVERY_RESPONSE = 0,
    /* One item of the stream subscribed under `key`. */
    CX_DELIVERY_ITEM = 1,
    /* The stream under `key` ended because the plugin ended it (or it could not start).
       Ends the core causes (unsubscribe, replacement, shutdown) are never delivered. */
    CX_DELIVERY_END = 2
} cx_delivery_kind;

typedef struct cx_delivery {
    cx_delivery_kind kind;
    uint64_t request_id;   /* RESPONSE only */
    const char *key;       /* ITEM and END; not NUL-terminated */
    size_t key_len;
    bool ok;               /* RESPONSE and ITEM */
    const char *output;    /* RESPONSE and ITEM; not NUL-terminated */
    size_t output_len;
} cx_delivery;

/* The core's delivery callback. It runs on the host's delivery thread (never on the
   thread of a cx_* call, and never inside one), one delivery at a time, in order:
   it is never called concurrently with itself for one host. It may call any cx_*
   function except those that answer CX_ERR_IN_CALLBACK. `delivery` and the strings
   it points to are valid until the callback returns. */
typedef void (*cx_delivery_fn)(void *context, const cx_delivery *delivery);

/* ------------------------------------------------------------------------------ */
/* The host.                                                                       */

typedef struct cx_host cx_host;

/* Creates a host whose deliveries go to `deliver(context, …)`. `context` is yours and
   is passed back untouched, from the delivery thread. On CX_OK, *out is the host. */
cx_status cx_host_create(cx_delivery_fn deliver, void *context, cx_host **out);

/* One-shot call (H-1): answered exactly once by a CX_DELIVERY_RESPONSE carrying
   `request_id`, chosen by the core. An unknown plugin or op, or a plugin that fails,
   is answered with ok = false and a sentence. CX_ERR_DUPLICATE_ID while a call with
   the same id is unanswered; CX_ERR_SHUT_DOWN after shutdown (the answer, at once). */
cx_status cx_call(cx_host *host, uint64_t request_id, const char *plugin, size_t plugin_len, const char *op,
                  size_t op_len, const char *input, size_t input_len);

/* Fire-and-forget call (H-2): dispatched in order; its answer is discarded. */
cx_status cx_notify(cx_host *host, const char *plugin, size_t plugin_len, const char *op, size_t op_len,
                    const char *input, size_t input_len);

/* Starts a stream under `key` (H-3, H-4). A key in use is first unsubscribed (no END
   for it). An unknown plugin or stream gets one ok = false item, then an END. */
cx_status cx_subscribe(cx_host *host, const char *key, size_t key_len, const char *plugin, size_t plugin_len,
                       const char *stream, size_t stream_len, const char *input, size_t input_len);

/* Ends the stream under `key`: once this returns, nothing more is delivered on it.
   CX_UNKNOWN_KEY when no stream is under that key (nothing changed). */
cx_status cx_unsubscribe(cx_host *host, const char *key, size_t key_len);

/* Blocks until every request so far has been handled and every resulting delivery
   made (H-6). CX_ERR_IN_CALLBACK from the delivery callback, CX_ERR_IN_PLUGIN from a
   plugin function this host is running on this thread. */
cx_status cx_wait_idle(cx_host *host);

/* Shuts down (H-8): stops every stream, answers every pending call with ok = false
   (those answers are delivered before this returns), and delivers nothing afterwards.
   Later requests answer CX_ERR_SHUT_DOWN. Idempotent. From inside the callback the
   final answers follow right after the callback returns. CX_ERR_IN_PLUGIN (nothing
   done) from a plugin function this host is running on this thread. */
cx_status cx_host_shutdown(cx_host *host);

/* Shuts down if needed, releases every plugin (their `release` runs) and every reply
   and emitter handle of this host, and frees the host: the handle is dead after it.
   No callback runs after this returns. CX_ERR_IN_CALLBACK from the delivery callback,
   CX_ERR_IN_PLUGIN from a plugin function this host is running on this thread. */
cx_status cx_host_destroy(cx_host *host);

/* ------------------------------------------------------------------------------ */
/* Plugins written in C.                                                           */

typedef struct cx_reply cx_reply;
typedef struct cx_emitter cx_emitter;

/* A string as pointer + length, for lists of names. */
typedef struct cx_str {
    const char *ptr;
    size_t len;
} cx_str;

/* What the host calls. Each function may be called on any thread (the thread of
   the request that caused it), never while the host holds a lock, so it may call the
   host back, and it may emit or answer while holding a lock of its own (the host
   takes none of a plugin's locks). It must not wait for the host to be idle or shut
   it down (CX_ERR_IN_PLUGIN). `context` is the plugin's own pointer, passed back
   untouched. The host calls stop_stream for an emitter only after its start_stream
   has returned, even when the core unsubscribes from another thread meanwhile. */
typedef struct cx_plugin {
    void *context;
    /* A call or notify for one of the plugin's ops. Answer exactly once with
       cx_reply_send, now or later, from any thread. Return 0; a non-zero return
       without an answer answers ok = false ("plugin 'x' failed on 'op': status N")
       and releases `reply`: do not use it after returning non-zero. */
    int (*call)(void *context, const char *op, size_t op_len, const char *input, size_t input_len, cx_reply *reply);
    /* Starts one of the plugin's streams. Emit with cx_emit, end with cx_end, from any
       thread. The emitter handle is yours until you pass it to cx_emitter_release. May be NULL
       when the plugin has no streams. */
    void (*start_stream)(void *context, const char *stream, size_t stream_len, const char *input,
                         size_t input_len, cx_emitter *emitter);
    /* The core ended the stream; `emitter` is already inert (cx_emit answers
       CX_ERR_INACTIVE). Release it when you no longer refer to it. May be NULL. */
    void (*stop_stream)(void *context, cx_emitter *emitter);
    /* The host is being destroyed; free `context`. Called once. May be NULL. */
    void (*release)(void *context);
} cx_plugin;

/* Registers a plugin under `name`, offering `ops` and `streams` (copied). The host
   answers requests for other names itself, listing these. */
cx_status cx_register_plugin(cx_host *host, const char *name, size_t name_len, const cx_str *ops, size_t op_count,
                             const cx_str *streams, size_t stream_count, const cx_plugin *plugin);

/* Answers a call, once. The handle is released by this call, whatever it returns.
   CX_ERR_ALREADY_ANSWERED when the host already answered it (at shutdown). */
cx_status cx_reply_send(cx_reply *reply, bool ok, const char *output, size_t output_len);

/* Emits one item. CX_ERR_INACTIVE (item dropped) once the stream has ended. */
cx_status cx_emit(cx_emitter *emitter, bool ok, const char *output, size_t output_len);

/* Ends the stream; the core gets one END. CX_ERR_INACTIVE when it had already ended. */
cx_status cx_end(cx_emitter *emitter);

/* Releases an emitter handle the plugin no longer refers to. */
cx_status cx_emitter_release(cx_emitter *emitter);

/* A plugin library loaded into cxshell (`cxshell serve --plugin PATH`, dlopen) exports
   this. The shell calls it for every app host its world makes (every launch of every
   device's app), with the ABI version of the cx.h it was built with; the library
   registers its plugins on `host` with cx_register_plugin and returns CX_OK. It returns
   CX_ERR_INVALID_ARGUMENT when `abi_version` is not the CX_ABI_VERSION it was built
   with. The library leaves the cx_* functions undefined: the loading process provides
   them, as Python provides its C API to extension modules. A library without this
   entry, a failing entry or a plugin name the shell already has is refused at start. */
cx_status cx_plugin_entry(cx_host *host, uint32_t abi_version);

/* Frees memory this library allocated for you. NULL is fine. */
void cx_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif /* CX_H */
