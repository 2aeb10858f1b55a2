// vigil.export (policy_loader_export.cc): what `vigil export --follow` reads from settings.
#include <gtest/gtest.h>

#include "supervisor/core/policy/policy_loader.h"

namespace vigil {
namespace {

const LoadContext kCtx{"/nonexistent-vigil/proj", "/nonexistent-vigil/home"};

TEST(PolicyLoaderExportTest, SyslogJournaldAndTheSpoolCap) {
  auto p = parse_policy(
      R"({"vigil": {"export": {"syslog": {"host": "c.example", "port": 6514, "tls": true,
          "ca": "~/ca.pem"}, "journald": true, "spoolMaxBytes": 1048576}}})",
      "s.json", kCtx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const ExportOptions& x = p->vigil.export_options;
  EXPECT_EQ(x.syslog_host, "c.example");
  EXPECT_EQ(x.syslog_port, 6514);
  EXPECT_TRUE(x.syslog_tls);
  EXPECT_EQ(x.syslog_ca, "/nonexistent-vigil/home/ca.pem");
  EXPECT_TRUE(x.journald);
  EXPECT_EQ(x.spool_max_bytes, 1048576u);
  auto none = parse_policy("{}", "s.json", kCtx);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->vigil.export_options, ExportOptions{});
}

TEST(PolicyLoaderExportTest, WrongValuesAreRefusedWithTheKey) {
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {R"({"vigil": {"export": {"syslog": {"port": 514}}}})", "vigil.export.syslog.host"},
      {R"({"vigil": {"export": {"syslog": {"host": "a b", "port": 514}}}})", "not a host"},
      {R"({"vigil": {"export": {"syslog": {"host": "h", "port": 0}}}})", "vigil.export.syslog.port"},
      {R"({"vigil": {"export": {"syslog": {"host": "h", "port": 70000}}}})", "1 to 65535"},
      {R"({"vigil": {"export": {"syslog": {"host": "h", "port": 1, "tls": true}}}})", "no ca"},
      {R"({"vigil": {"export": {"syslog": {"host": "h", "port": 1, "cert": "x"}}}})", "unknown key"},
      {R"({"vigil": {"export": {"spoolMaxBytes": 10}}})", "vigil.export.spoolMaxBytes"},
      {R"({"vigil": {"export": {"journald": "yes"}}})", "a boolean"},
      {R"({"vigil": {"export": {"sylog": {}}}})", "did you mean syslog"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto p = parse_policy(c.text, "s.json", kCtx);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find(c.says), std::string::npos) << p.error().message;
  }
}

}  // namespace
}  // namespace vigil
