// See run_trace.h.
#include "cli/run_trace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "monitor/trace.h"
#include "util/error.h"

namespace cape::cli {

namespace {

std::string part_path(const std::string& path, const std::string& rank) { return path + ".node" + rank + ".json"; }

}  // namespace

RunTrace::RunTrace(const std::string& path, int nodes) : path_(path), nodes_(nodes) {
  if (path_.empty()) return;
  if (path_.back() == '/') throw UserError("--trace wants a file name, got the directory '" + path_ + "'");
  // `cape node --trace` takes %r (one file per rank, under mpirun/srun); cape run writes one
  // joined file, and its parts' names already carry the rank: a %r here made parts named
  // `t.0.json.node%r.json` and a warning that the parts were missing.
  if (path_.find("%r") != std::string::npos)
    throw UserError("--trace " + path_ + ": cape run writes one file for the whole job, one track per node; give "
                    "it a name without %r (%r, one file per rank, is for `cape node --trace` under mpirun or srun)");
  // Absolute: the nodes' working directory is the same, but the parts' names are read here.
  if (path_[0] != '/') {
    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) throw UserError(errno_message("getcwd"));
    path_ = std::string(cwd) + "/" + path_;
  }
  std::string dir = path_.substr(0, path_.rfind('/'));
  struct stat st;
  if (::stat(dir.empty() ? "/" : dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UserError("--trace " + path + ": the directory " + dir + " does not exist (create it first)");
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw UserError("--trace " + path + " is a directory: give a file name (e.g. " + path + "/trace.json)");
  epoch_us_ = monitor::trace_now_us();
}

void RunTrace::add_node_options(std::vector<std::string>& node_args) const {
  if (path_.empty()) return;
  node_args.insert(node_args.end(), {"--trace", part_path(path_, "%r"), "--trace-epoch", std::to_string(epoch_us_)});
}

void RunTrace::merge() const {
  if (path_.empty()) return;
  std::vector<std::string> parts;
  for (int r = 0; r < nodes_; ++r) parts.push_back(part_path(path_, std::to_string(r)));
  std::vector<std::string> missing;
  try {
    missing = monitor::merge_trace_files(parts, path_);
  } catch (const UserError& e) {
    std::fprintf(stderr, "cape: --trace: %s\n", e.what());
    return;
  }
  for (const std::string& p : parts) ::unlink(p.c_str());
  for (const std::string& m : missing)
    std::fprintf(stderr, "cape: --trace: %s was not written here (a node on another host writes it there, or the "
                 "node ended before its program did); %s has the other nodes\n", m.c_str(), path_.c_str());
}

}  // namespace cape::cli
