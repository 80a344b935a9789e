/* The front door's private test CA. Written in C because OpenSSL's certificate API is
   C (and largely macros); every cryptographic step is OpenSSL's own. */
#include "test_ca.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static const char *const cx_test_ca_server_names[] = {
    "DNS:localhost",
    "IP:127.0.0.1",
    "IP:::1",
    "DNS:api.push.apple.com",
    "DNS:api.development.push.apple.com",
    "DNS:api.sandbox.push.apple.com",
    "DNS:fcm.googleapis.com",
    "DNS:oauth2.googleapis.com",
    "DNS:ps.pndsn.com",
    "DNS:*.pndsn.com",
    "DNS:cloud.appwrite.io",
    "DNS:*.cloud.appwrite.io",
    NULL,
};

const char *cx_test_ca_server_name(size_t index) {
    size_t count = sizeof cx_test_ca_server_names / sizeof *cx_test_ca_server_names - 1;
    return index < count ? cx_test_ca_server_names[index] : NULL;
}

enum { CA_DAYS = 3650, SERVER_DAYS = 397 /* what strict TLS clients accept */ };

static int fail(char *message, size_t size, const char *what) {
    unsigned long code = ERR_get_error();
    char reason[256] = "";
    if (code) ERR_error_string_n(code, reason, sizeof reason);
    snprintf(message, size, "%s%s%s", what, code ? ": " : "", reason);
    ERR_clear_error();
    return -1;
}

static void path(char *out, size_t size, const char *dir, const char *name) {
    snprintf(out, size, "%s/%s", dir, name);
}

static EVP_PKEY *new_key(void) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    if (context && EVP_PKEY_keygen_init(context) > 0 &&
        EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) > 0)
        EVP_PKEY_keygen(context, &key);
    EVP_PKEY_CTX_free(context);
    return key;
}

/* Adds one extension in openssl.cnf syntax, with issuer and subject set for the key ids. */
static int add_extension(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX context;
    X509V3_set_ctx_nodb(&context);
    X509V3_set_ctx(&context, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(NULL, &context, nid, value);
    if (!extension) return 0;
    int ok = X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
    return ok;
}

static X509 *new_certificate(EVP_PKEY *key, const char *common_name, int days) {
    X509 *cert = X509_new();
    if (!cert) return NULL;
    unsigned char serial[16];
    BIGNUM *number = NULL;
    ASN1_INTEGER *asn1 = NULL;
    if (RAND_bytes(serial, sizeof serial) != 1) goto error;
    serial[0] &= 0x7F; /* positive */
    number = BN_bin2bn(serial, sizeof serial, NULL);
    asn1 = number ? BN_to_ASN1_INTEGER(number, NULL) : NULL;
    if (!asn1 || !X509_set_version(cert, 2) || !X509_set_serialNumber(cert, asn1)) goto error;
    if (!X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 24 * 3600))
        goto error;
    X509_NAME *name = X509_get_subject_name(cert);
    if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"cxshell test", -1, -1, 0) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)common_name, -1, -1, 0) ||
        !X509_set_pubkey(cert, key))
        goto error;
    BN_free(number);
    ASN1_INTEGER_free(asn1);
    return cert;
error:
    BN_free(number);
    ASN1_INTEGER_free(asn1);
    X509_free(cert);
    return NULL;
}

static int write_key(const char *file, EVP_PKEY *key) {
    FILE *out = fopen(file, "w");
    if (!out) return 0;
    chmod(file, 0600);
    int ok = PEM_write_PrivateKey(out, key, NULL, NULL, 0, NULL, NULL);
    return fclose(out) == 0 && ok;
}

static int write_certificates(const char *file, X509 *first, X509 *second) {
    FILE *out = fopen(file, "w");
    if (!out) return 0;
    int ok = PEM_write_X509(out, first) && (!second || PEM_write_X509(out, second));
    return fclose(out) == 0 && ok;
}

static X509 *read_certificate(const char *file) {
    FILE *in = fopen(file, "r");
    if (!in) return NULL;
    X509 *cert = PEM_read_X509(in, NULL, NULL, NULL);
    fclose(in);
    return cert;
}

static EVP_PKEY *read_key(const char *file) {
    FILE *in = fopen(file, "r");
    if (!in) return NULL;
    EVP_PKEY *key = PEM_read_PrivateKey(in, NULL, NULL, NULL);
    fclose(in);
    return key;
}

/* Whether `server` covers every name this version serves (a certificate a CA directory
   kept from an older version may lack a service added since). */
