#include "control/token.h"

#include <openssl/evp.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace meridian::control {

namespace {

std::string Hex(const unsigned char* p, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[p[i] >> 4];
    s[2 * i + 1] = kDigits[p[i] & 15];
  }
  return s;
}

}  // namespace

Result<std::string> GenerateToken() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Internal(std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  return "mrd_" + Hex(bytes, sizeof bytes);
}

std::string Sha256Hex(std::string_view text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
  return Hex(md, len);
}

}  // namespace meridian::control
