// The mechanics everything else trusts, tested directly: parsing a whole number, writing
// JSON, reading CSV, publishing a file exclusively, and the directory lock. Exact values and
// messages, so a change in any of them is seen here first.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <thread>

#include "expect_error.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/atomic_output_file.hpp"
#include "mechanics/csv_reader.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/wording.hpp"
#include "process_runner.hpp"

namespace iteragpu::testing {
namespace {

// --- parse_whole_number ------------------------------------------------------------------

TEST(ParseWholeNumber, TakesPlainDigitsWithinTheBounds) {
  EXPECT_EQ(parse_whole_number("16", "batch", 1, 16), 16);
  EXPECT_EQ(parse_whole_number("+16", "batch", 1, 16), 16);
  EXPECT_EQ(parse_whole_number("1", "batch", 1, 16), 1);
  EXPECT_EQ(parse_whole_number("0", "warmup", 0, 5), 0);
  EXPECT_EQ(parse_whole_number_up_to_uint64("18446744073709551615", "seed"), 18446744073709551615ULL);
  EXPECT_EQ(parse_whole_number_up_to_uint64("0", "seed"), 0u);
}

TEST(ParseWholeNumber, RefusesEverythingElseNamingTheFieldAndTheRange) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"0", "--batch: '0' is out of range; expected a whole number from 1 to 16"},
      {"17", "--batch: '17' is out of range; expected a whole number from 1 to 16"},
      {"99999999999999999999", "--batch: '99999999999999999999' is out of range; expected a whole number from 1 to 16"},
      {"-1", "--batch: '-1' is not a whole number; expected a whole number from 1 to 16"},
      {"1.5", "--batch: '1.5' is not a whole number; expected a whole number from 1 to 16"},
      {"1e3", "--batch: '1e3' is not a whole number; expected a whole number from 1 to 16"},
      {" 16", "--batch: ' 16' is not a whole number; expected a whole number from 1 to 16"},
      {"0x10", "--batch: '0x10' is not a whole number; expected a whole number from 1 to 16"},
      {"", "--batch: empty value; expected a whole number from 1 to 16"},
  };
  for (const Case& c : cases) {
    try {
      parse_whole_number(c.text, "batch", 1, 16);
      ADD_FAILURE() << "accepted '" << c.text << "'";
    } catch (const UsageError& error) {
      EXPECT_EQ(std::string(error.what()), c.message);
      EXPECT_EQ(error.field(), "batch");
    }
  }
  EXPECT_EQ(message_of<UsageError>([] { parse_whole_number_up_to_uint64("18446744073709551616", "seed"); }),
            "--seed: '18446744073709551616' is out of range; expected a whole number from 0 to "
            "18446744073709551615");
  // A control character in the text is shown escaped, never raw.
  EXPECT_EQ(message_of<UsageError>([] { parse_whole_number("1\x1b[2J", "batch", 1, 16); }),
            "--batch: '1\\x1b[2J' is not a whole number; expected a whole number from 1 to 16");
}

// --- JsonWriter ----------------------------------------------------------------------------

// Sizes as a renter reads them: GiB with two decimals from 1 GiB up, MiB below, the sign
// kept, halves rounded away from zero; the exact bytes grouped beside them.
TEST(MemorySize, GibFromOneGibUpMibBelowSignKept) {
  EXPECT_EQ(memory_size(BigInt(23098884096)), "21.51 GiB");
  EXPECT_EQ(memory_size(BigInt(1) << 30), "1.00 GiB");
  EXPECT_EQ(memory_size((BigInt(1) << 30) - 1), "1024.00 MiB");  // 1023.999999 MiB rounds up
  EXPECT_EQ(memory_size(BigInt(-5905580032)), "-5.50 GiB");       // -5.5 x 2^30
  EXPECT_EQ(memory_size(BigInt(2097152)), "2.00 MiB");
  EXPECT_EQ(memory_size(BigInt(5242)), "0.00 MiB");                // 0.004999 MiB
  EXPECT_EQ(memory_size(BigInt(5243)), "0.01 MiB");                // 0.005000 MiB, away from zero
  EXPECT_EQ(memory_size(BigInt(0)), "0.00 MiB");
  EXPECT_EQ(bytes_and_size(BigInt(23098884096)), "23,098,884,096 bytes (21.51 GiB)");
  EXPECT_EQ(bytes_and_size(BigInt(-1)), "-1 bytes (0.00 MiB)");  // no "-0.00"
}

