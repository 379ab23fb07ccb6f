// A real etcd (Debian's etcd-server) for the unit tests: one member on loopback ports of its
// own, its data and log in a directory of its own, killed with the object. The directory is on
// tmpfs where there is one: etcd fsyncs every write, and a disk shared with a build can hold an
// fsync for seconds (etcd_cluster.sh says the same of the clusters).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "etcd/etcd_session.hpp"
#include "net/free_port.hpp"

namespace aml::etcd {

class EtcdServer {
 public:
  // Starts it with these flags besides its addresses; ready() once it answers.
  explicit EtcdServer(const std::string& name, std::vector<std::string> flags = {}) {
    using namespace std::chrono_literals;
    const std::filesystem::path root = std::filesystem::is_directory("/dev/shm")
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    dir_ = root / ("aml-etcd-" + name + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    const int client = *free_tcp_port(), peer = *free_tcp_port();
    endpoint_ = "127.0.0.1:" + std::to_string(client);
    const std::string client_url = "http://" + endpoint_;
    const std::string peer_url = "http://127.0.0.1:" + std::to_string(peer);
    const std::string data = (dir_ / "data").string(), log = (dir_ / "log").string();
    const std::string cluster = "default=" + peer_url;
    std::vector<std::string> args = {"etcd",     "--data-dir",
                                     data,       "--listen-client-urls",
                                     client_url, "--advertise-client-urls",
                                     client_url, "--listen-peer-urls",
                                     peer_url,   "--initial-advertise-peer-urls",
                                     peer_url,   "--initial-cluster",
                                     cluster};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      (void)!freopen(log.c_str(), "w", stderr);
      (void)!freopen(log.c_str(), "a", stdout);
      execvp("etcd", argv.data());
      _exit(127);
    }
    for (int i = 0; i < 100 && !ready_; ++i) {
      ready_ = EtcdSession::start({{endpoint_}, "/probe/", 5s, "", {}}, 100ms).ok();
      if (!ready_) std::this_thread::sleep_for(100ms);
    }
  }
  ~EtcdServer() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  bool ready() const { return ready_; }
  const std::string& endpoint() const { return endpoint_; }

 private:
  pid_t pid_ = -1;
  bool ready_ = false;
  std::string endpoint_;
  std::filesystem::path dir_;
};

}  // namespace aml::etcd
