// Tests for the incremental RESP request parser (src/common/resp_parser.hpp): multibulk and inline
// requests, every way of splitting the input, refusal of oversized bulks, and malformed streams.
#include "common/resp_parser.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace slipstream {
namespace {

using Status = RequestParser::Status;
using Args = std::vector<std::string>;

// What the parser produced for one complete request (or error), in a comparable form.
struct Event {
  Status status;
  Args args;          // kRequest
  std::string error;  // kError / kFatal
  bool operator==(const Event&) const = default;
};

std::string to_string(const Event& event) {
  std::string text;
  switch (event.status) {
    case Status::kNeedMore:
      text = "NeedMore";
      break;
    case Status::kRequest:
      text = "Request";
      break;
    case Status::kError:
      text = "Error(" + event.error + ")";
      break;
    case Status::kFatal:
      text = "Fatal(" + event.error + ")";
      break;
  }
  for (const auto& arg : event.args) text += " [" + arg + "]";
  return text;
}

void PrintTo(const Event& event, std::ostream* os) { *os << to_string(event); }

// Drives a parser the way a connection does: unconsumed bytes stay buffered and are offered again
// together with the next piece. With `direct`, bulk payloads are written through pending_bulk().
class Driver {
 public:
  explicit Driver(RequestLimits limits = {}, bool direct = false, InputBudget* budget = nullptr)
      : parser_(limits, budget), direct_(direct) {}

  // Feeds one piece and returns every event it completes. Stops at kFatal.
  std::vector<Event> feed(std::string_view piece) {
    std::vector<Event> events;
    if (fatal_) return events;
    std::size_t offset = 0;
    if (direct_ && buffered_.empty()) offset = fill_pending(piece);
    buffered_.append(piece.substr(offset));
    while (true) {
      auto result = parser_.parse(buffered_);
      EXPECT_LE(result.consumed, buffered_.size());
      buffered_.erase(0, result.consumed);
      if (result.status == Status::kNeedMore) {
        if (direct_ && !buffered_.empty()) {
          // Only a partial header line may be left; a pending bulk must take the bytes first.
          std::size_t used = fill_pending(buffered_);
          if (used > 0) {
            buffered_.erase(0, used);
            continue;
          }
        }
        break;
      }
      Event event{result.status, {}, {}};
      if (result.status == Status::kRequest) {
        for (const auto& arg : parser_.args()) event.args.push_back(arg.str());
        parser_.args().clear();
      } else {
        event.error = parser_.error();
      }
      events.push_back(std::move(event));
      if (result.status == Status::kFatal) {
        fatal_ = true;
        break;
      }
    }
    return events;
  }

  RequestParser& parser() { return parser_; }
  std::size_t buffered() const { return buffered_.size(); }

 private:
  // Copies as much of `bytes` as fits into the parser's pending bulk buffer.
  std::size_t fill_pending(std::string_view bytes) {
    std::span<char> pending = parser_.pending_bulk();
    std::size_t n = std::min(pending.size(), bytes.size());
    if (n == 0) return 0;
    std::memcpy(pending.data(), bytes.data(), n);
    parser_.commit_pending(n);
    return n;
  }

