// The paths of fixture_paths.hpp, from tests/CMakeLists.txt's definitions for this file alone.
#include "fixture_paths.hpp"

namespace aml::test {

const char* torch_store_fixtures() { return AML_TORCH_STORE_FIXTURES; }
const char* nvml_stand_in_library() { return AML_NVML_STAND_IN_LIBRARY; }
const char* flight_recorder_fixtures() { return AML_FLIGHT_RECORDER_FIXTURES; }
const char* test_machines() { return AML_TEST_MACHINES; }

}  // namespace aml::test
