#include "sim/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace meridian::sim::svg {

namespace {

constexpr double kW = 720, kH = 300, kLeft = 70, kRight = 20, kTop = 34, kBottom = 48;

std::string F(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string F2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string Text(double x, double y, const std::string& s, const std::string& extra = "") {
  return "<text x=\"" + F(x) + "\" y=\"" + F(y) + "\"" + extra + ">" + Escape(s) + "</text>";
}

std::string Open(double w, double h, const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + F(w) + " " + F(h) +
         "\" width=\"" + F(w) + "\" height=\"" + F(h) +
         "\" class=\"chart\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#333\">" +
         Text(kLeft, 18, title, " font-size=\"13\" font-weight=\"600\"");
}

// About five round tick values covering [lo, hi].
std::vector<double> Ticks(double lo, double hi) {
  if (hi <= lo) hi = lo + 1;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
  return t;
}

std::string Legend(const std::vector<std::pair<std::string, std::string>>& items, double y) {
  std::string out;
  double x = kLeft;
  for (const auto& [name, color] : items) {
    out += "<rect x=\"" + F(x) + "\" y=\"" + F(y - 9) + "\" width=\"10\" height=\"10\" fill=\"" +
           color + "\"/>" + Text(x + 14, y, name, "");
    x += 24 + 7.0 * static_cast<double>(name.size());
  }
  return out;
}

}  // namespace

std::string Color(size_t i) {
  static const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Short(double v) {
  const double a = std::fabs(v);
  char buf[32];
  if (a >= 1e9) std::snprintf(buf, sizeof buf, "%.3gG", v / 1e9);
  else if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
  else if (a >= 1e3) std::snprintf(buf, sizeof buf, "%.3gk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Render(const LineChart& c) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = c.y_min, y1 = -INFINITY;
  for (const Line& l : c.lines) {
    for (auto [x, y] : l.points) {
      if (c.log_x && x <= 0) continue;
      x0 = std::min(x0, c.log_x ? std::log10(x) : x);
      x1 = std::max(x1, c.log_x ? std::log10(x) : x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  std::string out = Open(kW, kH, c.title);
  if (!(x1 >= x0)) return out + Text(kLeft, kH / 2, "no data") + "</svg>";
  if (x1 == x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return kTop + ph - (y - y0) / (y1 - y0) * ph; };
  for (double t : Ticks(y0, y1)) {
    out += "<line x1=\"" + F(kLeft) + "\" x2=\"" + F(kLeft + pw) + "\" y1=\"" + F(py(t)) +
           "\" y2=\"" + F(py(t)) + "\" stroke=\"#eee\"/>" +
           Text(kLeft - 6, py(t) + 4, Short(t), " text-anchor=\"end\"");
  }
  std::vector<double> xt;
  if (c.log_x) {
    for (double e = std::ceil(x0); e <= x1; ++e) xt.push_back(e);
  } else {
    xt = Ticks(x0, x1);
  }
  for (double t : xt) {
    out += Text(px(t), kTop + ph + 16, Short(c.log_x ? std::pow(10, t) : t), " text-anchor=\"middle\"");
  }
  out += Text(kLeft + pw / 2, kH - 22, c.x_label, " text-anchor=\"middle\"");
  out += Text(14, kTop + ph / 2, c.y_label,
              " text-anchor=\"middle\" transform=\"rotate(-90 14 " + F(kTop + ph / 2) + ")\"");
  out += "<rect x=\"" + F(kLeft) + "\" y=\"" + F(kTop) + "\" width=\"" + F(pw) + "\" height=\"" +
         F(ph) + "\" fill=\"none\" stroke=\"#ccc\"/>";
  std::vector<std::pair<std::string, std::string>> legend;
  for (const Line& l : c.lines) {
    std::string d;
    double prev_y = 0;
    bool first = true;
    for (auto [x, y] : l.points) {
      if (c.log_x && x <= 0) continue;
      const double sx = px(c.log_x ? std::log10(x) : x), sy = py(y);
      if (first) {
        d += "M" + F(sx) + " " + F(sy);
      } else {
        if (l.step) d += " L" + F(sx) + " " + F(prev_y);
        d += " L" + F(sx) + " " + F(sy);
      }
      prev_y = sy;
      first = false;
    }
    out += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + l.color + "\" stroke-width=\"1.6\"/>";
    legend.push_back({l.name, l.color});
  }
  return out + Legend(legend, kH - 6) + "</svg>";
}

std::string Render(const BarChart& c) {
  const double row_h = 22, h = kTop + row_h * static_cast<double>(c.rows.size()) + kBottom;
  const double left = 150, pw = kW - left - kRight - 60;
  double max = 0;
  for (const auto& r : c.values) {
    double sum = 0;
    for (double v : r) sum += std::max(0.0, v);
    max = std::max(max, sum);
  }
  if (max <= 0) max = 1;
  std::string out = Open(kW, h, c.title);
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const double y = kTop + row_h * static_cast<double>(i);
    out += Text(left - 6, y + 15, c.rows[i], " text-anchor=\"end\"");
    double x = left, total = 0;
    for (size_t k = 0; k < c.values[i].size(); ++k) {
      const double v = std::max(0.0, c.values[i][k]);
      const double w = v / max * pw;
      if (w > 0) {
        out += "<rect x=\"" + F(x) + "\" y=\"" + F(y + 3) + "\" width=\"" + F(w) +
               "\" height=\"" + F(row_h - 6) + "\" fill=\"" + Color(k) + "\"><title>" +
               Escape(c.segments[k] + ": " + Short(v)) + "</title></rect>";
      }
      x += w;
      total += v;
    }
    out += Text(x + 4, y + 15, Short(total) + " " + c.value_label);
  }
  std::vector<std::pair<std::string, std::string>> legend;
  if (c.segments.size() > 1) {
    for (size_t k = 0; k < c.segments.size(); ++k) legend.push_back({c.segments[k], Color(k)});
  }
  return out + Legend(legend, h - 12) + "</svg>";
}

std::string Render(const Heatmap& c) {
  const double cell_w = 22, cell_h = 18, left = 170;
  const double w = left + cell_w * static_cast<double>(c.columns.size()) + kRight;
  const double h = kTop + 16 + cell_h * static_cast<double>(c.rows.size()) + 28;
  double max = 0;
  for (const auto& r : c.values) {
    for (double v : r) max = std::max(max, v);
  }
  std::string out = Open(w, h, c.title);
  for (size_t j = 0; j < c.columns.size(); ++j) {
    out += Text(left + cell_w * (static_cast<double>(j) + 0.5), kTop + 10, c.columns[j],
                " text-anchor=\"middle\" font-size=\"9\"");
  }
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const double y = kTop + 16 + cell_h * static_cast<double>(i);
    out += Text(left - 6, y + 13, c.rows[i], " text-anchor=\"end\"");
    for (size_t j = 0; j < c.values[i].size(); ++j) {
      const double v = c.values[i][j];
      const double a = max > 0 ? v / max : 0;
      out += "<rect x=\"" + F(left + cell_w * static_cast<double>(j)) + "\" y=\"" + F(y) +
             "\" width=\"" + F(cell_w - 1) + "\" height=\"" + F(cell_h - 1) +
             "\" fill=\"#4e79a7\" fill-opacity=\"" + F2(0.05 + 0.95 * a) +
             "\"><title>" + Escape(c.rows[i] + " " + c.columns[j] + ": " + Short(v) + " " + c.value_label) +
             "</title></rect>";
    }
  }
  out += Text(left, h - 8, "darker = more " + c.value_label + " (max " + Short(max) + ")", " font-size=\"9\"");
  return out + "</svg>";
}

}  // namespace meridian::sim::svg
