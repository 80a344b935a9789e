#ifndef CX_HTTP_PARSER_SHIM_H
#define CX_HTTP_PARSER_SHIM_H
/* Node's http-parser from the system (Debian: libhttp-parser-dev), for HTTP/1.1. */
#include <http_parser.h>
#endif
