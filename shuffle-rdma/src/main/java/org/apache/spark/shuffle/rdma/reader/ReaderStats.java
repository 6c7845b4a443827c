package org.apache.spark.shuffle.rdma.reader;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** What this executor's reducers fetched through the transport (the plugin's own counters). */
public final class ReaderStats {
  public final AtomicLong fetchCalls = new AtomicLong();
  public final AtomicLong remoteBlocks = new AtomicLong();
  public final AtomicLong remoteBytes = new AtomicLong();
  public final AtomicLong indexReads = new AtomicLong();
  public final AtomicLong dataReads = new AtomicLong();
  public final AtomicLong failedBlocks = new AtomicLong();
  public final AtomicLong blocksToDisk = new AtomicLong();
  /** Blocks with no registration where Spark expects them, fetched by Spark's own client. */
  public final AtomicLong fallbackBlocks = new AtomicLong();

  public void addTo(Map<String, Long> m) {
    m.put("reader.fetchCalls", fetchCalls.get());
    m.put("reader.remoteBlocks", remoteBlocks.get());
    m.put("reader.remoteBytes", remoteBytes.get());
    m.put("reader.indexReads", indexReads.get());
    m.put("reader.dataReads", dataReads.get());
    m.put("reader.failedBlocks", failedBlocks.get());
    m.put("reader.blocksToDisk", blocksToDisk.get());
    m.put("reader.fallbackBlocks", fallbackBlocks.get());
  }
}
