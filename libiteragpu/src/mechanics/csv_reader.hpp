#pragma once
// A strict RFC 4180 CSV reader for the data files (the package catalog, the raw-results
// table). Every rejection is a DataFileError "file:line: reason"; nothing is guessed.
//
// Accepted: a header line then rows; fields separated by ','; a field may be quoted with
// '"' (then it may hold commas, line breaks and doubled quotes ""); records end with LF or
// CRLF (CRLF is accepted transparently because spreadsheet programs write it); the last
// record may or may not end with a line break.
// Rejected: a missing or unreadable file, an empty file, a UTF-8 byte-order mark, bytes
// that are not UTF-8, NUL bytes, a bare CR, a blank line, an unterminated quoted field, a
// quote inside an unquoted field, text after a closing quote, and a row whose field count
// differs from the header's.

#include <string>
#include <vector>

#include "iteragpu/error.hpp"

namespace iteragpu {

struct CsvRecord {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

struct CsvTable {
  std::string path;  // as given, for messages
  CsvRecord header;
  std::vector<CsvRecord> rows;  // may be empty: a header alone is a valid table
};

// Reads and parses the file at `path`.
CsvTable read_csv_file(const std::string& path);
// Parses `content` as the text of the file `path` (which is used only in messages).
CsvTable parse_csv(const std::string& content, const std::string& path);

// A data_file_error(): its message, and the parts it was made of, for a report that lists
// the problem (results check --format json) rather than only printing it.
class LocatedDataFileError : public DataFileError {
 public:
  LocatedDataFileError(const std::string& path, int line, const std::string& reason);
  const std::string& path() const { return path_; }
  int line() const { return line_; }  // 0: the file as a whole
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  int line_;
  std::string reason_;
};

// The one format of data-file messages: "path:line: reason" ("path: reason" when line is 0).
LocatedDataFileError data_file_error(const std::string& path, int line, const std::string& reason);

}  // namespace iteragpu
