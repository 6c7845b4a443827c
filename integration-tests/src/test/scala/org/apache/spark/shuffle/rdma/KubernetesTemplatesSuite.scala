/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma

import java.io.File

import io.fabric8.kubernetes.api.model.{Container, Pod}
import io.fabric8.kubernetes.client.{Config, KubernetesClient, KubernetesClientBuilder}
import org.apache.spark.{SecurityManager, SparkConf}
import org.apache.spark.deploy.k8s.{KubernetesConf, KubernetesUtils, SparkPod}
import org.apache.spark.deploy.k8s.submit.{JavaMainAppResource, KubernetesDriverBuilder}
import org.apache.spark.resource.ResourceProfile
import org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBuilder
import org.apache.spark.shuffle.rdma.compat.CollectionConverters._
import org.apache.spark.shuffle.rdma.config.RdmaShuffleConf
import org.apache.spark.util.Utils
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * conf-templates/kubernetes/ read by the code Spark itself uses on Kubernetes: the pod
 * templates through KubernetesUtils.loadPodFromTemplate (fabric8's parser, so a template
 * Spark would reject fails here), then whole executor and driver pods built by Spark's
 * KubernetesExecutorBuilder and KubernetesDriverBuilder from spark-defaults.conf, as
 * spark-submit and the driver's executor allocator do. No cluster is contacted: the client
 * only parses the templates.
 */
class KubernetesTemplatesSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val dir = new File(sys.props.getOrElse("project.root",
    new File("..").getCanonicalPath), "conf-templates/kubernetes")
  private val executorTemplate = new File(dir, "executor-pod-template.yaml")
  private val driverTemplate = new File(dir, "driver-pod-template.yaml")
  // The NVIDIA Network Operator's shared-device resource (ContainerFacts.SHARED_DEVICE_RESOURCE).
  private val RdmaResource = "rdma/rdma_shared_device_a"
  private var client: KubernetesClient = _

  override def beforeAll(): Unit = {
    // A client that never talks to a cluster (no kubeconfig needed): templates only.
    client = new KubernetesClientBuilder()
      .withConfig(Config.empty()).build()
  }

  override def afterAll(): Unit = if (client != null) client.close()

  /** spark-defaults.conf from the templates, with the template paths of this checkout. */
  private def conf(): SparkConf = {
    val c = new SparkConf(false)
    Utils.getPropertiesFromFile(new File(dir, "spark-defaults.conf").getPath)
      .foreach { case (k, v) => c.set(k, v) }
    c.set("spark.master", "k8s://https://kubernetes.default.svc")
      .set("spark.app.name", "templates")
      .set("spark.kubernetes.executor.podTemplateFile", executorTemplate.getPath)
      .set("spark.kubernetes.driver.podTemplateFile", driverTemplate.getPath)
  }

  private def capabilities(c: Container): Seq[String] =
    Option(c.getSecurityContext).flatMap(s => Option(s.getCapabilities))
      .map(_.getAdd.asScala.toSeq).getOrElse(Nil)

  private def limit(c: Container, name: String): Option[String] =
    Option(c.getResources).flatMap(r => Option(r.getLimits))
      .flatMap(l => Option(l.get(name))).map(_.toString)

  test("the pod templates load with Spark's KubernetesUtils.loadPodFromTemplate") {
    val c = conf()
    val executor = KubernetesUtils.loadPodFromTemplate(client, executorTemplate.getPath,
      c.getOption("spark.kubernetes.executor.podTemplateContainerName"), c)
    assert(executor.container.getName === "spark-executor")
    val driver = KubernetesUtils.loadPodFromTemplate(client, driverTemplate.getPath,
      c.getOption("spark.kubernetes.driver.podTemplateContainerName"), c)
    assert(driver.container.getName === "spark-driver")
  }

  test("Spark's executor pod from the template has the RDMA device, IPC_LOCK and the doctor") {
    val c = conf()
    val execConf = KubernetesConf.createExecutorConf(c, "1", "spark-app-1", None)
    val spec = new KubernetesExecutorBuilder().buildFromFeatures(execConf,
      new SecurityManager(c), client, ResourceProfile.getOrCreateDefaultProfile(c))
    val SparkPod(pod: Pod, container: Container) = spec.pod
    assert(container.getName === "spark-executor")
    // Spark's own settings were merged into the template's container...
    assert(container.getImage === c.get("spark.kubernetes.container.image"))
    assert(limit(container, "memory").isDefined, container.getResources)
    // ...and the template's RDMA settings survived the merge.
    assert(limit(container, RdmaResource) === Some("1"), container.getResources)
    assert(capabilities(container).contains("IPC_LOCK"), container.getSecurityContext)
    val env = container.getEnv.asScala.flatMap(e => Option(e.getValue).map(e.getName -> _)).toMap
    assert(env.values.exists(_.contains("--add-opens=java.base/sun.nio.ch=ALL-UNNAMED")), env)

    val init = pod.getSpec.getInitContainers.asScala.find(_.getName == "rdma-doctor")
    assert(init.isDefined, pod.getSpec.getInitContainers)
    // Same image as the executor, through the same entrypoint wrapper (so as uid 185 with
    // what the wrapper gives it, as the executor), running the doctor.
    assert(init.get.getImage === c.get("spark.kubernetes.container.image"))
    assert(init.get.getCommand.asScala.toSeq === Seq("/opt/shuffle-rdma/rdma-entrypoint.sh"))
    assert(init.get.getArgs.asScala.mkString(" ").contains(
      "shuffle-rdma.jar doctor /opt/spark/conf/spark-defaults.conf"))
    // Nothing makes the pod non-root from the start (IPC_LOCK would never be effective).
    assert(Option(container.getSecurityContext.getRunAsUser).isEmpty)
    assert(Option(pod.getSpec.getSecurityContext).flatMap(s => Option(s.getRunAsUser)).isEmpty)
    assert(limit(init.get, RdmaResource) === Some("1"))
    assert(capabilities(init.get).contains("IPC_LOCK"))
    // The node service's socket directory (node-service-daemonset.yaml) survived the merge.
    val socketDir = pod.getSpec.getVolumes.asScala.find(_.getName == "shuffle-rdma-socket")
    assert(socketDir.flatMap(v => Option(v.getHostPath)).map(_.getPath) ===
      Some("/run/shuffle-rdma"), pod.getSpec.getVolumes)
    assert(container.getVolumeMounts.asScala.exists(m => m.getName == "shuffle-rdma-socket" &&
      m.getMountPath == "/run/shuffle-rdma"), container.getVolumeMounts)
  }

  test("Spark's driver spec carries the shuffle manager and transport keys to the executors") {
    val c = conf()
    val driverConf = KubernetesConf.createDriverConf(c, "spark-app-1",
      JavaMainAppResource(Some("local:///opt/app.jar")), "org.example.App", Array.empty, None)
    val spec = new KubernetesDriverBuilder().buildFromFeatures(driverConf, client)
    assert(spec.pod.container.getName === "spark-driver")
    assert(limit(spec.pod.container, RdmaResource).isEmpty, "the driver reads no blocks")
    // systemProperties become the driver's spark.properties; executors fetch them from it.
    val props = spec.systemProperties
    assert(props.get("spark.shuffle.manager") === Some(ClusterSupport.RdmaManager))
    assert(props.get("spark.shuffle.rdma.transport") === Some("auto"))
    assert(props.get("spark.shuffle.rdma.port") === Some("0"))
    assert(props.contains("spark.shuffle.rdma.bindAddress"))
    assert(props.get("spark.jars").exists(_.contains("shuffle-rdma.jar")))
    assert(props.get("spark.shuffle.rdma.maxRegisteredBytes") === Some("2g"))
    // The plugin accepts every spark.shuffle.rdma key of the template (bad ones fail here).
    val rdma = new RdmaShuffleConf(new SparkConf(false).setAll(props))
    assert(rdma.transport() === "auto")
    // The overhead covers the receive pool and the registered-bytes cap (docs/kubernetes.md 3).
    val overhead = c.getSizeAsBytes("spark.executor.memoryOverhead")
    val pool = c.getSizeAsBytes("spark.shuffle.rdma.verbs.receivePoolSize", "128m")
    val cap = c.getSizeAsBytes("spark.shuffle.rdma.maxRegisteredBytes")
    assert(cap > 0 && overhead >= pool + cap + (384L << 20), s"overhead $overhead, cap $cap")
  }
}
