/* cx.h is the ABI; its functions are implemented in Swift (Sources/CX). This file
   only makes the header a C target of its own, compiled once to check it. */
#include "cx.h"

typedef int cx_header_compiles;
