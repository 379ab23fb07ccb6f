// Reading /sys (or a test's copy of it under another root): small attribute files, lists,
// directories and links, as cheaply as the kernel allows (one read per attribute, one
// readlink per link).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "placement/cpu_list.hpp"

namespace aml {

class SysReader {
 public:
  explicit SysReader(std::string root) : root_(root == "/" ? "" : std::move(root)) {}

  // The path under the root.
  std::string at(const std::string& path) const { return root_ + path; }

  // The file's text without its trailing newline; nullopt when it cannot be read.
  std::optional<std::string> text(const std::string& path) const;
  std::optional<CpuList> list(const std::string& path) const;
  // A number in C's forms ("0x10de", "-1"); `otherwise` when unreadable.
  int number(const std::string& path, int otherwise) const;
  // A directory's entries, sorted, without the dot ones; none when it cannot be read.
  std::vector<std::string> entries(const std::string& path) const;
  // Where a link of /sys leads, without the root: one readlink per link (sysfs links are
  // relative and lead to real directories), not realpath's look at every component. A path
  // that is no link is itself.
  std::string resolved(const std::string& path) const;

 private:
  std::string root_;
};

}  // namespace aml
