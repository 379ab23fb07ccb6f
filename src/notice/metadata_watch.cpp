#include "notice/metadata_watch.hpp"

#include <sys/epoll.h>

#include "notice/platform_notices.hpp"

namespace aml {

namespace {

// What each platform's service is asked, step by step: a first question (Azure: this VM's
// name; AWS: an IMDSv2 token), then the poll.
constexpr std::string_view kAzureName =
    "/metadata/instance/compute/name?api-version=2021-02-01&format=text";
constexpr std::string_view kAzureEvents = "/metadata/scheduledevents?api-version=2020-07-01";
constexpr std::string_view kAwsToken = "/latest/api/token";
constexpr std::string_view kAwsAction = "/latest/meta-data/spot/instance-action";
constexpr std::string_view kGcpPreempted = "/computeMetadata/v1/instance/preempted";

// Each platform's name (--notice-from) and its source's (in notices and messages).
struct PlatformNames {
  NoticePlatform platform;
  std::string_view flag;
  std::string_view source;
};
constexpr PlatformNames kPlatforms[] = {
    {NoticePlatform::azure, "azure", "azure-scheduled-events"},
    {NoticePlatform::aws, "aws", "aws-spot"},
    {NoticePlatform::gcp, "gcp", "gcp-preemption"},
};

const PlatformNames& names_of(NoticePlatform platform) {
  for (const PlatformNames& names : kPlatforms)
    if (names.platform == platform) return names;
  return kPlatforms[0];
}

std::string source_name(NoticePlatform platform) { return std::string(names_of(platform).source); }

}  // namespace

std::string_view to_string(NoticePlatform platform) { return names_of(platform).flag; }

struct MetadataWatch::Source {
  NoticePlatform platform;
  bool polling = false;  // past the first question
  std::string token;     // AWS's IMDSv2 token
  std::unique_ptr<HttpGet> request;
  Clock::time_point started{};
  Clock::time_point next_at{};
  bool answered_once = false;  // the service is there
  bool dropped = false;
  std::string complaint;  // said once until an answer is good again
};

MetadataWatch::MetadataWatch(MetadataWatchOptions options, std::function<void(Notice)> heard,
                             std::function<void(const std::string&)> say)
    : options_(std::move(options)),
      heard_(std::move(heard)),
      say_(std::move(say)),
      epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  for (NoticePlatform platform : options_.platforms) {
    auto source = std::make_unique<Source>();
    source->platform = platform;
    source->polling = platform == NoticePlatform::gcp;  // no first question
    sources_.push_back(std::move(source));
  }
}

MetadataWatch::~MetadataWatch() = default;

bool MetadataWatch::active() const {
  for (const auto& source : sources_)
    if (!source->dropped) return true;
  return false;
}

std::optional<MetadataWatch::Clock::time_point> MetadataWatch::next_deadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& source : sources_) {
    if (source->dropped) continue;
    const auto at = source->request ? source->started + options_.request_timeout : source->next_at;
    if (!next || at < *next) next = at;
  }
  return next;
}

void MetadataWatch::start_request(Source& source, Clock::time_point now) {
  std::vector<std::pair<std::string, std::string>> headers;
  std::string method = "GET", path;
  switch (source.platform) {
    case NoticePlatform::azure:
      headers.emplace_back("Metadata", "true");
      path = std::string(source.polling ? kAzureEvents : kAzureName);
      break;
    case NoticePlatform::aws:
      if (!source.polling) {
        method = "PUT";
        path = std::string(kAwsToken);
        headers.emplace_back("X-aws-ec2-metadata-token-ttl-seconds", "21600");
      } else {
        path = std::string(kAwsAction);
        if (!source.token.empty()) headers.emplace_back("X-aws-ec2-metadata-token", source.token);
      }
      break;
    case NoticePlatform::gcp:
      headers.emplace_back("Metadata-Flavor", "Google");
      path = std::string(kGcpPreempted);
      break;
  }
  source.request = std::make_unique<HttpGet>(options_.url, method, path, headers);
  source.started = now;
  if (source.request->done()) return finish_request(source, now);
  epoll_event event{};
  event.events = source.request->wanted();
  event.data.ptr = &source;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, source.request->fd(), &event);
}

