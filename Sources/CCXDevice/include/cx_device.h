/*
 * cx_device.h: the headless world of simulated devices, for a core's tests.
 *
 * The cxshell line protocol in-process (shared/spec/shell-protocol.md, Docs/Shell.md):
 * a world holds any number of simulated phones, each running the cx host with its
 * plugins, and a C (or Rust) core drives them and the outside world (pushes, taps)
 * one request line at a time. Link it beside libcx.so in tests only; an app that
 * embeds the host links libcx.so alone and ships no simulator.
 *
 * The conventions of cx.h hold here: strings are pointer + length, nothing traps,
 * every function returns a cx_status, a dead handle gives CX_ERR_BAD_HANDLE, and any
 * thread with at least 256 KiB of stack may call in.
 */
#ifndef CX_DEVICE_H
#define CX_DEVICE_H

#include "cx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; compare with cx_device_abi_version(). */
#define CX_DEVICE_ABI_VERSION 1u

uint32_t cx_device_abi_version(void);

/* One world of simulated devices. */
typedef struct cx_device cx_device;

/* Receives every stream delivery a device's app host makes to its core: `device`
   (device_len bytes) is the device's id ("d1", "d2", … in order of creation),
   `delivery` is a CX_DELIVERY_ITEM or CX_DELIVERY_END. Called on the world's own
   delivery thread, one at a time, before the request that caused it returns. */
typedef void (*cx_device_delivery_fn)(void *context, const char *device, size_t device_len,
                                      const cx_delivery *delivery);

/* Creates an empty world. Its first request is usually {"op":"device",…}. */
cx_status cx_device_create(cx_device_delivery_fn deliver, void *context, cx_device **out);

/* Handles one request line of the protocol (one JSON object, no newline needed); the
   request may name any device of the world with "device". The deliveries it caused
   are made through the callback before this returns; then *reply (allocated,
   NUL-terminated, free it with cx_device_free) and *reply_len hold the reply line. A
   line the shell does not understand is answered with ok:false in the reply, and this
   returns CX_OK. A line of white space only is not a request: the reply is the empty
   string. CX_ERR_IN_CALLBACK from the world's own callback. */
cx_status cx_device_request(cx_device *world, const char *line, size_t line_len, char **reply, size_t *reply_len);

/* Frees the world (every device's app process ends without deliveries). */
cx_status cx_device_destroy(cx_device *world);

/* Frees a reply this library allocated. NULL is fine. */
void cx_device_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif /* CX_DEVICE_H */
