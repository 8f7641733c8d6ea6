// MemoryEstimator::estimate_checkpoint: safetensors files the tests write themselves (single,
// sharded, folders), exact sums per dtype, and every way a checkpoint is refused: one
// DataFileError "PATH: reason" naming the file and the reason.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "expect_error.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_estimator.hpp"
#include "process_runner.hpp"
#include "estimate/safetensors_header.hpp"
#include "process_io.hpp"
#include "safetensors_writer.hpp"

namespace iteragpu {
namespace {

using testing::TensorSpec;

class CheckpointEstimator : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::vector<TensorSpec>& tensors) {
    const std::string path = dir_.file(name);
    testing::write_safetensors(path, tensors);
    return path;
  }
  // A file with a hand-written header and `data_bytes` bytes of data after it.
  std::string write_raw(const std::string& name, const std::string& header, std::uint64_t data_bytes) {
    const std::string path = dir_.file(name);
    testing::write_bytes(path, testing::safetensors_bytes(header, data_bytes));
    return path;
  }
  std::string write_text(const std::string& name, const std::string& text) {
    const std::string path = dir_.file(name);
    testing::write_bytes(path, text);
    return path;
  }
  static CheckpointEstimate estimate(const std::string& path, const std::string& reserve = "0",
                                     bool by_tensor = false) {
    return MemoryEstimator().estimate_checkpoint({path, reserve, by_tensor});
  }
  // Refused with a DataFileError "FILE: ...REASON...", on one line; returns the message.
  static std::string expect_refused(const std::string& checkpoint, const std::string& file,
                                    const std::string& reason) {
    const std::string message = testing::message_of<DataFileError>([&] { estimate(checkpoint); });
    EXPECT_EQ(message.rfind(file + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  static std::string entry(const std::string& dtype, const std::string& shape, const std::string& offsets) {
    return "{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
  }
  testing::TempDir dir_;
};

// --- what is counted -------------------------------------------------------------------

TEST_F(CheckpointEstimator, MixedBf16WeightsAndF32Norms) {
  const std::string path = write("model.safetensors", {{"embed.weight", "BF16", {1000, 64}},
                                                       {"layers.0.norm.weight", "F32", {64}},
                                                       {"layers.0.mlp.weight", "BF16", {256, 64}},
                                                       {"final_norm.weight", "F32", {64}}});
  const CheckpointEstimate e = estimate(path, "4");
  EXPECT_FALSE(e.sharded);
  EXPECT_EQ(e.resolved, path);
  EXPECT_EQ(e.tensor_count, 4u);
  EXPECT_EQ(e.parameters.str(), "80512");  // 64000 + 16384 + 128
  ASSERT_EQ(e.dtypes.size(), 2u);
  EXPECT_EQ(e.dtypes[0].dtype, "BF16");  // most bytes first
  EXPECT_EQ(e.dtypes[0].bits_per_element, 16u);
  EXPECT_EQ(e.dtypes[0].tensors, 2u);
  EXPECT_EQ(e.dtypes[0].parameters.str(), "80384");
  EXPECT_EQ(e.dtypes[0].memory.bytes.str(), "160768");
  EXPECT_EQ(e.dtypes[1].dtype, "F32");
  EXPECT_EQ(e.dtypes[1].memory.bytes.str(), "512");
  EXPECT_EQ(e.weights.bytes.str(), "161280");
  EXPECT_EQ(e.weights.gib.str(), "0.000150203704833984375");  // 161280 / 2^30, exact
  EXPECT_EQ(e.weights.gb.str(), "0.00016128");
  EXPECT_EQ(e.reserve.gib.str(), "4");
  EXPECT_EQ(e.total.bytes.str(), "4295128576");
  ASSERT_EQ(e.shards.size(), 1u);
  EXPECT_EQ(e.shards[0].name, "model.safetensors");
  EXPECT_EQ(e.shards[0].data_bytes, 161280u);
  EXPECT_EQ(e.shards[0].file_bytes, 8 + e.shards[0].header_bytes + 161280u);
  EXPECT_TRUE(e.tensors.empty());  // only with by_tensor
}

TEST_F(CheckpointEstimator, QuantizedI8AndU8WeightsWithF16Scales) {
  const std::string path = write("q.safetensors", {{"w1.qweight", "I8", {128, 64}},
                                                   {"w1.scales", "F16", {128}},
                                                   {"w2.qweight", "U8", {64, 32}},
                                                   {"w2.scales", "F16", {64}}});
  const CheckpointEstimate e = estimate(path);
  ASSERT_EQ(e.dtypes.size(), 3u);
  EXPECT_EQ(e.dtypes[0].dtype, "I8");
  EXPECT_EQ(e.dtypes[0].memory.bytes.str(), "8192");
  EXPECT_EQ(e.dtypes[1].dtype, "U8");
  EXPECT_EQ(e.dtypes[1].memory.bytes.str(), "2048");
  EXPECT_EQ(e.dtypes[2].dtype, "F16");
  EXPECT_EQ(e.dtypes[2].tensors, 2u);
  EXPECT_EQ(e.dtypes[2].parameters.str(), "192");
  EXPECT_EQ(e.dtypes[2].memory.bytes.str(), "384");
  EXPECT_EQ(e.weights.bytes.str(), "10624");
}

TEST_F(CheckpointEstimator, SubByteDtypesScalarsAndEmptyTensors) {
  const std::string path = write("fp4.safetensors", {{"w.f4", "F4", {4, 8}},        // 32 × 4 bits = 16 bytes
                                                     {"w.f6", "F6_E2M3", {4}},      // 24 bits = 3 bytes
                                                     {"scale", "F8_E8M0", {}},      // a scalar: 1 element
                                                     {"empty", "BF16", {0, 4096}},  // no element
                                                     {"flag", "BOOL", {3}}});
  const CheckpointEstimate e = estimate(path, "0", true);
  EXPECT_EQ(e.weights.bytes.str(), "23");
  EXPECT_EQ(e.parameters.str(), "40");
  EXPECT_EQ(e.tensor_count, 5u);
  const auto f4 = std::find_if(e.dtypes.begin(), e.dtypes.end(), [](const auto& d) { return d.dtype == "F4"; });
  ASSERT_NE(f4, e.dtypes.end());
  EXPECT_EQ(f4->bits_per_element, 4u);
  EXPECT_EQ(f4->memory.bytes.str(), "16");
  const auto scalar = std::find_if(e.tensors.begin(), e.tensors.end(), [](const auto& t) { return t.name == "scale"; });
  ASSERT_NE(scalar, e.tensors.end());
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->parameters, 1u);
}

TEST_F(CheckpointEstimator, ByTensorListsEveryTensorInDataOrder) {
  // Written in an order the header does not keep: the listing follows the offsets.
  const std::string header = "{\"b\":" + entry("F32", "[2]", "[8,16]") + ",\"a\":" + entry("F32", "[2]", "[0,8]") +
                             ",\"c\":" + entry("BF16", "[3,2]", "[16,28]") + "}";
  const CheckpointEstimate e = estimate(write_raw("m.safetensors", header, 28), "0", true);
  ASSERT_EQ(e.tensors.size(), 3u);
  EXPECT_EQ(e.tensors[0].name, "a");
  EXPECT_EQ(e.tensors[1].name, "b");
  EXPECT_EQ(e.tensors[2].name, "c");
  EXPECT_EQ(e.tensors[2].dtype, "BF16");
  EXPECT_EQ(e.tensors[2].shape, (std::vector<std::uint64_t>{3, 2}));
  EXPECT_EQ(e.tensors[2].bytes, 12u);
  EXPECT_EQ(e.tensors[2].offset, 16u);
  EXPECT_EQ(e.tensors[2].shard, "m.safetensors");
  const std::string text = e.to_text();
  EXPECT_NE(text.find("[3, 2]"), std::string::npos) << text;
  EXPECT_NE(e.to_json().find("\"tensors\": ["), std::string::npos);
  EXPECT_EQ(estimate(dir_.file("m.safetensors")).to_json().find("\"tensors\": ["), std::string::npos);
}

TEST_F(CheckpointEstimator, ShardedIndexWithTwoShards) {
  write("model-00001-of-00002.safetensors", {{"embed.weight", "BF16", {100, 16}}, {"norm.weight", "F32", {16}}});
  write("model-00002-of-00002.safetensors", {{"lm_head.weight", "BF16", {100, 16}}});
  const std::string index = write_text(
      "model.safetensors.index.json",
      R"({"metadata": {"total_size": 6464}, "weight_map": {
           "embed.weight": "model-00001-of-00002.safetensors",
           "lm_head.weight": "model-00002-of-00002.safetensors",
           "norm.weight": "model-00001-of-00002.safetensors"}})");
  const CheckpointEstimate e = estimate(index, "0", true);
  EXPECT_TRUE(e.sharded);
  EXPECT_EQ(e.resolved, index);
  ASSERT_EQ(e.shards.size(), 2u);
  EXPECT_EQ(e.shards[0].name, "model-00001-of-00002.safetensors");
  EXPECT_EQ(e.shards[0].tensors, 2u);
  EXPECT_EQ(e.shards[1].tensors, 1u);
  EXPECT_EQ(e.weights.bytes.str(), "6464");  // 3200 + 64 + 3200
  EXPECT_EQ(e.parameters.str(), "3216");
  ASSERT_TRUE(e.index_total_size.has_value());
  EXPECT_EQ(*e.index_total_size, 6464u);
  EXPECT_EQ(e.to_text().find("differs"), std::string::npos);
  ASSERT_EQ(e.tensors.size(), 3u);
  EXPECT_EQ(e.tensors[2].shard, "model-00002-of-00002.safetensors");
}

