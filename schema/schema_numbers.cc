// Exact number comparison and the Decimal128 remainder of `multipleOf` (schema_numbers.h).
//
// Why no Decimal128 library: the server's answers need only three exact facts, each computed
// here with integers and glibc's correctly rounded printf:
// - a Decimal128 is c x 10^e with c < 10^34, read straight from its bits;
// - comparing a Decimal128 with a double compares it with the double's exact binary value
//   (the server rounds the decimal toward negative infinity and looks at the inexact flag, which
//   amounts to the same); a double's exact value has at most 767 significant digits, and printf
//   with that many digits prints it exactly;
// - the server's remainder is Decimal128 fmod, which is exact, so it is zero iff value / divisor
//   is an integer; with divisor = 2^a 5^b m (m prime to 10) and value = cx 10^ex, that holds iff
//   m divides cx and cx's own factors of 2 and 5 plus (ex - ey) cover a and b.
// The server converts a double to Decimal128 by rounding it to 34 digits and then quantizing that
// to 15 significant digits, both ties-to-even; printf("%.33e") gives the same 34 digits (glibc
// rounds exactly, ties to even) and the 15-digit step is done here.
#include "schema_numbers.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace docguard::schema {

namespace {

using u128 = Uint128;

constexpr std::array<u128, 39> powers_of_ten() {
  std::array<u128, 39> p{};
  p[0] = 1;
  for (size_t i = 1; i < p.size(); ++i) p[i] = p[i - 1] * 10;
  return p;
}
constexpr std::array<u128, 39> kPow10 = powers_of_ten();
constexpr u128 kMaxCoefficient = kPow10[34] - 1;

int digit_count(u128 c) {
  int n = 1;
  while (n < 39 && c >= kPow10[n]) ++n;
  return n;
}

int sign_of(int x) { return x < 0 ? -1 : (x > 0 ? 1 : 0); }

DecimalParts decode_decimal_bits(uint64_t low, uint64_t high, Number::Kind* kind) {
  DecimalParts d;
  d.negative = (high >> 63) != 0;
  const uint64_t top5 = (high >> 58) & 0x1F;
  if (top5 == 0x1F) {
    *kind = Number::Kind::kNaN;
    return d;
  }
  if (top5 == 0x1E) {
    *kind = Number::Kind::kInfinite;
    return d;
  }
  *kind = Number::Kind::kFinite;
  if (((high >> 61) & 3) == 3) {
    // The "large coefficient" form always exceeds 10^34 - 1: a non-canonical zero.
    d.exponent = static_cast<int32_t>((high >> 47) & 0x3FFF) - 6176;
    return d;
  }
  d.exponent = static_cast<int32_t>((high >> 49) & 0x3FFF) - 6176;
  const u128 c = (static_cast<u128>(high & 0x1FFFFFFFFFFFFULL) << 64) | low;
  d.coefficient = c > kMaxCoefficient ? 0 : c;
  return d;
}

DecimalParts from_integer(int64_t i) {
  DecimalParts d;
  d.negative = i < 0;
  d.coefficient = i < 0 ? static_cast<u128>(-(static_cast<Int128>(i))) : static_cast<u128>(i);
  return d;
}

// |a| against |b| for non-zero coefficients.
int compare_decimal_magnitudes(const DecimalParts& a, const DecimalParts& b) {
  const int da = digit_count(a.coefficient), db = digit_count(b.coefficient);
  const int64_t ea = int64_t{a.exponent} + da, eb = int64_t{b.exponent} + db;
  if (ea != eb) return ea < eb ? -1 : 1;
  // Same leading position: scale the shorter coefficient to the longer's length (<= 34 digits).
  if (da <= db) {
    const u128 x = a.coefficient * kPow10[db - da];
    return x == b.coefficient ? 0 : (x < b.coefficient ? -1 : 1);
  }
  const u128 y = b.coefficient * kPow10[da - db];
  return a.coefficient == y ? 0 : (a.coefficient < y ? -1 : 1);
}

int compare_decimals(const DecimalParts& a, const DecimalParts& b) {
  const int sa = a.coefficient == 0 ? 0 : (a.negative ? -1 : 1);
  const int sb = b.coefficient == 0 ? 0 : (b.negative ? -1 : 1);
  if (sa != sb || sa == 0) return sa < sb ? -1 : (sa > sb ? 1 : 0);
  const int m = compare_decimal_magnitudes(a, b);
  return sa > 0 ? m : -m;
}

// A positive value's significant digits (no trailing zeros) and the power of ten of the first.
struct Digits {
  std::array<char, 800> text{};
  int length = 0;
  int64_t exponent = 0;
  void trim() {
    while (length > 1 && text[length - 1] == '0') --length;
  }
};

void exact_digits(double positive, Digits* out) {
  // 767 significant digits hold any double exactly.
  char buf[800];
  std::snprintf(buf, sizeof buf, "%.766e", positive);
  out->length = 0;
  const char* p = buf;
  for (; *p != 'e' && *p != '\0'; ++p) {
    if (*p >= '0' && *p <= '9') out->text[out->length++] = *p;
  }
  out->exponent = *p == 'e' ? std::strtol(p + 1, nullptr, 10) : 0;
  out->trim();
}

void decimal_digits(const DecimalParts& d, Digits* out) {
  char reversed[40];
  int n = 0;
  for (u128 c = d.coefficient; c != 0; c /= 10) reversed[n++] = static_cast<char>('0' + c % 10);
  out->length = n;
  for (int i = 0; i < n; ++i) out->text[i] = reversed[n - 1 - i];
  out->exponent = int64_t{d.exponent} + n - 1;
  out->trim();
}

int compare_digits(const Digits& a, const Digits& b) {
  if (a.exponent != b.exponent) return a.exponent < b.exponent ? -1 : 1;
  const int common = a.length < b.length ? a.length : b.length;
  for (int i = 0; i < common; ++i) {
    if (a.text[i] != b.text[i]) return a.text[i] < b.text[i] ? -1 : 1;
  }
  return a.length == b.length ? 0 : (a.length < b.length ? -1 : 1);
}

int compare_decimal_to_double(const DecimalParts& a, double b) {
  const int sa = a.coefficient == 0 ? 0 : (a.negative ? -1 : 1);
  const int sb = b == 0 ? 0 : (b < 0 ? -1 : 1);
  if (sa != sb || sa == 0) return sa < sb ? -1 : (sa > sb ? 1 : 0);
  Digits x, y;
  decimal_digits(a, &x);
  exact_digits(std::fabs(b), &y);
  const int m = compare_digits(x, y);
  return sa > 0 ? m : -m;
}

// The server's compareLongToDouble, for a finite double.
int compare_long_to_double(int64_t lhs, double rhs) {
  constexpr int64_t kEndOfPreciseDoubles = int64_t{1} << 53;
  if (lhs <= kEndOfPreciseDoubles && lhs >= -kEndOfPreciseDoubles) {
    const double l = static_cast<double>(lhs);
    return l == rhs ? 0 : (l < rhs ? -1 : 1);
  }
  constexpr double kBoundOfLongRange = 9223372036854775808.0;  // 2^63
  if (rhs >= kBoundOfLongRange) return -1;
  if (rhs < -kBoundOfLongRange) return 1;
  const auto r = static_cast<int64_t>(rhs);
  return lhs == r ? 0 : (lhs < r ? -1 : 1);
}

int compare_finite(const Number& a, const Number& b) {
  const bool a_decimal = a.type == BSON_TYPE_DECIMAL128, b_decimal = b.type == BSON_TYPE_DECIMAL128;
  const bool a_double = a.type == BSON_TYPE_DOUBLE, b_double = b.type == BSON_TYPE_DOUBLE;
  if (a_decimal || b_decimal) {
    if (a_decimal && b_decimal) return compare_decimals(a.decimal, b.decimal);
    if (a_decimal) {
      return b_double ? compare_decimal_to_double(a.decimal, b.real)
                      : compare_decimals(a.decimal, from_integer(b.integer));
    }
    return -compare_finite(b, a);
  }
  if (a_double && b_double) return a.real == b.real ? 0 : (a.real < b.real ? -1 : 1);
  if (a_double) return -compare_long_to_double(b.integer, a.real);
  if (b_double) return compare_long_to_double(a.integer, b.real);
  return a.integer == b.integer ? 0 : (a.integer < b.integer ? -1 : 1);
}

// NaN below -infinity below finite below +infinity.
int rank(const Number& n) {
  if (n.kind == Number::Kind::kNaN) return -2;
  if (n.kind == Number::Kind::kInfinite) return n.negative ? -1 : 2;
  return 0;
}

std::optional<DecimalParts> double_to_decimal128(double d) {
  if (!std::isfinite(d)) return std::nullopt;
  DecimalParts out;
  out.negative = std::signbit(d);
  if (d == 0) return out;
  char buf[64];  // d.ddd...(33 more)e+XXX
  std::snprintf(buf, sizeof buf, "%.33e", std::fabs(d));
  char digits[34];
  int n = 0;
  const char* p = buf;
  for (; *p != 'e' && *p != '\0' && n < 34; ++p) {
    if (*p >= '0' && *p <= '9') digits[n++] = *p;
  }
  while (*p != 'e' && *p != '\0') ++p;
  const long exponent = *p == 'e' ? std::strtol(p + 1, nullptr, 10) : 0;
  uint64_t coefficient = 0;
  for (int i = 0; i < 15; ++i)
    coefficient = coefficient * 10 + static_cast<uint64_t>(digits[i] - '0');
  // The 19 dropped digits against one half of the 15th digit's unit, ties to even.
  int tail = 0;
  if (digits[15] != '5') {
    tail = digits[15] < '5' ? -1 : 1;
  } else {
    for (int i = 16; i < 34 && tail == 0; ++i) tail = digits[i] != '0' ? 1 : 0;
  }
  int64_t scale = exponent - 14;
  if (tail > 0 || (tail == 0 && (coefficient & 1) != 0)) {
    if (++coefficient == 1'000'000'000'000'000ULL) {
      coefficient /= 10;
      ++scale;
    }
  }
  out.coefficient = coefficient;
  out.exponent = static_cast<int32_t>(scale);
  return out;
}

int strip_factor(u128* c, unsigned factor) {
  int n = 0;
  while (*c != 0 && *c % factor == 0) {
    *c /= factor;
    ++n;
  }
  return n;
}

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

constexpr uint64_t kIntegerTag = 0x1, kRealTag = 0x2, kDecimalTag = 0x3, kSpecialTag = 0x4;

uint64_t double_hash(double x) {
  if (x == std::trunc(x) && x >= -9223372036854775808.0 && x < 9223372036854775808.0) {
    return mix(static_cast<uint64_t>(static_cast<int64_t>(x)) ^ kIntegerTag);
  }
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  return mix(bits) ^ kRealTag;
}

// An integral decimal's value, when it fits an int64.
std::optional<int64_t> decimal_as_int64(const DecimalParts& normalized) {
  if (normalized.exponent < 0 || normalized.exponent > 19) return std::nullopt;
  const u128 limit = normalized.negative ? (u128{1} << 63) : (u128{1} << 63) - 1;
  if (normalized.coefficient > limit / kPow10[normalized.exponent]) return std::nullopt;
  const u128 v = normalized.coefficient * kPow10[normalized.exponent];
  return normalized.negative ? static_cast<int64_t>(-static_cast<Int128>(v))
                             : static_cast<int64_t>(v);
}

uint64_t decimal_hash(DecimalParts d) {
  if (d.coefficient == 0) return mix(kIntegerTag);
  d.exponent += strip_factor(&d.coefficient, 10);
  if (auto i = decimal_as_int64(d)) return mix(static_cast<uint64_t>(*i) ^ kIntegerTag);
  // Equal to a double only if it equals its nearest double: hash that double, as it would be.
  char text[64];
  Digits digits;
  decimal_digits(d, &digits);
  std::snprintf(text, sizeof text, "%s%.*sE%d", d.negative ? "-" : "", digits.length,
                digits.text.data(), static_cast<int>(d.exponent));
  const double nearest = std::strtod(text, nullptr);
  if (std::isfinite(nearest) && compare_decimal_to_double(d, nearest) == 0) {
    return double_hash(nearest);
  }
  return mix(static_cast<uint64_t>(d.coefficient)) ^
         mix(static_cast<uint64_t>(d.coefficient >> 64) + kDecimalTag) ^
         mix((static_cast<uint64_t>(static_cast<uint32_t>(d.exponent)) << 1) | d.negative);
}

}  // namespace

