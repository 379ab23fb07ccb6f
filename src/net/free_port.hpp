// A TCP port that is free on this host right now (the kernel picks it).
#pragma once

#include <aml/error.hpp>

namespace aml {

Result<int> free_tcp_port();

}  // namespace aml
