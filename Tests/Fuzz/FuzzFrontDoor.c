/* The front door's transport, fed whole connections without sockets: the first-byte
   sniffing, CONNECT parsing, TLS (OpenSSL), HTTP/2 (nghttp2) and HTTP/1.1
   (http-parser) glue. Invariants: nothing crashes or leaks (ASan), every complete
   request reaching the handler has its pseudo-headers first and a body within the
   limit, and the input is read in chunks of sizes the first byte chooses. */
#include "front_door.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void handler(void *context, const cx_http_request *request, cx_http_answer *answer) {
    (void)context;
    if (request->body_len > (1 << 20)) abort();
    for (size_t i = 0; i < request->header_count; i++)
        if (!request->headers[i].name || !request->headers[i].value) abort();
    static const cx_http_header headers[] = {{"content-type", 12, "application/json", 16, false}};
    cx_http_answer_set(answer, 200, headers, 1, (const unsigned char *)"{}", 2);
}

static bool allow(void *context, const char *host) {
    (void)context;
    return strcmp(host, "api.push.apple.com") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cx_front_door *door;
    if (!door) {
        const char *dir = getenv("CX_FUZZ_CA");
        char cert[4096], key[4096];
        snprintf(cert, sizeof cert, "%s/server.pem", dir ? dir : "build/fuzz/ca");
        snprintf(key, sizeof key, "%s/server-key.pem", dir ? dir : "build/fuzz/ca");
        door = cx_front_door_detached(cert, key, handler, allow, NULL);
        if (!door) abort();
    }
    if (size == 0) return 0;
    size_t chunk = (size_t)data[0] * 7 + 1;
    cx_front_door_feed(door, data + 1, size - 1, chunk);
    return 0;
}
