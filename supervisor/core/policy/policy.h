// The policy model: what the settings file (or the embedded default) says, after
// validation and path expansion. Plain data; built by policy_loader, read by the
// resolver and the pure builders (bwrap argv, Seatbelt profile, explain).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/core/policy/cap_plan.h"
#include "supervisor/core/policy/credentials_policy.h"

namespace vigil {

enum class PathKind { kMissing, kFile, kDir, kOther };

// vigil.capture: the change capture's caps, per file, per session (every command of an
// agent session together) and for all the stores kept (<state>/vigil/captures).
struct CaptureCaps {
  std::uint64_t max_file_bytes = std::uint64_t{16} << 20;       // vigil.capture.maxFileBytes
  std::uint64_t max_session_bytes = std::uint64_t{256} << 20;  // vigil.capture.maxSessionBytes
  std::uint64_t max_total_bytes = std::uint64_t{1} << 30;      // vigil.capture.maxTotalBytes
  bool operator==(const CaptureCaps&) const = default;
};

// One filesystem entry from the settings file.
struct PathRule {
  std::string written;   // as spelled in the settings file (or a description for defaults)
  std::string literal;   // absolute: ~ and relative spellings expanded, lexically normalised
  std::string resolved;  // symlinks resolved (deepest existing ancestor + the missing rest)
  std::string origin;  // where it came from: "filesystem.denyRead[2]", "default: working directory"
  PathKind kind = PathKind::kMissing;  // of `resolved`, when the policy was loaded
  std::string first_missing;           // kMissing only: the component that stops the path
                                       // (missing, or existing but not a directory)
  bool first_missing_exists = false;   // kMissing only: that component exists (not a dir)
  // The per-session temp dir is a writable root that vanishes with the session, so no
  // mandatory-deny scan is done inside it (nothing there runs later).
  bool session_temp = false;
  // denyWrite of a path that does not exist yet, where vigil-init refuses its creation at
  // the call (the gatekeeper): no mount at all, so its missing parents stay creatable
  // (supervisor/launch/sandbox_plan.h, observer/refused_names.h).
  bool refuse_at_call = false;
  bool operator==(const PathRule&) const = default;
};

// A deny glob as written, and what it covered at launch. Its matches are also PathRules
// of the same list (mounted like any listed path); names created later match `pattern`
// only at the call (glob_match), which needs the call-time check.
struct GlobRule {
  std::string written;  // as in the settings file
  std::string pattern;  // absolute (~ and relative spellings expanded)
  std::string origin;   // "filesystem.denyRead[0]"
  std::size_t matches = 0;
  bool truncated = false;  // the walk hit a limit: some existing matches are not covered
  bool operator==(const GlobRule&) const = default;
};

struct FilesystemPolicy {
  std::vector<PathRule> deny_read;
  std::vector<PathRule> allow_read;
  std::vector<PathRule> allow_write;
  std::vector<PathRule> deny_write;
  std::vector<GlobRule> deny_read_globs;
  std::vector<GlobRule> deny_write_globs;
  int mandatory_deny_search_depth = 3;  // 1..10, as srt
  bool allow_git_config = false;
  bool operator==(const FilesystemPolicy&) const = default;
};

// network.parentProxy, or the user's HTTP(S)_PROXY/NO_PROXY when it is not set (as
// srt). URLs as written; proxy/parent_proxy.h validates them.
struct ParentProxySettings {
  std::string http;
  std::string https;
  std::string no_proxy;
  std::string origin;  // "network.parentProxy" or "environment (HTTPS_PROXY/HTTP_PROXY)"
  bool operator==(const ParentProxySettings&) const = default;
};

struct NetworkPolicy {
  // Patterns are kept as written; proxy/ validates and compiles them.
  std::vector<std::string> allowed_domains;
  std::vector<std::string> denied_domains;
  std::map<std::string, std::string> denied_domain_reasons;  // key: exact deniedDomains entry
  std::vector<std::string> denied_resolved_addresses;        // IP or CIDR
  bool allow_local_binding = false;                          // Linux: meaningless (own netns)
  // Linux: full paths or "@name", brokered by vigil-init (observer/unix_broker.h).
  std::vector<std::string> allow_unix_sockets;
  bool allow_all_unix_sockets = false;  // every unix socket; warned about loudly
  std::vector<std::string> allow_mach_lookup;                // macOS only
  ParentProxySettings parent_proxy;                          // all empty: connect directly
  // network.httpProxyPort / socksProxyPort (srt): an external proxy the user runs on the
  // host's 127.0.0.1. That bridge then leads to it, not to vigil's proxy: the external
  // proxy decides those requests (the allowlist above does not apply to them), and vigil
  // records each connection as passed on undecided. 0 = vigil's own proxy.
  std::uint16_t external_http_port = 0;
  std::uint16_t external_socks_port = 0;
  // srt's TLS keys (credentials_policy.h): termination, the user's MITM proxy, and the
  // request hardening that termination makes possible.
  TlsTerminateSettings tls_terminate;
  std::optional<MitmProxySettings> mitm_proxy;
  bool require_host_match = false;    // 421 when Host / SNI / authority name another host
  bool refuse_opaque_tunnels = false;  // refuse every tunnel the proxy cannot see into
  std::vector<RequestRule> request_rules;  // vigil.network.requestRules
  bool operator==(const NetworkPolicy&) const = default;
};

struct MacosOptions {
  bool enable_weaker_network_isolation = false;  // re-allows trustd (Go TLS); an exfiltration path
  bool allow_apple_events = false;               // lets the command script apps outside the sandbox
  bool allow_pty = false;
  bool operator==(const MacosOptions&) const = default;
};

// vigil.export: where `vigil export --follow` sends records when its --to is not given
// (supervisor/export/exporter.h). Read by the exporter only: no session uses it.
struct ExportOptions {
  std::string syslog_host;  // vigil.export.syslog.host ("" = no syslog collector set)
  std::uint16_t syslog_port = 0;
  bool syslog_tls = false;  // vigil.export.syslog.tls: RFC 5425 (needs the CA)
  std::string syslog_ca;    // vigil.export.syslog.ca: the collector's CA file (expanded)
  bool journald = false;    // vigil.export.journald: to journald instead (off by default)
  std::uint64_t spool_max_bytes = 0;  // vigil.export.spoolMaxBytes (0 = the default cap)
  bool operator==(const ExportOptions&) const = default;
};

// vigil's own options, under the "vigil" key of the settings file.
struct VigilOptions {
  enum class Overflow { kBlock, kDrop };
  Overflow observer_overflow = Overflow::kBlock;  // lossless by default
  // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP on the observer's listener (where the kernel has
  // it). Off only to measure what it buys (tools/bench/observer_bench.sh).
  bool observer_sync_wake_up = true;
  // vigil.observer.reads: opens for reading go to vigil-init too, which tells a read of a
  // denyRead path ("deny read PATH (hidden by denyRead ...)"). Off by default: every open
  // then costs a round trip to vigil-init (docs/performance.md).
  bool observer_reads = false;
  // vigil.log.maxOutputBytes: how much of each command's output the session log keeps,
  // half from its head and half from its tail (the command's own output is never cut,
  // only its copy in the log; the cut is a log.truncated record with each stream's size
  // and SHA-256). 0: no output is logged. 4 MiB: a build's or a test run's output whole,
  // while 30 MB of a runaway loop costs the log 4 MiB, not 31 (issue 38.4).
  std::uint64_t log_max_output_bytes = std::uint64_t{4} << 20;
  // vigil.log.keep: after a session, only the newest N logs in the default log directory
  // are kept (none removed when unset). Logs given with --log are never touched.
  std::optional<std::uint64_t> log_keep;
  // vigil.capture: pre- and post-images of what the command changes (observer/capture.h),
  // on by default, content kept within the caps.
  bool capture_enabled = true;
  CaptureCaps capture_caps;

