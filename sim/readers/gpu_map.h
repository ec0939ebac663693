// Which catalog GPU models a job of a team's history may run on, from the
// names the history gives its GPUs: Slurm GRES types and partitions (sacct),
// GPU Feature Discovery product labels and GKE accelerator labels
// (Kubernetes). docs/trace-format.md, "GPU names", is the user's account.
//
// A map file (`simulate --gpu-map FILE`) pins names to models, one YAML
// key per name, case-insensitive:
//
//   a100: A100-80GB                 # a GRES type, or a node label's value
//   rtx_a6000: [L40S, A10]          # a list: any of these
//   partition:inference: L4         # every GPU job of a Slurm partition
//
// Without an entry, a name is read by NamedModels. A GpuMap is a value,
// read-only once loaded.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "core/status.h"

namespace meridian::sim {

// The models a job may run on and the one its recorded run time belongs to.
struct GpuChoice {
  std::vector<std::string> models;  // catalog models, catalog order; empty = any
  // The first of `models` in the catalog's order ("" when any): the run
  // lasts the recorded time there and is scaled by speed on the others.
  std::string recorded_on;
};

class GpuMap {
 public:
  // Reads the map at `path` ("" = an empty map); every model must be in `catalog` (errors
  // "<map>:<line>: <key>: \"A100\" is not a GPU model in the catalog; did
  // you mean ...", all of them).
  static Result<GpuMap> Load(const std::string& path, const catalog::Catalog& catalog);
  // The entry for `name` (a GPU name, or "partition:NAME"); null when none.
  const std::vector<std::string>* Find(std::string_view name) const;

 private:
  std::map<std::string, std::vector<std::string>> entries_;  // lowercased name -> models
};

// The catalog models a GPU name denotes, without a map. The name is
// lowercased, '_' and ' ' become '-', and leading "nvidia-" and "tesla-" go
// ("NVIDIA-A100-SXM4-80GB" -> "a100-sxm4-80gb"). Its first token names a
// family: the catalog models whose names start with it ("a100": A100-40GB
// and A100-80GB; "a10" is not "a10g"). Within the family, the models whose
// other tokens all appear in the name ("a100-sxm4-80gb": A100-80GB); else
// those with the most of them appearing ("h100-pcie": H100-PCIE-80GB); else
// the whole family ("h100"). GKE's "nvidia-tesla-a100" and
// "nvidia-tesla-v100" are the 40 GB and 16 GB parts. Empty: no family.
std::vector<std::string> NamedModels(std::string_view name, const catalog::Catalog& catalog);

// NamedModels, each name's answer kept: a history repeats a handful of
// names over many rows. Borrows `catalog`.
class NamedModelsCache {
 public:
  explicit NamedModelsCache(const catalog::Catalog& catalog) : catalog_(catalog) {}
  const std::vector<std::string>& Of(std::string_view name);

 private:
  const catalog::Catalog& catalog_;
  std::map<std::string, std::vector<std::string>, std::less<>> known_;
};

// `models` as a GpuChoice (sorted into catalog order, recorded_on first).
GpuChoice ChoiceOf(std::vector<std::string> models, const catalog::Catalog& catalog);

}  // namespace meridian::sim
