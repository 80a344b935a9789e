/*
 * kvstore: the example plugin written in C, over cx.h, with jansson for its JSON.
 *
 *   op  set      input {"key":"k","value":<any JSON>}  -> {"key":"k","previous":<old value or null>}
 *   op  get      input {"key":"k"}                     -> {"key":"k","value":<value or null>}
 *   stream changes                                     -> {"key":"k","value":<new value>} for every later set
 *
 * Bad input is answered ok = false with a sentence that names the problem
 * (jansson's line and column for malformed JSON).
 */
#ifndef KVSTORE_H
#define KVSTORE_H

#include "cx.h"

/* Registers a new, empty store on `host` under the name "kv". */
cx_status kvstore_register(cx_host *host);

#endif
