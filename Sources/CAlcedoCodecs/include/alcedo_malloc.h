#ifndef ALCEDO_MALLOC_H
#define ALCEDO_MALLOC_H
/* glibc's allocator controls (<malloc.h>), which Swift's Glibc module does not import. */
#include <stddef.h>

/* malloc_trim(0): returns 1 when memory went back to the system, 0 otherwise or without glibc. */
int alcedo_malloc_trim(void);

/* mallopt(M_ARENA_MAX, count): 1 when the allocator took it, 0 otherwise or without glibc. */
int alcedo_malloc_limit_arenas(int count);

/* mallopt(M_MMAP_THRESHOLD, bytes): allocations of at least `bytes` get pages of their own,
   returned to the system when freed; a fixed threshold also stops glibc from raising it after
   each large free. 1 when the allocator took it, 0 otherwise or without glibc. */
int alcedo_malloc_mmap_threshold(size_t bytes);

/* mallopt(M_TRIM_THRESHOLD, bytes): free memory at the top of a heap is kept up to `bytes`
   before free() gives it back; 1 when the allocator took it, 0 otherwise or without glibc. */
int alcedo_malloc_trim_threshold(size_t bytes);

/* From mallinfo2(): bytes handed out (in use, mmapped chunks included) and bytes kept free in
   the heaps; both 0 without glibc. Returns 1 when the figures are real. */
int alcedo_malloc_usage(size_t *in_use, size_t *free_in_heaps);

/* prctl(PR_SET_PDEATHSIG, signal): the calling process gets `signal` when its parent ends.
   Returns 1 when set, 0 otherwise or off Linux. (prctl is not in Swift's Glibc module.) */
int alcedo_set_parent_death_signal(int signal);

#endif
