// One rank's flight recorder, asked for a dump and read as the dump is written (DESIGN §6).
// torch's recorder reads a pipe of its own (TORCH_NCCL_DEBUG_INFO_PIPE_FILE + rank) and, at each
// line written there, writes its dump in place (TORCH_FR_DUMP_TEMP_FILE + rank); the training
// goes on. The hang inquiry and the straggler check ask through this.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "aml/error.hpp"

namespace aml {

class FlightDump {
 public:
  FlightDump(std::string pipe, std::string path) : pipe_(std::move(pipe)), path_(std::move(path)) {}

  enum class Asked {
    yes,
    unanswered,  // the pipe is there, nobody reads it at this moment: ask again
    no_pipe,     // no recorder made one
  };
  // Writes the pipe, never waiting. An earlier dump at the path is removed first: it is not
  // this one's.
  Asked ask();
  bool asked() const { return asked_; }
  // The dump at the path, read where it grew since the last look (nullopt: nothing new). One
  // still being written reads as an error until it is whole; one past the bounds stays one.
  std::optional<Result<nlohmann::json>> read_if_grown();
  const std::string& path() const { return path_; }

 private:
  std::string pipe_;
  std::string path_;
  bool asked_ = false;
  long long size_ = -1;  // the size it was last read at
};

}  // namespace aml
