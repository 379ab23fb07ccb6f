// Open MPI's C API, opened at run time (libmpi.so.40: Open MPI 3.0 to 5). Compiled against
// Open MPI's mpi.h for its types; its predefined handles (MPI_COMM_WORLD, MPI_FLOAT, ...) are
// the addresses of objects in the library, so they are looked up as symbols too, and the
// mpi.h macros that name them are never used here.
#pragma once

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <aml/error.hpp>

namespace aml::comm {

struct MpiApi {
  decltype(&::MPI_Initialized) initialized;
  decltype(&::MPI_Finalized) finalized;
  decltype(&::MPI_Init_thread) init_thread;
  decltype(&::MPI_Finalize) finalize;
  decltype(&::MPI_Comm_set_errhandler) comm_set_errhandler;
  decltype(&::MPI_Comm_rank) comm_rank;
  decltype(&::MPI_Comm_size) comm_size;
  decltype(&::MPI_Allreduce) allreduce;
  decltype(&::MPI_Barrier) barrier;
  decltype(&::MPI_Bcast) bcast;
  decltype(&::MPI_Error_string) error_string;
  MPI_Comm comm_world;
  MPI_Datatype f32, f64, i32, i64, byte;
  MPI_Op sum;
  MPI_Errhandler errors_return;
};

// Opened on first use, once per process; `backend` names the caller in errors ("mpi", or
// "nccl" for its MPI_Bcast of the unique id). AML_MPI_LIBRARY names another library file.
Result<const MpiApi*> mpi_api(const char* backend);

}  // namespace aml::comm
