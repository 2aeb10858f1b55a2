// `vigil session start|end` (supervisor/agent/session_server.h): the socket, the two processes
// left behind, and the per-connection thread that runs one command.
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/agent/session_server.h"

#include "supervisor/agent/ask_tty.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "supervisor/agent/agent_session.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/policy/policy_loader.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/command/session_dir.h"
#include "supervisor/orchestrator/session_runner.h"
#include "supervisor/agent/session_socket.h"
#include "supervisor/agent/session_wire.h"
#include "supervisor/launch/sandbox_kill.h"

namespace vigil {
namespace {

// How long a connection's thread waits, after the answer, for the client to hang up
// before it starts the next command's spare anyway.
constexpr int kClientExitWaitMs = 50;

// The peer must be this user, outside every sandbox. The directory's mode keeps other
// users out (unless someone loosened it: SO_PEERCRED). A sandboxed command can see the
// socket (a read-only mount does not stop a connect), and a request it made would run
// with a workspace of its choosing, so a peer in another network or PID namespace than
// this supervisor's (every sandbox has its own) is refused.
bool trusted_peer(int conn) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  if (cred.uid != ::geteuid() || cred.pid <= 0) return false;
  for (const char* ns : {"net", "pid", "mnt"}) {
    char mine[64] = {}, theirs[64] = {};
    const std::string peer = "/proc/" + std::to_string(cred.pid) + "/ns/" + ns;
    const std::string self = std::string("/proc/self/ns/") + ns;
    if (::readlink(self.c_str(), mine, sizeof mine - 1) <= 0) return false;
    if (::readlink(peer.c_str(), theirs, sizeof theirs - 1) <= 0) return false;
    if (std::string(mine) != theirs) return false;
  }
  return true;
}

void reply(int conn, const wire::Reply& r) { (void)wire::send_frame(conn, wire::encode(r)); }

// What `vigil session end` waits on: the connection that asked, answered by the main
// thread once session.end is written.
struct EndRequest {
  std::mutex mu;
  UniqueFd conn;
  std::atomic<bool> requested{false};
  int wake_fd = -1;
};

// One connection: one request.
// `asker`: --ask-tty's terminal, or null.
void serve_connection(AgentSession& session, UniqueFd conn, EndRequest* end,
                      const ChangeStart& connected, TtyAsker* asker) {
  // A peer that connects and says nothing must not hold up the session's end.
  const timeval limit{10, 0};
  ::setsockopt(conn.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  auto frame = wire::recv_frame(conn.get());
  if (!frame) return;
  auto req = wire::decode_request(frame->payload);
  if (!req) {
    reply(conn.get(), {req.error().message, to_int(ExitCode::kUsage), "", false});
    return;
  }
  if (req->op == wire::Op::kEnd) {
    std::lock_guard lock(end->mu);
    if (!end->conn) end->conn = std::move(conn);
    end->requested = true;
    const char b = 'e';
    (void)!::write(end->wake_fd, &b, 1);
    return;
  }
  if (frame->fds.size() != 3) {
    reply(conn.get(), {"a run request must carry stdin, stdout and stderr", to_int(ExitCode::kUsage), "", false});
    return;
  }
  CommandRun run;
  run.argv = req->run.argv;
  run.cwd = req->run.cwd;
  run.env = req->run.env;
  run.capture_output = req->run.capture;
  run.stdio = {frame->fds[0].get(), frame->fds[1].get(), frame->fds[2].get()};
  // A command printing on the terminal vigil asks on: its output goes through vigil, held
  // while a question is on screen (ask_tty.h), so it cannot cover or imitate one.
  if (asker != nullptr &&
      (asker->is_this_terminal(run.stdio[1]) || asker->is_this_terminal(run.stdio[2]))) {
    run.capture_output = true;
    run.on_output = [asker, &run](OutputStream s, std::string_view bytes) {
      return asker->write_output(run.stdio[s == OutputStream::kStdout ? 1 : 2], bytes);
    };
  }
  run.defer_spare = true;  // started below, once the client has its answer
  run.requested_at = connected;
  std::atomic<pid_t> bwrap{0};
  run.on_spawned = [&](pid_t pid) { bwrap = pid; };
  // A client that goes away (killed, Ctrl-C) takes its command with it. The watcher
  // wakes on the client's hang-up or on the command's end (the pipe), never on a timer.
  auto done_pipe = make_pipe();
  if (!done_pipe) {
    reply(conn.get(), {done_pipe.error().message, to_int(ExitCode::kSandboxSetup), "", false});
    return;
  }
  UniqueFd done_r = std::move(done_pipe->read), done_w = std::move(done_pipe->write);
  std::thread watcher([&] {
    pollfd p[2] = {{conn.get(), POLLIN | POLLRDHUP, 0}, {done_r.get(), POLLIN, 0}};
    while (::poll(p, 2, -1) < 0 && errno == EINTR) {
    }
    if (p[1].revents == 0) {
      if (const pid_t pid = bwrap.load(); pid > 0) kill_sandbox_tree(pid);
    }
  });
  auto outcome = session.run(run);
  // EOF: the watcher ends, and kills nothing from now on (poll reports the pipe's EOF with
  // any hang-up), so the client may be answered before it is joined.
  done_w.reset();
  wire::Reply answer{std::nullopt, 0, "", false};
  if (!outcome) {
    answer = {outcome.error().message, exit_code_for(outcome.error()), "", false};
  } else {
    // As a standalone `vigil run` does: where to look, after the block, when something
    // was denied (a harness sees the same stderr either way).
    if (!outcome->annotation.empty()) {
      const std::string where = "vigil: session log: " + escape_text(session.log_path()) + "\n";
      if (run.on_output) {
        (void)run.on_output(OutputStream::kStderr, where);
      } else {
        (void)write_all_to(run.stdio[2], where);
      }
    }
    answer = {std::nullopt, outcome->exit_code, outcome->violations_json, false};
  }
  // The client's stdio closed first: whoever reads its output sees the end as it exits.
  frame->fds.clear();
  run.stdio = {-1, -1, -1};
  reply(conn.get(), answer);
  // The next command's spare, once the client has gone (it exits on the answer): started
  // sooner, its set-up competes for the CPUs with the client's wake-up and exit. A client
  // that keeps the connection open delays it by kClientExitWaitMs at most.
  pollfd gone{conn.get(), POLLRDHUP, 0};
  while (::poll(&gone, 1, kClientExitWaitMs) < 0 && errno == EINTR) {
  }
  session.start_next(run);
  watcher.join();
}

// The supervisor: serves until `vigil session end` or SIGTERM/SIGINT/SIGHUP.
int serve(AgentSession& session, UniqueFd listener, TtyAsker* asker) {
  sigset_t stop;
  sigemptyset(&stop);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop, s);
  UniqueFd sfd(::signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK));
  auto wake = make_pipe(O_CLOEXEC | O_NONBLOCK);
  if (!wake) return to_int(ExitCode::kSandboxSetup);
  UniqueFd wake_r = std::move(wake->read), wake_w = std::move(wake->write);
  EndRequest end;
  end.wake_fd = wake_w.get();
  // One thread per connection, detached; `active` counts them so that the end waits.
  std::mutex mu;
  std::condition_variable idle;
  std::size_t active = 0;
  while (!end.requested) {
    pollfd fds[3] = {{listener.get(), POLLIN, 0}, {sfd.get(), POLLIN, 0}, {wake_r.get(), POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0 || fds[2].revents != 0) break;
    if (fds[0].revents == 0) continue;
    UniqueFd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) continue;
    const ChangeStart connected = session.change_start();
    if (!trusted_peer(conn.get())) continue;  // closed unanswered
    {
      std::lock_guard lock(mu);
      ++active;
    }
    std::thread([&, c = std::move(conn), connected]() mutable {
      serve_connection(session, std::move(c), &end, connected, asker);
      std::lock_guard lock(mu);
      --active;
      idle.notify_all();
    }).detach();
  }
  listener.reset();
  session.kill_all();
  {
    std::unique_lock lock(mu);
    idle.wait(lock, [&] { return active == 0; });
  }
  (void)session.end();
  std::lock_guard lock(end.mu);
  if (end.conn) reply(end.conn.get(), {std::nullopt, 0, "", true});  // the log is complete
  return 0;
}

