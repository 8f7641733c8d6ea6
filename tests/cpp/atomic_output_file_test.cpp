// publish_exclusively and DirectoryLock (mechanics/atomic_output_file.hpp), the two promises
// every result file rests on: a result is a new, whole file that never replaces anything
// (not a file, a folder or a symbolic link, dangling or not) and leaves no temporary file;
// and processes that update files in one folder take turns.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "iteragpu/error.hpp"
#include "mechanics/atomic_output_file.hpp"
#include "process_runner.hpp"
#include "thrown_exception.hpp"

namespace iteragpu::testing {
namespace {

std::vector<std::string> sorted_listing(const std::string& directory) {
  std::vector<std::string> names = list_directory(directory);
  std::sort(names.begin(), names.end());
  return names;
}

struct stat status_of(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(lstat(path.c_str(), &info), 0) << path;
  return info;
}

std::string link_target(const std::string& link) {
  char target[PATH_MAX];
  const ssize_t length = readlink(link.c_str(), target, sizeof target);
  return length < 0 ? std::string() : std::string(target, static_cast<std::size_t>(length));
}

// The process id of a process that has ended and been reaped: no process has it now.
pid_t ended_process_id() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& path) {
    if (!getcwd(previous_, sizeof previous_)) previous_[0] = '\0';
    EXPECT_EQ(chdir(path.c_str()), 0);
  }
  ~WorkingDirectory() {
    if (previous_[0] != '\0' && chdir(previous_) != 0) ADD_FAILURE() << "cannot return to " << previous_;
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  char previous_[PATH_MAX];
};

// --- publish_exclusively -------------------------------------------------------------------

TEST(PublishExclusively, WritesExactlyTheGivenBytes) {
  TempDir dir;
  const std::string binary("a\0b\xff\r\n\x1b", 7);
  std::string large(3 * 1024 * 1024 + 17, '\0');  // several write() calls' worth
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 31 % 251);
  publish_exclusively(dir.file("binary.bin"), binary);
  publish_exclusively(dir.file("large.bin"), large);
  publish_exclusively(dir.file("empty.json"), "");
  EXPECT_EQ(read_file(dir.file("binary.bin")), binary);
  EXPECT_EQ(read_file(dir.file("large.bin")), large);
  EXPECT_EQ(read_file(dir.file("empty.json")), "");
  EXPECT_EQ(status_of(dir.file("large.bin")).st_size, static_cast<off_t>(large.size()));
  // Only the results: the temporary names are gone, and each file has one name (nlink 1).
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"binary.bin", "empty.json", "large.bin"}));
  for (const char* name : {"binary.bin", "empty.json", "large.bin"}) {
    const struct stat info = status_of(dir.file(name));
    EXPECT_TRUE(S_ISREG(info.st_mode)) << name;
    EXPECT_EQ(info.st_nlink, 1u) << name;
  }
}

TEST(PublishExclusively, CreatesTheFileWithTheUsersUmask) {
  TempDir dir;
  const mode_t previous = umask(022);
  publish_exclusively(dir.file("shared.json"), "x");
  umask(077);
  publish_exclusively(dir.file("private.json"), "x");
  umask(previous);
  EXPECT_EQ(status_of(dir.file("shared.json")).st_mode & 07777, 0644u);
  EXPECT_EQ(status_of(dir.file("private.json")).st_mode & 07777, 0600u);
}

TEST(PublishExclusively, ARelativeNameLandsInTheWorkingDirectory) {
  TempDir dir;
  {
    const WorkingDirectory inside(dir.path());
    publish_exclusively("r.json", "relative\n");
  }
  EXPECT_EQ(read_file(dir.file("r.json")), "relative\n");
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"r.json"}));
}

TEST(PublishExclusively, RefusesAnExistingFileAndLeavesItUntouched) {
  TempDir dir;
  const std::string path = dir.file("r.json");
  write_file(path, "old content\n");
  const timespec old_times[2] = {{1000000000, 0}, {1000000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), old_times, 0), 0);
  const struct stat before = status_of(path);

  const Thrown thrown = thrown_by([&] { publish_exclusively(path, "new content\n"); });
  EXPECT_EQ(thrown.type, "OutputExists");
  EXPECT_EQ(thrown.message, path + " appeared while the result was being produced; it was left "
                                   "untouched and no result was written");

  const struct stat after = status_of(path);
  EXPECT_EQ(read_file(path), "old content\n");
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_nlink, 1u);
  EXPECT_EQ(after.st_mtim.tv_sec, 1000000000);
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"r.json"}));  // no temporary
}

