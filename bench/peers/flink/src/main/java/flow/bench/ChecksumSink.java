package flow.bench;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;

/** Counts result rows and sums their canonical hashes into the accumulators "rows" and "sum". */
public final class ChecksumSink<T> extends RichSinkFunction<T> {
  /** The canonical text of one result row. */
  public interface Formatter<T> extends java.io.Serializable {
    String format(T row);
  }

  private final Formatter<T> formatter;
  private transient LongCounter rows;
  private transient LongCounter sum;

  public ChecksumSink(Formatter<T> formatter) {
    this.formatter = formatter;
  }

  @Override
  public void open(OpenContext context) {
    rows = new LongCounter();
    sum = new LongCounter();
    getRuntimeContext().addAccumulator("rows", rows);
    getRuntimeContext().addAccumulator("sum", sum);
  }

  @Override
  public void invoke(T value, Context context) {
    rows.add(1);
    sum.add(RowChecksum.fnv1a64(formatter.format(value)));
  }
}