static int covers_every_name(X509 *server) {
    for (const char *const *name = cx_test_ca_server_names; *name; name++) {
        const char *value = strchr(*name, ':') + 1;
        if (strncmp(*name, "IP:", 3) == 0) {
            if (X509_check_ip_asc(server, value, 0) != 1) return 0;
        } else {
            char host[256];
            /* A wildcard name is checked through one host it covers. */
            snprintf(host, sizeof host, "%s%s", value[0] == '*' ? "a" : "", value[0] == '*' ? value + 1 : value);
            if (X509_check_host(server, host, 0, 0, NULL) != 1) return 0;
        }
    }
    return 1;
}

/* Whether `server` is signed by `ca`, holds `key`, covers every name, and is valid for
   at least a day more. */
static int server_is_current(X509 *server, EVP_PKEY *key, X509 *ca) {
    if (!server || !key || !covers_every_name(server)) return 0;
    EVP_PKEY *ca_key = X509_get0_pubkey(ca);
    if (!ca_key || X509_verify(server, ca_key) != 1) return 0;
    if (X509_check_private_key(server, key) != 1) return 0;
    time_t tomorrow = time(NULL) + 24 * 3600;
    return X509_cmp_time(X509_get0_notAfter(server), &tomorrow) > 0;
}

int cx_test_ca_ensure(const char *dir, char *message, size_t message_size) {
    char ca_file[4096], ca_key_file[4096], server_file[4096], server_key_file[4096];
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(message, message_size, "cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    path(ca_file, sizeof ca_file, dir, "ca.pem");
    path(ca_key_file, sizeof ca_key_file, dir, "ca-key.pem");
    path(server_file, sizeof server_file, dir, "server.pem");
    path(server_key_file, sizeof server_key_file, dir, "server-key.pem");

    int status = -1;
    X509 *ca = read_certificate(ca_file), *server = NULL;
    EVP_PKEY *ca_key = read_key(ca_key_file), *server_key = NULL;
    if (!ca || !ca_key || X509_check_private_key(ca, ca_key) != 1) {
        X509_free(ca);
        EVP_PKEY_free(ca_key);
        ca_key = new_key();
        ca = ca_key ? new_certificate(ca_key, "cxshell test CA", CA_DAYS) : NULL;
        if (!ca || !X509_set_issuer_name(ca, X509_get_subject_name(ca)) ||
            !add_extension(ca, ca, NID_basic_constraints, "critical,CA:TRUE") ||
            !add_extension(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign") ||
            !add_extension(ca, ca, NID_subject_key_identifier, "hash") ||
            !add_extension(ca, ca, NID_authority_key_identifier, "keyid:always") ||
            !X509_sign(ca, ca_key, EVP_sha256())) {
            status = fail(message, message_size, "cannot make the CA certificate");
            goto done;
        }
        if (!write_key(ca_key_file, ca_key) || !write_certificates(ca_file, ca, NULL)) {
            snprintf(message, message_size, "cannot write the CA into %s: %s", dir, strerror(errno));
            goto done;
        }
        remove(server_file); /* signed by the CA that is gone */
    }

    server = read_certificate(server_file);
    server_key = read_key(server_key_file);
    if (!server_is_current(server, server_key, ca)) {
        X509_free(server);
        EVP_PKEY_free(server_key);
        char names[1024] = "";
        for (const char *const *name = cx_test_ca_server_names; *name; name++) {
            if (names[0]) strncat(names, ",", sizeof names - strlen(names) - 1);
            strncat(names, *name, sizeof names - strlen(names) - 1);
        }
        server_key = new_key();
        server = server_key ? new_certificate(server_key, "cxshell front door", SERVER_DAYS) : NULL;
        if (!server || !X509_set_issuer_name(server, X509_get_subject_name(ca)) ||
            !add_extension(server, ca, NID_basic_constraints, "critical,CA:FALSE") ||
            !add_extension(server, ca, NID_key_usage, "critical,digitalSignature") ||
            !add_extension(server, ca, NID_ext_key_usage, "serverAuth") ||
            !add_extension(server, ca, NID_subject_alt_name, names) ||
            !add_extension(server, ca, NID_subject_key_identifier, "hash") ||
            !add_extension(server, ca, NID_authority_key_identifier, "keyid:always") ||
            !X509_sign(server, ca_key, EVP_sha256())) {
            status = fail(message, message_size, "cannot make the server certificate");
            goto done;
        }
        if (!write_key(server_key_file, server_key) || !write_certificates(server_file, server, ca)) {
            snprintf(message, message_size, "cannot write the server certificate into %s: %s", dir, strerror(errno));
            goto done;
        }
    }
    status = 0;
done:
    X509_free(ca);
    X509_free(server);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(server_key);
    return status;
}
