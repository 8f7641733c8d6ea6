#pragma once
// One table, three renderings: columns aligned for a terminal, a Markdown pipe table, and
// CSV (RFC 4180, the quoting the results table is written with).

#include <string>
#include <vector>

namespace iteragpu {

struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as long as the header
  // Columns aligned to the right in text (numbers); the others to the left.
  std::vector<bool> right_aligned;

  // Two spaces between columns, each line starting with `indent`; widths count characters,
  // not bytes, so "µs" or "→" do not shift a column. Cells are shown printable() (control
  // characters escaped) in text and Markdown; CSV quotes them instead.
  std::string to_text(const std::string& indent = "  ") const;
  // "| a | b |" rows under a "| --- |" line; '|' in a cell is escaped.
  std::string to_markdown() const;
  // The header line, then the rows, each ending with "\n".
  std::string to_csv() const;
};

// One CSV record: fields quoted when they hold a separator, a quote or a line break.
std::string csv_record(const std::vector<std::string>& fields, const char* line_end = "\n");

}  // namespace iteragpu
