/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.DataOutputStream;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * Spark's auth decoders allocate every length a handshake message declares before checking
 * it against the bytes that came: a 14-byte body can ask for hundreds of MiB. Against a
 * server in its own JVM with -Xmx256m (SASL and auth engine), 300 frames per server (30
 * connections at a time, each a hello declaring 96 MiB for its app id, SASL body, salt or
 * ciphertext) leave its heap flat and the servers serving: no frame reaches a decoder.
 */
class TcpPreAuthAllocationTest {
  private static final int DECLARED = 96 << 20;

  /** A handshake body whose field {@code field} declares DECLARED bytes. */
  private static byte[] lyingHello(boolean engine, int field) {
    ByteBuffer b = ByteBuffer.allocate(64);
    b.put(engine ? (byte) 0xFB : (byte) 0xEA);
    for (int f = 0; f < (engine ? 3 : 2); f++) {
      b.putInt(f == field ? DECLARED : 4);
      if (f != field) {
        b.putInt(0x41414141);
      } else {
        break;
      }
    }
    b.flip();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  @Test
  void liesAboutLengthsBeforeAuthenticationLeaveTheHeapFlat() throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(new File(System.getProperty("java.home"), "bin/java").getPath());
    cmd.add("-Xmx256m");
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--add-opens") || a.startsWith("--add-exports")) {
        cmd.add(a);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(PreAuthServerMain.class.getName());
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
          StandardCharsets.UTF_8));
      PrintWriter in = new PrintWriter(new OutputStreamWriter(p.getOutputStream(),
          StandardCharsets.UTF_8), true);
      String ready = readLine(out, "READY");
      String[] f = ready.split(" ");
      int[] ports = {Integer.parseInt(f[1]), Integer.parseInt(f[2])};
      in.println("RESET");
      readLine(out, "OK");
      in.println("REPORT");
      long before = heap(readLine(out, "HEAP"));
      int frames = 0;
      for (int s = 0; s < 2; s++) {
        boolean engine = s == 1;
        for (int round = 0; round < 10; round++) {
          List<Socket> open = new ArrayList<>();
          for (int c = 0; c < 30; c++) {
            Socket sock = new Socket();
            open.add(sock);
            sock.connect(new InetSocketAddress("127.0.0.1", ports[s]), 5000);
            DataOutputStream o = new DataOutputStream(sock.getOutputStream());
            TcpAuthenticationTest.rpc(o, 1, lyingHello(engine, c % (engine ? 3 : 2)));
            o.flush();
            frames++;
          }
          for (Socket sock : open) {
            sock.setSoTimeout(10_000);
            assertEquals(-1, sock.getInputStream().read(), "closed, unanswered");
            sock.close();
          }
        }
      }
      in.println("REPORT");
      String report = readLine(out, "HEAP");
      long after = heap(report);
      System.out.println("[pre-auth allocation] " + frames + " frames declaring "
          + (DECLARED >> 20) + " MiB each, server -Xmx256m: heap peak " + (before >> 20)
          + " MiB before, " + (after >> 20) + " MiB during; " + report);
      assertEquals(frames, Long.parseLong(report.split(" ")[5]), "every frame refused");
      assertTrue(after - before < (64 << 20), "heap grew by " + ((after - before) >> 20)
          + " MiB: a declared length reached a decoder");
      assertTrue(p.isAlive(), "the server JVM is still up");
    } finally {
      p.getOutputStream().close();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  private static long heap(String report) {
    return Long.parseLong(report.split(" ")[1]);
  }

  private static String readLine(BufferedReader out, String prefix) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith(prefix)) {
        return line;
      }
      assertTrue(System.nanoTime() < deadline, "no " + prefix + " line from the server");
    }
    throw new AssertionError("the server JVM exited before printing " + prefix);
  }
}