TEST(PublishExclusively, RefusesAFolderAtThePath) {
  TempDir dir;
  const std::string folder = dir.file("r.json");
  ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
  EXPECT_EQ(thrown_by([&] { publish_exclusively(folder, "x"); }).type, "OutputExists");
  EXPECT_TRUE(S_ISDIR(status_of(folder).st_mode));
  EXPECT_TRUE(list_directory(folder).empty());
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"r.json"}));
}

TEST(PublishExclusively, NeverWritesThroughASymbolicLink) {
  TempDir dir;
  const std::string target = dir.file("target.json");
  write_file(target, "target\n");
  const std::string link = dir.file("link.json");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);

  const Thrown thrown = thrown_by([&] { publish_exclusively(link, "through the link\n"); });
  EXPECT_EQ(thrown.type, "OutputExists");
  EXPECT_EQ(thrown.message, link + " appeared while the result was being produced; it was left "
                                   "untouched and no result was written");
  EXPECT_EQ(read_file(target), "target\n");
  EXPECT_TRUE(S_ISLNK(status_of(link).st_mode));
  EXPECT_EQ(link_target(link), target);
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"link.json", "target.json"}));
}

TEST(PublishExclusively, NeverCreatesTheTargetOfADanglingLink) {
  TempDir dir;
  const std::string link = dir.file("link.json");
  ASSERT_EQ(symlink("nowhere.json", link.c_str()), 0);  // relative, dangling
  EXPECT_EQ(thrown_by([&] { publish_exclusively(link, "x"); }).type, "OutputExists");
  EXPECT_FALSE(path_exists(dir.file("nowhere.json")));
  EXPECT_EQ(link_target(link), "nowhere.json");
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"link.json"}));
}

TEST(PublishExclusively, RefusesAMissingFolderCreatingNothing) {
  TempDir dir;
  const Thrown missing = thrown_by([&] { publish_exclusively(dir.file("no/such/r.json"), "x"); });
  EXPECT_EQ(missing.type, "ResourceUnavailable");  // not OutputExists: nothing is there
  EXPECT_EQ(missing.message,
            "cannot create a temporary file in " + dir.file("no/such") + ": No such file or directory");

  write_file(dir.file("plain.txt"), "a file, not a folder");
  const Thrown not_a_folder = thrown_by([&] { publish_exclusively(dir.file("plain.txt/r.json"), "x"); });
  EXPECT_EQ(not_a_folder.type, "ResourceUnavailable");
  EXPECT_EQ(not_a_folder.message,
            "cannot create a temporary file in " + dir.file("plain.txt") + ": Not a directory");
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"plain.txt"}));
}

TEST(PublishExclusively, RefusesAnUnwritableFolderCreatingNothing) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: permission bits do not bind root";
  TempDir dir;
  const std::string locked = dir.file("locked");
  ASSERT_EQ(mkdir(locked.c_str(), 0555), 0);
  const Thrown thrown = thrown_by([&] { publish_exclusively(locked + "/r.json", "x"); });
  EXPECT_EQ(thrown.type, "ResourceUnavailable");
  EXPECT_EQ(thrown.message, "cannot create a temporary file in " + locked + ": Permission denied");
  EXPECT_TRUE(list_directory(locked).empty());
  chmod(locked.c_str(), 0755);  // so that TempDir can remove it
}

TEST(PublishExclusively, RefusesAnEmptyPathNamingTheOutputOption) {
  try {
    publish_exclusively("", "x");
    ADD_FAILURE() << "an empty path was accepted";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.field(), "output");
    EXPECT_EQ(error.reason(), "empty path; expected the name of a new file");
    EXPECT_EQ(std::string(error.what()), "--output: empty path; expected the name of a new file");
  }
}

