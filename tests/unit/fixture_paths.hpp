// Where the unit tests' fixtures lie in this build: paths compiled into one file alone
// (fixture_paths.cpp), so that every other test file is the same in any clone and a clone
// elsewhere takes its objects from ccache.
#pragma once

namespace aml::test {

// torch's own clients' recorded conversations (tests/fixtures/torch-store).
const char* torch_store_fixtures();
// The NVML stand-in library (tests/health/nvml_stand_in.c) the build made.
const char* nvml_stand_in_library();
// torch's flight recorder dumps (tests/fixtures/flight-recorder).
const char* flight_recorder_fixtures();
// The placement tests' machines, written at build time (tests/fixtures/machines).
const char* test_machines();

}  // namespace aml::test
