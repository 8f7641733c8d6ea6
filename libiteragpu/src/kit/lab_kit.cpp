// Verification of an unpacked lab kit against its MANIFEST.json (SPEC §6).

#include "iteragpu/lab_kit.hpp"

#include <dirent.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "mechanics/input_file.hpp"
#include "mechanics/json_input.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/sha256.hpp"
#include "mechanics/wording.hpp"

namespace iteragpu {
namespace {

constexpr const char* kManifestSchema = "iteragpu.lab-kit-manifest";

bool is_lower_hex_digest(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool is_printable(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f;
  });
}

// A file name as it can appear in a one-line message.
std::string shown_name(const std::string& name) {
  return is_printable(name) ? name : quoted_for_message(name);
}

// A member is a plain file name: the kit is one flat folder.
bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string("/\\\0", 3)) == std::string::npos && is_printable(name);
}

// The manifest is read as every input is (input_file.hpp), and never through a symbolic link:
// a link could vouch for a copy outside the kit.
std::string read_manifest_text(const std::string& path) {
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0 && errno == ENOENT)
    throw ResourceUnavailable(path + ": not found; a lab kit lists its members in " +
                              std::string(kLabKitManifestName));
  return InputFile(path, "lab-kit manifest", InputFile::Links::kRefuse).read_all(kMaxJsonDocumentBytes);
}

// Parses and checks the manifest's structure; every rejection names the field.
std::vector<LabKitMember> parse_manifest(const std::string& path, std::string& kit_name) {
  const std::string text = read_manifest_text(path);
  rapidjson::Document doc;
  const std::string problem = parse_json(text, doc);
  const auto fail = [&path](const std::string& reason) -> DataFileError {
    return DataFileError(path + ": " + reason);
  };
  if (!problem.empty()) throw fail(problem);
  if (!doc.IsObject()) throw fail("expected a JSON object");
  if (!doc.HasMember("schema") || !doc["schema"].IsString() ||
      std::string(doc["schema"].GetString()) != kManifestSchema)
    throw fail(std::string("schema: expected \"") + kManifestSchema + "\"");
  if (!doc.HasMember("schema_version") || !doc["schema_version"].IsInt() ||
      doc["schema_version"].GetInt() != 1)
    throw fail("schema_version: expected 1 (the only version this iteragpu reads)");
  if (!doc.HasMember("kit") || !doc["kit"].IsString() || doc["kit"].GetStringLength() == 0)
    throw fail("kit: expected the kit's name, a non-empty string");
  kit_name = doc["kit"].GetString();
  if (!doc.HasMember("members") || !doc["members"].IsArray() || doc["members"].Empty())
    throw fail("members: expected a non-empty array");

  std::vector<LabKitMember> members;
  std::set<std::string> seen;
  for (const auto& entry : doc["members"].GetArray()) {
    const std::string where = "members[" + std::to_string(members.size()) + "]";
    if (!entry.IsObject() || !entry.HasMember("path") || !entry["path"].IsString())
      throw fail(where + ".path: expected a file name");
    LabKitMember member;
    member.path.assign(entry["path"].GetString(), entry["path"].GetStringLength());
    if (!is_plain_file_name(member.path))
      throw fail(where + ".path: " + quoted_for_message(member.path) +
                 " is not a file name in the kit folder (no '/', no control characters)");
    if (!seen.insert(member.path).second)
      throw fail(where + ".path: " + member.path + " is listed twice");
    static const rapidjson::Value kAbsent;  // an absent size or sha256 reads as null
    const rapidjson::Value& size = entry.HasMember("size") ? entry["size"] : kAbsent;
    const rapidjson::Value& sha256 = entry.HasMember("sha256") ? entry["sha256"] : kAbsent;
    if (size.IsUint64())
      member.size = size.GetUint64();
    else if (!size.IsNull())
      throw fail(where + ".size: expected a byte count (non-negative integer) or null");
    if (sha256.IsString() && is_lower_hex_digest(sha256.GetString()))
      member.sha256 = sha256.GetString();
    else if (!sha256.IsNull())
      throw fail(where + ".sha256: expected 64 lower-case hex digits or null");
    if (member.path != kLabKitManifestName && (!member.size || !member.sha256))
      throw fail(where + " (" + member.path + "): a content file needs its size and sha256");
    members.push_back(std::move(member));
  }
  return members;
}

// Names in the folder, sorted; a missing or unreadable folder is not a kit.
std::vector<std::string> folder_entries(const std::string& directory) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(directory.c_str()), closedir);
  if (!dir && errno == ENOTDIR)
    throw ResourceUnavailable(directory +
                              ": not a folder; unpack the kit archive first and give "
                              "the folder it holds (iteragpu-lab-v1)");
  if (!dir)
    throw ResourceUnavailable(directory + ": cannot open the folder (" + std::strerror(errno) +
                              "); expected an unpacked lab kit such as iteragpu-lab-v1");
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir.get())) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The problem with one listed content member, if any.
std::optional<LabKitProblem> check_member(const std::string& directory,
                                          const LabKitMember& member) {
  const std::string path = directory + "/" + member.path;
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0)
    return LabKitProblem{LabKitProblemKind::kMissing, member.path, member.path + ": missing"};
  if (!S_ISREG(status.st_mode))
    return LabKitProblem{LabKitProblemKind::kNotAFile, member.path,
                         member.path + ": not a regular file (a folder, link or device)"};
  const auto actual_size = static_cast<std::uint64_t>(status.st_size);
  if (actual_size != *member.size)
    return LabKitProblem{LabKitProblemKind::kSizeMismatch, member.path,
                         member.path + ": " + std::to_string(actual_size) + " bytes, " +
                             kLabKitManifestName + " lists " + std::to_string(*member.size)};
  // Opened without following links and hashed through that descriptor: what is hashed is
  // the member that was checked, even if the name is swapped meanwhile.
  std::string actual_sha256;
  try {
    actual_sha256 = sha256_file_hex(InputFile(path, "lab-kit member", InputFile::Links::kRefuse));
  } catch (const InputFileError& error) {
    return LabKitProblem{LabKitProblemKind::kNotAFile, member.path, member.path + ": " + error.reason()};
  }
  if (actual_sha256 != *member.sha256)
    return LabKitProblem{LabKitProblemKind::kHashMismatch, member.path,
                         member.path + ": SHA-256 " + actual_sha256 + ", " + kLabKitManifestName +
                             " lists " + *member.sha256};
  return std::nullopt;
}

