// Fuzz target: the API's decoding of a job submission (POST /v1/jobs and the
// fleet plan endpoint): the body format from its Content-Type, then
// ParseSubmission (control/submission.cc). The first byte of the input picks
// the Content-Type the daemon is sent; the rest is the body. A JSON body the
// daemon read as a tree must read the same from its text
// (ParseSubmissionText, the reference). An accepted
// submission's stored JSON must read the same as a tree (SpecFromJson, what
// the daemon uses) and as text (SpecFromJsonText, the reference): a
// difference aborts, as a crash does.
#include <array>
#include <cstdio>
#include <cstdlib>

#include "control/submission.h"
#include "fuzz/scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static constexpr std::array<std::string_view, 5> kContentTypes = {
      "", "application/json", "application/yaml", "text/yaml; charset=utf-8", "text/plain"};
  if (size == 0) return 0;
  std::string_view content_type = kContentTypes[data[0] % kContentTypes.size()];
  std::string_view body = meridian::fuzz::Bytes(data + 1, size - 1);
  auto format = meridian::control::FormatFor(content_type, body);
  if (!format.ok()) return 0;
  auto submission = meridian::control::ParseSubmission(body, *format, "fuzz-tenant");
  if (!submission.ok()) {
    (void)meridian::control::FieldOfMessage(submission.status().message());
    return 0;
  }
  // A JSON body read as a tree (no positions) must read the same as its text
  // (ParseSubmissionText, the reference): accepted, the same spec and the
  // same stored JSON. yaml-cpp misreads a carriage return not followed by a
  // line feed (JSON whitespace; inside a JSON string it must be escaped), so
  // the reference reads the body with each one made a space, which a JSON
  // reader reads alike.
  if (submission->spec.origin.marks.empty()) {
    std::string plain(body);
    for (char& ch : plain) {
      if (ch == '\r') ch = ' ';
    }
    auto text = meridian::control::ParseSubmissionText(plain, *format, "fuzz-tenant");
    if (!text.ok()) {
      std::fprintf(stderr, "the tree accepted a body its text refuses: %s\n",
                   text.status().message().c_str());
      std::abort();
    }
    text->spec.origin.marks.clear();
    if (!(text->spec == submission->spec) || text->spec_json != submission->spec_json) {
      std::fprintf(stderr, "a body reads differently as a tree and as text\n");
      std::abort();
    }
  }
  const std::string stored = submission->spec_json.dump();
  auto tree = meridian::control::SpecFromJson(stored, "j-1");
  auto text = meridian::control::SpecFromJsonText(stored, "j-1");
  if (!tree.ok() || !text.ok()) {
    std::fprintf(stderr, "accepted, but the stored spec does not read back: %s\n",
                 (!tree.ok() ? tree : text).status().message().c_str());
    std::abort();
  }
  text->origin.marks.clear();  // the tree read has no positions
  if (!(*tree == *text)) {
    std::fprintf(stderr, "the stored spec reads differently as a tree and as text: %s\n",
                 stored.c_str());
    std::abort();
  }
  return 0;
}
