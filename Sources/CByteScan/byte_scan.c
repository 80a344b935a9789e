/* The scans are inline functions in byte_scan.h; SwiftPM builds a C target from at least
 * one source file. */
#include "byte_scan.h"
