// `vigil session start --ask-tty`: ask mode's questions on the terminal the session was
// started from, one at a time, each for as long as its request is held.
//
// The question, the host it names and the answer travel on a channel no command can
// write: vigil's own descriptor of the terminal (opened by vigil before the session left
// it; a sandbox has no controlling terminal and a devpts of its own). A command whose
// stdout or stderr is that same terminal (a thin client run from it) has its output go
// through write_output(), which waits while a question is on screen: nothing it prints
// can stand between the question and the answer, erase it or imitate it. Each question
// starts from a reset terminal (attributes, margins, the main screen), so what the
// command printed before cannot hide it, and `always` is confirmed with the exact host
// and port echoed back.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "supervisor/agent/agent_session.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// Opens the controlling terminal (before the session detaches from it: the fd stays
// usable). An error names the fix when there is none.
Result<UniqueFd> open_ask_tty();

class TtyAsker {
 public:
  explicit TtyAsker(UniqueFd tty);  // starts the prompting thread
  ~TtyAsker();                      // stops it (a question on screen is abandoned)
  TtyAsker(const TtyAsker&) = delete;
  TtyAsker& operator=(const TtyAsker&) = delete;

  // Queues a question; returns at once.
  void ask(const AskPrompt& prompt, AskReply reply);

  // Whether `fd` is this terminal (the same character device).
  bool is_this_terminal(int fd) const;
  // A command's output bound for this terminal: written when no question is on screen.
  bool write_output(int fd, std::string_view bytes);

 private:
  struct Question {
    AskPrompt prompt;
    AskReply reply;
    std::chrono::steady_clock::time_point deadline;
  };
  void loop();
  void prompt_one(Question& q);
  void say(const std::string& text);
  // A line typed on the terminal ("" with false: none before the deadline, or stopping).
  bool read_line(const Question& q, std::string& line);

  UniqueFd tty_;
  dev_t rdev_ = 0;
  std::mutex screen_;  // held while a question is on screen
  std::string pending_;  // typed after the last line read
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Question> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace vigil
