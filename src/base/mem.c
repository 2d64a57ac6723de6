/*
 * The pool blocks of include/osn/mem.h. On Linux a block is an anonymous mapping (zeroed by
 * the kernel), cut to a 2 MiB boundary from a mapping one block larger, then advised for
 * transparent huge pages; the advice is only a hint, so a kernel that declines it still gives
 * correct, 4 KiB-paged memory.
 */
#define _DEFAULT_SOURCE
#include "osn/mem.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)

/* Whole blocks: the mapping is made and unmapped in units of OSN_MEM_BLOCK. */
static size_t rounded(size_t bytes)
{
    return (bytes + OSN_MEM_BLOCK - 1) / OSN_MEM_BLOCK * OSN_MEM_BLOCK;
}

void *osn_mem_block_alloc(size_t bytes)
{
    if (bytes == 0 || bytes > SIZE_MAX - 2 * OSN_MEM_BLOCK)
        return NULL;
    size_t n = rounded(bytes), span = n + OSN_MEM_BLOCK;
    char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)p + OSN_MEM_BLOCK - 1) & ~(uintptr_t)(OSN_MEM_BLOCK - 1);
    char *b = (char *)a;
    if (b > p)
        munmap(p, (size_t)(b - p));
    if (p + span > b + n)
        munmap(b + n, (size_t)(p + span - (b + n)));
    (void)madvise(b, n, MADV_HUGEPAGE); /* a hint: without it the memory is as good */
    return b;
}

void osn_mem_block_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, rounded(bytes));
}

#else

void *osn_mem_block_alloc(size_t bytes)
{
    return bytes ? calloc(1, bytes) : NULL;
}

void osn_mem_block_free(void *p, size_t bytes)
{
    (void)bytes;
    free(p);
}

#endif
