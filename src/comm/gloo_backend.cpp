// Gloo: CPU collectives over TCP, its rendezvous done through the aml store.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <cstdlib>
#include <stdexcept>

#include "comm/backends.hpp"
#include "comm/job_store.hpp"
#include "comm/reduce_sum.hpp"
#include "net/route_interface.hpp"

namespace aml::comm {
namespace {

// Gloo's rendezvous Store interface on the aml store client. Gloo reports trouble by
// exception; init() turns it back into an Error.
class GlooStore : public gloo::rendezvous::Store {
 public:
  GlooStore(StoreClient& client, std::string prefix, std::chrono::milliseconds timeout)
      : client_(client), prefix_(std::move(prefix)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    check(client_.set(prefix_ + key, std::string_view(data.data(), data.size())));
  }

  std::vector<char> get(const std::string& key) override {
    auto value = check(client_.get(prefix_ + key, timeout_));
    if (!*value) throw std::runtime_error("no rank wrote " + key + " in time");
    return std::vector<char>((*value)->begin(), (*value)->end());
  }

  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }

  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> full;
    for (const std::string& k : keys) full.push_back(prefix_ + k);
    if (!*check(client_.wait(full, timeout)))
      throw std::runtime_error("the other ranks did not arrive in time");
  }

 private:
  template <class T>
  static Result<T> check(Result<T> result) {
    if (!result) throw std::runtime_error(result.error().message());
    return result;
  }

  StoreClient& client_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.starts_with("127.") || host == "::1";
}

// Where this rank listens for its peers: GLOO_SOCKET_IFNAME when set (as torch reads it), the
// loopback on a single host, else the interface whose route reaches MASTER_ADDR.
gloo::transport::tcp::attr device_attr(const Topology& job) {
  gloo::transport::tcp::attr attr;
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname != nullptr && *ifname) {
    attr.iface = ifname;
  } else if (job.nnodes <= 1 || is_loopback(job.master_addr)) {
    attr.hostname = "127.0.0.1";
  } else {
    RouteInterface route = route_interface_to(job.master_addr);
    if (!route.ifname.empty()) {
      attr.iface = route.ifname;
    } else {
      attr.hostname = job.master_addr;  // as good a guess as any: let the OS pick by name
    }
  }
  return attr;
}

template <class T>
void sum_in_place(const std::shared_ptr<gloo::Context>& context, void* data, std::size_t count,
                  uint32_t tag, void (*sum)(void*, const void*, const void*, std::size_t)) {
  gloo::AllreduceOptions opts(context);
  opts.setOutput(static_cast<T*>(data), count);
  opts.setReduceFunction(sum);
  opts.setTag(tag);
  gloo::allreduce(opts);
}

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(const ProcessTopology& t, JobStore store,
                   std::shared_ptr<gloo::rendezvous::Context> context)
      : Communicator(t.rank, t.world_size, t.local_rank),
        store_(std::move(store)),
        context_(std::move(context)) {}

  Backend backend() const override { return Backend::gloo; }

  Result<bool> allreduce_sum(void* data, std::size_t count, DataType type) override {
    try {
      const uint32_t tag = next_tag_++;
      switch (type) {
        case DataType::f32:
          sum_in_place<float>(context_, data, count, tag, sum_f32);
          break;
        case DataType::f64:
          sum_in_place<double>(context_, data, count, tag, sum_f64);
          break;
        case DataType::i32:
          sum_in_place<int32_t>(context_, data, count, tag, sum_i32);
          break;
        case DataType::i64:
          sum_in_place<int64_t>(context_, data, count, tag, sum_i64);
          break;
      }
    } catch (const std::exception& e) {
      return backend_error("gloo", "allreduce", std::string("to complete (") + e.what() + ")");
    }
    return true;
  }

  Result<bool> barrier() override {
    try {
      gloo::BarrierOptions opts(context_);
      opts.setTag(next_tag_++);
      gloo::barrier(opts);
    } catch (const std::exception& e) {
      return backend_error("gloo", "barrier", std::string("to complete (") + e.what() + ")");
    }
    return true;
  }

 private:
  JobStore store_;  // rank 0's store lives as long as the communicator
  std::shared_ptr<gloo::rendezvous::Context> context_;
  uint32_t next_tag_ = 1;
};

}  // namespace

Result<std::unique_ptr<Communicator>> start_gloo(const ProcessTopology& t,
                                                 const InitOptions& options) {
  auto store = open_job_store(t, "gloo", options.name, options.timeout);
  if (!store) return store.error();
  try {
    auto device = gloo::transport::tcp::CreateDevice(device_attr(t.job));
    auto context = std::make_shared<gloo::rendezvous::Context>(t.rank, t.world_size);
    context->setTimeout(options.timeout);
    GlooStore adapter(*store->client, store->prefix, options.timeout);
    context->connectFullMesh(adapter, device);
    return std::unique_ptr<Communicator>(
        new GlooCommunicator(t, std::move(*store), std::move(context)));
  } catch (const std::exception& e) {
    return backend_error("gloo",
                         "rank " + std::to_string(t.rank) + " of " + std::to_string(t.world_size),
                         std::string("to join the others (") + e.what() + ")");
  }
}

}  // namespace aml::comm
