// `vigil session start --ask-tty`: ask mode's questions on the terminal the session was
// started from, one at a time, each for as long as its request is held.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
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

 private:
  struct Question {
    AskPrompt prompt;
    AskReply reply;
    std::chrono::steady_clock::time_point deadline;
  };
  void loop();
  void prompt_one(Question& q);
  void say(const std::string& text);

  UniqueFd tty_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Question> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace vigil
