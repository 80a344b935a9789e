#ifndef CX_OPENSSL_SHIM_H
#define CX_OPENSSL_SHIM_H
/* OpenSSL from the system (Debian: libssl-dev), for TLS, certificates and signatures. */
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#endif