// A writer killed with SIGKILL leaves ".<name>.tmp-<pid>-<n>"; the next writer of the same
// file removes those whose process is gone, and nothing else.
TEST(PublishExclusively, RemovesOnlyTemporariesOfWritersThatAreGone) {
  TempDir dir;
  const std::string gone = std::to_string(ended_process_id());
  const std::string self = std::to_string(getpid());
  const std::vector<std::string> kept = {
      ".r.json.tmp-" + self + "-999",   // this process's own
      ".r.json.tmp-1-0",                // a process that exists (init)
      ".other.json.tmp-" + gone + "-0", // another file's
      ".r.json.tmp-" + gone + "-x",     // not the temporary form
      "r.json.tmp-" + gone + "-0",      // not hidden: not a temporary name
  };
  for (const std::string& name : kept) write_file(dir.file(name), "keep");
  write_file(dir.file(".r.json.tmp-" + gone + "-0"), "stale");
  write_file(dir.file(".r.json.tmp-" + gone + "-12"), "stale");

  publish_exclusively(dir.file("r.json"), "fresh");

  std::vector<std::string> expected = kept;
  expected.push_back("r.json");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted_listing(dir.path()), expected);
  EXPECT_EQ(read_file(dir.file("r.json")), "fresh");
}

// Eight processes publish to the same name at once: exactly one succeeds, the file is that
// one's content whole, every other one is told OutputExists, and no temporary remains.
TEST(PublishExclusively, OneOfManyConcurrentWritersWinsWhole) {
  TempDir dir;
  const std::string path = dir.file("r.json");
  constexpr int kWriters = 8;
  int gate[2];
  ASSERT_EQ(pipe(gate), 0);
  std::vector<pid_t> writers;
  for (int i = 0; i < kWriters; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(gate[1]);
      char byte;
      if (read(gate[0], &byte, 1) != 0) _exit(5);  // waits until the gate closes
      try {
        publish_exclusively(path, std::string(1 << 20, static_cast<char>('a' + i)));
        _exit(0);
      } catch (const OutputExists&) {
        _exit(3);
      } catch (...) {
        _exit(4);
      }
    }
    writers.push_back(child);
  }
  close(gate[0]);
  close(gate[1]);  // opens the gate: every writer starts now
  int winner = -1, refused = 0;
  for (int i = 0; i < kWriters; ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(writers[static_cast<std::size_t>(i)], &status, 0), writers[static_cast<std::size_t>(i)]);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) {
      EXPECT_EQ(winner, -1) << "two writers succeeded";
      winner = i;
    } else {
      EXPECT_EQ(WEXITSTATUS(status), 3) << "writer " << i;
      ++refused;
    }
  }
  ASSERT_NE(winner, -1);
  EXPECT_EQ(refused, kWriters - 1);
  EXPECT_EQ(read_file(path), std::string(1 << 20, static_cast<char>('a' + winner)));
  EXPECT_EQ(sorted_listing(dir.path()), (std::vector<std::string>{"r.json"}));
}

// --- DirectoryLock -------------------------------------------------------------------------

// 0 when an exclusive lock on `directory` can be taken at once through a separate open of
// it (as another process would), else the errno (EWOULDBLOCK while someone holds it).
int try_lock(const std::string& directory) {
  const int fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  const int result = flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
  close(fd);  // releases it again
  return result;
}

// True when a byte arrives on `fd` within `milliseconds`.
bool byte_within(int fd, int milliseconds) {
  pollfd waiting{fd, POLLIN, 0};
  if (poll(&waiting, 1, milliseconds) != 1) return false;
  char byte = 0;
  return read(fd, &byte, 1) == 1;
}

TEST(DirectoryLock, LocksTheFolderNotTheFileUntilDestroyed) {
  TempDir dir, elsewhere;
  ASSERT_EQ(try_lock(dir.path()), 0);
  {
    const DirectoryLock lock(dir.file("t.csv"));  // the file need not exist
    EXPECT_EQ(try_lock(dir.path()), EWOULDBLOCK);
    EXPECT_EQ(try_lock(elsewhere.path()), 0);
    EXPECT_FALSE(path_exists(dir.file("t.csv")));
  }
  EXPECT_EQ(try_lock(dir.path()), 0);  // released on destruction
  EXPECT_TRUE(list_directory(dir.path()).empty());  // no lock file left behind
}

