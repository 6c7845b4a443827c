// Prints the JVM options Spark's own launcher adds (module openings), so scripts that start a
// driver with plain `java` use Spark's list instead of a copy of it.
public class SparkJvmOptions {
  public static void main(String[] args) {
    System.out.println(org.apache.spark.launcher.JavaModuleOptions.defaultModuleOptions());
  }
}
