/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
/*
 * libfdpass over real sockets, files and pipes: a passed descriptor still reads its file
 * after the path is deleted; refusals (too many descriptors, a message longer than the
 * buffer, foreign control data) leave no descriptor open; a closed peer reads as 0; a
 * shutdown wakes a blocked accept; the peer's credentials are this process's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../fdpass.h"

static int failures;

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                             \
      fprintf(stderr, "\n");                                    \
      failures++;                                               \
    }                                                           \
  } while (0)

static int open_fds(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
    n += e->d_name[0] != '.';
  }
  if (d != NULL) {
    closedir(d);
  }
  return n;
}

static void pair(int sv[2]) {
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    perror("socketpair");
    exit(2);
  }
}

static char dir[] = "/tmp/test_fdpass.XXXXXX";

static void passed_file_outlives_its_path(void) {
  char path[256];
  snprintf(path, sizeof(path), "%s/shuffle_0_1_0.data", dir);
  FILE *f = fopen(path, "w");
  fputs("map output bytes", f);
  fclose(f);
  int file = fdpass_open_read(path);
  CHECK(file >= 0, "open_read %d", file);
  int sv[2];
  pair(sv);
  CHECK(fdpass_send(sv[0], "H", 1, &file, 1) == 0, "send");
  close(file);
  CHECK(unlink(path) == 0, "unlink");
  char buf[16];
  int fds[2] = {-1, -1};
  int n = 0;
  long len = fdpass_recv(sv[1], buf, sizeof(buf), fds, 2, &n, 1000);
  CHECK(len == 1 && n == 1 && buf[0] == 'H', "len %ld n %d", len, n);
  char text[32] = {0};
  CHECK(pread(fds[0], text, sizeof(text) - 1, 0) == 16, "pread");
  CHECK(strcmp(text, "map output bytes") == 0, "read '%s'", text);
  int64_t st[3];
  CHECK(fdpass_stat(fds[0], st) == 0 && st[0] == S_IFREG && st[1] == 16, "stat %lld %lld",
        (long long)st[0], (long long)st[1]);
  CHECK((st[2] & O_ACCMODE) == O_RDONLY && (st[2] & O_PATH) == 0, "flags 0%llo",
        (long long)st[2]);
  /* An O_PATH descriptor (openable without read permission) says so in its flags. */
  int opath = open(dir, O_PATH | O_CLOEXEC);
  CHECK(opath >= 0 && fdpass_stat(opath, st) == 0 && (st[2] & O_PATH) != 0, "O_PATH flags");
  close(opath);
  CHECK((fcntl(fds[0], F_GETFD) & FD_CLOEXEC) != 0, "received descriptor is close-on-exec");
  fdpass_close(fds[0]);
  close(sv[0]);
  close(sv[1]);
}

/* A received descriptor gets a second name (the node service's state directory), which
 * keeps the bytes after the original path goes; an existing target is refused. */
static void link_names_a_received_file(void) {
  char path[256], target[256];
  snprintf(path, sizeof(path), "%s/shuffle_0_2_0.index", dir);
  snprintf(target, sizeof(target), "%s/kept.index", dir);
  FILE *f = fopen(path, "w");
  fputs("index", f);
  fclose(f);
  int file = fdpass_open_read(path);
  CHECK(file >= 0, "open_read %d", file);
  CHECK(fdpass_link(file, target) == 0, "link");
  CHECK(fdpass_link(file, target) == -EEXIST, "a second link at one target");
  CHECK(unlink(path) == 0, "unlink");
  struct stat a, b;
  CHECK(fstat(file, &a) == 0 && stat(target, &b) == 0 && a.st_ino == b.st_ino
        && b.st_nlink == 1, "the target is the passed file");
  CHECK(fdpass_link(-1, target) == -ENOENT || fdpass_link(-1, target) == -EBADF,
        "no such descriptor");
  unlink(target);
  fdpass_close(file);
}

