// Uses all three installed libraries: the rank topology, a store client, a communicator.
#include <aml/comm.hpp>
#include <aml/rank.hpp>
#include <aml/store.hpp>
#include <cstdio>

int main() {
  auto comm = aml::comm::init();
  if (!comm) {
    std::fprintf(stderr, "consumer: %s\n", comm.error().message().c_str());
    return 1;
  }
  int one = 1;
  if (!(*comm)->allreduce_sum(&one, 1, aml::comm::DataType::i32)) return 1;
  // No store runs here: a clear error, quickly, is what the client gives.
  auto store = aml::StoreClient::connect("127.0.0.1", 1, "token", std::chrono::milliseconds(50));
  std::printf("consumer: rank %d of %d, master %s, %d ranks counted, store: %s\n", aml::rank(),
              aml::world_size(), aml::is_master() ? "yes" : "no", one,
              store ? "connected" : "refused as expected");
  return 0;
}
