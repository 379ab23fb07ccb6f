#include "report/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

namespace aml {
namespace {

using Phase = GoodputClock::Phase;

// 1,200 px: the page fits a 1,280 px window with its margins and a scroll bar.
constexpr int kWidth = 1200, kLabelWidth = 250, kRowHeight = 22, kTop = 34;
constexpr int kPlotWidth = kWidth - kLabelWidth - 40;
constexpr double kMarkWidth = 15;   // the widest mark, with a pixel between
constexpr double kCharWidth = 6.5;  // a character of the 12 px labels, about

const char* phase_color(Phase phase) {
  switch (phase) {
    case Phase::running:
      return "#2ca02c";
    case Phase::rendezvous:
      return "#9e9e9e";
    case Phase::recovery:
      return "#ff7f0e";
    case Phase::spare:
      return "#9ecae1";
    case Phase::stopping:
      return "#8c564b";
    case Phase::count:
      break;
  }
  return "#000";
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string number(double value, const char* format = "%.1f") {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string utc_text(long long ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

// A row as drawn: one launcher, or quiet ones folded together.
struct DrawnRow {
  const StoryRow* row;
  std::string label;
  int folded = 0;  // launchers it stands for beyond its own
  int last_node = -1;
};

// The time axis: ticks at a round step (1, 2 or 5 times a power of ten) that gives at most
// ten of them, each labelled with the digits its step needs ("5 ms", "0.2 s", "120 s").
std::vector<std::pair<long long, std::string>> time_ticks(long long span_ms) {
  double step = std::pow(10.0, std::floor(std::log10(static_cast<double>(span_ms) / 10)));
  for (double times : {1.0, 2.0, 5.0, 10.0}) {
    if (span_ms / (step * times) <= 10) {
      step *= times;
      break;
    }
  }
  step = std::max(step, 1.0);  // the events' times are whole milliseconds
  std::vector<std::pair<long long, std::string>> ticks;
  for (double at = 0; at <= static_cast<double>(span_ms) + 0.5; at += step) {
    const long long ms = std::llround(at);
    if (span_ms < 1000) {
      ticks.emplace_back(ms, std::to_string(ms) + " ms");
    } else {  // seconds, with the decimals the step needs (a step of 1 s or more: none)
      const char* format = step >= 1000  ? "%.0f"
                           : step >= 100 ? "%.1f"
                           : step >= 10  ? "%.2f"
                                         : "%.3f";
      ticks.emplace_back(ms, number(static_cast<double>(ms) / 1000, format) + " s");
    }
  }
  return ticks;
}

std::string row_label(const StoryRow& row) {
  return "node " + (row.node_rank >= 0 ? std::to_string(row.node_rank) : "?") + " (" + row.host +
         ")" +
         (!row.seen_by.empty() ? " as node 0 saw it"
          : row.ended          ? ""
                               : " no end written");
}

// Two launchers on one host at one node rank (a benched node and the spare that took its seat,
// several launchers on one machine) are told apart by their launcher's pid.
void label_uniquely(std::vector<DrawnRow>& rows) {
  std::map<std::string, int> uses;
  for (const DrawnRow& drawn : rows) ++uses[drawn.label];
  for (DrawnRow& drawn : rows) {
    if (uses[drawn.label] < 2 || drawn.folded > 0) continue;
    const std::string base = drawn.label;
    const std::size_t host_end = base.find(')');
    const std::string who =
        drawn.row->pid > 0 ? "pid " + std::to_string(drawn.row->pid) : drawn.row->source;
    drawn.label = base.substr(0, host_end) + ", " + who + base.substr(host_end);
  }
}

std::vector<DrawnRow> rows_to_draw(const JobStory& story) {
  std::vector<DrawnRow> out;
  const bool fold = story.rows.size() > kRowsUnfolded;
  for (const StoryRow& row : story.rows) {
    const bool quiet = row.marks.empty() && row.ended;
    if (fold && quiet && !out.empty() && out.back().row->marks.empty() && out.back().row->ended) {
      DrawnRow& run = out.back();
      ++run.folded;
      run.last_node = row.node_rank;
      run.label = "nodes " + std::to_string(run.row->node_rank) + "-" +
                  std::to_string(run.last_node) + " (" + std::to_string(run.folded + 1) +
                  "): nothing to note";
      continue;
    }
    out.push_back({&row, row_label(row), 0, row.node_rank});
  }
  label_uniquely(out);
  return out;
}

const char* mark_shape(const std::string& kind) {
  if (kind == "failure") return "circle r=\"7\" fill=\"#d62728\" stroke=\"#fff\"";
  if (kind == "benched") return "rect x=\"-6\" y=\"-6\" width=\"12\" height=\"12\" fill=\"#111\"";
  if (kind == "spare") return "circle r=\"6\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"";
  if (kind == "spare_taken") return "path d=\"M-7 6 L0 -7 L7 6 Z\" fill=\"#1f77b4\"";
  if (kind == "stop") return "rect x=\"-5\" y=\"-7\" width=\"10\" height=\"14\" fill=\"#8b0000\"";
  if (kind == "notice") return "path d=\"M0 -7 L7 0 L0 7 L-7 0 Z\" fill=\"#9467bd\"";
  if (kind == "hang") return "circle r=\"7\" fill=\"#bcbd22\" stroke=\"#333\"";
  if (kind == "lost") return "circle r=\"6\" fill=\"#fff\" stroke=\"#d62728\" stroke-width=\"3\"";
  if (kind == "sitting_out")
    return "rect x=\"-6\" y=\"-6\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"#111\" "
           "stroke-width=\"2\"";
  if (kind == "returned") return "path d=\"M-6 -7 L7 0 L-6 7 Z\" fill=\"#2ca02c\"";
  return "path d=\"M-6 -6 L6 6 M6 -6 L-6 6\" stroke=\"#000\" stroke-width=\"3\"";  // killed
}

}  // namespace

std::string report_html(const JobStory& story) {
  const long long span = std::max<long long>(story.to_ms - story.from_ms, 1);
  auto x = [&](long long ms) {
    return kLabelWidth +
           static_cast<double>(ms - story.from_ms) / static_cast<double>(span) * kPlotWidth;
  };
  GoodputClock::Seconds total{};
  for (const StoryRow& row : story.rows) {
    for (std::size_t i = 0; i < GoodputClock::kPhases; ++i) total[i] += row.seconds[i];
  }
  double node_seconds = 0;
  for (double s : total) node_seconds += s;
  const double trained = total[static_cast<std::size_t>(Phase::running)];

  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>aml-launch report: " +
      escape(story.run_id) +
      "</title>\n<style>body{font-family:sans-serif;margin:16px;color:#222}"
      ".figures{display:flex;flex-wrap:wrap;gap:6px 10px;margin:8px 0}"
      ".figure{border:1px solid #ddd;border-radius:4px;padding:4px 8px}.figure b{font-size:18px;"
      "display:block}.legend span{display:inline-block;margin-right:14px}"
      ".legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}"
      "svg text{font-size:12px}</style></head><body>\n";
  html += "<h2>Job " + escape(story.run_id) + "</h2>\n<div class=\"figures\" id=\"figures\">";
  auto figure = [&html](const std::string& name, const std::string& value) {
    html += "<span class=\"figure\"><b>" + value + "</b>" + name + "</span>";
  };
  figure("from", utc_text(story.from_ms));
  figure("wall time", number(static_cast<double>(span) / 1000) + " s");
  figure("launchers", std::to_string(story.rows.size()));
  figure("rounds", std::to_string(story.rounds));
  figure("restarts", std::to_string(story.restarts.size()));
  figure("failures", std::to_string(story.failures));
  figure("nodes benched", std::to_string(story.benched));
  figure("spares taken", std::to_string(story.spares_taken));
  figure("goodput: node time the workers ran (trained_share)",
         number(node_seconds > 0 ? 100 * trained / node_seconds : 0, "%.0f") + " %");
  for (std::size_t i = 0; i < GoodputClock::kPhases; ++i) {
    figure(std::string(GoodputClock::name(static_cast<Phase>(i))) + ", node seconds",
           number(total[i]));
  }
  html += "</div>\n<p class=\"legend\">";
  for (std::size_t i = 0; i < GoodputClock::kPhases; ++i) {
    html += "<span><i style=\"background:" + std::string(phase_color(static_cast<Phase>(i))) +
            "\"></i>" + GoodputClock::name(static_cast<Phase>(i)) + "</span>";
  }
  html +=
      "<span>&#9679; failure &#9632; benched &#9651; spare taken &#9675; spare &#9670; "
      "notice &#9646; stop &#9711; node lost &#9655; node back &#9633; sits out "
      "benched</span></p>\n";

  const std::vector<DrawnRow> rows = rows_to_draw(story);
  const int height = kTop + static_cast<int>(rows.size()) * kRowHeight + 30;
  html += "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
          std::to_string(kWidth) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
          std::to_string(kWidth) + " " + std::to_string(height) +
          "\" style=\"max-width:100%;height:auto\">\n";
  for (const auto& [ms, label] : time_ticks(span)) {
    const double at = x(story.from_ms + ms);
    html += "<line class=\"tick\" x1=\"" + number(at) + "\" y1=\"" + std::to_string(kTop - 6) +
            "\" x2=\"" + number(at) + "\" y2=\"" + std::to_string(height - 24) +
            "\" stroke=\"#eee\"/><text class=\"tick\" x=\"" + number(at) + "\" y=\"" +
            std::to_string(kTop - 12) + "\" text-anchor=\"middle\">" + label + "</text>\n";
  }
  int y = kTop;
  for (const DrawnRow& drawn : rows) {
    const StoryRow& row = *drawn.row;
    html += "<g class=\"row\" data-node=\"" + std::to_string(row.node_rank) + "\" data-folded=\"" +
            std::to_string(drawn.folded) + "\"><text x=\"4\" y=\"" +
            std::to_string(y + kRowHeight / 2 + 4) + "\">" + escape(drawn.label) + "</text>\n";
    for (const StoryBar& bar : row.bars) {
      const double left = x(bar.from_ms);
      const double width = std::max(1.0, x(bar.to_ms) - left);
      html += "<rect class=\"bar " + std::string(GoodputClock::name(bar.phase)) + "\" x=\"" +
              number(left) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" + number(width) +
              "\" height=\"" + std::to_string(kRowHeight - 6) + "\" fill=\"" +
              phase_color(bar.phase) + "\"><title>" + GoodputClock::name(bar.phase) + ", round " +
              std::to_string(bar.round) + ": " +
              number(static_cast<double>(bar.to_ms - bar.from_ms) / 1000, "%.2f") +
              " s</title></rect>\n";
    }
    // Marks a moment apart (a failure, then the bench it brings) side by side, not on top; the
    // words of marks whose words would run into the next mark said once, after the last.
    std::vector<double> xs;
    for (const StoryMark& mark : row.marks)
      xs.push_back(std::max(x(mark.at_ms), xs.empty() ? -1e9 : xs.back() + kMarkWidth));
    std::string words;
    for (std::size_t i = 0; i < row.marks.size(); ++i) {
      const StoryMark& mark = row.marks[i];
      html += "<g class=\"mark " + mark.kind + "\" transform=\"translate(" + number(xs[i]) + "," +
              std::to_string(y + kRowHeight / 2) + ")\"><title>" + escape(mark.label) + " at " +
              utc_text(mark.at_ms) + "</title><" + mark_shape(mark.kind) + "/></g>\n";
      if (mark.kind == "failure" || mark.kind == "benched" || mark.kind == "spare_taken" ||
          mark.kind == "lost") {
        words += (words.empty() ? "" : "; ") + mark.label;
      }
      const double words_end = xs[i] + 9 + kCharWidth * static_cast<double>(words.size());
      if (words.empty() || (i + 1 < row.marks.size() && xs[i + 1] < words_end)) continue;
      html += "<text class=\"mark-words\" x=\"" + number(xs[i] + 9) + "\" y=\"" +
              std::to_string(y + kRowHeight / 2 + 4) + "\">" + escape(words) + "</text>\n";
      words.clear();
    }
    html += "</g>\n";
    y += kRowHeight;
  }
  for (long long at : story.restarts) {
    html += "<line class=\"restart\" x1=\"" + number(x(at)) + "\" y1=\"" + std::to_string(kTop) +
            "\" x2=\"" + number(x(at)) + "\" y2=\"" + std::to_string(y) +
            "\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"><title>restart</title></line>\n";
  }
  html += "</svg>\n";
  if (!story.skipped.empty()) {
    html += "<p>Lines left out: " + std::to_string(story.skipped.size()) + " (" +
            escape(story.skipped.front()) + (story.skipped.size() > 1 ? ", ..." : "") + ")</p>\n";
  }
  html += "</body></html>\n";
  return html;
}

}  // namespace aml
