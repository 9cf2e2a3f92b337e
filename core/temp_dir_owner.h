// Who made a run's private temp directory (GuardedTempDir: the workers' CURVE keys, the learner's
// ipc socket), so that what a SIGKILL or a crash left behind is found and removed later: each
// holds an "owner" file naming its process by pid and start time (a pid alone may be reused).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace rlx {

// The name of the owner file inside a GuardedTempDir.
constexpr const char* kTempDirOwnerFile = "owner";
// The prefixes of the temp directories a run makes; sweep_dead_temp_dirs looks for these.
inline const std::vector<std::string> kRunTempDirPrefixes = {"rlx-run-", "rlx-local-worker-keys-"};

// "PID START" for this process: its pid and its start time in clock ticks since boot
// (/proc/self/stat's 22nd field).
std::string temp_dir_owner_stamp();

// Writes temp_dir_owner_stamp() to DIR/owner; std::runtime_error naming the file when it cannot.
void stamp_temp_dir_owner(const std::filesystem::path& dir);

// Removes the directories in `parents` whose names start with one of `prefixes`, that this user
// owns, and whose owner file names a process that is gone (no such pid, or one started at another
// time). Directories without an owner file, or that cannot be read, are left alone. Returns the
// paths it removed.
std::vector<std::filesystem::path> sweep_dead_temp_dirs(const std::vector<std::filesystem::path>& parents,
                                                        const std::vector<std::string>& prefixes);

}  // namespace rlx
