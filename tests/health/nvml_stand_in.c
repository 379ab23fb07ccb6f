/* A stand-in for NVIDIA's libnvidia-ml.so.1, built by the tests: aml-launch opens it at run
 * time exactly as it opens the driver's (AML_NVML_LIBRARY, else the soname). It answers what
 * the file named by AML_NVML_STAND_IN says, read again at every call so that a test can make a
 * GPU go bad between two rounds. One setting a line:
 *   count N           GPUs it reports (default 0)
 *   recovery I A      GPU I's recovery action (1 reset, 2 reboot, 3 drain p2p, 4 drain and reset)
 *   ecc I N           GPU I's volatile uncorrectable ECC errors
 *   remap_pending I   GPU I has a row remap pending
 *   remap_failed I    GPU I had a row remap fail
 *   slowdown I MASK   GPU I's clock event reasons
 *   xid I X           an Xid X event on GPU I, delivered once to each process
 *   hang              nvmlDeviceGetCount_v2 never returns (a GPU gone from the bus)
 *   no_init           nvmlInit_v2 fails (no driver loaded) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kMaxGpus = 16 };
struct gpu {
  unsigned recovery, ecc, pending, failed, xid;
  unsigned long long slowdown;
};
struct state {
  unsigned count;
  int hang, no_init;
  struct gpu gpus[kMaxGpus];
};
static unsigned delivered[kMaxGpus]; /* the Xid already delivered, per GPU */

static struct state read_state(void) {
  struct state s;
  memset(&s, 0, sizeof s);
  const char* path = getenv("AML_NVML_STAND_IN");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return s;
  char key[64];
  while (fscanf(f, "%63s", key) == 1) {
    unsigned i = 0;
    if (!strcmp(key, "count")) {
      if (fscanf(f, "%u", &s.count) != 1) break;
      continue;
    }
    if (!strcmp(key, "hang")) {
      s.hang = 1;
      continue;
    }
    if (!strcmp(key, "no_init")) {
      s.no_init = 1;
      continue;
    }
    if (fscanf(f, "%u", &i) != 1 || i >= kMaxGpus) break;
    struct gpu* g = &s.gpus[i];
    if (!strcmp(key, "recovery")) {
      if (fscanf(f, "%u", &g->recovery) != 1) break;
    } else if (!strcmp(key, "ecc")) {
      if (fscanf(f, "%u", &g->ecc) != 1) break;
    } else if (!strcmp(key, "remap_pending"))
      g->pending = 1;
    else if (!strcmp(key, "remap_failed"))
      g->failed = 1;
    else if (!strcmp(key, "slowdown")) {
      if (fscanf(f, "%llx", &g->slowdown) != 1) break;
    } else if (!strcmp(key, "xid")) {
      if (fscanf(f, "%u", &g->xid) != 1) break;
    }
  }
  fclose(f);
  return s;
}

typedef struct device* device_t;
static struct device { int index; } devices[kMaxGpus];
static int index_of(device_t d) { return d ? d->index : -1; }

int nvmlInit_v2(void) { return read_state().no_init ? 9 /* DRIVER_NOT_LOADED */ : 0; }
int nvmlShutdown(void) { return 0; }
const char* nvmlErrorString(int code) {
  switch (code) {
    case 2:
      return "Invalid Argument";
    case 9:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case 15:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}
int nvmlDeviceGetCount_v2(unsigned* count) {
  struct state s = read_state();
  while (s.hang) pause();
  *count = s.count;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, device_t* device) {
  if (i >= read_state().count || i >= kMaxGpus) return 15;
  devices[i].index = (int)i;
  *device = &devices[i];
  return 0;
}
struct field_value {
  unsigned field_id, scope_id;
  long long timestamp, latency_usec;
  int value_type, nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long long ull;
  } value;
};
int nvmlDeviceGetFieldValues(device_t device, int count, struct field_value* values) {
  struct state s = read_state();
  for (int v = 0; v < count; ++v) {
    values[v].nvml_return = 3; /* NOT_SUPPORTED */
    if (values[v].field_id == 230) {
      values[v].nvml_return = 0;
      values[v].value_type = 0;
      values[v].value.ui = s.gpus[index_of(device)].recovery;
    }
  }
  return 0;
}
int nvmlDeviceGetTotalEccErrors(device_t device, int error_type, int counter,
                                unsigned long long* n) {
  *n = (error_type == 1 && counter == 0) ? read_state().gpus[index_of(device)].ecc : 0;
  return 0;
}
int nvmlDeviceGetRemappedRows(device_t device, unsigned* corrected, unsigned* uncorrected,
                              unsigned* pending, unsigned* failed) {
  struct gpu g = read_state().gpus[index_of(device)];
  *corrected = *uncorrected = 0;
  *pending = g.pending;
  *failed = g.failed;
  return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(device_t device, unsigned long long* reasons) {
  *reasons = read_state().gpus[index_of(device)].slowdown;
  return 0;
}
typedef struct event_set* event_set_t;
static struct event_set { int registered; } the_set;
struct event_data {
  device_t device;
  unsigned long long type, data;
  unsigned gpu_instance, compute_instance;
};
int nvmlEventSetCreate(event_set_t* set) {
  *set = &the_set;
  return 0;
}
int nvmlDeviceRegisterEvents(device_t device, unsigned long long types, event_set_t set) {
  (void)device, (void)types;
  set->registered = 1;
  return 0;
}
int nvmlEventSetWait_v2(event_set_t set, struct event_data* data, unsigned ms) {
  (void)ms;
  struct state s = read_state();
  for (unsigned i = 0; set->registered && i < s.count && i < kMaxGpus; ++i) {
    if (s.gpus[i].xid != 0 && delivered[i] != s.gpus[i].xid) {
      delivered[i] = s.gpus[i].xid;
      devices[i].index = (int)i;
      data->device = &devices[i];
      data->type = 0x8;
      data->data = s.gpus[i].xid;
      return 0;
    }
  }
  return 10; /* TIMEOUT */
}