void MetadataWatch::on_ready(Clock::time_point now) {
  epoll_event events[8];
  const int n = epoll_wait(epoll_.get(), events, 8, 0);
  for (int i = 0; i < n; ++i) {
    auto& source = *static_cast<Source*>(events[i].data.ptr);
    if (!source.request) continue;
    source.request->on_ready();
    if (source.request->done()) {
      finish_request(source, now);
    } else {
      epoll_event event{};
      event.events = source.request->wanted();
      event.data.ptr = &source;
      epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, source.request->fd(), &event);
    }
  }
}

void MetadataWatch::tick(Clock::time_point now) {
  for (auto& source : sources_) {
    if (source->dropped) continue;
    if (source->request && now >= source->started + options_.request_timeout) {
      epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, source->request->fd(), nullptr);
      source->request.reset();
      complain(*source, "an answer within " +
                            std::to_string(options_.request_timeout.count() / 1000) + " s");
      source->next_at = now + options_.interval;
    }
    if (!source->request && now >= source->next_at) start_request(*source, now);
  }
}

void MetadataWatch::complain(Source& source, const std::string& what) {
  const std::string line = source_name(source.platform) + " at " + options_.url.text +
                           ": expected " + what + "; asking again every " +
                           std::to_string(options_.interval.count() / 1000) +
                           " s (the job runs on)";
  if (line == source.complaint) return;
  source.complaint = line;
  say_(line);
}

void MetadataWatch::finish_request(Source& source, Clock::time_point now) {
  // Done: its socket is closed, and with it gone from the epoll set.
  std::unique_ptr<HttpGet> request = std::move(source.request);
  source.next_at = now + options_.interval;
  const auto& result = request->result();
  if (!result) {
    if (request->refused() && !source.answered_once) {
      source.dropped = true;  // no service here: one refused connect, then silence
      return;
    }
    return complain(source, result.error().expected);
  }
  source.answered_once = true;
  const HttpAnswer& answer = *result;
  if (!source.polling) {
    // The first question's answer, whatever it is: a name or a token where given.
    if (answer.status == 200 && !answer.body.empty() && answer.body.size() < 256) {
      if (source.platform == NoticePlatform::azure) options_.vm_names.push_back(answer.body);
      if (source.platform == NoticePlatform::aws) source.token = answer.body;
    }
    source.polling = true;
    source.next_at = now;
    return;
  }
  std::vector<Notice> notices;
  if (source.platform == NoticePlatform::aws && answer.status == 404) {
    source.complaint.clear();
    return;  // no interruption planned
  }
  if (source.platform == NoticePlatform::aws && answer.status == 401) {
    source.polling = false;  // the token expired: ask for another
    source.next_at = now;
    return;
  }
  if (answer.status != 200)
    return complain(source, "HTTP 200 (it said " + std::to_string(answer.status) + ")");
  switch (source.platform) {
    case NoticePlatform::azure: {
      auto parsed = azure_scheduled_events(answer.body, options_.vm_names);
      if (!parsed)
        return complain(source,
                        parsed.error().expected + " (it sent " + parsed.error().value + ")");
      notices = std::move(*parsed);
      break;
    }
    case NoticePlatform::aws: {
      auto parsed = aws_spot_action(answer.body);
      if (!parsed)
        return complain(source,
                        parsed.error().expected + " (it sent " + parsed.error().value + ")");
      notices.push_back(std::move(*parsed));
      break;
    }
    case NoticePlatform::gcp: {
      auto parsed = gcp_preempted(answer.body, Notice::SystemClock::now());
      if (!parsed)
        return complain(source,
                        parsed.error().expected + " (it sent " + parsed.error().value + ")");
      notices = std::move(*parsed);
      break;
    }
  }
  source.complaint.clear();
  // A poll sees an event again until it happens: the desk hears each once.
  for (Notice& notice : notices) heard_(std::move(notice));
}

}  // namespace aml
