#include "comm/mpi_api.hpp"

#include "util/shared_library.hpp"

namespace aml::comm {
namespace {

Result<MpiApi> load(const char* backend) {
  auto handle = open_library(
      {backend, "Open MPI's libmpi.so.40", "AML_MPI_LIBRARY", {"libmpi.so.40", "libmpi.so"}});
  if (!handle) return handle.error();
  MpiApi api{};
  SymbolTable table(*handle);
  table.bind(api.initialized, "MPI_Initialized");
  table.bind(api.finalized, "MPI_Finalized");
  table.bind(api.init_thread, "MPI_Init_thread");
  table.bind(api.finalize, "MPI_Finalize");
  table.bind(api.comm_set_errhandler, "MPI_Comm_set_errhandler");
  table.bind(api.comm_rank, "MPI_Comm_rank");
  table.bind(api.comm_size, "MPI_Comm_size");
  table.bind(api.allreduce, "MPI_Allreduce");
  table.bind(api.barrier, "MPI_Barrier");
  table.bind(api.bcast, "MPI_Bcast");
  table.bind(api.error_string, "MPI_Error_string");
  // Open MPI's handles: the predefined objects' addresses (what its mpi.h macros take).
  table.bind(api.comm_world, "ompi_mpi_comm_world");
  table.bind(api.f32, "ompi_mpi_float");
  table.bind(api.f64, "ompi_mpi_double");
  table.bind(api.i32, "ompi_mpi_int32_t");
  table.bind(api.i64, "ompi_mpi_int64_t");
  table.bind(api.byte, "ompi_mpi_byte");
  table.bind(api.sum, "ompi_mpi_op_sum");
  table.bind(api.errors_return, "ompi_mpi_errors_return");
  if (!table.missing().empty()) {
    return invalid(backend, "a libmpi without " + table.missing(),
                   "Open MPI's libmpi.so.40 (MPICH's libmpi is another ABI)");
  }
  return api;
}

}  // namespace

Result<const MpiApi*> mpi_api(const char* backend) {
  return load_once<MpiApi>([backend] { return load(backend); });
}

}  // namespace aml::comm
