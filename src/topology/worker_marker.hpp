// The variables by which aml-launch marks the workers it starts.
#pragma once

#include <string_view>

namespace aml {

inline constexpr std::string_view kWorkerMarker = "AML_LAUNCH_WORKER";
inline constexpr std::string_view kRunIdVariable = "AML_LAUNCH_RUN_ID";
inline constexpr std::string_view kRestartCountVariable = "AML_LAUNCH_RESTART_COUNT";
inline constexpr std::string_view kSourceVariable = "AML_LAUNCH_SOURCE";
// Multi-node: the job's store (host:port on node 0) and the token it asks for.
inline constexpr std::string_view kStoreVariable = "AML_LAUNCH_STORE";
inline constexpr std::string_view kStoreTokenVariable = "AML_LAUNCH_STORE_TOKEN";
// How a worker proves itself to that store: none, key (the workers' key, derived from the job's
// secret: it cannot prove a launcher) or munge.
inline constexpr std::string_view kStoreAuthVariable = "AML_LAUNCH_STORE_AUTH";
inline constexpr std::string_view kStoreKeyVariable = "AML_LAUNCH_STORE_KEY";

}  // namespace aml
