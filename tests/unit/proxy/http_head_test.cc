// The HTTP request/response head parser, target parsers, framing and rewriting, as
// tables: bytes in -> parsed head or the status the proxy answers with.
#include "proxy/http_head.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::proxy::http {
namespace {

using namespace std::string_literals;

// --- request heads -------------------------------------------------------------------

struct HeadRow {
  std::string in;
  ParseState state;
  int status = 0;           // kError: the status the proxy answers
  std::string method = "";  // kComplete
  std::string target = "";
  std::size_t headers = 0;
};

TEST(HttpRequestHead, Table) {
  const std::size_t kBig = kMaxHeadBytes;
  const std::vector<HeadRow> rows = {
      // complete
      {"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", ParseState::kComplete, 0, "GET",
       "http://a.test/", 1},
      {"GET http://a.test/ HTTP/1.0\r\n\r\n", ParseState::kComplete, 0, "GET", "http://a.test/", 0},
      {"CONNECT a.test:443 HTTP/1.1\r\n\r\n", ParseState::kComplete, 0, "CONNECT", "a.test:443", 0},
      {"GET http://a.test/ HTTP/1.1\nHost: a\n\n", ParseState::kComplete, 0, "GET",
       "http://a.test/", 1},  // bare LF
      {"\r\n\r\nGET http://a/ HTTP/1.1\r\n\r\n", ParseState::kComplete, 0, "GET", "http://a/",
       0},  // leading CRLFs
      {"GET http://a/ HTTP/1.1\r\nX:\r\n\r\n", ParseState::kComplete, 0, "GET", "http://a/",
       1},  // empty value
      {"GET http://a/ HTTP/1.1\r\nX: \xC3\xA9t\xC3\xA9\r\n\r\n", ParseState::kComplete, 0, "GET",
       "http://a/", 1},
      {"M-SEARCH http://a/ HTTP/1.1\r\n\r\n", ParseState::kComplete, 0, "M-SEARCH", "http://a/", 0},
      // incomplete
      {"", ParseState::kIncomplete},
      {"GET http://a/ HTTP/1.1\r\n", ParseState::kIncomplete},
      {"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r", ParseState::kIncomplete},
      {"\r", ParseState::kIncomplete},
      {"\r\n", ParseState::kIncomplete},
      // errors
      {"GET  http://a/ HTTP/1.1\r\n\r\n", ParseState::kError, 400},  // two spaces
      {"GET http://a/ HTTP/1.1 \r\n\r\n", ParseState::kError, 400},  // trailing space
      {"GET http://a/\r\n\r\n", ParseState::kError, 400},            // HTTP/0.9
      {"GET http://a/ HTTP/2.0\r\n\r\n", ParseState::kError, 505},
      {"GET http://a/ HTTP/1.2\r\n\r\n", ParseState::kError, 505},
      {"GET http://a/ HTTX/1.1\r\n\r\n", ParseState::kError, 400},
      {"GET http://a/ http/1.1\r\n\r\n", ParseState::kError, 400},
      {"G(T http://a/ HTTP/1.1\r\n\r\n", ParseState::kError, 400},          // method not a token
      {"GET http://a/\x7f HTTP/1.1\r\n\r\n", ParseState::kError, 400},      // DEL in target
      {"GET http://a/\xC3\xA9 HTTP/1.1\r\n\r\n", ParseState::kError, 400},  // raw UTF-8 in target
      {"GET http://a/ HTTP/1.1\r\nHost : a\r\n\r\n", ParseState::kError,
       400},                                                                  // space before colon
      {"GET http://a/ HTTP/1.1\r\nHost a\r\n\r\n", ParseState::kError, 400},  // no colon
      {"GET http://a/ HTTP/1.1\r\n: a\r\n\r\n", ParseState::kError, 400},     // empty name
      {"GET http://a/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", ParseState::kError, 400},  // obs-fold
      {"GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n", ParseState::kError, 400},     // bare CR
      {"GET http://a/ HTTP/1.1\r\nX: a\x01\r\n\r\n", ParseState::kError, 400},    // control byte
      {"GET http://a/ HTTP/1.1\r\nX: a\0b\r\n\r\n"s, ParseState::kError, 400},    // NUL
      {"\rGET http://a/ HTTP/1.1\r\n\r\n", ParseState::kError, 400},              // bare CR before
      {"GET http://a/ HTTP/1.1\r\nX: " + std::string(kBig, 'a') + "\r\n\r\n", ParseState::kError,
       431},
      {"GET http://a/ HTTP/1.1\r\nX: " + std::string(kBig, 'a'), ParseState::kError,
       431},  // no end yet
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.in.substr(0, 80));
    const auto p = parse_request_head(r.in);
    ASSERT_EQ(p.state, r.state) << p.error.message;
    if (r.state == ParseState::kError) {
      EXPECT_EQ(p.error.status, r.status) << p.error.message;
      EXPECT_FALSE(p.error.message.empty());
    }
    if (r.state == ParseState::kComplete) {
      EXPECT_EQ(p.head.method, r.method);
      EXPECT_EQ(p.head.target, r.target);
      EXPECT_EQ(p.head.headers.size(), r.headers);
      EXPECT_EQ(p.size, r.in.size());
    }
  }
}

