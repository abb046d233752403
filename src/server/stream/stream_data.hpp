// What the server keeps of a stream's steps: record components with their chunk tables and chunk
// bytes, and attributes (at stream, step, record or component level). Plain data; the Stream that
// owns it does the locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/buffer.hpp"
#include "server/shm/shm.hpp"
#include "server/store/memory_reservation.hpp"
#include "slipstream/stream_chunks.hpp"
#include "slipstream/tensor.hpp"

namespace slipstream::server {

enum class AttributeType { kString, kInt, kFloat, kStrings, kInts, kFloats };

/// One attribute. Exactly one of the value vectors is used, by `type`; the singular types hold
/// exactly one value.
struct Attribute {
  std::int64_t step = -1;  ///< -1: stream level
  std::string path;        ///< "/" (the stream or step itself), or a record / component path
  std::string name;
  AttributeType type = AttributeType::kString;
  std::vector<std::string> strings;
  std::vector<std::int64_t> ints;
  std::vector<double> floats;
  /// The writer's own element type, when it is not the wire's (int64, double, string): one of
  /// attribute_elements(type), e.g. "UINT" or "FLOAT" (openPMD's Datatype names), so that a
  /// reader gets back the exact type that was set. Empty: the wire's.
  std::string element;
  std::uint32_t writer = 0;  ///< the rank that set it (first, when several agreed)

  /// The same type and values (who set it aside).
  bool same_value(const Attribute& other) const {
    return type == other.type && element == other.element && strings == other.strings &&
           ints == other.ints && floats == other.floats;
  }
};

/// Attributes in first-set order, indexed by (path, name); a later set replaces the value. Each
/// is counted against --maxmemory (Stream::count_metadata) by what attribute_bytes() says.
struct AttributeList {
  std::vector<Attribute> items;
  std::unordered_map<std::string, std::size_t> index;  // path + '\0' + name -> position in items
};

/// What an attribute costs the server, counted against --maxmemory: its path, name and values,
/// and the bookkeeping around them.
inline std::size_t attribute_bytes(const Attribute& attribute) {
  std::size_t bytes = 192 + attribute.path.size() + attribute.name.size() + attribute.element.size() +
                      8 * (attribute.ints.size() + attribute.floats.size());
  for (const std::string& text : attribute.strings) bytes += 32 + text.size();
  return bytes;
}

/// What a chunk's table entry costs the server beyond its bytes.
inline std::size_t chunk_metadata_bytes(std::size_t dimensions) {
  return 128 + 3 * 8 * dimensions;
}

/// A record component of one step: its dtype, global extent and chunk table. chunk_ids[i] is
/// the step-wide id of chunks[i] (its index in StepData::chunks).
struct ComponentData {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::uint64_t> global_extent;
  stream::ChunkTable chunks;
  std::vector<std::uint32_t> chunk_ids;
  /// Parallel to `chunks` once any chunk is encoded (else empty): a chunk's frame size in bytes,
  /// 0 for raw elements.
  std::vector<std::uint64_t> encoded;
};

/// The bytes of one chunk, counted against --maxmemory until the step is freed. Replies share
/// the bytes (zero copy), so they may outlive the step for as long as a reply is being written.
struct StoredChunk {
  std::shared_ptr<const Buffer> bytes;  ///< null when the chunk is in `segment`
  MemoryReservation reservation;
  /// The writer segment holding the bytes (counted against --maxmemory by the segment itself),
  /// the chunk its first `size` bytes.
  std::shared_ptr<ShmWriterSegment> segment;
  std::size_t size = 0;
  /// Cluster mode, colocated: the chunk is held by member `remote_node` (an index into the
  /// cluster's members) under id `remote_id` (SS.CHUNKS.*); 0: it is here.
  std::uint64_t remote_id = 0;
  std::size_t remote_node = 0;
};

/// A chunk's bytes as SS.STREAM.GET / VIEW and SS.CHUNKS.GET / VIEW hand them out: heap bytes,
/// or a writer segment.
struct ChunkBytes {
  std::shared_ptr<const Buffer> heap;
  std::shared_ptr<ShmWriterSegment> segment;
  std::size_t size = 0;  ///< of a chunk in `segment`: its first bytes (the segment may be larger)
};

/// One held step.
struct StepData {
  std::vector<ComponentData> components;  ///< in first-put order
  std::unordered_map<std::string, std::size_t> component_index;  ///< name -> position
  std::vector<StoredChunk> chunks;        ///< by chunk id, in put order
  AttributeList attributes;
  /// The chunk tables and attributes, counted against --maxmemory until the step is freed.
  MemoryReservation metadata;
  std::set<std::uint32_t> begun, ended;   ///< writer ranks
  std::set<std::uint32_t> refused;        ///< writers with a chunk or attribute refused (Stream::refuse)
  std::set<std::uint32_t> reserved;       ///< writers that reserved the step and have not used it
  bool deadline_pending = false;          ///< the step timeout starts when a writer uses it
  std::size_t bytes = 0;                  ///< sum of the chunks' sizes
};

}  // namespace slipstream::server
