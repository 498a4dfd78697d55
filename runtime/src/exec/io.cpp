#include "flow/runtime/exec/io.h"

#include <cassert>

#include <fmt/format.h>

namespace flow::exec {

rt::Result<rt::RawSourceFactory> RawSourceFactoryFor(std::string kind,
                                                     rt::ConnectorOptions options) {
  // Built once now so bad options fail before the job starts; later calls cannot fail the same way.
  auto probe = rt::MakeRawSource(kind, options);
  if (!probe.ok()) return probe.status();
  return rt::RawSourceFactory([kind, options]() -> std::unique_ptr<rt::RawSource> {
    auto made = rt::MakeRawSource(kind, options);
    assert(made.ok() && "connector options were validated when the job was built");
    return made.ok() ? std::move(*made) : nullptr;
  });
}

rt::Result<rt::RawSinkFactory> RawSinkFactoryFor(std::string kind, rt::ConnectorOptions options) {
  auto probe = rt::MakeRawSink(kind, options);
  if (!probe.ok()) return probe.status();
  return rt::RawSinkFactory([kind, options]() -> std::unique_ptr<rt::RawSink> {
    auto made = rt::MakeRawSink(kind, options);
    assert(made.ok() && "connector options were validated when the job was built");
    return made.ok() ? std::move(*made) : nullptr;
  });
}

}  // namespace flow::exec

namespace flow::exec {

std::string OptionText(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& e : v) {
    if (!out.empty()) out += '\n';
    // A line break inside an entry would read as two entries: keep it visible as text instead.
    for (char c : e) {
      if (c == '\n' || c == '\r') {
        out += "\\n";
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string OptionText(double v) {
  return fmt::format("{}", v);
}

}  // namespace flow::exec
