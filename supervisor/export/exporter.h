// `vigil export --follow`: one long-running process that follows every session log of the
// user (supervisor/export/log_follower.h) and sends each record, verified, to one sink:
// stdout or a file (JSON lines), a syslog collector over TCP or TLS (through the disk
// spool, at-least-once: supervisor/export/export_spool.h), or journald's native socket.
// It is its own process: a sandboxed command never waits for it (the logs are its only
// input). The cursor (export_cursor.h) is saved after each batch went out, so a restart
// goes on without a gap; a repeat is at most the batch in flight, and carries the same
// chain hash (a receiver sees it as a redelivery, `vigil verify --stream`).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "supervisor/export/log_follower.h"
#include "supervisor/export/syslog_client.h"

namespace vigil {

struct ExporterOptions {
  FollowOptions follow;
  std::string state_dir;  // cursor.json, spool, status.json (0700, ours)
  enum class Sink { kStdout, kFile, kSyslog, kJournald };
  Sink sink = Sink::kStdout;
  std::string file;             // kFile
  SyslogTarget syslog;          // kSyslog
  std::string journald_socket;  // kJournald
  std::uint64_t spool_max = 0;
  std::chrono::milliseconds poll{200};
  std::chrono::milliseconds settle{1000};  // a sent message is taken when TCP-acked this long
  std::chrono::milliseconds timeout{5000};
  bool until_idle = false;  // exit once everything was read and delivered (tests, benches)
};

// The sink's name for messages ("stdout", "syslog+tls://h:p", ...). Pure.
std::string sink_name(const ExporterOptions& o);

// Runs until SIGTERM/SIGINT (or idle, with until_idle). The exit status.
int run_exporter(const ExporterOptions& o);

}  // namespace vigil