// The watchdog: waits for every process of the session (the supervisor and, reparented
// to this subreaper, whatever it left), then cleans up after them.
[[noreturn]] void watchdog(pid_t supervisor, const std::string& dir) {
  int status = 0;
  while (::waitpid(supervisor, &status, 0) < 0 && errno == EINTR) {
  }
  // Orphans of the supervisor (sandboxes still dying) are ours now: end them.
  for (;;) {
    // Children reparented to us: kill, then reap, until none is left.
    const pid_t p = ::waitpid(-1, &status, WNOHANG);
    if (p > 0) continue;
    if (p < 0 && errno == ECHILD) break;
    // Some remain: kill them by pid (this single-threaded process's children list).
    for (const pid_t child : children_of(::getpid())) ::kill(child, SIGKILL);
    ::usleep(10000);
  }
  sweep_stale_sessions(session_base_dir());
  ::unlink((dir + "/" + kSessionSocketName).c_str());
  ::rmdir(dir.c_str());
  ::_exit(0);
}

void to_dev_null() {
  UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  for (int fd = 0; fd < 3; ++fd) ::dup2(null.get(), fd);
}

}  // namespace

namespace {

// The supervisor, in the watchdog's child: listens, opens the session, says so on the
// ready pipe ("K<pid> <log>" or "E<why>"), then serves until the session ends.
[[noreturn]] void run_supervisor(AgentSessionOptions opts, UniqueFd listener, UniqueFd ready_w,
                                 UniqueFd tty, const std::string& socket_path, pid_t watchdog) {
  // The supervisor dies with the watchdog (then its sandboxes die with it).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != watchdog) ::_exit(1);
  to_dev_null();
  sigset_t block;
  sigemptyset(&block);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&block, s);
  ::sigprocmask(SIG_BLOCK, &block, nullptr);  // threads inherit it
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<TtyAsker> asker;
  if (tty) {
    asker = std::make_unique<TtyAsker>(std::move(tty));
    opts.ask_client = [a = asker.get()](const AskPrompt& p, AskReply r) { a->ask(p, std::move(r)); };
    opts.ask_via = "tty";
  }
  // Listened on here: a client's SO_PEERCRED names this process, VIGIL_SESSION_PID.
  if (::listen(listener.get(), 64) != 0) {
    (void)write_all(ready_w.get(), "Ecannot listen on " + socket_path, "the ready pipe");
    ::_exit(to_int(ExitCode::kSandboxSetup));
  }
  auto session = AgentSession::open(opts);
  if (!session) {
    (void)write_all(ready_w.get(), "E" + session.error().message, "the ready pipe");
    ::_exit(exit_code_for(session.error()));
  }
  const std::string ok = "K" + std::to_string(::getpid()) + " " + (*session)->log_path();
  (void)write_all(ready_w.get(), ok, "the ready pipe");
  ready_w.reset();
  const int rc = serve(**session, std::move(listener), asker.get());
  session->reset();
  asker.reset();
  ::_exit(rc);
}

