// The node's checkpoints, by name (ARCHITECTURE.md: checkpoints are named objects held by
// the monitor, "before", "after3", ...): what create, receive, wait_for and merge make, and
// what inject, send and broadcast use. With --keep-checkpoints each one made is also written
// as DIR/<node>.<sequence>.<name>.dickpt.
#pragma once

#include <map>
#include <string>

#include "ckpt/checkpoint.h"

namespace cape::monitor {

class CheckpointStore {
 public:
  explicit CheckpointStore(int rank) : rank_(rank) {}
  // --keep-checkpoints DIR ("" = keep none): throws UserError when DIR cannot be made a
  // directory.
  void keep_in(const std::string& dir);

  // --load NAME=FILE: throws UserError naming both when the file is not a checkpoint.
  void load(const std::string& name, const std::string& file);
  // The checkpoint `name`; UserError naming `call` and the node when there is none.
  ckpt::Checkpoint& lookup(const std::string& name, const char* call);
  ckpt::Checkpoint* find(const std::string& name);
  void put(const std::string& name, ckpt::Checkpoint c) { by_name_[name] = std::move(c); }

  // Makes `c` this node's next checkpoint named `name`: node, sequence, name (the caller
  // sets load_base).
  void stamp(ckpt::Checkpoint& c, const std::string& name);
  // Writes `c` into the keep directory, if there is one.
  void keep(const ckpt::Checkpoint& c) const;

 private:
  int rank_;
  std::string keep_dir_;
  uint64_t sequence_ = 0;  // checkpoints made (created or merged) so far
  std::map<std::string, ckpt::Checkpoint> by_name_;
};

}  // namespace cape::monitor
