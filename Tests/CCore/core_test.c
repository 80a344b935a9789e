/*
 * A core written in C: it links libcx like an outside program (the header and the
 * shared library only), registers the C kvstore plugin, calls it, subscribes to its
 * stream, drives the headless device through the push contract's four iOS checks,
 * and checks every status code of cx.h. Ends with "C core: N passed, M failed (K checks)",
 * N and M counting test functions.
 */
#include "cx.h"
#include "cx_device.h"
#include "kvstore.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(condition)                                                                   \
    do {                                                                                   \
        if (condition) {                                                                   \
            passed++;                                                                      \
        } else {                                                                           \
            failed++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition);           \
        }                                                                                  \
    } while (0)

#define CHECK_STATUS(expression, expected)                                                 \
    do {                                                                                   \
        cx_status got_ = (expression);                                                     \
        if (got_ == (expected)) {                                                          \
            passed++;                                                                      \
        } else {                                                                           \
            failed++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: %s is %s, expected %s\n", __FILE__, __LINE__,     \
                    #expression, cx_status_name(got_), cx_status_name(expected));          \
        }                                                                                  \
    } while (0)

#define S(text) text, strlen(text)

/* ---- what the core received --------------------------------------------------- */

typedef struct record {
    char device[8]; /* the device a headless world's delivery came from; "" from a host */
    cx_delivery_kind kind;
    uint64_t id;
    char key[32];
    bool ok;
    char output[512];
} record;

typedef struct recorder {
    pthread_mutex_t lock;
    record items[256];
    int count;
    int concurrent, most_concurrent;
    /* Behaviour inside the callback, for the re-entrancy checks. */
    cx_host *host;
    cx_status wait_status, destroy_status, call_status;
} recorder;

static void deliver(void *context, const cx_delivery *delivery) {
    recorder *r = context;
    pthread_mutex_lock(&r->lock);
    r->concurrent++;
    if (r->concurrent > r->most_concurrent) r->most_concurrent = r->concurrent;
    if (r->count < 256) {
        record *item = &r->items[r->count++];
        item->device[0] = 0;
        item->kind = delivery->kind;
        item->id = delivery->request_id;
        item->ok = delivery->ok;
        snprintf(item->key, sizeof item->key, "%.*s", (int)delivery->key_len, delivery->key ? delivery->key : "");
        snprintf(item->output, sizeof item->output, "%.*s", (int)delivery->output_len,
                 delivery->output ? delivery->output : "");
    }
    r->concurrent--;
    pthread_mutex_unlock(&r->lock);
    /* Calling back into the host from the callback (request 100 asks for it). */
    if (delivery->kind == CX_DELIVERY_RESPONSE && delivery->request_id == 100 && r->host) {
        r->call_status = cx_call(r->host, 101, S("kv"), S("get"), S("{\"key\":\"a\"}"));
        r->wait_status = cx_wait_idle(r->host);
        r->destroy_status = cx_host_destroy(r->host);
    }
}

/* A headless world's deliveries name their device. */
static void deliver_from_device(void *context, const char *device, size_t device_len, const cx_delivery *delivery) {
    recorder *r = context;
    deliver(context, delivery);
    pthread_mutex_lock(&r->lock);
    if (r->count > 0 && r->count <= 256) snprintf(r->items[r->count - 1].device, 8, "%.*s", (int)device_len, device);
    pthread_mutex_unlock(&r->lock);
}

static const record *response(recorder *r, uint64_t id) {
    for (int i = 0; i < r->count; i++)
        if (r->items[i].kind == CX_DELIVERY_RESPONSE && r->items[i].id == id) return &r->items[i];
    return NULL;
}

static int count_on(recorder *r, const char *key, cx_delivery_kind kind) {
    int n = 0;
    for (int i = 0; i < r->count; i++)
        if (r->items[i].kind == kind && strcmp(r->items[i].key, key) == 0) n++;
    return n;
}

static void reset(recorder *r) {
    r->count = 0;
    r->host = NULL;
}

/* ---- a C test plugin that holds its replies and emitters -------------------------- */

typedef struct holder {
    cx_reply *reply;
    cx_emitter *emitter;
    int stops;
} holder;

static int hold_call(void *context, const char *op, size_t op_len, const char *input, size_t input_len,
                     cx_reply *reply) {
    (void)input;
    (void)input_len;
    holder *h = context;
    if (op_len == 4 && memcmp(op, "fail", 4) == 0) return 7; /* fails without answering */
    h->reply = reply;                                         /* never answers until shutdown */
    return 0;
}

static void hold_start(void *context, const char *stream, size_t stream_len, const char *input, size_t input_len,
                       cx_emitter *emitter) {
    (void)stream;
    (void)stream_len;
    (void)input;
    (void)input_len;
    ((holder *)context)->emitter = emitter;
}

static void hold_stop(void *context, cx_emitter *emitter) {
    (void)emitter;
    ((holder *)context)->stops++; /* keeps the handle, to emit after unsubscribe */
}

/* ---- a C plugin that waits for or shuts down its own host from inside `call` ------ */

typedef struct self_waiter {
    cx_host *host;
    cx_status wait, shutdown, destroy;
} self_waiter;

static int self_wait_call(void *context, const char *op, size_t op_len, const char *input, size_t input_len,
                          cx_reply *reply) {
    (void)op;
    (void)op_len;
    (void)input;
    (void)input_len;
    self_waiter *w = context;
    w->wait = cx_wait_idle(w->host);
    w->shutdown = cx_host_shutdown(w->host);
    w->destroy = cx_host_destroy(w->host);
    return (int)cx_reply_send(reply, true, S("still here"));
}

/* ---- the checks --------------------------------------------------------------------- */

static void abi_and_arguments(recorder *r) {
    CHECK(cx_abi_version() == CX_ABI_VERSION);
    CHECK(strcmp(cx_status_name(CX_ERR_DUPLICATE_ID), "CX_ERR_DUPLICATE_ID") == 0);
    cx_host *host = NULL;
    CHECK_STATUS(cx_host_create(NULL, r, &host), CX_ERR_NULL);
    CHECK_STATUS(cx_host_create(deliver, r, NULL), CX_ERR_NULL);
    CHECK_STATUS(cx_host_create(deliver, r, &host), CX_OK);
    CHECK_STATUS(cx_call(NULL, 1, S("kv"), S("get"), S("")), CX_ERR_NULL);
    CHECK_STATUS(cx_call(host, 1, NULL, 3, S("get"), S("")), CX_ERR_NULL);
    CHECK_STATUS(cx_call(host, 1, "\xff\xfe", 2, S("get"), S("")), CX_ERR_UTF8);
    CHECK_STATUS(cx_call((cx_host *)(uintptr_t)0xdeadbeef, 1, S("kv"), S("get"), S("")), CX_ERR_BAD_HANDLE);
    CHECK_STATUS(cx_register_plugin(host, S("x"), NULL, 2, NULL, 0, &(cx_plugin){0}), CX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(cx_register_plugin(host, "", 0, NULL, 0, NULL, 0, &(cx_plugin){0}), CX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(cx_register_plugin(host, S("x"), NULL, 0, NULL, 0, NULL), CX_ERR_NULL);
    CHECK_STATUS(cx_reply_send(NULL, true, S("")), CX_ERR_NULL);
    CHECK_STATUS(cx_emit((cx_emitter *)host, true, S("")), CX_ERR_BAD_HANDLE); /* a host is not an emitter */
    CHECK_STATUS(cx_end(NULL), CX_ERR_NULL);
    /* An empty string may be NULL with length 0. */
    CHECK_STATUS(cx_notify(host, S("nobody"), S("op"), NULL, 0), CX_OK);
    CHECK_STATUS(cx_host_destroy(host), CX_OK);
    CHECK_STATUS(cx_wait_idle(host), CX_ERR_BAD_HANDLE); /* a destroyed host */
    CHECK_STATUS(cx_host_destroy(host), CX_ERR_BAD_HANDLE);
    cx_free(NULL);
}

static void kvstore_plugin(recorder *r) {
    reset(r);
    cx_host *host;
    CHECK_STATUS(cx_host_create(deliver, r, &host), CX_OK);
    CHECK_STATUS(kvstore_register(host), CX_OK);
    CHECK_STATUS(kvstore_register(host), CX_ERR_DUPLICATE_PLUGIN);
    CHECK_STATUS(cx_subscribe(host, S("changes"), S("kv"), S("changes"), S("")), CX_OK);
    CHECK_STATUS(cx_call(host, 1, S("kv"), S("set"), S("{\"key\":\"a\",\"value\":{\"z\":1,\"big\":9223372036854775807}}")), CX_OK);
    CHECK_STATUS(cx_call(host, 2, S("kv"), S("get"), S("{\"key\":\"a\"}")), CX_OK);
    CHECK_STATUS(cx_call(host, 3, S("kv"), S("get"), S("not json")), CX_OK);
    CHECK_STATUS(cx_call(host, 4, S("kv"), S("gett"), S("{}")), CX_OK);
    CHECK_STATUS(cx_call(host, 5, S("camera"), S("snap"), S("")), CX_OK);
    CHECK_STATUS(cx_wait_idle(host), CX_OK);
    const record *set = response(r, 1), *get = response(r, 2), *bad = response(r, 3), *typo = response(r, 4),
                 *missing = response(r, 5);
    CHECK(set && set->ok && strcmp(set->output, "{\"key\":\"a\",\"previous\":null}") == 0);
    CHECK(get && get->ok && strcmp(get->output, "{\"key\":\"a\",\"value\":{\"z\":1,\"big\":9223372036854775807}}") == 0);
    CHECK(bad && !bad->ok && strstr(bad->output, "line 1, column") != NULL);
    CHECK(typo && !typo->ok && strcmp(typo->output, "kv has no op 'gett'; it has: get, set") == 0);
    CHECK(missing && !missing->ok && strstr(missing->output, "plugin 'camera' is not available") != NULL);
    CHECK(count_on(r, "changes", CX_DELIVERY_ITEM) == 1);
    CHECK_STATUS(cx_unsubscribe(host, S("changes")), CX_OK);
    CHECK_STATUS(cx_unsubscribe(host, S("changes")), CX_UNKNOWN_KEY);
    CHECK_STATUS(cx_call(host, 6, S("kv"), S("set"), S("{\"key\":\"a\",\"value\":2}")), CX_OK);
    CHECK_STATUS(cx_wait_idle(host), CX_OK);
    CHECK(count_on(r, "changes", CX_DELIVERY_ITEM) == 1); /* nothing after unsubscribe */
    CHECK(r->most_concurrent == 1);
    CHECK_STATUS(cx_host_destroy(host), CX_OK);
}

static void holding_plugin(recorder *r) {
    reset(r);
    holder h = {0};
    cx_host *host;
    CHECK_STATUS(cx_host_create(deliver, r, &host), CX_OK);
    const cx_str ops[] = {{"wait", 4}, {"fail", 4}};
    const cx_str streams[] = {{"ticks", 5}};
    const cx_plugin plugin = {&h, hold_call, hold_start, hold_stop, NULL};
    CHECK_STATUS(cx_register_plugin(host, S("hold"), ops, 2, streams, 1, &plugin), CX_OK);

    /* A duplicate request id while the first is unanswered. */
    CHECK_STATUS(cx_call(host, 42, S("hold"), S("wait"), S("")), CX_OK);
    CHECK_STATUS(cx_call(host, 42, S("hold"), S("wait"), S("")), CX_ERR_DUPLICATE_ID);
    /* A plugin that fails without answering is answered by the host. */
    CHECK_STATUS(cx_call(host, 43, S("hold"), S("fail"), S("")), CX_OK);

    /* A plugin emitting after the core unsubscribed: dropped, no crash. */
    CHECK_STATUS(cx_subscribe(host, S("t"), S("hold"), S("ticks"), S("")), CX_OK);
    CHECK_STATUS(cx_emit(h.emitter, true, S("tick")), CX_OK);
    CHECK_STATUS(cx_wait_idle(host), CX_OK);
    CHECK_STATUS(cx_unsubscribe(host, S("t")), CX_OK);
    CHECK(h.stops == 1);
    CHECK_STATUS(cx_emit(h.emitter, true, S("late")), CX_ERR_INACTIVE);
    CHECK_STATUS(cx_end(h.emitter), CX_ERR_INACTIVE);
    CHECK_STATUS(cx_wait_idle(host), CX_OK);
    CHECK(count_on(r, "t", CX_DELIVERY_ITEM) == 1 && count_on(r, "t", CX_DELIVERY_END) == 0);
    const record *failed_call = response(r, 43);
    CHECK(failed_call && !failed_call->ok && strcmp(failed_call->output, "plugin 'hold' failed on 'fail': status 7") == 0);
    CHECK(response(r, 42) == NULL);

    /* Shutdown answers the call the plugin never answered; later requests are refused. */
    CHECK_STATUS(cx_host_shutdown(host), CX_OK);
    const record *waited = response(r, 42);
    CHECK(waited && !waited->ok && strstr(waited->output, "shut down") != NULL);
    CHECK_STATUS(cx_reply_send(h.reply, true, S("too late")), CX_ERR_ALREADY_ANSWERED);
    CHECK_STATUS(cx_reply_send(h.reply, true, S("again")), CX_ERR_BAD_HANDLE); /* released by the first send */
    CHECK_STATUS(cx_call(host, 44, S("hold"), S("wait"), S("")), CX_ERR_SHUT_DOWN);
    CHECK_STATUS(cx_subscribe(host, S("t"), S("hold"), S("ticks"), S("")), CX_ERR_SHUT_DOWN);
    CHECK_STATUS(cx_register_plugin(host, S("late"), NULL, 0, NULL, 0, &plugin), CX_ERR_SHUT_DOWN);
    CHECK_STATUS(cx_host_shutdown(host), CX_OK);
    CHECK_STATUS(cx_emitter_release(h.emitter), CX_OK);
    CHECK_STATUS(cx_emitter_release(h.emitter), CX_ERR_BAD_HANDLE);
    CHECK_STATUS(cx_host_destroy(host), CX_OK);
}

static void reentrancy(recorder *r) {
    reset(r);
    cx_host *host;
    CHECK_STATUS(cx_host_create(deliver, r, &host), CX_OK);
    CHECK_STATUS(kvstore_register(host), CX_OK);
    r->host = host;
    r->wait_status = r->destroy_status = r->call_status = CX_OK;
    CHECK_STATUS(cx_call(host, 100, S("kv"), S("get"), S("{\"key\":\"a\"}")), CX_OK);
    CHECK_STATUS(cx_wait_idle(host), CX_OK);
    CHECK_STATUS(r->call_status, CX_OK);              /* a call from inside the callback works */
    CHECK_STATUS(r->wait_status, CX_ERR_IN_CALLBACK);  /* waiting there would wait for itself */
    CHECK_STATUS(r->destroy_status, CX_ERR_IN_CALLBACK);
    const record *inner = response(r, 101);
    CHECK(inner && inner->ok);
    r->host = NULL;
    CHECK_STATUS(cx_host_destroy(host), CX_OK);
}

/* Waiting for the host from inside one of its plugins would wait for that plugin
   itself: each is refused with CX_ERR_IN_PLUGIN, nothing is done, and the call is
   answered. (Before the fix each of these hung forever.) */
static void plugin_reentrancy(recorder *r) {
    reset(r);
    cx_host *host;
    CHECK_STATUS(cx_host_create(deliver, r, &host), CX_OK);
    self_waiter w = {host, CX_OK, CX_OK, CX_OK};
    const cx_str ops[] = {{"go", 2}};
    const cx_plugin plugin = {&w, self_wait_call, NULL, NULL, NULL};
    CHECK_STATUS(cx_register_plugin(host, S("self"), ops, 1, NULL, 0, &plugin), CX_OK);
    CHECK_STATUS(cx_call(host, 1, S("self"), S("go"), S("")), CX_OK);
    CHECK_STATUS(cx_wait_idle(host), CX_OK);
    CHECK_STATUS(w.wait, CX_ERR_IN_PLUGIN);
    CHECK_STATUS(w.shutdown, CX_ERR_IN_PLUGIN);
    CHECK_STATUS(w.destroy, CX_ERR_IN_PLUGIN);
    const record *answer = response(r, 1);
    CHECK(answer && answer->ok && strcmp(answer->output, "still here") == 0);
    CHECK(strcmp(cx_status_name(CX_ERR_IN_PLUGIN), "CX_ERR_IN_PLUGIN") == 0);
    CHECK_STATUS(cx_host_destroy(host), CX_OK);
}

/* A notify's id is the host's own; it never collides with the ids the core chooses. */
static void notify_ids(recorder *r) {
    reset(r);
    holder h = {0};
    cx_host *host;
    CHECK_STATUS(cx_host_create(deliver, r, &host), CX_OK);
    const cx_str ops[] = {{"wait", 4}, {"fail", 4}};
    const cx_plugin plugin = {&h, hold_call, NULL, NULL, NULL};
    CHECK_STATUS(cx_register_plugin(host, S("hold"), ops, 2, NULL, 0, &plugin), CX_OK);
    CHECK_STATUS(cx_notify(host, S("hold"), S("wait"), S("")), CX_OK); /* held, unanswered */
    CHECK_STATUS(cx_call(host, 1, S("hold"), S("fail"), S("")), CX_OK);
    CHECK_STATUS(cx_wait_idle(host), CX_OK);
    const record *answer = response(r, 1);
    CHECK(answer && !answer->ok);
    CHECK_STATUS(cx_host_destroy(host), CX_OK);
}

/* The headless device: the push contract's four iOS checks, in-process. */
static cx_status request(cx_device *device, const char *line, char *reply_out, size_t size) {
    char *reply = NULL;
    size_t length = 0;
    cx_status status = cx_device_request(device, line, strlen(line), &reply, &length);
    if (status == CX_OK) {
        snprintf(reply_out, size, "%.*s", (int)length, reply);
        cx_device_free(reply);
    }
    return status;
}

static bool last_item_is(recorder *r, const char *key, const char *output) {
    for (int i = r->count - 1; i >= 0; i--)
        if (r->items[i].kind == CX_DELIVERY_ITEM) return strcmp(r->items[i].key, key) == 0 && strcmp(r->items[i].output, output) == 0;
    return false;
}

static void headless_device(recorder *r) {
    reset(r);
    cx_device *device;
    char reply[2048];
    CHECK_STATUS(cx_device_create(deliver_from_device, r, &device), CX_OK);
    cx_device *unused_device = NULL;
    CHECK_STATUS(cx_device_create(NULL, r, &unused_device), CX_ERR_NULL);
    CHECK_STATUS(request(device, "{\"op\":\"device\",\"platform\":\"ios\"}", reply, sizeof reply), CX_OK);
    CHECK(strstr(reply, "\"ok\":true") != NULL);
    request(device, "{\"op\":\"launch\"}", reply, sizeof reply);
    request(device, "{\"op\":\"call\",\"id\":1,\"plugin\":\"push\",\"method\":\"register\",\"input\":\"\"}", reply, sizeof reply);
    CHECK(strstr(reply, "\\\"platform\\\":\\\"apns\\\"") != NULL);
    request(device, "{\"op\":\"subscribe\",\"key\":\"push\",\"plugin\":\"push\",\"stream\":\"events\",\"input\":\"\"}", reply, sizeof reply);

    /* 1. Open: one received. */
    request(device, "{\"op\":\"apns\",\"headers\":{\"apns-topic\":\"com.example.app\"},\"body\":{\"aps\":{\"alert\":{\"title\":\"Test\",\"body\":\"hi\"}},\"type\":\"new_booking\"}}", reply, sizeof reply);
    CHECK(r->count == 1 && last_item_is(r, "push", "{\"type\":\"new_booking\",\"title\":\"Test\",\"body\":\"hi\",\"mobiler_push\":\"received\"}"));
    /* 2. Background, send, open from the home screen: no event. */
    request(device, "{\"op\":\"background\"}", reply, sizeof reply);
    request(device, "{\"op\":\"apns\",\"headers\":{\"apns-topic\":\"com.example.app\"},\"body\":{\"aps\":{\"alert\":\"two\"},\"n\":2}}", reply, sizeof reply);
    request(device, "{\"op\":\"launch\"}", reply, sizeof reply);
    CHECK(r->count == 1);
    /* 3. Send again and tap: one opened with that payload. */
    request(device, "{\"op\":\"background\"}", reply, sizeof reply);
    request(device, "{\"op\":\"apns\",\"headers\":{\"apns-topic\":\"com.example.app\"},\"body\":{\"aps\":{\"alert\":\"three\"},\"n\":3}}", reply, sizeof reply);
    request(device, "{\"op\":\"tap\",\"which\":\"newest\"}", reply, sizeof reply);
    CHECK(r->count == 2 && last_item_is(r, "push", "{\"n\":3,\"body\":\"three\",\"mobiler_push\":\"opened\"}"));
    /* 4. Kill, send, tap: opened right after the relaunch, from the buffer. */
    request(device, "{\"op\":\"kill\"}", reply, sizeof reply);
    request(device, "{\"op\":\"apns\",\"headers\":{\"apns-topic\":\"com.example.app\"},\"body\":{\"aps\":{\"alert\":\"four\"},\"n\":4}}", reply, sizeof reply);
    request(device, "{\"op\":\"tap\",\"which\":\"newest\"}", reply, sizeof reply);
    CHECK(r->count == 2);
    request(device, "{\"op\":\"subscribe\",\"key\":\"push\",\"plugin\":\"push\",\"stream\":\"events\",\"input\":\"\"}", reply, sizeof reply);
    CHECK(r->count == 3 && last_item_is(r, "push", "{\"n\":4,\"body\":\"four\",\"mobiler_push\":\"opened\"}"));

    CHECK(strcmp(r->items[r->count - 1].device, "d1") == 0);

    /* The world: a second device; each delivery names the device it came from. */
    request(device, "{\"op\":\"device\",\"platform\":\"ios\"}", reply, sizeof reply);
    CHECK(strstr(reply, "\"device\":\"d2\"") != NULL);
    request(device, "{\"op\":\"launch\"}", reply, sizeof reply);
    request(device, "{\"op\":\"call\",\"plugin\":\"push\",\"method\":\"register\",\"input\":\"\"}", reply, sizeof reply);
    request(device, "{\"op\":\"subscribe\",\"key\":\"push\",\"plugin\":\"push\",\"stream\":\"events\",\"input\":\"\"}", reply, sizeof reply);
    request(device, "{\"op\":\"apns\",\"headers\":{\"apns-topic\":\"com.example.app\"},\"body\":{\"aps\":{\"alert\":\"to d2\"}}}", reply, sizeof reply);
    CHECK(r->count == 4 && strcmp(r->items[3].device, "d2") == 0 && last_item_is(r, "push", "{\"body\":\"to d2\",\"mobiler_push\":\"received\"}"));
    request(device, "{\"op\":\"apns\",\"device\":\"d1\",\"headers\":{\"apns-topic\":\"com.example.app\"},\"body\":{\"aps\":{\"alert\":\"to d1\"}}}", reply, sizeof reply);
    CHECK(r->count == 5 && strcmp(r->items[4].device, "d1") == 0);
    CHECK(cx_device_abi_version() == CX_DEVICE_ABI_VERSION);

    /* A line the shell cannot understand is answered in the reply, and a NULL line with a length is refused. */
    CHECK_STATUS(request(device, "not json", reply, sizeof reply), CX_OK);
    CHECK(strstr(reply, "\"ok\":false") != NULL);
    char *unused = NULL;
    size_t unused_length = 0;
    CHECK_STATUS(cx_device_request(device, NULL, 3, &unused, &unused_length), CX_ERR_NULL);
    CHECK_STATUS(cx_device_request(device, S("{}"), NULL, &unused_length), CX_ERR_NULL);
    CHECK_STATUS(cx_device_destroy(device), CX_OK);
    CHECK_STATUS(cx_device_request(device, S("{}"), &unused, &unused_length), CX_ERR_BAD_HANDLE);
}

/* Deep input on a C caller's small stack (cx.h promises 256 KiB is enough): a
   9,000-paren FCM condition and JSON nested past the limit are refused, and a payload
   at the limit is delivered. (The condition once crashed the shell with SIGSEGV.) */
typedef struct deep_result {
    recorder *r;
    bool condition_refused, nesting_refused, deepest_delivered;
} deep_result;

static void *deep_inputs(void *argument) {
    deep_result *result = argument;
    cx_device *device;
    static char line[64 << 10];
    char reply[4096];
    if (cx_device_create(deliver_from_device, result->r, &device) != CX_OK) return NULL;
    request(device, "{\"op\":\"device\",\"platform\":\"android\"}", reply, sizeof reply);
    int n = snprintf(line, sizeof line, "{\"op\":\"fcm\",\"body\":{\"message\":{\"condition\":\"");
    for (int i = 0; i < 9000; i++) line[n++] = '(';
    snprintf(line + n, sizeof line - n, "'a' in topics\"}}}");
    request(device, line, reply, sizeof reply);
    result->condition_refused = strstr(reply, "nesting is deeper than 32 levels") != NULL;

    request(device, "{\"op\":\"device\",\"platform\":\"ios\"}", reply, sizeof reply);
    request(device, "{\"op\":\"launch\"}", reply, sizeof reply);
    request(device, "{\"op\":\"permission\",\"answer\":\"grant\"}", reply, sizeof reply);
    request(device, "{\"op\":\"call\",\"plugin\":\"push\",\"method\":\"register\",\"input\":\"\"}", reply, sizeof reply);
    request(device, "{\"op\":\"subscribe\",\"key\":\"deep\",\"plugin\":\"push\",\"stream\":\"events\",\"input\":\"\"}", reply, sizeof reply);
    for (int depth = 127; depth <= 200000; depth += 200000 - 127) {
        n = snprintf(line, sizeof line, "{\"op\":\"apns\",\"headers\":{\"apns-topic\":\"com.example.app\"},\"body\":{\"aps\":{\"alert\":\"x\"},\"d\":");
        int levels = depth < 2000 ? depth - 2 : 30000; /* the request line adds two levels */
        for (int i = 0; i < levels; i++) line[n++] = '[';
        for (int i = 0; i < (depth < 2000 ? levels : 0); i++) line[n++] = ']';
        snprintf(line + n, sizeof line - n, "}}");
        int before = result->r->count;
        request(device, line, reply, sizeof reply);
        if (depth < 2000)
            result->deepest_delivered = strstr(reply, "\"ok\":true") != NULL && result->r->count == before + 1;
        else
            result->nesting_refused = strstr(reply, "nesting is deeper than 128 levels") != NULL;
    }
    cx_device_destroy(device);
    return NULL;
}

static void small_stack(recorder *r) {
    reset(r);
    deep_result result = {r, false, false, false};
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 << 10);
    pthread_t thread;
    CHECK(pthread_create(&thread, &attributes, deep_inputs, &result) == 0);
    pthread_join(thread, NULL);
    pthread_attr_destroy(&attributes);
    CHECK(result.condition_refused);
    CHECK(result.nesting_refused);
    CHECK(result.deepest_delivered);
}

/* A test is one function: it passes when none of its checks failed. The totals count
   tests, as every other runner's do; the checks are named beside them. */
static int tests_passed, tests_failed;

static void run(const char *name, void (*test)(recorder *), recorder *r) {
    int failed_before = failed;
    test(r);
    if (failed == failed_before) {
        tests_passed++;
    } else {
        tests_failed++;
        fprintf(stderr, "FAILED %s\n", name);
    }
}

int main(void) {
    recorder r;
    memset(&r, 0, sizeof r);
    pthread_mutex_init(&r.lock, NULL);
    run("abi_and_arguments", abi_and_arguments, &r);
    run("kvstore_plugin", kvstore_plugin, &r);
    run("holding_plugin", holding_plugin, &r);
    run("reentrancy", reentrancy, &r);
    run("plugin_reentrancy", plugin_reentrancy, &r);
    run("notify_ids", notify_ids, &r);
    run("headless_device", headless_device, &r);
    run("small_stack", small_stack, &r);
    pthread_mutex_destroy(&r.lock);
    printf("C core: %d passed, %d failed (%d checks)\n", tests_passed, tests_failed, passed + failed);
    return failed == 0 ? 0 : 1;
}