TEST(HttpRequestHead, TooManyFields) {
  std::string in = "GET http://a/ HTTP/1.1\r\n";
  for (std::size_t i = 0; i <= kMaxHeaderFields; ++i) in += "X" + std::to_string(i) + ": v\r\n";
  in += "\r\n";
  const auto p = parse_request_head(in);
  ASSERT_EQ(p.state, ParseState::kError);
  EXPECT_EQ(p.error.status, 431);
}

TEST(HttpRequestHead, ExactlyAtTheLimit) {
  std::string in = "GET http://a/ HTTP/1.1\r\nX: ";
  const std::size_t pad = kMaxHeadBytes - in.size() - 4;
  in += std::string(pad, 'a') + "\r\n\r\n";
  ASSERT_EQ(in.size(), kMaxHeadBytes);
  EXPECT_EQ(parse_request_head(in).state, ParseState::kComplete);
  std::string over = in;
  over.insert(30, "b");
  EXPECT_EQ(parse_request_head(over).error.status, 431);
}

TEST(HttpRequestHead, BytesAfterTheHeadAreNotPartOfIt) {
  const std::string head = "POST http://a/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
  const auto p = parse_request_head(head + "helloGET http://b/ HTTP/1.1\r\n\r\n");
  ASSERT_EQ(p.state, ParseState::kComplete);
  EXPECT_EQ(p.size, head.size());
}

// Feeding byte by byte with a HeadScan gives the same result as parsing the whole head,
// for every way the end of a head can be split across reads.
TEST(HttpRequestHead, IncrementalEqualsWhole) {
  const std::vector<std::string> inputs = {
      "GET http://a/ HTTP/1.1\r\nHost: a\r\nX: y\r\n\r\nrest",
      "GET http://a/ HTTP/1.1\nHost: a\n\nrest",
      "\r\n\nGET http://a/ HTTP/1.1\r\n\nrest",
      "GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
  };
  for (const auto& in : inputs) {
    SCOPED_TRACE(in);
    const auto whole = parse_request_head(in);
    HeadScan scan;
    HeadParse<RequestHead> p;
    std::size_t n = 0;
    do {
      ++n;
      p = parse_request_head(std::string_view(in).substr(0, n), &scan);
    } while (p.state == ParseState::kIncomplete && n < in.size());
    EXPECT_EQ(p.state, whole.state);
    EXPECT_EQ(p.size, whole.size);
    EXPECT_EQ(p.head.headers.size(), whole.head.headers.size());
  }
}

// --- response heads --------------------------------------------------------------------

