// Names of an enum's values, declared once as a table and read both ways: value -> name for
// logs, metric labels and errInfo; name -> value for configuration choices. One table per enum
// means a name printed in a log is the name the configuration accepts.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace docguard::base {

template <typename E>
struct EnumName {
  E value;
  const char* name;  // a literal: NUL-terminated, so it can go to C APIs and metric labels as is
};

template <typename E, size_t N>
class EnumNames {
 public:
  constexpr EnumNames(const std::array<EnumName<E>, N>& entries, const char* unknown)
      : entries_(entries), unknown_(unknown) {}

  // The name of `value`; the table's `unknown` name for a value it does not list.
  constexpr const char* name(E value) const {
    for (const auto& e : entries_) {
      if (e.value == value) return e.name;
    }
    return unknown_;
  }
  // The value named exactly `name` (case-sensitive), or nullopt.
  constexpr std::optional<E> value(std::string_view name) const {
    for (const auto& e : entries_) {
      if (name == e.name) return e.value;
    }
    return std::nullopt;
  }
  // The names for an error message: "a or b", "a, b or c".
  std::string choices() const {
    std::string out;
    for (size_t i = 0; i < N; ++i) {
      if (i > 0) out += i + 1 == N ? " or " : ", ";
      out += entries_[i].name;
    }
    return out;
  }
  constexpr const std::array<EnumName<E>, N>& entries() const { return entries_; }

 private:
  std::array<EnumName<E>, N> entries_;
  const char* unknown_;
};

// enum_names<Action>({{Action::kOff, "off"}, {Action::kWarn, "warn"}}, "?")
template <typename E, size_t N>
constexpr EnumNames<E, N> enum_names(const EnumName<E> (&entries)[N], const char* unknown) {
  std::array<EnumName<E>, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = entries[i];
  return EnumNames<E, N>(a, unknown);
}

}  // namespace docguard::base
