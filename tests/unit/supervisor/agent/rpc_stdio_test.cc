// The id of a request line that does not parse (supervisor/agent/rpc_stdio.h): told only
// when it is sure, so that a client waiting for it gets its error instead of waiting on.
#include "supervisor/agent/rpc_stdio.h"

#include <gtest/gtest.h>

#include "supervisor/agent/rpc_run.h"

namespace vigil::rpc {
namespace {

using json = nlohmann::json;

TEST(RecoverRequestId, ALoneSurrogateLineStillNamesItsId) {
  const struct {
    std::string line;
    json id;  // null: none
  } rows[] = {
      {R"({"method":"tools/call","params":{"c":"echo \ud800"},"jsonrpc":"2.0","id":7})", 7},
      {R"({"jsonrpc":"2.0","id":"a-1","method":"x","params":{"c":"\udfff x"}})", "a-1"},
      // A valid pair is kept; the lone one after it is what fails.
      {R"({"id":3,"params":{"c":"\ud83d\ude00 \ud83d"}})", 3},
      // An escaped backslash before u is no escape.
      {R"({"id":4,"params":{"c":"\\ud800 \ud800"}})", 4},
      // Not JSON at all, and no id at its end.
      {R"(not json)", nullptr},
      {R"({"params":{"id":5}})", nullptr},
  };
  for (const auto& r : rows) {
    const auto got = recover_request_id(r.line, {});
    if (r.id.is_null()) {
      EXPECT_FALSE(got) << r.line;
    } else {
      ASSERT_TRUE(got) << r.line;
      EXPECT_EQ(*got, r.id) << r.line;
    }
  }
}

TEST(RecoverRequestId, ALineTooLongIsToldByItsEnd) {
  EXPECT_EQ(recover_request_id("{\"method\":\"tools/call\",\"params\":{\"c\":\"xxx", "xxx\"}},\"jsonrpc\":\"2.0\",\"id\":12}"),
            json(12));
  // A nested id followed by two braces is not the request's.
  EXPECT_FALSE(recover_request_id("{\"params\":{\"a\":\"xxx", "xx\",\"id\":12}}"));
  EXPECT_FALSE(recover_request_id("{\"params\":{\"a\":\"xxx", "xx\"}}"));
}

TEST(RunParams, ArgumentsNoProgramCanHoldAreRefused) {
  const std::string ws = "/";
  EXPECT_TRUE(std::holds_alternative<RpcError>(run_params({{"argv", {std::string("a\0b", 3)}}}, ws)));
  EXPECT_TRUE(std::holds_alternative<RpcError>(run_params({{"argv", {"true"}}, {"cwd", std::string("/\0x", 3)}}, ws)));
  EXPECT_TRUE(std::holds_alternative<RpcError>(run_params({{"argv", {"true"}}, {"env", {{"A", std::string("x\0y", 3)}}}}, ws)));
  EXPECT_TRUE(std::holds_alternative<RpcError>(run_params({{"argv", {"true"}}, {"env", {{"A=B", "x"}}}}, ws)));
  EXPECT_TRUE(std::holds_alternative<RpcError>(run_params({{"argv", {"true"}}, {"timeout", 1e300}}, ws)));
  EXPECT_TRUE(std::holds_alternative<RunParams>(run_params({{"argv", {"true"}}, {"env", {{"A", "x"}}}}, ws)));
}

TEST(EnvEntries, GivenNamesReplaceTheBasesAndTheRestStays) {
  auto e = env_entries(json{{"PATH", "/x"}, {"NEW", "1"}}, {"PATH=/usr/bin", "HOME=/h"});
  ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(e));
  EXPECT_EQ(std::get<std::vector<std::string>>(e),
            (std::vector<std::string>{"HOME=/h", "NEW=1", "PATH=/x"}));
  EXPECT_TRUE(std::holds_alternative<RpcError>(env_entries(json("A=B"))));
  EXPECT_TRUE(std::holds_alternative<RpcError>(env_entries(json{{"", "x"}})));
}

}  // namespace
}  // namespace vigil::rpc
