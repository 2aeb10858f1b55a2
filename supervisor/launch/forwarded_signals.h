// The signals vigil passes on to the command it runs, on both platforms (Linux:
// signal_relay.h; macOS: macos_launch.h): what a terminal or a harness sends to end or
// interrupt it. SIGCHLD is the launch's own; the rest keep their default in vigil.
#pragma once

#include <signal.h>

namespace vigil {

inline constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

}  // namespace vigil
