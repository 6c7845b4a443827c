/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The plugin's packages import each other without cycles (read from the sources: package and
 * import lines of every main Java and Scala file), so each layer of the data flow can be read
 * and changed on its own.
 */
class PackageCycleTest {
  private static final String ROOT = "org.apache.spark.shuffle.rdma";
  private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+([\\w.]+)");
  private static final Pattern IMPORT =
      Pattern.compile("(?m)^import\\s+(?:static\\s+)?(" + Pattern.quote(ROOT) + "[\\w.]*)");

  @Test
  void packagesHaveNoCycle() throws IOException {
    Map<String, Set<String>> graph = importGraph(Paths.get("src/main"));
    assertTrue(graph.size() > 10, "too few packages found: " + graph.keySet());
    List<String> cycle = findCycle(graph);
    assertEquals(List.of(), cycle, "package import cycle");
  }

  /**
   * The node service is a process of its own built on registration and transport: nothing
   * imports it but its YARN auxiliary service (service.yarn, which starts it as a child
   * process), nothing imports that, and the hand-over protocol and descriptor passing, which
   * executors use too, know nothing of either.
   */
  @Test
  void nothingImportsTheNodeService() throws IOException {
    Map<String, Set<String>> graph = importGraph(Paths.get("src/main"));
    String service = ROOT + ".service";
    String yarn = service + ".yarn";
    assertTrue(graph.containsKey(service), "package " + service + " not found");
    assertTrue(graph.containsKey(yarn), "package " + yarn + " not found");
    for (Map.Entry<String, Set<String>> e : graph.entrySet()) {
      if (!e.getKey().equals(service) && !e.getKey().equals(yarn)) {
        assertTrue(!e.getValue().contains(service), e.getKey() + " imports " + service);
      }
      if (!e.getKey().equals(yarn)) {
        assertTrue(!e.getValue().contains(yarn), e.getKey() + " imports " + yarn);
      }
    }
    assertEquals(Set.of(), intersection(graph.get(ROOT + ".handover"), Set.of(service, yarn)),
        "the hand-over protocol depends on no service");
    assertEquals(Set.of(), intersection(graph.get(ROOT + ".fdpass"), Set.of(service,
        ROOT + ".handover", ROOT + ".registration")), "fdpass depends on no shuffle layer");
  }

  private static Set<String> intersection(Set<String> a, Set<String> b) {
    Set<String> out = new TreeSet<>(a);
    out.retainAll(b);
    return out;
  }

  @Test
  void aCycleIsFound() {
    Map<String, Set<String>> g = new TreeMap<>();
    g.put("a", Set.of("b"));
    g.put("b", Set.of("c"));
    g.put("c", Set.of("a"));
    assertEquals(List.of("a", "b", "c", "a"), findCycle(g));
  }

  static Map<String, Set<String>> importGraph(Path srcMain) throws IOException {
    Map<String, Set<String>> graph = new TreeMap<>();
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.walk(srcMain)) {
      s.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".scala"))
          .forEach(files::add);
    }
    for (Path f : files) {
      String text = Files.readString(f, StandardCharsets.UTF_8);
      Matcher pm = PACKAGE.matcher(text);
      if (!pm.find() || !pm.group(1).startsWith(ROOT)) {
        continue;
      }
      String from = pm.group(1);
      Set<String> to = graph.computeIfAbsent(from, k -> new TreeSet<>());
      Matcher im = IMPORT.matcher(text);
      while (im.find()) {
        String target = packageOf(im.group(1));
        if (!target.equals(from)) {
          to.add(target);
        }
      }
    }
    return graph;
  }

  /** "a.b.Cls" or "a.b.Cls.Inner" or "a.b.{X, Y}" (Scala) to "a.b": up to the first capital. */
  private static String packageOf(String name) {
    StringBuilder pkg = new StringBuilder();
    for (String part : name.split("\\.")) {
      if (part.isEmpty() || Character.isUpperCase(part.charAt(0))) {
        break;
      }
      if (pkg.length() > 0) {
        pkg.append('.');
      }
      pkg.append(part);
    }
    return pkg.toString();
  }

  /** One cycle as a path that ends where it starts, or an empty list. */
  static List<String> findCycle(Map<String, Set<String>> graph) {
    Map<String, Integer> state = new TreeMap<>(); // 1 on the stack, 2 done
    List<String> stack = new ArrayList<>();
    for (String start : graph.keySet()) {
      List<String> c = visit(start, graph, state, stack);
      if (!c.isEmpty()) {
        return c;
      }
    }
    return List.of();
  }

  private static List<String> visit(String node, Map<String, Set<String>> graph,
      Map<String, Integer> state, List<String> stack) {
    Integer st = state.get(node);
    if (st != null && st == 2) {
      return List.of();
    }
    if (st != null && st == 1) {
      List<String> cycle = new ArrayList<>(stack.subList(stack.indexOf(node), stack.size()));
      cycle.add(node);
      return cycle;
    }
    state.put(node, 1);
    stack.add(node);
    for (String next : graph.getOrDefault(node, Set.of())) {
      List<String> c = visit(next, graph, state, stack);
      if (!c.isEmpty()) {
        return c;
      }
    }
    stack.remove(stack.size() - 1);
    state.put(node, 2);
    return List.of();
  }
}
