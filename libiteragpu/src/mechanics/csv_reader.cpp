#include "mechanics/csv_reader.hpp"

#include "mechanics/input_file.hpp"
#include "mechanics/wording.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace iteragpu {
namespace {

// Length of the valid UTF-8 sequence starting at `i`, or 0 when it is not one
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence_length(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return length;
}

// Checks the encoding of the whole file before parsing, so fields never carry bytes that
// would make a JSON report invalid.
void check_encoding(const std::string& content, const std::string& path) {
  int line = 1;
  for (std::size_t i = 0; i < content.size();) {
    if (content[i] == '\n') ++line;
    if (content[i] == '\0')
      throw data_file_error(path, line, "NUL byte; this is not a text CSV file");
    const std::size_t length = utf8_sequence_length(content, i);
    if (length == 0)
      throw data_file_error(path, line, "bytes that are not UTF-8; save the file as UTF-8");
    i += length;
  }
}

class CsvParser {
 public:
  CsvParser(const std::string& content, const std::string& path) : text_(content), path_(path) {}

  std::vector<CsvRecord> records() {
    std::vector<CsvRecord> result;
    while (pos_ < text_.size()) result.push_back(record());
    return result;
  }

 private:
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  // Consumes a record terminator (LF or CRLF) if one is here; rejects a bare CR.
  bool end_of_record() {
    if (at('\n')) {
      ++pos_;
      ++line_;
      return true;
    }
    if (at('\r')) {
      if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        pos_ += 2;
        ++line_;
        return true;
      }
      throw data_file_error(path_, line_, "carriage return not followed by a line feed");
    }
    return pos_ >= text_.size();
  }

  CsvRecord record() {
    CsvRecord rec;
    rec.line = line_;
    if (at('\n') || at('\r'))
      throw data_file_error(path_, line_, "blank line; every line must be a header or a row");
    for (;;) {
      rec.fields.push_back(at('"') ? quoted_field() : unquoted_field());
      if (at(',')) {
        ++pos_;
        continue;
      }
      if (end_of_record()) return rec;
      throw data_file_error(path_, line_,
                            "text after a closing quote; a quoted field must end at a comma or "
                            "the end of the line");
    }
  }

  std::string unquoted_field() {
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' &&
           text_[pos_] != '\r') {
      if (text_[pos_] == '"')
        throw data_file_error(path_, line_,
                              "quote character inside an unquoted field; quote the whole field "
                              "and double the quotes inside it (\"a \"\"b\"\" c\")");
      ++pos_;
    }
    return text_.substr(begin, pos_ - begin);
  }

  std::string quoted_field() {
    const int start_line = line_;
    ++pos_;  // opening quote
    std::string value;
    for (;;) {
      if (pos_ >= text_.size())
        throw data_file_error(path_, start_line,
                              "unterminated quoted field (the quote opened on this line is "
                              "never closed)");
      const char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
          value += '"';
          pos_ += 2;
          continue;
        }
        ++pos_;  // closing quote
        return value;
      }
      if (c == '\n') ++line_;
      value += c;
      ++pos_;
    }
  }

  const std::string& text_;
  const std::string& path_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

LocatedDataFileError::LocatedDataFileError(const std::string& path, int line, const std::string& reason)
    : DataFileError(path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + reason),
      path_(path),
      line_(line),
      reason_(reason) {}

LocatedDataFileError data_file_error(const std::string& path, int line, const std::string& reason) {
  return LocatedDataFileError(path, line, reason);
}

CsvTable read_csv_file(const std::string& path) {
  return parse_csv(read_input_file(path, "CSV file", kMaxTableBytes), path);
}

CsvTable parse_csv(const std::string& content, const std::string& path) {
  if (content.empty()) throw data_file_error(path, 1, "empty file; expected a header line");
  if (content.compare(0, 3, "\xEF\xBB\xBF") == 0)
    throw data_file_error(path, 1,
                          "the file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 "
                          "without a BOM");
  check_encoding(content, path);

  std::vector<CsvRecord> records = CsvParser(content, path).records();
  CsvTable table;
  table.path = path;
  table.header = std::move(records.front());  // content is not empty: at least one record
  for (std::size_t i = 1; i < records.size(); ++i) {
    CsvRecord& row = records[i];
    if (row.fields.size() != table.header.fields.size())
      throw data_file_error(path, row.line,
                            counted(static_cast<long long>(row.fields.size()), "field") + "; the header (line " +
                                std::to_string(table.header.line) + ") has " +
                                std::to_string(table.header.fields.size()));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace iteragpu
