#pragma once
// Writer: accumulates generated C++ and counts lines, so it can emit `#line` directives that map
// the following lines to the .flow file and, afterwards, back to the generated file itself.

#include <string>
#include <string_view>

#include "codegen/escape.h"

namespace flow::codegen {

class Writer {
 public:
  Writer(std::string flow_file, std::string cpp_file)
      : flow_literal_(CppStringLiteral(flow_file)), cpp_literal_(CppStringLiteral(cpp_file)) {}

  // Appends text; counts its newlines.
  void Put(std::string_view text) {
    for (char c : text) line_ += c == '\n' ? 1 : 0;
    out_.append(text);
  }
  void Line(std::string_view text) {
    Put(text);
    Put("\n");
  }
  // The next line is reported as line `flow_line` of the .flow file (no-op for line 0).
  void FlowLine(uint32_t flow_line) {
    if (flow_line == 0) return;
    Line("#line " + std::to_string(flow_line) + " " + flow_literal_);
    mapped_ = true;
  }
  // The next line is reported as itself again.
  void CppLine() {
    if (!mapped_) return;
    mapped_ = false;
    Line("#line " + std::to_string(line_ + 2) + " " + cpp_literal_);
  }
  const std::string& text() const { return out_; }

 private:
  std::string flow_literal_;
  std::string cpp_literal_;
  std::string out_;
  size_t line_ = 0;  // newlines written so far
  bool mapped_ = false;
};

}  // namespace flow::codegen
