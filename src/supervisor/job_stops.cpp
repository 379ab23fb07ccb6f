#include "supervisor/job_stops.hpp"

namespace aml {

void add_job_stops(sigset_t& mask) {
  for (int sig : kJobStops) sigaddset(&mask, sig);
}

void remove_job_stops(sigset_t& mask) {
  for (int sig : kJobStops) sigdelset(&mask, sig);
}

void hold_job_stops(sigset_t* before) {
  sigset_t stops;
  sigemptyset(&stops);
  add_job_stops(stops);
  pthread_sigmask(SIG_BLOCK, &stops, before);
}

}  // namespace aml