// ask mode with nobody to ask: said here, where someone reads it (the supervisor's stderr
// is /dev/null).
void warn_if_nobody_to_ask(const AgentSessionOptions& opts) {
  if (!opts.settings) return;
  const char* home = std::getenv("HOME");
  auto policy = load_policy_file(*opts.settings, {opts.cwd, home != nullptr ? home : ""});
  if (policy && policy->vigil.network_ask) {
    print_warning("vigil.network.ask is on, but without --ask-tty this session has nobody to "
                  "ask: hosts off the allow list are refused");
  }
}

// What the ready pipe said, once the supervisor closed it.
std::string read_ready(const UniqueFd& ready_r) {
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(ready_r.get(), buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) msg.append(buf, static_cast<std::size_t>(n));
  }
  return msg;
}

}  // namespace

std::string session_start_lines(const std::string& socket_path, const std::string& pid) {
  // For `eval`, as ssh-agent's: the socket path single-quoted, so no byte of it is shell
  // syntax; the pid is digits (escaped all the same).
  std::string quoted = "'";
  for (const char ch : socket_path) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  quoted += "'";
  return "VIGIL_SESSION=" + quoted + "; export VIGIL_SESSION;\nVIGIL_SESSION_PID=" +
         escape_text(pid) + "; export VIGIL_SESSION_PID;\n";
}

