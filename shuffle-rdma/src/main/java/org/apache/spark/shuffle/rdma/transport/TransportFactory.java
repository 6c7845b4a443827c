package org.apache.spark.shuffle.rdma.transport;

import java.io.IOException;

import org.apache.spark.shuffle.rdma.transport.tcp.TcpTransportProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses the transport named by {@code spark.shuffle.rdma.transport}: "tcp", "verbs", or
 * "auto" (verbs when it can start here, else tcp, with one log line that says why).
 */
public final class TransportFactory {
  private static final Logger LOG = LoggerFactory.getLogger(TransportFactory.class);

  /** Found by name so the Spark layer never links against DiSNI classes directly. */
  static final String VERBS_PROVIDER =
      "org.apache.spark.shuffle.rdma.transport.verbs.VerbsTransportProvider";

  private TransportFactory() {}

  public static ShuffleTransport create(TransportSettings settings) throws IOException {
    String choice = settings.conf().transport();
    switch (choice) {
      case "tcp":
        return new TcpTransportProvider().create(settings);
      case "verbs": {
        TransportProvider verbs = verbsProvider();
        String why = verbsUnavailable(verbs, settings);
        if (why != null) {
          throw new IOException("spark.shuffle.rdma.transport=verbs, but RDMA verbs cannot "
              + "start on this executor: " + why + " Run 'java -jar shuffle-rdma.jar doctor' "
              + "on this host for a full check, or set spark.shuffle.rdma.transport=tcp.");
        }
        return verbs.create(settings);
      }
      case "auto": {
        TransportProvider verbs = verbsProvider();
        String why = verbsUnavailable(verbs, settings);
        if (why == null) {
          try {
            ShuffleTransport t = verbs.create(settings);
            LOG.info("spark.shuffle.rdma.transport=auto: using verbs ({})", t.localAddress());
            return t;
          } catch (IOException | RuntimeException | LinkageError e) {
            why = "verbs failed to start: " + e;
          }
        }
        ShuffleTransport t = new TcpTransportProvider().create(settings);
        LOG.info("spark.shuffle.rdma.transport=auto: using tcp ({}) because {}",
            t.localAddress(), why);
        return t;
      }
      default:
        throw new IllegalArgumentException("unknown transport " + choice);
    }
  }

  /** Why verbs cannot run here, or null: security policy first, then the provider's checks. */
  private static String verbsUnavailable(TransportProvider verbs, TransportSettings settings) {
    String policy = settings.conf().rdmaEncryptionConflict();
    if (policy != null) {
      return policy;
    }
    return verbs == null ? "the verbs transport is not part of this build."
        : verbs.unavailableReason(settings);
  }

  /** The verbs provider, or null when its classes are absent. */
  static TransportProvider verbsProvider() {
    try {
      Class<?> c = Class.forName(VERBS_PROVIDER, true, TransportFactory.class.getClassLoader());
      return (TransportProvider) c.getDeclaredConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      return null;
    } catch (ReflectiveOperationException | LinkageError e) {
      LOG.warn("verbs transport present but not loadable", e);
      return null;
    }
  }
}
