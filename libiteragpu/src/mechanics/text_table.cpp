#include "mechanics/text_table.hpp"

#include <algorithm>

#include "iteragpu/printable_text.hpp"

namespace iteragpu {
namespace {

// Characters of UTF-8 text: every byte but the continuation bytes (10xxxxxx).
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string markdown_cell(const std::string& value) {
  std::string cell;
  for (char c : printable(value)) {
    if (c == '|') {
      cell += "\\|";
    } else {
      cell += c;
    }
  }
  return cell;
}

}  // namespace

std::string csv_record(const std::vector<std::string>& fields, const char* line_end) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line + line_end;
}

std::string TextTable::to_text(const std::string& indent) const {
  std::vector<std::size_t> widths(header.size(), 0);
  const auto measure = [&widths](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(printable(cells[i])));
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (std::size_t i = 0; i < cells.size() && i < widths.size(); ++i) {
      const std::string cell = printable(cells[i]);  // a cell may hold text from a file
      const std::string padding(widths[i] - display_width(cell), ' ');
      const bool right = i < right_aligned.size() && right_aligned[i];
      text += (i ? "  " : "") + (right ? padding + cell : cell + padding);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + "\n";
  };
  std::string text = line(header);
  for (const auto& row : rows) text += line(row);
  return text;
}

std::string TextTable::to_markdown() const {
  const auto line = [](const std::vector<std::string>& cells) {
    std::string text = "|";
    for (const std::string& cell : cells) text += " " + markdown_cell(cell) + " |";
    return text + "\n";
  };
  std::string text = line(header) + "|";
  for (std::size_t i = 0; i < header.size(); ++i)
    text += i < right_aligned.size() && right_aligned[i] ? " ---: |" : " --- |";
  text += "\n";
  for (const auto& row : rows) text += line(row);
  return text;
}

std::string TextTable::to_csv() const {
  std::string text = csv_record(header);
  for (const auto& row : rows) text += csv_record(row);
  return text;
}

}  // namespace iteragpu
