// A socket address as people read it ("10.0.0.4", "fe80::1").
#pragma once

#include <sys/socket.h>

#include <string>

namespace aml {

std::string address_text(const sockaddr* addr);

}  // namespace aml
