/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.transport.verbs.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The bundled libdisni, loaded the way production loads it (extracted from the classpath
 * resource, defined through the isolated loader): DiSNI's start-up checks pass, every size
 * and offset matches what test_layout computed from the rdma-core headers, DiSNI's Java
 * constants match the headers, and every native entry point fails cleanly without a device.
 */
class NativeLayerTest {
  private static ClassLoader loader;
  private static Object dispatcher;
  private static Properties layout;

  @BeforeAll
  static void load() throws Exception {
    assumeFalse(Boolean.getBoolean("native.skip"), "built with -Dnative.skip=true");
    VerbsRuntime rt = VerbsRuntime.get();
    assertTrue(rt.loaded(), () -> "native layer did not load: " + rt.failure());
    loader = rt.loader();
    Class<?> nd = Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, loader);
    assertEquals(loader, nd.getClassLoader(), "DiSNI must be defined by the isolated loader");
    Constructor<?> c = nd.getDeclaredConstructor();
    c.setAccessible(true);
    dispatcher = c.newInstance();
    layout = new Properties();
    Path file = Paths.get(System.getProperty("native.layout", "target/native/layout.properties"));
    try (InputStream in = Files.newInputStream(file)) {
      layout.load(in);
    }
  }

  private static int call(String name) throws Exception {
    Method m = dispatcher.getClass().getMethod(name);
    return (Integer) m.invoke(dispatcher);
  }

  private static int header(String key) {
    String v = layout.getProperty(key);
    assertNotNull(v, key + " missing from layout.properties");
    return Integer.parseInt(v);
  }

  private static int disniStatic(String cls, String field) throws Exception {
    return ((Number) Class.forName(cls, true, loader).getField(field).get(null)).intValue();
  }

  @Test
  void reportsHeaderSizesAndOffsets() throws Exception {
    assertEquals(32, call("_getVersion"));
    assertEquals(header("sizeof.sockaddr_in"), call("_getSockAddrInSize"));
    assertEquals(header("sizeof.ibv_send_wr"), call("_getIbvSendWRSize"));
    assertEquals(header("sizeof.ibv_recv_wr"), call("_getIbvRecvWRSize"));
    assertEquals(header("sizeof.ibv_sge"), call("_getIbvSgeSize"));
    assertEquals(header("sizeof.ibv_wc"), call("_getIbvWCSize"));
    assertEquals(header("offset.remote_addr"), call("_getRemoteAddressOffset"));
    assertEquals(header("offset.rkey"), call("_getRKeyOffset"));
  }

  @Test
  void disniAdoptedTheNativeLayout() throws Exception {
    String p = "com.ibm.disni.verbs.impl.";
    assertEquals(header("sizeof.ibv_send_wr"), disniStatic(p + "NatIbvSendWR", "CSIZE"));
    assertEquals(header("offset.remote_addr"), disniStatic(p + "NatIbvSendWR", "REMOTEADDR_OFFSET"));
    assertEquals(header("offset.rkey"), disniStatic(p + "NatIbvSendWR", "RKEY_OFFSET"));
    assertEquals(header("ibv_send_wr.wr_id"), disniStatic(p + "NatIbvSendWR", "WRID_OFFSET"));
    assertEquals(header("ibv_send_wr.send_flags"), disniStatic(p + "NatIbvSendWR", "SENDFLAGS_OFFSET"));
    assertEquals(header("sizeof.ibv_sge"), disniStatic(p + "NatIbvSge", "CSIZE"));
    assertEquals(header("sizeof.ibv_wc"), disniStatic("com.ibm.disni.verbs.IbvWC", "CSIZE"));
    assertEquals(header("sizeof.sockaddr_in"), disniStatic(p + "SockAddrIn", "CSIZE"));
  }

  @Test
  void disniConstantsMatchTheHeaders() throws Exception {
    String wr = "com.ibm.disni.verbs.IbvSendWR";
    for (String k : new String[] {"IBV_WR_RDMA_WRITE", "IBV_WR_RDMA_WRITE_WITH_IMM", "IBV_WR_SEND",
        "IBV_WR_SEND_WITH_IMM", "IBV_WR_RDMA_READ", "IBV_WR_ATOMIC_CMP_AND_SWP",
        "IBV_WR_ATOMIC_FETCH_AND_ADD", "IBV_SEND_FENCE", "IBV_SEND_SIGNALED",
        "IBV_SEND_SOLICITED", "IBV_SEND_INLINE"}) {
      assertEquals(header(k), disniStatic(wr, k), k);
    }
    for (String k : new String[] {"IBV_ACCESS_LOCAL_WRITE", "IBV_ACCESS_REMOTE_WRITE",
        "IBV_ACCESS_REMOTE_READ", "IBV_ACCESS_REMOTE_ATOMIC", "IBV_ACCESS_MW_BIND",
        "IBV_ACCESS_ON_DEMAND"}) {
      assertEquals(header(k), disniStatic("com.ibm.disni.verbs.IbvMr", k), k);
    }
    for (String k : new String[] {"IBV_QPT_RC", "IBV_QPT_UC", "IBV_QPT_UD", "IBV_QPS_RESET",
        "IBV_QPS_RTS", "IBV_QPS_ERR"}) {
      assertEquals(header(k), disniStatic("com.ibm.disni.verbs.IbvQP", k), k);
    }
    for (String k : new String[] {"RDMA_PS_TCP", "RDMA_PS_UDP", "RDMA_PS_IPOIB"}) {
      assertEquals(header(k), disniStatic("com.ibm.disni.verbs.RdmaCm", k), k);
    }
    for (String k : new String[] {"IBV_ODP_SUPPORT_SEND", "IBV_ODP_SUPPORT_RECV",
        "IBV_ODP_SUPPORT_WRITE", "IBV_ODP_SUPPORT_READ", "IBV_ODP_SUPPORT_ATOMIC"}) {
      assertEquals(header(k), disniStatic("com.ibm.disni.verbs.IbvContext", k), k);
    }
    assertOrdinal("com.ibm.disni.verbs.IbvWC$IbvWcStatus", "IBV_WC_SUCCESS");
    assertOrdinal("com.ibm.disni.verbs.IbvWC$IbvWcStatus", "IBV_WC_WR_FLUSH_ERR");
    assertOrdinal("com.ibm.disni.verbs.IbvWC$IbvWcStatus", "IBV_WC_REM_ACCESS_ERR");
    assertOrdinal("com.ibm.disni.verbs.IbvWC$IbvWcStatus", "IBV_WC_RETRY_EXC_ERR");
    assertOrdinal("com.ibm.disni.verbs.IbvWC$IbvWcStatus", "IBV_WC_GENERAL_ERR");
    assertOrdinal("com.ibm.disni.verbs.RdmaCmEvent$EventType", "RDMA_CM_EVENT_ADDR_RESOLVED");
    assertOrdinal("com.ibm.disni.verbs.RdmaCmEvent$EventType", "RDMA_CM_EVENT_CONNECT_REQUEST");
    assertOrdinal("com.ibm.disni.verbs.RdmaCmEvent$EventType", "RDMA_CM_EVENT_ESTABLISHED");
    assertOrdinal("com.ibm.disni.verbs.RdmaCmEvent$EventType", "RDMA_CM_EVENT_DISCONNECTED");
    assertOrdinal("com.ibm.disni.verbs.RdmaCmEvent$EventType", "RDMA_CM_EVENT_TIMEWAIT_EXIT");
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static void assertOrdinal(String enumClass, String name) throws Exception {
    Class<? extends Enum> e = (Class<? extends Enum>) Class.forName(enumClass, true, loader);
    assertEquals(header(name), Enum.valueOf(e, name).ordinal(), name);
  }

  /** Every native method with zero handles: an IOException or a negative result, no crash. */
  @Test
  void everyEntryPointFailsCleanlyOnNullHandles() throws Exception {
    int checked = 0;
    for (Method m : dispatcher.getClass().getDeclaredMethods()) {
      if (!Modifier.isNative(m.getModifiers()) || m.getParameterCount() == 0) {
        continue;
      }
      Object[] args = new Object[m.getParameterCount()];
      Class<?>[] types = m.getParameterTypes();
      for (int i = 0; i < args.length; i++) {
        args[i] = zero(types[i]);
      }
      String name = m.getName();
      try {
        Object r = m.invoke(dispatcher, args);
        if (name.equals("_ackCmEvent") || name.equals("_ackCqEvent")) {
          assertEquals(0, r, name + " is a no-op");
        } else {
          assertTrue(((Number) r).longValue() < 0, name + " returned " + r);
        }
      } catch (InvocationTargetException e) {
        assertTrue(e.getCause() instanceof IOException, name + " threw " + e.getCause());
        assertNotNull(e.getCause().getMessage(), name);
      }
      checked++;
    }
    assertEquals(39, checked, "native methods with arguments (48 minus 9 without)");
  }

  /**
   * The plugin's own CM calls (CmNative, for connection authentication and READ depths) bind
   * to the bundled library through the isolated loader: with no event fetched on this thread
   * there is no private data and no depths; the device query refuses a null context;
   * connect/accept with depths and private data, reject and setTos refuse a null handle.
   */
  @Test
  void authenticationCallsBindAndFailCleanlyOnNullHandles() throws Exception {
    Class<?> cm = Class.forName(VerbsClassNames.CM_NATIVE, true, loader);
    assertEquals(loader, cm.getClassLoader());
    Method data = cm.getDeclaredMethod("eventPrivateData", byte[].class);
    data.setAccessible(true);
    assertEquals(0, data.invoke(null, (Object) new byte[255]));
    Method qpn = cm.getDeclaredMethod("eventQpNum");
    qpn.setAccessible(true);
    assertEquals(0, qpn.invoke(null));
    Method reject = cm.getDeclaredMethod("reject", long.class);
    reject.setAccessible(true);
    assertTrue((Integer) reject.invoke(null, 0L) < 0);
    Method depths = cm.getDeclaredMethod("eventReadDepths");
    depths.setAccessible(true);
    assertEquals(0, depths.invoke(null));
    Method query = cm.getDeclaredMethod("queryReadDepths", long.class);
    query.setAccessible(true);
    assertTrue((Long) query.invoke(null, 0L) < 0, "a null context is refused (-EINVAL)");
    for (String name : new String[] {"connect", "accept"}) {
      Method m = cm.getDeclaredMethod(name, long.class, int.class, int.class, int.class,
          int.class, byte[].class);
      m.setAccessible(true);
      try {
        m.invoke(null, 0L, 7, 7, 16, 0, new byte[52]);
        fail(name + " with a null handle must throw");
      } catch (InvocationTargetException e) {
        assertTrue(e.getCause() instanceof IOException, name + " threw " + e.getCause());
        assertTrue(e.getCause().getMessage().contains("null handle"), e.getCause().getMessage());
      }
    }
    // spark.shuffle.rdma.verbs.trafficClass: bound, and refusing a null id.
    Method tos = cm.getDeclaredMethod("setTos", long.class, int.class);
    tos.setAccessible(true);
    try {
      tos.invoke(null, 0L, 106);
      fail("setTos with a null handle must throw");
    } catch (InvocationTargetException e) {
      assertTrue(e.getCause() instanceof IOException, "setTos threw " + e.getCause());
      assertTrue(e.getCause().getMessage().contains("null handle"), e.getCause().getMessage());
    }
  }

  /**
   * The completion agents' wait that names the CQ that fired (CqEvents, native/cq_events.c)
   * binds to the bundled library through the isolated loader and refuses a null channel.
   */
  @Test
  void cqEventWaitBindsAndFailsCleanlyOnANullChannel() throws Exception {
    Class<?> events = Class.forName(VerbsClassNames.CQ_EVENTS, true, loader);
    assertEquals(loader, events.getClassLoader());
    Method wait = events.getDeclaredMethod("waitCqEvent", long.class, int.class);
    wait.setAccessible(true);
    try {
      wait.invoke(null, 0L, 0);
      fail("waitCqEvent with a null channel must throw");
    } catch (InvocationTargetException e) {
      assertTrue(e.getCause() instanceof IOException, "waitCqEvent threw " + e.getCause());
      assertTrue(e.getCause().getMessage().contains("null handle"), e.getCause().getMessage());
    }
  }

  /** Boxed zero of a primitive type (a ternary would promote them all to long). */
  private static Object zero(Class<?> t) {
    if (t == long.class) {
      return 0L;
    }
    if (t == int.class) {
      return 0;
    }
    if (t == short.class) {
      return (short) 0;
    }
    return (byte) 0;
  }

  @Test
  void noDeviceGivesAClearError() throws Exception {
    assumeFalse(Files.exists(Paths.get("/dev/infiniband/rdma_cm")), "this host has rdma_cm");
    try {
      dispatcher.getClass().getMethod("_createEventChannel").invoke(dispatcher);
      fail("rdma_create_event_channel cannot work without a device");
    } catch (InvocationTargetException e) {
      String m = e.getCause().getMessage();
      assertTrue(e.getCause() instanceof IOException, String.valueOf(e.getCause()));
      assertTrue(m.startsWith("rdma_create_event_channel failed: "), m);
      assertTrue(m.contains("errno"), m);
    }
    Class<?> ec = Class.forName("com.ibm.disni.verbs.RdmaEventChannel", true, loader);
    try {
      ec.getMethod("createEventChannel").invoke(null);
      fail("DiSNI's API must surface the failure");
    } catch (InvocationTargetException e) {
      assertTrue(e.getCause().getMessage().contains("rdma_create_event_channel failed"));
    }
  }
}
