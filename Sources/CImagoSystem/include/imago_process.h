#pragma once
#include <spawn.h>
#include <sys/types.h>

/*
 * The few process calls the SVG rasteriser's parent and child need that
 * Swift's Glibc module does not expose (they are GNU or Linux extensions).
 * Each returns 0 on success and -1 (or an error number, as its libc call
 * does) otherwise; on systems without the call it does nothing and says so.
 */

/** Adds "close every descriptor from `lowest` up" to a spawn's file actions
 *  (posix_spawn_file_actions_addclosefrom_np, glibc 2.34); returns ENOSYS where there is none. */
int imago_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/** Asks the kernel to send SIGKILL to this process when the thread that
 *  spawned it ends (prctl PR_SET_PDEATHSIG, Linux); returns -1 elsewhere. */
int imago_kill_when_parent_dies(void);

/** Whether the child `pid` has ended, without reaping it (waitid with
 *  WNOWAIT): 1 when it has, 0 while it runs, -1 on an error (no such child). */
int imago_child_has_ended(pid_t pid);
