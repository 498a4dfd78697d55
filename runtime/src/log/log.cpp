#include "flow/runtime/log/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "flow/runtime/common/time.h"
#include "flow/runtime/formats/json_encoder.h"

namespace flow::rt {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_format{static_cast<int>(LogFormat::kText)};

void AppendValue(std::string* out, std::string_view v) {
  bool quote = v.empty() || v.find_first_of(" \"=\t\n") != std::string_view::npos;
  if (!quote) {
    out->append(v);
    return;
  }
  out->push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') out->push_back('\\');
    if (c == '\n') {
      out->append("\\n");
      continue;
    }
    out->push_back(c);
  }
  out->push_back('"');
}
}  // namespace

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  static constexpr std::pair<std::string_view, LogLevel> kLevels[] = {{"debug", LogLevel::kDebug},
                                                                      {"info", LogLevel::kInfo},
                                                                      {"warn", LogLevel::kWarn},
                                                                      {"error", LogLevel::kError},
                                                                      {"off", LogLevel::kOff}};
  for (const auto& [name, level] : kLevels) {
    if (text == name) {
      *out = level;
      return true;
    }
  }
  return false;
}

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
    case LogLevel::kOff:
      return "OFF";
  }
  return "?";
}

bool ParseLogFormat(std::string_view text, LogFormat* out) {
  if (text == "text" || text == "json") {
    *out = text == "json" ? LogFormat::kJson : LogFormat::kText;
    return true;
  }
  return false;
}

void SetLogFormat(LogFormat format) {
  g_format.store(static_cast<int>(format));
}

void SetLogLevel(LogLevel level) {
  g_level.store(static_cast<int>(level));
}
LogLevel GetLogLevel() {
  return static_cast<LogLevel>(g_level.load());
}

std::string FormatLogLine(LogLevel level, std::string_view component, std::string_view message,
                          LogFields fields, LogFormat format) {
  const TimestampMs now = WallNowMs();
  if (format == LogFormat::kJson) {
    JsonEncoder e;
    e.BeginObject();
    e.Key("ts");
    e.String(FormatTimestamp(now));
    e.Key("level");
    e.String(LogLevelName(level));
    e.Key("component");
    e.String(component);
    e.Key("message");
    e.String(message);
    for (const auto& [key, value] : fields) {
      e.Key(key);
      e.String(value);
    }
    e.EndObject();
    return std::string(e.view());
  }
  std::string line = FormatTimestamp(now);
  line += ' ';
  line += LogLevelName(level);
  line += ' ';
  line.append(component);
  line += ' ';
  line.append(message);
  for (const auto& [key, value] : fields) {
    line += ' ';
    line.append(key);
    line += '=';
    AppendValue(&line, value);
  }
  return line;
}

void Log(LogLevel level, std::string_view component, std::string_view message, LogFields fields) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  std::string line =
      FormatLogLine(level, component, message, fields,
                    static_cast<LogFormat>(g_format.load(std::memory_order_relaxed)));
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace flow::rt
