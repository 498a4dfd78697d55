package flow.bench;

import java.util.Collections;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.source.RichParallelSourceFunction;

/**
 * Emits the events of one kind from the Nexmark sequence. Subtask s of P takes the indices i with
 * i % P == s, as Flow's nexmark source does, so every subtask's events are in timestamp order.
 * The position (indices consumed) is checkpointed.
 */
public final class NexmarkSource<T> extends RichParallelSourceFunction<T>
    implements CheckpointedFunction {
  private final NexmarkGenerator generator;
  private final int kind;
  private volatile boolean running = true;
  private long next;
  private transient ListState<Long> position;

  public NexmarkSource(NexmarkGenerator generator, int kind) {
    this.generator = generator;
    this.kind = kind;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) throws Exception {
    position = context.getOperatorStateStore()
        .getListState(new ListStateDescriptor<>("position", Long.class));
    next = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    for (Long saved : position.get()) next = saved;
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) throws Exception {
    position.update(Collections.singletonList(next));
  }

  @SuppressWarnings("unchecked")
  @Override
  public void run(SourceContext<T> ctx) {
    final long step = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
    final long end = generator.events();
    final Object lock = ctx.getCheckpointLock();
    while (running && next < end) {
      final long index = next;
      synchronized (lock) {
        next = index + step;
        if (NexmarkGenerator.kindAt(index) != kind) continue;
        Object event;
        if (kind == Event.BID) {
          Bid b = new Bid();
          generator.generateBid(index, b);
          event = b;
        } else if (kind == Event.AUCTION) {
          Auction a = new Auction();
          generator.generateAuction(index, a);
          event = a;
        } else {
          Person p = new Person();
          generator.generatePerson(index, p);
          event = p;
        }
        ctx.collect((T) event);
      }
    }
  }

  @Override
  public void cancel() {
    running = false;
  }
}
