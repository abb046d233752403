// Whether this build runs under a sanitizer that reserves terabytes of address space for its
// shadow memory as the process starts (AddressSanitizer, ThreadSanitizer): an address-space limit
// would leave such a process nothing to allocate.
#pragma once

namespace slipstream {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

}  // namespace slipstream
