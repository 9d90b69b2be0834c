#define _GNU_SOURCE
#include "imago_process.h"
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

int imago_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return ENOSYS;
#endif
}

int imago_kill_when_parent_dies(void) {
#if defined(__linux__)
    return prctl(PR_SET_PDEATHSIG, SIGKILL);
#else
    return -1;
#endif
}

int imago_child_has_ended(pid_t pid) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        return errno == EINTR ? 0 : -1;
    }
    return info.si_pid != 0 ? 1 : 0;
}
