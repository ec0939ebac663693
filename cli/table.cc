#include "cli/table.h"

#include <algorithm>
#include <cstdio>

namespace meridian::cli {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

void Table::Print(std::ostream& out, const std::string& indent) const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    width[c] = columns_[c].header.size();
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cells[c];
      std::string pad(width[c] - cell.size(), ' ');
      bool last = c + 1 == columns_.size();
      if (columns_[c].align == Align::kRight) {
        line += pad + cell;
      } else {
        line += cell;
        if (!last) line += pad;
      }
      if (!last) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  std::vector<std::string> headers;
  for (const auto& col : columns_) headers.push_back(col.header);
  print_row(headers);
  for (const auto& row : rows_) print_row(row);
}

std::string Fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string Sci(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2e", value);
  std::string s = buf;
  // "2.00e+09" -> "2.00e9"
  auto e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e);
    int exp = std::atoi(s.c_str() + e + 1);
    s = mant + "e" + std::to_string(exp);
  }
  return s;
}

}  // namespace meridian::cli
