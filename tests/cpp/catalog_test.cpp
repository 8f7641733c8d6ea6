// The catalog: the shipped file's contents and the strict validation of any catalog.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "iteragpu/error.hpp"
#include "iteragpu/package_calculator.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu {
namespace {

using testing::TempDir;
using testing::write_file;

const std::string kHeader = "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\n";
const std::string kLabel = "illustrative test price";

std::string row(const std::string& gpu, const std::string& days, const std::string& cents,
                const std::string& gpus = "1") {
  return gpu + ",Name of " + gpu + "," + days + "," + cents + "," + gpus + ",2026-12-02," + kLabel +
         "\n";
}

// Loads `content` from a temporary file; returns the DataFileError message with the
// temporary path replaced by "FILE", or "accepted" when the catalog loads.
std::string load_error(const std::string& content, bool require_full_grid = false) {
  TempDir dir;
  const std::string path = dir.file("catalog.csv");
  write_file(path, content);
  try {
    Catalog::load(path, require_full_grid);
  } catch (const DataFileError& e) {
    std::string message = e.what();
    const auto at = message.find(path);
    if (at != std::string::npos) message.replace(at, path.size(), "FILE");
    return message;
  }
  return "accepted";
}

// The message starts with the location and contains the reason.
void expect_rejected(const std::string& content, const std::string& location,
                     const std::string& reason, bool require_full_grid = false) {
  const std::string message = load_error(content, require_full_grid);
  EXPECT_EQ(message.rfind(location, 0), 0u) << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
}

TEST(ShippedCatalog, HoldsFifteenGpusAtThreeDurations) {
  const Catalog catalog = Catalog::load(Catalog::shipped_path(), /*require_full_grid=*/true);
  ASSERT_EQ(catalog.entries().size(), 45u);
  std::map<std::string, std::map<int, std::int64_t>> price;  // gpu → days → cents
  for (const CatalogEntry& entry : catalog.entries())
    price[entry.gpu][entry.days] = entry.lot_price_cents;
  EXPECT_EQ(price.size(), 15u);
  for (const auto& [gpu, by_days] : price) {
    ASSERT_EQ(by_days.size(), 3u) << gpu;
    // Longer packages cost more in total and less per day.
    EXPECT_LT(by_days.at(3), by_days.at(7)) << gpu;
    EXPECT_LT(by_days.at(7), by_days.at(30)) << gpu;
    EXPECT_LT(by_days.at(7) * 3, by_days.at(3) * 7) << gpu;
    EXPECT_LT(by_days.at(30) * 7, by_days.at(7) * 30) << gpu;
  }
}

TEST(ShippedCatalog, SaysItsPricesAreIllustrativeOnEveryRow) {
  const Catalog catalog = Catalog::load(Catalog::shipped_path(), true);
  for (const CatalogEntry& entry : catalog.entries()) {
    EXPECT_EQ(entry.source.rfind("illustrative", 0), 0u) << "line " << entry.line;
    EXPECT_EQ(entry.snapshot_date, "2026-12-02") << "line " << entry.line;
  }
}

TEST(ShippedCatalog, B200LotHoldsTwoGpus) {
  const Catalog catalog = Catalog::load(Catalog::shipped_path(), true);
  for (int days : {3, 7, 30}) EXPECT_EQ(catalog.find("b200", days).gpus_per_lot, 2);
  EXPECT_EQ(catalog.find("h100-sxm", 7).gpus_per_lot, 1);
  EXPECT_EQ(catalog.find("b200", 7).gpu_name, "NVIDIA B200");
}

TEST(ShippedCatalog, ListingsValidateAndShowTheLabel) {
  const Catalog catalog = Catalog::load(Catalog::shipped_path(), true);
  EXPECT_EQ(testing::schema_violation(catalog.to_json(), "catalog.schema.json"), "");
  const std::string text = catalog.to_text();
  EXPECT_NE(text.find("Prices: illustrative"), std::string::npos) << text;
  EXPECT_NE(text.find("Snapshot date: 2026-12-02"), std::string::npos) << text;
  EXPECT_NE(text.find("$1,592.81"), std::string::npos) << text;  // b200, 7 days: 159281 cents
  EXPECT_NE(text.find("check the provider's page"), std::string::npos) << text;
}

TEST(CatalogFind, IsCaseInsensitiveAndNamesTheField) {
  const Catalog catalog = Catalog::load(Catalog::shipped_path(), true);
  EXPECT_EQ(catalog.find("B200", 30).lot_price_cents, catalog.find("b200", 30).lot_price_cents);
  try {
    catalog.find("b300", 7);
    FAIL() << "b300 accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.field(), "gpu");
    EXPECT_NE(std::string(e.what()).find("b200, h200, h100-sxm"), std::string::npos) << e.what();
  }
}

TEST(CatalogFind, ListsTheDurationsOfThatGpu) {
  TempDir dir;
  write_file(dir.file("c.csv"),
             kHeader + row("x1", "7", "500") + row("x1", "3", "300") + row("y2", "30", "9"));
  const Catalog catalog = Catalog::load(dir.file("c.csv"));
  try {
    catalog.find("x1", 30);
    FAIL() << "30 days accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.field(), "days");
    EXPECT_NE(std::string(e.what()).find("expected 3 or 7"), std::string::npos) << e.what();
  }
}

TEST(CatalogLoad, AcceptsQuotedFieldsWithCommasQuotesAndCrlf) {
  TempDir dir;
  const std::string path = dir.file("c.csv");
  write_file(path,
             "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\r\n"
             "x1,\"Card, \"\"Pro\"\" edition\",7,1234,2,2024-02-29,\"quoted, with comma\"\r\n"
             "x1,\"Card, \"\"Pro\"\" edition\",3,99,2,2024-01-31,plain");  // no final line break
  const Catalog catalog = Catalog::load(path);
  ASSERT_EQ(catalog.entries().size(), 2u);
  const CatalogEntry& first = catalog.entries()[0];
  EXPECT_EQ(first.gpu_name, "Card, \"Pro\" edition");
  EXPECT_EQ(first.source, "quoted, with comma");
  EXPECT_EQ(first.lot_price_cents, 1234);
  EXPECT_EQ(first.gpus_per_lot, 2);
  EXPECT_EQ(first.snapshot_date, "2024-02-29");
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(catalog.entries()[1].source, "plain");
  EXPECT_EQ(catalog.entries()[1].line, 3);
  EXPECT_EQ(catalog.path(), path);
}

TEST(CatalogLoad, RejectsAWrongHeader) {
  expect_rejected(
      "gpu,name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\n" + row("x1", "7", "1"),
      "FILE:1: ", "header is 'gpu,name,days,");
}

TEST(CatalogLoad, DeviceNamesAreAnOptionalStrictColumn) {
  const std::string header = "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source,"
                             "device_names\n";
  const auto with_devices = [](const std::string& days, const std::string& names) {
    return "a100,NVIDIA A100,"+ days + ",100,1,2026-12-02,mine," + names + "\n";
  };
  EXPECT_EQ(load_error(header + with_devices("7", "NVIDIA A100-SXM4-80GB;NVIDIA A100 80GB PCIe") +
                       with_devices("3", "NVIDIA A100-SXM4-80GB;NVIDIA A100 80GB PCIe")),
            "accepted");
  EXPECT_EQ(load_error(kHeader + row("x1", "7", "1")), "accepted");  // catalogs from before it
  expect_rejected(header + with_devices("7", ""), "FILE:2: ", "device_names: empty");
  expect_rejected(header + with_devices("7", "A;;B"), "FILE:2: ", "not a list of device names");
  expect_rejected(header + with_devices("7", "A; B"), "FILE:2: ", "not a list of device names");
  expect_rejected(header + with_devices("7", "A;A"), "FILE:2: ", "'A' is listed twice");
  expect_rejected(header + with_devices("7", "A") + with_devices("3", "B"), "FILE:3: ",
                  "device_names: differ from line 2 for gpu a100");
  expect_rejected(header + row("x1", "7", "1"), "FILE:2: ", "");  // a field missing

  TempDir dir;
  write_file(dir.file("c.csv"), header + with_devices("7", "NVIDIA A100-SXM4-80GB"));
  const Catalog catalog = Catalog::load(dir.file("c.csv"));
  const CatalogEntry& entry = catalog.entries().front();
  EXPECT_TRUE(entry.covers_device("nvidia a100-sxm4-80gb"));  // the runtime's case may vary
  EXPECT_FALSE(entry.covers_device("NVIDIA A100-SXM4-40GB"));
  EXPECT_FALSE(entry.covers_device(""));
}

TEST(ShippedCatalog, NamesTheDevicesOfEveryModel) {
  const Catalog catalog = Catalog::load(Catalog::shipped_path(), true);
  for (const CatalogEntry& entry : catalog.entries())
    EXPECT_FALSE(entry.device_names.empty()) << entry.gpu;
  EXPECT_TRUE(catalog.find("h200", 7).covers_device("NVIDIA H200"));
  EXPECT_FALSE(catalog.find("h100-sxm", 7).covers_device("NVIDIA H200"));
}

TEST(CatalogLoad, RejectsPricesThatAreNotPositiveIntegers) {
  expect_rejected(kHeader + row("x1", "7", "12.50"),
                  "FILE:2: ", "lot_price_cents: '12.50' is not a positive integer");
  expect_rejected(kHeader + row("x1", "3", "100") + row("x1", "7", "-5"),
                  "FILE:3: ", "lot_price_cents: '-5' is not a positive integer");
  expect_rejected(kHeader + row("x1", "7", "0"), "FILE:2: ", "lot_price_cents: '0' is zero");
  expect_rejected(kHeader + row("x1", "7", ""), "FILE:2: ", "lot_price_cents: empty value");
  expect_rejected(kHeader + row("x1", "7", "5", "two"),
                  "FILE:2: ", "gpus_per_lot: 'two' is not a positive integer");
}

TEST(CatalogLoad, RejectsDurationsOtherThanThreeSevenThirty) {
  expect_rejected(kHeader + row("x1", "5", "100"),
                  "FILE:2: ", "days: '5' is not an offered duration; expected 3, 7 or 30");
  expect_rejected(kHeader + row("x1", "07", "100"), "FILE:2: ", "days: '07'");
}

TEST(CatalogLoad, RejectsADuplicateRowNamingBothLines) {
  expect_rejected(kHeader + row("x1", "7", "100") + row("x1", "3", "50") + row("x1", "7", "110"),
                  "FILE:4: ", "duplicate row for gpu x1 and 7 days (first on line 2)");
}

TEST(CatalogLoad, RejectsMalformedKeysDatesAndNames) {
  expect_rejected(kHeader + row("B200", "7", "100"),
                  "FILE:2: ", "gpu: 'B200' is not a catalog key");
  expect_rejected(kHeader + "x1,Card,7,100,1,2026-02-30,label\n",
                  "FILE:2: ", "snapshot_date: '2026-02-30' is not a date");
  expect_rejected(kHeader + "x1,Card,7,100,1,2026-12-02,\n", "FILE:2: ", "source: empty");
  expect_rejected(kHeader + "x1, Card,7,100,1,2026-12-02,label\n",
                  "FILE:2: ", "gpu_name: has leading or trailing spaces");
  expect_rejected(kHeader + "x1,\"Two\nlines\",7,100,1,2026-12-02,label\n",
                  "FILE:2: ", "gpu_name: contains a control character");
  expect_rejected(kHeader + "x1,Card,7,100,1,2026-12-02,label\nx1,Other,3,50,1,2026-12-02,label\n",
                  "FILE:3: ", "gpu_name: 'Other' differs from 'Card' on line 2");
}

TEST(CatalogLoad, RejectsAnUnterminatedQuoteAtTheLineItOpens) {
  expect_rejected(kHeader + row("x1", "7", "100") + "x1,\"Card,3,100,1,2026-12-02,label\n" +
                      row("x2", "7", "1"),
                  "FILE:3: ", "unterminated quoted field");
}

TEST(CatalogLoad, RejectsAQuoteInsideAnUnquotedField) {
  expect_rejected(kHeader + "x1,Card 12\",7,100,1,2026-12-02,label\n",
                  "FILE:2: ", "quote character inside an unquoted field");
  expect_rejected(kHeader + "x1,\"Card\" 12,7,100,1,2026-12-02,label\n",
                  "FILE:2: ", "text after a closing quote");
}

TEST(CatalogLoad, RejectsAByteOrderMark) {
  expect_rejected("\xEF\xBB\xBF" + kHeader + row("x1", "7", "100"),
                  "FILE:1: ", "byte-order mark (BOM)");
}

TEST(CatalogLoad, RejectsBytesThatAreNotUtf8) {
  expect_rejected(kHeader + "x1,Caf\xE9,7,100,1,2026-12-02,label\n", "FILE:2: ", "not UTF-8");
}

TEST(CatalogLoad, RejectsAMissingFileNamingThePathAndTheCause) {
  TempDir dir;
  const std::string path = dir.file("absent.csv");
  try {
    Catalog::load(path);
    FAIL() << "missing file accepted";
  } catch (const DataFileError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": does not exist (expected the CSV file)");
  }
}