  RequestParser parser_;
  bool direct_;
  bool fatal_ = false;
  std::string buffered_;
};

std::vector<Event> parse_whole(std::string_view input, RequestLimits limits = {},
                               InputBudget* budget = nullptr) {
  Driver driver(limits, false, budget);
  return driver.feed(input);
}

std::vector<Event> parse_pieces(const std::vector<std::string_view>& pieces,
                                RequestLimits limits = {}, bool direct = false,
                                InputBudget* budget = nullptr) {
  Driver driver(limits, direct, budget);
  std::vector<Event> events;
  for (auto piece : pieces) {
    auto more = driver.feed(piece);
    events.insert(events.end(), more.begin(), more.end());
  }
  return events;
}

std::vector<Event> parse_byte_by_byte(std::string_view input, RequestLimits limits = {},
                                      bool direct = false, InputBudget* budget = nullptr) {
  std::vector<std::string_view> pieces;
  for (std::size_t i = 0; i < input.size(); ++i) pieces.push_back(input.substr(i, 1));
  return parse_pieces(pieces, limits, direct, budget);
}

Event request(Args args) { return {Status::kRequest, std::move(args), {}}; }

std::string multibulk(const Args& args) {
  std::string out = "*";
  out += std::to_string(args.size()) + "\r\n";
  for (const auto& arg : args) {
    out += '$';
    out += std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  }
  return out;
}

// Asserts that whole, byte-by-byte, every two-piece split and direct reads all agree. With a
// budget, each parse must give back everything it reserved.
void expect_split_invariant(std::string_view input, const std::vector<Event>& expected,
                            RequestLimits limits = {}, InputBudget* budget = nullptr) {
  const std::size_t reserved = budget ? budget->reserved() : 0;
  EXPECT_EQ(parse_whole(input, limits, budget), expected) << "whole";
  EXPECT_EQ(parse_byte_by_byte(input, limits, false, budget), expected) << "byte by byte";
  EXPECT_EQ(parse_byte_by_byte(input, limits, /*direct=*/true, budget), expected)
      << "byte by byte, direct";
  for (std::size_t split = 0; split <= input.size(); ++split) {
    std::vector<std::string_view> pieces{input.substr(0, split), input.substr(split)};
    EXPECT_EQ(parse_pieces(pieces, limits, false, budget), expected) << "split at " << split;
    EXPECT_EQ(parse_pieces(pieces, limits, /*direct=*/true, budget), expected)
        << "direct, split at " << split;
  }
  if (budget) EXPECT_EQ(budget->reserved(), reserved) << "a parse kept part of the budget";
}

TEST(RespParser, ParsesMultibulk) {
  EXPECT_EQ(parse_whole("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"),
            std::vector<Event>{request({"SET", "key", "value"})});
}

TEST(RespParser, ReportsConsumedBytesPerRequest) {
  RequestParser parser;
  std::string one = multibulk({"PING"});
  std::string input = one + one;
  auto result = parser.parse(input);
  EXPECT_EQ(result.status, Status::kRequest);
  EXPECT_EQ(result.consumed, one.size());
  EXPECT_TRUE(parser.idle());
  parser.args().clear();
  result = parser.parse(std::string_view(input).substr(one.size()));
  EXPECT_EQ(result.status, Status::kRequest);
  EXPECT_EQ(result.consumed, one.size());
  result = parser.parse("");
  EXPECT_EQ(result.status, Status::kNeedMore);
  EXPECT_EQ(result.consumed, 0u);
}

TEST(RespParser, ParsesPipelinedRequestsInOneBuffer) {
  std::string input = multibulk({"SET", "a", "1"}) + multibulk({"GET", "a"}) + "PING\r\n" +
                      multibulk({"DEL", "a", "b", "c"});
  EXPECT_EQ(parse_whole(input),
            (std::vector<Event>{request({"SET", "a", "1"}), request({"GET", "a"}),
                                request({"PING"}), request({"DEL", "a", "b", "c"})}));
}

TEST(RespParser, EverySplitPointGivesTheSameRequests) {
  std::string input = multibulk({"SET", "key", "value"}) + "GET key\r\n" + multibulk({"", "x"}) +
                      multibulk({std::string("a\r\nb\0c", 6)}) + "\r\n*0\r\n" + multibulk({"PING"});
  expect_split_invariant(
      input, {request({"SET", "key", "value"}), request({"GET", "key"}), request({"", "x"}),
              request({std::string("a\r\nb\0c", 6)}), request({"PING"})});
}

TEST(RespParser, BinaryArgumentsMayContainCrlfAndNul) {
  std::string payload("\r\n\0\r\n$3\r\n*1\r\n", 14);
  EXPECT_EQ(parse_whole(multibulk({"SET", "k", payload})),
            std::vector<Event>{request({"SET", "k", payload})});
}

TEST(RespParser, EmptyMultibulkIsIgnored) {
  std::string input = "*0\r\n*-1\r\n" + multibulk({"PING"});
  expect_split_invariant(input, {request({"PING"})});
}

TEST(RespParser, InlineCommandsSplitOnWhitespace) {
  EXPECT_EQ(parse_whole("SET  key\tvalue\r\n"),
            std::vector<Event>{request({"SET", "key", "value"})});
  EXPECT_EQ(parse_whole("PING\n"), std::vector<Event>{request({"PING"})});
}

TEST(RespParser, EmptyInlineLinesAreIgnored) {
  expect_split_invariant("\r\n\n   \r\nPING\r\n\n", {request({"PING"})});
}

TEST(RespParser, InlineQuotesAndEscapes) {
  // LF-terminated lines: the quoting rules themselves, without the CR question (see below).
  EXPECT_EQ(parse_whole("SET \"a b\" 'c d'\n"), std::vector<Event>{request({"SET", "a b", "c d"})});
  EXPECT_EQ(parse_whole("X \"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n"),
            std::vector<Event>{request({"X", "\n\r\t\b\a\\\"q"})});
  EXPECT_EQ(parse_whole("X \"\\x41\\x6a\\x00\\xzz\"\n"),
            std::vector<Event>{request({"X", std::string("Aj\0xzz", 6)})});
  EXPECT_EQ(parse_whole("X 'it\\'s' '\\n'\n"), std::vector<Event>{request({"X", "it's", "\\n"})});
  EXPECT_EQ(parse_whole("X \"\" ''\n"), std::vector<Event>{request({"X", "", ""})});
  // A quote inside a bare word starts a quoted part, as in redis-cli.
  EXPECT_EQ(parse_whole("X ab\"c d\"\n"), std::vector<Event>{request({"X", "abc d"})});
}

TEST(RespParser, InlineQuotedLastArgumentBeforeCrlf) {
  // Redis strips the CR before splitting, so a closing quote followed by CRLF is fine.
  EXPECT_EQ(parse_whole("SET \"a b\" 'c'\r\n"), std::vector<Event>{request({"SET", "a b", "c"})});
}

TEST(RespParser, UnbalancedQuotesAreAnErrorThenParsingContinues) {
  std::string input = "SET \"abc\nGET 'x\nX \"a\"b\n" + multibulk({"PING"});
  const std::string unbalanced = "ERR Protocol error: unbalanced quotes in request";
  std::vector<Event> expected{{Status::kError, {}, unbalanced},
                              {Status::kError, {}, unbalanced},
                              {Status::kError, {}, unbalanced},
                              request({"PING"})};
  expect_split_invariant(input, expected);
}

TEST(RespParser, TooLongInlineLineIsFatal) {
  RequestLimits limits;
  limits.max_inline_len = 16;
  std::string line(17, 'a');
  auto events = parse_whole(line + "\r\n", limits);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].status, Status::kFatal);
  EXPECT_NE(events[0].error.find("too big inline request"), std::string::npos);
  // Also without a newline in sight: the parser must not buffer forever.
  events = parse_byte_by_byte(std::string(100, 'a'), limits);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].status, Status::kFatal);
  // At the limit is fine.
  EXPECT_EQ(parse_whole(std::string(16, 'a') + "\n", limits),
            std::vector<Event>{request({std::string(16, 'a')})});
}

