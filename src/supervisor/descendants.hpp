// The processes this launcher is parent of: workers, and orphans re-parented to it (it is a
// child subreaper, or PID 1).
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

namespace aml {

std::vector<pid_t> children_of_self();

// Whether this process has any child at all, live or a zombie (none reaped).
bool has_children();

// SIGKILLs every child, reaps it, and repeats for the grandchildren that are re-parented to
// us as their parents die, until no child is left. `on_reaped` sees every reaped pid.
void kill_all_descendants(const std::function<void(pid_t pid, int wait_status)>& on_reaped);

}  // namespace aml
