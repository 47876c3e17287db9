#ifndef LISTD_CSYSTEMD_SHIM_H
#define LISTD_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc hides struct ucred behind _GNU_SOURCE; this is its layout, for SO_PEERCRED. */
typedef struct {
    pid_t pid;
    uid_t uid;
    gid_t gid;
} listd_ucred;

/* Lowers the calling thread's CPU priority to `niceness` (setpriority on the thread id: Linux applies
   it to that thread only). For background work that must not take the CPU from the event loop and
   the writer. Returns 0, or -1 with errno. */
static inline int listd_set_thread_niceness(int niceness) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), niceness);
}

#endif
