/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.fdpass;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * libfdpass through its Java binding, over real sockets and files: a passed descriptor reads
 * its file after the path is deleted; too many descriptors, a message longer than allowed
 * and a peer that closes are refused with a clear error and no descriptor left open.
 */
class UnixSocketTest {
  @TempDir
  Path dir;

  @BeforeAll
  static void library() throws IOException {
    Assumptions.assumeFalse(Boolean.getBoolean("fdpass.skip"), "libfdpass not built");
    FdPassLibrary.load();
  }

  /** A connected pair through a real listening socket: [client, server side]. */
  private UnixSocket[] pair(UnixServerSocket server) throws IOException {
    UnixSocket client = UnixSocket.connect(server.path());
    UnixSocket accepted = server.accept(5000);
    return new UnixSocket[] {client, accepted};
  }

  /**
   * Descriptors of this JVM open on {@code file}. Only those: other tests in the same JVM
   * open and close descriptors of their own meanwhile (a count of all of them once moved by 3
   * between two lines of this test).
   */
  private static long openFds(Path file) throws IOException {
    Path target = file.toRealPath();
    long n = 0;
    try (java.util.stream.Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) s::iterator) {
        try {
          if (Files.readSymbolicLink(fd).equals(target)) {
            n++;
          }
        } catch (IOException e) {
          // closed since the listing
        }
      }
    }
    return n;
  }

  @Test
  void aPassedFileReadsAfterItsPathIsDeleted() throws Exception {
    byte[] bytes = new byte[100_000];
    new java.util.Random(3).nextBytes(bytes);
    Path file = Files.write(dir.resolve("shuffle_0_7_0.data"), bytes);
    try (UnixServerSocket server = UnixServerSocket.listen(dir.resolve("s.sock"), 4)) {
      UnixSocket[] p = pair(server);
      int fd = Fds.openRead(file);
      p[0].send(new byte[] {42}, fd);
      Fds.close(fd);
      Files.delete(file);
      assertTrue(!Files.exists(file));
      UnixSocket.Message m = p[1].receive(16, 2, 5000);
      assertArrayEquals(new byte[] {42}, m.body());
      assertEquals(1, m.fds().length);
      long[] st = Fds.stat(m.fds()[0]);
      assertEquals(Fds.REGULAR_FILE, st[0]);
      assertEquals(bytes.length, st[1]);
      // Through /proc/self/fd/N, as the node service's registry opens it.
      assertArrayEquals(bytes, Files.readAllBytes(Fds.procPath(m.fds()[0])));
      PeerCredentials peer = p[1].peer();
      assertEquals(ProcessHandle.current().pid(), peer.pid());
      Fds.close(m.fds()[0]);
      p[0].close();
      p[1].close();
    }
  }

  @Test
  void refusalsAreClearAndLeaveNoDescriptorOpen() throws Exception {
    Path file = Files.write(dir.resolve("f"), new byte[] {1, 2, 3});
    try (UnixServerSocket server = UnixServerSocket.listen(dir.resolve("s.sock"), 4)) {
      UnixSocket[] p = pair(server);
      int fd = Fds.openRead(file);
      long before = openFds(file);
      assertEquals(1, before, "only this test's own descriptor is open on the file");
      p[0].send(new byte[] {1}, fd, fd, fd);
      IOException tooMany = assertThrows(RefusedMessageException.class,
          () -> p[1].receive(16, 2, 5000));
      assertTrue(tooMany.getMessage().contains("carried more than 2 file descriptors"),
          tooMany.getMessage());
      assertEquals(before, openFds(file), "the three passed descriptors were closed");
      // Longer than the receiver allows: refused whole, its descriptor closed.
      p[0].send(new byte[200], fd);
      IOException truncated = assertThrows(RefusedMessageException.class,
          () -> p[1].receive(100, 2, 5000));
      assertTrue(truncated.getMessage().contains("longer than 100 bytes"),
          truncated.getMessage());
      assertEquals(before, openFds(file));
      // The sender's own limits.
      IOException nine = assertThrows(IOException.class,
          () -> p[0].send(new byte[1], new int[9]));
      assertTrue(nine.getMessage().contains("at most 8 descriptors"), nine.getMessage());
      assertThrows(IOException.class, () -> p[0].send(new byte[0]));
      // The connection is still usable after the refusals.
      p[0].send(new byte[] {7});
      assertArrayEquals(new byte[] {7}, p[1].receive(16, 2, 5000).body());
      assertNull(p[1].receive(16, 2, 50), "no message: a timeout, not an error");
      // The peer closes while the receiver waits for the rest of the exchange.
      CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          p[1].receive(16, 2, 10_000);
          return null;
        } catch (IOException e) {
          return e;
        }
      });
      Thread.sleep(100);
      p[0].close();
      Throwable closed = waiting.get(10, TimeUnit.SECONDS);
      assertTrue(closed instanceof EOFException, String.valueOf(closed));
      assertTrue(closed.getMessage().contains("closed the connection"), closed.getMessage());
      IOException broken = assertThrows(IOException.class, () -> p[1].send(new byte[] {1}));
      assertTrue(broken.getMessage().contains("Broken pipe"), broken.getMessage());
      Fds.close(fd);
      p[1].close();
      // A closed socket's number may name another file by now: never used again.
      IOException closedSocket = assertThrows(IOException.class,
          () -> p[1].send(new byte[] {1}));
      assertTrue(closedSocket.getMessage().contains("is closed"), closedSocket.getMessage());
    }
  }

  @Test
  void aLiveSocketIsNotTakenOverAStaleOneIs() throws Exception {
    Path path = dir.resolve("s.sock");
    try (UnixServerSocket server = UnixServerSocket.listen(path, 4)) {
      IOException taken = assertThrows(IOException.class, () -> UnixServerSocket.listen(path, 4));
      assertTrue(taken.getMessage().contains("another process listens there"),
          taken.getMessage());
    }
    assertTrue(!Files.exists(path), "close removes the socket file");
    // A stale socket file (its process gone without removing it) is replaced.
    int fd = UnixSocketNative.listen(path.toString(), 1);
    UnixSocketNative.close(fd);
    assertTrue(Files.exists(path));
    try (UnixServerSocket server = UnixServerSocket.listen(path, 4)) {
      UnixSocket c = UnixSocket.connect(path);
      c.close();
    }
    IOException missing = assertThrows(IOException.class, () -> UnixSocket.connect(path));
    assertTrue(missing.getMessage().contains("is the node service running"),
        missing.getMessage());
    String longName = "x".repeat(120);
    IOException tooLong = assertThrows(IOException.class,
        () -> UnixServerSocket.listen(new File("/tmp/" + longName).toPath(), 1));
    assertTrue(tooLong.getMessage().contains("at most 107 bytes"), tooLong.getMessage());
  }

  @Test
  void closeWakesABlockedAccept() throws Exception {
    UnixServerSocket server = UnixServerSocket.listen(dir.resolve("s.sock"), 4);
    CompletableFuture<Throwable> accepting = CompletableFuture.supplyAsync(() -> {
      try {
        server.accept(-1);
        return null;
      } catch (IOException e) {
        return e;
      }
    });
    Thread.sleep(100);
    server.close();
    Throwable woken = accepting.get(10, TimeUnit.SECONDS);
    assertTrue(woken != null && woken.getMessage().contains("was closed"), String.valueOf(woken));
  }
}
