#include "backends/kubernetes/kubectl.h"

#include <cstdlib>
#include <filesystem>

namespace meridian::backends::k8s {

namespace {

bool IsFile(const std::string& p) {
  std::error_code ec;
  return !p.empty() && std::filesystem::is_regular_file(p, ec);
}

}  // namespace

Kubectl::Kubectl(std::string program, std::string kubeconfig, int timeout_s, ProcessRunner run)
    : program_(std::move(program)),
      kubeconfig_(std::move(kubeconfig)),
      timeout_s_(timeout_s),
      run_(run ? std::move(run) : ProcessRunner(RunProcess)),
      env_(PassThrough(KubectlEnvironmentNames())) {}

const std::vector<std::string>& KubectlEnvironmentNames() {
  // What kubectl and the credential plugins a kubeconfig names (aws eks
  // get-token, gke-gcloud-auth-plugin, kubelogin) read: the search path, the
  // home with their caches, locale, proxies, and the clouds' own variables.
  static const std::vector<std::string> names = {
      "PATH",  "HOME",        "USER",        "LANG",        "LC_ALL",     "TZ",
      "KUBECACHEDIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
      "no_proxy", "AWS_*",    "AZURE_*",     "GOOGLE_*",    "CLOUDSDK_*", "USE_GKE_GCLOUD_AUTH_PLUGIN"};
  return names;
}

Result<KubectlResult> Kubectl::Run(const std::vector<std::string>& args,
                                   const std::string& input) const {
  ProcessCall call;
  call.argv = {program_};
  if (!kubeconfig_.empty()) call.argv.insert(call.argv.end(), {"--kubeconfig", kubeconfig_});
  call.argv.insert(call.argv.end(), args.begin(), args.end());
  call.env = env_;
  call.timeout_ms = timeout_s_ * 1000;
  call.input = input;
  auto o = run_(call);
  if (!o.ok()) {
    return Status::Invalid("kubectl \"" + program_ + "\" cannot be started: " + o.status().message() +
                           " (install it with tools/install-deps: Debian's kubernetes-client)");
  }
  KubectlResult r;
  r.out = std::move(o->out);
  r.err = std::move(o->err);
  if (o->timed_out || o->output_capped) {
    r.err += o->timed_out ? "kubectl: killed after " + std::to_string(timeout_s_) + " s"
                          : "kubectl: killed: more output than a backend reads";
    return r;
  }
  r.exit_code = o->exit_code >= 0 ? o->exit_code : 128 + o->signal;
  return r;
}

Status KubectlFailure(const std::string& what, const KubectlResult& r) {
  std::string err = r.err;
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  const std::string msg = what + " (exit " + std::to_string(r.exit_code) + "): " + err;
  if (r.exit_code < 0) return Status::Internal(msg);  // killed at its timeout
  // kubectl's words for a server it did not reach or that could not answer:
  // net/http's dial and timeout errors, and the API's 429 and 5xx statuses
  // (TooManyRequests, InternalError, ServiceUnavailable, Timeout).
  static const char* const kTransient[] = {
      "connection refused", "was refused", "Unable to connect to the server", "i/o timeout",
      "TLS handshake timeout", "no route to host", "connection reset", "EOF",
      "the server is currently unable to handle the request", "InternalError",
      "ServiceUnavailable", "TooManyRequests", "Too Many Requests", "try again later",
      "the server was unable to return a response in the time allotted", "Timeout:",
      "etcdserver: request timed out", "(InternalError)", "the server has asked for the client to try again",
      "GOAWAY", "500 Internal Server Error", "502 Bad Gateway", "503 Service Unavailable",
      "504 Gateway Timeout"};
  for (const char* t : kTransient) {
    if (err.find(t) != std::string::npos) return Status::Internal(msg);
  }
  if (err.find("NotFound") != std::string::npos || err.find("not found") != std::string::npos) {
    return Status::NotFound(msg);
  }
  return Status::Invalid(msg);
}

Result<std::string> FindKubeconfig(const std::string& flag) {
  if (!flag.empty()) {
    if (!IsFile(flag)) return Status::NotFound("--kubeconfig: \"" + flag + "\": no such file");
    return flag;
  }
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t colon = list.find(':', start);
      std::string p = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (IsFile(p)) return p;
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    std::string p = std::string(home) + "/.kube/config";
    if (IsFile(p)) return p;
  }
  return std::string();
}

}  // namespace meridian::backends::k8s
