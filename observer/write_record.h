// The fs.write line of a call the gatekeeper performed (or let run): its verdict is the
// call's own result (judge_result), told in the words of the sandbox's mount table.
#pragma once

#include <string>
#include <vector>

#include "filters/seccomp_notify.h"
#include "observer/call_plan.h"
#include "observer/emulate.h"
#include "observer/mount_table.h"

namespace vigil::init {

struct Judgement {
  WriteVerdict verdict;
  std::string reason;
};
// The verdict a performed call gets from its result (pure; exposed for the tests).
// `error`: the errno (0 success; -1 the call continued and its result is not seen: the
// mount table's view). `refused_why`: vigil-init itself refused the call.
Judgement judge_result(const std::vector<Mount>& mounts, const std::string& resolved,
                       const std::string& from_resolved, int error,
                       const std::string& refused_why);

// Appends one fs.write line to `out`. `error`: the call's result (-1: it continued, the
// kernel's result is not seen); `refused`: why vigil-init refused it, if it did;
// `witnessed`: a best-effort record of an open that continued (kernels before 5.14).
void record_write(std::string* out, const std::vector<Mount>& mounts, const Notification& n,
                  const CallPlan& plan, const Performed& done, int error,
                  const std::string& refused, bool witnessed);

}  // namespace vigil::init
