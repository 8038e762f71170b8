// `cape ckpt dump` and `stat` of a complete checkpoint's process section (ckpt/process_image.h).
#pragma once

#include <string>

#include "ckpt/checkpoint.h"

namespace cape::cli {

void print_process(const ckpt::Checkpoint& c);      // text, after the header lines of dump
std::string process_json(const ckpt::Checkpoint& c);  // ",\"process\":{...}" or ""
void stat_process(const ckpt::Checkpoint& c);       // one line for stat

}  // namespace cape::cli
