#pragma once

// Untrusted text made safe to print: file names that came from the network
// or from a disk, a peer's REJECT message, an HTTP reason phrase. Raw, such
// text can drive a terminal (escape sequences, carriage returns that
// overwrite a line, bidirectional overrides that reorder one) or stop a JSON
// encoder that expects UTF-8. printable() keeps valid, printable UTF-8 as it
// is and escapes the rest, so that the result is valid UTF-8 with no control
// character and different inputs never print the same.

#include <string>
#include <string_view>

namespace tinytcp {

// `text` with, escaped: a backslash as "\\"; newline, carriage return and
// tab as "\n", "\r", "\t"; every other C0 control, DEL and every byte that
// is not part of valid UTF-8 (overlong forms, surrogates and code points
// past U+10FFFF included) as "\xNN"; C1 controls (U+0080-U+009F) and the
// bidirectional controls U+200E, U+200F, U+202A-U+202E, U+2066-U+2069 as
// "\u{XXXX}". Everything else is copied.
std::string printable(std::string_view text);

// True when `text` is valid UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text);

}  // namespace tinytcp
