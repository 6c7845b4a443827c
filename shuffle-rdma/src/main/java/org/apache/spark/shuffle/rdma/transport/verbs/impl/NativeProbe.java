/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.impl;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.RdmaProvider;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.impl.NatObject;

/**
 * Entry points the parent class loader calls by reflection to check the native layer
 * without creating a transport. Loaded by the isolated loader, so touching DiSNI here loads
 * libdisni through that loader's findLibrary.
 */
public final class NativeProbe {
  private NativeProbe() {}

  /**
   * Loads libdisni and lets DiSNI run its start-up checks (JNI version, struct sizes and
   * offsets). Needs no device.
   */
  public static String probe() throws IOException {
    RdmaProvider provider = RdmaProvider.provider();
    return "DiSNI JNI version " + provider.getVersion() + ", " + RdmaVerbs.class.getSimpleName()
        + " ready";
  }

  /**
   * On-demand paging capabilities of the device that owns {@code ip} (DiSNI's
   * IBV_ODP_SUPPORT_* bits for RC), or -1 without ODP.
   */
  public static int odpSupport(String ip) throws IOException {
    return withContext(ip, IbvContext::queryOdpSupport);
  }

  /**
   * RDMA READ depth maxima and vendor of the device that owns {@code ip}, packed as
   * CmNative.queryReadDepths returns them (ReadDepth.Device.decode reads them).
   */
  public static long readDepths(String ip) throws IOException {
    return withContext(ip, c -> CmNative.queryReadDepths(((NatObject) c).getObjId()));
  }

  private interface ContextQuery<T> {
    T apply(IbvContext context) throws IOException;
  }

  /**
   * Binds a throwaway cm id to the address to reach the device's context, as rdma_cm is
   * DiSNI's only way to open one.
   */
  private static <T> T withContext(String ip, ContextQuery<T> query) throws IOException {
    RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
    try {
      RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
      try {
        id.bindAddr(new InetSocketAddress(InetAddress.getByName(ip), 0));
        return query.apply(id.getVerbs());
      } finally {
        id.destroyId();
      }
    } finally {
      channel.destroyEventChannel();
    }
  }
}