// The cross-check, from outside the parser: for every file, the tensors' bytes add up to
// the file's size on disk (stat) less 8 and the header length its first 8 bytes state; the
// per-dtype rows add up to the total.
TEST_F(CheckpointEstimator, TensorBytesAreEachFileSizeLessItsHeader) {
  write("model-00001-of-00002.safetensors", {{"embed.weight", "BF16", {300, 32}},
                                             {"layers.0.qweight", "I8", {64, 32}},
                                             {"layers.0.scales", "F16", {64}},
                                             {"layers.0.norm.weight", "F32", {32}}});
  write("model-00002-of-00002.safetensors", {{"layers.1.qweight", "F4", {64, 32}},
                                             {"layers.1.scales", "F8_E8M0", {64}},
                                             {"lm_head.weight", "BF16", {300, 32}}});
  const std::string index = write_text("model.safetensors.index.json", R"({"weight_map": {
      "embed.weight": "model-00001-of-00002.safetensors", "layers.0.qweight": "model-00001-of-00002.safetensors",
      "layers.0.scales": "model-00001-of-00002.safetensors", "layers.0.norm.weight": "model-00001-of-00002.safetensors",
      "layers.1.qweight": "model-00002-of-00002.safetensors", "layers.1.scales": "model-00002-of-00002.safetensors",
      "lm_head.weight": "model-00002-of-00002.safetensors"}})");
  const CheckpointEstimate e = estimate(index, "0", true);
  ASSERT_EQ(e.shards.size(), 2u);
  std::uint64_t all_files_data = 0;
  for (const auto& shard : e.shards) {
    struct stat info {};
    ASSERT_EQ(::stat(dir_.file(shard.name).c_str(), &info), 0);
    const std::string bytes = testing::read_file(dir_.file(shard.name));
    std::uint64_t header_length = 0;
    for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | static_cast<unsigned char>(bytes[i]);
    std::uint64_t tensor_bytes = 0;
    for (const auto& tensor : e.tensors)
      if (tensor.shard == shard.name) tensor_bytes += tensor.bytes;
    EXPECT_EQ(tensor_bytes, static_cast<std::uint64_t>(info.st_size) - 8 - header_length) << shard.name;
    EXPECT_EQ(shard.data_bytes, tensor_bytes) << shard.name;
    all_files_data += tensor_bytes;
  }
  EXPECT_EQ(e.weights.bytes.str(), std::to_string(all_files_data));
  EXPECT_EQ(all_files_data, 19200u + 2048u + 128u + 128u + 1024u + 64u + 19200u);
  std::uint64_t per_dtype = 0;
  for (const auto& dtype : e.dtypes) per_dtype += std::stoull(dtype.memory.bytes.str());
  EXPECT_EQ(per_dtype, all_files_data);
  EXPECT_EQ(e.dtypes.size(), 6u);  // BF16, I8, F4, F16, F32, F8_E8M0
}

