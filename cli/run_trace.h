// `cape run --trace FILE`: every node writes its own part (FILE.node<R>.json, with the job's
// time 0 so the tracks line up: monitor/trace.h), and `cape run` joins them into FILE once
// the job has ended. Nodes on other hosts write their part there (same path: the SSH
// launcher keeps the working directory); FILE then says which parts are missing.
#pragma once

#include <string>
#include <vector>

namespace cape::cli {

class RunTrace {
 public:
  // path "" = off. Throws UserError when FILE's directory does not exist (before any node starts).
  RunTrace(const std::string& path, int nodes);
  // The options every `cape node` gets.
  void add_node_options(std::vector<std::string>& node_args) const;
  // Joins the parts into FILE and removes them; says which are missing.
  void merge() const;

 private:
  std::string path_;
  int nodes_;
  long long epoch_us_ = 0;
};

}  // namespace cape::cli
