package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.RegisteredRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** spark.authenticate: Spark's auth engine guards the tcp transport; a wrong secret gets nothing. */
class TcpAuthenticationTest {
  @TempDir
  File dir;

  @Test
  void sameSecretReads() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport(new SparkConf(false), "s3cret")) {
      byte[] content = TcpTestSupport.randomBytes(5000, 11);
      RegisteredRegion region = server.register(TcpTestSupport.mapFile(dir, content));
      TcpTestSupport.Result r = new TcpTestSupport.Result();
      client.connect(server.localAddress())
          .read(List.of(new ReadRequest(0, region.key(), 5000, r, null)));
      assertArrayEquals(content, r.future.get(30, TimeUnit.SECONDS));
    }
  }

  @Test
  void wrongSecretGetsNoConnection() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport(new SparkConf(false), "guess")) {
      server.register(TcpTestSupport.mapFile(dir, TcpTestSupport.randomBytes(100, 12)));
      assertThrows(Exception.class, () -> client.connect(server.localAddress()));
      assertEquals(0, server.stats().readsServed.get());
    }
  }

  @Test
  void unauthenticatedClientIsRefusedEveryRead() throws Exception {
    try (TcpTransport server = TcpTestSupport.transport(new SparkConf(false), "s3cret");
         TcpTransport client = TcpTestSupport.transport()) {
      RegisteredRegion region =
          server.register(TcpTestSupport.mapFile(dir, TcpTestSupport.randomBytes(100, 13)));
      TcpTestSupport.Result r = new TcpTestSupport.Result();
      client.connect(server.localAddress())
          .read(List.of(new ReadRequest(0, region.key(), 10, r, null)));
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> r.future.get(30, TimeUnit.SECONDS));
      assertTrue(e.getCause().getMessage().contains("not authenticated"),
          e.getCause().getMessage());
      assertEquals(0, server.stats().readsServed.get());
    }
  }
}
