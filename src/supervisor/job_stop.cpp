#include "supervisor/job_stop.hpp"

#include <fstream>

namespace aml {

std::string process_name(long pid) {
  if (pid <= 0) return "";
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

}  // namespace aml