TEST_F(CheckpointEstimator, IndexTotalSizeIsComparedNotTrusted) {
  write("a.safetensors", {{"w", "F32", {4}}});
  const std::string index = write_text("m.safetensors.index.json",
                                       R"({"metadata": {"total_size": 999}, "weight_map": {"w": "a.safetensors"}})");
  const CheckpointEstimate e = estimate(index);
  EXPECT_EQ(e.weights.bytes.str(), "16");
  EXPECT_NE(e.to_text().find("metadata.total_size (999 bytes) differs from the tensors' bytes (16)"),
            std::string::npos)
      << e.to_text();
}

TEST_F(CheckpointEstimator, FolderWithOneIndexReadsTheIndex) {
  write("s1.safetensors", {{"x", "F16", {8}}});
  write("s2.safetensors", {{"y", "F16", {8}}});
  write_text("model.safetensors.index.json", R"({"weight_map": {"x": "s1.safetensors", "y": "s2.safetensors"}})");
  const CheckpointEstimate e = estimate(dir_.path());
  EXPECT_TRUE(e.sharded);
  EXPECT_EQ(e.resolved, dir_.file("model.safetensors.index.json"));
  EXPECT_EQ(e.checkpoint, dir_.path());
  EXPECT_EQ(e.weights.bytes.str(), "32");
}

