#ifndef LISTD_CSYSTEMD_SHIM_H
#define LISTD_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/types.h>
#include <sys/uio.h>

/* glibc hides struct ucred behind _GNU_SOURCE; this is its layout, for SO_PEERCRED. */
typedef struct {
    pid_t pid;
    uid_t uid;
    gid_t gid;
} listd_ucred;

#endif
