#pragma once
// Checkpoint encoding of Flow values (used by the aggregate accumulators), on top of
// flow::rt::BinaryWriter/BinaryReader: bool as one byte, integers (also timestamps/durations) as
// int64, double as IEEE bits, strings length-prefixed, optional as a presence bool + value, vectors
// as a u64 count + elements. Generated record structs provide ADL-found
// `void FlowWrite(rt::BinaryWriter&, const R&)` and `rt::Status FlowRead(rt::BinaryReader&, R*)`.
// Reading never trusts its input: a short or malformed buffer gives a Corruption status.

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flow/runtime/common/serde.h"
#include "flow/stdlib/lift.h"

namespace flow::fn {

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

template <typename T>
void WriteValue(rt::BinaryWriter& w, const T& v) {
  if constexpr (std::same_as<T, bool>) {
    w.PutBool(v);
  } else if constexpr (std::integral<T>) {
    w.PutI64(static_cast<int64_t>(v));
  } else if constexpr (std::floating_point<T>) {
    w.PutF64(static_cast<double>(v));
  } else if constexpr (std::same_as<T, std::string>) {
    w.PutString(v);
  } else if constexpr (kIsOptional<T>) {
    w.PutBool(v.has_value());
    if (v.has_value()) WriteValue(w, *v);
  } else if constexpr (IsVector<T>::value) {
    w.PutU64(v.size());
    for (const auto& e : v) WriteValue(w, e);
  } else {
    FlowWrite(w, v);
  }
}

template <typename T>
[[nodiscard]] rt::Status ReadValue(rt::BinaryReader& r, T* v) {
  if constexpr (std::same_as<T, bool>) {
    return r.GetBool(v);
  } else if constexpr (std::integral<T>) {
    int64_t x = 0;
    FLOW_RETURN_IF_ERROR(r.GetI64(&x));
    *v = static_cast<T>(x);
    return rt::Status::Ok();
  } else if constexpr (std::floating_point<T>) {
    double x = 0;
    FLOW_RETURN_IF_ERROR(r.GetF64(&x));
    *v = static_cast<T>(x);
    return rt::Status::Ok();
  } else if constexpr (std::same_as<T, std::string>) {
    return r.GetString(v);
  } else if constexpr (kIsOptional<T>) {
    bool present = false;
    FLOW_RETURN_IF_ERROR(r.GetBool(&present));
    if (!present) {
      v->reset();
      return rt::Status::Ok();
    }
    typename T::value_type inner{};
    FLOW_RETURN_IF_ERROR(ReadValue(r, &inner));
    *v = std::move(inner);
    return rt::Status::Ok();
  } else if constexpr (IsVector<T>::value) {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(r.GetU64(&n));
    // Every element takes at least one byte, so a larger count is corrupt (and must not be
    // allowed to reserve huge amounts of memory).
    if (n > r.remaining()) {
      return rt::Status::Corruption("list of " + std::to_string(n) + " elements exceeds the " +
                                    std::to_string(r.remaining()) + " bytes left");
    }
    v->clear();
    v->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      typename T::value_type e{};
      FLOW_RETURN_IF_ERROR(ReadValue(r, &e));
      v->push_back(std::move(e));
    }
    return rt::Status::Ok();
  } else {
    return FlowRead(r, v);
  }
}

}  // namespace flow::fn