TEST(DirectoryLock, AnotherProcessWaitsUntilItIsReleased) {
  TempDir dir;
  int go[2], trying[2], got[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(trying), 0);
  ASSERT_EQ(pipe(got), 0);
  // Forked before the lock is taken: a child forked while it is held would share the lock's
  // open file description, and the lock would outlive this process's release.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char byte = 0;
    if (read(go[0], &byte, 1) != 1 || write(trying[1], &byte, 1) != 1) _exit(1);
    const DirectoryLock mine(dir.file("b.csv"));  // another file, the same folder
    if (write(got[1], &byte, 1) != 1) _exit(1);
    _exit(0);
  }
  auto lock = std::make_unique<DirectoryLock>(dir.file("a.csv"));
  const char byte = 'x';
  ASSERT_EQ(write(go[1], &byte, 1), 1);
  ASSERT_TRUE(byte_within(trying[0], 5000));
  EXPECT_FALSE(byte_within(got[0], 300)) << "the child took the lock while this process held it";
  lock.reset();
  const bool acquired = byte_within(got[0], 5000);
  EXPECT_TRUE(acquired) << "the child never got the lock after its release";
  if (!acquired) kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int fd : {go[0], go[1], trying[0], trying[1], got[0], got[1]}) close(fd);
}

TEST(DirectoryLock, AKilledHolderReleasesIt) {
  TempDir dir;
  int held[2];
  ASSERT_EQ(pipe(held), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const DirectoryLock lock(dir.file("t.csv"));
    const char byte = 'x';
    if (write(held[1], &byte, 1) != 1) _exit(1);
    for (;;) pause();
  }
  ASSERT_TRUE(byte_within(held[0], 5000));
  EXPECT_EQ(try_lock(dir.path()), EWOULDBLOCK);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(try_lock(dir.path()), 0);
  close(held[0]);
  close(held[1]);
}

// Writers reaching one file through different symbolic links take turns: the lock is on the
// folder that really holds the file.
TEST(DirectoryLock, LocksTheRealFolderBehindSymbolicLinks) {
  TempDir links, real;
  write_file(real.file("t.csv"), "a\n");
  ASSERT_EQ(symlink(real.file("t.csv").c_str(), links.file("t.csv").c_str()), 0);
  ASSERT_EQ(symlink(real.path().c_str(), links.file("folder").c_str()), 0);
  {
    const DirectoryLock lock(links.file("t.csv"));  // a link to an existing file
    EXPECT_EQ(try_lock(real.path()), EWOULDBLOCK);
    EXPECT_EQ(try_lock(links.path()), 0);
  }
  {
    const DirectoryLock lock(links.file("folder/new.csv"));  // a file not there yet
    EXPECT_EQ(try_lock(real.path()), EWOULDBLOCK);
    EXPECT_EQ(try_lock(links.path()), 0);
  }
  EXPECT_EQ(try_lock(real.path()), 0);
}

TEST(DirectoryLock, ARelativeNameLocksTheWorkingDirectory) {
  TempDir dir;
  const WorkingDirectory inside(dir.path());
  const DirectoryLock lock("t.csv");
  EXPECT_EQ(try_lock(dir.path()), EWOULDBLOCK);
}

TEST(DirectoryLock, RefusesAMissingFolderNamingThePath) {
  TempDir dir;
  const std::string missing = dir.file("no/such/t.csv");
  const Thrown thrown = thrown_by([&] { DirectoryLock lock(missing); });
  EXPECT_EQ(thrown.type, "ResourceUnavailable");
  EXPECT_EQ(thrown.message, "cannot open the directory of " + missing + ": No such file or directory");
  write_file(dir.file("plain.txt"), "x");
  const std::string under_a_file = dir.file("plain.txt/t.csv");
  EXPECT_EQ(thrown_by([&] { DirectoryLock lock(under_a_file); }).message,
            "cannot open the directory of " + under_a_file + ": Not a directory");
}

}  // namespace
}  // namespace iteragpu::testing