TEST(HttpResponseHead, Table) {
  struct Row {
    std::string in;
    ParseState state;
    int status;
    std::string reason;
  };
  const std::vector<Row> rows = {
      {"HTTP/1.1 200 OK\r\n\r\n", ParseState::kComplete, 200, "OK"},
      {"HTTP/1.0 404 Not Found\r\nX: y\r\n\r\n", ParseState::kComplete, 404, "Not Found"},
      {"HTTP/1.1 204\r\n\r\n", ParseState::kComplete, 204, ""},   // no reason, no space
      {"HTTP/1.1 204 \r\n\r\n", ParseState::kComplete, 204, ""},  // empty reason
      {"HTTP/1.1 100 Continue\r\n\r\n", ParseState::kComplete, 100, "Continue"},
      {"HTTP/1.1 200 OK\r\n", ParseState::kIncomplete, 0, ""},
      {"HTTP/1.1 20 OK\r\n\r\n", ParseState::kError, 0, ""},
      {"HTTP/1.1 020 OK\r\n\r\n", ParseState::kError, 0, ""},
      {"HTTP/1.1 2000 OK\r\n\r\n", ParseState::kError, 0, ""},
      {"HTTP/2 200 OK\r\n\r\n", ParseState::kError, 0, ""},
      {"ICY 200 OK\r\n\r\n", ParseState::kError, 0, ""},
      {"HTTP/1.1 200 O\x01K\r\n\r\n", ParseState::kError, 0, ""},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.in);
    const auto p = parse_response_head(r.in);
    ASSERT_EQ(p.state, r.state);
    if (r.state == ParseState::kComplete) {
      EXPECT_EQ(p.head.status, r.status);
      EXPECT_EQ(p.head.reason, r.reason);
    }
    if (r.state == ParseState::kError) {
      EXPECT_EQ(p.error.status, 502);  // the server's fault
    }
  }
}

// --- targets ------------------------------------------------------------------------------

TEST(HttpTarget, AuthorityForm) {
  struct Row {
    std::string in;
    bool ok;
    std::string host;
    std::uint16_t port;
  };
  const std::vector<Row> rows = {
      {"example.com:443", true, "example.com", 443},
      {"EXAMPLE.com:1", true, "EXAMPLE.com", 1},
      {"[::1]:8080", true, "::1", 8080},
      {"127.0.0.1:65535", true, "127.0.0.1", 65535},
      {"a:00080", true, "a", 80},
      {"example.com", false, "", 0},  // port required
      {"example.com:", false, "", 0},
      {"example.com:0", false, "", 0},
      {"example.com:65536", false, "", 0},
      {"example.com:123456", false, "", 0},
      {"example.com:-1", false, "", 0},
      {"example.com:+80", false, "", 0},
      {"::1:80", false, "", 0},  // IPv6 without brackets
      {"[::1]", false, "", 0},
      {"[::1", false, "", 0},
      {"[::1]x:80", false, "", 0},
      {":443", false, "", 0},
      {"user@example.com:443", false, "", 0},
      {"example.com:443/", false, "", 0},
      {"http://example.com:443", false, "", 0},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.in);
    const auto t = parse_authority_form(r.in);
    ASSERT_EQ(t.ok, r.ok) << t.error.message;
    if (r.ok) {
      EXPECT_EQ(t.target.host, r.host);
      EXPECT_EQ(t.target.port, r.port);
    } else {
      EXPECT_EQ(t.error.status, 400);
    }
  }
}

