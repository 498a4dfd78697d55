#pragma once
// flow::agg: accumulators for Flow's aggregates; the registry's `cpp` field names the class
// template (e.g. "::flow::agg::Sum<{T}>" with {T} the C++ type of the argument, see scalar.h).
//
// Contract shared by every accumulator (a default-constructed one is the empty aggregate):
//   Add(v)            adds a value. Every class also takes std::optional<T> and skips null
//                     (SQL: aggregates ignore nulls). Count also has Add() for count().
//                     First/Last take the record's event time: Add(v, event_time_ms).
//   Retract(v)        removes a value added before (Count, Sum, Avg only), for retracting updates.
//   Merge(other)      adds everything `other` has seen: sliding-window panes and session merges.
//                     Merge of the states of a split input equals adding the whole input (for
//                     First/Last, `other` is taken to hold the later arrivals on ties; float sums
//                     may differ in the last bits).
//   Result()          the value; on an empty accumulator a neutral value (0, NaN for avg, T{}).
//   empty()           no non-null value was added; NullableResult(acc) gives std::nullopt then,
//                     for result types the checker made nullable.
//   Serialize(w) / Deserialize(r)   checkpoint state; each class writes a one-byte tag first and
//                     Deserialize returns Corruption (leaving the accumulator unchanged) on short,
//                     foreign or malformed data.
// Threading: not thread-safe; each instance belongs to one key/window on one subtask.

#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_set>

#include "flow/runtime/common/serde.h"
#include "flow/stdlib/hash.h"
#include "flow/stdlib/hyperloglog.h"
#include "flow/stdlib/lift.h"
#include "flow/stdlib/value_serde.h"

namespace flow::agg {
namespace detail {

// Reads and checks the leading tag byte of an accumulator's state.
inline rt::Status ReadTag(rt::BinaryReader& r, uint8_t expected, const char* what) {
  uint8_t tag = 0;
  rt::Status s = r.GetU8(&tag);
  if (!s.ok()) return rt::Status::Corruption(std::string(what) + " state: " + s.message());
  if (tag != expected) {
    // Tags are letters ('C' count, 'S' sum, ...); show them as such when they are.
    // Built by append: `"x" + std::string` trips a g++ 12 -Wrestrict false positive.
    auto show = [](std::string* out, uint8_t t) {
      if (t >= 0x21 && t <= 0x7e) {
        out->append(1, '\'').append(1, static_cast<char>(t)).append(1, '\'');
      } else {
        out->append(std::to_string(t));
      }
    };
    std::string message(what);
    message.append(" state: bad tag ");
    show(&message, tag);
    message.append(", expected ");
    show(&message, expected);
    return rt::Status::Corruption(std::move(message));
  }
  return rt::Status::Ok();
}

inline rt::Status Context(rt::Status s, const char* what) {
  if (s.ok()) return s;
  return rt::Status::Corruption(std::string(what) + " state: " + s.message());
}

// Integer sums wrap (two's complement) instead of overflowing.
template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::integral<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

// Neumaier-compensated double sum: far less rounding drift under long add/retract sequences.
struct CompensatedSum {
  double sum = 0;
  double carry = 0;
  void Add(double v) {
    double t = sum + v;
    if (std::fabs(sum) >= std::fabs(v)) {
      carry += (sum - t) + v;
    } else {
      carry += (v - t) + sum;
    }
    sum = t;
  }
  double value() const { return sum + carry; }
};

}  // namespace detail

// count() / count(x): rows, or rows where x is not null. Never null (0 when empty).
class Count {
 public:
  void Add() { ++n_; }
  template <typename V>
  void Add(const V& v) {
    if (fn::detail::Present(v)) ++n_;
  }
  void Retract() { --n_; }
  template <typename V>
  void Retract(const V& v) {
    if (fn::detail::Present(v)) --n_;
  }
  void Merge(const Count& other) { n_ += other.n_; }
  int64_t Result() const { return n_; }
  bool empty() const { return false; }

  void Serialize(rt::BinaryWriter& w) const {
    w.PutU8('C');
    w.PutI64(n_);
  }
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(detail::ReadTag(r, 'C', "count"));
    int64_t n = 0;
    FLOW_RETURN_IF_ERROR(detail::Context(r.GetI64(&n), "count"));
    n_ = n;
    return rt::Status::Ok();
  }

 private:
  int64_t n_ = 0;
};

// sum(x) for int (wrapping) or float (compensated).
template <typename T>
class Sum {
  static_assert(std::is_arithmetic_v<T>, "sum needs a numeric type");

 public:
  void Add(const T& v) { Apply(v, 1); }
  void Add(const std::optional<T>& v) {
    if (v) Add(*v);
  }
  void Retract(const T& v) { Apply(v, -1); }
  void Retract(const std::optional<T>& v) {
    if (v) Retract(*v);
  }
  void Merge(const Sum& other) {
    if constexpr (std::floating_point<T>) {
      sum_.Add(other.sum_.sum);
      sum_.Add(other.sum_.carry);
    } else {
      sum_ = detail::WrapAdd(sum_, other.sum_);
    }
    n_ += other.n_;
  }
  T Result() const {
    if constexpr (std::floating_point<T>) {
      return static_cast<T>(sum_.value());
    } else {
      return sum_;
    }
  }
  bool empty() const { return n_ == 0; }

