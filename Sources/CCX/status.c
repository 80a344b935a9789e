#include "cx.h"

uint32_t cx_abi_version(void) { return CX_ABI_VERSION; }

const char *cx_status_name(cx_status status) {
    switch (status) {
    case CX_OK: return "CX_OK";
    case CX_ERR_NULL: return "CX_ERR_NULL";
    case CX_ERR_UTF8: return "CX_ERR_UTF8";
    case CX_ERR_BAD_HANDLE: return "CX_ERR_BAD_HANDLE";
    case CX_ERR_SHUT_DOWN: return "CX_ERR_SHUT_DOWN";
    case CX_ERR_DUPLICATE_ID: return "CX_ERR_DUPLICATE_ID";
    case CX_ERR_DUPLICATE_PLUGIN: return "CX_ERR_DUPLICATE_PLUGIN";
    case CX_ERR_IN_CALLBACK: return "CX_ERR_IN_CALLBACK";
    case CX_ERR_ALREADY_ANSWERED: return "CX_ERR_ALREADY_ANSWERED";
    case CX_ERR_INACTIVE: return "CX_ERR_INACTIVE";
    case CX_UNKNOWN_KEY: return "CX_UNKNOWN_KEY";
    case CX_ERR_INVALID_ARGUMENT: return "CX_ERR_INVALID_ARGUMENT";
    case CX_ERR_IN_PLUGIN: return "CX_ERR_IN_PLUGIN";
    }
    return "CX_UNKNOWN_STATUS";
}
