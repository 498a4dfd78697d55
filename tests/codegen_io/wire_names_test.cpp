// flowc build with quoted field names: JSON keys and CSV header columns that are not identifiers
// (`user-id`, `@timestamp`, a quote and a backslash, non-ASCII) are read by their wire names and
// written back under them. Expected output is written out by hand here, byte for byte.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io_test_util.h"

namespace flow::codegen_io_test {
namespace {

using codegen_test::BuildJob;
using codegen_test::ScratchDir;
using codegen_test::Sorted;
using codegen_test::WriteText;

constexpr const char* kSchema = R"(schema Event {
  "user-id" as user_id: string,
  "@timestamp" as ts: timestamp,
  "say \"hi\" \\ ok" as said: int,
  "pr\u{e9}nom" as prenom: string?,
  "plain": int,
}
)";

// Builds `script` as `dir`/job and runs it with two subtasks.
testing::AssertionResult BuildAndRun(const std::string& dir, const std::string& script) {
  WriteText(dir + "/job.flow", script);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  if (built.exit_code != 0) return testing::AssertionFailure() << "flowc build: " << built.err;
  Ran ran = RunLimited({dir + "/job", "--parallelism", "2"}, 120);
  if (ran.exit_code != 0) return testing::AssertionFailure() << "job: " << ran.err;
  return testing::AssertionSuccess();
}

TEST(CodegenIoWireNames, JsonKeysAreReadAndWrittenByWireName) {
  std::string dir = ScratchDir("wire_json");
  // Keys in the input may be escaped any way JSON allows; unknown keys are skipped.
  WriteText(dir + "/in.jsonl",
            "{\"user-id\":\"u1\",\"@timestamp\":\"2026-03-01T09:00:00.000Z\",\"say \\\"hi\\\" \\\\ "
            "ok\":1,"
            "\"pr\xc3\xa9nom\":\"Zo\xc3\xab\",\"plain\":5}\n"
            "{\"pr\\u00e9nom\":null,\"user\\u002did\":\"u\\\"2\",\"\\u0040timestamp\":1000,"
            "\"say \\u0022hi\\u0022 \\u005c ok\":2,\"plain\":6,\"extra\":[1]}\n"
            "{\"user-id\":\"u3\",\"@timestamp\":0,\"say \\\"hi\\\" \\\\ ok\":3,\"plain\":7}\n");
  std::string script =
      std::string(kSchema) + "stream events = from file(path: \"" + dir +
      "/in.jsonl\") format json as Event\n"
      "events | where plain > 5 | into file(path: \"" +
      dir +
      "/out_all\") format json\n"
      "events | select user_id, said, plain * 2 as doubled, prenom | into file(path: \"" +
      dir + "/out_select\") format json\n";
  ASSERT_TRUE(BuildAndRun(dir, script));

  std::vector<std::string> want_all = {
      R"({"user-id":"u\"2","@timestamp":"1970-01-01T00:00:01.000Z","say \"hi\" \\ ok":2,"prénom":null,"plain":6})",
      R"({"user-id":"u3","@timestamp":"1970-01-01T00:00:00.000Z","say \"hi\" \\ ok":3,"prénom":null,"plain":7})",
  };
  EXPECT_EQ(Sorted(DirLines(dir + "/out_all")), Sorted(want_all));
  // Fields selected as they are keep their wire names; a computed column is named as in scripts.
  std::vector<std::string> want_select = {
      R"({"user-id":"u1","say \"hi\" \\ ok":1,"doubled":10,"prénom":"Zoë"})",
      R"({"user-id":"u\"2","say \"hi\" \\ ok":2,"doubled":12,"prénom":null})",
      R"({"user-id":"u3","say \"hi\" \\ ok":3,"doubled":14,"prénom":null})",
  };
  EXPECT_EQ(Sorted(DirLines(dir + "/out_select")), Sorted(want_select));
}

// A CSV header names columns by wire name, in any order; CSV output has no header and is
// positional, so wire names do not appear in it.
TEST(CodegenIoWireNames, CsvHeaderColumnsAreFoundByWireName) {
  std::string dir = ScratchDir("wire_csv");
  WriteText(dir + "/in.csv",
            "plain,\"say \"\"hi\"\" \\ ok\",pr\xc3\xa9nom,@timestamp,user-id\n"
            "1,10,\xc3\xa9t\xc3\xa9,2026-03-01T09:00:00Z,a\n"
            "2,20,,0,b\n");
  std::string script = std::string(kSchema) + "from file(path: \"" + dir +
                       "/in.csv\") format csv(header: true) as Event\n"
                       "  | into file(path: \"" +
                       dir + "/out_json\") format json\n";
  ASSERT_TRUE(BuildAndRun(dir, script));
  std::vector<std::string> want = {
      R"({"user-id":"a","@timestamp":"2026-03-01T09:00:00.000Z","say \"hi\" \\ ok":10,"prénom":"été","plain":1})",
      R"({"user-id":"b","@timestamp":"1970-01-01T00:00:00.000Z","say \"hi\" \\ ok":20,"prénom":null,"plain":2})",
  };
  EXPECT_EQ(Sorted(DirLines(dir + "/out_json")), Sorted(want));
}

}  // namespace
}  // namespace flow::codegen_io_test
