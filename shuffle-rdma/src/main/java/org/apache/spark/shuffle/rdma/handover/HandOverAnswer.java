/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.handover;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

import org.apache.spark.shuffle.rdma.handover.HandOverProtocol.Kind;
import org.apache.spark.shuffle.rdma.metadata.MapOutputDescriptor;
import org.apache.spark.shuffle.rdma.transport.PeerAddress;

/**
 * The node service's answer to one request: a one-line refusal, or what the request asked
 * for. HAND_OVER: the service's transport (name and address readers connect to) and the
 * descriptor of the registered output (its regions' addresses, keys and lengths). RELEASE_*:
 * how many outputs and bytes were released. STATS: the service's gauges. APP_DRIVER: the
 * lease, how long the service keeps the application's outputs once its driver is unreachable.
 */
public final class HandOverAnswer {
  private final Kind kind;
  private final String refusal;
  private final String transport;
  private final PeerAddress address;
  private final MapOutputDescriptor descriptor;
  private final int releasedOutputs;
  private final long releasedBytes;
  private final ServiceStats stats;
  private final long leaseMs;

  private HandOverAnswer(Kind kind, String refusal, String transport, PeerAddress address,
      MapOutputDescriptor descriptor, int releasedOutputs, long releasedBytes,
      ServiceStats stats) {
    this(kind, refusal, transport, address, descriptor, releasedOutputs, releasedBytes, stats,
        0);
  }

  private HandOverAnswer(Kind kind, String refusal, String transport, PeerAddress address,
      MapOutputDescriptor descriptor, int releasedOutputs, long releasedBytes,
      ServiceStats stats, long leaseMs) {
    this.kind = kind;
    this.refusal = refusal;
    this.transport = transport;
    this.address = address;
    this.descriptor = descriptor;
    this.releasedOutputs = releasedOutputs;
    this.releasedBytes = releasedBytes;
    this.stats = stats;
    this.leaseMs = leaseMs;
  }

  /** A refusal; the reason is kept to one line of at most MAX_REASON bytes. */
  public static HandOverAnswer refused(Kind kind, String reason) {
    String line = String.valueOf(reason).replace('\n', ' ').replace('\r', ' ');
    if (line.length() > HandOverProtocol.MAX_REASON / 4) {
      line = line.substring(0, HandOverProtocol.MAX_REASON / 4 - 3) + "...";
    }
    return new HandOverAnswer(kind, line, null, null, null, 0, 0, null);
  }

  public static HandOverAnswer registered(String transport, PeerAddress address,
      MapOutputDescriptor descriptor) {
    return new HandOverAnswer(Kind.HAND_OVER, null, transport, address, descriptor, 0, 0,
        null);
  }

  public static HandOverAnswer released(Kind kind, int outputs, long bytes) {
    return new HandOverAnswer(kind, null, null, null, null, outputs, bytes, null);
  }

  public static HandOverAnswer stats(ServiceStats stats) {
    return new HandOverAnswer(Kind.STATS, null, null, null, null, 0, 0, stats);
  }

  public static HandOverAnswer lease(long leaseMs) {
    return new HandOverAnswer(Kind.APP_DRIVER, null, null, null, null, 0, 0, null, leaseMs);
  }

  /** APP_AUTH taken: the connection may hand over and release the application's outputs. */
  public static HandOverAnswer authenticated() {
    return new HandOverAnswer(Kind.APP_AUTH, null, null, null, null, 0, 0, null, 0);
  }

  public Kind kind() {
    return kind;
  }

  public boolean isRefused() {
    return refusal != null;
  }

  /** Why the service refused the request (one line), or null. */
  public String refusal() {
    return refusal;
  }

  public String transport() {
    return transport;
  }

  /** Where readers reach the service's transport. */
  public PeerAddress address() {
    return address;
  }

  public MapOutputDescriptor descriptor() {
    return descriptor;
  }

  public int releasedOutputs() {
    return releasedOutputs;
  }

  public long releasedBytes() {
    return releasedBytes;
  }

  public ServiceStats stats() {
    return stats;
  }

  /** APP_DRIVER: how long outputs outlive an unreachable driver, in milliseconds. */
  public long leaseMs() {
    return leaseMs;
  }

  public byte[] encode() {
    WireWriter w = HandOverProtocol.header(kind);
    if (refusal != null) {
      return w.u8(HandOverProtocol.REFUSED).string(refusal).toBytes();
    }
    w.u8(HandOverProtocol.OK);
    switch (kind) {
      case HAND_OVER:
        ByteArrayOutputStream d = new ByteArrayOutputStream();
        try {
          descriptor.writeTo(new DataOutputStream(d));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        w.string(transport).string(address.host()).i32(address.port()).bytes(d.toByteArray());
        break;
      case STATS:
        w.i64(stats.registeredBytes()).i32(stats.openDescriptors()).i32(stats.applications())
            .i32(stats.outputs()).i64(stats.handOvers()).i64(stats.refusals());
        break;
      case APP_DRIVER:
        w.i64(leaseMs);
        break;
      case APP_AUTH:
        break;
      default:
        w.i32(releasedOutputs).i64(releasedBytes);
    }
    return w.toBytes();
  }

  public static HandOverAnswer decode(byte[] message) throws ProtocolException {
    WireReader r = new WireReader(message);
    Kind kind = HandOverProtocol.header(r);
    byte status = r.u8("status");
    HandOverAnswer a;
    if (status == HandOverProtocol.REFUSED) {
      a = refused(kind, r.string("refusal", HandOverProtocol.MAX_REASON));
    } else if (status != HandOverProtocol.OK) {
      throw new ProtocolException("unknown answer status " + status);
    } else {
      switch (kind) {
        case HAND_OVER: {
          String transport = r.string("transport", 16);
          String host = r.string("host", 255);
          int port = r.i32("port");
          byte[] d = r.bytes("descriptor", HandOverProtocol.MAX_ANSWER);
          MapOutputDescriptor descriptor;
          PeerAddress address;
          try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(d));
            descriptor = MapOutputDescriptor.readFrom(in);
            if (in.available() > 0) {
              throw new ProtocolException("descriptor has " + in.available()
                  + " bytes after its last field");
            }
            address = new PeerAddress(host, port);
          } catch (ProtocolException e) {
            throw e;
          } catch (IOException | RuntimeException e) {
            throw new ProtocolException("descriptor or address does not decode: " + e);
          }
          a = registered(transport, address, descriptor);
          break;
        }
        case STATS:
          a = stats(new ServiceStats(r.i64("registered bytes"), r.i32("open descriptors"),
              r.i32("applications"), r.i32("outputs"), r.i64("hand-overs"), r.i64("refusals")));
          break;
        case APP_DRIVER:
          a = lease(r.i64("lease"));
          break;
        case APP_AUTH:
          a = authenticated();
          break;
        default:
          a = released(kind, r.i32("released outputs"), r.i64("released bytes"));
      }
    }
    r.end(kind + " answer");
    return a;
  }

  @Override
  public String toString() {
    if (refusal != null) {
      return kind + " refused: " + refusal;
    }
    switch (kind) {
      case HAND_OVER:
        return "registered on " + transport + " " + address + ": " + descriptor;
      case STATS:
        return "stats: " + stats;
      case APP_DRIVER:
        return "lease of " + leaseMs + " ms";
      case APP_AUTH:
        return "authenticated";
      default:
        return kind + ": released " + releasedOutputs + " outputs, " + releasedBytes + " bytes";
    }
  }
}
