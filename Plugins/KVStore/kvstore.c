#include "kvstore.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kvstore {
    pthread_mutex_t lock;
    json_t *values;          /* object: key -> value, in insertion order */
    cx_emitter **listeners;  /* live `changes` streams, in subscription order */
    size_t listener_count;
    size_t listener_capacity;
} kvstore;

static void reply_json(cx_reply *reply, json_t *value) {
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text == NULL) {
        cx_reply_send(reply, false, "kvstore: out of memory", strlen("kvstore: out of memory"));
    } else {
        cx_reply_send(reply, true, text, strlen(text));
        free(text);
    }
    json_decref(value);
}

static void reply_error(cx_reply *reply, const char *message) {
    cx_reply_send(reply, false, message, strlen(message));
}

/* Parses {"key": "...", ...}; on failure answers the call and returns NULL. */
static json_t *parse_request(const char *input, size_t input_len, cx_reply *reply, const char **key) {
    json_error_t error;
    json_t *request = json_loadb(input, input_len, JSON_REJECT_DUPLICATES, &error);
    if (request == NULL) {
        char message[256];
        snprintf(message, sizeof message, "kvstore: the input is not JSON: line %d, column %d: %s", error.line,
                 error.column, error.text);
        reply_error(reply, message);
        return NULL;
    }
    json_t *name = json_object_get(request, "key");
    if (!json_is_object(request) || !json_is_string(name)) {
        reply_error(reply, "kvstore: the input must be an object with a string \"key\"");
        json_decref(request);
        return NULL;
    }
    *key = json_string_value(name);
    return request;
}

static int kv_call(void *context, const char *op, size_t op_len, const char *input, size_t input_len,
                   cx_reply *reply) {
    kvstore *store = context;
    const char *key = NULL;
    json_t *request = parse_request(input, input_len, reply, &key);
    if (request == NULL) return 0;

    if (op_len == 3 && memcmp(op, "get", 3) == 0) {
        pthread_mutex_lock(&store->lock);
        json_t *value = json_object_get(store->values, key);
        json_t *answer = json_pack("{s:s, s:O}", "key", key, "value", value ? value : json_null());
        pthread_mutex_unlock(&store->lock);
        reply_json(reply, answer);
    } else {
        json_t *value = json_object_get(request, "value");
        if (value == NULL) {
            reply_error(reply, "kvstore: set needs a \"value\"");
            json_decref(request);
            return 0;
        }
        json_t *change = json_pack("{s:s, s:O}", "key", key, "value", value);
        char *change_text = json_dumps(change, JSON_COMPACT);
        pthread_mutex_lock(&store->lock);
        json_t *previous = json_object_get(store->values, key);
        json_t *answer = json_pack("{s:s, s:O}", "key", key, "previous", previous ? previous : json_null());
        json_object_set(store->values, key, value);
        /* Emitting only queues into the host and never calls back, so doing it under
           the lock keeps changes in the order the sets happened. */
        for (size_t i = 0; i < store->listener_count; i++) {
            cx_emit(store->listeners[i], true, change_text, strlen(change_text));
        }
        pthread_mutex_unlock(&store->lock);
        free(change_text);
        json_decref(change);
        reply_json(reply, answer);
    }
    json_decref(request);
    return 0;
}

static void kv_start_stream(void *context, const char *stream, size_t stream_len, const char *input,
                            size_t input_len, cx_emitter *emitter) {
    (void)stream;
    (void)stream_len;
    (void)input;
    (void)input_len;
    kvstore *store = context;
    pthread_mutex_lock(&store->lock);
    if (store->listener_count == store->listener_capacity) {
        size_t capacity = store->listener_capacity ? store->listener_capacity * 2 : 4;
        cx_emitter **grown = realloc(store->listeners, capacity * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&store->lock);
            cx_emit(emitter, false, "kvstore: out of memory", strlen("kvstore: out of memory"));
            cx_end(emitter);
            cx_emitter_release(emitter);
            return;
        }
        store->listeners = grown;
        store->listener_capacity = capacity;
    }
    store->listeners[store->listener_count++] = emitter;
    pthread_mutex_unlock(&store->lock);
}

static void kv_stop_stream(void *context, cx_emitter *emitter) {
    kvstore *store = context;
    pthread_mutex_lock(&store->lock);
    for (size_t i = 0; i < store->listener_count; i++) {
        if (store->listeners[i] == emitter) {
            memmove(&store->listeners[i], &store->listeners[i + 1],
                    (store->listener_count - i - 1) * sizeof *store->listeners);
            store->listener_count--;
            break;
        }
    }
    pthread_mutex_unlock(&store->lock);
    cx_emitter_release(emitter);
}

static void kv_release(void *context) {
    kvstore *store = context;
    for (size_t i = 0; i < store->listener_count; i++) cx_emitter_release(store->listeners[i]);
    free(store->listeners);
    json_decref(store->values);
    pthread_mutex_destroy(&store->lock);
    free(store);
}

cx_status kvstore_register(cx_host *host) {
    kvstore *store = calloc(1, sizeof *store);
    if (store == NULL) return CX_ERR_INVALID_ARGUMENT;
    pthread_mutex_init(&store->lock, NULL);
    store->values = json_object();
    static const cx_str ops[] = {{"get", 3}, {"set", 3}};
    static const cx_str streams[] = {{"changes", 7}};
    const cx_plugin plugin = {store, kv_call, kv_start_stream, kv_stop_stream, kv_release};
    cx_status status = cx_register_plugin(host, "kv", 2, ops, 2, streams, 1, &plugin);
    if (status != CX_OK) kv_release(store);
    return status;
}
