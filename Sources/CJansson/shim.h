#ifndef CX_JANSSON_SHIM_H
#define CX_JANSSON_SHIM_H
#include <jansson.h>

/* jansson exposes these as macros or inline functions over struct fields; named
   functions import into Swift cleanly. */
static inline json_type cx_json_type(const json_t *json) { return json->type; }
static inline void cx_json_release(json_t *json) { json_decref(json); }
static inline int cx_json_error_code(const json_error_t *error) { return (int)json_error_code(error); }
static inline const char *cx_json_error_text(const json_error_t *error) { return error->text; }

#endif