TEST_F(CheckpointEstimator, FolderWithOneFileReadsTheFile) {
  write("model.safetensors", {{"x", "F16", {8}}});
  write_text("config.json", "{}");
  const CheckpointEstimate e = estimate(dir_.path() + "/");
  EXPECT_FALSE(e.sharded);
  EXPECT_EQ(e.shards.at(0).name, "model.safetensors");
}

TEST_F(CheckpointEstimator, AFileOfSeveralGigabytesIsReadByItsHeaderOnly) {
  // 2 × 2^31 bytes of data: a hole, so the test costs no disk; 64-bit offsets throughout.
  const std::string path = dir_.file("big.safetensors");
  testing::write_sparse_safetensors(path, {{"a", "BF16", {32768, 32768}}, {"b", "BF16", {32768, 32768}}});
  const std::optional<std::uint64_t> before = testing::bytes_read_so_far();
  ASSERT_TRUE(before) << "no rchar in /proc/self/io";
  const CheckpointEstimate e = estimate(path);
  const std::uint64_t read = testing::bytes_read_so_far().value_or(0) - *before;
  EXPECT_EQ(e.weights.bytes.str(), "4294967296");
  EXPECT_EQ(e.weights.gib.str(), "4");
  // The kernel's count of bytes this process read: the header (and /proc/self/io itself),
  // not the 4 GiB of data.
  EXPECT_LT(read, 64u * 1024) << read;
}

TEST_F(CheckpointEstimator, ReportsCarryTheCaveats) {
  const CheckpointEstimate e = estimate(write("m.safetensors", {{"w", "BF16", {4, 4}}}));
  const auto& items = CheckpointEstimate::not_included();
  for (const char* expected : {"activations", "KV cache", "libraries and the CUDA context"})
    EXPECT_NE(std::find(items.begin(), items.end(), expected), items.end()) << expected;
  const std::string text = e.to_text();
  EXPECT_NE(text.find("Not included: activations, KV cache"), std::string::npos) << text;
  EXPECT_NE(text.find("assumption you chose"), std::string::npos);
  EXPECT_NE(text.find("headers only"), std::string::npos);
}

TEST_F(CheckpointEstimator, RequestErrorsAreUsageErrors) {
  const std::string path = write("m.safetensors", {{"w", "BF16", {4}}});
  EXPECT_NE(testing::message_of<UsageError>([&] { estimate(""); }).find("--checkpoint: is empty"), std::string::npos);
  EXPECT_NE(testing::message_of<UsageError>([&] { estimate(path, "-1"); }).find("--reserve-gib"), std::string::npos);
}

// --- files that are not regular files, missing files, folders --------------------------

TEST_F(CheckpointEstimator, MissingFileIsNamed) {
  expect_refused(dir_.file("none.safetensors"), dir_.file("none.safetensors"), "does not exist");
}

