// Returning freed memory to the system: see imago_system.h.
#include "imago_system.h"

#if defined(__GLIBC__) || (defined(__linux__) && !defined(__MUSL__))
#include <malloc.h>
#endif

int imago_trim_allocator(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
