// `vigil export --format ocsf` on a real session: one OCSF line per proc.exec, fs.write
// and net.decision record, and every line validates against the OCSF 1.2.0 schema files
// vendored under tests/data/ocsf-1.2.0 (tests/integration/ocsf_check.py: required
// attributes, constraints, types, enums, nothing outside the class).
//
// Network: curl reaches vigil's proxy only; the allowed target is 127.0.0.1.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at) ++n;
  return n;
}

TEST(ExportTest, OcsfLinesValidateAgainstTheVendoredSchema) {
  if (run_program({"sh", "-c", "command -v python3"}, "/tmp", 10).exit_code != 0) {
    GTEST_SKIP() << "python3 is not installed: the OCSF checker cannot run";
  }
  TempDir ws, conf, out;
  write_file(conf / "s.json",
             R"({"filesystem": {"allowWrite": ["."]}, "network": {"allowedDomains": ["127.0.0.1:1"]}})");
  const std::string log = conf / "s.jsonl";
  const Outcome run = run_vigil(
      {"run", "--settings", conf / "s.json", "--log", log, "--", "sh", "-c",
       "echo a > a; mv a b; chmod 600 b; rm b; mkdir d; echo x > " + (out / "x") +
           "; echo x > .bashrc; curl -s --noproxy '' -o /dev/null http://127.0.0.1:1/; "
           "curl -s --noproxy '' -o /dev/null http://127.0.0.1:2/; true"},
      ws.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;

  const Outcome exported = run_vigil({"export", "--format", "ocsf", log}, ws.path());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  write_file(conf / "ocsf.jsonl", exported.out);
  const std::string records = read_file(log);
  EXPECT_EQ(count(exported.out, "\n"), count(records, "\"kind\":\"proc.exec\"") +
                                           count(records, "\"kind\":\"fs.write\"") +
                                           count(records, "\"kind\":\"net.decision\""));
  EXPECT_GT(count(exported.out, "\"class_uid\":1001"), 4U);  // the file system activity
  EXPECT_GT(count(exported.out, "\"class_uid\":1007"), 3U);  // sh, mv, chmod, rm, ...
  EXPECT_EQ(count(exported.out, "\"class_uid\":4001"), 2U);
  EXPECT_NE(exported.out.find("\"activity_id\":5,\"type_uid\":400105"), std::string::npos)
      << "the refused connection: Refuse";
  EXPECT_NE(exported.out.find("\"rule_id\":\"mandatory deny .bashrc\""), std::string::npos);

  const std::string checker = std::string(VIGIL_TEST_DATA_DIR) + "/../integration/ocsf_check.py";
  const Outcome checked =
      run_program({"sh", "-c", python3() + " '" + checker + "' '" + VIGIL_TEST_DATA_DIR +
                                   "/ocsf-1.2.0' < '" + (conf / "ocsf.jsonl") + "'"},
                  conf.path(), 60);
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  EXPECT_NE(checked.out.find(" 0 problems"), std::string::npos) << checked.out;

  // The checker is not a rubber stamp: a line it must refuse.
  write_file(conf / "bad.jsonl",
             R"({"class_uid":1001,"category_uid":1,"activity_id":42,"type_uid":100142,"time":1})"
             "\n");
  const Outcome refused =
      run_program({"sh", "-c", python3() + " '" + checker + "' '" + VIGIL_TEST_DATA_DIR +
                                   "/ocsf-1.2.0' < '" + (conf / "bad.jsonl") + "'"},
                  conf.path(), 60);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
}

TEST(ExportTest, AnUnknownFormatIsRefused) {
  TempDir d;
  const Outcome o = run_vigil({"export", "--format", "cef", d / "none.jsonl"}, d.path());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("known: ocsf"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