TEST(RespParser, TooLongMultibulkHeaderIsFatal) {
  RequestLimits limits;
  limits.max_inline_len = 16;
  auto events = parse_byte_by_byte("*" + std::string(40, '1'), limits);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].status, Status::kFatal);
}

TEST(RespParser, TooManyArgumentsIsFatal) {
  RequestLimits limits;
  limits.max_args = 3;
  EXPECT_EQ(parse_whole(multibulk({"a", "b", "c"}), limits),
            std::vector<Event>{request({"a", "b", "c"})});
  auto events = parse_whole(multibulk({"a", "b", "c", "d"}), limits);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].status, Status::kFatal);
  EXPECT_NE(events[0].error.find("invalid multibulk length"), std::string::npos);
}

struct FatalCase {
  const char* name;
  std::string input;
  const char* message_part;
};

TEST(RespParser, MalformedInputIsFatal) {
  const std::vector<FatalCase> cases{
      {"non-numeric count", "*x\r\n", "invalid multibulk length"},
      {"empty count", "*\r\n", "invalid multibulk length"},
      {"count with trailing junk", "*1x\r\n$1\r\na\r\n", "invalid multibulk length"},
      {"count overflow", "*99999999999999999999\r\n", "invalid multibulk length"},
      {"CR without LF in count", "*1\rx", "expected '\\n' after '\\r'"},
      {"'$' expected", "*1\r\n:1\r\n", "expected '$', got ':'"},
      {"'$' expected, binary", std::string("*1\r\n\x01", 5), "expected '$', got '?'"},
      {"negative bulk length", "*1\r\n$-1\r\n", "invalid bulk length"},
      {"non-numeric bulk length", "*1\r\n$abc\r\n", "invalid bulk length"},
      {"empty bulk length", "*1\r\n$\r\n", "invalid bulk length"},
      {"endless bulk length", "*1\r\n$" + std::string(40, '1'), "invalid bulk length"},
      {"CR without LF in bulk header", "*1\r\n$1\rxa\r\n", "expected '\\n' after '\\r'"},
      {"bulk longer than announced", "*1\r\n$1\r\nab\r\n", "not terminated by CRLF"},
      {"bulk CR without LF", "*1\r\n$1\r\na\rb", "not terminated by CRLF"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    for (int mode = 0; mode < 3; ++mode) {
      auto events = mode == 0   ? parse_whole(c.input)
                    : mode == 1 ? parse_byte_by_byte(c.input)
                                : parse_byte_by_byte(c.input, {}, /*direct=*/true);
      ASSERT_EQ(events.size(), 1u) << "mode " << mode;
      EXPECT_EQ(events[0].status, Status::kFatal) << "mode " << mode;
      EXPECT_NE(events[0].error.find(c.message_part), std::string::npos)
          << "mode " << mode << ": " << events[0].error;
      EXPECT_EQ(events[0].error.rfind("ERR Protocol error: ", 0), 0u) << events[0].error;
    }
  }
}

// BUG (reported; found by fuzz/resp_parser_fuzz.cpp): lengths with leading zeros are accepted
// when the whole header line arrives in one read, but a bulk header longer than 32 bytes (or a
// count line longer than max_inline_len) is fatal when it arrives in pieces, so whether a request
// is valid depends on how TCP split it. Redis rejects leading zeros ("invalid bulk length").
TEST(RespParser, LengthsWithLeadingZerosDoNotDependOnTheSplit) {
  std::string bulk_header = "*1\r\n$" + std::string(40, '0') + "3\r\nfoo\r\n";
  EXPECT_EQ(parse_whole(bulk_header), parse_byte_by_byte(bulk_header));
  RequestLimits limits;
  limits.max_inline_len = 16;
  std::string count = "*" + std::string(20, '0') + "1\r\n$3\r\nfoo\r\n";
  EXPECT_EQ(parse_whole(count, limits), parse_byte_by_byte(count, limits));
  // What Redis does:
  EXPECT_EQ(parse_whole("*1\r\n$03\r\nfoo\r\n")[0].status, Status::kFatal);
}

TEST(RespParser, TruncatedInputWaitsForMore) {
  std::string full = multibulk({"SET", "key", "value"});
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    Driver driver;
    EXPECT_TRUE(driver.feed(std::string_view(full).substr(0, cut)).empty()) << "cut " << cut;
    EXPECT_EQ(driver.feed(std::string_view(full).substr(cut)),
              std::vector<Event>{request({"SET", "key", "value"})});
    EXPECT_TRUE(driver.parser().idle());
    EXPECT_EQ(driver.buffered(), 0u);
  }
}

