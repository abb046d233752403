// File name patterns of file-based series and the validation of untrusted object paths.
#include "openpmd/format/series_layout.hpp"

#include <charconv>
#include <stdexcept>

namespace slipstream::openpmd {
namespace {

bool printable(char c) { return c >= ' ' && c <= '~'; }

std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 80)) out += printable(c) ? c : '?';
  if (text.size() > 80) out += "...";
  return out;
}

}  // namespace

std::string_view encoding_name(Encoding encoding) noexcept {
  return encoding == Encoding::kFileBased ? "fileBased" : "groupBased";
}

std::optional<FilePattern> FilePattern::parse(const std::string& path) {
  const std::size_t percent = path.find('%');
  if (percent == std::string::npos) return std::nullopt;
  // %T or %0<N>T: the digits (if any) must start with 0, as openPMD-api writes them.
  std::size_t end = percent + 1;
  while (end < path.size() && path[end] >= '0' && path[end] <= '9') ++end;
  const std::string_view digits(path.data() + percent + 1, end - percent - 1);
  if (end >= path.size() || path[end] != 'T' || (!digits.empty() && digits[0] != '0')) {
    throw std::invalid_argument("'" + shown(path) +
                                "' has a '%' that is not an iteration placeholder (%T or %06T)");
  }
  FilePattern pattern;
  pattern.text_ = path;
  pattern.before_ = path.substr(0, percent);
  pattern.after_ = path.substr(end + 1);
  if (digits.size() > 1) {
    std::from_chars(digits.data() + 1, digits.data() + digits.size(), pattern.width_);
    if (pattern.width_ > 19) {
      throw std::invalid_argument("'" + shown(path) + "' pads iterations to more than 19 digits");
    }
  }
  if (pattern.after_.find('%') != std::string::npos) {
    throw std::invalid_argument("'" + shown(path) + "' has more than one '%'; expected one %T");
  }
  if (pattern.after_.find('/') != std::string::npos) {
    throw std::invalid_argument("'" + shown(path) +
                                "' has %T in a directory name; expected it in the file name");
  }
  return pattern;
}

std::string FilePattern::expand(std::int64_t iteration) const {
  std::string number = std::to_string(iteration);
  if (number.size() < width_) number.insert(0, width_ - number.size(), '0');
  return before_ + number + after_;
}

std::optional<std::int64_t> FilePattern::match(std::string_view file_name) const {
  const std::size_t slash = before_.rfind('/');
  const std::string_view prefix =
      slash == std::string::npos ? std::string_view(before_)
                                 : std::string_view(before_).substr(slash + 1);
  if (file_name.size() <= prefix.size() + after_.size() || !file_name.starts_with(prefix) ||
      !file_name.ends_with(after_)) {
    return std::nullopt;
  }
  const std::string_view digits =
      file_name.substr(prefix.size(), file_name.size() - prefix.size() - after_.size());
  if (width_ > 0 && digits.size() < width_) return std::nullopt;
  std::int64_t iteration = 0;
  auto [rest, error] = std::from_chars(digits.data(), digits.data() + digits.size(), iteration);
  if (error != std::errc() || rest != digits.data() + digits.size() || iteration < 0 ||
      digits[0] == '-' || digits[0] == '+') {
    return std::nullopt;
  }
  return iteration;
}

std::string FilePattern::directory() const {
  const std::size_t slash = before_.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : before_.substr(0, slash);
}

std::vector<std::string> split_object_path(std::string_view path) {
  auto refuse = [&](std::string_view why) {
    throw std::invalid_argument("'" + shown(path) + "' is not a path inside an iteration (" +
                                std::string(why) + "); expected segments such as meshes/E/x");
  };
  if (path.empty()) refuse("it is empty");
  if (path.front() == '/') refuse("it starts with '/'");
  for (char c : path) {
    if (!printable(c) || c == ' ') refuse("it has a space or a character that is not printable");
  }
  std::vector<std::string> segments;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t slash = path.find('/', begin);
    const std::string_view segment = path.substr(begin, slash - begin);
    if (segment.empty()) refuse("it has an empty segment");
    if (segment == "." || segment == "..") refuse("it has a '.' or '..' segment");
    segments.emplace_back(segment);
    if (slash == std::string_view::npos) break;
    begin = slash + 1;
  }
  return segments;
}

void check_attribute_name(std::string_view name) {
  if (name.empty()) throw std::invalid_argument("an attribute name is empty");
  for (char c : name) {
    if (!printable(c) || c == '/') {
      throw std::invalid_argument("attribute name '" + shown(name) +
                                  "' has a '/' or a character that is not printable");
    }
  }
}

}  // namespace slipstream::openpmd