// A lower bound ("needed at least") rounds down, so that ">=20.28 GiB" never claims more than
// the bytes do: 21,781,872,640 bytes is 20.2859... GiB.
TEST(MemorySize, LowerBoundRoundsDown) {
  EXPECT_EQ(memory_size(BigInt(21781872640)), "20.29 GiB");
  EXPECT_EQ(memory_size(BigInt(21781872640), exact::Rounding::kDown), "20.28 GiB");
  EXPECT_EQ(memory_size(BigInt(1) << 30, exact::Rounding::kDown), "1.00 GiB");  // exact stays exact
  EXPECT_EQ(memory_size(BigInt(-5905580033), exact::Rounding::kDown), "-5.51 GiB");  // toward minus infinity
}

// An upper bound (the headroom left by a lower-bound need) rounds up: 1,788,346,368 bytes is
// 1.6655... GiB, so "<=1.67 GiB"; -4,602,003,456 bytes is -4.2859... GiB, so "<=-4.28 GiB".
TEST(MemorySize, UpperBoundRoundsUp) {
  EXPECT_EQ(memory_size(BigInt(1788346368), exact::Rounding::kUp), "1.67 GiB");
  EXPECT_EQ(memory_size(BigInt(1782579200), exact::Rounding::kUp), "1.67 GiB");  // 1.66015625 GiB
  EXPECT_EQ(memory_size(BigInt(1782579200)), "1.66 GiB");
  EXPECT_EQ(memory_size(BigInt(-4602003456), exact::Rounding::kUp), "-4.28 GiB");
  EXPECT_EQ(memory_size(BigInt(-4602003456)), "-4.29 GiB");
  EXPECT_EQ(memory_size(BigInt(1) << 30, exact::Rounding::kUp), "1.00 GiB");
}

TEST(JsonWriter, WritesTheDocumentExactly) {
  JsonWriter json("x.test", 1);
  json.key("s").value(std::string("a\"b\\c\n\x01\xc3\xa9"))
      .key("i").value(std::int64_t{-9223372036854775807LL - 1})
      .key("u").value(std::uint64_t{18446744073709551615ULL})
      .key("d").value(0.1)
      .key("n").null()
      .key("e").text_or_null("")
      .key("arr").begin_array().value(1).value(true).end_array();
  EXPECT_EQ(json.finish(),
            "{\n"
            "  \"schema\": \"x.test\",\n"
            "  \"schema_version\": 1,\n"
            "  \"s\": \"a\\\"b\\\\c\\n\\u0001\xc3\xa9\",\n"
            "  \"i\": -9223372036854775808,\n"
            "  \"u\": 18446744073709551615,\n"
            "  \"d\": 0.1,\n"
            "  \"n\": null,\n"
            "  \"e\": null,\n"
            "  \"arr\": [\n"
            "    1,\n"
            "    true\n"
            "  ]\n"
            "}\n");
}

TEST(JsonWriter, ANumberJsonCannotHoldIsNull) {
  JsonWriter json("x.test", 1);
  json.key("nan").value(std::nan("")).key("inf").value(1.0 / 0.0).key("one").value(1.0);
  EXPECT_EQ(json.finish_on_one_line(),
            "{\"schema\": \"x.test\",\"schema_version\": 1,\"nan\": null,\"inf\": null,\"one\": 1.0}\n");
}

