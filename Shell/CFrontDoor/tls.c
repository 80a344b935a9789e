/* TLS by OpenSSL through memory BIOs (transport.h): the socket is the loop's, OpenSSL
   only turns records into plaintext and back. TLS 1.2 and later; ALPN h2 and
   http/1.1, and none when the client offers neither (the first bytes then decide). */
#include "transport.h"

#include <openssl/err.h>
#include <stdio.h>

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_len, const unsigned char *in,
                       unsigned int in_len, void *arg) {
    (void)ssl, (void)arg;
    static const unsigned char ours[] = "\x02h2\x08http/1.1";
    if (SSL_select_next_proto((unsigned char **)out, out_len, ours, sizeof ours - 1, in, in_len) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no common protocol: go on without ALPN */
    return SSL_TLSEXT_ERR_OK;
}

/* A handshake the door's filter refuses fails with an alert, before any certificate. */
static int check_server_name(SSL *ssl, int *alert, void *arg) {
    cx_front_door *door = arg;
    connection *c = SSL_get_app_data(ssl);
    if (!door->handshake_filter || !c) return SSL_TLSEXT_ERR_OK;
    const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (door->handshake_filter(door->context, sni ? sni : c->server_name)) return SSL_TLSEXT_ERR_OK;
    *alert = SSL_AD_HANDSHAKE_FAILURE;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

SSL_CTX *tls_context(cx_front_door *door, const char *certificate_file, const char *key_file, char *error,
                     size_t error_size) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, certificate_file) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
        unsigned long code = ERR_get_error();
        snprintf(error, error_size, "cannot load the server certificate: %s",
                 code ? ERR_reason_error_string(code) : "unknown error");
        ERR_clear_error();
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
    SSL_CTX_set_tlsext_servername_callback(ctx, check_server_name);
    SSL_CTX_set_tlsext_servername_arg(ctx, door);
    return ctx;
}

/* Moves TLS's output (handshake records, encrypted data) to the socket's queue. */
static void drain(connection *c) {
    unsigned char chunk[CHUNK];
    int n;
    while ((n = BIO_read(c->wbio, chunk, sizeof chunk)) > 0) buffer_append(&c->out, chunk, (size_t)n);
}

void tls_start(connection *c) {
    c->tls = true;
    c->ssl = SSL_new(c->door->ctx);
    c->rbio = BIO_new(BIO_s_mem());
    c->wbio = BIO_new(BIO_s_mem());
    if (!c->ssl || !c->rbio || !c->wbio) {
        BIO_free(c->rbio); /* SSL_set_bio never took them */
        BIO_free(c->wbio);
        c->rbio = c->wbio = NULL;
        c->closing = true;
        return;
    }
    SSL_set_bio(c->ssl, c->rbio, c->wbio);
    SSL_set_app_data(c->ssl, c);
    SSL_set_accept_state(c->ssl);
}

void tls_receive(connection *c, const unsigned char *data, size_t len) {
    BIO_write(c->rbio, data, (int)len);
    unsigned char plain[CHUNK];
    for (;;) {
        int n = SSL_read(c->ssl, plain, sizeof plain);
        if (n <= 0) {
            int error = SSL_get_error(c->ssl, n);
            if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE) c->closing = true;
            ERR_clear_error();
            break;
        }
        const char *sni = SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name);
        if (sni) snprintf(c->server_name, sizeof c->server_name, "%s", sni);
        connection_receive_plain(c, plain, (size_t)n);
        if (c->closing) break;
    }
    drain(c);
}

/* What the connection sends is held as plaintext and sealed together, up to a record's
   16 KB, as nghttpd does: sealed a send at a time, each HTTP/2 frame (an answer's HEADERS,
   its DATA) or HTTP/1.1 chunk piece was a record of its own, with its own header, tag and
   encryption call. */
void tls_send(connection *c, const void *data, size_t len) {
    if (c->unsealed.len + len > CHUNK) tls_seal(c);
    if (len >= CHUNK) {
        SSL_write(c->ssl, data, (int)len);
        drain(c);
        return;
    }
    buffer_append(&c->unsealed, data, len);
}

void tls_seal(connection *c) {
    if (!c->unsealed.len) return;
    SSL_write(c->ssl, c->unsealed.data, (int)c->unsealed.len);
    c->unsealed.len = 0;
    drain(c);
}