TEST(RespParser, OversizedBulkIsRefusedWithoutAllocatingAndResyncs) {
  RequestLimits limits;
  limits.max_bulk_len = 10;
  std::string big(11, 'x');
  std::string input = multibulk({"SET", "k", big, "tail"}) + multibulk({"GET", "k"});
  const std::string message =
      "ERR Protocol error: bulk of 11 bytes exceeds the maximum of 10 bytes (max-bulk-len)";
  expect_split_invariant(input, {{Status::kError, {}, message}, request({"GET", "k"})}, limits);
  EXPECT_EQ(parse_whole(multibulk({std::string(10, 'y')}), limits),
            std::vector<Event>{request({std::string(10, 'y')})});
}

TEST(RespParser, OversizedBulkLeavesNothingToReadInto) {
  RequestLimits limits;
  limits.max_bulk_len = 10;
  RequestParser parser(limits);
  // The announced length would be an impossible allocation if the parser tried.
  std::string header = "*2\r\n$1152921504606846976\r\n";
  auto result = parser.parse(header);
  EXPECT_EQ(result.status, Status::kNeedMore);
  EXPECT_EQ(result.consumed, header.size());
  EXPECT_TRUE(parser.pending_bulk().empty());
  EXPECT_FALSE(parser.idle());
  result = parser.parse(std::string(4096, 'z'));
  EXPECT_EQ(result.status, Status::kNeedMore);
  EXPECT_EQ(result.consumed, 4096u);
  EXPECT_TRUE(parser.pending_bulk().empty());
}