TEST(QuotedForMessage, CutsBetweenCharactersNeverInsideOne) {
  const std::string value = std::string(39, '1') + "\xc3\xa9";  // 39 digits, then é (2 bytes)
  EXPECT_EQ(quoted_for_message(value), "'" + std::string(39, '1') + "...'");
  EXPECT_EQ(quoted_for_message(value, 41), "'" + value + "'");
}

TEST(JsonWriter, OneLineForStreams) {
  JsonWriter json("x.test", 2);
  json.key("a").begin_object().key("b").value(1).end_object();
  json.key("t").value(std::string("line\nbreak"));
  const std::string line = json.finish_on_one_line();
  EXPECT_EQ(line, "{\"schema\": \"x.test\",\"schema_version\": 2,\"a\": {\"b\": 1},\"t\": \"line\\nbreak\"}\n");
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
}

// --- read_csv_file / parse_csv -------------------------------------------------------------

TEST(CsvReader, ReadsQuotedFieldsCrlfAndAMissingLastLineBreak) {
  const CsvTable table = parse_csv("a,b\r\n\"x,\"\"y\",2\r\n\"multi\nline\",3", "t.csv");
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.header.fields, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(table.rows[0].fields, (std::vector<std::string>{"x,\"y", "2"}));
  EXPECT_EQ(table.rows[0].line, 2);
  EXPECT_EQ(table.rows[1].fields, (std::vector<std::string>{"multi\nline", "3"}));
  EXPECT_EQ(table.rows[1].line, 3);
}

