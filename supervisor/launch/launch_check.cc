#include "supervisor/launch/launch_check.h"

#include <array>

#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

struct OptionShape {
  std::string_view name;
  int operands;
  std::optional<PlannedMount::Kind> kind;  // nullopt: mounts nothing
  bool writable;
};

// Every option vigil's argv builder writes (bwrap/argv_builder.cc), with its operand
// count: an option missing here stops the walk of its BwrapArg rather than be misread.
constexpr std::array<OptionShape, 21> kOptions = {{
    {"--bind", 2, PlannedMount::Kind::kBind, true},
    {"--bind-try", 2, PlannedMount::Kind::kBind, true},
    {"--dev-bind", 2, PlannedMount::Kind::kBind, true},
    {"--dev-bind-try", 2, PlannedMount::Kind::kBind, true},
    {"--ro-bind", 2, PlannedMount::Kind::kBind, false},
    {"--ro-bind-try", 2, PlannedMount::Kind::kBind, false},
    {"--dev", 1, PlannedMount::Kind::kDev, true},
    {"--tmpfs", 1, PlannedMount::Kind::kFresh, true},
    {"--proc", 1, PlannedMount::Kind::kFresh, true},
    {"--mqueue", 1, PlannedMount::Kind::kFresh, true},
    {"--remount-ro", 1, std::nullopt, false},
    {"--setenv", 2, std::nullopt, false},
    {"--chdir", 1, std::nullopt, false},
    {"--json-status-fd", 1, std::nullopt, false},
    {"--block-fd", 1, std::nullopt, false},
    {"--cap-drop", 1, std::nullopt, false},
    {"--die-with-parent", 0, std::nullopt, false},
    {"--new-session", 0, std::nullopt, false},
    {"--unshare-all", 0, std::nullopt, false},
    {"--as-pid-1", 0, std::nullopt, false},
    {"--share-net", 0, std::nullopt, false},
}};

const OptionShape* shape_of(std::string_view token) {
  for (const auto& o : kOptions) {
    if (o.name == token) return &o;
  }
  return nullptr;
}

// The device nodes (and devpts) bwrap mounts inside a --dev tmpfs.
bool bwrap_dev_entry(std::string_view name) {
  constexpr std::array<std::string_view, 9> kNames = {"null",    "zero", "full", "random", "urandom",
                                                      "tty",     "pts",  "shm",  "console"};
  for (const auto n : kNames) {
    if (n == name) return true;
  }
  return false;
}

// Filesystems whose writable mounts give no write to a host file outside the plan (the
// old in-sandbox check's list): kernel views and bwrap's own.
bool kernel_or_scratch(std::string_view type) {
  return type == "tmpfs" || type == "devtmpfs" || type == "proc" || type == "devpts" ||
         type == "mqueue";
}

// The host's mount that a planned bind carried to `m`, if there is one: the same place
// below the bind's source, the same filesystem and root.
bool carried_from_host(const init::Mount& m, const PlannedMount& bind,
                       const std::vector<init::Mount>& host) {
  const std::string rest = m.mount_point.substr(bind.dest == "/" ? 0 : bind.dest.size());
  const std::string at = bind.source == "/" ? (rest.empty() ? "/" : rest) : bind.source + rest;
  for (const auto& h : host) {
    if (h.mount_point == at && h.dev == m.dev && h.root == m.root && h.fstype == m.fstype)
      return true;
  }
  return false;
}

}  // namespace

std::vector<PlannedMount> planned_mounts(const std::vector<BwrapArg>& args) {
  std::vector<PlannedMount> out;
  for (const auto& arg : args) {
    const auto& t = arg.tokens;
    for (size_t i = 0; i < t.size();) {
      if (t[i] == "--") break;  // the command
      const OptionShape* o = shape_of(t[i]);
      if (o == nullptr || t.size() - i - 1 < static_cast<size_t>(o->operands)) break;
      if (o->kind) {
        PlannedMount m;
        m.kind = *o->kind;
        m.writable = o->writable;
        if (o->operands == 2) {
          m.source = t[i + 1];
          m.dest = t[i + 2];
        } else {
          m.dest = t[i + 1];
        }
        out.push_back(std::move(m));
      }
      i += 1 + static_cast<size_t>(o->operands);
    }
  }
  return out;
}

bool table_is_final(const std::vector<init::Mount>& sandbox, std::string_view last_dest) {
  bool last = false;
  for (const auto& m : sandbox) {
    if (path_is_under(m.mount_point, "/newroot") || path_is_under(m.mount_point, "/oldroot"))
      return false;
    last = last || m.mount_point == last_dest;
  }
  return last;
}

Result<void> check_launch_table(const LaunchTables& t, const SandboxIdentity& identity) {
  const auto& sandbox = *t.sandbox;
  for (const auto& want : t.writable) {
    bool mounted = false;
    for (const auto& m : sandbox) mounted = mounted || m.mount_point == want.path;
    if (!mounted) {
      return make_error(Errc::kRefused, "the writable mount planned at " + want.path +
                                            " is not there (its path changed while bwrap "
                                            "built the sandbox)");
    }
    const auto id = identity(want.path);
    if (!id || id->first != want.dev || id->second != want.ino) {
      return make_error(Errc::kRefused, want.path +
                                            " is not the directory vigil planned to make "
                                            "writable (it was swapped while bwrap built the "
                                            "sandbox)");
    }
  }
  for (const auto& m : sandbox) {
    bool planned_here = false;
    bool dev_entry = false;
    bool carried = false;
    // The last planned mount covering this point (bwrap's order) decides what is seen
    // there: a bind's writability, or a fresh tmpfs that hides whatever is below it.
    const PlannedMount* cover = nullptr;
    for (const auto& p : t.planned) {
      if (p.dest == m.mount_point) planned_here = true;
      if (!path_is_under(m.mount_point, p.dest) || p.dest == m.mount_point) continue;
      cover = &p;
      if (p.kind == PlannedMount::Kind::kDev) {
        const std::string_view rest =
            std::string_view(m.mount_point).substr(p.dest == "/" ? 1 : p.dest.size() + 1);
        dev_entry = dev_entry || bwrap_dev_entry(rest);
      } else if (p.kind == PlannedMount::Kind::kBind) {
        carried = carried || carried_from_host(m, p, *t.host);
      }
    }
    const bool hidden = cover != nullptr && cover->kind == PlannedMount::Kind::kFresh;
    const bool writable_below =
        cover != nullptr && cover->kind == PlannedMount::Kind::kBind && cover->writable;
    if (planned_here || dev_entry) continue;
    if (!carried) {
      return make_error(Errc::kRefused,
                        "a mount at " + m.mount_point +
                            " that vigil did not plan and the host does not have there (a "
                            "bind that followed a path swapped for a symlink while bwrap "
                            "built the sandbox)");
    }
    if (!m.read_only && !writable_below && !hidden && !kernel_or_scratch(m.fstype)) {
      return make_error(Errc::kRefused,
                        "a writable mount at " + m.mount_point + " (" + m.fstype +
                            ") that vigil did not plan: bwrap could not make this host mount "
                            "read-only. Add it to filesystem.denyRead to hide it, or unmount "
                            "it on the host");
    }
  }
  return {};
}

}  // namespace vigil