TEST_F(CheckpointEstimator, FifoIsRefusedWithoutBlocking) {
  const std::string fifo = dir_.file("model.safetensors");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo, fifo, "is a FIFO (named pipe), not a regular file");
  // Found in a folder, it is refused the same way.
  expect_refused(dir_.path(), fifo, "is a FIFO");
}

TEST_F(CheckpointEstimator, DirectoryWhereAFileIsExpectedIsRefused) {
  ASSERT_EQ(mkdir(dir_.file("model.safetensors").c_str(), 0700), 0);
  expect_refused(dir_.path(), dir_.file("model.safetensors"), "is a directory, not a regular file");
}

TEST_F(CheckpointEstimator, CharacterDeviceIsRefused) {
  expect_refused("/dev/zero", "/dev/zero", "is a character device");
}

TEST_F(CheckpointEstimator, FolderWithNothingToReadListsWhatItLooksFor) {
  write_text("config.json", "{}");
  expect_refused(dir_.path(), dir_.path(), "holds no .safetensors file and no *.safetensors.index.json index");
}

TEST_F(CheckpointEstimator, FolderWithSeveralFilesAndNoIndexListsThem) {
  write("b.safetensors", {{"x", "F16", {1}}});
  write("a.safetensors", {{"x", "F16", {1}}});
  expect_refused(dir_.path(), dir_.path(),
                 "holds 2 .safetensors files and no index (a.safetensors, b.safetensors); name the file");
}

TEST_F(CheckpointEstimator, FolderWithSeveralIndexesListsThem) {
  write_text("a.safetensors.index.json", "{}");
  write_text("b.safetensors.index.json", "{}");
  write("a.safetensors", {{"x", "F16", {1}}});
  expect_refused(dir_.path(), dir_.path(),
                 "holds 2 checkpoint indexes (a.safetensors.index.json, b.safetensors.index.json)");
}

// --- the 8-byte length and the header text ------------------------------------------------

TEST_F(CheckpointEstimator, FileShorterThanEightBytes) {
  const std::string path = write_text("short.safetensors", "abc");
  expect_refused(path, path, "is 3 bytes, shorter than the 8-byte header length");
}

TEST_F(CheckpointEstimator, HeaderLengthBeyondTheFile) {
  const std::string path = write_text("cut.safetensors", testing::le64(1000) + "{}");
  expect_refused(path, path, "header length 1000 reaches past the end of the file (10 bytes)");
}

TEST_F(CheckpointEstimator, HeaderLengthAboveTheLimit) {
  const std::string path = write_text("huge.safetensors", testing::le64(100'000'001) + "{}");
  expect_refused(path, path, "header length 100000001 is above the safetensors limit of 100000000 bytes");
  // A PyTorch pickle (a zip) read as safetensors: the same clear line, not a huge allocation.
  const std::string zip = write_text("pytorch_model.safetensors", std::string("PK\x03\x04\x14\0\0\0", 8) + "....");
  expect_refused(zip, zip, "is above the safetensors limit");
}

TEST_F(CheckpointEstimator, HeaderNotUtf8) {
  const std::string path = write_raw("latin1.safetensors", "{\"caf\xe9\":" + entry("U8", "[1]", "[0,1]") + "}", 1);
  expect_refused(path, path, "header is not valid UTF-8 (byte 5)");
}

TEST_F(CheckpointEstimator, HeaderWithANulByte) {
  const std::string path = write_raw("nul.safetensors", std::string("{}\0{\"x\":1}", 10), 0);
  expect_refused(path, path, "header has a NUL byte at offset 2");
}

TEST_F(CheckpointEstimator, HeaderNotJson) {
  const std::string path = write_raw("bad.safetensors", "{\"w\": ", 0);
  expect_refused(path, path, "header is not valid JSON (");
}

TEST_F(CheckpointEstimator, HeaderNotAnObject) {
  const std::string path = write_raw("array.safetensors", "[1, 2]  ", 0);
  expect_refused(path, path, "header is an array, not a JSON object");
}

TEST_F(CheckpointEstimator, HeaderNestedTooDeep) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string path = write_raw("deep.safetensors", "{\"__metadata__\":" + deep + "}", 0);
  expect_refused(path, path, "header is nested more than 64 levels deep");
}