std::optional<Number> decode_number(const Value& v) {
  Number n;
  n.type = v.type;
  switch (v.type) {
    case BSON_TYPE_INT32: {
      if (v.size < 4) return std::nullopt;
      int32_t i;
      std::memcpy(&i, v.data, 4);
      n.integer = i;
      return n;
    }
    case BSON_TYPE_INT64:
      if (v.size < 8) return std::nullopt;
      std::memcpy(&n.integer, v.data, 8);
      return n;
    case BSON_TYPE_DOUBLE:
      if (v.size < 8) return std::nullopt;
      std::memcpy(&n.real, v.data, 8);
      if (std::isnan(n.real)) n.kind = Number::Kind::kNaN;
      if (std::isinf(n.real)) {
        n.kind = Number::Kind::kInfinite;
        n.negative = n.real < 0;
      }
      return n;
    case BSON_TYPE_DECIMAL128: {
      if (v.size < 16) return std::nullopt;
      uint64_t low, high;
      std::memcpy(&low, v.data, 8);
      std::memcpy(&high, v.data + 8, 8);
      n.decimal = decode_decimal_bits(low, high, &n.kind);
      n.negative = n.decimal.negative;
      return n;
    }
    default:
      return std::nullopt;
  }
}

int compare_numbers(const Number& a, const Number& b) {
  const int ra = rank(a), rb = rank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  if (ra != 0) return 0;  // both NaN, or the same infinity
  return sign_of(compare_finite(a, b));
}