TEST(CatalogLoad, RejectsEmptyFilesAndHeaderOnlyFiles) {
  expect_rejected("", "FILE:1: ", "empty file");
  expect_rejected(kHeader, "FILE:1: ", "no price rows");
}

TEST(CatalogLoad, RejectsAWrongFieldCount) {
  expect_rejected(kHeader + row("x1", "7", "100") + "x1,Card,3,100,1,2026-12-02\n",
                  "FILE:3: ", "6 fields; the header (line 1) has 7");
  expect_rejected(kHeader + "x1,Card,3,100,1,2026-12-02,label,extra\n", "FILE:2: ", "8 fields");
}

TEST(CatalogLoad, RejectsBlankLinesAndBareCarriageReturns) {
  expect_rejected(kHeader + row("x1", "7", "100") + "\n" + row("x1", "3", "50"),
                  "FILE:3: ", "blank line");
  expect_rejected(kHeader + "x1,Card,7,100,1,2026-12-02,label\r" + row("x1", "3", "50"),
                  "FILE:2: ", "carriage return not followed by a line feed");
}

TEST(CatalogLoad, FullGridDemandsEveryDurationForEveryGpu) {
  const std::string partial = kHeader + row("x1", "3", "1") + row("x1", "7", "2") +
                              row("x1", "30", "3") + row("x2", "3", "1") + row("x2", "30", "3");
  EXPECT_EQ(load_error(partial, /*require_full_grid=*/false), "accepted");
  expect_rejected(partial, "FILE:5: ", "gpu x2 has no 7-day row", /*require_full_grid=*/true);
}

}  // namespace
}  // namespace iteragpu
