// The flags of notices of a node's end (issue 55): where they come from, which signal to this
// launcher is one, and which signal the workers get.
#include <signal.h>

#include "options.hpp"
#include "supervisor/exit_status.hpp"

namespace aml {

using enum FlagId;

std::optional<Error> read_notice_flags(const CommandLine& line, Options& options) {
  if (line.has(notice_from)) {
    const std::string& from = line.value(notice_from);
    if (from != "auto" && from != "none") {
      std::size_t start = 0;
      while (start <= from.size()) {
        const auto comma = from.find(',', start);
        const std::string word = from.substr(start, comma - start);
        if (word != "azure" && word != "aws" && word != "gcp")
          return invalid(flag_name(line, notice_from), from,
                         "auto, none, or a list of azure, aws and gcp");
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    options.notice_from = from;
  }
  // The signals the launcher (and its first process) takes in without dying of them, less
  // TERM and INT, which stop the job.
  const auto usable = [](int sig) {
    return sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGHUP || sig == SIGQUIT;
  };
  if (line.has(notice_signal)) {
    const int sig = signal_number(line.value(notice_signal));
    if (!usable(sig)) {
      return invalid(flag_name(line, notice_signal), line.value(notice_signal),
                     "USR1, USR2, HUP or QUIT (TERM and INT stop the job)");
    }
    options.notice_signal = sig;
  }
  if (line.has(notice_to_workers)) {
    const std::string& word = line.value(notice_to_workers);
    const int sig = word == "none" ? 0 : signal_number(word);
    if (word != "none" && (sig <= 0 || sig == SIGKILL || sig == SIGSTOP)) {
      return invalid(flag_name(line, notice_to_workers), word,
                     "a signal such as USR1 or USR2, or none");
    }
    options.notice_to_workers = sig;
  }
  return std::nullopt;
}

}  // namespace aml
