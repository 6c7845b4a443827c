/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.spark.shuffle.rdma.testing.ReadResult;
import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.apache.spark.shuffle.rdma.transport.MappedFileSource;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With spark.network.crypto.enabled the tcp transport's bytes on the wire are ciphertext:
 * a recording proxy between client and server never sees the region's plaintext. The same
 * test without encryption sees it, so the check can fail.
 */
class TcpEncryptionTest {
  @TempDir
  File dir;

  /** Forwards one connection to the server and records what the server sends back. */
  static final class RecordingProxy implements AutoCloseable {
    final ServerSocket listener;
    final ByteArrayOutputStream fromServer = new ByteArrayOutputStream();

    RecordingProxy(PeerAddress target) throws Exception {
      listener = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
      Thread t = new Thread(() -> {
        try (Socket in = listener.accept();
             Socket out = new Socket(target.host(), target.port())) {
          Thread up = pump(in.getInputStream(), out.getOutputStream(), null);
          pump(out.getInputStream(), in.getOutputStream(), fromServer).join();
          up.join();
        } catch (Exception ignored) {
          // connection ends with the test
        }
      });
      t.setDaemon(true);
      t.start();
    }

    private static Thread pump(InputStream from, OutputStream to, ByteArrayOutputStream copy) {
      Thread t = new Thread(() -> {
        byte[] buf = new byte[8192];
        try {
          int n;
          while ((n = from.read(buf)) > 0) {
            if (copy != null) {
              synchronized (copy) {
                copy.write(buf, 0, n);
              }
            }
            to.write(buf, 0, n);
            to.flush();
          }
        } catch (Exception ignored) {
          // socket closed
        }
      });
      t.setDaemon(true);
      t.start();
      return t;
    }

    PeerAddress address() {
      return new PeerAddress("127.0.0.1", listener.getLocalPort());
    }

    String recorded() {
      synchronized (fromServer) {
        return new String(fromServer.toByteArray(), StandardCharsets.ISO_8859_1);
      }
    }

    @Override
    public void close() throws Exception {
      listener.close();
    }
  }

  private String wireTraffic(boolean encrypt) throws Exception {
    SparkConf conf = new SparkConf(false).set("spark.network.crypto.enabled",
        Boolean.toString(encrypt));
    // Over spark.shuffle.rdma.tcp.sendfileThreshold (64k) and registered with its file, so
    // without encryption the answer goes by sendfile, with it through the cipher.
    byte[] content = "PLAINTEXT-SHUFFLE-BYTES;".repeat(4400).getBytes(StandardCharsets.US_ASCII);
    try (TcpTransport server = TcpTestSupport.transport(conf, "k3y");
         TcpTransport client = TcpTestSupport.transport(conf, "k3y")) {
      File file = File.createTempFile("served", ".data", dir);
      Files.write(file.toPath(), content);
      MappedByteBuffer mapping;
      try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
        mapping = ch.map(FileChannel.MapMode.READ_ONLY, 0, content.length);
      }
      RegisteredRegion region = server.register(mapping, BackingCheck.NONE,
          FileChannel.MapMode.READ_ONLY, new MappedFileSource(file, 0));
      try (RecordingProxy proxy = new RecordingProxy(server.localAddress())) {
        ReadResult r = new ReadResult();
        client.connect(proxy.address())
            .read(List.of(new ReadRequest(region.address(), region.key(), content.length, r, null)));
        assertArrayEquals(content, r.future.get(30, TimeUnit.SECONDS));
        return proxy.recorded();
      }
    }
  }

  @Test
  void encryptedTrafficHidesThePlaintext() throws Exception {
    String wire = wireTraffic(true);
    assertTrue(wire.length() > 24 * 4400, "the data did cross the proxy");
    assertFalse(wire.contains("PLAINTEXT-SHUFFLE-BYTES"), "plaintext seen on the wire");
  }

  @Test
  void withoutEncryptionThePlaintextIsVisible() throws Exception {
    assertTrue(wireTraffic(false).contains("PLAINTEXT-SHUFFLE-BYTES"));
  }
}
