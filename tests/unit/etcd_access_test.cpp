// --rdzv-conf (etcd/etcd_access.hpp): torchrun's spellings, TLS implied where asked for, and a
// clear error for each malformed, contradictory or unsafe setting, never showing a password.
#include "etcd/etcd_access.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace aml::etcd {
namespace {

class EtcdAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("aml-access-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    for (const char* name : {"ca.pem", "c.pem", "c.key"}) write(name, "-----BEGIN-----\n");
    write("password", "s3cret-pass\n");
    write("empty", "");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  std::string error_of(const std::string& conf, const Env& env = {}, bool https = false) const {
    auto access = parse_access("--rdzv-conf", conf, https, env);
    EXPECT_FALSE(access.ok()) << conf;
    return access.ok() ? "" : access.error().message();
  }
  std::filesystem::path dir_;
};

TEST_F(EtcdAccessTest, NothingIsPlainHttpWithoutAUser) {
  auto access = parse_access("--rdzv-conf", "", false, {});
  ASSERT_TRUE(access.ok());
  EXPECT_FALSE(access->tls);
  EXPECT_EQ(access->describe(), "plain HTTP");
}

TEST_F(EtcdAccessTest, BothOfTorchrunsSpellingsAndTlsImplied) {
  auto legacy = parse_access(
      "--rdzv-conf", "cacert=" + at("ca.pem") + ",cert=" + at("c.pem") + ",key=" + at("c.key"),
      false, {});
  ASSERT_TRUE(legacy.ok()) << legacy.error().message();
  EXPECT_TRUE(legacy->tls);
  EXPECT_EQ(legacy->cert_file, at("c.pem"));
  auto v2 = parse_access("PET_RDZV_CONF",
                         "protocol=https,ca_cert=" + at("ca.pem") + ",ssl_cert=" + at("c.pem") +
                             ",ssl_cert_key=" + at("c.key") + ",timeout=900",
                         false, {});
  // torchrun's own timing keys are not taken silently.
  ASSERT_FALSE(v2.ok());
  EXPECT_NE(v2.error().message().find("timeout"), std::string::npos);
  auto https = parse_access("--rdzv-conf", "", true, {});
  ASSERT_TRUE(https.ok());
  EXPECT_TRUE(https->tls);
  EXPECT_EQ(https->describe(), "TLS (CA the system's)");
}

TEST_F(EtcdAccessTest, TheTransportIsGrpcWhereItCanBeUnlessSaidOtherwise) {
  EXPECT_EQ(parse_access("--rdzv-conf", "", false, {})->transport, Transport::automatic);
  EXPECT_EQ(parse_access("--rdzv-conf", "transport=grpc", false, {})->transport, Transport::grpc);
  EXPECT_EQ(parse_access("--rdzv-conf", "transport=gateway", false, {})->transport,
            Transport::gateway);
  EXPECT_EQ(parse_access("--rdzv-conf", "transport=auto", false, {})->transport,
            Transport::automatic);
  const std::string wrong = error_of("transport=http3");
  EXPECT_NE(wrong.find("transport=http3"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("grpc"), std::string::npos) << wrong;
}

TEST_F(EtcdAccessTest, APasswordFromItsFileOrTheVariableNeverFromTheCommandLine) {
  auto from_file =
      parse_access("--rdzv-conf", "user=trainer,password_file=" + at("password"), false, {});
  ASSERT_TRUE(from_file.ok()) << from_file.error().message();
  EXPECT_EQ(from_file->password, "s3cret-pass");  // its newline dropped
  EXPECT_EQ(from_file->describe(), "plain HTTP, etcd user trainer");
  auto from_env = parse_access("--rdzv-conf", "user=trainer", false,
                               {{std::string(kPasswordVariable), "pw-from-env"}});
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->password, "pw-from-env");
  const std::string said = error_of("user=trainer,password=hunter2-secret");
  EXPECT_EQ(said.find("hunter2-secret"), std::string::npos) << said;
  EXPECT_NE(said.find("password_file=FILE"), std::string::npos) << said;
}

TEST_F(EtcdAccessTest, MalformedContradictoryAndMissingSettingsAreNamed) {
  EXPECT_NE(error_of("cacert").find("key=value"), std::string::npos);
  EXPECT_NE(error_of("=x").find("key=value"), std::string::npos);
  EXPECT_NE(error_of("colour=blue").find("colour"), std::string::npos);
  EXPECT_NE(error_of("protocol=ftp").find("http or https"), std::string::npos);
  EXPECT_NE(error_of("protocol=http,cacert=" + at("ca.pem")).find("need https"), std::string::npos);
  EXPECT_NE(error_of("protocol=http", {}, true).find("need https"), std::string::npos);
  EXPECT_NE(error_of("cert=" + at("c.pem")).find("together"), std::string::npos);
  EXPECT_NE(error_of("key=" + at("c.key")).find("together"), std::string::npos);
  EXPECT_NE(error_of("cacert=" + at("absent.pem")).find("absent.pem"), std::string::npos);
  EXPECT_NE(error_of("user=trainer").find("password"), std::string::npos);
  EXPECT_NE(error_of("user=trainer,password_file=" + at("empty")).find("empty"), std::string::npos);
  EXPECT_NE(error_of("password_file=" + at("password")).find("user=NAME"), std::string::npos);
}

}  // namespace
}  // namespace aml::etcd
