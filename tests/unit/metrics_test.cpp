// --metrics-port's parts: Prometheus's text format, the board fed by events, the answers to
// requests, and the server against idle and partial clients.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "metrics/metrics_board.hpp"
#include "metrics/metrics_server.hpp"
#include "metrics/prometheus_text.hpp"
#include "util/unique_fd.hpp"

namespace aml {
namespace {

TEST(PrometheusText, EscapesLabelValuesAndWritesHistograms) {
  PrometheusText out;
  out.family("x_total", "counter", "help\nwith a newline");
  out.sample("x_total", 3, {{"host", "a\"b\\c\nd"}});
  const std::vector<double> bounds = {0.5, 1};
  const std::vector<double> values = {0.2, 0.7, 4};
  out.histogram("d_seconds", "durations", bounds, values);
  EXPECT_EQ(out.text(),
            "# HELP x_total help with a newline\n# TYPE x_total counter\n"
            "x_total{host=\"a\\\"b\\\\c\\nd\"} 3\n"
            "# HELP d_seconds durations\n# TYPE d_seconds histogram\n"
            "d_seconds_bucket{le=\"0.5\"} 1\nd_seconds_bucket{le=\"1\"} 2\n"
            "d_seconds_bucket{le=\"+Inf\"} 3\nd_seconds_sum 4.9\nd_seconds_count 3\n");
  EXPECT_EQ(prometheus_number(0.25), "0.25");
  EXPECT_EQ(prometheus_number(1e300 * 1e300), "+Inf");
}

TEST(MetricsBoard, FollowsTheEventsOfARestartedRound) {
  MetricsBoard board({"h", "run-1", "9.9", 2});
  const auto t = std::chrono::steady_clock::now();
  auto event = [&](std::string_view kind, nlohmann::ordered_json details, int rank = -1,
                   int round = 0) {
    board.on_event({kind, details, rank, round, 0, t});
  };
  event("launch", {{"nnodes", 1}});
  event("round_started", {{"workers", 1}, {"restarts_used", 0}, {"max_restarts", 2}});
  event("worker_started", {{"local_rank", 0}, {"pid", getpid()}}, 0);
  std::string page = board.render();
  EXPECT_NE(page.find("aml_launch_workers_running 1\n"), std::string::npos) << page;
  EXPECT_NE(page.find("aml_launch_worker_cpu_seconds_total{rank=\"0\",local_rank=\"0\"}"),
            std::string::npos);
  EXPECT_NE(page.find("aml_launch_state{state=\"running\"} 1\n"), std::string::npos);
  event("worker_exited", {{"pid", getpid()}, {"exit_code", 3}, {"signal_name", nullptr}}, 0);
  event("failure", nlohmann::ordered_json::object(), 0);
  event("round_started", {{"workers", 1}, {"restarts_used", 1}, {"max_restarts", 2}}, -1, 1);
  page = board.render();
  // The job's figures carry the job's run id (max by (run_id) counts a restart once).
  EXPECT_NE(page.find("aml_launch_restarts_total{run_id=\"run-1\"} 1\n"), std::string::npos)
      << page;
  EXPECT_NE(page.find("aml_launch_restarts_left{run_id=\"run-1\"} 1\n"), std::string::npos);
  EXPECT_NE(page.find("aml_launch_worker_exits_total{status=\"3\"} 1\n"), std::string::npos);
  EXPECT_NE(page.find("aml_launch_round{run_id=\"run-1\"} 1\n"), std::string::npos);
  EXPECT_NE(page.find("aml_launch_recovery_duration_seconds_count 1\n"), std::string::npos);
  EXPECT_NE(page.find("aml_launch_workers_running 0\n"), std::string::npos);
  EXPECT_NE(page.find("aml_launch_info{version=\"9.9\",host=\"h\",run_id=\"run-1\"} 1\n"),
            std::string::npos);
  EXPECT_NE(page.find("aml_launch_nodes_returned_total 0\n"), std::string::npos);
  event("node_joined", {{"node_rank", 1}}, -1, 1);
  event("node_returned", {{"node_rank", 2}, {"rounds_away", 1}}, -1, 1);
  EXPECT_NE(board.render().find("aml_launch_nodes_returned_total 1\n"), std::string::npos);
}

TEST(MetricsResponse, AnswersMetricsAndRefusesTheRest) {
  auto render = [] { return std::string("m 1\n"); };
  EXPECT_EQ(metrics_response("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", render),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: 4\r\nConnection: close\r\n\r\nm 1\n");
  EXPECT_EQ(metrics_response("GET /metrics?x=1 HTTP/1.0\r\n\r\n", render).substr(0, 15),
            "HTTP/1.1 200 OK");
  EXPECT_EQ(metrics_response("HEAD /metrics HTTP/1.1\r\n\r\n", render).find("m 1"),
            std::string::npos);
  EXPECT_EQ(metrics_response("GET /other HTTP/1.1\r\n\r\n", render).substr(0, 12), "HTTP/1.1 404");
  EXPECT_EQ(metrics_response("POST /metrics HTTP/1.1\r\n\r\n", render).substr(0, 12),
            "HTTP/1.1 405");
  EXPECT_EQ(metrics_response("garbage\r\n\r\n", render).substr(0, 12), "HTTP/1.1 400");
}

UniqueFd connect_to(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return UniqueFd();
  timeval limit{5, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  return fd;
}

std::string scrape(int port) {
  UniqueFd fd = connect_to(port);
  const std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
  if (!fd || send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) < 0) return "";
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd.get(), buffer, sizeof buffer, 0)) > 0;)
    answer.append(buffer, static_cast<std::size_t>(n));
  return answer;
}

TEST(MetricsServer, IdleAndPartialClientsDoNotKeepAScrapeOut) {
  auto server = MetricsServer::start("127.0.0.1", 0, [] { return std::string("up 1\n"); });
  ASSERT_TRUE(server) << server.error().message();
  (*server)->serve();
  (*server)->serve();  // again: nothing
  const int port = (*server)->port();
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");
  // Twice the connections it holds, silent or half a request: each scrape is still answered.
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 2 * MetricsServer::kMaxConnections; ++i) {
    idle.push_back(connect_to(port));
    if (i % 2 == 1) (void)!send(idle.back().get(), "GET /met", 8, MSG_NOSIGNAL);
  }
  for (int i = 0; i < 3; ++i) {
    const std::string answer = scrape(port);
    EXPECT_NE(answer.find("\r\n\r\nup 1\n"), std::string::npos) << "scrape " << i << ": " << answer;
  }
  // A request larger than it takes is refused, not read forever.
  UniqueFd big = connect_to(port);
  const std::string huge = "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a');
  (void)!send(big.get(), huge.data(), huge.size(), MSG_NOSIGNAL);
  char buffer[64] = {};
  ASSERT_GT(recv(big.get(), buffer, sizeof buffer - 1, 0), 0);
  EXPECT_EQ(std::string(buffer).substr(0, 12), "HTTP/1.1 431");
}

TEST(MetricsServer, ABusyPortIsAClearError) {
  auto first = MetricsServer::start("127.0.0.1", 0, [] { return std::string(); });
  ASSERT_TRUE(first);
  auto second = MetricsServer::start("127.0.0.1", (*first)->port(), [] { return std::string(); });
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message().find("--metrics-port"), std::string::npos);
  EXPECT_NE(second.error().message().find("Address already in use"), std::string::npos)
      << second.error().message();
  auto bad = MetricsServer::start("not-an-address", 0, [] { return std::string(); });
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("not-an-address"), std::string::npos);
}

}  // namespace
}  // namespace aml
