// libFuzzer target for the RESP request parser (src/common/resp_parser.hpp). The input is a raw
// client byte stream; the target feeds it in pieces whose sizes derive from the input, drains every
// request, and checks the parser's contract. Run it with scripts/fuzz.sh.
//
// Checked on every input:
//   1. consumed <= offered bytes, and a completed request or error always consumes something;
//   2. no stall: after kNeedMore, what is left unconsumed is a partial header line, bounded by the
//      limits (the parser never asks the caller to buffer without bound);
//   3. requests respect the limits (argument count, bulk length, bytes of one request) and have at
//      least one argument;
//   4. the parser is idle() after every kRequest and kError;
//   5. split invariance: the requests and errors are the same when the stream arrives whole, in
//      random pieces, or with the bulk payloads written straight into pending_bulk() as a
//      connection does. Only the point where the stream turns fatal may differ, and only at the
//      end: a parser that holds fewer bytes may refuse an overlong header line sooner, while one
//      that holds them all may still be waiting for the rest of it;
//   6. after kFatal a fresh parser (a new connection) parses the rest of the stream cleanly;
//   7. every byte a parser reserved from the shared budget is given back once it is destroyed,
//      and a parser never holds more than the budget's capacity (plus its free bytes).
// The same holds with the limits before AUTH (fatal instead of skipped refusals) and with a small
// budget that other connections already partly hold.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/resp_parser.hpp"

namespace {

using slipstream::InputBudget;
using slipstream::RequestLimits;
using slipstream::RequestParser;
using Status = RequestParser::Status;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "resp_parser_fuzz: invariant violated: %s\n", what);
  std::abort();
}

void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

// Small limits, so short inputs reach the refusal and too-long paths.
RequestLimits small_limits() {
  RequestLimits limits;
  limits.max_bulk_len = 32;
  limits.max_args = 8;
  limits.max_inline_len = 48;
  limits.max_request_bytes = 64;
  return limits;
}

// The limits before AUTH, scaled down like small_limits().
RequestLimits small_limits_before_auth() {
  RequestLimits limits = small_limits();
  limits.max_args = 4;
  limits.max_bulk_len = 16;
  limits.unauthenticated = true;
  return limits;
}

// A budget of 48 bytes with 8 free per request, of which others hold 12: requests of a few dozen
// bytes are refused now (kError), larger ones can never fit (kFatal).
constexpr std::size_t kBudgetCapacity = 48, kBudgetFree = 8, kBudgetHeldByOthers = 12;

// A deterministic generator seeded from the input, for the piece sizes.
class SplitSizes {
 public:
  explicit SplitSizes(std::string_view data) {
    state_ = 0xcbf29ce484222325ULL;  // FNV-1a of the input
    for (unsigned char c : data) state_ = (state_ ^ c) * 0x100000001b3ULL;
    state_ |= 1;
  }
  // 1..2^k bytes, with k itself random, so both tiny and large pieces occur.
  std::size_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    const unsigned k = static_cast<unsigned>(state_ % 9);
    return 1 + static_cast<std::size_t>((state_ >> 8) % (std::size_t{1} << k));
  }

 private:
  std::uint64_t state_;
};

struct Event {
  Status status;
  std::vector<std::string> args;  // kRequest
  std::string error;              // kError
  bool operator==(const Event&) const = default;
};

enum class Mode { kWhole, kPieces, kDirect };

