#define _GNU_SOURCE
#include "CTestCredentials.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <grp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The child's report: the errno of the failed step, or 0 with the descriptor attached. */
static void send_result(int channel, int error, int descriptor) {
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { .iov_base = &error, .iov_len = sizeof(error) };
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1 };
    memset(control, 0, sizeof(control));
    if (descriptor >= 0) {
        message.msg_control = control;
        message.msg_controllen = sizeof(control);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(header), &descriptor, sizeof(int));
    }
    (void)sendmsg(channel, &message, MSG_NOSIGNAL);
}

int listd_test_connect_as(const char *path, uid_t uid, gid_t gid, const gid_t *groups, size_t count) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(address.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(address.sun_path, path);

    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
    pid_t child = fork();
    if (child < 0) {
        int saved = errno;
        close(pair[0]);
        close(pair[1]);
        errno = saved;
        return -1;
    }
    if (child == 0) {
        close(pair[0]);
        if (setgroups(count, count > 0 ? groups : NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0) {
            send_result(pair[1], errno, -1);
            _exit(1);
        }
        int descriptor = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (descriptor < 0 || connect(descriptor, (struct sockaddr *)&address, sizeof(address)) != 0) {
            send_result(pair[1], errno, -1);
            _exit(1);
        }
        send_result(pair[1], 0, descriptor);
        _exit(0);
    }
    close(pair[1]);
    int error = 0;
    int descriptor = -1;
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { .iov_base = &error, .iov_len = sizeof(error) };
    struct msghdr message = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof(control) };
    ssize_t received;
    do {
        received = recvmsg(pair[0], &message, MSG_CMSG_CLOEXEC);
    } while (received < 0 && errno == EINTR);
    int saved = errno;
    close(pair[0]);
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    if (received != (ssize_t)sizeof(error)) {
        errno = received < 0 ? saved : EPROTO;
        return -1;
    }
    if (error != 0) {
        errno = error;
        return -1;
    }
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    if (header == NULL || header->cmsg_type != SCM_RIGHTS) {
        errno = EPROTO;
        return -1;
    }
    memcpy(&descriptor, CMSG_DATA(header), sizeof(int));
    return descriptor;
}

int listd_test_run_closing_descriptors(const char *const argv[], const char *directory, const char *output, const char *errors) {
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) return -1;
    /* The files are opened before the directory changes, so relative paths name the caller's. */
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    posix_spawn_file_actions_addchdir_np(&actions, directory);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    /* Its own process group: past the deadline the whole group is killed (runuser's child too). */
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    int spawned = posix_spawn(&pid, argv[0], &actions, &attributes, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0) {
        errno = spawned;
        return -1;
    }
    /* Waited for at most five minutes: a command that hangs (psql on a server that stopped answering)
       is killed and named rather than holding the test run for ever. */
    int status;
    struct timespec slice = { .tv_sec = 0, .tv_nsec = 5 * 1000 * 1000 };
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int killed = 0;
    for (;;) {
        pid_t ended = waitpid(pid, &status, WNOHANG);
        if (ended == pid) return status;
        if (ended == -1 && errno != EINTR) return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!killed && now.tv_sec - start.tv_sec >= 300) {
            fprintf(stderr, "test harness: %s still ran after 300 s: killed\n", argv[argv[1] != NULL && strcmp(argv[0], "/usr/sbin/runuser") == 0 ? 4 : 0]);
            kill(-pid, SIGKILL);
            killed = 1;
        }
        nanosleep(&slice, NULL);
    }
}

pid_t listd_test_spawn(const char *const argv[], const char *const envp[], int quiet) {
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) return -1;
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (quiet) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t empty;
    sigemptyset(&empty);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    pid_t pid;
    int spawned = posix_spawn(&pid, argv[0], &actions, &attributes, (char *const *)argv, (char *const *)envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (spawned != 0) {
        errno = spawned;
        return -1;
    }
    return pid;
}
