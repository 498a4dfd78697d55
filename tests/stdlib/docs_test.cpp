#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "stdlib/registry/registry.h"

namespace flow::stdlib {
namespace {

// docs/functions.md must be exactly what the generator prints, so the docs cannot drift.
TEST(StdlibFunctionsDoc, CommittedFileIsUpToDate) {
  std::string path = std::string(FLOW_SOURCE_DIR) + "/docs/functions.md";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot open " << path;
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_TRUE(buf.str() == FunctionsMarkdown())
      << "docs/functions.md is out of date; regenerate it with "
         "`build/bin/flow_docgen > docs/functions.md`";
}

TEST(StdlibFunctionsDoc, MentionsEveryFunction) {
  std::string md = FunctionsMarkdown();
  for (const FunctionSpec& fn : AllFunctions()) {
    EXPECT_NE(md.find("### `" + fn.name + "`"), std::string::npos) << fn.name;
    EXPECT_NE(md.find(fn.summary), std::string::npos) << fn.name;
  }
}

}  // namespace
}  // namespace flow::stdlib
