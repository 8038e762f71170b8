// A tick: a SIGSTOP the monitor sends its own program, queued (SI_QUEUE) through a pidfd with
// a value that says what it is for, recognised by the supervisor at its signal-delivery stop
// and never delivered (the program goes on as if nothing happened). Two senders:
// cape1_calls.h's periodic checkpoints (--checkpoint-every) and lease_words.h's leases asked
// back while the program computes without runtime calls. Through a pidfd: a tick never
// reaches another process that got the program's number after it ended.
#pragma once

#include <signal.h>

namespace cape::monitor {

// Sends a tick carrying `value`; false when the kernel refused it (errno says why).
bool send_tick(int pidfd, int value);
// `si` (a stop's siginfo) is a tick this monitor sent with `value`.
bool is_tick(const siginfo_t& si, int value);

}  // namespace cape::monitor
