#include "supervisor/tool_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <unistd.h>

namespace aml {
namespace {

constexpr std::size_t kMostText = 4u << 20;

}  // namespace

ToolProcess::ToolProcess(Reactor& reactor, const std::vector<std::string>& argv,
                         Clock::time_point deadline)
    : reactor_(reactor), deadline_(deadline) {
  int fds[2];
  if (argv.empty() || pipe2(fds, O_CLOEXEC) != 0) return;
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  // A group of its own: a tool that is a script (a wrapper around py-spy) dies with its
  // children, and a Ctrl-C at the terminal reaches the launcher only, which decides.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ) == 0) pid_ = pid;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (pid_ < 0) return;
  fcntl(read_end.get(), F_SETFL, O_NONBLOCK);
  out_ = std::move(read_end);
  reactor_.add(out_.get(), EPOLLIN, [this](std::uint32_t) { read_some(); });
}

ToolProcess::~ToolProcess() {
  if (out_) finish(true);
}

void ToolProcess::read_some() {
  char buffer[16384];
  ssize_t n;
  while ((n = read(out_.get(), buffer, sizeof(buffer))) > 0) {
    if (text_.size() < kMostText) text_.append(buffer, static_cast<std::size_t>(n));
  }
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) finish(false);
}

void ToolProcess::tick(Clock::time_point now) {
  if (out_ && now >= deadline_) finish(true);
}

void ToolProcess::finish(bool timed_out) {
  reactor_.remove(out_.get());
  out_.reset();
  if (timed_out) text_ += "\n(aml-launch: stopped after its time limit)\n";
  // Gone already, or over its time; the supervisor's reaper takes it either way. Until it
  // is reaped its pid names its group.
  if (pid_ > 0) kill(-pid_, SIGKILL);
}

}  // namespace aml
