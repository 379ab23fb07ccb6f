# What aml::comm's backends are built with. Gloo is linked in: the system's (its CMake
# package), or compiled here from AML_GLOO_SOURCE_DIR (the portable build's, always: Debian's
# libgloo is built against libstdc++ and a newer glibc; cmake/PinnedSources.cmake). Open MPI
# and NCCL are only *compiled against*: their headers are enough, the libraries are opened at
# run time where the image has them (src/comm/shared_library.hpp), so that nothing needs them
# to start.
# Sets AML_COMM_WITH_GLOO / _MPI / _NCCL and AML_MPI_INCLUDE_DIR, AML_NCCL_INCLUDE_DIRS.
if(AML_GLOO_SOURCE_DIR)
  include(GlooFromSource)
  set(AML_COMM_WITH_GLOO TRUE)
else()
  find_package(Gloo CONFIG QUIET)
  set(AML_COMM_WITH_GLOO ${Gloo_FOUND})
endif()

# The portable build must not search the host's /usr/include (its glibc headers are newer):
# the vendor headers are looked for in their own folders only.
set(_host_arch ${CMAKE_HOST_SYSTEM_PROCESSOR})
find_path(AML_MPI_INCLUDE_DIR mpi.h
          HINTS ENV MPI_HOME PATH_SUFFIXES include
          PATHS /usr/lib/${_host_arch}-linux-gnu/openmpi/include /usr/include/openmpi
                /usr/lib64/openmpi/include /opt/openmpi/include
          NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
set(AML_COMM_WITH_MPI FALSE)
if(AML_MPI_INCLUDE_DIR)
  file(STRINGS ${AML_MPI_INCLUDE_DIR}/mpi.h _open_mpi REGEX "^#define OPEN_MPI 1")
  if(_open_mpi)
    set(AML_COMM_WITH_MPI TRUE)
  else()
    message(STATUS "aml::comm: ${AML_MPI_INCLUDE_DIR}/mpi.h is not Open MPI's: no mpi backend")
  endif()
endif()

set(_cuda_homes $ENV{NCCL_HOME} $ENV{CUDA_HOME} /usr/local/cuda)
find_path(AML_NCCL_INCLUDE_DIR nccl.h HINTS ${_cuda_homes} PATH_SUFFIXES include
          NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
find_path(AML_CUDA_INCLUDE_DIR cuda.h HINTS ${_cuda_homes} PATH_SUFFIXES include
          NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
set(AML_COMM_WITH_NCCL FALSE)
if(AML_NCCL_INCLUDE_DIR AND AML_CUDA_INCLUDE_DIR)
  set(AML_COMM_WITH_NCCL TRUE)
  set(AML_NCCL_INCLUDE_DIRS ${AML_NCCL_INCLUDE_DIR} ${AML_CUDA_INCLUDE_DIR})
  list(REMOVE_DUPLICATES AML_NCCL_INCLUDE_DIRS)
endif()
mark_as_advanced(AML_MPI_INCLUDE_DIR AML_NCCL_INCLUDE_DIR AML_CUDA_INCLUDE_DIR)
