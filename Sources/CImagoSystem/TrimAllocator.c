// Returning freed memory to the system: see imago_system.h.
#include "imago_system.h"

#if defined(__linux__)
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__linux__)
// The allocator in use is whichever defines malloc first: glibc's, or a
// preloaded jemalloc or tcmalloc (`imago serve --malloc`). Each has its own
// call to hand free pages back; glibc's malloc_trim does nothing for the
// others, whose free pages would otherwise stay resident until their own
// decay (jemalloc: about ten seconds) or never (tcmalloc).
typedef int (*imago_mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*imago_release_fn)(void);
static imago_mallctl_fn imago_jemalloc_mallctl;
static imago_release_fn imago_tcmalloc_release;
static pthread_once_t imago_allocator_once = PTHREAD_ONCE_INIT;

static void imago_find_allocator(void) {
    imago_jemalloc_mallctl = (imago_mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
    if (!imago_jemalloc_mallctl)
        imago_tcmalloc_release = (imago_release_fn)dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory");
}
#endif

int imago_trim_allocator(void) {
#if defined(__linux__)
    pthread_once(&imago_allocator_once, imago_find_allocator);
    if (imago_jemalloc_mallctl)   // 4096 is MALLCTL_ARENAS_ALL: every arena
        return imago_jemalloc_mallctl("arena.4096.purge", NULL, NULL, NULL, 0) == 0;
    if (imago_tcmalloc_release) {
        imago_tcmalloc_release();
        return 1;
    }
#endif
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
