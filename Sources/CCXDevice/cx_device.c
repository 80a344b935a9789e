/* cx_device.h is the ABI; its functions are implemented in Swift (Sources/CXDevice).
   This file only makes the header a C target of its own, compiled once to check it. */
#include "cx_device.h"

typedef int cx_device_header_compiles;
