/* The kvstore plugin as a library cxshell loads (`--plugin build/lib/libkvstore.so`):
   cx.h's entry point registers the store on each app host the shell makes. */
#include "kvstore.h"

cx_status cx_plugin_entry(cx_host *host, uint32_t abi_version) {
    if (abi_version != CX_ABI_VERSION) return CX_ERR_INVALID_ARGUMENT;
    return kvstore_register(host);
}
