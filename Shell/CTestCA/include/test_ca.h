#ifndef CX_TEST_CA_H
#define CX_TEST_CA_H

#include <stddef.h>

/* The private test CA of cxshell's front door (shared/spec/front-door.md), made with
   OpenSSL. In `dir`: ca.pem (the CA certificate, the file clients trust), ca-key.pem,
   server.pem (the server certificate, then the CA's) and server-key.pem; keys are
   written 0600. An existing CA is kept, so clients need trust it once; a server
   certificate is made again when it is missing, was not signed by that CA, or
   expires within a day. Returns 0, or -1 with a sentence in `message`. */
int cx_test_ca_ensure(const char *dir, char *message, size_t message_size);

/* The names the server certificate covers ("DNS:…" / "IP:…"), one by index; NULL
   past the last. */
const char *cx_test_ca_server_name(size_t index);

#endif