TEST(RespParser, EveryOversizedBulkInARequestIsSkipped) {
  RequestLimits limits;
  limits.max_bulk_len = 4;
  std::string input = multibulk({"toolong", "ok", "alsotoolong"}) + multibulk({"PING"});
  auto events = parse_byte_by_byte(input, limits);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].status, Status::kError);
  EXPECT_NE(events[0].error.find("bulk of 7 bytes"), std::string::npos);  // the first one
  EXPECT_EQ(events[1], request({"PING"}));
}

TEST(RespParser, DirectReadIntoPendingBulk) {
  std::string payload(100000, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  RequestParser parser;
  std::string head = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + std::to_string(payload.size()) + "\r\n";
  auto result = parser.parse(head);
  EXPECT_EQ(result.status, Status::kNeedMore);
  EXPECT_EQ(result.consumed, head.size());
  // Fill the argument in three direct reads, as a connection would from the socket.
  std::size_t written = 0;
  for (std::size_t chunk : {1u, 65536u, 100000u}) {
    std::span<char> pending = parser.pending_bulk();
    ASSERT_EQ(pending.size(), payload.size() - written);
    std::size_t n = std::min<std::size_t>(chunk, pending.size());
    std::memcpy(pending.data(), payload.data() + written, n);
    parser.commit_pending(n);
    written += n;
  }
  EXPECT_TRUE(parser.pending_bulk().empty());
  result = parser.parse("\r\n");
  EXPECT_EQ(result.status, Status::kRequest);
  EXPECT_EQ(result.consumed, 2u);
  ASSERT_EQ(parser.args().size(), 3u);
  EXPECT_EQ(parser.args()[2].view(), payload);
  EXPECT_TRUE(parser.idle());
}

TEST(RespParser, PendingBulkIsEmptyOutsideBulkData) {
  RequestParser parser;
  EXPECT_TRUE(parser.pending_bulk().empty());
  EXPECT_EQ(parser.parse("*1\r\n").status, Status::kNeedMore);
  EXPECT_TRUE(parser.pending_bulk().empty());  // header of the bulk not seen yet
  EXPECT_EQ(parser.parse("$3\r\n").status, Status::kNeedMore);
  EXPECT_EQ(parser.pending_bulk().size(), 3u);
}

TEST(RespParser, ParsesCleanlyAfterAnErrorAndAfterRecovery) {
  // Mix of everything, fed byte by byte, to check no state leaks from one request to the next.
  RequestLimits limits;
  limits.max_bulk_len = 8;
  std::string input = multibulk({"A", std::string(9, 'b')}) + "X 'unbalanced\r\n" +
                      multibulk({"C", "d"}) + "\r\n" + "E f\r\n";
  auto events = parse_byte_by_byte(input, limits, /*direct=*/true);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].status, Status::kError);
  EXPECT_EQ(events[1].status, Status::kError);
  EXPECT_EQ(events[2], request({"C", "d"}));
  EXPECT_EQ(events[3], request({"E", "f"}));
}

