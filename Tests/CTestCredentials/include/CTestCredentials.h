#ifndef LISTD_CTESTCREDENTIALS_H
#define LISTD_CTESTCREDENTIALS_H

#include <sys/types.h>

/* Connects to the Unix socket at `path` as user `uid`, group `gid` and the `count` supplementary groups
   `groups` (none when `count` is 0), so that
   the server's SO_PEERCRED reads those credentials, and returns the connected descriptor to the caller.

   A forked child drops its privileges (setgroups, setgid, setuid), connects, and passes the descriptor
   back over a socket pair (SCM_RIGHTS); the kernel records the peer's credentials at connect(). The
   calling process must be root. Returns the descriptor, or -1 with errno set (in the child's failure
   case, the errno of the step that failed). Only async-signal-safe calls run in the child. */
int listd_test_connect_as(const char *path, uid_t uid, gid_t gid, const gid_t *groups, size_t count);

/* Runs `argv[0]` with `argv` (NULL-terminated) in the working directory `directory`, standard input from
   /dev/null, standard output into the file `output` and standard error into the file `errors` (both
   opened by the caller's user, before the directory changes, never through a symbolic link), with every
   other descriptor closed in the child (a server it leaves running, such as `pg_ctl start`'s, then holds
   none of the caller's pipes). Waits for it and returns its wait status, or -1 with errno set when it
   cannot start. */
int listd_test_run_closing_descriptors(const char *const argv[], const char *directory, const char *output, const char *errors);

/* Starts `argv[0]` with `argv` and `envp` (both NULL-terminated) in a process group of its own, standard
   input from /dev/null, standard error to /dev/null when `quiet`, every descriptor above stderr closed in
   the child, without Foundation (a program that closes what it inherited, as systemd-socket-activate
   does, would close the socket Foundation watches for the child's end). Returns the pid, or -1 with
   errno set. The caller reaps it (waitpid). */
pid_t listd_test_spawn(const char *const argv[], const char *const envp[], int quiet);
#endif