TEST(CsvReader, RefusesWhatIsNotStrictCsvWithFileAndLine) {
  struct Case {
    std::string content;
    const char* message;
  } cases[] = {
      {"", "t.csv:1: empty file; expected a header line"},
      {"\xEF\xBB\xBF" "a\n", "t.csv:1: the file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without a BOM"},
      {"a,b\n1\n", "t.csv:2: 1 field; the header (line 1) has 2"},
      {"a\n\n", "t.csv:2: blank line; every line must be a header or a row"},
      {"a\n\"x\n", "t.csv:2: unterminated quoted field (the quote opened on this line is never closed)"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(message_of<DataFileError>([&] { parse_csv(c.content, "t.csv"); }), c.message);
}

TEST(CsvReader, ReadsOnlyRegularFiles) {
  TempDir dir;
  const std::string table = dir.file("t.csv");
  write_file(table, "a,b\n1,2\n");
  EXPECT_EQ(read_csv_file(table).rows.size(), 1u);
  EXPECT_NE(message_of<DataFileError>([&] { read_csv_file(dir.path()); }).find("is a directory"),
            std::string::npos);
  const std::string fifo = dir.file("fifo.csv");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(message_of<DataFileError>([&] { read_csv_file(fifo); }).find(fifo), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "a FIFO was waited on";
  EXPECT_NE(message_of<DataFileError>([&] { read_csv_file(dir.file("missing.csv")); }).find("missing.csv"),
            std::string::npos);
}

// --- publish_exclusively -------------------------------------------------------------------

std::vector<std::string> temporaries_in(const std::string& directory) {
  std::vector<std::string> found;
  for (const std::string& name : list_directory(directory))
    if (name.find(".tmp-") != std::string::npos) found.push_back(name);
  return found;
}

TEST(PublishExclusively, CreatesTheFileWholeAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("r.json");
  publish_exclusively(path, "{\"a\": 1}\n");
  EXPECT_EQ(read_file(path), "{\"a\": 1}\n");
  EXPECT_TRUE(temporaries_in(dir.path()).empty());
}

TEST(PublishExclusively, NeverReplacesWhatIsThere) {
  TempDir dir;
  const std::string path = dir.file("r.json");
  write_file(path, "old");
  EXPECT_THROW(publish_exclusively(path, "new"), OutputExists);
  EXPECT_EQ(read_file(path), "old");
  // A dangling symbolic link is something there too: it is not followed to create a file.
  const std::string link = dir.file("link.json");
  ASSERT_EQ(symlink(dir.file("target.json").c_str(), link.c_str()), 0);
  EXPECT_THROW(publish_exclusively(link, "new"), OutputExists);
  EXPECT_FALSE(path_exists(dir.file("target.json")));
  EXPECT_TRUE(temporaries_in(dir.path()).empty());
}

TEST(PublishExclusively, RefusesAMissingFolderAndAnEmptyPath) {
  TempDir dir;
  EXPECT_THROW(publish_exclusively(dir.file("no/such/folder/r.json"), "x"), ResourceUnavailable);
  EXPECT_EQ(message_of<UsageError>([] { publish_exclusively("", "x"); }),
            "--output: empty path; expected the name of a new file");
  EXPECT_TRUE(temporaries_in(dir.path()).empty());
}

// --- DirectoryLock -------------------------------------------------------------------------

TEST(DirectoryLock, ProcessesTakeTurns) {
  TempDir dir;
  const std::string path = dir.file("t.csv");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the lock for 300 ms
    const DirectoryLock lock(path);
    const char byte = 'x';
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  const auto start = std::chrono::steady_clock::now();
  {
    const DirectoryLock lock(path);  // waits for the child's lock to go
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  close(ready[0]);
  close(ready[1]);
  // Released on destruction: taken again at once.
  const auto again = std::chrono::steady_clock::now();
  { const DirectoryLock lock(path); }
  EXPECT_LT(std::chrono::steady_clock::now() - again, std::chrono::milliseconds(100));
}

TEST(DirectoryLock, AMissingFolderIsNamed) {
  TempDir dir;
  EXPECT_NE(message_of<ResourceUnavailable>([&] { DirectoryLock lock(dir.file("no/such/t.csv")); })
                .find("cannot open the directory of"),
            std::string::npos);
}

// --- printable -----------------------------------------------------------------------------

TEST(Printable, EscapesEveryControlCharacterAndNothingElse) {
  EXPECT_EQ(printable("NVIDIA H200"), "NVIDIA H200");
  EXPECT_EQ(printable("a\x1b[2J\nb\r\t\x7f"), "a\\x1b[2J\\x0ab\\x0d\\x09\\x7f");
  EXPECT_EQ(printable("\xc2\x9b" "2J"), "\\xc2\\x9b2J");          // C1 CSI, as UTF-8
  EXPECT_EQ(printable("\xc3\xa9 \xe2\x86\x92 \xc2\xb5s"), "\xc3\xa9 \xe2\x86\x92 \xc2\xb5s");  // é → µs
  EXPECT_FALSE(has_control_characters("\xc2\xb5s"));
  EXPECT_TRUE(has_control_characters("a\nb"));
}

// Invisible characters that change what a line shows, and bytes that are not UTF-8.
TEST(Printable, EscapesFormatCharactersAndBytesThatAreNotUtf8) {
  EXPECT_EQ(printable("Llama\xe2\x80\xae" "ForCausalLM"), "Llama\\u202eForCausalLM");  // U+202E RLO
  EXPECT_EQ(printable("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");                    // LRI, PDI
  EXPECT_EQ(printable("a\xe2\x80\xa8" "b"), "a\\u2028b");                                      // line separator
  EXPECT_EQ(printable("\xef\xbb\xbf" "name\xe2\x80\x8b"), "\\ufeff" "name\\u200b");             // BOM, ZWSP
  EXPECT_EQ(printable("tag\xf3\xa0\x80\x81"), "tag\\U000e0001");                           // U+E0001
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");                                         // not UTF-8
  EXPECT_EQ(printable("\xe2\x80"), "\\xe2\\x80");                                         // cut short
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                                         // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");                                 // a surrogate
  EXPECT_EQ(printable("\xf0\x9f\x98\x80 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"),
            "\xf0\x9f\x98\x80 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d");  // an emoji, Hebrew: shown as they are
  EXPECT_TRUE(has_control_characters("\xe2\x80\xae"));
  EXPECT_FALSE(has_control_characters("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"));
}

}  // namespace
}  // namespace iteragpu::testing
