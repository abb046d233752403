// Bounds check of a pickle's opcodes (see pickle_check.hpp). Argument formats from the pickle
// protocol (protocols 0-5): fixed-size integers, length-prefixed data, or newline-ended text.
#include "ml/pickle_check.hpp"

#include <cstdint>
#include <cstring>

namespace slipstream::ml {
namespace {

enum class Arg { kNone, kFixed, kCounted, kLine, kTwoLines, kUnknown };

struct Format {
  Arg arg = Arg::kUnknown;
  std::size_t size = 0;  // kFixed: argument bytes; kCounted: bytes of the length before the data
};

Format format_of(unsigned char op) {
  switch (op) {
    // No argument.
    case '(': case '.': case '0': case '1': case '2': case 'N': case 'R': case 'a': case 'b':
    case 'd': case '}': case 'e': case 'l': case ']': case 'o': case 's': case 't': case ')':
    case 'u': case 'Q': case 0x81: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89:
    case 0x8f: case 0x90: case 0x91: case 0x92: case 0x93: case 0x94: case 0x97: case 0x98:
      return {Arg::kNone, 0};
    // Fixed-size arguments.
    case 'K': case 'h': case 'q': case 0x80: case 0x82:
      return {Arg::kFixed, 1};
    case 'M': case 0x83:
      return {Arg::kFixed, 2};
    case 'J': case 'j': case 'r': case 0x84:
      return {Arg::kFixed, 4};
    case 'G': case 0x95:  // BINFLOAT; FRAME (its length only announces what follows)
      return {Arg::kFixed, 8};
    // Data preceded by its length.
    case 'U': case 'C': case 0x8a: case 0x8c:  // SHORT_BINSTRING/BINBYTES, LONG1, SHORT_BINUNICODE
      return {Arg::kCounted, 1};
    case 'T': case 'X': case 'B': case 0x8b:  // BINSTRING, BINUNICODE, BINBYTES, LONG4
      return {Arg::kCounted, 4};
    case 0x8d: case 0x8e: case 0x96:  // BINUNICODE8, BINBYTES8, BYTEARRAY8
      return {Arg::kCounted, 8};
    // Text up to a newline.
    case 'I': case 'L': case 'S': case 'V': case 'F': case 'P': case 'g': case 'p':
      return {Arg::kLine, 0};
    case 'c': case 'i':  // GLOBAL, INST: module and name lines
      return {Arg::kTwoLines, 0};
    default:
      return {};
  }
}

std::uint64_t little_endian(const char* p, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return value;
}

std::string at(std::size_t offset) { return " at byte " + std::to_string(offset); }

}  // namespace

std::optional<std::string> check_pickle_bounds(std::string_view pickle) {
  std::size_t pos = 0;
  std::uint64_t opcodes = 0;
  while (pos < pickle.size()) {
    const std::size_t start = pos;
    const auto op = static_cast<unsigned char>(pickle[pos++]);
    ++opcodes;
    const Format f = format_of(op);
    const std::size_t left = pickle.size() - pos;
    switch (f.arg) {
      case Arg::kUnknown:
        return "unknown pickle opcode 0x" +
               std::string(1, "0123456789abcdef"[op >> 4]) +
               std::string(1, "0123456789abcdef"[op & 15]) + at(start);
      case Arg::kNone:
        if (op == '.') return std::nullopt;  // STOP: what follows is not read
        break;
      case Arg::kFixed:
        if (left < f.size) return "pickle opcode argument runs past the end" + at(start);
        // BINPUT, LONG_BINPUT: picklers number memo entries from 0 as they store them, so an
        // entry's number is below the count of opcodes before it. libtorch grows its memo table
        // to the number it is given (16 bytes an entry): 2^32 - 1 asks for 64 GiB.
        if ((op == 'q' || op == 'r') && little_endian(pickle.data() + pos, f.size) >= opcodes) {
          return "pickle memo entry " + std::to_string(little_endian(pickle.data() + pos, f.size)) +
                 " after only " + std::to_string(opcodes - 1) + " opcodes" + at(start);
        }
        pos += f.size;
        break;
      case Arg::kCounted: {
        if (left < f.size) return "pickle length runs past the end" + at(start);
        std::uint64_t length = little_endian(pickle.data() + pos, f.size);
        if (op == 0x8b || op == 'T') length = static_cast<std::uint32_t>(length);  // signed
        if ((op == 0x8b || op == 'T') && (length & 0x80000000u)) {
          return "negative pickle length" + at(start);
        }
        pos += f.size;
        if (length > pickle.size() - pos) {
          return "pickle declares " + std::to_string(length) + " bytes where " +
                 std::to_string(pickle.size() - pos) + " remain" + at(start);
        }
        pos += static_cast<std::size_t>(length);
        break;
      }
      case Arg::kLine:
      case Arg::kTwoLines:
        for (int line = 0; line < (f.arg == Arg::kTwoLines ? 2 : 1); ++line) {
          const void* end = std::memchr(pickle.data() + pos, '\n', pickle.size() - pos);
          if (end == nullptr) return "pickle text argument without a line end" + at(start);
          pos = static_cast<std::size_t>(static_cast<const char*>(end) - pickle.data()) + 1;
        }
        break;
    }
  }
  return "pickle ends without STOP";
}

}  // namespace slipstream::ml