  void Serialize(rt::BinaryWriter& w) const {
    w.PutU8('S');
    w.PutI64(n_);
    if constexpr (std::floating_point<T>) {
      w.PutF64(sum_.sum);
      w.PutF64(sum_.carry);
    } else {
      fn::WriteValue(w, sum_);
    }
  }
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(detail::ReadTag(r, 'S', "sum"));
    Sum next;
    FLOW_RETURN_IF_ERROR(detail::Context(r.GetI64(&next.n_), "sum"));
    if constexpr (std::floating_point<T>) {
      FLOW_RETURN_IF_ERROR(detail::Context(r.GetF64(&next.sum_.sum), "sum"));
      FLOW_RETURN_IF_ERROR(detail::Context(r.GetF64(&next.sum_.carry), "sum"));
    } else {
      FLOW_RETURN_IF_ERROR(detail::Context(fn::ReadValue(r, &next.sum_), "sum"));
    }
    *this = next;
    return rt::Status::Ok();
  }

 private:
  void Apply(const T& v, int sign) {
    if constexpr (std::floating_point<T>) {
      sum_.Add(sign > 0 ? static_cast<double>(v) : -static_cast<double>(v));
    } else {
      T delta = sign > 0 ? v : static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(v));
      sum_ = detail::WrapAdd(sum_, delta);
    }
    n_ += sign;
  }

  std::conditional_t<std::floating_point<T>, detail::CompensatedSum, T> sum_{};
  int64_t n_ = 0;
};

// avg(x) -> float. Integer inputs are summed exactly in 128 bits, so the mean never overflows.
template <typename T>
class Avg {
  static_assert(std::is_arithmetic_v<T>, "avg needs a numeric type");

 public:
  void Add(const T& v) { Apply(v, 1); }
  void Add(const std::optional<T>& v) {
    if (v) Add(*v);
  }
  void Retract(const T& v) { Apply(v, -1); }
  void Retract(const std::optional<T>& v) {
    if (v) Retract(*v);
  }
  void Merge(const Avg& other) {
    if constexpr (std::floating_point<T>) {
      sum_.Add(other.sum_.sum);
      sum_.Add(other.sum_.carry);
    } else {
      sum_ += other.sum_;
    }
    n_ += other.n_;
  }
  double Result() const {
    if (n_ == 0) return std::numeric_limits<double>::quiet_NaN();
    if constexpr (std::floating_point<T>) {
      return sum_.value() / static_cast<double>(n_);
    } else {
      return static_cast<double>(sum_) / static_cast<double>(n_);
    }
  }
  bool empty() const { return n_ == 0; }

  void Serialize(rt::BinaryWriter& w) const {
    w.PutU8('A');
    w.PutI64(n_);
    if constexpr (std::floating_point<T>) {
      w.PutF64(sum_.sum);
      w.PutF64(sum_.carry);
    } else {
      auto bits = static_cast<unsigned __int128>(sum_);
      w.PutU64(static_cast<uint64_t>(bits));
      w.PutU64(static_cast<uint64_t>(bits >> 64));
    }
  }
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(detail::ReadTag(r, 'A', "avg"));
    Avg next;
    FLOW_RETURN_IF_ERROR(detail::Context(r.GetI64(&next.n_), "avg"));
    if constexpr (std::floating_point<T>) {
      FLOW_RETURN_IF_ERROR(detail::Context(r.GetF64(&next.sum_.sum), "avg"));
      FLOW_RETURN_IF_ERROR(detail::Context(r.GetF64(&next.sum_.carry), "avg"));
    } else {
      uint64_t lo = 0, hi = 0;
      FLOW_RETURN_IF_ERROR(detail::Context(r.GetU64(&lo), "avg"));
      FLOW_RETURN_IF_ERROR(detail::Context(r.GetU64(&hi), "avg"));
      next.sum_ = static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
    }
    *this = next;
    return rt::Status::Ok();
  }

 private:
  void Apply(const T& v, int sign) {
    if constexpr (std::floating_point<T>) {
      sum_.Add(sign > 0 ? static_cast<double>(v) : -static_cast<double>(v));
    } else {
      sum_ += sign > 0 ? static_cast<__int128>(v) : -static_cast<__int128>(v);
    }
    n_ += sign;
  }

  std::conditional_t<std::floating_point<T>, detail::CompensatedSum, __int128> sum_{};
  int64_t n_ = 0;
};

// min(x) / max(x): the extreme non-null value by operator<; NaN counts as the largest float.
template <typename T, bool kIsMax>
class Extreme {
 public:
  void Add(const T& v) {
    if (!best_ || (kIsMax ? fn::detail::FlowLess(*best_, v) : fn::detail::FlowLess(v, *best_))) {
      best_ = v;
    }
  }
  void Add(const std::optional<T>& v) {
    if (v) Add(*v);
  }
  void Merge(const Extreme& other) {
    if (other.best_) Add(*other.best_);
  }
  T Result() const { return best_ ? *best_ : T{}; }
  bool empty() const { return !best_.has_value(); }

