// Helpers for tests that run whole jobs: a child process with captured output and a time
// bound, temporary directories, and finding a job's processes by a unique argument.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace cape::net::test {

struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

class Proc {
 public:
  // argv[0] is looked up on PATH; stdout and stderr go to files in `dir`.
  static Proc start(const std::vector<std::string>& argv, const std::string& dir,
                    const std::vector<std::string>& extra_env = {});
  // The exit code (128+signal when killed); kills the process group after `bound` and fails.
  int wait(std::chrono::milliseconds bound);
  std::string out() const;
  std::string err() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
};

std::string unique_token();
std::string read_file(const std::string& path);
bool wait_for_text(const std::string& path, const std::string& text, std::chrono::milliseconds bound);
std::vector<pid_t> processes_with(const std::string& token);  // any argument equal to token
bool wait_until_gone(const std::string& token, std::chrono::milliseconds bound);
// Processes (not this one) whose cwd or an open file is `dir` or inside it.
std::vector<pid_t> processes_using(const std::string& dir);
std::vector<std::string> cmdline(pid_t pid);
pid_t parent_of(pid_t pid);
int free_port();

}  // namespace cape::net::test