// ---- Limits before AUTH, the per-request limit, the shared budget, failed allocations.

TEST(RespParser, BeforeAuthCountsOverTenAndBulksOver16KiBAreFatal) {
  const RequestLimits limits = RequestLimits::before_auth();
  Args ten(10, "x");
  expect_split_invariant(multibulk(ten), {request(ten)}, limits);
  std::string largest(16384, 'p');
  expect_split_invariant(multibulk({"AUTH", largest}), {request({"AUTH", largest})}, limits);

  struct Case {
    std::string input;
    std::string header;  // fatal from the header alone: nothing after it needs to arrive
    std::string message;
  };
  const Case cases[] = {
      {multibulk(Args(11, "x")), "*11\r\n", "ERR Protocol error: unauthenticated multibulk length"},
      {multibulk({"AUTH", std::string(16385, 'p')}), "*2\r\n$4\r\nAUTH\r\n$16385\r\n",
       "ERR Protocol error: unauthenticated bulk length"},
  };
  for (const Case& c : cases) {
    for (const std::string& fed : {c.input, c.header}) {
      auto events = parse_byte_by_byte(fed, limits, /*direct=*/true);
      ASSERT_EQ(events.size(), 1u);
      EXPECT_EQ(events[0], (Event{Status::kFatal, {}, c.message}));
    }
  }
}

TEST(RespParser, RequestOverMaxRequestBytesIsFatal) {
  RequestLimits limits;
  limits.max_request_bytes = 100;
  expect_split_invariant(multibulk({std::string(50, 'a'), std::string(50, 'b')}),
                         {request({std::string(50, 'a'), std::string(50, 'b')})}, limits);
  RequestParser parser(limits);
  auto result = parser.parse("*2\r\n$50\r\n" + std::string(50, 'a') + "\r\n$51\r\n");
  EXPECT_EQ(result.status, Status::kFatal);
  EXPECT_EQ(parser.error(),
            "ERR Protocol error: request of 101 bytes or more exceeds the client's query buffer "
            "limit of 100 bytes (client-query-buffer-limit)");
  EXPECT_TRUE(parser.fatal_over_limit());
}

