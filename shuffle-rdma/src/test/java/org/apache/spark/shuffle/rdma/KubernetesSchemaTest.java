/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Every Kubernetes manifest of the project, validated strictly against the Kubernetes API
 * schema (fabric8's model of it, which Spark's own Kubernetes backend uses): the pod templates
 * in conf-templates/kubernetes/ and each YAML block of docs/kubernetes.md (pods, or container
 * fragments). Kubernetes' own parsers and Spark's KubernetesUtils.loadPodFromTemplate ignore
 * or keep a field they do not know, so a misspelled `securityContex` would load and do
 * nothing; here every field must be one of the API's, with the API's type. A JUnit test of
 * this module, run on the default build (Spark 4.2). Not on the other lines: their test class
 * paths mix Jackson versions that fabric8's model does not run on (3.5: NoClassDefFoundError
 * StreamReadConstraints; 4.0: NoSuchMethodError ParserMinimalBase(StreamReadConstraints));
 * the manifests are the same files on every line.
 */
class KubernetesSchemaTest {
  @org.junit.jupiter.api.BeforeAll
  static void onSpark4() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        org.apache.spark.package$.MODULE$.SPARK_VERSION().startsWith("4.2."),
        "the manifests are validated on the default build (4.2); this line's Jackson mix "
            + "does not run fabric8's model");
  }

  private static final Path ROOT = Paths.get(System.getProperty("project.root", ".."));
  private static final Path TEMPLATES = ROOT.resolve("conf-templates/kubernetes");
  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
      .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

  /** Top-level keys that make a YAML block of the docs a container (fragment). */
  private static final Set<String> CONTAINER_KEYS = Set.of("resources", "securityContext",
      "image", "command", "args", "env", "volumeMounts");

  private static Map<String, Object> yaml(String text) {
    Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
    if (!(doc instanceof Map)) {
      throw new IllegalArgumentException("not a YAML mapping: " + doc);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) doc;
    return map;
  }

  /**
   * Problems of one object against the schema: unknown fields (fabric8 keeps them in each
   * object's additionalProperties instead of failing, so they are looked for there) and type
   * errors (Jackson fails on them). Empty when valid.
   */
  static List<String> problems(Map<String, Object> tree, Class<?> type) {
    List<String> out = new ArrayList<>();
    Object model;
    try {
      model = MAPPER.convertValue(tree, type);
    } catch (IllegalArgumentException e) {
      out.add(e.getMessage().split("\n")[0]);
      return out;
    }
    unknownFields(model, type.getSimpleName(), out);
    return out;
  }

  private static void unknownFields(Object o, String path, List<String> out) {
    if (o == null) {
      return;
    }
    if (o instanceof List) {
      List<?> l = (List<?>) o;
      for (int i = 0; i < l.size(); i++) {
        unknownFields(l.get(i), path + "[" + i + "]", out);
      }
      return;
    }
    if (o instanceof Map) {
      for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
        unknownFields(e.getValue(), path + "[" + e.getKey() + "]", out);
      }
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model.")) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers())
          || !m.getName().startsWith("get") || m.getName().equals("getClass")) {
        continue;
      }
      Class<?> r = m.getReturnType();
      boolean model = r.getName().startsWith("io.fabric8.kubernetes.api.model.");
      if (!model && !List.class.isAssignableFrom(r) && !Map.class.isAssignableFrom(r)) {
        continue;
      }
      Object value;
      try {
        value = m.invoke(o);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(path + "." + m.getName(), e);
      }
      if (m.getName().equals("getAdditionalProperties")) {
        for (Object key : ((Map<?, ?>) value).keySet()) {
          out.add(path + "." + key + ": not a field of " + o.getClass().getSimpleName());
        }
      } else {
        String field = Character.toLowerCase(m.getName().charAt(3)) + m.getName().substring(4);
        unknownFields(value, path + "." + field, out);
      }
    }
  }

  private static List<Path> templates() throws IOException {
    try (Stream<Path> s = Files.list(TEMPLATES)) {
      return s.filter(p -> p.toString().endsWith(".yaml")).sorted().collect(Collectors.toList());
    }
  }

  /** The manifests of conf-templates/kubernetes/, by kind: what each must be validated as. */
  private static final Map<String, Class<?>> KINDS = Map.of("v1/Pod", Pod.class,
      "apps/v1/DaemonSet", DaemonSet.class);

  @Test
  void everyManifestIsValidForItsKind() throws IOException {
    List<Path> files = templates();
    assertEquals(List.of("driver-pod-template.yaml", "executor-pod-template.yaml",
        "node-service-daemonset.yaml"), files.stream().map(p -> p.getFileName().toString())
        .collect(Collectors.toList()), "manifests in " + TEMPLATES);
    for (Path f : files) {
      Map<String, Object> tree = yaml(Files.readString(f, StandardCharsets.UTF_8));
      Class<?> type = KINDS.get(tree.get("apiVersion") + "/" + tree.get("kind"));
      assertTrue(type != null, f + ": apiVersion/kind " + tree.get("apiVersion") + "/"
          + tree.get("kind") + " is none of " + KINDS.keySet());
      assertEquals(List.of(), problems(tree, type), f + " against the "
          + type.getSimpleName() + " schema");
    }
  }

  /**
   * The node service's socket is named in three files that must agree: the DaemonSet's
   * --socket argument and its hostPath, the executor template's hostPath and mount, and the
   * socket key in spark-defaults.conf. A mismatch leaves executors handing nothing over.
   */
  @Test
  void theNodeServiceSocketIsOnePathInEveryFile() throws IOException {
    DaemonSet ds = MAPPER.convertValue(yaml(Files.readString(
        TEMPLATES.resolve("node-service-daemonset.yaml"))), DaemonSet.class);
    Pod executor = MAPPER.convertValue(yaml(Files.readString(
        TEMPLATES.resolve("executor-pod-template.yaml"))), Pod.class);
    io.fabric8.kubernetes.api.model.PodSpec service = ds.getSpec().getTemplate().getSpec();
    List<String> args = service.getContainers().get(0).getArgs();
    int i = args.indexOf("--socket");
    assertTrue(i >= 0 && i + 1 < args.size(), "no --socket PATH in " + args);
    Path socket = Paths.get(args.get(i + 1));
    assertEquals("/opt/shuffle-rdma/bin/shuffle-rdma-service", args.get(0), args.toString());
    String dir = socket.getParent().toString();
    assertEquals(dir, socketDirectory(service, "node-service"));
    assertEquals(dir, socketDirectory(executor.getSpec(), "spark-executor"));
    String key = org.apache.spark.shuffle.rdma.config.RdmaConf.SERVICE_SOCKET().key();
    Matcher conf = Pattern.compile("(?m)^#? *" + Pattern.quote(key) + " +(\\S+)$")
        .matcher(Files.readString(TEMPLATES.resolve("spark-defaults.conf")));
    assertTrue(conf.find(), key + " in spark-defaults.conf");
    assertEquals(socket.toString(), conf.group(1));
    // The image holds the launcher where the DaemonSet runs it.
    String dockerfile = Files.readString(TEMPLATES.resolve("image/Dockerfile"));
    assertTrue(dockerfile.contains("COPY bin/shuffle-rdma-service " + args.get(0)), dockerfile);
  }

  /** The hostPath a container mounts at the mount's own path (the same path inside). */
  private static String socketDirectory(io.fabric8.kubernetes.api.model.PodSpec spec,
      String container) {
    io.fabric8.kubernetes.api.model.Container c = spec.getContainers().stream()
        .filter(x -> x.getName().equals(container)).findFirst().orElseThrow();
    List<String> found = new ArrayList<>();
    for (io.fabric8.kubernetes.api.model.VolumeMount m : c.getVolumeMounts()) {
      spec.getVolumes().stream().filter(v -> v.getName().equals(m.getName())
          && v.getHostPath() != null).forEach(v -> {
            assertEquals(v.getHostPath().getPath(), m.getMountPath(), container
                + " mounts hostPath " + v.getHostPath().getPath() + " elsewhere");
            assertEquals("DirectoryOrCreate", v.getHostPath().getType(), v.toString());
            found.add(m.getMountPath());
          });
    }
    assertEquals(1, found.size(), container + " hostPath mounts: " + found);
    return found.get(0);
  }

  /** The YAML blocks of docs/kubernetes.md: pods (or pod fragments) and container fragments. */
  @Test
  void everyYamlBlockOfTheKubernetesDocIsValid() throws IOException {
    String doc = Files.readString(ROOT.resolve("docs/kubernetes.md"), StandardCharsets.UTF_8);
    Matcher m = Pattern.compile("(?ms)^( *)```yaml\\n(.*?)^\\1```").matcher(doc);
    int blocks = 0;
    List<String> bad = new ArrayList<>();
    while (m.find()) {
      blocks++;
      String indent = m.group(1);
      String body = m.group(2).lines().map(l -> l.startsWith(indent) ? l.substring(
          indent.length()) : l).collect(Collectors.joining("\n"));
      Map<String, Object> tree = yaml(body);
      Class<?> type;
      if (tree.containsKey("spec") || tree.containsKey("metadata")) {
        type = Pod.class;
      } else if (CONTAINER_KEYS.containsAll(tree.keySet())) {
        type = Container.class;
      } else {
        bad.add("block " + blocks + " is neither a pod nor a container: " + tree.keySet());
        continue;
      }
      for (String p : problems(tree, type)) {
        bad.add("block " + blocks + " (" + type.getSimpleName() + "): " + p);
      }
    }
    assertTrue(blocks >= 3, "YAML blocks found in docs/kubernetes.md: " + blocks);
    assertEquals(List.of(), bad, "docs/kubernetes.md");
  }

  /** The check itself: a misspelled or mistyped field in a template must be caught. */
  @Test
  void aMisspelledOrMistypedFieldFails() throws IOException {
    String executor = Files.readString(TEMPLATES.resolve("executor-pod-template.yaml"));
    assertEquals(List.of("Pod.spec.containers[0].securityContex: not a field of Container"),
        problems(yaml(executor.replace("    - name: spark-executor\n      securityContext:",
            "    - name: spark-executor\n      securityContex:")), Pod.class));
    assertEquals(List.of("Pod.spec.initContainers[0].resources.limit: not a field of "
        + "ResourceRequirements"), problems(yaml(executor.replaceFirst("limits:", "limit:")),
        Pod.class));
    List<String> typed = problems(yaml(executor.replace("add: [\"IPC_LOCK\"]",
        "add: {IPC_LOCK: true}")), Pod.class);
    assertEquals(1, typed.size(), typed.toString());
  }
}
