// Asks the platforms' metadata services for notices (issue 55), once a second each, without
// ever blocking the supervisor's loop: every request is a non-blocking HttpGet on an epoll
// descriptor of the watch's own, which the loop waits on as one more descriptor. A source
// whose service refuses the first connection is not there: it is dropped at once and costs
// nothing more. A bad answer (not the platform's format, too large, too slow) is said once and
// asked again at the next turn: the job runs on.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "notice/http_get.hpp"
#include "notice/notice.hpp"
#include "util/unique_fd.hpp"

namespace aml {

enum class NoticePlatform { azure, aws, gcp };
std::string_view to_string(NoticePlatform platform);

struct MetadataWatchOptions {
  std::vector<NoticePlatform> platforms;
  HttpUrl url;  // the metadata service (169.254.169.254, or AML_LAUNCH_METADATA_URL)
  // This VM's names as Azure's events name it (the host name; the instance's compute name is
  // asked of the service and added).
  std::vector<std::string> vm_names;
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds request_timeout{2000};
};

class MetadataWatch {
 public:
  using Clock = std::chrono::steady_clock;
  // `heard`: each notice of this node, at every poll that shows it; `say`: a line for people.
  MetadataWatch(MetadataWatchOptions options, std::function<void(Notice)> heard,
                std::function<void(const std::string&)> say);
  ~MetadataWatch();

  // Readable when a request's socket is ready; on_ready() then does its next step.
  int fd() const { return epoll_.get(); }
  void on_ready(Clock::time_point now);
  std::optional<Clock::time_point> next_deadline() const;
  // Time passed: starts what is due, drops what is late.
  void tick(Clock::time_point now);
  bool active() const;

 private:
  struct Source;
  void start_request(Source& source, Clock::time_point now);
  void finish_request(Source& source, Clock::time_point now);
  void complain(Source& source, const std::string& what);

  MetadataWatchOptions options_;
  std::function<void(Notice)> heard_;
  std::function<void(const std::string&)> say_;
  UniqueFd epoll_;
  std::vector<std::unique_ptr<Source>> sources_;
};

}  // namespace aml