TEST(RespParser, BulkTheBudgetCannotCoverNowIsRefusedWithOomAndResyncs) {
  InputBudget budget(100, /*free_per_request=*/16);
  ASSERT_TRUE(budget.try_reserve(50));  // held by other connections
  // 70 bytes need 54 reserved beyond the free 16: 50 + 54 > 100.
  std::string input = multibulk({"SET", "k", std::string(70, 'v')}) + multibulk({"PING"});
  const std::string message =
      "OOM cannot receive a bulk of 70 bytes now: arguments being received hold 50 of the "
      "server's 100 bytes (max-pending-input); retry later";
  expect_split_invariant(input, {{Status::kError, {}, message}, request({"PING"})}, {}, &budget);
  // Once the others let go, the same request is received.
  budget.release(50);
  expect_split_invariant(input, {request({"SET", "k", std::string(70, 'v')}), request({"PING"})},
                         {}, &budget);
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(RespParser, RequestLargerThanTheWholeBudgetIsFatal) {
  InputBudget budget(100, /*free_per_request=*/16);
  RequestParser parser({}, &budget);
  // 60 + 60 bytes need 104 reserved: more than the capacity, so it could never be received.
  auto result = parser.parse("*2\r\n$60\r\n" + std::string(60, 'a') + "\r\n$60\r\n");
  EXPECT_EQ(result.status, Status::kFatal);
  EXPECT_EQ(parser.error(),
            "OOM request of 120 bytes or more exceeds the server's budget of 100 bytes for "
            "arguments being received (max-pending-input)");
  EXPECT_TRUE(parser.fatal_over_limit());
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(RespParser, ReservationLastsUntilTheRequestIsHandedOverOrTheParserGoes) {
  InputBudget budget(1000, /*free_per_request=*/0);
  {
    RequestParser parser({}, &budget);
    EXPECT_EQ(parser.parse("*2\r\n$100\r\n").status, Status::kNeedMore);
    EXPECT_EQ(budget.reserved(), 100u);
    EXPECT_EQ(parser.request_bytes(), 100u);
    EXPECT_EQ(parser.pending_bulk().size(), 100u);
    EXPECT_EQ(parser.parse(std::string(100, 'a') + "\r\n$200\r\n").status, Status::kNeedMore);
    EXPECT_EQ(budget.reserved(), 300u);  // the arguments received so far count too
    EXPECT_EQ(parser.parse(std::string(200, 'b') + "\r\n").status, Status::kRequest);
    EXPECT_EQ(budget.reserved(), 0u);  // the arguments are the caller's now
    EXPECT_EQ(parser.request_bytes(), 0u);
    parser.args().clear();
    EXPECT_EQ(parser.parse("*1\r\n$400\r\n").status, Status::kNeedMore);
    EXPECT_EQ(budget.reserved(), 400u);
  }
  EXPECT_EQ(budget.reserved(), 0u);  // a connection that closes mid-request gives it back
  // So does a request that turns fatal.
  RequestParser parser({}, &budget);
  EXPECT_EQ(parser.parse("*2\r\n$100\r\n" + std::string(100, 'a') + "\r\n:").status,
            Status::kFatal);
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(RespParser, BudgetCapacityCanShrinkWithoutRevokingReservations) {
  InputBudget budget(1000, 0);
  ASSERT_TRUE(budget.try_reserve(600));
  budget.set_capacity(500);
  EXPECT_FALSE(budget.try_reserve(1));
  budget.release(600);
  EXPECT_TRUE(budget.try_reserve(500));
  EXPECT_FALSE(budget.try_reserve(1));
  EXPECT_FALSE(budget.try_reserve(SIZE_MAX));  // no overflow on the way
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// (Sanitizer allocators report impossible sizes instead of failing them.)
TEST(RespParser, BulkThatCannotBeAllocatedIsRefusedNotThrown) {
  RequestLimits limits;
  limits.max_bulk_len = SIZE_MAX;
  limits.max_request_bytes = SIZE_MAX;
  RequestParser parser(limits);
  std::string header = "*2\r\n$4611686018427387904\r\n";  // 4 EiB
  auto result = parser.parse(header);
  EXPECT_EQ(result.status, Status::kNeedMore);
  EXPECT_EQ(result.consumed, header.size());
  EXPECT_TRUE(parser.pending_bulk().empty());  // refused: its bytes will be skipped
  EXPECT_EQ(parser.request_bytes(), 0u);
  EXPECT_FALSE(parser.idle());
}
#endif

TEST(SplitInlineArgs, ReportsUnbalancedQuotes) {
  std::vector<Buffer> out;
  EXPECT_FALSE(split_inline_args("\"abc", out));
  out.clear();
  EXPECT_FALSE(split_inline_args("'abc", out));
  out.clear();
  EXPECT_FALSE(split_inline_args("\"a\"b", out));
  out.clear();
  EXPECT_TRUE(split_inline_args("  a  'b c'  \"d\"  ", out));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].view(), "b c");
  EXPECT_EQ(out[2].view(), "d");
}

}  // namespace
}  // namespace slipstream
