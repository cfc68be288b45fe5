// Numbers as the server compares them (private to schema/). int32, int64, double and
// Decimal128 are compared exactly across types, as the server compares numbers: distinct
// int64 values above 2^53 stay distinct, a Decimal128 is compared with a double's exact binary
// value, NaN sorts below every number and equals NaN. `multipleOf` takes the remainder in
// Decimal128 after converting both sides, as the server's validator does, where a
// double becomes a Decimal128 of 15 significant digits.
#pragma once

#include <cstdint>
#include <optional>

#include "schema_values.h"

namespace docguard::schema {

// 128-bit integers (a GNU extension, marked so for -Wpedantic).
__extension__ typedef unsigned __int128 Uint128;
__extension__ typedef __int128 Int128;

// A finite Decimal128 value: (-1)^negative x coefficient x 10^exponent, coefficient < 10^34.
struct DecimalParts {
  bool negative = false;
  Uint128 coefficient = 0;
  int32_t exponent = 0;
};

// One numeric BSON value, decoded once for comparison (no pointers into the document).
struct Number {
  enum class Kind : uint8_t { kFinite, kInfinite, kNaN };
  uint8_t type = 0;  // BSON_TYPE_INT32, BSON_TYPE_INT64, BSON_TYPE_DOUBLE or BSON_TYPE_DECIMAL128
  Kind kind = Kind::kFinite;
  bool negative = false;  // infinities' sign
  int64_t integer = 0;    // int32 and int64
  double real = 0;        // double
  DecimalParts decimal;   // finite Decimal128
};

// nullopt for a value that is not a number (or is truncated).
std::optional<Number> decode_number(const Value& v);

// -1, 0 or 1, exactly as the server orders numbers (NaN below all, equal to NaN).
int compare_numbers(const Number& a, const Number& b);

// minimum/maximum: the comparison match expressions the server builds, with their rule for
// NaN (NaN satisfies <= and >= only against NaN, and never < or >).
enum class Comparison : uint8_t { kLess, kLessEqual, kGreater, kGreaterEqual };
bool compares(const Number& value, Comparison op, const Number& bound);

// The Decimal128 the server converts a number to: int32 and
// int64 exactly, a double rounded to 15 significant digits; nullopt for NaN and infinities.
std::optional<DecimalParts> to_decimal128(const Number& n);

// Whether `value` is a multiple of `divisor` (> 0) as the server decides: the Decimal128
// remainder is exactly zero and raised no flag, so NaN and infinities are never multiples.
bool is_multiple_of(const Number& value, const DecimalParts& divisor);

// A hash equal for numbers that compare equal (whatever their types), for uniqueItems.
uint64_t number_hash(const Number& n);

}  // namespace docguard::schema
