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

/* SO_PEERGROUPS (Linux 4.13): the supplementary groups of the process that connected, as the kernel
   recorded them at connect(), sorted ascending. Read into a fixed buffer; entries past the groups stay 0.
   A peer in more groups than fit makes the read fail (ERANGE). */
#include <sys/socket.h>
#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif
typedef struct {
    gid_t groups[1024];
} listd_peergroups;
static const int listd_so_peergroups = SO_PEERGROUPS;

/* The socket type of a plugin's stream socketpair, closed on exec. A constant of this module's own: Swift's
   `Glibc.SOCK_STREAM` resolves only when Glibc's module happens to own <bits/socket_type.h>, which depends
   on which module included it first in a build. */
static const int listd_stream_socket_cloexec = SOCK_STREAM | SOCK_CLOEXEC;

/* Lowers the calling thread's CPU priority to `niceness` (setpriority on the thread id: Linux applies
   it to that thread only). For background work that must not take the CPU from the event loop and
   the writer. Returns 0, or -1 with errno. */
static inline int listd_set_thread_niceness(int niceness) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), niceness);
}

#endif
