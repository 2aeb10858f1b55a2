// Threads for calls that may block (a blocking connect() waiting on a full backlog), kept
// once started: handing a call to an idle thread costs a wake-up, starting a thread for
// each call cost ~50 us of vigil-init's time per connect (tools/bench/unix_connect_bench.sh).
// A call finds an idle thread or gets a new one, so a call that blocks never holds up
// another. The pool lives until vigil-init exits (it is never destroyed: a thread may
// still be waiting on it then).
#pragma once

#include <functional>

namespace vigil::init {

// Runs `task` on an idle thread of the process-wide pool, or on a new one.
void run_on_idle_thread(std::function<void()> task);

}  // namespace vigil::init
