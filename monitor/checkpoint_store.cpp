#include "monitor/checkpoint_store.h"

#include <sys/stat.h>

#include "ckpt/format.h"
#include "util/error.h"
#include "util/files.h"

namespace cape::monitor {

namespace {
std::string sanitize(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (c == '/' || c == '\0') c = '_';
  return s;
}
}  // namespace

void CheckpointStore::keep_in(const std::string& dir) {
  keep_dir_ = dir;
  if (keep_dir_.empty()) return;
  // 0700: checkpoints hold the program's memory (ckpt::write_file makes them 0600).
  util::ensure_directory(keep_dir_, 0700, "--keep-checkpoints");
}

void CheckpointStore::load(const std::string& name, const std::string& file) {
  try {
    ckpt::Checkpoint c = ckpt::read_file(file);
    c.name = name;
    by_name_[name] = std::move(c);
  } catch (const ckpt::Error& e) {
    throw UserError("--load " + name + "=" + file + ": " + e.what());
  }
}

ckpt::Checkpoint& CheckpointStore::lookup(const std::string& name, const char* call) {
  auto it = by_name_.find(name);
  if (it == by_name_.end())
    throw UserError(std::string(call) + "(\"" + name + "\"): no checkpoint of that name on node " +
                    std::to_string(rank_));
  return it->second;
}

ckpt::Checkpoint* CheckpointStore::find(const std::string& name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

void CheckpointStore::stamp(ckpt::Checkpoint& c, const std::string& name) {
  c.node = static_cast<uint32_t>(rank_);
  c.sequence = ++sequence_;
  c.name = name;
}

void CheckpointStore::keep(const ckpt::Checkpoint& c) const {
  if (keep_dir_.empty()) return;
  std::string path = keep_dir_ + "/" + std::to_string(c.node) + "." + std::to_string(c.sequence) + "." +
                     sanitize(c.name) + ".dickpt";
  ckpt::write_file(c, path);
}

}  // namespace cape::monitor
