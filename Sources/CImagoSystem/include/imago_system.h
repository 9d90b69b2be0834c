#ifndef IMAGO_SYSTEM_H
#define IMAGO_SYSTEM_H

/// Opens `path`, relative to the directory `root_fd`, so that no step of
/// it can leave that directory: not `..`, not an absolute path, not a
/// symbolic link (absolute, or relative and climbing out), not a mount
/// point's magic link. `flags` are open(2)'s (O_RDONLY, O_NONBLOCK...);
/// O_CLOEXEC and O_NOCTTY are always added.
///
/// On Linux 5.6 and later this is one openat2(2) with RESOLVE_BENEATH and
/// RESOLVE_NO_MAGICLINKS, checked by the kernel at open time, so a path
/// component swapped for a symbolic link between two calls cannot lead
/// out. Elsewhere (older kernels, a seccomp filter that refuses openat2,
/// macOS) each component is opened with openat(2) and O_NOFOLLOW from the
/// descriptor of the one before: no symbolic link is followed at all.
///
/// Returns the descriptor, or -1 with errno set: ENOENT when a component
/// is missing; EXDEV or ELOOP when the path would leave the root (or, in
/// the walk, meets any symbolic link); EINVAL for an empty path, an
/// absolute one, or a `.` or `..` component; ENOTDIR when a directory
/// component is a file.
int imago_open_beneath(int root_fd, const char *path, int flags);

/// The component walk alone (what imago_open_beneath falls back to),
/// for systems without openat2 and for tests: the same contract, with no
/// symbolic link followed at all.
int imago_open_beneath_walk(int root_fd, const char *path, int flags);

/// Whether the last imago_open_beneath on this thread went through
/// openat2 (1) or the component walk (0). For tests and logs.
int imago_open_beneath_used_openat2(void);

/// Hands the allocator's free memory back to the system: glibc's
/// malloc_trim, or, when jemalloc or tcmalloc is preloaded, its purge of
/// every arena or its ReleaseFreeMemory. Does nothing where there is no
/// such call. Returns 1 when memory was released (jemalloc and tcmalloc:
/// when the call succeeded).
int imago_trim_allocator(void);

#endif
