// Charts as inline SVG text for report.html: line charts (linear or log x),
// stacked horizontal bars and a heatmap, with axes, ticks and a legend.
// Hand-made rather than a charting library: the report is static, needs no
// script, and these four chart kinds are a few hundred lines.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace meridian::sim::svg {

// The report's palette; Color(i) cycles through it.
std::string Color(size_t i);
// Escapes &, <, >, " for text and attributes.
std::string Escape(const std::string& s);
// "1.2k", "3.4M": short numbers for ticks.
std::string Short(double v);

struct Line {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
  std::string color;
  bool step = false;  // draw as a step function
};

struct LineChart {
  std::string title;
  std::string x_label, y_label;
  bool log_x = false;
  double y_min = 0;        // y axis from here (or from the data's minimum, if lower)
  std::vector<Line> lines;
};
std::string Render(const LineChart& c);

// Horizontal bars, one per row, each a stack of named segments.
struct BarChart {
  std::string title;
  std::string value_label;               // "USD"
  std::vector<std::string> rows;         // row labels
  std::vector<std::string> segments;     // segment names (legend), colors by index
  std::vector<std::vector<double>> values;  // [row][segment]
};
std::string Render(const BarChart& c);

struct Heatmap {
  std::string title;
  std::vector<std::string> rows, columns;
  std::vector<std::vector<double>> values;  // [row][column]
  std::string value_label;                  // "GPU-hours"
};
std::string Render(const Heatmap& c);

}  // namespace meridian::sim::svg
