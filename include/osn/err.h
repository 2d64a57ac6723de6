/*
 * Error codes shared by every OSN module.
 *
 * A function returns 0 on success and a negative OSN_E* code on failure. The codes come from one
 * X-macro table so that osn_strerror() and osn_err_name() can never drift from the enum.
 */
#ifndef OSN_ERR_H
#define OSN_ERR_H

#define OSN_ERRNO_MAP(XX)                                      \
    XX(EINVAL, "invalid argument")                             \
    XX(ENOMEM, "out of memory")                                \
    XX(ETOOBIG, "problem too large for this machine's memory") \
    XX(EIO, "input/output error")                              \
    XX(ECONFIG, "invalid scenario")                            \
    XX(ENOTSUP, "not supported by this method")                \
    XX(ENUMERIC, "numerical failure")

enum osn_err {
    OSN_OK = 0,
#define XX(name, msg) OSN_##name,
    OSN__ERR_FIRST_MINUS_ONE = -1000,
    OSN_ERRNO_MAP(XX)
#undef XX
};

/* Returns a static English message for an error code (never NULL). */
const char *osn_strerror(int err);

/* Returns the symbolic name ("EINVAL") of an error code (never NULL). */
const char *osn_err_name(int err);

#endif