// Drives one parser over `data` the way a connection does and returns its events, stopping at
// the first kFatal. `fatal_at` receives the offset just past the bytes the fatal call consumed.
std::vector<Event> run_parser(std::string_view data, const RequestLimits& limits, Mode mode,
                              std::size_t* fatal_at, InputBudget* budget) {
  RequestParser parser(limits, budget);
  SplitSizes sizes(data);
  std::vector<Event> events;
  std::string buffered;  // offered but not yet consumed
  std::size_t offset = 0;
  std::size_t delivered = 0;  // bytes of `data` consumed so far
  const std::size_t header_bound = std::max<std::size_t>(limits.max_inline_len, 32) + 2;
  while (offset < data.size()) {
    std::size_t n =
        mode == Mode::kWhole ? data.size() : std::min(sizes.next(), data.size() - offset);
    std::string_view piece = data.substr(offset, n);
    offset += n;
    if (mode == Mode::kDirect && buffered.empty()) {
      // The connection reads straight into the argument's buffer when nothing else is pending.
      std::span<char> pending = parser.pending_bulk();
      check(pending.size() <= limits.max_bulk_len, "pending bulk larger than max_bulk_len");
      std::size_t direct = std::min(pending.size(), piece.size());
      if (direct > 0) {
        std::memcpy(pending.data(), piece.data(), direct);
        parser.commit_pending(direct);
        piece.remove_prefix(direct);
        delivered += direct;
      }
    }
    buffered.append(piece);
    while (true) {
      const auto result = parser.parse(buffered);
      check(result.consumed <= buffered.size(), "consumed more than offered");
      buffered.erase(0, result.consumed);
      delivered += result.consumed;
      if (budget != nullptr) {
        check(parser.request_bytes() <= limits.max_request_bytes, "request over its limit held");
        check(budget->reserved() <= kBudgetCapacity, "budget reserved beyond its capacity");
      }
      if (result.status == Status::kNeedMore) {
        // A header line longer than the limits may be waited on only when its CR arrived in
        // the same read (the LF decides); otherwise the parser must have refused it already.
        check(buffered.size() <= header_bound || buffered.back() == '\r',
              "kNeedMore left an unbounded remainder");
        break;
      }
      if (result.status == Status::kFatal) {
        check(!parser.error().empty(), "kFatal without an error text");
        events.push_back({Status::kFatal, {}, {}});
        if (fatal_at != nullptr) *fatal_at = delivered;
        return events;
      }
      check(result.consumed > 0, "a completed request consumed nothing");
      check(parser.idle(), "parser not idle after a request or error");
      Event event{result.status, {}, {}};
      if (result.status == Status::kRequest) {
        auto& args = parser.args();
        check(!args.empty(), "request without arguments");
        // max_args bounds multibulk requests; an inline request is bounded by its line instead.
        check(args.size() <= std::max(limits.max_args, limits.max_inline_len / 2 + 1),
              "more arguments than the limits allow");
        std::size_t bytes = 0;
        for (const auto& arg : args) {
          check(arg.size() <= std::max(limits.max_bulk_len, limits.max_inline_len),
                "argument longer than the limits allow");
          bytes += arg.size();
          event.args.push_back(arg.str());
        }
        check(bytes <= std::max(limits.max_request_bytes, limits.max_inline_len),
              "request larger than the limits allow");
        args.clear();
      } else {
        check(!parser.error().empty(), "kError without an error text");
        event.error = parser.error();
      }
      events.push_back(std::move(event));
    }
  }
  return events;
}

// run_parser() with invariant 7: the parser, destroyed, has given back all it reserved.
std::vector<Event> run(std::string_view data, const RequestLimits& limits, Mode mode,
                       std::size_t* fatal_at = nullptr, InputBudget* budget = nullptr) {
  const std::size_t reserved_before = budget ? budget->reserved() : 0;
  std::vector<Event> events = run_parser(data, limits, mode, fatal_at, budget);
  if (budget) check(budget->reserved() == reserved_before, "budget not given back");
  return events;
}

// Split invariance (see the top of the file): equal up to a trailing kFatal.
bool same_requests(std::vector<Event> a, std::vector<Event> b) {
  if (!a.empty() && a.back().status == Status::kFatal) a.pop_back();
  if (!b.empty() && b.back().status == Status::kFatal) b.pop_back();
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const RequestLimits limits = small_limits();

  std::size_t fatal_at = input.size();
  const std::vector<Event> whole = run(input, limits, Mode::kWhole, &fatal_at);
  check(same_requests(run(input, limits, Mode::kPieces), whole),
        "pieces parse differently from the whole");
  check(same_requests(run(input, limits, Mode::kDirect), whole), "direct reads parse differently");

  // A new connection after a fatal error starts from a clean parser.
  if (fatal_at < input.size()) (void)run(input.substr(fatal_at), limits, Mode::kPieces);

  // Before AUTH, and with a shared budget that others partly hold: the same invariants.
  const RequestLimits before_auth = small_limits_before_auth();
  check(
      same_requests(run(input, before_auth, Mode::kPieces), run(input, before_auth, Mode::kWhole)),
      "pieces parse differently from the whole (before AUTH)");
  InputBudget budget(kBudgetCapacity, kBudgetFree);
  check(budget.try_reserve(kBudgetHeldByOthers), "budget refused its first reservation");
  const std::vector<Event> budgeted = run(input, limits, Mode::kWhole, nullptr, &budget);
  check(same_requests(run(input, limits, Mode::kPieces, nullptr, &budget), budgeted),
        "pieces parse differently from the whole (budget)");
  check(same_requests(run(input, limits, Mode::kDirect, nullptr, &budget), budgeted),
        "direct reads parse differently (budget)");
  budget.release(kBudgetHeldByOthers);
  check(budget.reserved() == 0, "budget not given back");

  // Roomier limits, closer to the defaults (whose 512 MiB bulks would make every run slow).
  RequestLimits roomy;
  roomy.max_bulk_len = 1 << 20;
  check(same_requests(run(input, roomy, Mode::kPieces), run(input, roomy, Mode::kWhole)),
        "pieces parse differently from the whole (roomy limits)");
  return 0;
}
