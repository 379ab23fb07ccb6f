# Every header stands on its own includes (-DAML_CHECK_HEADERS=ON; scripts/test.sh's main build
# turns it on): each of the project's headers is compiled alone, in a file that includes it and
# nothing else. The builds are unity builds (a few files compiled as one), where a header could
# lean on what an earlier file of its batch included; here it cannot. No code is generated from
# a header alone, so these compile at -O0, through the build's compiler launcher (ccache) as
# every other file does: a header that did not change is not compiled again.
file(GLOB_RECURSE _aml_headers CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/include/*.h ${PROJECT_SOURCE_DIR}/include/*.hpp
     ${PROJECT_SOURCE_DIR}/src/*.hpp ${PROJECT_SOURCE_DIR}/launcher/*.hpp)
if(AML_BUILD_TESTS)
  file(GLOB_RECURSE _aml_test_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/*.hpp)
  list(APPEND _aml_headers ${_aml_test_headers})
endif()
if(AML_BUILD_BENCHMARKS)
  file(GLOB_RECURSE _aml_benchmark_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/benchmarks/*.hpp)
  list(APPEND _aml_headers ${_aml_benchmark_headers})
endif()
# The communicators' headers with the backends the build has (src/CMakeLists.txt).
foreach(_aml_backend gloo mpi nccl)
  if(NOT " ${AML_COMM_BACKENDS} " MATCHES " ${_aml_backend} ")
    list(FILTER _aml_headers EXCLUDE REGEX "/src/comm/${_aml_backend}_")
  endif()
endforeach()
if(NOT AML_BUILD_COMM)
  list(FILTER _aml_headers EXCLUDE REGEX "/src/comm/")
endif()

set(_aml_alone ${CMAKE_BINARY_DIR}/headers-alone)
set(_aml_alone_sources "")
foreach(_aml_header IN LISTS _aml_headers)
  file(RELATIVE_PATH _aml_name ${PROJECT_SOURCE_DIR} ${_aml_header})
  string(MAKE_C_IDENTIFIER "${_aml_name}" _aml_name)
  # Written only when it changes, so that nothing is compiled again at each configure.
  file(CONFIGURE OUTPUT ${_aml_alone}/${_aml_name}.cpp CONTENT "#include \"${_aml_header}\"\n")
  list(APPEND _aml_alone_sources ${_aml_alone}/${_aml_name}.cpp)
endforeach()
add_library(aml_headers_alone OBJECT ${_aml_alone_sources})
set_target_properties(aml_headers_alone PROPERTIES UNITY_BUILD OFF)
target_compile_options(aml_headers_alone PRIVATE -O0)
# What the headers' own libraries give their users; a header names its includes from these roots.
target_include_directories(aml_headers_alone PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
                                                     ${PROJECT_SOURCE_DIR}/launcher)
foreach(_aml_dir AML_MPI_INCLUDE_DIR AML_NCCL_INCLUDE_DIR AML_CUDA_INCLUDE_DIR)  # cmake/CommDependencies.cmake
  if(${_aml_dir})
    target_include_directories(aml_headers_alone SYSTEM PRIVATE ${${_aml_dir}})
  endif()
endforeach()
target_link_libraries(aml_headers_alone PRIVATE nlohmann_json::nlohmann_json fmt::fmt-header-only)
if(AML_BUILD_TESTS)
  find_package(GTest REQUIRED)
  target_link_libraries(aml_headers_alone PRIVATE GTest::gtest)
endif()
if(TARGET gloo)  # Gloo built here (cmake/GlooFromSource.cmake); the system's is in its include path
  target_link_libraries(aml_headers_alone PRIVATE gloo)
endif()
message(STATUS "Each of ${CMAKE_PROJECT_NAME}'s headers compiled alone: target aml_headers_alone")
