// Hostile inputs and faults against the whole command, one class per test: FIFOs, devices,
// directories and symbolic links where a file is expected; JSON nested a million levels;
// measurements that are not measurements; standard output closed or full; signals in the
// middle of a write; lines of megabytes and numbers of thousands of digits. Each must end in
// one clear line, a documented exit code, nothing lost and nothing left behind, and within
// a few seconds (every command runs under `timeout`, so a hang fails instead of blocking).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <chrono>
#include <thread>

#include "process_runner.hpp"
#include "tiny_checkpoint.hpp"

namespace iteragpu::testing {
namespace {

constexpr int kTimedOut = 124;  // timeout(1)'s status: the command hung

std::string example_measurement() {
  return read_file(std::string(ITERAGPU_SOURCE_DIR) + "/examples/results/mesures-petit-essai.json");
}

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

class FaultInjection : public ::testing::Test {
 protected:
  // The CLI under timeout(1), through a shell when `shell_prefix` redirects or closes a stream.
  ProcessResult cli(const std::vector<std::string>& args, const std::string& shell_prefix = "") {
    std::string command = shell_prefix + " exec timeout 20 " + quoted(ITERAGPU_CLI_PATH);
    for (const auto& arg : args) command += " " + quoted(arg);
    return run_process({"/bin/sh", "-c", command}, {{"ITERAGPU_BACKEND", "/nonexistent/plugin.so"}});
  }
  static std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  // Exit 2, exactly one line on stderr containing `expected`, nothing on stdout.
  static void expect_refused(const ProcessResult& r, const std::string& expected) {
    EXPECT_NE(r.exit_code, kTimedOut) << "the command hung";
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  std::string fifo(const std::string& name) {
    const std::string path = dir_.file(name);
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  std::vector<std::string> add_args(const std::string& table, const std::string& measurement) const {
    return {"results", "add", "--table", table, "--measurement", measurement, "--gpu", "b200",
            "--days", "7", "--work-unit", "labelled image", "--attempted", "10", "--accepted", "3",
            "--metric", "IoU", "--threshold", ">= 0.8", "--observed", "0.84", "--date", "2026-12-01",
            "--gpu-mismatch-ok"};  // the H200 example against a B200 package
  }
  std::string measurement() {
    const std::string path = dir_.file("m.json");
    if (!path_exists(path)) write_file(path, example_measurement());
    return path;
  }
  std::vector<std::string> leftovers(const std::string& directory) const {
    std::vector<std::string> found;
    for (const auto& name : list_directory(directory))
      if (name.find(".tmp-") != std::string::npos) found.push_back(name);
    return found;
  }
  TempDir dir_;
};

// --- readers: what stands where a file is expected ----------------------------------------

TEST_F(FaultInjection, FifosAsInputsAreRefusedWithoutHanging) {
  expect_refused(cli({"results", "check", "--table", fifo("table.csv")}), "is a FIFO");
  expect_refused(cli(add_args(dir_.file("new.csv"), fifo("m.fifo"))), "is a FIFO");
  expect_refused(cli({"packages", "--list", "--catalog", fifo("catalog.csv")}), "is a FIFO");
  const std::string kit = dir_.file("kit");
  mkdir(kit.c_str(), 0755);
  ASSERT_EQ(mkfifo((kit + "/MANIFEST.json").c_str(), 0600), 0);
  expect_refused(cli({"kit", "verify", kit}), "is a FIFO");
  // A FIFO as the table of an add: refused, and the lock it took is released.
  expect_refused(cli(add_args(fifo("table-fifo.csv"), measurement())), "is a FIFO");
  EXPECT_EQ(cli(add_args(dir_.file("after.csv"), measurement())).exit_code, 0);
}

TEST_F(FaultInjection, DevicesAsInputsAreRefusedWithoutGrowing) {
  expect_refused(cli(add_args(dir_.file("t.csv"), "/dev/zero")), "character device");
  expect_refused(cli({"results", "check", "--table", "/dev/zero"}), "character device");
  expect_refused(cli({"packages", "--list", "--catalog", "/dev/urandom"}), "character device");
}

TEST_F(FaultInjection, DirectoriesAsInputsAreCalledDirectories) {
  expect_refused(cli({"results", "check", "--table", dir_.path()}), "is a directory");
  const std::string kit = dir_.file("kit");
  mkdir(kit.c_str(), 0755);
  mkdir((kit + "/MANIFEST.json").c_str(), 0755);
  expect_refused(cli({"kit", "verify", kit}), "is a directory");
  expect_refused(cli(add_args(dir_.file("t.csv"), dir_.path())), "is a directory");
}

TEST_F(FaultInjection, JsonNestedAMillionLevelsIsRefusedNotACrash) {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  write_file(dir_.file("deep.json"), deep);
  expect_refused(cli(add_args(dir_.file("t.csv"), dir_.file("deep.json"))), "nested more than 64 levels");
  const std::string kit = dir_.file("kit");
  mkdir(kit.c_str(), 0755);
  write_file(kit + "/MANIFEST.json", "{\"members\": " + deep + "}");
  expect_refused(cli({"kit", "verify", kit}), "nested more than 64 levels");
}

TEST_F(FaultInjection, OnlyAWholeMeasurementIsAcceptedAsOne) {
  write_file(dir_.file("fake.json"), "{\"schema\":\"iteragpu.measurement\"}");
  expect_refused(cli(add_args(dir_.file("t.csv"), dir_.file("fake.json"))), "is not an iteragpu measurement");
  std::string truncated = example_measurement();
  truncated.resize(truncated.size() / 2);
  write_file(dir_.file("half.json"), truncated);
  expect_refused(cli(add_args(dir_.file("t.csv"), dir_.file("half.json"))), "not valid JSON");
  EXPECT_FALSE(path_exists(dir_.file("t.csv")));
  EXPECT_EQ(cli(add_args(dir_.file("t.csv"), measurement())).exit_code, 0);
}

TEST_F(FaultInjection, AManifestReachedThroughASymbolicLinkIsRefused) {
  const std::string kit = dir_.file("kit"), outside = dir_.file("outside.json");
  mkdir(kit.c_str(), 0755);
  write_file(outside, "{}");
  ASSERT_EQ(symlink(outside.c_str(), (kit + "/MANIFEST.json").c_str()), 0);
  expect_refused(cli({"kit", "verify", kit}), "is a symbolic link");
}

TEST_F(FaultInjection, DanglingSymbolicLinksAreNamed) {
  const std::string link = dir_.file("table.csv");
  ASSERT_EQ(symlink(dir_.file("nowhere.csv").c_str(), link.c_str()), 0);
  expect_refused(cli({"results", "check", "--table", link}), "does not exist");
  expect_refused(cli(add_args(link, measurement())), "symbolic link to a file that does not exist");
  struct stat status {};
  ASSERT_EQ(lstat(link.c_str(), &status), 0);
  EXPECT_TRUE(S_ISLNK(status.st_mode)) << "the link was replaced";
}

TEST_F(FaultInjection, LinesOfMegabytesAndNulBytesAreRefusedQuickly) {
  const std::string shipped = read_file(std::string(ITERAGPU_SOURCE_DIR) + "/data/tarifs-forfaits.csv");
  write_file(dir_.file("long.csv"), shipped + std::string(8 << 20, 'x') + "\n");
  const ProcessResult long_line = cli({"packages", "--list", "--catalog", dir_.file("long.csv")});
  EXPECT_EQ(long_line.exit_code, 2) << long_line.err;
  EXPECT_EQ(line_count(long_line.err), 1u);
  write_file(dir_.file("nul.csv"), shipped + std::string("b200,7,1,2,1", 12) + std::string(1, '\0') + "\n");
  const ProcessResult nul = cli({"packages", "--list", "--catalog", dir_.file("nul.csv")});
  EXPECT_EQ(nul.exit_code, 2) << nul.err;
  EXPECT_EQ(line_count(nul.err), 1u);
}

TEST_F(FaultInjection, NumbersOfThousandsOfDigits) {
  const std::string digits(5000, '9');
  expect_refused(cli({"predict", "--compute-capability", "9.0", "--batch", digits}), "--batch");
  expect_refused(cli({"estimate", "--parameters", digits, "--bits", "16"}), "value too long");
  // Up to the documented 1,000 characters the arithmetic is exact: a valid, huge estimate.
  const ProcessResult estimate = cli({"estimate", "--parameters", std::string(900, '9'), "--bits", "16"});
  EXPECT_EQ(estimate.exit_code, 0) << estimate.err;
  EXPECT_NE(estimate.out.find("bytes"), std::string::npos);
}

// --- writers: where the output goes, and what interrupts it --------------------------------

TEST_F(FaultInjection, ATableReachedThroughASymbolicLinkIsUpdatedThereAndKeepsItsMode) {
  const std::string real = dir_.file("real.csv"), link = dir_.file("link.csv");
  ASSERT_EQ(cli(add_args(real, measurement())).exit_code, 0);
  ASSERT_EQ(chmod(real.c_str(), 0600), 0);
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  const ProcessResult added = cli(add_args(link, measurement()));
  ASSERT_EQ(added.exit_code, 0) << added.err;
  struct stat status {};
  ASSERT_EQ(lstat(link.c_str(), &status), 0);
  EXPECT_TRUE(S_ISLNK(status.st_mode)) << "the link was replaced by a file";
  ASSERT_EQ(stat(real.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0600u);
  EXPECT_EQ(line_count(read_file(real)), 3u);  // header and two rows
  EXPECT_TRUE(leftovers(dir_.path()).empty());
}

TEST_F(FaultInjection, ClosedOrFullStandardOutput) {
  // Nothing committed: exit 2 and one line naming the stream.
  for (const std::string& redirect : {std::string("exec >&-;"), std::string("exec >/dev/full;")}) {
    const ProcessResult estimate = cli({"estimate", "--parameters", "7B", "--bits", "16"}, redirect);
    EXPECT_EQ(estimate.exit_code, 2) << redirect << estimate.err;
    EXPECT_EQ(line_count(estimate.err), 1u) << estimate.err;
    EXPECT_NE(estimate.err.find("standard output"), std::string::npos) << estimate.err;
    const ProcessResult packages = cli({"packages", "--list"}, redirect);
    EXPECT_EQ(packages.exit_code, 2) << redirect << packages.err;
  }
  // Committed: the row stays added, success with a warning, so a retry adds nothing twice.
  const std::string table = dir_.file("t.csv");
  const ProcessResult added = cli(add_args(table, measurement()), "exec >/dev/full;");
  EXPECT_EQ(added.exit_code, 0) << added.err;
  EXPECT_NE(added.err.find("warning: the row was added"), std::string::npos) << added.err;
  EXPECT_EQ(line_count(read_file(table)), 2u);
  // The same in JSON: the row stays added, the document that could not be printed is warned of.
  std::vector<std::string> json_add = add_args(table, measurement());
  json_add.insert(json_add.end(), {"--format", "json"});
  const ProcessResult added_json = cli(json_add, "exec >/dev/full;");
  EXPECT_EQ(added_json.exit_code, 0) << added_json.err;
  EXPECT_NE(added_json.err.find("warning: the row was added"), std::string::npos) << added_json.err;
  EXPECT_EQ(line_count(read_file(table)), 3u);
  const ProcessResult checked = cli({"results", "check", "--table", table, "--format", "json"}, "exec >&-;");
  EXPECT_EQ(checked.exit_code, 2) << checked.err;
  EXPECT_EQ(line_count(checked.err), 1u) << checked.err;
  const ProcessResult report = cli({"environment", "--output", dir_.file("env.json")}, "exec >&-;");
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_TRUE(path_exists(dir_.file("env.json")));
}

TEST_F(FaultInjection, AClosedPipeIsAnErrorNotASilentDeath) {
  const ProcessResult r = run_process(
      {"/bin/sh", "-c", "timeout 20 " + quoted(ITERAGPU_CLI_PATH) + " packages --list | true; echo $? >&2"});
  // The status of the CLI is not the pipeline's; what matters is that the shell returns.
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(FaultInjection, OutputsThatAreDirectoriesOrCannotBeCreated) {
  expect_refused(cli({"environment", "--output", dir_.path()}), "already exists");
  expect_refused(cli({"environment", "--output", "/dev/full/report.json"}), "Not a directory");
  expect_refused(cli(add_args(dir_.file("no/such/folder/t.csv"), measurement())), "does not exist");
}

// Interrupts an add of a large table again and again, at different moments: the table is
// always the old one or the new one, and no temporary file survives, not even a SIGKILL's
// (the next writer removes it).
TEST_F(FaultInjection, SignalsInTheMiddleOfAWriteLeaveNoTemporaryFileAndNoDamage) {
  const std::string table = dir_.file("big.csv");
  ASSERT_EQ(cli(add_args(table, measurement())).exit_code, 0);
  std::string content = read_file(table);
  const std::string row = content.substr(content.find('\n') + 1);
  std::string big = content;
  while (big.size() < (6u << 20)) big += row;  // several MB: the write takes a while
  write_file(table, big);
  std::size_t rows_before = line_count(big);

  std::size_t interrupted = 0;
  for (int signal_number : {SIGINT, SIGTERM, SIGKILL}) {
    for (int delay_ms : {2, 10, 30, 60, 120}) {
      std::vector<std::string> argv = add_args(table, measurement());
      const pid_t child = fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        std::vector<char*> raw;
        std::string program = ITERAGPU_CLI_PATH;
        raw.push_back(program.data());
        for (auto& arg : argv) raw.push_back(arg.data());
        raw.push_back(nullptr);
        execv(program.c_str(), raw.data());
        _exit(127);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      kill(child, signal_number);
      int status = 0;
      waitpid(child, &status, 0);
      if (WIFSIGNALED(status)) ++interrupted;
      const std::size_t rows_now = line_count(read_file(table));
      EXPECT_TRUE(rows_now == rows_before || rows_now == rows_before + 1) << rows_now;
      if (signal_number != SIGKILL) EXPECT_TRUE(leftovers(dir_.path()).empty()) << "after signal " << signal_number;
      rows_before = rows_now;
    }
  }
  EXPECT_GT(interrupted, 0u) << "no run was interrupted: the table is too small to catch one";
  // A SIGKILL may have left a temporary file; the next add removes it.
  ASSERT_EQ(cli(add_args(table, measurement())).exit_code, 0);
  EXPECT_TRUE(leftovers(dir_.path()).empty());
}

// The CLI on `args`, started in the background with `environment` added, its output to
// /dev/null; its pid (negative when fork failed).
pid_t start_cli(std::vector<std::string> args, const std::map<std::string, std::string>& environment) {
  const pid_t child = fork();
  if (child != 0) return child;
  for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> raw;
  std::string program = ITERAGPU_CLI_PATH;
  raw.push_back(program.data());
  for (auto& arg : args) raw.push_back(arg.data());
  raw.push_back(nullptr);
  const int null_fd = open("/dev/null", O_WRONLY);
  dup2(null_fd, STDOUT_FILENO);
  dup2(null_fd, STDERR_FILENO);
  execv(program.c_str(), raw.data());
  _exit(127);
}

// Runs `argv` (the CLI) `shots` times per interrupting signal, each time sending the signal
// a little later, from the start to 2 × `duration`; after each run `committed()` says
// whether the command's result is on disk, which must be exactly when it exited 0.
// Returns how many runs committed and how many did not.
std::pair<int, int> aim_signals(const std::vector<std::string>& args, std::chrono::microseconds duration,
                                int shots, const std::function<bool()>& committed,
                                const std::function<void()>& reset,
                                const std::map<std::string, std::string>& environment = {}) {
  int done = 0, undone = 0;
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    for (int shot = 0; shot < shots; ++shot) {
      reset();
      const pid_t child = start_cli(args, environment);
      if (child < 0) {
        ADD_FAILURE() << "fork failed";
        return {done, undone};
      }
      // From the start to twice the calibrated duration: a loaded machine runs the command
      // slower than it did when calibrated, and the late shots must still land after the end.
      std::this_thread::sleep_for(duration * shot * 2 / shots);
      kill(child, signal_number);
      int status = 0;
      waitpid(child, &status, 0);
      const bool success = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      const bool on_disk = committed();
      EXPECT_EQ(success, on_disk) << "signal " << signal_number << " at shot " << shot << ": "
                                  << (on_disk ? "the result is there, yet " : "no result, yet ")
                                  << (WIFSIGNALED(status) ? "ended by signal " + std::to_string(WTERMSIG(status))
                                                          : "exit " + std::to_string(WEXITSTATUS(status)));
      on_disk ? ++done : ++undone;
    }
  }
  return {done, undone};
}

std::chrono::microseconds time_of(const std::function<void()>& action) {
  const auto start = std::chrono::steady_clock::now();
  action();
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
}

// An interrupt aimed at every moment of `results add`, from its start to past its end: the
// exit status must say what the table says. A row in the table with a failing status would
// make a user who retries add it twice; a success without the row would lose it.
TEST_F(FaultInjection, TheExitStatusNeverContradictsTheTableUnderSignals) {
  const std::string table = dir_.file("t.csv");
  ASSERT_EQ(cli(add_args(table, measurement())).exit_code, 0);
  const std::string content = read_file(table);
  const std::string row = content.substr(content.find('\n') + 1);
  std::string big = content;
  while (big.size() < (2u << 20)) big += row;  // a write long enough to be hit in the middle
  write_file(table, big);
  const auto duration = time_of([&] { ASSERT_EQ(cli(add_args(table, measurement())).exit_code, 0); });
  std::size_t rows_before = 0;
  const auto [added, refused] = aim_signals(
      add_args(table, measurement()), duration, 40,
      [&] {
        const std::size_t rows_now = line_count(read_file(table));
        EXPECT_TRUE(rows_now == rows_before || rows_now == rows_before + 1) << rows_now;
        EXPECT_TRUE(leftovers(dir_.path()).empty());
        return rows_now == rows_before + 1;
      },
      [&] { rows_before = line_count(read_file(table)); });
  // The shots covered both outcomes: interrupted before the commit and let finish after it.
  EXPECT_GT(added, 0);
  EXPECT_GT(refused, 0);
}

// The same for `measure` (the worker publishes, the command reports) and `environment
// --output` (the command publishes): the file exists exactly when the status is 0.
TEST_F(FaultInjection, TheExitStatusNeverContradictsAPublishedFileUnderSignals) {
  const std::map<std::string, std::string> fake = {{"ITERAGPU_BACKEND", ITERAGPU_FAKE_BACKEND_PATH}};
  const std::string result = dir_.file("m.json");
  const std::vector<std::string> measure = {"measure", "--output", result, "--repeats", "20"};
  const auto remove_result = [&] { std::remove(result.c_str()); };
  const auto duration = time_of([&] {
    ASSERT_EQ(run_process({ITERAGPU_CLI_PATH, measure[0], measure[1], measure[2], measure[3], measure[4]}, fake)
                  .exit_code, 0);
  });
  const auto [measured, stopped] = aim_signals(measure, duration, 20, [&] { return path_exists(result); },
                                               remove_result, fake);
  EXPECT_GT(measured, 0);  // both outcomes were met: stopped before the commit, let finish after it
  EXPECT_GT(stopped, 0);
  EXPECT_TRUE(leftovers(dir_.path()).empty());

  const std::string report = dir_.file("env.json");
  const std::vector<std::string> environment = {"environment", "--output", report};
  const auto environment_time = time_of([&] {
    ASSERT_EQ(run_process({ITERAGPU_CLI_PATH, environment[0], environment[1], environment[2]}, fake).exit_code, 0);
  });
  aim_signals(environment, environment_time, 20, [&] { return path_exists(report); },
              [&] { std::remove(report.c_str()); }, fake);
  EXPECT_TRUE(leftovers(dir_.path()).empty());
}

// --- the measurement worker lives no longer than its command ---------------------------------

// The command started on `args` with the test double's GPU phases slowed to a minute each;
// returns its pid once its measurement worker runs (that worker's pid in `worker`).
pid_t start_slow_measure(const std::vector<std::string>& args, pid_t& worker) {
  const pid_t child = start_cli(args, {{"ITERAGPU_BACKEND", ITERAGPU_FAKE_BACKEND_PATH},
                                       {"ITERAGPU_FAKE_BACKEND", "delay=forward:60000"}});
  worker = 0;
  for (int tries = 0; tries < 500 && worker == 0; ++tries) {  // up to 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const std::string& name : list_directory("/proc")) {
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string stat;
      try {
        stat = read_file("/proc/" + name + "/stat");
      } catch (...) {
        continue;  // gone meanwhile
      }
      // "pid (comm) state ppid ...": the comm may hold spaces, the last ')' ends it.
      const std::size_t close = stat.rfind(')');
      if (stat.find("(iteragpu-measur") == std::string::npos || close == std::string::npos) continue;
      int parent = 0;
      char state = 0;
      if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &parent) == 2 && parent == child)
        worker = std::stoi(name);
    }
  }
  return child;
}

// Whether `pid` is gone or a zombie (ended, not yet reaped by whoever inherited it).
bool ended(pid_t pid) {
  std::string stat;
  try {
    stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  } catch (...) {
    return true;
  }
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z';
}

bool ends_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ended(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ended(pid);
}

// SIGKILL leaves the command no chance to stop its worker: the worker, in the middle of a
// minute-long GPU phase, ends with it all the same (its parent-death signal).
TEST_F(FaultInjection, KillingTheCommandEndsItsWorkerAtOnce) {
  pid_t worker = 0;
  const pid_t command = start_slow_measure({"measure", "--output", dir_.file("m.json")}, worker);
  ASSERT_GT(worker, 0) << "no measurement worker was seen";
  kill(command, SIGKILL);
  waitpid(command, nullptr, 0);
  EXPECT_TRUE(ends_within(worker, std::chrono::milliseconds(3000))) << "the worker outlived its command";
  EXPECT_TRUE(list_directory(dir_.path()).empty());
}

// SIGTERM or SIGINT to the command in the middle of a minute-long phase: the command and its
// worker end within seconds, exit 130, nothing written.
TEST_F(FaultInjection, TerminatingTheCommandStopsItsWorkerInTheMiddleOfAPhase) {
  for (int signal_number : {SIGTERM, SIGINT}) {
    pid_t worker = 0;
    const pid_t command = start_slow_measure({"measure", "--output", dir_.file("m.json")}, worker);
    ASSERT_GT(worker, 0) << "no measurement worker was seen";
    const auto sent = std::chrono::steady_clock::now();
    kill(command, signal_number);
    int status = 0;
    waitpid(command, &status, 0);
    const auto took = std::chrono::steady_clock::now() - sent;
    EXPECT_LT(took, std::chrono::seconds(5)) << "signal " << signal_number;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << "signal " << signal_number << ": " << status;
    EXPECT_TRUE(ends_within(worker, std::chrono::milliseconds(3000)));
    EXPECT_TRUE(list_directory(dir_.path()).empty());
  }
}

// A request whose counts are each within bounds but together past the work bound is refused
// before anything is planned (its time and memory: tests/bench/request_bound_bench.sh).
TEST_F(FaultInjection, AProductOfBoundedCountsIsRefusedAtOnce) {
  const std::string model = dir_.file("tiny");
  TinyCheckpoint().write(model);
  for (const char* command : {"predict", "packages", "measure"}) {
    std::vector<std::string> args = {command, "--model", model, "--warmup", "100000", "--repeats", "100000",
                                     "--new-tokens", "4000"};
    if (std::string(command) == "predict") args.insert(args.end(), {"--compute-capability", "9.0"});
    if (std::string(command) == "measure") args.insert(args.end(), {"--output", dir_.file("m.json")});
    expect_refused(cli(args), "800204003 phase rows");
  }
}

TEST_F(FaultInjection, NoCommandIsOneLine) {
  const ProcessResult r = cli({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("no command"), std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
