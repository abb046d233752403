// openPMD-api's Attributable: every object of a series (the series, iterations, records,
// components) is a handle on shared state; copies refer to the same object. Attributes are set
// and read here, and written or read with the object's data at the next flush.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "openPMD/Attribute.hpp"
#include "slipstream/export.hpp"

namespace openPMD {

namespace internal {
struct Node;  // the state of one object of a series (src/openpmd/node.hpp)
}  // namespace internal

/// How a series is opened. READ_ONLY (= READ_RANDOM_ACCESS) allows random access to the
/// iterations of a file; READ_LINEAR reads them in order (the only way for a stream); CREATE
/// writes a new series; READ_WRITE and APPEND add to a file series.
enum class Access { READ_ONLY, READ_RANDOM_ACCESS = READ_ONLY, READ_WRITE, CREATE, APPEND, READ_LINEAR };

class SLIPSTREAM_API Attributable {
 public:
  /// An object attached to nothing (what a default-constructed Series holds).
  Attributable();
  virtual ~Attributable();
  Attributable(const Attributable&) = default;
  Attributable& operator=(const Attributable&) = default;
  Attributable(Attributable&&) noexcept = default;
  Attributable& operator=(Attributable&&) noexcept = default;

  /// Sets (or replaces) attribute `key`; it is written at the next flush. Returns true when it
  /// replaced a value. Throws error::WrongAPIUsage in a series opened for reading, and
  /// error::IllegalInOpenPMDStandard for an empty key or one with '/'.
  template <typename T>
  bool setAttribute(const std::string& key, T value) {
    return setAttributeImpl(key, Attribute(std::move(value)));
  }
  bool setAttribute(const std::string& key, const char value[]) {
    return setAttributeImpl(key, Attribute(std::string(value)));
  }
  /// The attribute `key`. Throws error::NoSuchAttribute when there is none.
  Attribute getAttribute(const std::string& key) const;
  /// Removes `key`; returns false when there was none. Not allowed when reading.
  bool deleteAttribute(const std::string& key);
  /// The names of the attributes, sorted.
  std::vector<std::string> attributes() const;
  std::size_t numAttributes() const;
  bool containsAttribute(const std::string& key) const;
  /// The `comment` attribute ("" when unset).
  std::string comment() const;
  Attributable& setComment(const std::string& comment);

  /// Flushes the series this object belongs to (Series::flush()).
  void seriesFlush(const std::string& backend_config = "{}");

  /// Where this object lives: the series' directory and name, and the path of groups from the
  /// series' root down to it (e.g. {"data", "100", "meshes", "E", "x"}).
  struct MyPath {
    std::string directory;
    std::string seriesName;
    std::string seriesExtension;
    std::vector<std::string> group;
    Access access{};
    std::string filePath() const;
    std::string openPMDPath() const;
  };
  MyPath myPath() const;

  /// For the layer's own classes: the object this handle refers to.
  explicit Attributable(std::shared_ptr<internal::Node> node);
  const std::shared_ptr<internal::Node>& node() const noexcept { return node_; }

 protected:
  bool setAttributeImpl(const std::string& key, Attribute value);
  /// The typed children of a container object, kept with the object (see Container).
  std::shared_ptr<void>& childrenSlot() const;
  /// A new child object `name` of this one, with the defaults of `kind` set where the series is
  /// written. Throws std::out_of_range when the series is read-only (as openPMD-api's
  /// containers do for a missing key).
  std::shared_ptr<internal::Node> makeChild(const std::string& name) const;
  /// A new child object `name` for a tree being read (no checks).
  std::shared_ptr<internal::Node> adoptChild(const std::string& name) const;
  /// Forgets child `name` (and what was queued for it). Throws error::WrongAPIUsage when it was
  /// written already.
  void eraseChild(const std::string& name) const;
  /// Forgets child `name` whatever its state.
  void eraseChildNode(const std::string& name) const;
  /// Renames child `from` to `to` (see Container::rekey).
  void rekeyChildNode(const std::string& from, const std::string& to) const;

  std::shared_ptr<internal::Node> node_;
};

}  // namespace openPMD
