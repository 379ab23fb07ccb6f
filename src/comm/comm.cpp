#include <aml/comm.hpp>
#include <cstdlib>

#include "comm/backends.hpp"

namespace aml::comm {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::gloo:
      return "gloo";
    case Backend::mpi:
      return "mpi";
    case Backend::nccl:
      return "nccl";
  }
  return "?";
}

Result<Backend> parse_backend(std::string_view name) {
  for (Backend b : {Backend::gloo, Backend::mpi, Backend::nccl}) {
    if (name == to_string(b)) return b;
  }
  return invalid("backend", std::string(name), "gloo, mpi or nccl");
}

bool available(Backend backend) {
  switch (backend) {
    case Backend::gloo:
      return AML_COMM_WITH_GLOO;
    case Backend::mpi:
      return AML_COMM_WITH_MPI;
    case Backend::nccl:
      return AML_COMM_WITH_NCCL;
  }
  return false;
}

std::size_t size_of(DataType type) {
  return type == DataType::f32 || type == DataType::i32 ? 4 : 8;
}

Result<std::unique_ptr<Communicator>> init(const InitOptions& given) {
  InitOptions options = given;
  if (const char* seconds = std::getenv("AML_COMM_TIMEOUT"); seconds != nullptr && *seconds) {
    char* end = nullptr;
    double s = std::strtod(seconds, &end);
    if (end == seconds || *end != '\0' || !(s > 0) || s > 86400)
      return invalid("AML_COMM_TIMEOUT", seconds, "seconds, above 0 and up to 86400");
    options.timeout = std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }
  Backend backend = Backend::gloo;
  if (options.backend) {
    backend = *options.backend;
  } else if (const char* named = std::getenv("AML_COMM_BACKEND"); named != nullptr && *named) {
    auto parsed = parse_backend(named);
    if (!parsed) return invalid("AML_COMM_BACKEND", named, "gloo, mpi or nccl");
    backend = *parsed;
  }
  if (!available(backend)) {
    return invalid("backend", std::string(to_string(backend)),
                   "a backend this build of aml::comm has (it was built without it)");
  }
  const auto& topology = try_topology();
  if (!topology) return topology.error();
  switch (backend) {
    case Backend::gloo:
      return start_gloo(*topology, options);
    case Backend::mpi:
      return start_mpi(*topology, options);
    case Backend::nccl:
      return start_nccl(*topology, options);
  }
  return invalid("backend", "?", "gloo, mpi or nccl");
}

#if !AML_COMM_WITH_GLOO
Result<std::unique_ptr<Communicator>> start_gloo(const ProcessTopology&, const InitOptions&) {
  return invalid("backend", "gloo", "a build with Gloo");
}
#endif
#if !AML_COMM_WITH_MPI
Result<std::unique_ptr<Communicator>> start_mpi(const ProcessTopology&, const InitOptions&) {
  return invalid("backend", "mpi", "a build with MPI");
}
#endif
#if !AML_COMM_WITH_NCCL
Result<std::unique_ptr<Communicator>> start_nccl(const ProcessTopology&, const InitOptions&) {
  return invalid("backend", "nccl", "a build with NCCL");
}
#endif

}  // namespace aml::comm