static void refusals_leave_nothing_open(void) {
  int sv[2];
  pair(sv);
  int p[2];
  if (pipe(p) != 0) {
    exit(2);
  }
  int before = open_fds();
  int three[3] = {p[0], p[1], p[0]};
  char buf[64];
  int fds[2];
  int n = -1;
  /* More descriptors than this receiver takes. */
  CHECK(fdpass_send(sv[0], "x", 1, three, 3) == 0, "send 3");
  CHECK(fdpass_recv(sv[1], buf, sizeof(buf), fds, 2, &n, 1000) == -ETOOMANYREFS, "3 > 2");
  CHECK(n == 0 && open_fds() == before, "n %d, %d open, %d before", n, open_fds(), before);
  /* More than any message may carry: sent around fdpass_send, which refuses it. */
  int many[12];
  for (int i = 0; i < 12; i++) {
    many[i] = p[0];
  }
  CHECK(fdpass_send(sv[0], "x", 1, many, 12) == -EMSGSIZE, "send refuses 12");
  union {
    char b[CMSG_SPACE(sizeof(many))];
    struct cmsghdr a;
  } control;
  struct iovec iov = {.iov_base = "x", .iov_len = 1};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.b,
                     .msg_controllen = sizeof(control.b)};
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(many));
  memcpy(CMSG_DATA(c), many, sizeof(many));
  CHECK(sendmsg(sv[0], &m, 0) == 1, "raw sendmsg of 12");
  CHECK(fdpass_recv(sv[1], buf, sizeof(buf), fds, 2, &n, 1000) == -ETOOMANYREFS, "12");
  CHECK(open_fds() == before, "%d open, %d before", open_fds(), before);
  /* A message longer than the buffer: refused whole, its descriptor closed. */
  char big[200];
  memset(big, 'b', sizeof(big));
  CHECK(fdpass_send(sv[0], big, sizeof(big), p, 1) == 0, "send big");
  CHECK(fdpass_recv(sv[1], buf, sizeof(buf), fds, 2, &n, 1000) == -EMSGSIZE, "truncated");
  CHECK(open_fds() == before, "%d open, %d before", open_fds(), before);
  /* Credentials are control data too, but not SCM_RIGHTS. */
  int on = 1;
  setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
  CHECK(fdpass_send(sv[0], "c", 1, NULL, 0) == 0, "send plain");
  CHECK(fdpass_recv(sv[1], buf, sizeof(buf), fds, 2, &n, 1000) == -EPROTO, "credentials");
  on = 0;
  setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
  /* Bounds of send. */
  CHECK(fdpass_send(sv[0], big, 0, NULL, 0) == -EMSGSIZE, "empty message");
  CHECK(fdpass_send(sv[0], big, FDPASS_MAX_MESSAGE + 1, NULL, 0) == -EMSGSIZE, "too long");
  /* Nothing waiting: a timeout; the peer gone: 0, then sends fail with EPIPE. */
  CHECK(fdpass_recv(sv[1], buf, sizeof(buf), fds, 2, &n, 50) == -ETIMEDOUT, "timeout");
  close(sv[0]);
  CHECK(fdpass_recv(sv[1], buf, sizeof(buf), fds, 2, &n, 1000) == 0, "peer closed");
  CHECK(fdpass_send(sv[1], "x", 1, NULL, 0) == -EPIPE, "send to a closed peer");
  close(sv[1]);
  close(p[0]);
  close(p[1]);
}

static void *accept_thread(void *arg) {
  int *fd = arg;
  fd[1] = fdpass_accept(fd[0], -1);
  return NULL;
}

static void listen_connect_accept(void) {
  char path[256];
  snprintf(path, sizeof(path), "%s/service.sock", dir);
  int lfd = fdpass_listen(path, 8);
  CHECK(lfd >= 0, "listen %d", lfd);
  CHECK(fdpass_listen(path, 8) == -EADDRINUSE, "second listen on one path");
  int cfd = fdpass_connect(path);
  CHECK(cfd >= 0, "connect %d", cfd);
  int sfd = fdpass_accept(lfd, 1000);
  CHECK(sfd >= 0, "accept %d", sfd);
  int32_t cred[3];
  CHECK(fdpass_peer_credentials(sfd, cred) == 0, "peercred");
  CHECK(cred[0] == getpid() && cred[1] == (int32_t)getuid() && cred[2] == (int32_t)getgid(),
        "pid %d uid %d gid %d", cred[0], cred[1], cred[2]);
  CHECK(fdpass_accept(lfd, 50) == -ETIMEDOUT, "accept timeout");
  /* A blocked accept wakes when the listening socket is shut down. */
  int args[2] = {lfd, 0};
  pthread_t t;
  pthread_create(&t, NULL, accept_thread, args);
  usleep(100 * 1000);
  CHECK(fdpass_shutdown(lfd) == 0, "shutdown");
  pthread_join(t, NULL);
  CHECK(args[1] == -EINVAL, "woken accept returned %d", args[1]);
  fdpass_close(cfd);
  fdpass_close(sfd);
  fdpass_close(lfd);
  unlink(path);
  CHECK(fdpass_connect(path) == -ENOENT, "connect to a missing socket");
  char longpath[200];
  memset(longpath, 'a', sizeof(longpath) - 1);
  longpath[sizeof(longpath) - 1] = 0;
  CHECK(fdpass_listen(longpath, 1) == -ENAMETOOLONG, "long path");
  CHECK(fdpass_open_read("/nonexistent/x") == -ENOENT, "open missing");
}

int main(void) {
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  passed_file_outlives_its_path();
  link_names_a_received_file();
  refusals_leave_nothing_open();
  listen_connect_accept();
  rmdir(dir);
  if (failures > 0) {
    fprintf(stderr, "test_fdpass: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_fdpass: ok (%s)\n", fdpass_version());
  return 0;
}
