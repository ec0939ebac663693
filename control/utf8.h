// Request bodies must be UTF-8 (JSON requires it; so does the store, which
// keeps specs as JSON text). These find the first byte that is not, and the
// field it sits in, so the API can answer 400 naming the field instead of
// failing later when the text is written out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace meridian::control {

// The offset of the first byte of `text` that does not start a well-formed
// UTF-8 sequence (overlong forms, surrogates and code points above U+10FFFF
// are ill-formed), or nullopt when all of it is UTF-8.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

// The path ("resources.gpu_models[1]", "name") of the key or string value
// of JSON `text` that holds the byte at `offset`, for JSON well-formed up to
// that byte; "" when it is not inside a string.
std::string JsonFieldAt(std::string_view text, size_t offset);

// The path of the first key or string in `tree` that is not UTF-8, or nullopt.
std::optional<std::string> NonUtf8Field(const nlohmann::json& tree);

// kInvalidArgument naming the field when a request body (JSON or YAML) is not
// UTF-8: "name: invalid UTF-8 (byte 0xff at offset 10); ...".
Status CheckUtf8Body(std::string_view body, bool json);

// A JSON request body: UTF-8 (CheckUtf8Body) with no NUL byte. JSON allows a
// NUL only escaped ("\u0000"); nlohmann's reader takes a raw one for the end
// of the text, as in a C string, and would accept whatever follows it.
Status CheckJsonBody(std::string_view body);

}  // namespace meridian::control
