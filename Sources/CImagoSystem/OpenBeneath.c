// File opening that cannot leave a directory: see imago_system.h.
#define _GNU_SOURCE
#include "imago_system.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/syscall.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#else
struct open_how { uint64_t flags; uint64_t mode; uint64_t resolve; };
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_BENEATH 0x08
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#endif

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

static _Thread_local int used_openat2 = 0;

int imago_open_beneath_used_openat2(void) { return used_openat2; }

/// Refuses what no resolution should see: empty, absolute, `.`, `..`.
static int path_is_plain(const char *path) {
    if (path == NULL || path[0] == '\0' || path[0] == '/') return 0;
    const char *start = path;
    for (const char *cursor = path;; cursor++) {
        if (*cursor == '/' || *cursor == '\0') {
            size_t length = (size_t)(cursor - start);
            if (length == 0) return 0;
            if (length == 1 && start[0] == '.') return 0;
            if (length == 2 && start[0] == '.' && start[1] == '.') return 0;
            if (*cursor == '\0') return 1;
            start = cursor + 1;
        }
    }
}

/// One openat(2) per component, no symbolic link followed.
static int open_by_walk(int root_fd, const char *path, int flags) {
    char component[4096];
    int directory = root_fd;
    const char *start = path;
    for (;;) {
        const char *slash = strchr(start, '/');
        size_t length = slash ? (size_t)(slash - start) : strlen(start);
        if (length >= sizeof component) {
            if (directory != root_fd) close(directory);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(component, start, length);
        component[length] = '\0';
        int next;
        if (slash) {
            next = openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        } else {
            next = openat(directory, component, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        }
        int saved = errno;
        if (directory != root_fd) close(directory);
        if (next < 0) {
            // O_NOFOLLOW on a link: ELOOP (Linux, macOS) or EMLINK (FreeBSD); a link where a directory was expected: ENOTDIR.
            errno = (saved == EMLINK) ? ELOOP : saved;
            return -1;
        }
        if (!slash) return next;
        directory = next;
        start = slash + 1;
    }
}

int imago_open_beneath_walk(int root_fd, const char *path, int flags) {
    used_openat2 = 0;
    if (!path_is_plain(path)) {
        errno = EINVAL;
        return -1;
    }
    return open_by_walk(root_fd, path, flags);
}

int imago_open_beneath(int root_fd, const char *path, int flags) {
    used_openat2 = 0;
    if (!path_is_plain(path)) {
        errno = EINVAL;
        return -1;
    }
#if defined(__linux__)
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_CLOEXEC | O_NOCTTY);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long result;
    // EAGAIN: a rename raced with the check of a link's `..`; retried a
    // few times, then refused as an escape (an attacker may keep racing).
    int attempts = 0;
    do {
        result = syscall(SYS_openat2, root_fd, path, &how, sizeof how);
    } while (result < 0 && (errno == EINTR || (errno == EAGAIN && ++attempts < 16)));
    if (result < 0 && errno == EAGAIN) errno = EXDEV;
    if (result >= 0) {
        used_openat2 = 1;
        return (int)result;
    }
    // ENOSYS: a kernel before 5.6; EPERM: a seccomp filter that refuses it; E2BIG: an older struct.
    if (errno != ENOSYS && errno != EPERM && errno != E2BIG) {
        used_openat2 = 1;
        return -1;
    }
#endif
    return open_by_walk(root_fd, path, flags);
}
