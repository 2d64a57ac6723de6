/*
 * OSN_CONTAINER_OF: the object a member is embedded in, from a pointer to the member (as in
 * libuv and the Linux kernel). Event sets, queues and transaction layers hand back the member
 * they were given; this recovers its owner without hand-written offsetof arithmetic.
 */
#ifndef OSN_CONTAINER_OF_H
#define OSN_CONTAINER_OF_H

#include <stddef.h>

#define OSN_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* The same for a const member pointer. */
#define OSN_CONTAINER_OF_CONST(ptr, type, member) \
    ((const type *)((const char *)(ptr)-offsetof(type, member)))

#endif
