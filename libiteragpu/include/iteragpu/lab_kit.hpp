#pragma once
// The lab kit (SPEC §6): one folder whose MANIFEST.json lists every member, with the size
// and SHA-256 of each content file but not of itself (a file cannot carry its own hash).
// The build system writes the kit (data/kit/); verify_lab_kit() checks an unpacked one.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace iteragpu {

// The manifest's file name inside a kit folder.
inline constexpr const char* kLabKitManifestName = "MANIFEST.json";

// One member as MANIFEST.json lists it. size and sha256 are absent for the manifest itself.
struct LabKitMember {
  std::string path;                   // file name inside the kit folder
  std::optional<std::uint64_t> size;  // bytes
  std::optional<std::string> sha256;  // 64 lower-case hex digits
};

enum class LabKitProblemKind {
  kMissing,           // listed, not in the folder
  kNotAFile,          // listed, but a directory, link or other non-regular file
  kSizeMismatch,      // listed size differs (the hash is then not compared)
  kHashMismatch,      // same size, different SHA-256
  kUnlisted,          // in the folder, not listed
  kManifestSelfHash,  // the manifest lists its own size or SHA-256
};

struct LabKitProblem {
  LabKitProblemKind kind;
  std::string member;   // file name inside the kit folder
  std::string message;  // one line naming the member: "LICENSE.txt: missing"
};

// "missing", "not_a_file", "size_mismatch", "hash_mismatch", "unlisted", "manifest_self_hash".
const char* to_string(LabKitProblemKind kind);

struct LabKitVerification {
  std::string kit_directory;
  std::string kit_name;               // the manifest's "kit"
  std::vector<LabKitMember> members;  // as listed, in manifest order
  // Listed members' problems in manifest order, then unlisted files by name.
  std::vector<LabKitProblem> problems;

  bool intact() const { return problems.empty(); }
  std::string to_json() const;  // schema "iteragpu.kit-verification"
  std::string to_text() const;
  // One line: "<dir>: N problem(s): <message>; <message>...", for an error on stderr.
  std::string problem_summary() const;
};

// Reads <kit_directory>/MANIFEST.json (schema "iteragpu.lab-kit-manifest") and checks the
// folder against it: every listed member present as a regular file with the listed size
// and SHA-256, no file or folder that is not listed, and no size or hash listed for the
// manifest itself. Problems are collected, not thrown. Throws ResourceUnavailable when the
// folder or its manifest is missing, DataFileError naming the manifest and the field when
// the manifest is malformed.
LabKitVerification verify_lab_kit(const std::string& kit_directory);

}  // namespace iteragpu
