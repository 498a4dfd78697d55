package flow.bench;

import java.lang.management.ManagementFactory;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.contrib.streaming.state.EmbeddedRocksDBStateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The Flink peer of Flow's Nexmark benchmark: runs one query on a local MiniCluster in this JVM.
 *
 * <pre>
 *   java -cp target/flow-nexmark-flink-0.1.0.jar:target/lib/* flow.bench.NexmarkFlink \
 *       --query q5 --events 1000000 [--rate 10000] [--parallelism 1] \
 *       [--checkpoint-ms 0|1000] [--state hashmap|rocksdb] [--checkpoint-dir /tmp/...]
 *   ... flow.bench.NexmarkFlink --dump 1000      (the first N events, as nexmark_limit --dump)
 * </pre>
 *
 * Prints one JSON line: system, query, events, rows, checksum, cpu_s (process CPU time so far,
 * JVM start included), job_cpu_s (CPU time of the job execution only), wall_s (job only).
 * Exit codes: 0 ok, 1 the job failed, 2 bad usage.
 */
public final class NexmarkFlink {
  private NexmarkFlink() {}

  private static double processCpuSeconds() {
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    return os.getProcessCpuTime() / 1e9;
  }

  private static int usage(String message) {
    System.err.println("NexmarkFlink: " + message);
    System.err.println("usage: --query q0|q1|q2|q3|q5|q7|q8|q11 --events N [--rate R] "
        + "[--parallelism P] [--checkpoint-ms MS] [--state hashmap|rocksdb] [--checkpoint-dir D]"
        + " | --dump N");
    return 2;
  }

  public static void main(String[] args) throws Exception {
    System.exit(run(args));
  }

  static int run(String[] args) throws Exception {
    String query = null;
    long events = 0;
    double rate = 10000;
    int parallelism = 1;
    long checkpointMs = 0;
    String state = "hashmap";
    String checkpointDir = "file:///tmp/flow-bench-flink-checkpoints";
    long dump = -1;
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length) return usage("missing value of " + args[i]);
      String v = args[i + 1];
      switch (args[i]) {
        case "--query" -> query = v;
        case "--events" -> events = Long.parseLong(v);
        case "--rate" -> rate = Double.parseDouble(v);
        case "--parallelism" -> parallelism = Integer.parseInt(v);
        case "--checkpoint-ms" -> checkpointMs = Long.parseLong(v);
        case "--state" -> state = v;
        case "--checkpoint-dir" -> checkpointDir = v;
        case "--dump" -> dump = Long.parseLong(v);
        default -> {
          return usage("unknown flag " + args[i]);
        }
      }
    }
    if (dump >= 0) {
      Dump.print(new NexmarkGenerator(dump, rate, NexmarkGenerator.DEFAULT_BASE_TIME), dump);
      return 0;
    }
    if (query == null || events <= 0) return usage("--query and --events > 0 are required");
    if (!state.equals("hashmap") && !state.equals("rocksdb")) return usage("bad --state " + state);

    Configuration conf = new Configuration();
    conf.set(TaskManagerOptions.NUM_TASK_SLOTS, parallelism);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
    env.getConfig().enableObjectReuse();
    if (checkpointMs > 0) {
      env.enableCheckpointing(checkpointMs);
      env.getCheckpointConfig().setCheckpointStorage(checkpointDir);
      env.setStateBackend(state.equals("rocksdb")
          ? new EmbeddedRocksDBStateBackend(true) : new HashMapStateBackend());
    } else if (state.equals("rocksdb")) {
      env.setStateBackend(new EmbeddedRocksDBStateBackend());
    }
    NexmarkGenerator gen = new NexmarkGenerator(events, rate, NexmarkGenerator.DEFAULT_BASE_TIME);
    Queries.build(query, env, gen);

    double cpuBefore = processCpuSeconds();
    long wallBefore = System.nanoTime();
    JobExecutionResult result = env.execute("nexmark " + query);
    double wall = (System.nanoTime() - wallBefore) / 1e9;
    double cpuAfter = processCpuSeconds();
    Long rows = result.getAccumulatorResult("rows");
    Long sum = result.getAccumulatorResult("sum");
    System.out.printf(
        "{\"system\": \"flink\", \"query\": \"%s\", \"events\": %d, \"rows\": %d, "
            + "\"checksum\": \"%016x\", \"cpu_s\": %.6f, \"job_cpu_s\": %.6f, \"wall_s\": %.6f}%n",
        query, events, rows == null ? 0 : rows, sum == null ? 0 : sum, cpuAfter,
        cpuAfter - cpuBefore, wall);
    return 0;
  }
}
