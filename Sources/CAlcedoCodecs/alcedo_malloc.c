#include "alcedo_malloc.h"

#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

int alcedo_malloc_trim(void) {
#if defined(__GLIBC__)
    return malloc_trim(0) ? 1 : 0;
#else
    return 0;
#endif
}

int alcedo_malloc_limit_arenas(int count) {
#if defined(__GLIBC__)
    return mallopt(M_ARENA_MAX, count) == 1 ? 1 : 0;
#else
    (void)count;
    return 0;
#endif
}

int alcedo_malloc_mmap_threshold(size_t bytes) {
#if defined(__GLIBC__)
    return mallopt(M_MMAP_THRESHOLD, (int)(bytes > 0x7fffffff ? 0x7fffffff : bytes)) == 1 ? 1 : 0;
#else
    (void)bytes;
    return 0;
#endif
}

int alcedo_malloc_trim_threshold(size_t bytes) {
#if defined(__GLIBC__)
    return mallopt(M_TRIM_THRESHOLD, (int)(bytes > 0x7fffffff ? 0x7fffffff : bytes)) == 1 ? 1 : 0;
#else
    (void)bytes;
    return 0;
#endif
}

int alcedo_malloc_usage(size_t *in_use, size_t *free_in_heaps) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    *in_use = info.uordblks + info.hblkhd;
    *free_in_heaps = info.fordblks;
    return 1;
#else
    *in_use = 0;
    *free_in_heaps = 0;
    return 0;
#endif
}

#if defined(__linux__)
#include <sys/prctl.h>
#endif

int alcedo_set_parent_death_signal(int signal) {
#if defined(__linux__)
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0, 0, 0) == 0 ? 1 : 0;
#else
    (void)signal;
    return 0;
#endif
}