TEST(HttpTarget, AbsoluteForm) {
  struct Row {
    std::string in;
    bool ok;
    std::string host;
    std::uint16_t port;
    std::string origin;
  };
  const std::vector<Row> rows = {
      {"http://example.com/a/b?c=d", true, "example.com", 80, "/a/b?c=d"},
      {"http://example.com", true, "example.com", 80, "/"},
      {"http://example.com?q", true, "example.com", 80, "/?q"},
      {"HTTP://Example.COM:8080/", true, "Example.COM", 8080, "/"},
      {"http://example.com:/x", true, "example.com", 80, "/x"},  // empty port = default
      {"http://[::1]:81/x", true, "::1", 81, "/x"},
      {"http://127.1/", true, "127.1", 80, "/"},
      {"https://example.com/", false, "", 0, ""},  // must use CONNECT
      {"ftp://example.com/", false, "", 0, ""},
      {"/path", false, "", 0, ""},  // origin-form
      {"*", false, "", 0, ""},
      {"http://user:pw@example.com/", false, "", 0, ""},
      {"http://allowed.test@evil.test/", false, "", 0, ""},
      {"http://example.com/#frag", false, "", 0, ""},
      {"http:///path", false, "", 0, ""},
      {"http://example.com:0/", false, "", 0, ""},
      {"http://example.com:99999/", false, "", 0, ""},
      {"http://::1/", false, "", 0, ""},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.in);
    const auto t = parse_absolute_form(r.in);
    ASSERT_EQ(t.ok, r.ok) << t.error.message;
    if (r.ok) {
      EXPECT_EQ(t.target.host, r.host);
      EXPECT_EQ(t.target.port, r.port);
      EXPECT_EQ(t.target.origin_form, r.origin);
    }
  }
}

// --- framing ------------------------------------------------------------------------------

RequestHead request_with(const std::vector<Header>& headers, int minor = 1) {
  RequestHead h;
  h.method = "POST";
  h.target = "http://a/";
  h.minor_version = minor;
  h.headers = headers;
  return h;
}

TEST(HttpFraming, Requests) {
  using K = BodyFraming::Kind;
  struct Row {
    std::vector<Header> headers;
    int minor;
    bool ok;
    K kind;
    std::uint64_t length;
    int status;
  };
  const std::vector<Row> rows = {
      {{}, 1, true, K::kNone, 0, 0},
      {{{"Content-Length", "0"}}, 1, true, K::kNone, 0, 0},
      {{{"Content-Length", "5"}}, 1, true, K::kLength, 5, 0},
      {{{"content-length", "5"}, {"Content-Length", "5"}}, 1, true, K::kLength, 5, 0},
      {{{"Content-Length", "5, 5"}}, 1, true, K::kLength, 5, 0},
      {{{"Content-Length", "9999999999999999999"}}, 1, true, K::kLength, 9999999999999999999ull, 0},
      {{{"Content-Length", "5"}, {"Content-Length", "6"}}, 1, false, K::kNone, 0, 400},
      {{{"Content-Length", "5, 6"}}, 1, false, K::kNone, 0, 400},
      {{{"Content-Length", "-5"}}, 1, false, K::kNone, 0, 400},
      {{{"Content-Length", "0x5"}}, 1, false, K::kNone, 0, 400},
      {{{"Content-Length", ""}}, 1, false, K::kNone, 0, 400},
      {{{"Content-Length", "5,"}}, 1, false, K::kNone, 0, 400},
      {{{"Content-Length", "10000000000000000000"}}, 1, false, K::kNone, 0, 400},  // 20 digits
      {{{"Transfer-Encoding", "chunked"}}, 1, true, K::kChunked, 0, 0},
      {{{"Transfer-Encoding", "gzip, Chunked"}}, 1, true, K::kChunked, 0, 0},
      {{{"Transfer-Encoding", "gzip"}, {"Transfer-Encoding", "chunked"}},
       1,
       true,
       K::kChunked,
       0,
       0},
      {{{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}},
       1,
       false,
       K::kNone,
       0,
       400},  // smuggling
      {{{"Transfer-Encoding", "chunked, gzip"}}, 1, false, K::kNone, 0, 400},
      {{{"Transfer-Encoding", "chunked, chunked"}}, 1, false, K::kNone, 0, 400},
      {{{"Transfer-Encoding", "gzip"}}, 1, false, K::kNone, 0, 501},
      {{{"Transfer-Encoding", ""}}, 1, false, K::kNone, 0, 400},
      {{{"Transfer-Encoding", "chunked"}}, 0, false, K::kNone, 0, 400},  // TE in HTTP/1.0
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    const auto& r = rows[i];
    const auto f = request_framing(request_with(r.headers, r.minor));
    ASSERT_EQ(f.ok, r.ok) << f.error.message;
    if (r.ok) {
      EXPECT_EQ(f.framing.kind, r.kind);
      EXPECT_EQ(f.framing.length, r.length);
    } else {
      EXPECT_EQ(f.error.status, r.status);
    }
  }
}

