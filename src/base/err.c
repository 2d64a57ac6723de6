/*
 * Messages and names for the OSN_E* codes, generated from the one table in osn/err.h.
 */
#include "osn/err.h"

const char *osn_strerror(int err)
{
    switch (err) {
    case OSN_OK:
        return "success";
#define XX(name, msg) \
    case OSN_##name:  \
        return msg;
        OSN_ERRNO_MAP(XX)
#undef XX
    default:
        return "unknown error";
    }
}

const char *osn_err_name(int err)
{
    switch (err) {
    case OSN_OK:
        return "OK";
#define XX(name, msg) \
    case OSN_##name:  \
        return #name;
        OSN_ERRNO_MAP(XX)
#undef XX
    default:
        return "EUNKNOWN";
    }
}
