#include "report/report_html.hpp"

#include <cstdio>
#include <ctime>

namespace aml {
namespace {

using Phase = GoodputClock::Phase;

constexpr int kWidth = 1400, kLabelWidth = 250, kRowHeight = 22, kTop = 34;
constexpr int kPlotWidth = kWidth - kLabelWidth - 40;

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

std::string row_label(const StoryRow& row) {
  return "node " + (row.node_rank >= 0 ? std::to_string(row.node_rank) : "?") + " (" + row.host +
         ")" +
         (!row.seen_by.empty() ? " as node 0 saw it"
          : row.ended          ? ""
                               : " no end written");
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
  figure("goodput: node time the workers ran",
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
          std::to_string(kWidth) + "\" height=\"" + std::to_string(height) + "\">\n";
  // The time axis: a tick every tenth of the span.
  for (int tick = 0; tick <= 10; ++tick) {
    const double at = kLabelWidth + kPlotWidth * tick / 10.0;
    html += "<line x1=\"" + number(at) + "\" y1=\"" + std::to_string(kTop - 6) + "\" x2=\"" +
            number(at) + "\" y2=\"" + std::to_string(height - 24) +
            "\" stroke=\"#eee\"/><text x=\"" + number(at) + "\" y=\"" + std::to_string(kTop - 12) +
            "\" text-anchor=\"middle\">" + number(static_cast<double>(span) * tick / 10000.0) +
            " s</text>\n";
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
    for (const StoryMark& mark : row.marks) {
      const double at = x(mark.at_ms);
      html += "<g class=\"mark " + mark.kind + "\" transform=\"translate(" + number(at) + "," +
              std::to_string(y + kRowHeight / 2) + ")\"><title>" + escape(mark.label) + " at " +
              utc_text(mark.at_ms) + "</title><" + mark_shape(mark.kind) + "/>";
      if (mark.kind == "failure" || mark.kind == "benched" || mark.kind == "spare_taken" ||
          mark.kind == "lost") {
        html += "<text x=\"9\" y=\"4\">" + escape(mark.label) + "</text>";
      }
      html += "</g>\n";
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
