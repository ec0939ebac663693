// Kubernetes name rules, as the API server checks them (apimachinery's
// validation package): DNS-1123 labels and subdomains for object names,
// DNS-1035 labels for Services, and the syntax of label keys and values.
// Each check returns "" when the value is valid, else the reason in the
// words of the Kubernetes documentation, so callers can prefix the field and
// the value. Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace meridian::backends::k8s {

inline constexpr size_t kMaxLabelLength = 63;      // DNS-1123 / DNS-1035 label
inline constexpr size_t kMaxSubdomainLength = 253;  // DNS-1123 subdomain

// Lower-case letters, digits and '-', starting and ending with a letter or
// digit, at most 63 characters (namespaces, Job names, pod hostnames).
std::string CheckDns1123Label(std::string_view s);
// Dot-separated DNS-1123 labels, at most 253 characters (most object names).
std::string CheckDns1123Subdomain(std::string_view s);
// As a DNS-1123 label, but starting with a letter (Service names).
std::string CheckDns1035Label(std::string_view s);
// [prefix/]name: prefix a DNS-1123 subdomain, name at most 63 characters of
// letters, digits, '-', '_', '.', starting and ending with a letter or digit.
std::string CheckLabelKey(std::string_view s);
// Empty, or at most 63 characters of the label-name alphabet.
std::string CheckLabelValue(std::string_view s);

}  // namespace meridian::backends::k8s
