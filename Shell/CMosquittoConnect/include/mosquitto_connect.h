#ifndef CX_MOSQUITTO_CONNECT_H
#define CX_MOSQUITTO_CONNECT_H

#include <mosquitto.h>

/* mosquitto_new and mosquitto_connect, but without the socket pair libmosquitto opens in
   one or the other (which, depends on its release): a client then holds one descriptor,
   its connection, instead of three (mosquitto_connect.c says why). Their results are
   libmosquitto's own. */
struct mosquitto *cx_mosquitto_new(const char *id, bool clean_start, void *userdata);
int cx_mosquitto_connect(struct mosquitto *mosq, const char *host, int port, int keepalive);

/* How many socket pairs libmosquitto asked for inside those two calls, and was refused,
   since the process began (any thread; a moment's figure). */
unsigned long cx_mosquitto_pairs_refused(void);

#endif
