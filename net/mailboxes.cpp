#include "net/mailboxes.h"

#include "ckpt/format.h"

namespace cape::net {

std::optional<Mail> Mailboxes::take(const std::string& name) {
  auto it = queues_.find(name);
  if (it == queues_.end() || it->second.empty()) return std::nullopt;
  Mail m = std::move(it->second.front());
  it->second.pop_front();
  return m;
}

std::optional<Mail> Mailboxes::take_from(const std::string& name, const std::set<int>& senders) {
  auto it = queues_.find(name);
  if (it == queues_.end()) return std::nullopt;
  for (auto q = it->second.begin(); q != it->second.end(); ++q) {
    if (!senders.count(q->from)) continue;  // a later region's part from a fast slave
    Mail m = std::move(*q);
    it->second.erase(q);
    return m;
  }
  return std::nullopt;
}

ckpt::Checkpoint open_mail(Mail&& m, const std::string& name) {
  // The frame's payload hash (checked on arrival) covers these bytes end to end, so the
  // sender leaves the file's own checksum out (0) and it is not checked here; the structure
  // is.
  ckpt::Checkpoint ck = ckpt::parse(std::move(m.frame), m.offset, {.verify_checksum = false});
  if (ck.name.empty()) ck.name = name;
  return ck;
}

}  // namespace cape::net
