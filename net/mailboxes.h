// Checkpoints that have arrived and wait to be asked for: one FIFO queue per name, each
// entry with its sender (docs/net.md). Early arrivals wait here, and names are reused region
// after region: wait_for takes at most one part per slave, so a fast slave's next part stays
// queued. No lock of its own: the Node's mutex guards it.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "ckpt/checkpoint.h"
#include "net/frame.h"

namespace cape::net {

struct Mail {
  int from = -1;
  Buffer frame;       // the whole checkpoint frame payload
  size_t offset = 0;  // where the DICKPT bytes start
};

class Mailboxes {
 public:
  void put(const std::string& name, Mail m) { queues_[name].push_back(std::move(m)); }
  // The oldest checkpoint named `name`, from anyone.
  std::optional<Mail> take(const std::string& name);
  // The oldest checkpoint named `name` from one of `senders`.
  std::optional<Mail> take_from(const std::string& name, const std::set<int>& senders);

 private:
  std::map<std::string, std::deque<Mail>, std::less<>> queues_;
};

// The checkpoint in `m`. Throws ckpt::Error when it does not parse.
ckpt::Checkpoint open_mail(Mail&& m, const std::string& name);

}  // namespace cape::net
