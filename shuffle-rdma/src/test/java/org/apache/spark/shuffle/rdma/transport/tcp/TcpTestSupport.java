package org.apache.spark.shuffle.rdma.transport.tcp;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf;
import org.apache.spark.shuffle.rdma.transport.ReadCallback;
import org.apache.spark.shuffle.rdma.transport.ReadRequest;
import org.apache.spark.shuffle.rdma.transport.TransportSettings;
import scala.Option;

/** Real transports on loopback, real files, real sockets: what the tcp tests share. */
final class TcpTestSupport {
  private TcpTestSupport() {}

  static TcpTransport transport(SparkConf extra, String secret) throws IOException {
    return transport(extra, secret, "app-test");
  }

  /** A transport of application {@code appId} (the id its auth handshake presents). */
  static TcpTransport transport(SparkConf extra, String secret, String appId)
      throws IOException {
    SparkConf conf = new SparkConf(false).set("spark.app.id", appId);
    for (scala.Tuple2<String, String> kv : extra.getAll()) {
      conf.set(kv._1(), kv._2());
    }
    SecurityManager sm = null;
    if (secret != null) {
      conf.set("spark.authenticate", "true").set("spark.authenticate.secret", secret);
      sm = new SecurityManager(conf, Option.empty(),
          org.apache.spark.internal.config.package$.MODULE$.AUTH_SECRET_FILE());
    }
    return new TcpTransport(new TransportSettings(new RdmaShuffleConf(conf), "127.0.0.1", sm,
        appId, 1));
  }

  static TcpTransport transport() throws IOException {
    return transport(new SparkConf(false), null);
  }

  static byte[] randomBytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  static MappedByteBuffer mapFile(File dir, byte[] content) throws IOException {
    File f = File.createTempFile("region", ".data", dir);
    Files.write(f.toPath(), content);
    try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
      return ch.map(FileChannel.MapMode.READ_ONLY, 0, content.length);
    }
  }

  /** Collects one read's outcome: the bytes (copied) or the failure. */
  static final class Result implements ReadCallback {
    final CompletableFuture<byte[]> future = new CompletableFuture<>();

    @Override
    public void onSuccess(ReadRequest request, ManagedBuffer data) {
      try {
        ByteBuffer b = data.nioByteBuffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        future.complete(out);
      } catch (IOException e) {
        future.completeExceptionally(e);
      }
    }

    @Override
    public void onFailure(ReadRequest request, Throwable cause) {
      future.completeExceptionally(cause);
    }
  }

  static List<Result> results(int n) {
    List<Result> r = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      r.add(new Result());
    }
    return r;
  }
}