  void Serialize(rt::BinaryWriter& w) const {
    w.PutU8(kIsMax ? 'M' : 'm');
    fn::WriteValue(w, best_);
  }
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r) {
    const char* what = kIsMax ? "max" : "min";
    FLOW_RETURN_IF_ERROR(detail::ReadTag(r, kIsMax ? 'M' : 'm', what));
    std::optional<T> best;
    FLOW_RETURN_IF_ERROR(detail::Context(fn::ReadValue(r, &best), what));
    best_ = std::move(best);
    return rt::Status::Ok();
  }

 private:
  std::optional<T> best_;
};

template <typename T>
using Min = Extreme<T, false>;
template <typename T>
using Max = Extreme<T, true>;

// count_distinct(x): exact; keeps every distinct value in state.
template <typename T>
class CountDistinct {
 public:
  void Add(const T& v) { seen_.insert(v); }
  void Add(const std::optional<T>& v) {
    if (v) Add(*v);
  }
  void Merge(const CountDistinct& other) { seen_.insert(other.seen_.begin(), other.seen_.end()); }
  int64_t Result() const { return static_cast<int64_t>(seen_.size()); }
  bool empty() const { return seen_.empty(); }

  void Serialize(rt::BinaryWriter& w) const {
    w.PutU8('D');
    w.PutU64(seen_.size());
    for (const T& v : seen_) fn::WriteValue(w, v);
  }
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(detail::ReadTag(r, 'D', "count_distinct"));
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(detail::Context(r.GetU64(&n), "count_distinct"));
    if (n > r.remaining()) {
      return rt::Status::Corruption("count_distinct state: " + std::to_string(n) +
                                    " values exceed the " + std::to_string(r.remaining()) +
                                    " bytes left");
    }
    Set next;
    for (uint64_t i = 0; i < n; ++i) {
      T v{};
      FLOW_RETURN_IF_ERROR(detail::Context(fn::ReadValue(r, &v), "count_distinct"));
      next.insert(std::move(v));
    }
    seen_ = std::move(next);
    return rt::Status::Ok();
  }

 private:
  using Set = std::unordered_set<T, fn::StableHasher>;
  Set seen_;
};

// approx_distinct(x): HyperLogLog over the stable hash of each value (see hyperloglog.h).
template <typename T>
class ApproxDistinct {
 public:
  void Add(const T& v) { hll_.AddHash(fn::HashValue(v)); }
  void Add(const std::optional<T>& v) {
    if (v) Add(*v);
  }
  void Merge(const ApproxDistinct& other) { hll_.Merge(other.hll_); }
  int64_t Result() const { return hll_.Estimate(); }
  bool empty() const { return hll_.empty(); }

  void Serialize(rt::BinaryWriter& w) const { hll_.Serialize(w); }
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r) {
    HyperLogLog next;
    FLOW_RETURN_IF_ERROR(next.Deserialize(r));
    hll_ = std::move(next);
    return rt::Status::Ok();
  }

 private:
  HyperLogLog hll_;
};

// first(x) / last(x): the non-null value with the earliest / latest event time. Ties go to the
// earlier arrival for first and the later arrival for last.
template <typename T, bool kIsLast>
class ByTime {
 public:
  void Add(const T& v, int64_t event_time) {
    if (!value_ || (kIsLast ? event_time >= time_ : event_time < time_)) {
      value_ = v;
      time_ = event_time;
    }
  }
  void Add(const std::optional<T>& v, int64_t event_time) {
    if (v) Add(*v, event_time);
  }
  void Merge(const ByTime& other) {
    if (other.value_) Add(*other.value_, other.time_);
  }
  T Result() const { return value_ ? *value_ : T{}; }
  bool empty() const { return !value_.has_value(); }
  // The event time of Result(); meaningless when empty().
  int64_t time() const { return time_; }

  void Serialize(rt::BinaryWriter& w) const {
    w.PutU8(kIsLast ? 'L' : 'F');
    w.PutI64(time_);
    fn::WriteValue(w, value_);
  }
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r) {
    const char* what = kIsLast ? "last" : "first";
    FLOW_RETURN_IF_ERROR(detail::ReadTag(r, kIsLast ? 'L' : 'F', what));
    int64_t time = 0;
    std::optional<T> value;
    FLOW_RETURN_IF_ERROR(detail::Context(r.GetI64(&time), what));
    FLOW_RETURN_IF_ERROR(detail::Context(fn::ReadValue(r, &value), what));
    time_ = time;
    value_ = std::move(value);
    return rt::Status::Ok();
  }

 private:
  std::optional<T> value_;
  int64_t time_ = 0;
};

template <typename T>
using First = ByTime<T, false>;
template <typename T>
using Last = ByTime<T, true>;

// The result as std::optional: empty when the accumulator saw no non-null value.
template <typename Acc>
auto NullableResult(const Acc& acc) {
  using R = decltype(acc.Result());
  return acc.empty() ? std::optional<R>() : std::optional<R>(acc.Result());
}

}  // namespace flow::agg