const char* member_status(const LabKitVerification& report, const LabKitMember& member) {
  for (const LabKitProblem& problem : report.problems)
    if (problem.member == member.path) return to_string(problem.kind);
  return member.path == kLabKitManifestName ? "manifest" : "ok";
}

}  // namespace

const char* to_string(LabKitProblemKind kind) {
  switch (kind) {
    case LabKitProblemKind::kMissing:
      return "missing";
    case LabKitProblemKind::kNotAFile:
      return "not_a_file";
    case LabKitProblemKind::kSizeMismatch:
      return "size_mismatch";
    case LabKitProblemKind::kHashMismatch:
      return "hash_mismatch";
    case LabKitProblemKind::kUnlisted:
      return "unlisted";
    case LabKitProblemKind::kManifestSelfHash:
      return "manifest_self_hash";
  }
  return "unknown";
}

LabKitVerification verify_lab_kit(const std::string& kit_directory) {
  LabKitVerification report;
  report.kit_directory = kit_directory;
  const std::vector<std::string> present = folder_entries(kit_directory);
  report.members = parse_manifest(kit_directory + "/" + kLabKitManifestName, report.kit_name);

  std::set<std::string> listed;
  for (const LabKitMember& member : report.members) {
    listed.insert(member.path);
    if (member.path != kLabKitManifestName) {
      if (auto problem = check_member(kit_directory, member)) report.problems.push_back(*problem);
    } else if (member.size || member.sha256) {
      // A file cannot contain its own hash: a manifest that claims one was edited by hand.
      report.problems.push_back({LabKitProblemKind::kManifestSelfHash, member.path,
                                 member.path + ": lists its own size or SHA-256; the manifest "
                                               "fingerprints the other members, not itself"});
    }
  }
  for (const std::string& name : present)
    if (!listed.count(name))
      report.problems.push_back(
          {LabKitProblemKind::kUnlisted, name,
           shown_name(name) + ": present but not listed in " + kLabKitManifestName});
  return report;
}

std::string LabKitVerification::problem_summary() const {
  std::string line = kit_directory + ": " + counted(problems.size(), "problem");
  for (std::size_t i = 0; i < problems.size(); ++i)
    line += (i == 0 ? ": " : "; ") + problems[i].message;
  return line;
}

std::string LabKitVerification::to_text() const {
  std::ostringstream out;
  // The kit's folder is usually named after the kit: then the folder alone says both.
  std::string folder_name = kit_directory;
  while (folder_name.size() > 1 && folder_name.back() == '/') folder_name.pop_back();
  folder_name = folder_name.substr(folder_name.find_last_of('/') + 1);
  out << "Lab kit " << (folder_name == kit_name ? kit_directory : kit_name + " in " + kit_directory)
      << ": " << counted(members.size(), "member") << " listed in " << kLabKitManifestName
      << " (status, name, listed size and SHA-256)\n";
  std::size_t name_width = 0;
  for (const LabKitMember& member : members) name_width = std::max(name_width, member.path.size());
  const auto row = [&out, name_width](const std::string& status, const std::string& name) {
    out << "  " << status << std::string(20 - std::min<std::size_t>(status.size(), 19), ' ') << name
        << std::string(name_width + 2 - std::min(name.size(), name_width), ' ');
  };
  for (const LabKitMember& member : members) {
    row(member_status(*this, member), member.path);
    if (member.size) out << *member.size << " bytes" << (member.sha256 ? ", " : "");
    if (member.sha256) out << "sha256 " << *member.sha256;
    if (!member.size && !member.sha256) out << "(the manifest: no size or hash of itself)";
    out << "\n";
  }
  for (const LabKitProblem& problem : problems) {
    if (problem.kind != LabKitProblemKind::kUnlisted) continue;
    row(to_string(problem.kind), shown_name(problem.member));
    out << "(not in the manifest)\n";
  }
  if (intact())
    out << "Intact: every listed file is present with its size and SHA-256, and nothing else "
           "is in the folder.\n";
  else
    for (const LabKitProblem& problem : problems) out << "Problem: " << problem.message << "\n";
  return out.str();
}

std::string LabKitVerification::to_json() const {
  JsonWriter json("iteragpu.kit-verification", 1);
  json.key("kit_directory").value(kit_directory);
  json.key("kit").value(kit_name);
  json.key("intact").value(intact());
  json.key("members").begin_array();
  for (const LabKitMember& member : members) {
    json.begin_object();
    json.key("path").value(member.path);
    json.key("size").value(member.size);
    json.key("sha256").value(member.sha256);
    json.key("status").value(member_status(*this, member));
    json.end_object();
  }
  json.end_array();
  json.key("problems").begin_array();
  for (const LabKitProblem& problem : problems) {
    json.begin_object();
    json.key("kind").value(to_string(problem.kind));
    json.key("member").value(problem.member);
    json.key("message").value(problem.message);
    json.end_object();
  }
  json.end_array();
  return json.finish();
}

}  // namespace iteragpu
