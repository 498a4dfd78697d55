#pragma once
// Structured log lines on stderr: "<ts> <LEVEL> <component> <message> key=value ...".
// ts is RFC 3339 UTC with milliseconds; values containing spaces, quotes or '=' are quoted.
// With LogFormat::kJson (--log-format json, for log collectors) each line is one JSON object:
// {"ts":"...","level":"INFO","component":"engine","message":"...","key":"value",...}.
// Threading: thread-safe; each line is written with one call so lines never interleave.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace flow::rt {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// Parses "debug", "info", "warn", "error", "off"; false otherwise.
bool ParseLogLevel(std::string_view text, LogLevel* out);
const char* LogLevelName(LogLevel level);

// Lines below this level are dropped. Default: kInfo.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

enum class LogFormat { kText, kJson };
// Parses "text", "json"; false otherwise.
bool ParseLogFormat(std::string_view text, LogFormat* out);
// Process-wide. Default: kText.
void SetLogFormat(LogFormat format);

using LogFields = std::initializer_list<std::pair<std::string_view, std::string>>;

// Formats one log line (no trailing newline); exposed for tests.
std::string FormatLogLine(LogLevel level, std::string_view component, std::string_view message,
                          LogFields fields, LogFormat format = LogFormat::kText);
void Log(LogLevel level, std::string_view component, std::string_view message,
         LogFields fields = {});

}  // namespace flow::rt
