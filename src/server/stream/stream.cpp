// One stream on the server; see stream.hpp.
#include "server/stream/stream.hpp"

#include <algorithm>

#include "server/net/reply.hpp"
#include "server/net/session.hpp"
#include "server/store/keyspace.hpp"
#include "server/stream/stream_arguments.hpp"
#include "server/stream/stream_error.hpp"

namespace slipstream::server {
namespace {

std::string policy_name(stream::QueuePolicy policy) {
  return policy == stream::QueuePolicy::kBlock ? "block" : "discard";
}

// The first option in which `wanted` differs from `have`, as "QUEUE 2 (this writer asked for 4)".
std::optional<std::string> first_difference(const WriterOptions& have,
                                            const WriterOptions& wanted) {
  auto differ = [](std::string_view option, const auto& a, const auto& b) {
    return std::string(option) + " " + a + " (this writer asked for " + b + ")";
  };
  auto yes_no = [](bool end) { return std::string(end ? "end" : "continue"); };
  if (have.config.writers != wanted.config.writers) {
    return differ("writers", std::to_string(have.config.writers),
                  std::to_string(wanted.config.writers));
  }
  if (have.config.queue_limit != wanted.config.queue_limit) {
    return differ("QUEUE", std::to_string(have.config.queue_limit),
                  std::to_string(wanted.config.queue_limit));
  }
  if (have.config.expected_groups != wanted.config.expected_groups) {
    return differ("EXPECT-GROUPS", std::to_string(have.config.expected_groups),
                  std::to_string(wanted.config.expected_groups));
  }
  if (have.config.end_on_writer_failure != wanted.config.end_on_writer_failure) {
    return differ("ON-WRITER-FAILURE", yes_no(have.config.end_on_writer_failure),
                  yes_no(wanted.config.end_on_writer_failure));
  }
  if (have.step_timeout_ms != wanted.step_timeout_ms) {
    return differ("STEP-TIMEOUT", std::to_string(have.step_timeout_ms),
                  std::to_string(wanted.step_timeout_ms));
  }
  if (have.config.first_step_precious != wanted.config.first_step_precious) {
    auto yes = [](bool precious) { return std::string(precious ? "yes" : "no"); };
    return differ("FIRST-STEP-PRECIOUS", yes(have.config.first_step_precious),
                  yes(wanted.config.first_step_precious));
  }
  return std::nullopt;
}

std::string step_text(std::int64_t step) { return "step " + std::to_string(step); }

std::string reader_text(const std::string& group, std::uint32_t rank) {
  return "reader " + std::to_string(rank) + " of group '" + group + "'";
}

// The number of elements of `extent`, or nullopt when it does not fit in 64 bits.
std::optional<std::uint64_t> element_count(const std::vector<std::uint64_t>& extent) {
  std::uint64_t count = 1;
  for (std::uint64_t e : extent) {
    if (__builtin_mul_overflow(count, e, &count)) return std::nullopt;
  }
  return count;
}

std::uint64_t check_chunk_shape(const PutRequest& request) {
  const std::size_t dims = request.global_extent.size();
  if (request.offset.size() != dims || request.extent.size() != dims) {
    throw StreamError("the global extent has " + std::to_string(dims) +
                      " dimensions but the "
                      "offset has " +
                      std::to_string(request.offset.size()) + " and the extent " +
                      std::to_string(request.extent.size()));
  }
  for (std::size_t d = 0; d < dims; ++d) {
    const std::uint64_t global = request.global_extent[d];
    if (request.offset[d] > global || request.extent[d] > global - request.offset[d]) {
      throw StreamError("chunk at offset " + format_extent(request.offset) + " of extent " +
                        format_extent(request.extent) + " lies outside the global extent " +
                        format_extent(request.global_extent) + " in dimension " +
                        std::to_string(d));
    }
  }
  if (!element_count(request.global_extent)) {
    throw StreamError("global extent " + format_extent(request.global_extent) +
                      " holds 2^64 elements or more");
  }
  const std::uint64_t elements = *element_count(request.extent);  // within the global extent
  const std::uint64_t element_size = dtype_size(request.dtype);
  std::uint64_t expected = 0;
  if (request.encoded != 0) {
    // A codec frame: its size is what the writer says (the bytes of a PUT, the used part of a
    // segment); the reader checks the decoded size against the extent.
    if (request.segment == 0 && request.remote == 0 && request.encoded != request.bytes.size()) {
      throw StreamError("the encoded chunk has " + std::to_string(request.bytes.size()) +
                        " bytes; ENCODED says " + std::to_string(request.encoded));
    }
    if (__builtin_mul_overflow(elements, element_size, &expected)) {
      throw StreamError("extent " + format_extent(request.extent) + " of " +
                        std::string(dtype_name(request.dtype)) + " holds 2^64 bytes or more");
    }
    return request.encoded;
  }
  if (__builtin_mul_overflow(elements, element_size, &expected) ||
      (request.segment == 0 && request.remote == 0 && expected != request.bytes.size())) {
    throw StreamError("the chunk has " + std::to_string(request.bytes.size()) + " bytes; extent " +
                      format_extent(request.extent) + " of " +
                      std::string(dtype_name(request.dtype)) + " needs " +
                      std::to_string(elements) + " x " + std::to_string(element_size) + " bytes");
  }
  return expected;
}

}  // namespace

// ---- Metadata --------------------------------------------------------------------------------

void Stream::count_metadata(MemoryReservation& into, std::size_t bytes, const std::string& what) {
  if (keyspace_ == nullptr) return;
  std::optional<MemoryReservation> reservation = keyspace_->reserve(bytes);
  if (!reservation) {
    throw StreamOutOfMemory(what + " of stream " + name_ + " (" + std::to_string(bytes) +
                            " bytes) does not fit in maxmemory (" +
                            std::to_string(keyspace_->used_memory()) + " of " +
                            std::to_string(keyspace_->max_memory()) + " bytes used)");
  }
  into.absorb(std::move(*reservation));
}

void Stream::store_attribute(AttributeList& list, MemoryReservation& counted,
                             Attribute attribute) {
  std::string key = attribute.path + '\0' + attribute.name;
  // Any writer may set an attribute; writers that set the same one must agree (each rank of an
  // openPMD program sets the series' and iteration's attributes): a writer may change what it set
  // itself, but a value that differs from another writer's is refused rather than either one
  // silently winning.
  if (auto existing = list.index.find(key); existing != list.index.end()) {
    const Attribute& held = list.items[existing->second];
    if (held.writer != attribute.writer && !held.same_value(attribute)) {
      throw StreamError("attribute '" + attribute.name + "' of " +
                        (attribute.path == "/" ? std::string("/") : "'" + attribute.path + "'") +
                        (attribute.step < 0 ? " (stream level)" : " in " + step_text(attribute.step)) +
                        ": writer " + std::to_string(attribute.writer) +
                        " set a different value than writer " + std::to_string(held.writer) +
                        "; writers that set the same attribute must agree");
    }
    if (held.writer != attribute.writer) return;  // the same value: nothing changes
  }
  count_metadata(counted, attribute_bytes(attribute), "attribute " + attribute.name);
  auto [position, created] = list.index.try_emplace(std::move(key), list.items.size());
  if (created) {
    list.items.push_back(std::move(attribute));
  } else {
    counted.shrink(attribute_bytes(list.items[position->second]));
    list.items[position->second] = std::move(attribute);
  }
}

// ---- Writers ---------------------------------------------------------------------------------

void Stream::check_writer(std::uint32_t rank, std::uint64_t session) const {
  auto bound = writer_sessions_.find(rank);
  if (bound == writer_sessions_.end()) {
    throw StreamError("writer " + std::to_string(rank) + " has not attached to stream " + name_ +
                      " (SS.STREAM.WRITE first)");
  }
  if (bound->second != session) {
    throw StreamError("writer " + std::to_string(rank) + " of stream " + name_ +
                      " is attached to another connection");
  }
}

bool Stream::writer_bound_to(std::uint32_t rank, std::uint64_t session) const {
  auto bound = writer_sessions_.find(rank);
  return bound != writer_sessions_.end() && bound->second == session;
}

void Stream::attach_writer(std::uint32_t rank, const WriterOptions& options, std::string hostname,
                           std::uint64_t session) {
  if (options_) {
    if (auto difference = first_difference(*options_, options)) {
      throw StreamError("stream " + name_ + " has " + *difference);
    }
  }
  if (rank >= options.config.writers) {
    throw StreamError("writer rank " + std::to_string(rank) + " is out of range: stream " + name_ +
                      " has " + std::to_string(options.config.writers) + " writers (ranks 0.." +
                      std::to_string(options.config.writers - 1) + ")");
  }
  if (auto bound = writer_sessions_.find(rank); bound != writer_sessions_.end()) {
    if (bound->second != session) check_writer(rank, session);  // throws: another connection
    writer_hosts_[rank] = std::move(hostname);  // replaces one counted already (both capped)
    return;
  }
  MemoryReservation counted;  // kept once the writer is attached
  if (departed_writers_.count(rank)) {
    throw StreamError("writer " + std::to_string(rank) + " has already closed (or lost) stream " +
                      name_ + "; it can attach again once the stream has ended");
  }
  if (!writer_hosts_.count(rank)) {
    count_metadata(counted, 64 + hostname.size(),
                   "writer " + std::to_string(rank) + "'s host name");
  }
  if (!queue_) {
    stream::StepQueue queue(options.config);
    for (const auto& [reader, config] : pending_joins_) {
      queue.join(reader.first, reader.second, config);
    }
    queue_.emplace(std::move(queue));
    options_ = options;
    pending_joins_.clear();
  }
  writer_sessions_[rank] = session;
  writer_hosts_[rank] = std::move(hostname);
  metadata_.absorb(std::move(counted));
}

bool Stream::begin(std::uint32_t rank, std::int64_t step, std::uint64_t session) {
  check_writer(rank, session);
  check_not_aborted(step);
  if (auto reserved = queue_->reservation(rank); reserved && *reserved != step) {
    // It began another step than it reserved: every writer's reservation of that step goes
    // (StepQueue::begin).
    if (auto data = step_data_.find(*reserved); data != step_data_.end()) {
      for (std::uint32_t writer : data->second.reserved) data->second.begun.erase(writer);
      data->second.reserved.clear();
    }
  }
  if (!queue_->begin(rank, step)) return false;
  auto [data, created] = step_data_.try_emplace(step);
  data->second.begun.insert(rank);
  if (created) data->second.deadline_pending = options_->step_timeout_ms > 0;
  use_reservation(rank, step, data->second);
  return true;
}

void Stream::use_reservation(std::uint32_t rank, std::int64_t step, StepData& data) {
  if (data.reserved.erase(rank) > 0) queue_->confirm(rank, step);
  if (data.deadline_pending) {
    data.deadline_pending = false;
    new_deadlines_.emplace_back(step, std::chrono::milliseconds(options_->step_timeout_ms));
  }
}

bool Stream::reserve(std::uint32_t rank, std::int64_t step, std::span<const std::size_t> sizes,
                     std::uint64_t session, const SegmentPool::Create* create,
                     std::vector<SegmentPool::Lent>* lent, std::vector<std::uint64_t>* dropped) {
  check_writer(rank, session);
  if (aborted_.count(step) || !queue_->reserve(rank, step)) return false;
  auto [data, created] = step_data_.try_emplace(step);
  data->second.begun.insert(rank);
  data->second.reserved.insert(rank);
  if (created) data->second.deadline_pending = options_->step_timeout_ms > 0;
  if (!sizes.empty() && create != nullptr) {
    try {
      *lent = segments_.lend(rank, step, sizes, segment_steps(), *create, dropped);
    } catch (const std::exception&) {  // no segments (pool or memory full): the step stays
      lent->clear();                   // reserved; its chunks go the ordinary way
    }
  }
  return true;
}

void Stream::confirm_reservation(std::uint32_t rank) {
  const std::optional<std::int64_t> reserved = queue_ ? queue_->reservation(rank) : std::nullopt;
  if (!reserved) return;
  if (auto data = step_data_.find(*reserved); data != step_data_.end()) {
    data->second.reserved.erase(rank);
  }
  queue_->confirm(rank, *reserved);
}

void Stream::withdraw_reservation(std::uint32_t rank) {
  const std::optional<std::int64_t> reserved = queue_ ? queue_->reservation(rank) : std::nullopt;
  if (!reserved) return;
  if (auto data = step_data_.find(*reserved); data != step_data_.end()) {
    data->second.reserved.erase(rank);
    data->second.begun.erase(rank);
  }
  queue_->withdraw(rank, *reserved);  // a step only reservations held is freed (drop_freed)
}

StepData& Stream::open_step(std::uint32_t rank, std::int64_t step) {
  auto data = step_data_.find(step);
  if (data == step_data_.end()) check_not_aborted(step);
  if (data == step_data_.end() || !data->second.begun.count(rank)) {
    throw StreamError("writer " + std::to_string(rank) + " has not begun " + step_text(step) +
                      (data == step_data_.end() ? " (or it was aborted)" : ""));
  }
  if (data->second.ended.count(rank)) {
    throw StreamError("writer " + std::to_string(rank) + " already ended " + step_text(step));
  }
  use_reservation(rank, step, data->second);
  return data->second;
}

void Stream::put(std::uint32_t rank, std::int64_t step, PutRequest request, std::uint64_t session,
                 Keyspace& keyspace) {
  check_writer(rank, session);
  StepData& data = open_step(rank, step);
  const std::uint64_t size = check_chunk_shape(request);
  auto indexed = data.component_index.find(request.component);
  auto component = indexed == data.component_index.end()
                       ? data.components.end()
                       : data.components.begin() + static_cast<std::ptrdiff_t>(indexed->second);
  if (component != data.components.end() &&
      (component->dtype != request.dtype || component->global_extent != request.global_extent)) {
    throw StreamError("component " + request.component + " of " + step_text(step) + " is " +
                      std::string(dtype_name(component->dtype)) + " with global extent " +
                      format_extent(component->global_extent) + "; this chunk is " +
                      std::string(dtype_name(request.dtype)) + " with global extent " +
                      format_extent(request.global_extent));
  }
  // The chunk's table entry (and a new component's name) count against --maxmemory too.
  MemoryReservation metadata;
  count_metadata(metadata,
                 chunk_metadata_bytes(request.global_extent.size()) +
                     (component == data.components.end() ? 64 + request.component.size() : 0),
                 "the chunk table of component " + request.component);
  StoredChunk stored;
  if (request.remote != 0) {
    auto node = chunk_nodes_.find(rank);
    if (node == chunk_nodes_.end()) {
      throw StreamError("writer " + std::to_string(rank) + " of stream " + name_ +
                        " named no chunk shard (SS.STREAM.WRITE ... CHUNKS-ON node-id)");
    }
    stored.remote_id = request.remote;
    stored.remote_node = node->second.index;
  } else if (request.segment != 0) {
    // The bytes are in a segment the writer filled; it holds its memory already.
    stored.segment = segments_.use(rank, step, request.segment, size);
    stored.size = size;
  } else {
    std::optional<MemoryReservation> reservation = keyspace.reserve(size);
    if (!reservation) {
      throw StreamOutOfMemory("the chunk's " + std::to_string(size) + " bytes for component " +
                              request.component + " do not fit in maxmemory (" +
                              std::to_string(keyspace.used_memory()) + " of " +
                              std::to_string(keyspace.max_memory()) + " bytes used)");
    }
    stored.bytes = std::make_shared<const Buffer>(std::move(request.bytes));
    stored.reservation = std::move(*reservation);
  }
  if (component == data.components.end()) {
    ComponentData created;
    created.name = std::move(request.component);
    created.dtype = request.dtype;
    created.global_extent = std::move(request.global_extent);
    data.component_index.emplace(created.name, data.components.size());
    data.components.push_back(std::move(created));
    component = std::prev(data.components.end());
  }
  data.metadata.absorb(std::move(metadata));
  const auto id = static_cast<std::uint32_t>(data.chunks.size());
  component->chunks.push_back(
      stream::Chunk{std::move(request.offset), std::move(request.extent), rank});
  component->chunk_ids.push_back(id);
  if (request.encoded != 0 || !component->encoded.empty()) {
    component->encoded.resize(component->chunks.size() - 1, 0);  // the raw ones before it
    component->encoded.push_back(request.encoded);
  }
  data.chunks.push_back(std::move(stored));
  data.bytes += size;
  bytes_held_ += size;
}

void Stream::set_chunk_node(std::uint32_t rank, ChunkNode node, std::uint64_t session) {
  check_writer(rank, session);
  chunk_nodes_[rank] = std::move(node);
}

std::vector<SegmentPool::Lent> Stream::lend_segments(std::uint32_t rank, std::int64_t step,
                                                    std::span<const std::size_t> sizes,
                                                    std::uint64_t session,
                                                    const SegmentPool::Create& create,
                                                    std::vector<std::uint64_t>* dropped) {
  check_writer(rank, session);
  open_step(rank, step);
  return segments_.lend(rank, step, sizes, segment_steps(), create, dropped);
}

void Stream::set_attribute(std::uint32_t rank, Attribute attribute, std::uint64_t session) {
  check_writer(rank, session);
  attribute.writer = rank;
  if (attribute.step < 0) {
    store_attribute(stream_attributes_, metadata_, std::move(attribute));
    ++stream_attributes_version_;
  } else {
    StepData& data = open_step(rank, attribute.step);
    store_attribute(data.attributes, data.metadata, std::move(attribute));
  }
}

void Stream::end(std::uint32_t rank, std::int64_t step, std::uint64_t session) {
  check_writer(rank, session);
  StepData& data = open_step(rank, step);
  if (data.refused.erase(rank) > 0) {
    throw StreamError("writer " + std::to_string(rank) + " cannot end " + step_text(step) +
                      ": a chunk or attribute it sent for the step was refused (the step stays "
                      "open; send it again, then end the step)");
  }
  queue_->end(rank, step);
  data.ended.insert(rank);
}

void Stream::refuse(std::uint32_t rank, std::int64_t step) {
  auto data = step_data_.find(step);
  if (data != step_data_.end() && data->second.begun.count(rank) &&
      !data->second.ended.count(rank)) {
    data->second.refused.insert(rank);
  }
}

void Stream::close_writer(std::uint32_t rank, std::uint64_t session,
                          std::optional<std::int64_t> open_step) {
  check_writer(rank, session);
  if (open_step && queue_->reservation(rank) == open_step) {
    confirm_reservation(rank);  // it began the step it reserved: aborted below
  } else {
    withdraw_reservation(rank);  // a step it only reserved was never begun: not aborted
  }
  std::optional<std::int64_t> open;  // a writer has at most one open step
  for (const auto& [number, data] : step_data_) {
    if (data.begun.count(rank) && !data.ended.count(rank)) open = number;
  }
  queue_->close_writer(rank);
  if (open) {
    remember_aborted(*open, "writer " + std::to_string(rank) + " closed the stream during " +
                                step_text(*open));
  }
  writer_sessions_.erase(rank);
  departed_writers_.insert(rank);
  segments_.writer_gone(rank);
}

void Stream::fail_writer(std::uint32_t rank) {
  // A step it reserved counts as begun: its begin of that step sent nothing, so it may have
  // died inside it, and the step must not complete without it.
  confirm_reservation(rank);
  std::string reason = "writer " + std::to_string(rank) + " disconnected";
  std::vector<std::int64_t> doomed;  // the steps the queue aborts: begun by it, not ended
  RemoteWork::Drop unclaimed;         // its colocated chunks of them may not be named here yet
  for (const auto& [number, data] : step_data_) {
    if (queue_->is_complete(number)) continue;
    if (data.begun.count(rank) && !data.ended.count(rank)) {
      if (doomed.empty()) reason += " during " + step_text(number);
      doomed.push_back(number);
      unclaimed.steps.push_back(number);
    } else if (options_->config.end_on_writer_failure) {
      doomed.push_back(number);  // the stream ends: every incomplete step goes
    }
  }
  if (auto node = chunk_nodes_.find(rank); node != chunk_nodes_.end() && !unclaimed.steps.empty()) {
    unclaimed.node = node->second.index;
    unclaimed.rank = rank;
    remote_work_.drops.push_back(std::move(unclaimed));
  }
  writer_sessions_.erase(rank);
  departed_writers_.insert(rank);
  failed_writers_.insert(rank);
  segments_.writer_gone(rank);
  try {
    queue_->fail_writer(rank, reason);
    for (std::int64_t step : doomed) remember_aborted(step, reason);
  } catch (const stream::QueueError&) {  // already closed or failed: nothing left to abort
  }
}

void Stream::remember_aborted(std::int64_t step, const std::string& reason) {
  aborted_[step] = reason;
  while (aborted_.size() > kAbortedRemembered) aborted_.erase(aborted_.begin());
}

void Stream::check_not_aborted(std::int64_t step) const {
  auto aborted = aborted_.find(step);
  if (aborted != aborted_.end()) {
    throw StreamAborted(step_text(step) + " was aborted (" + aborted->second +
                        "); the stream goes on with the next step");
  }
}

void Stream::expire_step(std::int64_t step) {
  if (!queue_) return;
  const std::vector<std::int64_t> held = queue_->held_steps();
  auto data = step_data_.find(step);
  if (std::find(held.begin(), held.end(), step) == held.end() || queue_->is_complete(step) ||
      data == step_data_.end()) {
    return;
  }
  std::vector<std::uint32_t> late;
  for (std::uint32_t rank = 0; rank < options_->config.writers; ++rank) {
    if (!departed_writers_.count(rank) && !data->second.ended.count(rank)) late.push_back(rank);
  }
  std::string names;
  for (std::uint32_t rank : late) names += (names.empty() ? "" : ", ") + std::to_string(rank);
  const std::string reason = step_text(step) + " timed out after " +
                             std::to_string(options_->step_timeout_ms) + " ms: writer" +
                             (late.size() == 1 ? " " : "s ") + names + " had not ended it";
  queue_->abort_step(step, reason);
  remember_aborted(step, reason);
}

// ---- Readers ---------------------------------------------------------------------------------

void Stream::check_reader(const ReaderKey& reader, std::uint64_t session) const {
  auto bound = reader_sessions_.find(reader);
  if (bound == reader_sessions_.end()) {
    throw StreamError(reader_text(reader.first, reader.second) + " has not joined stream " + name_ +
                      " (SS.STREAM.JOIN first)");
  }
  if (bound->second != session) {
    throw StreamError(reader_text(reader.first, reader.second) + " of stream " + name_ +
                      " is joined from another connection");
  }
}

bool Stream::reader_bound_to(const std::string& group, std::uint32_t rank,
                             std::uint64_t session) const {
  auto bound = reader_sessions_.find(ReaderKey{group, rank});
  return bound != reader_sessions_.end() && bound->second == session;
}

void Stream::join(const std::string& group, std::uint32_t rank, const JoinOptions& options,
                  std::string hostname, std::uint64_t session) {
  const ReaderKey key{group, rank};
  if (auto bound = reader_sessions_.find(key); bound != reader_sessions_.end()) {
    throw StreamError(
        reader_text(group, rank) + " has already joined stream " + name_ +
        (bound->second == session ? " on this connection" : " from another connection"));
  }
  if (auto known = groups_.find(group); known != groups_.end()) {
    const JoinOptions& have = known->second.options;
    if (have.config.size != options.config.size || have.config.policy != options.config.policy ||
        have.strategy != options.strategy ||
        have.config.distribution != options.config.distribution) {
      throw StreamError(
          "group '" + group + "' has size " + std::to_string(have.config.size) + ", policy " +
          policy_name(have.config.policy) + ", strategy " + have.strategy +
          " and step distribution " + stream::distribution_name(have.config.distribution) +
          "; this reader asked for size " + std::to_string(options.config.size) + ", policy " +
          policy_name(options.config.policy) + ", strategy " + options.strategy +
          " and step distribution " + stream::distribution_name(options.config.distribution) +
          " (every reader of a group must give the same)");
    }
  }
  // A new group's name and a new reader's host name are kept for the stream's life; a reader
  // joining again replaces its host name (both are capped).
  MemoryReservation counted;
  {
    auto known = groups_.find(group);
    const bool new_group = known == groups_.end();
    const bool new_rank = new_group || !known->second.hostnames.count(rank);
    count_metadata(counted,
                   (new_group ? 128 + group.size() : 0) + (new_rank ? 64 + hostname.size() : 0),
                   reader_text(group, rank) + "'s names");
  }
  if (queue_) {
    queue_->join(group, rank, options.config);
  } else {
    if (rank >= options.config.size) {
      throw StreamError("reader rank " + std::to_string(rank) + " is out of range for group '" +
                        group + "' of " + std::to_string(options.config.size) + " readers");
    }
    pending_joins_.emplace_back(key, options.config);
  }
  groups_.try_emplace(group, GroupData{options, {}}).first->second.hostnames[rank] =
      std::move(hostname);
  reader_sessions_[key] = session;
  stream_attributes_seen_.erase(key);  // a reader that joins gets them with its first step
  metadata_.absorb(std::move(counted));
}

std::optional<StepDelivery> Stream::next(const std::string& group, std::uint32_t rank,
                                         std::uint64_t session) {
  const ReaderKey key{group, rank};
  check_reader(key, session);
  if (!queue_) return std::nullopt;  // awaiting writers
  stream::Delivery delivery = queue_->next(group, rank);
  if (delivery.kind == stream::Delivery::Kind::kWait) return std::nullopt;
  bool with_stream_attributes = false;
  if (delivery.kind == stream::Delivery::Kind::kStep) {
    holding_[key] = delivery.step;
    auto seen = stream_attributes_seen_.find(key);
    with_stream_attributes =
        seen == stream_attributes_seen_.end() || seen->second != stream_attributes_version_;
    stream_attributes_seen_[key] = stream_attributes_version_;
  }
  return make_delivery(group, delivery, with_stream_attributes);
}

StepDelivery Stream::make_delivery(const std::string& group, const stream::Delivery& delivery,
                                   bool with_stream_attributes) const {
  StepDelivery out;
  out.kind = delivery.kind;
  out.step = delivery.step;
  out.reason = delivery.reason;
  if (delivery.kind != stream::Delivery::Kind::kStep) return out;
  const GroupData& data = groups_.at(group);
  for (std::uint32_t reader : delivery.readers) {
    auto host = data.hostnames.find(reader);
    out.readers.emplace_back(reader, host == data.hostnames.end() ? "" : host->second);
  }
  out.writers.assign(writer_hosts_.begin(), writer_hosts_.end());
  out.strategy = data.options.strategy;
  out.queue_limit = options_->config.queue_limit;
  if (with_stream_attributes) out.attributes = stream_attributes_.items;
  if (auto step = step_data_.find(delivery.step); step != step_data_.end()) {
    out.attributes.insert(out.attributes.end(), step->second.attributes.items.begin(),
                          step->second.attributes.items.end());
    out.components = step->second.components;
    for (const StoredChunk& chunk : step->second.chunks) {
      out.segments.push_back(chunk.segment);
      std::string node;
      if (chunk.remote_id != 0) {
        for (const auto& [rank, chunk_node] : chunk_nodes_) {
          if (chunk_node.index == chunk.remote_node) node = chunk_node.id;
        }
      }
      out.remote.emplace_back(std::move(node), chunk.remote_id);
    }
  }
  return out;
}

std::vector<ChunkBytes> Stream::get(const std::string& group, std::uint32_t rank,
                                                       std::int64_t step,
                                                       const std::vector<std::uint64_t>& ids,
                                                       std::uint64_t session) {
  const ReaderKey key{group, rank};
  check_reader(key, session);
  auto holding = holding_.find(key);
  auto data = step_data_.find(step);
  if (holding == holding_.end() || holding->second != step || data == step_data_.end()) {
    throw StreamError(reader_text(group, rank) + " does not hold " + step_text(step) +
                      (holding == holding_.end()
                           ? std::string(" (it holds no step; SS.STREAM.NEXT first)")
                           : " (it holds " + step_text(holding->second) + ")"));
  }
  std::vector<ChunkBytes> out;
  out.reserve(ids.size());
  for (std::uint64_t id : ids) {
    if (id >= data->second.chunks.size()) {
      throw StreamError("chunk id " + std::to_string(id) + " is out of range: " + step_text(step) +
                        " has " + std::to_string(data->second.chunks.size()) + " chunks");
    }
    const StoredChunk& chunk = data->second.chunks[id];
    if (chunk.remote_id != 0) {
      throw StreamError("chunk " + std::to_string(id) + " of " + step_text(step) +
                        " is held by its writer's shard (SS.CHUNKS.GET " +
                        std::to_string(chunk.remote_id) + " there; NEXT names the shard)");
    }
    out.push_back(ChunkBytes{chunk.bytes, chunk.segment, chunk.size});
  }
  return out;
}

void Stream::release(const std::string& group, std::uint32_t rank, std::int64_t step,
                     std::uint64_t session) {
  const ReaderKey key{group, rank};
  check_reader(key, session);
  if (!queue_) {
    throw StreamError(reader_text(group, rank) + " does not hold " + step_text(step) +
                      " (no writer has attached yet)");
  }
  queue_->release(group, rank, step);
  holding_.erase(key);
}

void Stream::leave(const std::string& group, std::uint32_t rank, std::uint64_t session) {
  const ReaderKey key{group, rank};
  check_reader(key, session);
  if (queue_) {
    queue_->leave(group, rank);
  } else {
    std::erase_if(pending_joins_, [&](const auto& join) { return join.first == key; });
  }
  holding_.erase(key);
  reader_sessions_.erase(key);
  stream_attributes_seen_.erase(key);
}

// ---- Connections and parked requests ---------------------------------------------------------

void Stream::session_closed(std::uint64_t session) {
  hooked_sessions_.erase(session);
  std::vector<std::uint32_t> writers;
  for (const auto& [rank, bound] : writer_sessions_) {
    if (bound == session) writers.push_back(rank);
  }
  for (std::uint32_t rank : writers) fail_writer(rank);
  std::vector<ReaderKey> readers;
  for (const auto& [reader, bound] : reader_sessions_) {
    if (bound == session) readers.push_back(reader);
  }
  for (const ReaderKey& reader : readers) {
    try {
      leave(reader.first, reader.second, session);
    } catch (const std::exception&) {  // not a member any more: nothing to give back
      holding_.erase(reader);
      reader_sessions_.erase(reader);
      stream_attributes_seen_.erase(reader);
    }
  }
}

void Stream::erase() {
  const std::string error = "ERR stream '" + name_ + "' was deleted";
  for (const auto& parked : parked_) {
    if (auto session = parked->session.lock()) {
      session->resume([error](ReplyBuffer& reply) { reply.error(error); });
    }
  }
  parked_.clear();
  for (const auto& [number, data] : step_data_) {
    for (const StoredChunk& chunk : data.chunks) {
      if (chunk.remote_id != 0) remote_work_.frees[chunk.remote_node].push_back(chunk.remote_id);
    }
  }
  step_data_.clear();
  bytes_held_ = 0;
  segments_.clear();
  stream_attributes_ = AttributeList();
  metadata_ = MemoryReservation();
  queue_.reset();
  options_.reset();
  pending_joins_.clear();
  writer_sessions_.clear();
  reader_sessions_.clear();
  holding_.clear();
  stream_attributes_seen_.clear();
  groups_.clear();
  chunk_nodes_.clear();
  aborted_.clear();
  new_deadlines_.clear();
}

bool Stream::withdraw(const ParkedRequest* request) {
  auto it = std::find_if(parked_.begin(), parked_.end(),
                         [&](const auto& parked) { return parked.get() == request; });
  if (it == parked_.end()) return false;
  parked_.erase(it);
  return true;
}

void Stream::drop_freed() {
  if (!queue_) return;
  for (std::int64_t step : queue_->take_freed()) {
    auto data = step_data_.find(step);
    if (data == step_data_.end()) continue;
    bytes_held_ -= data->second.bytes;
    for (const StoredChunk& chunk : data->second.chunks) {
      if (chunk.remote_id != 0) remote_work_.frees[chunk.remote_node].push_back(chunk.remote_id);
    }
    step_data_.erase(data);  // gives the reserved memory back
    segments_.step_freed(step);
  }
}

// A request that goes on may change the stream (a NEXT hands out a step, a BEGIN takes a slot
// and may drop an unread step), so the parked requests are retried until none goes on.
std::vector<std::pair<std::int64_t, std::chrono::milliseconds>> Stream::settle() {
  drop_freed();
  for (bool progress = true; progress;) {
    progress = false;
    for (auto it = parked_.begin(); it != parked_.end();) {
      std::optional<ReplyWriter> reply = (*it)->retry(*this);
      if (!reply) {
        ++it;
        continue;
      }
      if (auto session = (*it)->session.lock()) session->resume(std::move(*reply));
      it = parked_.erase(it);
      drop_freed();
      progress = true;
    }
  }
  return std::exchange(new_deadlines_, {});
}

// ---- Introspection ---------------------------------------------------------------------------

bool Stream::idle() const {
  return !reachable() && (!queue_ || (queue_->ended() && queue_->held_steps().empty()));
}

bool Stream::forgettable(Clock::time_point now, std::optional<Clock::time_point>* recheck) {
  if (!idle()) return false;
  if (!queue_) return true;
  if (!kept_until_) {
    kept_until_ = now + kEndedRunKept;
    if (recheck != nullptr) *recheck = *kept_until_;
    return false;
  }
  return now >= *kept_until_;
}

bool Stream::reachable() const {
  return !writer_sessions_.empty() || !reader_sessions_.empty() || !parked_.empty();
}

bool Stream::stale() const { return ended() && !reachable() && !failed_writers_.empty(); }

StreamInfo Stream::info() const {
  StreamInfo out;
  if (options_) {
    out.writers = options_->config.writers;
    out.queue_limit = options_->config.queue_limit;
  }
  out.writers_attached = writer_sessions_.size();
  out.bytes_held = bytes_held_;
  out.segment_bytes = segments_.bytes();
  out.segments = segments_.count();
  out.segments_made = segments_.made();
  if (queue_) {
    out.queue = queue_->stats();
    out.ended = queue_->ended();
    if (auto precious = queue_->precious_step()) {
      if (auto data = step_data_.find(*precious); data != step_data_.end()) {
        out.precious_bytes = data->second.bytes;
      }
    }
  }
  if (kept_ended()) {
    out.kept_ms = std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(*kept_until_ - Clock::now())
               .count());
  }
  for (const auto& [name, group] : groups_) {
    StreamInfo::Group shown;
    shown.name = name;
    shown.policy = policy_name(group.options.config.policy);
    shown.strategy = group.options.strategy;
    shown.distribution = stream::distribution_name(group.options.config.distribution);
    shown.size = group.options.config.size;
    if (auto stats = out.queue.groups.find(name); stats != out.queue.groups.end()) {
      shown.stats = stats->second;
    } else {  // awaiting writers: count the readers that have joined
      for (const auto& [reader, session] : reader_sessions_) {
        if (reader.first == name) ++shown.stats.readers;
      }
    }
    out.groups.push_back(std::move(shown));
  }
  return out;
}

}  // namespace slipstream::server
