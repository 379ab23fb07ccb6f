// The GPU check: NVML, opened at run time (never linked: a node without the driver starts
// without it, and says so where GPUs were asked for). Per GPU this node should have: present
// and answering, the driver's recovery action (r570+), volatile uncorrectable ECC errors, a row
// remap failed or pending, hardware or thermal slowdown, and a critical Xid since the last look.
#include <dirent.h>

#include <cstdint>
#include <cstring>

#include "health/health_checks.hpp"
#include "util/shared_library.hpp"

namespace aml {
// NVML's C ABI lives in a namespace of its own, not an anonymous one: HealthLooks::Nvml (declared
// in the header) holds it.
namespace nvml_abi {

// NVML's C ABI, as far as these checks use it (nvml.h is not needed to build).
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlEventSet = struct NvmlEventSetOpaque*;
union NvmlValue {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
};
struct NvmlFieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  int nvml_return;
  NvmlValue value;
};
struct NvmlEventData {
  NvmlDevice device;
  unsigned long long event_type;
  unsigned long long event_data;  // the Xid
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
constexpr int kSuccess = 0, kTimeout = 10, kFunctionNotFound = 13;
constexpr unsigned int kRecoveryActionField = 230;  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
constexpr unsigned long long kXidCritical = 0x8;    // nvmlEventTypeXidCriticalError
// nvmlClocksEventReason: HW slowdown, SW thermal, HW thermal, HW power brake.
constexpr unsigned long long kSlowdown = 0x8 | 0x20 | 0x40 | 0x80;

struct NvmlApi {
  int (*init)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*count)(unsigned int*) = nullptr;
  int (*by_index)(unsigned int, NvmlDevice*) = nullptr;
  int (*by_uuid)(const char*, NvmlDevice*) = nullptr;
  int (*field_values)(NvmlDevice, int, NvmlFieldValue*) = nullptr;
  int (*ecc)(NvmlDevice, int, int, unsigned long long*) = nullptr;
  int (*remapped)(NvmlDevice, unsigned int*, unsigned int*, unsigned int*, unsigned int*) = nullptr;
  int (*slowdown)(NvmlDevice, unsigned long long*) = nullptr;
  int (*event_set)(NvmlEventSet*) = nullptr;
  int (*register_events)(NvmlDevice, unsigned long long, NvmlEventSet) = nullptr;
  int (*event_wait)(NvmlEventSet, NvmlEventData*, unsigned int) = nullptr;
};

}  // namespace nvml_abi

namespace {

using namespace nvml_abi;

std::string said(const NvmlApi& api, int code) {
  const char* text = api.error_string ? api.error_string(code) : nullptr;
  return text ? std::string(text) : "NVML error " + std::to_string(code);
}

const char* recovery_word(unsigned int action) {
  switch (action) {
    case 1:
      return "reset the GPU";
    case 2:
      return "reboot the node";
    case 3:
      return "drain peer-to-peer traffic";
    case 4:
      return "drain and reset";
    default:
      return "unknown";
  }
}

int device_files(const std::string& root) {
  const std::string dev = (root == "/" ? "" : root) + "/dev";
  DIR* dir = opendir(dev.c_str());
  if (!dir) return 0;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    const char* name = entry->d_name;
    if (std::strncmp(name, "nvidia", 6) == 0 && name[6] >= '0' && name[6] <= '9') ++count;
  }
  closedir(dir);
  return count;
}

}  // namespace

struct HealthLooks::Nvml {
  nvml_abi::NvmlApi api;
  nvml_abi::NvmlEventSet events =
      nullptr;  // Xid events of every GPU looked at, since the first look
  bool registered = false;
};

// Here, where Nvml is whole. NVML is left open: the process ends with it.
HealthLooks::HealthLooks() = default;
HealthLooks::~HealthLooks() = default;

bool has_gpus(const HealthSettings& settings) {
  if (settings.visible_gpus) return !settings.visible_gpus->empty();
  return device_files(settings.machine_root) > 0;
}