TEST_F(CheckpointEstimator, MetadataMustBeStrings) {
  const std::string path = write_raw("meta.safetensors", "{\"__metadata__\":{\"format\":1}}", 0);
  expect_refused(path, path, "__metadata__ value of 'format' is a number, not a string");
}

// --- tensor entries -----------------------------------------------------------------------

TEST_F(CheckpointEstimator, EntryThatIsNotAnObject) {
  const std::string path = write_raw("e.safetensors", "{\"w\": [1, 2]}", 0);
  expect_refused(path, path, "tensor 'w' is an array, not an object with dtype, shape and data_offsets");
}

TEST_F(CheckpointEstimator, EntryMissingAField) {
  const std::string no_dtype = write_raw("a.safetensors", R"({"w": {"shape": [1], "data_offsets": [0, 1]}})", 1);
  expect_refused(no_dtype, no_dtype, "tensor 'w' has no \"dtype\"");
  const std::string no_shape = write_raw("b.safetensors", R"({"w": {"dtype": "U8", "data_offsets": [0, 1]}})", 1);
  expect_refused(no_shape, no_shape, "tensor 'w' has no \"shape\"");
  const std::string no_offsets = write_raw("c.safetensors", R"({"w": {"dtype": "U8", "shape": [1]}})", 1);
  expect_refused(no_offsets, no_offsets, "tensor 'w' has no \"data_offsets\"");
}

TEST_F(CheckpointEstimator, UnknownDtypeListsTheAcceptedOnes) {
  const std::string path = write_raw("d.safetensors", "{\"w\":" + entry("F12", "[1]", "[0,2]") + "}", 2);
  const std::string message = expect_refused(path, path, "tensor 'w': unknown dtype 'F12'; accepted: BOOL, F4,");
  EXPECT_NE(message.find("BF16"), std::string::npos);
  EXPECT_NE(message.find("F8_E4M3"), std::string::npos);
  EXPECT_EQ(safetensors_dtype_bits("F6_E3M2"), 6u);
  EXPECT_EQ(safetensors_dtype_bits("C64"), 64u);
  EXPECT_EQ(safetensors_dtype_bits("bf16"), 0u);  // names are case-sensitive, as in the format
}

TEST_F(CheckpointEstimator, NegativeDimension) {
  const std::string path = write_raw("n.safetensors", "{\"w\":" + entry("U8", "[2,-1]", "[0,2]") + "}", 2);
  expect_refused(path, path, "tensor 'w': shape item 1 is negative (-1)");
}

TEST_F(CheckpointEstimator, NonIntegerDimension) {
  const std::string half = write_raw("h.safetensors", "{\"w\":" + entry("U8", "[1.5]", "[0,2]") + "}", 2);
  expect_refused(half, half, "tensor 'w': shape item 0 is not an integer below 2^64 (1.5)");
  const std::string text = write_raw("t.safetensors", "{\"w\":" + entry("U8", "[\"2\"]", "[0,2]") + "}", 2);
  expect_refused(text, text, "tensor 'w': shape item 0 is a string, not an integer");
  const std::string object = write_raw("o.safetensors", "{\"w\":" + entry("U8", "{}", "[0,2]") + "}", 2);
  expect_refused(object, object, "tensor 'w': shape is an object, not an array of integers");
}

TEST_F(CheckpointEstimator, MalformedDataOffsets) {
  const std::string three = write_raw("3.safetensors", "{\"w\":" + entry("U8", "[2]", "[0,1,2]") + "}", 2);
  expect_refused(three, three, "tensor 'w': data_offsets has 3 items, not 2 ([begin, end])");
  const std::string backwards = write_raw("b.safetensors", "{\"w\":" + entry("U8", "[0]", "[2,1]") + "}", 2);
  expect_refused(backwards, backwards, "tensor 'w': data_offsets [2, 1] end before they begin");
}

TEST_F(CheckpointEstimator, ShapeAndOffsetsDisagree) {
  const std::string path = write_raw("s.safetensors", "{\"w\":" + entry("F32", "[4,4]", "[0,60]") + "}", 60);
  expect_refused(path, path, "tensor 'w': shape [4, 4] of F32 is 64 bytes, but data_offsets [0, 60] hold 60");
}

