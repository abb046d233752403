// openPMD-api's Container: a map of named child objects (iterations, meshes, species, records,
// components) that creates a child on first access when the series is written, and is itself an
// Attributable object.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "openPMD/Attributable.hpp"

namespace openPMD {

namespace detail {
template <typename Key>
std::string keyText(const Key& key) {
  if constexpr (std::is_integral_v<Key>) {
    return std::to_string(key);
  } else {
    return std::string(key);
  }
}
}  // namespace detail

/// Children of type T by Key. Copies refer to the same children.
template <typename T, typename Key = std::string, typename Map = std::map<Key, T>>
class Container : public Attributable {
 public:
  using key_type = typename Map::key_type;
  using mapped_type = typename Map::mapped_type;
  using value_type = typename Map::value_type;
  using size_type = typename Map::size_type;
  using iterator = typename Map::iterator;
  using const_iterator = typename Map::const_iterator;
  using reverse_iterator = typename Map::reverse_iterator;

  explicit Container(std::shared_ptr<internal::Node> node) : Attributable(std::move(node)) {
    std::shared_ptr<void>& slot = childrenSlot();
    if (!slot) slot = std::make_shared<Map>();
  }

  iterator begin() noexcept { return map().begin(); }
  const_iterator begin() const noexcept { return map().begin(); }
  const_iterator cbegin() const noexcept { return map().cbegin(); }
  iterator end() noexcept { return map().end(); }
  const_iterator end() const noexcept { return map().end(); }
  const_iterator cend() const noexcept { return map().cend(); }
  reverse_iterator rbegin() noexcept { return map().rbegin(); }
  reverse_iterator rend() noexcept { return map().rend(); }

  bool empty() const noexcept { return map().empty(); }
  size_type size() const noexcept { return map().size(); }
  size_type count(const Key& key) const { return map().count(key); }
  bool contains(const Key& key) const { return map().count(key) != 0; }
  iterator find(const Key& key) { return map().find(key); }
  const_iterator find(const Key& key) const { return map().find(key); }

  /// The child `key`. Throws std::out_of_range when there is none.
  mapped_type& at(const Key& key) {
    auto found = map().find(key);
    if (found == map().end()) throw std::out_of_range("Key '" + detail::keyText(key) + "' does not exist.");
    return found->second;
  }
  const mapped_type& at(const Key& key) const {
    auto found = map().find(key);
    if (found == map().end()) throw std::out_of_range("Key '" + detail::keyText(key) + "' does not exist.");
    return found->second;
  }

  /// The child `key`, created when missing (series written). Throws std::out_of_range for a
  /// missing key when the series is read.
  mapped_type& operator[](const Key& key) {
    auto found = map().find(key);
    if (found != map().end()) return found->second;
    mapped_type child(makeChild(detail::keyText(key)));
    return map().emplace(key, std::move(child)).first->second;
  }

  /// Removes child `key` (nothing of it may have been written yet). Returns how many were removed.
  size_type erase(const Key& key) {
    if (!contains(key)) return 0;
    eraseChild(detail::keyText(key));
    return map().erase(key);
  }
  iterator erase(iterator position) {
    eraseChild(detail::keyText(position->first));
    return map().erase(position);
  }

  /// Drops child `key` with no checks (for the layer: an iteration a stream has sent, so that a
  /// long run's series holds only the iterations still open). Handles to it stay usable.
  void forget(const Key& key) {
    eraseChildNode(detail::keyText(key));
    map().erase(key);
  }

  /// Gives child `from` the key `to`, with no checks (for the layer: a stream reader's last
  /// iteration, which nobody else holds, reused for the next step of the same shape).
  void rekey(const Key& from, const Key& to) {
    auto handle = map().extract(from);
    if (handle.empty()) return;
    handle.key() = to;
    map().insert(std::move(handle));
    rekeyChildNode(detail::keyText(from), detail::keyText(to));
  }

  /// Adds a child built from `node` (for the layer's readers, which build the tree they find).
  mapped_type& adopt(const Key& key, std::shared_ptr<internal::Node> node) {
    if (!node) node = adoptChild(detail::keyText(key));
    return map().insert_or_assign(key, mapped_type(std::move(node))).first->second;
  }

 private:
  Map& map() const { return *static_cast<Map*>(childrenSlot().get()); }
};

}  // namespace openPMD
