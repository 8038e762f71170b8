// Text that came from elsewhere (a peer's host name, region or message, a checkpoint's name),
// made safe to print: a newline cannot forge a "cape:" line, an ANSI escape cannot reach the
// terminal (issue 16, item 5).
#pragma once

#include <string>
#include <string_view>

namespace cape::util {

// `s` with every byte outside printable ASCII (0x20..0x7e) written as \xNN. Printable input
// comes out unchanged, so escaping twice changes nothing.
std::string printable(std::string_view s);

// `s` as a JSON string, quotes included: `"` and `\` escaped, control bytes as \u00NN; with
// `ascii`, bytes from 0x7f up too (text from the program kept out of an ASCII file), else
// they pass as they are (UTF-8 stays UTF-8).
std::string json_quoted(std::string_view s, bool ascii = false);

}  // namespace cape::util