TEST_F(CheckpointEstimator, ShapeWhoseSizeOverflows) {
  const std::string path =
      write_raw("o.safetensors", "{\"w\":" + entry("F32", "[4294967296,4294967296]", "[0,8]") + "}", 8);
  expect_refused(path, path, "tensor 'w': shape [4294967296, 4294967296] of F32 has more bits than fit in 64 bits");
}

TEST_F(CheckpointEstimator, SubByteTensorNotAWholeNumberOfBytes) {
  const std::string path = write_raw("f4.safetensors", "{\"w\":" + entry("F4", "[3]", "[0,2]") + "}", 2);
  expect_refused(path, path, "tensor 'w': shape [3] of F4 (4 bits each) is not a whole number of bytes");
}

TEST_F(CheckpointEstimator, OffsetsOutsideTheData) {
  const std::string path = write_raw("out.safetensors", "{\"w\":" + entry("U8", "[4]", "[8,12]") + "}", 10);
  expect_refused(path, path, "tensor 'w': data_offsets [8, 12] reach past the end of the data (10 bytes after the header)");
}

TEST_F(CheckpointEstimator, OverlappingTensors) {
  const std::string header =
      "{\"a\":" + entry("F32", "[4]", "[0,16]") + ",\"b\":" + entry("F32", "[4]", "[8,24]") + "}";
  const std::string path = write_raw("overlap.safetensors", header, 24);
  expect_refused(path, path, "tensors 'a' [0, 16] and 'b' [8, 24] overlap");
}

TEST_F(CheckpointEstimator, DuplicateNameInOneHeader) {
  const std::string header = "{\"a\":" + entry("U8", "[1]", "[0,1]") + ",\"a\":" + entry("U8", "[1]", "[1,2]") + "}";
  const std::string path = write_raw("dup.safetensors", header, 2);
  expect_refused(path, path, "header is ambiguous JSON: the member '/a' is named twice in its object");
}

// The cross-check: the tensors' bytes must be exactly the data (file − 8 − N).
TEST_F(CheckpointEstimator, TrailingBytesNotCoveredByAnyTensor) {
  const std::string path = write_raw("trail.safetensors", "{\"w\":" + entry("U8", "[4]", "[0,4]") + "}", 7);
  expect_refused(path, path, "3 bytes of data are not covered by any tensor (the first at data offset 4)");
}

TEST_F(CheckpointEstimator, GapBetweenTensorsNotCoveredByAnyTensor) {
  const std::string header =
      "{\"a\":" + entry("U8", "[4]", "[0,4]") + ",\"b\":" + entry("U8", "[4]", "[6,10]") + "}";
  const std::string path = write_raw("gap.safetensors", header, 10);
  expect_refused(path, path, "2 bytes of data are not covered by any tensor (the first at data offset 4)");
}

TEST_F(CheckpointEstimator, DataButNoTensors) {
  const std::string path = write_raw("none.safetensors", "{}", 5);
  expect_refused(path, path, "5 bytes of data are not covered by any tensor (the first at data offset 0)");
}

TEST_F(CheckpointEstimator, ControlCharactersInNamesAreEscapedInMessages) {
  const std::string path = write_raw("ctl.safetensors", "{\"a\\nb\":" + entry("X", "[1]", "[0,1]") + "}", 1);
  expect_refused(path, path, "tensor 'a\\x0ab': unknown dtype");
}

// --- sharded checkpoints ----------------------------------------------------------------

class ShardedCheckpoint : public CheckpointEstimator {
 protected:
  void SetUp() override {
    write("s1.safetensors", {{"a", "F32", {2}}, {"b", "F32", {2}}});
    write("s2.safetensors", {{"c", "F32", {2}}});
  }
  std::string index(const std::string& weight_map) {
    return write_text("m.safetensors.index.json", "{\"metadata\": {}, \"weight_map\": " + weight_map + "}");
  }
};

TEST_F(ShardedCheckpoint, MissingShard) {
  const std::string path = index(R"({"a": "s1.safetensors", "b": "s1.safetensors", "c": "s3.safetensors"})");
  expect_refused(path, dir_.file("s3.safetensors"),
                 "does not exist (expected the shard named by m.safetensors.index.json)");
}

