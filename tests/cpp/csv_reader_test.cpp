// read_csv_file and parse_csv (mechanics/csv_reader.hpp): the strict RFC 4180 reader of the
// package catalog and the results table. What it accepts, field by field and line by line;
// each refusal as the exact "file:line: reason"; and which files it opens at all.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "iteragpu/error.hpp"
#include "mechanics/csv_reader.hpp"
#include "mechanics/input_file.hpp"
#include "process_runner.hpp"
#include "thrown_exception.hpp"

namespace iteragpu::testing {
namespace {

using Fields = std::vector<std::string>;

std::vector<Fields> fields_of(const CsvTable& table) {
  std::vector<Fields> rows;
  for (const CsvRecord& row : table.rows) rows.push_back(row.fields);
  return rows;
}

std::vector<int> lines_of(const CsvTable& table) {
  std::vector<int> lines;
  for (const CsvRecord& row : table.rows) lines.push_back(row.line);
  return lines;
}

std::string refusal(const std::string& content) {
  const Thrown thrown = thrown_by([&] { parse_csv(content, "t.csv"); });
  EXPECT_EQ(thrown.type, "DataFileError") << "for content: " << content;
  return thrown.message;
}

// --- what is accepted ----------------------------------------------------------------------

TEST(CsvReader, ReadsQuotedEmptyAndSpacedFieldsAsWritten) {
  const CsvTable table = parse_csv(
      "\"a\",b,\"c\"\n"
      "\"\",\"\"\"\"\"\",\"x\"\"y\"\n"  // "" / """""" / "x""y"
      ",,\n"
      " x , y ,\" z \"\n"
      "\"1,2\",\xc3\xa9\xe2\x82\xac,\xf0\x9d\x84\x9e\n",  // é€ and a 4-byte character
      "t.csv");
  EXPECT_EQ(table.path, "t.csv");
  EXPECT_EQ(table.header.fields, (Fields{"a", "b", "c"}));
  EXPECT_EQ(table.header.line, 1);
  EXPECT_EQ(fields_of(table), (std::vector<Fields>{{"", "\"\"", "x\"y"},
                                                   {"", "", ""},
                                                   {" x ", " y ", " z "},
                                                   {"1,2", "\xc3\xa9\xe2\x82\xac", "\xf0\x9d\x84\x9e"}}));
  EXPECT_EQ(lines_of(table), (std::vector<int>{2, 3, 4, 5}));
}

TEST(CsvReader, KeepsLineBreaksInsideQuotesAndCountsLinesPastThem) {
  const CsvTable table = parse_csv(
      "h1,h2\r\n"
      "\"a\r\nb\",1\r\n"   // CRLF inside quotes: kept as is
      "\"c\nd\ne\",2\n"    // two LFs inside quotes
      "\"f\rg\",3\n"       // a CR inside quotes is text too
      "4,5",
      "t.csv");
  EXPECT_EQ(fields_of(table), (std::vector<Fields>{{"a\r\nb", "1"}, {"c\nd\ne", "2"}, {"f\rg", "3"}, {"4", "5"}}));
  EXPECT_EQ(lines_of(table), (std::vector<int>{2, 4, 7, 8}));
}

TEST(CsvReader, TakesLfCrlfMixedAndAMissingLastLineBreak) {
  EXPECT_EQ(fields_of(parse_csv("a\r\n1\n2\r\n3", "t.csv")), (std::vector<Fields>{{"1"}, {"2"}, {"3"}}));
  EXPECT_EQ(fields_of(parse_csv("a\n\"q\"", "t.csv")), (std::vector<Fields>{{"q"}}));
  EXPECT_EQ(fields_of(parse_csv("a,b\n1,", "t.csv")), (std::vector<Fields>{{"1", ""}}));
  // A header alone is a table with no rows, with or without its line break.
  for (const char* content : {"a,b", "a,b\n", "a,b\r\n"}) {
    const CsvTable table = parse_csv(content, "t.csv");
    EXPECT_EQ(table.header.fields, (Fields{"a", "b"})) << content;
    EXPECT_TRUE(table.rows.empty()) << content;
  }
  // A trailing comma is one more, empty, field.
  EXPECT_EQ(parse_csv("a,b,\n", "t.csv").header.fields, (Fields{"a", "b", ""}));
}

// --- what is refused -----------------------------------------------------------------------

TEST(CsvReader, RefusesAByteOrderMarkOnlyAtTheStart) {
  EXPECT_EQ(refusal("\xEF\xBB\xBF" "a,b\n1,2\n"),
            "t.csv:1: the file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without a BOM");
  // Elsewhere U+FEFF is an ordinary (valid UTF-8) character of a field.
  EXPECT_EQ(fields_of(parse_csv("a\nx\xEF\xBB\xBF\n", "t.csv")), (std::vector<Fields>{{"x\xEF\xBB\xBF"}}));
}

TEST(CsvReader, RefusesRaggedRowsNamingTheirLine) {
  EXPECT_EQ(refusal("a,b\n1,2,3\n"), "t.csv:2: 3 fields; the header (line 1) has 2");
  EXPECT_EQ(refusal("a,b\n1,2\n3\n"), "t.csv:3: 1 field; the header (line 1) has 2");
  EXPECT_EQ(refusal("a,b\n1,2\n,,\n"), "t.csv:3: 3 fields; the header (line 1) has 2");
  // The line of the row's start, past a quoted line break.
  EXPECT_EQ(refusal("a,b\n\"x\ny\",1\n1\n"), "t.csv:4: 1 field; the header (line 1) has 2");
}

TEST(CsvReader, RefusesBlankLinesAndBareCarriageReturns) {
  EXPECT_EQ(refusal("\n"), "t.csv:1: blank line; every line must be a header or a row");
  EXPECT_EQ(refusal("\r\na\n"), "t.csv:1: blank line; every line must be a header or a row");
  EXPECT_EQ(refusal("a\r\n\r\n"), "t.csv:2: blank line; every line must be a header or a row");
  EXPECT_EQ(refusal("a\n1\n\n"), "t.csv:3: blank line; every line must be a header or a row");
  EXPECT_EQ(refusal("a\n1\n\n2\n"), "t.csv:3: blank line; every line must be a header or a row");
  EXPECT_EQ(refusal("a,b\rc\n"), "t.csv:1: carriage return not followed by a line feed");
  EXPECT_EQ(refusal("a\n1\r"), "t.csv:2: carriage return not followed by a line feed");
  EXPECT_EQ(refusal("a\n\"1\"\r2\n"), "t.csv:2: carriage return not followed by a line feed");
}

TEST(CsvReader, RefusesMisplacedQuotes) {
  const std::string inside =
      "quote character inside an unquoted field; quote the whole field and double the quotes "
      "inside it (\"a \"\"b\"\" c\")";
  EXPECT_EQ(refusal("a\nx\"y\n"), "t.csv:2: " + inside);
  EXPECT_EQ(refusal("a\n \"y\"\n"), "t.csv:2: " + inside);  // a space before the quote
  EXPECT_EQ(refusal("a\nx\"\n"), "t.csv:2: " + inside);
  const std::string after =
      "text after a closing quote; a quoted field must end at a comma or the end of the line";
  EXPECT_EQ(refusal("a\n\"x\"y\n"), "t.csv:2: " + after);
  EXPECT_EQ(refusal("a\n\"x\" \n"), "t.csv:2: " + after);
  EXPECT_EQ(refusal("a\n\"x\ny\"z\n"), "t.csv:3: " + after);  // the line where the text is
  // An unterminated quote is reported on the line where it opened.
  const std::string open = "unterminated quoted field (the quote opened on this line is never closed)";
  EXPECT_EQ(refusal("a\n\"x\ny\nz"), "t.csv:2: " + open);
  EXPECT_EQ(refusal("a\n1\n\""), "t.csv:3: " + open);
  EXPECT_EQ(refusal("a\n\"x\"\"\n"), "t.csv:2: " + open);  // "" is a quote inside, not the end
}

TEST(CsvReader, RefusesNulAndBytesThatAreNotUtf8NamingTheLine) {
  EXPECT_EQ(refusal(std::string("a\n1\nx\0y\n", 8)), "t.csv:3: NUL byte; this is not a text CSV file");
  EXPECT_EQ(refusal(std::string("\0", 1)), "t.csv:1: NUL byte; this is not a text CSV file");
  const std::string not_utf8 = "bytes that are not UTF-8; save the file as UTF-8";
  EXPECT_EQ(refusal("a\n\xe9t\xe9\n"), "t.csv:2: " + not_utf8);         // Latin-1
  EXPECT_EQ(refusal("a\n1\n\xc0\x80\n"), "t.csv:3: " + not_utf8);       // overlong NUL
  EXPECT_EQ(refusal("a\n\xe0\x80\xaf\n"), "t.csv:2: " + not_utf8);      // overlong '/'
  EXPECT_EQ(refusal("a\n\xed\xa0\x80\n"), "t.csv:2: " + not_utf8);      // a UTF-16 surrogate
  EXPECT_EQ(refusal("a\n\xf4\x90\x80\x80\n"), "t.csv:2: " + not_utf8);  // above U+10FFFF
  EXPECT_EQ(refusal("a\n\xf5\x80\x80\x80\n"), "t.csv:2: " + not_utf8);
  EXPECT_EQ(refusal("a\n\x80\n"), "t.csv:2: " + not_utf8);              // a lone continuation
  EXPECT_EQ(refusal("a\nx\xc3"), "t.csv:2: " + not_utf8);               // cut at the end
  EXPECT_EQ(refusal("a\n\"\xff\"\n"), "t.csv:2: " + not_utf8);          // quoted or not
  // The largest code point, and the last ones before and after the surrogates, are fine.
  EXPECT_EQ(fields_of(parse_csv("a\n\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80\n", "t.csv")),
            (std::vector<Fields>{{"\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80"}}));
}

TEST(CsvReader, RefusesAnEmptyFile) {
  EXPECT_EQ(refusal(""), "t.csv:1: empty file; expected a header line");
}

// --- which files are read ------------------------------------------------------------------

// The message `action` throws, run in a child process given two seconds: a reader that
// waits (a FIFO without a writer) fails the test instead of hanging it.
std::string message_within_two_seconds(const std::function<void()>& action) {
  int result[2];
  if (pipe(result) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    alarm(2);
    const std::string message = thrown_by(action).message;
    const bool sent = write(result[1], message.data(), message.size()) == static_cast<ssize_t>(message.size());
    _exit(sent ? 0 : 1);
  }
  close(result[1]);
  std::string message;
  char chunk[4096];
  for (ssize_t got; (got = read(result[0], chunk, sizeof chunk)) > 0;) message.append(chunk, static_cast<std::size_t>(got));
  close(result[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) ADD_FAILURE() << "still waiting after two seconds (signal " << WTERMSIG(status) << ")";
  return message;
}

TEST(CsvReaderFile, ReadsARegularFileAndOneBehindASymbolicLink) {
  TempDir dir;
  write_file(dir.file("t.csv"), "name,price\r\n\"H200, 141 GB\",3.5\r\n");
  const CsvTable table = read_csv_file(dir.file("t.csv"));
  EXPECT_EQ(table.path, dir.file("t.csv"));
  EXPECT_EQ(fields_of(table), (std::vector<Fields>{{"H200, 141 GB", "3.5"}}));
  ASSERT_EQ(symlink("t.csv", dir.file("link.csv").c_str()), 0);
  EXPECT_EQ(fields_of(read_csv_file(dir.file("link.csv"))), (std::vector<Fields>{{"H200, 141 GB", "3.5"}}));
  // Messages about its content name the path as given, with the line.
  write_file(dir.file("bad.csv"), "a,b\n1\n");
  EXPECT_EQ(thrown_by([&] { read_csv_file(dir.file("bad.csv")); }).message,
            dir.file("bad.csv") + ":2: 1 field; the header (line 1) has 2");
}

TEST(CsvReaderFile, RefusesWhatIsNotARegularFileByName) {
  TempDir dir;
  const Thrown folder = thrown_by([&] { read_csv_file(dir.path()); });
  EXPECT_EQ(folder.type, "InputFileError");
  EXPECT_EQ(folder.message, dir.path() + ": is a directory, not a regular file; expected the CSV file");

  const std::string fifo = dir.file("fifo.csv");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(message_within_two_seconds([&] { read_csv_file(fifo); }),
            fifo + ": is a FIFO (named pipe), not a regular file; expected the CSV file");

  EXPECT_EQ(thrown_by([&] { read_csv_file("/dev/null"); }).message,
            "/dev/null: is a character device, not a regular file; expected the CSV file");

  // A socket cannot even be opened (ENXIO): refused before its type is looked at.
  const std::string socket_path = dir.file("s.csv");
  const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  const Thrown socket_refusal = thrown_by([&] { read_csv_file(socket_path); });
  EXPECT_EQ(socket_refusal.type, "InputFileError");
  EXPECT_EQ(socket_refusal.message, socket_path + ": cannot be opened: No such device or address");
  close(listener);
}

TEST(CsvReaderFile, RefusesMissingFilesAsDataFileErrors) {
  TempDir dir;
  const std::string missing = dir.file("missing.csv");
  const Thrown thrown = thrown_by([&] { read_csv_file(missing); });
  EXPECT_EQ(thrown.type, "InputFileError");
  EXPECT_EQ(thrown.message, missing + ": does not exist (expected the CSV file)");
  ASSERT_EQ(symlink("missing.csv", dir.file("dangling.csv").c_str()), 0);
  EXPECT_EQ(thrown_by([&] { read_csv_file(dir.file("dangling.csv")); }).message,
            dir.file("dangling.csv") + ": does not exist (expected the CSV file)");
  // An InputFileError is a DataFileError: every caller's catch sees it, exit status 2.
  try {
    read_csv_file(missing);
    ADD_FAILURE() << "a missing file was read";
  } catch (const DataFileError& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::kBadInputOrUnavailable);
  }
  const Thrown empty = thrown_by([] { read_csv_file(""); });
  EXPECT_EQ(empty.type, "InputFileError");
  EXPECT_EQ(empty.message, "(empty name): no file name given (expected the CSV file)");
}

TEST(CsvReaderFile, RefusesAnUnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: permission bits do not bind root";
  TempDir dir;
  write_file(dir.file("t.csv"), "a\n1\n");
  ASSERT_EQ(chmod(dir.file("t.csv").c_str(), 0), 0);
  EXPECT_EQ(thrown_by([&] { read_csv_file(dir.file("t.csv")); }).message,
            dir.file("t.csv") + ": cannot be opened: Permission denied");
}

// The limit (kMaxTableBytes, 256 MiB) is checked on the size before anything is read; a
// file exactly at it is read. Sparse files: nothing is written to disk.
TEST(CsvReaderFile, ReadsUpTo256MiBAndRefusesOneByteMore) {
  ASSERT_EQ(kMaxTableBytes, 256ULL << 20);
  TempDir dir;
  const auto sparse = [&](const std::string& name, off_t size) {
    const int fd = open(dir.file(name).c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, size), 0);
    close(fd);
    return dir.file(name);
  };
  const std::string over = sparse("over.csv", static_cast<off_t>(kMaxTableBytes) + 1);
  const auto start = std::chrono::steady_clock::now();
  const Thrown too_large = thrown_by([&] { read_csv_file(over); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500)) << "it was read";
  EXPECT_EQ(too_large.type, "InputFileError");
  EXPECT_EQ(too_large.message, over + ": is 268435457 bytes, more than the 256 MiB a CSV file may have");
  // At the limit the content is read and refused for what it is (zeros), not for its size.
  const std::string at_limit = sparse("limit.csv", static_cast<off_t>(kMaxTableBytes));
  const Thrown zeros = thrown_by([&] { read_csv_file(at_limit); });
  EXPECT_EQ(zeros.type, "DataFileError");
  EXPECT_EQ(zeros.message, at_limit + ":1: NUL byte; this is not a text CSV file");
}

}  // namespace
}  // namespace iteragpu::testing
