#include "flow/runtime/engine/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "flow/runtime/common/time.h"

namespace flow::rt {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

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
  static constexpr std::pair<std::string_view, LogLevel> kLevels[] = {
      {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo}, {"warn", LogLevel::kWarn},
      {"error", LogLevel::kError}, {"off", LogLevel::kOff}};
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
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kError: return "ERROR";
    case LogLevel::kOff: return "OFF";
  }
  return "?";
}

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(g_level.load()); }

std::string FormatLogLine(LogLevel level, std::string_view component, std::string_view message,
                          LogFields fields) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
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
  std::string line = FormatLogLine(level, component, message, fields);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace flow::rt