bool compares(const Number& value, Comparison op, const Number& bound) {
  const bool value_nan = value.kind == Number::Kind::kNaN;
  const bool bound_nan = bound.kind == Number::Kind::kNaN;
  if (value_nan || bound_nan) {
    return (op == Comparison::kLessEqual || op == Comparison::kGreaterEqual) && value_nan &&
           bound_nan;
  }
  const int c = compare_numbers(value, bound);
  switch (op) {
    case Comparison::kLess:
      return c < 0;
    case Comparison::kLessEqual:
      return c <= 0;
    case Comparison::kGreater:
      return c > 0;
    case Comparison::kGreaterEqual:
      return c >= 0;
  }
  return false;
}

std::optional<DecimalParts> to_decimal128(const Number& n) {
  if (n.kind != Number::Kind::kFinite) return std::nullopt;
  switch (n.type) {
    case BSON_TYPE_DOUBLE:
      return double_to_decimal128(n.real);
    case BSON_TYPE_DECIMAL128:
      return n.decimal;
    default:
      return from_integer(n.integer);
  }
}

bool is_multiple_of(const Number& value, const DecimalParts& divisor) {
  const auto x = to_decimal128(value);
  if (!x || divisor.coefficient == 0) return false;
  if (x->coefficient == 0) return true;
  u128 m = divisor.coefficient;
  const int a = strip_factor(&m, 2), b = strip_factor(&m, 5);
  if (x->coefficient % m != 0) return false;
  u128 cx = x->coefficient;
  const int p = strip_factor(&cx, 2);
  cx = x->coefficient;
  const int q = strip_factor(&cx, 5);
  const int64_t shift = int64_t{x->exponent} - divisor.exponent;
  return p + shift >= a && q + shift >= b;
}

uint64_t number_hash(const Number& n) {
  if (n.kind == Number::Kind::kNaN) return mix(kSpecialTag);
  if (n.kind == Number::Kind::kInfinite) return mix(kSpecialTag + 1 + (n.negative ? 1 : 0));
  switch (n.type) {
    case BSON_TYPE_DOUBLE:
      return double_hash(n.real);
    case BSON_TYPE_DECIMAL128:
      return decimal_hash(n.decimal);
    default:
      return mix(static_cast<uint64_t>(n.integer) ^ kIntegerTag);
  }
}

}  // namespace docguard::schema