HealthResult check_gpus(const HealthSettings& settings, HealthLooks& looks) {
  using namespace nvml_abi;
  HealthResult result{"gpu", false, "", 0};
  if (!looks.nvml) {
    auto handle = open_library({"gpu",
                                "NVIDIA's NVML (libnvidia-ml.so.1, the driver's)",
                                "AML_NVML_LIBRARY",
                                {"libnvidia-ml.so.1", "libnvidia-ml.so"}});
    if (!handle) {
      result.figure = std::string(kNoDriver) + ": " + handle.error().message();
      return result;
    }
    auto nvml = std::make_unique<HealthLooks::Nvml>();
    NvmlApi& api = nvml->api;
    SymbolTable symbols(*handle);
    symbols.bind(api.init, "nvmlInit_v2");
    symbols.bind(api.error_string, "nvmlErrorString");
    symbols.bind(api.count, "nvmlDeviceGetCount_v2");
    symbols.bind(api.by_index, "nvmlDeviceGetHandleByIndex_v2");
    if (!symbols.missing().empty()) {
      result.figure = "NVML lacks " + symbols.missing();
      return result;
    }
    // The rest are newer, or optional: a driver without one has that check skipped.
    SymbolTable optional(*handle);
    optional.bind(api.by_uuid, "nvmlDeviceGetHandleByUUID");
    optional.bind(api.field_values, "nvmlDeviceGetFieldValues");
    optional.bind(api.ecc, "nvmlDeviceGetTotalEccErrors");
    optional.bind(api.remapped, "nvmlDeviceGetRemappedRows");
    optional.bind(api.slowdown, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!api.slowdown) optional.bind(api.slowdown, "nvmlDeviceGetCurrentClocksThrottleReasons");
    optional.bind(api.event_set, "nvmlEventSetCreate");
    optional.bind(api.register_events, "nvmlDeviceRegisterEvents");
    optional.bind(api.event_wait, "nvmlEventSetWait_v2");
    if (int code = api.init(); code != kSuccess) {
      result.figure = "NVML does not start: " + said(api, code);
      return result;
    }
    if (api.event_set && api.event_set(&nvml->events) != kSuccess) nvml->events = nullptr;
    looks.nvml = std::move(nvml);
  }
  HealthLooks::Nvml& nvml = *looks.nvml;
  const NvmlApi& api = nvml.api;
  unsigned int count = 0;
  if (int code = api.count(&count); code != kSuccess) {
    result.figure = "NVML cannot count the GPUs: " + said(api, code);
    return result;
  }
  // Which GPUs: those the job sees (CUDA_VISIBLE_DEVICES), else every device file's.
  std::vector<std::string> wanted;
  if (settings.visible_gpus) {
    wanted = *settings.visible_gpus;
  } else {
    const int files = device_files(settings.machine_root);
    for (int i = 0; i < (files > 0 ? files : static_cast<int>(count)); ++i) {
      wanted.push_back(std::to_string(i));
    }
  }
  if (wanted.size() > count) {
    result.figure = std::to_string(wanted.size()) + " GPUs expected (" +
                    (settings.visible_gpus ? "CUDA_VISIBLE_DEVICES" : "/dev/nvidia*") +
                    "), NVML sees " + std::to_string(count);
    return result;
  }
  std::vector<std::string> faults;
  std::vector<NvmlDevice> devices;
  for (const std::string& id : wanted) {
    NvmlDevice device = nullptr;
    const bool by_number = !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
    int code = by_number     ? api.by_index(static_cast<unsigned int>(std::stoul(id)), &device)
               : api.by_uuid ? api.by_uuid(id.c_str(), &device)
                             : kFunctionNotFound;
    if (code != kSuccess) {
      faults.push_back("GPU " + id + " does not answer: " + said(api, code));
      continue;
    }
    devices.push_back(device);
    if (api.field_values) {
      NvmlFieldValue field{};
      field.field_id = kRecoveryActionField;
      if (api.field_values(device, 1, &field) == kSuccess && field.nvml_return == kSuccess &&
          field.value.ui != 0) {
        faults.push_back("GPU " + id + ": the driver's recovery action is " +
                         recovery_word(field.value.ui) + " (" + std::to_string(field.value.ui) +
                         ")");
      }
    }
    unsigned long long ecc = 0;
    if (api.ecc && api.ecc(device, 1, 0, &ecc) == kSuccess && ecc > 0) {
      faults.push_back("GPU " + id + ": " + std::to_string(ecc) +
                       " volatile uncorrectable ECC errors");
    }
    unsigned int corrected = 0, uncorrected = 0, pending = 0, failed = 0;
    if (api.remapped &&
        api.remapped(device, &corrected, &uncorrected, &pending, &failed) == kSuccess &&
        (pending || failed)) {
      faults.push_back("GPU " + id + ": " +
                       (failed ? "a row remap failed" : "a row remap is pending (reset needed)"));
    }
    unsigned long long reasons = 0;
    if (api.slowdown && api.slowdown(device, &reasons) == kSuccess && (reasons & kSlowdown)) {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", reasons & kSlowdown);
      faults.push_back("GPU " + id + ": hardware or thermal slowdown (clock event reasons " + hex +
                       ")");
    }
  }
  // Xid events: registered at the first look; each later look reads those since the last.
  if (nvml.events && api.register_events && api.event_wait) {
    if (!nvml.registered) {
      for (NvmlDevice device : devices) {
        (void)api.register_events(device, kXidCritical, nvml.events);
      }
      nvml.registered = true;
    }
    for (int i = 0; i < 64; ++i) {
      NvmlEventData event{};
      const int code = api.event_wait(nvml.events, &event, 0);
      if (code == kTimeout || code != kSuccess) break;
      faults.push_back("Xid " + std::to_string(event.event_data) + " since the last look");
    }
  }
  if (!faults.empty()) {
    for (std::size_t i = 0; i < faults.size(); ++i) result.figure += (i ? "; " : "") + faults[i];
    return result;
  }
  result.ok = true;
  result.figure = std::to_string(devices.size()) + " GPU" + (devices.size() == 1 ? "" : "s") +
                  " answer, none to recover, no uncorrectable ECC, remap or slowdown";
  return result;
}

}  // namespace aml
