/* Making and connecting a libmosquitto client without the socket pair it makes for itself.

   libmosquitto opens a socket pair for every client, when it is made (2.0.11, Debian 12:
   mosquitto_reinitialise) or when it connects (later 2.0 releases: mosquitto__connect_init),
   only to wake its own threaded loop (mosquitto_loop_start, mosquitto_loop's select). A
   client driven by an external loop, as every connection of MQTTLoop is, never reads it,
   and it costs two of the process's descriptors per client, twice the connection's own.
   When socketpair fails there, libmosquitto goes on without one (later releases log "outgoing
   publish commands may be delayed", which is about that loop), and it then also skips the
   byte it would write into the pair for every packet queued.

   So the process's socketpair is defined here: on a thread inside cx_mosquitto_new or
   cx_mosquitto_connect it fails with EMFILE, and everywhere else it is libc's own, found
   with dlsym(RTLD_NEXT). A library's call reaches it because the executable's definition
   comes first in the dynamic linker's search. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mosquitto_connect.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/socket.h>

typedef int (*socketpair_fn)(int, int, int, int[2]);

static _Thread_local bool connecting;
static unsigned long refused;

int socketpair(int domain, int type, int protocol, int fds[2]) {
    static socketpair_fn libc_socketpair;
    if (connecting) {
        __atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
        errno = EMFILE;
        return -1;
    }
    socketpair_fn real = __atomic_load_n(&libc_socketpair, __ATOMIC_ACQUIRE);
    if (!real) {
        real = (socketpair_fn)dlsym(RTLD_NEXT, "socketpair");
        if (!real) {
            errno = ENOSYS;
            return -1;
        }
        __atomic_store_n(&libc_socketpair, real, __ATOMIC_RELEASE);
    }
    return real(domain, type, protocol, fds);
}

unsigned long cx_mosquitto_pairs_refused(void) { return __atomic_load_n(&refused, __ATOMIC_RELAXED); }

struct mosquitto *cx_mosquitto_new(const char *id, bool clean_start, void *userdata) {
    connecting = true;
    struct mosquitto *mosq = mosquitto_new(id, clean_start, userdata);
    connecting = false;
    return mosq;
}

int cx_mosquitto_connect(struct mosquitto *mosq, const char *host, int port, int keepalive) {
    connecting = true;
    int rc = mosquitto_connect(mosq, host, port, keepalive);
    connecting = false;
    return rc;
}
