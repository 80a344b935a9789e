#ifndef CX_NGHTTP2_SHIM_H
#define CX_NGHTTP2_SHIM_H
/* nghttp2 from the system (Debian: libnghttp2-dev): HTTP/2 framing and flow control. */
#include <nghttp2/nghttp2.h>
#endif