  // vigil.network.ask: in an agent session whose client can answer, a host off the allow
  // list is held and the client asked (once / session / always / deny) instead of being
  // refused; no answer within vigil.network.askTimeoutSeconds is a deny.
  bool network_ask = false;
  std::uint64_t network_ask_timeout_ms = 60'000;
  // vigil.network.capture: connect() of TCP sockets is trapped and carried through the
  // proxy (observer/inet_broker.h), and the sandbox's names resolve through vigil-init's
  // DNS stub (observer/dns_stub.h): tools that ignore the proxy variables are decided by
  // the same allowlist. false: the old behaviour (such tools find no network). On by
  // default; a kernel without its 5.14 features (ADDFD) keeps the old behaviour, as
  // `vigil doctor` says.
  bool network_capture = true;
  // vigil.git.writableRepository: run from a subdirectory of a repository, its .git lies
  // outside the writable roots; true makes that .git writable (index, refs, objects,
  // logs) while its hooks, config and commondir stay write-denied (sandbox_plan.cc).
  bool git_writable_repository = false;
  // vigil.limits: the sandbox's resource caps (supervisor/core/policy/cap_plan.h).
  LimitsOptions limits;
  ExportOptions export_options;
  bool operator==(const VigilOptions&) const = default;
};

// One ignoreViolations entry: a violation whose target contains one of `paths` leaves
// the block (it stays in the log, marked ignored, and is counted) when the command line
// contains `command` ("*": every command). Substring matches, as srt.
struct IgnoreRule {
  std::string command;
  std::vector<std::string> paths;
  bool operator==(const IgnoreRule&) const = default;
};

// Every struct here compares field by field (operator== = default): a warm session's
// spare sandbox is used only when a fresh load gives an equal Policy
// (supervisor/command/spare_sandbox.h), so a field added later is compared without anyone
// remembering to.
struct Policy {
  std::string source;  // realpath of the settings file, or "<embedded default>"
  std::string cwd;     // the working directory relative paths were resolved against
  std::string home;    // what ~ expanded to
  FilesystemPolicy fs;
  NetworkPolicy net;
  MacosOptions macos;
  VigilOptions vigil;
  std::optional<std::string> bwrap_path;  // settings "bwrapPath"
  std::vector<IgnoreRule> ignore_violations;
  // credentials (srt): secrets withheld from the command or masked by a sentinel.
  CredentialsPolicy credentials;
  // git.safeDirectories (srt): absolute directories git may trust although another uid
  // owns them (supervisor/launch/git_safe_env.h); as written, ~ and relative paths expanded.
  std::vector<std::string> git_safe_directories;
  // enableWeakerNestedSandbox (srt): for a container whose /proc cannot be mounted again
  // (bwrap: "Can't mount proc"): the sandbox keeps the container's /proc
  // (bwrap/argv_builder.h says what that gives up).
  bool weaker_nested_sandbox = false;
  // Settings that were accepted but have no effect on this platform, said out loud.
  std::vector<std::string> warnings;
  bool operator==(const Policy&) const = default;
};

}  // namespace vigil
