/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "fdpass.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

const char *fdpass_version(void) {
  return FDPASS_VERSION;
}

static int fill_address(const char *path, struct sockaddr_un *addr) {
  size_t n = strlen(path);
  if (n == 0) {
    return -EINVAL;
  }
  if (n >= sizeof(addr->sun_path)) {
    return -ENAMETOOLONG;
  }
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  memcpy(addr->sun_path, path, n + 1);
  return 0;
}

int fdpass_listen(const char *path, int backlog) {
  struct sockaddr_un addr;
  int rc = fill_address(path, &addr);
  if (rc < 0) {
    return rc;
  }
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -errno;
  }
  if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, backlog) < 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

/* 1 when fd is readable, 0 on timeout, -errno. */
static int wait_readable(int fd, int timeout_ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  for (;;) {
    int n = poll(&p, 1, timeout_ms < 0 ? -1 : timeout_ms);
    if (n >= 0) {
      return n;
    }
    if (errno != EINTR) {
      return -errno;
    }
  }
}

int fdpass_accept(int listen_fd, int timeout_ms) {
  for (;;) {
    int ready = wait_readable(listen_fd, timeout_ms);
    if (ready < 0) {
      return ready;
    }
    if (ready == 0) {
      return -ETIMEDOUT;
    }
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
      return fd;
    }
    if (errno != EINTR && errno != ECONNABORTED) {
      return -errno;
    }
  }
}

int fdpass_connect(const char *path) {
  struct sockaddr_un addr;
  int rc = fill_address(path, &addr);
  if (rc < 0) {
    return rc;
  }
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return -errno;
  }
  while (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
    if (errno != EINTR) {
      int err = errno;
      close(fd);
      return -err;
    }
  }
  return fd;
}

int fdpass_send(int fd, const void *msg, size_t len, const int *fds, int nfds) {
  if (len == 0 || len > FDPASS_MAX_MESSAGE || nfds < 0 || nfds > FDPASS_MAX_FDS) {
    return -EMSGSIZE;
  }
  union {
    char buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  if (nfds > 0) {
    memset(&control, 0, sizeof(control));
    m.msg_control = control.buf;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  for (;;) {
    ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n >= 0) {
      return (size_t)n == len ? 0 : -EIO; /* seqpacket: whole or nothing */
    }
    if (errno != EINTR) {
      return -errno;
    }
  }
}

/* Closes every descriptor the control data of m carries. */
static void close_passed(struct msghdr *m) {
  for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      int passed[FDPASS_MAX_FDS];
      memcpy(passed, CMSG_DATA(c), sizeof(int) * (n > FDPASS_MAX_FDS ? FDPASS_MAX_FDS : n));
      for (int i = 0; i < n && i < FDPASS_MAX_FDS; i++) {
        close(passed[i]);
      }
    }
  }
}

long fdpass_recv(int fd, void *buf, size_t cap, int *fds, int max_fds, int *nfds,
                 int timeout_ms) {
  *nfds = 0;
  if (max_fds < 0 || max_fds > FDPASS_MAX_FDS || cap == 0) {
    return -EINVAL;
  }
  int ready = wait_readable(fd, timeout_ms);
  if (ready < 0) {
    return ready;
  }
  if (ready == 0) {
    return -ETIMEDOUT;
  }
  /* Room for FDPASS_MAX_FDS whatever max_fds is: a peer sending a few more than this
   * receiver allows gets a clear refusal, and only a flood past that truncates. */
  union {
    char buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = buf, .iov_len = cap};
  struct msghdr m;
  ssize_t n;
  do {
    memset(&m, 0, sizeof(m));
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control.buf;
    m.msg_controllen = sizeof(control.buf);
    n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return -errno;
  }
  int count = 0;
  int refusal = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      count += (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    } else {
      refusal = -EPROTO;
    }
  }
  if (m.msg_flags & MSG_CTRUNC || count > max_fds) {
    refusal = -ETOOMANYREFS;
  } else if (m.msg_flags & MSG_TRUNC) {
    refusal = -EMSGSIZE;
  }
  if (refusal != 0) {
    close_passed(&m);
    return refusal;
  }
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
    int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    memcpy(fds + *nfds, CMSG_DATA(c), sizeof(int) * k);
    *nfds += k;
  }
  return (long)n;
}

int fdpass_peer_credentials(int fd, int32_t out[3]) {
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
    return -errno;
  }
  out[0] = (int32_t)cred.pid;
  out[1] = (int32_t)cred.uid;
  out[2] = (int32_t)cred.gid;
  return 0;
}

int fdpass_open_read(const char *path) {
  int fd;
  do {
    fd = open(path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd < 0 ? -errno : fd;
}

int fdpass_stat(int fd, int64_t out[3]) {
  struct stat st;
  if (fstat(fd, &st) < 0) {
    return -errno;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) {
    return -errno;
  }
  out[0] = (int64_t)(st.st_mode & S_IFMT);
  out[1] = (int64_t)st.st_size;
  out[2] = (int64_t)flags;
  return 0;
}

int fdpass_link(int fd, const char *target) {
  char proc[32];
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  /* AT_SYMLINK_FOLLOW links the file the magic link names, not the link itself; unlike
   * AT_EMPTY_PATH it needs no CAP_DAC_READ_SEARCH. */
  return linkat(AT_FDCWD, proc, AT_FDCWD, target, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

int fdpass_shutdown(int fd) {
  return shutdown(fd, SHUT_RDWR) < 0 ? -errno : 0;
}

int fdpass_close(int fd) {
  /* Linux releases the descriptor even when close reports EINTR: never retry. */
  return close(fd) < 0 && errno != EINTR ? -errno : 0;
}
