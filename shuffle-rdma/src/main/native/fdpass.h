/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libfdpass: file descriptors passed between processes of one host over an AF_UNIX
 * SOCK_SEQPACKET socket (SCM_RIGHTS), and the peer's credentials (SO_PEERCRED). Used by the
 * node service and the executors that hand map outputs to it. Depends on libc only, so it
 * loads on hosts without rdma-core. Every call returns a value >= 0 or -errno and never
 * raises a signal (sends use MSG_NOSIGNAL); every descriptor it creates is close-on-exec.
 */
#ifndef SHUFFLE_RDMA_FDPASS_H
#define SHUFFLE_RDMA_FDPASS_H

#include <stddef.h>
#include <stdint.h>

/* Most descriptors one message may carry, and the longest message. */
#define FDPASS_MAX_FDS 8
#define FDPASS_MAX_MESSAGE 65536

/* What fdpass_version() returns; FdPassLibrary.EXPECTED must equal it. */
#define FDPASS_VERSION "shuffle-rdma-fdpass 3"

const char *fdpass_version(void);

/* A listening socket bound to path (which must not exist): fd, or -errno
 * (-ENAMETOOLONG for a path longer than sockaddr_un holds). */
int fdpass_listen(const char *path, int backlog);

/* The next connection: fd; -ETIMEDOUT when none came within timeout_ms (< 0: wait);
 * -EINVAL once the listening socket was shut down. */
int fdpass_accept(int listen_fd, int timeout_ms);

/* A connection to the socket at path: fd or -errno (-ECONNREFUSED: nobody listens). */
int fdpass_connect(const char *path);

/* Sends one message of len bytes (1..FDPASS_MAX_MESSAGE) with nfds descriptors
 * (0..FDPASS_MAX_FDS): 0, -EMSGSIZE for a length or count out of range, -EPIPE when the
 * peer is gone, or another -errno. The message arrives whole or not at all. */
int fdpass_send(int fd, const void *msg, size_t len, const int *fds, int nfds);

/*
 * Receives one message into buf (cap bytes) and its descriptors into fds (at most max_fds,
 * *nfds set to how many came). Returns the message length (> 0), 0 when the peer closed the
 * connection, or -errno:
 *   -ETIMEDOUT     no message within timeout_ms (< 0: wait);
 *   -EMSGSIZE      the message was longer than cap (it is discarded, its descriptors closed);
 *   -ETOOMANYREFS  it carried more than max_fds descriptors (all that came are closed);
 *   -EPROTO        it carried control data other than SCM_RIGHTS (descriptors closed).
 * On any refusal no descriptor is left open.
 */
long fdpass_recv(int fd, void *buf, size_t cap, int *fds, int max_fds, int *nfds,
                 int timeout_ms);

/* The connected peer's pid, uid and gid (as the kernel recorded them at connect). */
int fdpass_peer_credentials(int fd, int32_t out[3]);

/* Opens path read-only (O_CLOEXEC): fd or -errno. */
int fdpass_open_read(const char *path);

/* out[0]: the file type bits (st_mode & S_IFMT), out[1]: the size in bytes, out[2]: the
 * descriptor's status flags (F_GETFL: access mode, O_PATH). A receiver checks the access
 * mode before it opens the file again through /proc/self/fd: an O_PATH or write-only
 * descriptor does not prove the sender may read the file. */
int fdpass_stat(int fd, int64_t out[3]);

/* Gives the open file fd one more name, target (a hard link, which must not exist yet),
 * through /proc/self/fd/N: the node service keeps handed-over outputs reachable across its
 * restarts this way. 0 or -errno: -EXDEV when target is on another filesystem than the file,
 * -ENOENT when the file has no name left (deleted), -EPERM where protected_hardlinks forbids it. */
int fdpass_link(int fd, const char *target);

/* Wakes threads blocked in accept or recv on fd (they return -EINVAL or 0). */
int fdpass_shutdown(int fd);

int fdpass_close(int fd);

#endif
