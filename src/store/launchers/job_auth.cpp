#include "store/launchers/job_auth.hpp"

#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "store/launchers/handshake.hpp"

namespace aml {
namespace {

constexpr std::size_t kMaxSecretFileBytes = 64 * 1024;

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// A folder others may write to, without the sticky bit, lets them replace the secret's file.
std::string open_folder(const std::string& file) {
  std::string copy = file;
  const std::string folder = dirname(copy.data());
  struct stat st {};
  if (stat(folder.c_str(), &st) != 0) return "";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0 || (st.st_mode & S_ISVTX) != 0) return "";
  return "its folder " + folder + " (mode " + octal_mode(st.st_mode) +
         ") can be written by other users, who could put a secret of their own in its place: "
         "chmod go-w " +
         folder;
}

// What makes the file no secret on this machine (as ssh refuses a private key that others may
// read): the file itself open to the group or others (the mode of the file read, a Kubernetes
// Secret's link followed), or a folder on its way that others may write. "" when neither.
std::string exposure_of(int fd, const std::string& path) {
  struct stat st {};
  if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0) {
    return "the job's secret file " + path + " (mode " + octal_mode(st.st_mode) +
           ") can be read by other users of this machine, who could then join or stop the "
           "job: chmod 600 " +
           path + " (a Kubernetes Secret volume: defaultMode: 0400)";
  }
  std::string folder = open_folder(path);
  if (folder.empty()) {
    char real[PATH_MAX];
    if (realpath(path.c_str(), real) != nullptr && path != real) folder = open_folder(real);
  }
  return folder.empty() ? "" : "the job's secret file " + path + ": " + folder;
}

struct SecretFile {
  std::string secret;
  std::string exposure;  // "" where only its owner can read or replace it
};

// The file's bytes less one line ending (`echo secret > file`, a Kubernetes Secret's own), and
// whether others can read or replace it (checked on the file read, not on its name again).
Result<SecretFile> read_secret_file(const std::string& path, const std::string& variable) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return invalid(variable, path, "a readable file holding the job's secret");
  SecretFile file;
  file.exposure = exposure_of(fd, path);
  std::string secret;
  char chunk[4096];
  for (;;) {
    const ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    secret.append(chunk, static_cast<std::size_t>(got));
    if (secret.size() > kMaxSecretFileBytes) break;  // /dev/zero, a wrong file: not read on
  }
  close(fd);
  if (secret.size() > kMaxSecretFileBytes) {
    return invalid(variable, path, "a file holding the job's secret (at most 64 KiB)");
  }
  if (secret.ends_with("\r\n")) {
    secret.resize(secret.size() - 2);
  } else if (secret.ends_with("\n")) {
    secret.pop_back();
  }
  file.secret = std::move(secret);
  return file;
}

Result<std::string> long_enough(std::string secret, const std::string& variable,
                                const std::string& shown) {
  if (secret.size() < kMinSecretBytes) {
    return invalid(variable, shown,
                   "a job secret of at least " + std::to_string(kMinSecretBytes) +
                       " bytes (e.g. head -c 32 /dev/urandom | base64 > FILE)");
  }
  return secret;
}

}  // namespace

Result<JobAuth> JobAuth::resolve(const std::string& secret_file, const Env& env,
                                 const std::function<Result<bool>()>& munge_works) {
  JobAuth auth;
  const std::string* file_variable = find(env, kSecretFileVariable);
  const std::string* value = find(env, kSecretVariable);
  if (!secret_file.empty() || (file_variable && !file_variable->empty())) {
    const bool flag = !secret_file.empty();
    const std::string path = flag ? secret_file : *file_variable;
    const std::string name = flag ? "--rdzv-secret-file" : std::string(kSecretFileVariable);
    auto file = read_secret_file(path, name);
    if (!file) return file.error();
    auto checked = long_enough(std::move(file->secret), name, path);
    if (!checked) return checked.error();
    auth.source_ = Source::secret_file;
    auth.where_ = path;
    auth.exposure_ = std::move(file->exposure);
    auth.secret_ = std::move(*checked);
    return auth;
  }
  if (value && !value->empty()) {
    auto checked = long_enough(*value, std::string(kSecretVariable), "(not shown)");
    if (!checked) return checked.error();
    auth.source_ = Source::secret_environment;
    auth.where_ = kSecretVariable;
    auth.secret_ = std::move(*checked);
    return auth;
  }
  if (has(env, "SLURM_JOB_ID") && munge_works) {
    auto works = munge_works();
    if (works && *works) {
      auth.source_ = Source::munge;
      auth.where_ = "Slurm's munged";
      return auth;
    }
    auth.where_ = works ? std::string("munge: no") : works.error().message();
  }
  return auth;
}

std::string JobAuth::mode() const {
  switch (source_) {
    case Source::secret_file:
      return "secret-file";
    case Source::secret_environment:
      return "secret-env";
    case Source::munge:
      return "munge";
    case Source::none:
      break;
  }
  return "none";
}

std::string JobAuth::description() const {
  switch (source_) {
    case Source::secret_file:
      return "the job's secret from the file " + where_ +
             " (mutual proof; it never crosses the wire)";
    case Source::secret_environment:
      return "the job's secret from " + where_ + " (mutual proof; it never crosses the wire)";
    case Source::munge:
      return "munge credentials (Slurm): only the job's user, naming this job";
    case Source::none:
      break;
  }
  // Under Slurm, why munge could not stand in (no libmunge in the image, no munged socket).
  const std::string munge =
      where_.empty() ? "" : " (under Slurm, munge could not be used: " + where_ + ")";
  return "no secret" + munge +
         ": anyone who reaches the store's address and knows the run id can join or "
         "stop this job; give every node the same --rdzv-secret-file FILE (or "
         "AML_LAUNCH_SECRET_FILE, AML_LAUNCH_SECRET) to admit only the job";
}

store::AuthKind JobAuth::kind() const {
  switch (source_) {
    case Source::secret_file:
    case Source::secret_environment:
      return store::AuthKind::key;
    case Source::munge:
      return store::AuthKind::munge;
    case Source::none:
      break;
  }
  return store::AuthKind::none;
}

store::ServerAuth JobAuth::server_auth(const std::string& job) const {
  store::ServerAuth server;
  server.kind = kind();
  if (server.kind == store::AuthKind::key) {
    server.launcher_key = store::role_key(secret_, job, store::Role::launcher);
    server.worker_key = store::role_key(secret_, job, store::Role::worker);
  }
  return server;
}

StoreCredentials JobAuth::launcher_credentials(const std::string& job,
                                               const std::string& member) const {
  StoreCredentials credentials;
  credentials.kind = static_cast<StoreCredentials::Kind>(kind());
  credentials.launcher = true;
  credentials.member = member;
  if (kind() == store::AuthKind::key)
    credentials.key = store::role_key(secret_, job, store::Role::launcher);
  return credentials;
}

StoreCredentials JobAuth::worker_credentials(const std::string& job) const {
  StoreCredentials credentials;
  credentials.kind = static_cast<StoreCredentials::Kind>(kind());
  if (kind() == store::AuthKind::key)
    credentials.key = store::role_key(secret_, job, store::Role::worker);
  return credentials;
}

bool require_auth_from(const Env& env) {
  const std::string* value = find(env, kRequireAuthVariable);
  return value && (*value == "1" || *value == "true" || *value == "yes");
}

}  // namespace aml
