#pragma once
// Serializer<T>: how keys, values and accumulators are written into state snapshots (and, later,
// into RocksDB keys/values). The heap backend never serializes on the hot path; only snapshots and
// restores do.
//
// Supported out of the box: integers (stored as 64 bits, range-checked on read), float/double,
// bool, std::string, std::vector, std::optional, std::pair, std::tuple, std::map,
// std::unordered_map, and any struct providing
//   void Serialize(BinaryWriter&) const;   Status Deserialize(BinaryReader&);
// (what generated record/key structs and accumulators provide).
//
// Errors: ReadValue returns Corruption on truncated or malformed input; it never trusts a length
// or count (every element takes at least one byte, so counts above the remaining bytes are
// rejected before any allocation).

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

template <typename T>
struct Serializer;  // specialised below; an unsupported type fails to compile

template <typename T>
concept Serializable = requires(BinaryWriter& w, BinaryReader& r, const T& cv, T* p) {
  Serializer<T>::Write(w, cv);
  { Serializer<T>::Read(r, p) } -> std::same_as<Status>;
};

template <typename T>
void WriteValue(BinaryWriter& w, const T& value) {
  Serializer<T>::Write(w, value);
}

template <typename T>
[[nodiscard]] Status ReadValue(BinaryReader& r, T* value) {
  return Serializer<T>::Read(r, value);
}

// Reads a collection count and checks it against the bytes left (each element needs >= 1 byte).
[[nodiscard]] inline Status ReadCount(BinaryReader& r, uint64_t* n, const char* what) {
  FLOW_RETURN_IF_ERROR(r.GetU64(n));
  if (*n > r.remaining()) {
    return Status::Corruption(std::string(what) + " count " + std::to_string(*n) + " exceeds the " +
                              std::to_string(r.remaining()) + " bytes left");
  }
  return Status::Ok();
}

template <>
struct Serializer<bool> {
  static void Write(BinaryWriter& w, bool v) { w.PutBool(v); }
  static Status Read(BinaryReader& r, bool* v) { return r.GetBool(v); }
};

template <std::signed_integral T>
struct Serializer<T> {
  static void Write(BinaryWriter& w, T v) { w.PutI64(static_cast<int64_t>(v)); }
  static Status Read(BinaryReader& r, T* v) {
    int64_t x = 0;
    FLOW_RETURN_IF_ERROR(r.GetI64(&x));
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
      return Status::Corruption("integer " + std::to_string(x) + " out of range");
    }
    *v = static_cast<T>(x);
    return Status::Ok();
  }
};

template <std::unsigned_integral T>
requires(!std::same_as<T, bool>) struct Serializer<T> {
  static void Write(BinaryWriter& w, T v) { w.PutU64(static_cast<uint64_t>(v)); }
  static Status Read(BinaryReader& r, T* v) {
    uint64_t x = 0;
    FLOW_RETURN_IF_ERROR(r.GetU64(&x));
    if (x > std::numeric_limits<T>::max()) {
      return Status::Corruption("unsigned integer " + std::to_string(x) + " out of range");
    }
    *v = static_cast<T>(x);
    return Status::Ok();
  }
};

template <std::floating_point T>
struct Serializer<T> {
  static void Write(BinaryWriter& w, T v) { w.PutF64(static_cast<double>(v)); }
  static Status Read(BinaryReader& r, T* v) {
    double x = 0;
    FLOW_RETURN_IF_ERROR(r.GetF64(&x));
    *v = static_cast<T>(x);
    return Status::Ok();
  }
};

template <>
struct Serializer<std::string> {
  static void Write(BinaryWriter& w, const std::string& v) { w.PutString(v); }
  static Status Read(BinaryReader& r, std::string* v) { return r.GetString(v); }
};

template <Serializable T>
struct Serializer<std::vector<T>> {
  static void Write(BinaryWriter& w, const std::vector<T>& v) {
    w.PutU64(v.size());
    for (const T& e : v) WriteValue(w, e);
  }
  static Status Read(BinaryReader& r, std::vector<T>* v) {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(ReadCount(r, &n, "vector"));
    v->clear();
    v->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      T e{};
      FLOW_RETURN_IF_ERROR(ReadValue(r, &e));
      v->push_back(std::move(e));
    }
    return Status::Ok();
  }
};

template <Serializable T>
struct Serializer<std::optional<T>> {
  static void Write(BinaryWriter& w, const std::optional<T>& v) {
    w.PutBool(v.has_value());
    if (v) WriteValue(w, *v);
  }
  static Status Read(BinaryReader& r, std::optional<T>* v) {
    bool present = false;
    FLOW_RETURN_IF_ERROR(r.GetBool(&present));
    if (!present) {
      v->reset();
      return Status::Ok();
    }
    T e{};
    FLOW_RETURN_IF_ERROR(ReadValue(r, &e));
    *v = std::move(e);
    return Status::Ok();
  }
};

template <Serializable A, Serializable B>
struct Serializer<std::pair<A, B>> {
  static void Write(BinaryWriter& w, const std::pair<A, B>& v) {
    WriteValue(w, v.first);
    WriteValue(w, v.second);
  }
  static Status Read(BinaryReader& r, std::pair<A, B>* v) {
    FLOW_RETURN_IF_ERROR(ReadValue(r, &v->first));
    return ReadValue(r, &v->second);
  }
};

template <Serializable... Ts>
struct Serializer<std::tuple<Ts...>> {
  static void Write(BinaryWriter& w, const std::tuple<Ts...>& v) {
    std::apply([&w](const Ts&... e) { (WriteValue(w, e), ...); }, v);
  }
  static Status Read(BinaryReader& r, std::tuple<Ts...>* v) {
    Status status;
    std::apply(
        [&](Ts&... e) {
          // Stops at the first error: later elements are not read.
          ((status.ok() ? (void)(status = ReadValue(r, &e)) : (void)0), ...);
        },
        *v);
    return status;
  }
};

// Shared by std::map and std::unordered_map.
template <typename M>
struct MapSerializer {
  static void Write(BinaryWriter& w, const M& m) {
    w.PutU64(m.size());
    for (const auto& [k, v] : m) {
      WriteValue(w, k);
      WriteValue(w, v);
    }
  }
  static Status Read(BinaryReader& r, M* m) {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(ReadCount(r, &n, "map"));
    m->clear();
    for (uint64_t i = 0; i < n; ++i) {
      typename M::key_type k{};
      typename M::mapped_type v{};
      FLOW_RETURN_IF_ERROR(ReadValue(r, &k));
      FLOW_RETURN_IF_ERROR(ReadValue(r, &v));
      if (!m->emplace(std::move(k), std::move(v)).second) {
        return Status::Corruption("duplicate map key");
      }
    }
    return Status::Ok();
  }
};

template <Serializable K, Serializable V, typename C, typename A>
struct Serializer<std::map<K, V, C, A>> : MapSerializer<std::map<K, V, C, A>> {};

template <Serializable K, Serializable V, typename H, typename E, typename A>
struct Serializer<std::unordered_map<K, V, H, E, A>>
    : MapSerializer<std::unordered_map<K, V, H, E, A>> {};

// Generated structs (records, keys, accumulators) serialize themselves.
template <typename T>
requires requires(const T& cv, T& v, BinaryWriter& w, BinaryReader& r) {
  cv.Serialize(w);
  { v.Deserialize(r) } -> std::same_as<Status>;
}
struct Serializer<T> {
  static void Write(BinaryWriter& w, const T& v) { v.Serialize(w); }
  static Status Read(BinaryReader& r, T* v) { return v->Deserialize(r); }
};

}  // namespace flow::rt
