/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.apache.spark.shuffle.rdma.testing.TestFiles;
import org.apache.spark.shuffle.rdma.transport.BackingCheck;
import org.junit.jupiter.api.Test;

/**
 * A batch's answer as network-common's encoder takes it (TLS connections, where {@link
 * ServeEncoder} is not installed): one buffer of the prefix and the served slices, and one
 * release that drops every region reference it holds, however often it is called.
 */
class BatchAnswerTest {
  @Test
  void oneBufferOfPrefixAndSlicesAndOneReleaseOfEveryReference() throws Exception {
    byte[] content = TestFiles.randomBytes(1000, 41);
    TcpRegion region = new TcpRegion(7, 1L << 32, ByteBuffer.wrap(content), BackingCheck.NONE, null, 0);
    assertTrue(region.tryRetain());
    assertTrue(region.tryRetain());
    ByteBuf prefix = Unpooled.buffer().writeInt(2).writeInt(5).writeInt(3);
    BatchAnswer answer = new BatchAnswer(prefix, List.of(
        new RegionSliceBuffer(region, 10, 5), new RegionSliceBuffer(region, 100, 3)));
    assertEquals(12 + 5 + 3, answer.size());

    ByteBuf all = (ByteBuf) answer.convertToNetty();
    byte[] got = new byte[all.readableBytes()];
    all.readBytes(got);
    all.release();
    ByteBuffer expected = ByteBuffer.allocate(20).putInt(2).putInt(5).putInt(3)
        .put(content, 10, 5).put(content, 100, 3);
    assertArrayEquals(expected.array(), got);
    assertEquals(1, prefix.refCnt(), "the answer still owns its prefix");

    CompletableFuture<Void> unmapped = region.revoke();
    assertFalse(unmapped.isDone(), "the answer's two references hold the region");
    answer.release();
    answer.release();
    assertTrue(unmapped.isDone(), "one release dropped both references");
    assertEquals(0, prefix.refCnt());
  }
}