TEST(HttpFraming, Responses) {
  using K = BodyFraming::Kind;
  auto resp = [](int status, std::vector<Header> h) {
    ResponseHead r;
    r.status = status;
    r.headers = std::move(h);
    return r;
  };
  EXPECT_EQ(response_framing(resp(200, {{"Content-Length", "3"}}), "GET").framing.kind, K::kLength);
  EXPECT_EQ(response_framing(resp(200, {{"Content-Length", "3"}}), "HEAD").framing.kind, K::kNone);
  EXPECT_EQ(response_framing(resp(204, {}), "GET").framing.kind, K::kNone);
  EXPECT_EQ(response_framing(resp(304, {{"Content-Length", "9"}}), "GET").framing.kind, K::kNone);
  EXPECT_EQ(response_framing(resp(100, {}), "GET").framing.kind, K::kNone);
  EXPECT_EQ(response_framing(resp(200, {}), "GET").framing.kind, K::kUntilClose);
  EXPECT_EQ(response_framing(resp(200, {{"Transfer-Encoding", "chunked"}}), "GET").framing.kind,
            K::kChunked);
  EXPECT_EQ(response_framing(resp(200, {{"Transfer-Encoding", "chunked"}, {"Content-Length", "3"}}),
                             "GET")
                .framing.kind,
            K::kChunked);
  EXPECT_EQ(response_framing(resp(200, {{"Transfer-Encoding", "gzip"}}), "GET").framing.kind,
            K::kUntilClose);
  EXPECT_FALSE(response_framing(resp(200, {{"Content-Length", "x"}}), "GET").ok);
}

TEST(HttpFraming, KeepAlive) {
  EXPECT_TRUE(client_wants_keep_alive(request_with({})));
  EXPECT_FALSE(client_wants_keep_alive(request_with({{"Connection", "close"}})));
  EXPECT_FALSE(client_wants_keep_alive(request_with({{"Connection", "keep-alive, Close"}})));
  EXPECT_FALSE(client_wants_keep_alive(request_with({{"Proxy-Connection", "close"}})));
  EXPECT_FALSE(client_wants_keep_alive(
      request_with({{"Connection", "keep-alive"}}, 0)));  // 1.0: one exchange
  ResponseHead r;
  r.minor_version = 1;
  EXPECT_TRUE(upstream_keeps_alive(r, {BodyFraming::Kind::kLength, 3}));
  EXPECT_FALSE(upstream_keeps_alive(r, {BodyFraming::Kind::kUntilClose, 0}));
  r.headers = {{"Connection", "close"}};
  EXPECT_FALSE(upstream_keeps_alive(r, {BodyFraming::Kind::kLength, 3}));
  r.headers.clear();
  r.minor_version = 0;
  EXPECT_FALSE(upstream_keeps_alive(r, {BodyFraming::Kind::kLength, 3}));
}

// --- rewriting -------------------------------------------------------------------------------