int cmd_session_start(const SessionArgs& args) {
  auto opts = session_options(args);
  if (!opts) return report(opts.error());
  UniqueFd tty;  // --ask-tty: opened before the session leaves its terminal
  if (args.ask_tty) {
    auto t = open_ask_tty();
    if (!t) return report(t.error());
    tty = std::move(t).value();
  } else {
    warn_if_nobody_to_ask(*opts);
  }
  auto dir = make_session_socket_dir(std::getenv("XDG_RUNTIME_DIR"), std::getenv("XDG_STATE_HOME"),
                                     std::getenv("HOME"));
  if (!dir) return report(dir.error());
  const std::string socket_path = *dir + "/" + kSessionSocketName;
  auto listener = bind_session_socket(socket_path);
  if (!listener) {
    ::rmdir(dir->c_str());
    return report(listener.error());
  }
  auto ready = make_pipe();
  if (!ready) return report(ready.error());
  UniqueFd ready_r = std::move(ready->read), ready_w = std::move(ready->write);
  std::fflush(stdout);
  const pid_t watch = ::fork();
  if (watch < 0) return report(system_error("fork"));
  if (watch == 0) {
    ready_r.reset();
    ::setsid();
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    const pid_t parent = ::getpid();
    const pid_t sup = ::fork();
    if (sup < 0) ::_exit(1);
    if (sup == 0) {
      run_supervisor(std::move(*opts), std::move(listener).value(), std::move(ready_w),
                     std::move(tty), socket_path, parent);
    }
    listener->reset();
    ready_w.reset();
    tty.reset();
    to_dev_null();
    watchdog(sup, *dir);
  }
  ready_w.reset();
  listener->reset();
  tty.reset();
  const std::string msg = read_ready(ready_r);
  if (msg.empty() || msg[0] != 'K') {
    print_error(msg.empty() ? std::string("the session supervisor did not start") : msg.substr(1));
    return to_int(ExitCode::kUsage);
  }
  const std::string rest = msg.substr(1);
  // display-safe: shell-quoted for eval (escaping would change the path's bytes)
  std::fputs(session_start_lines(socket_path, rest.substr(0, rest.find(' '))).c_str(), stdout);
  print_notice("session log " + rest.substr(rest.find(' ') + 1));
  return 0;
}

int cmd_session_end(const std::string& handle) {
  // For `eval "$(vigil session end)"`, as `ssh-agent -k` prints them: the shell forgets the
  // handle whether the session ended now or had ended before (a stale handle).
  std::fputs("unset VIGIL_SESSION;\nunset VIGIL_SESSION_PID;\n", stdout);
  std::fflush(stdout);
  auto conn = connect_to_session(handle, session_pid_from_env(handle));
  if (!conn) return report(conn.error());
  wire::Request req;
  req.op = wire::Op::kEnd;
  if (auto r = wire::send_frame(conn->get(), wire::encode(req)); !r) return report(r.error());
  // The reply comes once the running commands are gone and session.end is written.
  auto frame = wire::recv_frame(conn->get());
  if (!frame) return report(frame.error());
  return 0;
}

int run_in_session(const std::string& handle, const std::vector<std::string>& command,
                   bool capture_output, std::optional<int> violations_fd) {
  // Nothing is sent (argv, cwd, environment, stdio) before the session is known ours.
  auto conn = connect_to_session(handle, session_pid_from_env(handle));
  if (!conn) return report(conn.error());
  auto cwd = current_dir();
  if (!cwd) return report(cwd.error());
  wire::Request req;
  req.run.argv = command;
  req.run.cwd = *cwd;
  req.run.capture = capture_output;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    if (entry.rfind("VIGIL_SESSION", 0) == 0) continue;  // the handle is ours, not the command's
    req.run.env.push_back(entry);
  }
  if (auto r = wire::send_frame(conn->get(), wire::encode(req), {0, 1, 2}); !r)
    return report(r.error());
  auto frame = wire::recv_frame(conn->get());
  if (!frame) {
    print_error("the session ended before the command did");
    return to_int(ExitCode::kSandboxSetup);
  }
  auto rep = wire::decode_reply(frame->payload);
  if (!rep) return report(rep.error());
  if (rep->error) {
    print_error(*rep->error);
    return rep->exit_code;
  }
  if (violations_fd) (void)write_all_to(*violations_fd, rep->violations);
  return rep->exit_code;
}

}  // namespace vigil