TEST_F(ShardedCheckpoint, ShardHoldsATensorTheIndexDoesNotList) {
  const std::string path = index(R"({"a": "s1.safetensors", "c": "s2.safetensors"})");
  expect_refused(path, path, "shard 's1.safetensors' holds tensor 'b', which the index does not list");
}

TEST_F(ShardedCheckpoint, ShardHoldsATensorTheIndexMapsElsewhere) {
  const std::string path = index(R"({"a": "s1.safetensors", "b": "s2.safetensors", "c": "s2.safetensors"})");
  expect_refused(path, path, "shard 's1.safetensors' holds tensor 'b', which the index maps to 's2.safetensors'");
}

TEST_F(ShardedCheckpoint, IndexMapsATensorToAShardThatLacksIt) {
  const std::string path =
      index(R"({"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors", "d": "s2.safetensors"})");
  expect_refused(path, path, "maps tensor 'd' to shard 's2.safetensors', which does not hold it");
}

TEST_F(ShardedCheckpoint, DuplicateTensorAcrossShards) {
  write("s2.safetensors", {{"c", "F32", {2}}, {"a", "F32", {2}}});
  const std::string path = index(R"({"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"})");
  expect_refused(path, path, "tensor 'a' is in two shards, 's1.safetensors' and 's2.safetensors'");
}

TEST_F(ShardedCheckpoint, ABadShardIsNamedByItsOwnPath) {
  write_raw("s2.safetensors", "{\"c\":" + entry("F32", "[2]", "[0,7]") + "}", 7);
  const std::string path = index(R"({"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"})");
  expect_refused(path, dir_.file("s2.safetensors"), "tensor 'c': shape [2] of F32 is 8 bytes");
}

TEST_F(ShardedCheckpoint, MalformedIndexes) {
  const std::string not_json = write_text("x.safetensors.index.json", "{\"weight_map\": ");
  expect_refused(not_json, not_json, "not valid JSON");
  const std::string no_map = write_text("y.safetensors.index.json", "{\"metadata\": {}}");
  expect_refused(no_map, no_map, "has no \"weight_map\" object");
  const std::string empty = write_text("z.safetensors.index.json", "{\"weight_map\": {}}");
  expect_refused(empty, empty, "weight_map lists no tensor");
  const std::string twice = write_text("t.safetensors.index.json",
                                       R"({"weight_map": {"a": "s1.safetensors", "a": "s1.safetensors"}})");
  expect_refused(twice, twice, "ambiguous JSON: the member '/weight_map/a' is named twice in its object");
  const std::string escaping = write_text("e.safetensors.index.json", R"({"weight_map": {"a": "../s1.safetensors"}})");
  expect_refused(escaping, escaping, "maps tensor 'a' to '../s1.safetensors', not a file name beside the index");
  const std::string not_text = write_text("n.safetensors.index.json", R"({"weight_map": {"a": 1}})");
  expect_refused(not_text, not_text, "weight_map value of tensor 'a' is not a string");
}

// --- the in-memory parser the fuzz target drives ----------------------------------------

TEST(SafetensorsHeaderParser, ParsesAWholeFileHeldInMemory) {
  std::uint64_t data_bytes = 0;
  const std::string header = testing::safetensors_header({{"w", "BF16", {2, 3}}, {"b", "F32", {3}}}, data_bytes);
  const std::string file = testing::safetensors_bytes(header, data_bytes);
  const SafetensorsHeader parsed =
      parse_safetensors_bytes(reinterpret_cast<const std::uint8_t*>(file.data()), file.size(), "mem");
  EXPECT_EQ(parsed.header_bytes, header.size());
  EXPECT_EQ(parsed.data_bytes, 24u);
  ASSERT_EQ(parsed.tensors.size(), 2u);
  EXPECT_EQ(parsed.tensors[0].name, "w");
  EXPECT_EQ(parsed.tensors[1].begin, 12u);
  ASSERT_EQ(parsed.metadata.size(), 1u);
  EXPECT_EQ(parsed.metadata[0].second, "pt");
  const std::string cut = file.substr(0, 5);
  EXPECT_NE(testing::message_of<DataFileError>([&] {
              parse_safetensors_bytes(reinterpret_cast<const std::uint8_t*>(cut.data()), cut.size(), "mem");
            }).find("mem: is 5 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace iteragpu