TEST(HttpRewrite, UpstreamRequestGolden) {
  const auto p = parse_request_head(
      "POST http://Example.COM:8080/x?y=1 HTTP/1.1\r\n"
      "Host: evil.test\r\n"
      "Connection: keep-alive, X-Secret, Content-Length, Transfer-Encoding\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Proxy-Authorization: Basic Zm9v\r\n"
      "Keep-Alive: timeout=5\r\n"
      "TE: trailers\r\n"
      "Upgrade: websocket\r\n"
      "X-Secret: 1\r\n"
      "Content-Length: 3\r\n"
      "Accept: */*\r\n"
      "\r\n");
  ASSERT_EQ(p.state, ParseState::kComplete);
  const auto t = parse_absolute_form(p.head.target);
  ASSERT_TRUE(t.ok);
  const auto host = canonicalize_host(t.target.host);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(upstream_request_head(p.head, t.target, *host, false),
            "POST /x?y=1 HTTP/1.1\r\n"
            "Host: example.com:8080\r\n"
            "Content-Length: 3\r\n"  // never dropped because Connection named it
            "Accept: */*\r\n"
            "\r\n");
  EXPECT_EQ(upstream_request_head(p.head, t.target, *host, true),
            "POST /x?y=1 HTTP/1.1\r\n"
            "Host: example.com:8080\r\n"
            "Content-Length: 3\r\n"
            "Accept: */*\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST(HttpRewrite, HostHeaderForms) {
  RequestHead h;
  h.method = "GET";
  h.minor_version = 0;
  Target t;
  t.origin_form = "/";
  t.port = 80;
  EXPECT_EQ(upstream_request_head(h, t, *canonicalize_host("0x7f.1"), false),
            "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  t.port = 8080;
  EXPECT_EQ(upstream_request_head(h, t, *canonicalize_host("[::1]"), false),
            "GET / HTTP/1.0\r\nHost: [::1]:8080\r\n\r\n");
}

TEST(HttpRewrite, ClientResponseGolden) {
  const auto p = parse_response_head(
      "HTTP/1.0 200 Fine\r\n"
      "Connection: X-Hop\r\n"
      "X-Hop: 1\r\n"
      "Keep-Alive: timeout=5\r\n"
      "Transfer-Encoding: chunked\r\n"
      "Content-Length: 10\r\n"
      "Set-Cookie: a=b\r\n"
      "\r\n");
  ASSERT_EQ(p.state, ParseState::kComplete);
  EXPECT_EQ(client_response_head(p.head, true),
            "HTTP/1.1 200 Fine\r\n"
            "Transfer-Encoding: chunked\r\n"
            "Set-Cookie: a=b\r\n"
            "Connection: close\r\n"
            "\r\n");
}

// --- proxy-made responses ----------------------------------------------------------------------

TEST(HttpReplies, Refusal) {
  const std::string r = refusal_response("host is not on the allow list");
  EXPECT_EQ(r,
            "HTTP/1.1 403 host is not on the allow list\r\n"
            "X-Proxy-Error: blocked-by-allowlist\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 71\r\n"
            "Connection: close\r\n"
            "\r\n"
            "Connection blocked by network allowlist: host is not on the allow list\n");
  // What the proxy writes is itself a well-formed response.
  const auto p = parse_response_head(r);
  ASSERT_EQ(p.state, ParseState::kComplete);
  EXPECT_EQ(p.head.status, 403);
}

TEST(HttpReplies, PhraseIsSanitised) {
  const std::string r = refusal_response("evil\r\nX-Injected: 1\x7f");
  EXPECT_EQ(r.find("\r\nX-Injected"), std::string::npos);
  EXPECT_EQ(parse_response_head(r).state, ParseState::kComplete);
  // Cut at a UTF-8 boundary: "é" is two bytes and must not be split.
  EXPECT_EQ(sanitize_phrase("a\xC3\xA9", 2), "a");
  EXPECT_EQ(sanitize_phrase("a\xC3\xA9", 3), "a\xC3\xA9");
  EXPECT_EQ(sanitize_phrase(std::string(500, 'x')).size(), 200u);
}

TEST(HttpReplies, Errors) {
  const std::string r = error_response(502, "upstream-unreachable", "connect failed");
  const auto p = parse_response_head(r);
  ASSERT_EQ(p.state, ParseState::kComplete);
  EXPECT_EQ(p.head.status, 502);
  EXPECT_EQ(p.head.reason, "Bad Gateway");
  EXPECT_NE(r.find("X-Proxy-Error: upstream-unreachable\r\n"), std::string::npos);
  EXPECT_EQ(connect_established(), "HTTP/1.1 200 Connection Established\r\n\r\n");
}

}  // namespace
}  // namespace vigil::proxy::http
