// Whether this translation unit is built with AddressSanitizer (tools/test's
// second pass, at -O0 and many times slower). Tests that sweep a large space
// sweep a part of it there and the whole of it in the optimized build.
#pragma once

namespace meridian {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderSanitizers = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kUnderSanitizers = true;
#else
inline constexpr bool kUnderSanitizers = false;
#endif
#else
inline constexpr bool kUnderSanitizers = false;
#endif

}  // namespace meridian
