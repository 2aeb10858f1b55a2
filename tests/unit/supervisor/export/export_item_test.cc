#include "supervisor/export/export_item.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

ExportItem record() {
  ExportItem i;
  i.host = "laptop-7";
  i.session = "20261207T120000Z-abc";
  i.seq = 4;
  i.chain = std::string(64, 'a');
  i.prev = std::string(64, 'b');
  i.kind = "fs.write";
  i.verified = true;
  i.format = "vigil";
  i.payload = R"({"seq":4})";
  i.time_ms = 1796644800123;  // 2026-12-07T12:00:00.123Z
  return i;
}

TEST(ExportItemTest, ARecordIsOneRfc5424MessageWithItsChainInStructuredData) {
  EXPECT_EQ(syslog_message(record()),
            "<110>1 2026-12-07T12:00:00.123Z laptop-7 vigil - fs.write [vigil@32473 "
            "host=\"laptop-7\" session=\"20261207T120000Z-abc\" seq=\"4\" chain=\"" +
                std::string(64, 'a') + "\" prev=\"" + std::string(64, 'b') +
                "\" fmt=\"vigil\" verified=\"1\"] {\"seq\":4}");
}

TEST(ExportItemTest, AMarkIsCriticalAndItsReasonIsEscaped) {
  ExportItem m = record();
  m.mark = ExportItem::Mark::kBroken;
  m.why = "record 3 \"x\" ] \\ edited\n";
  const std::string msg = syslog_message(m);
  EXPECT_EQ(msg.rfind("<106>1 ", 0), 0u) << msg;
  EXPECT_NE(msg.find(R"(mark="broken" why="record 3 \"x\" \] \\ edited?")"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_NE(export_json_line(m).find(R"("vigil_export":"broken")"), std::string::npos);
}

TEST(ExportItemTest, ATooLongRecordGoesAsItsStructuredDataWithAStub) {
  ExportItem big = record();
  big.payload = std::string(kMaxSyslogMessage, 'x');
  const std::string msg = syslog_message(big);
  EXPECT_LE(msg.size(), kMaxSyslogMessage);
  EXPECT_NE(msg.find("cut=\"" + std::to_string(kMaxSyslogMessage) + "\""), std::string::npos);
  EXPECT_NE(msg.find("chain=\"" + std::string(64, 'a') + "\""), std::string::npos);
}

TEST(ExportItemTest, OctetCountingAndHostNames) {
  EXPECT_EQ(octet_frame("abc"), "3 abc");
  EXPECT_EQ(octet_frame(""), "0 ");
  EXPECT_EQ(syslog_host_name("my host\x01"), "myhost");
  EXPECT_EQ(syslog_host_name(""), "-");
  ExportItem no_time = record();
  no_time.time_ms.reset();
  EXPECT_NE(syslog_message(no_time).find("<110>1 - laptop-7"), std::string::npos);
}

TEST(ExportItemTest, JournaldFieldsAndTheBinaryFormForANewline) {
  ExportItem r = record();
  const std::string d = journald_datagram(r);
  EXPECT_NE(d.find("MESSAGE={\"seq\":4}\n"), std::string::npos);
  EXPECT_NE(d.find("VIGIL_SEQ=4\n"), std::string::npos);
  EXPECT_NE(d.find("VIGIL_CHAIN=" + std::string(64, 'a') + "\n"), std::string::npos);
  r.payload = "a\nb";
  const std::string bin = journald_datagram(r);
  EXPECT_NE(bin.find(std::string("MESSAGE\n\x03\0\0\0\0\0\0\0a\nb\n", 16)), std::string::npos);
}

}  // namespace
}  // namespace vigil
