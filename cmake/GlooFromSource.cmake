# Gloo compiled with the project's own toolchain from a source tree (AML_GLOO_SOURCE_DIR;
# scripts/fetch-gloo.sh gets one): the release's Gloo must be built as the release is, with
# libc++ against glibc 2.17. Only what aml::comm uses: the collectives, the rendezvous and the
# TCP transport (no CUDA, ibverbs, libuv, Redis or TLS). Defines the static library `gloo`.
set(_gloo ${AML_GLOO_SOURCE_DIR})
if(NOT EXISTS ${_gloo}/gloo/allreduce.h OR NOT EXISTS ${_gloo}/gloo/config.h.in)
  message(FATAL_ERROR "AML_GLOO_SOURCE_DIR=${_gloo}: expected a Gloo source tree (gloo/allreduce.h)")
endif()
file(GLOB _gloo_sources ${_gloo}/gloo/*.cc ${_gloo}/gloo/common/*.cc ${_gloo}/gloo/rendezvous/*.cc
                        ${_gloo}/gloo/transport/*.cc ${_gloo}/gloo/transport/tcp/*.cc)
list(FILTER _gloo_sources EXCLUDE REGEX "/(cuda[^/]*|redis_store|win)\\.cc$")

# gloo/config.h: what this Gloo has.
file(STRINGS ${_gloo}/CMakeLists.txt _gloo_version REGEX "^set\\(GLOO_VERSION_(MAJOR|MINOR|PATCH) ")
foreach(line IN LISTS _gloo_version)
  if(line MATCHES "GLOO_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)")
    set(GLOO_VERSION_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  endif()
endforeach()
foreach(flag USE_CUDA USE_NCCL USE_ROCM USE_RCCL USE_REDIS USE_IBVERBS USE_MPI USE_AVX USE_LIBUV
             HAVE_TRANSPORT_TCP_TLS HAVE_TRANSPORT_IBVERBS HAVE_TRANSPORT_UV)
  set(GLOO_${flag} 0)
endforeach()
set(GLOO_HAVE_TRANSPORT_TCP 1)
configure_file(${_gloo}/gloo/config.h.in ${PROJECT_BINARY_DIR}/gloo-config/gloo/config.h)

add_library(gloo STATIC ${_gloo_sources})
# Another project's sources, not written to be compiled a few together: one at a time.
set_target_properties(gloo PROPERTIES UNITY_BUILD OFF)
target_include_directories(gloo SYSTEM PUBLIC ${PROJECT_BINARY_DIR}/gloo-config ${_gloo})
target_compile_options(gloo PRIVATE -w)  # its warnings are not this project's
set_target_properties(gloo PROPERTIES CXX_STANDARD 17 POSITION_INDEPENDENT_CODE ON)
find_package(Threads REQUIRED)
target_link_libraries(gloo PUBLIC Threads::Threads)
message(STATUS "Gloo ${GLOO_VERSION_MAJOR}.${GLOO_VERSION_MINOR}.${GLOO_VERSION_PATCH} from ${_gloo}")
