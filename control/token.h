// Bearer tokens: 32 random bytes from the kernel, written as "mrd_" and 64 hex
// digits; the store keeps only their SHA-256 (hex), so a copy of the database
// does not hand out access.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace meridian::control {

Result<std::string> GenerateToken();
// Lower-case hex SHA-256 of `text` (OpenSSL EVP).
std::string Sha256Hex(std::string_view text);

}  // namespace meridian::control
