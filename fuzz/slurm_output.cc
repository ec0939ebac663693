// Fuzz target: the parsers of what Slurm's client commands print
// (backends/slurm/parse.cc, docs/slurm.md): squeue, scontrol show job, sinfo
// and sbatch --parsable output, and the GRES and index lists inside them.
// Every parser reads the whole input, as each would if the command printed it.
#include "backends/slurm/parse.h"
#include "fuzz/scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace slurm = meridian::backends::slurm;
  std::string_view text = meridian::fuzz::Bytes(data, size);
  for (const slurm::QueueRow& row : slurm::ParseQueue(text)) {
    (void)slurm::MapJobState(row.job_id, row.state, std::nullopt, std::nullopt, row.nodes);
  }
  if (auto job = slurm::ParseJobRecord(text); job.ok()) {
    (void)slurm::MapJobState(job->job_id, job->state, job->exit_code, job->exit_signal,
                             job->nodes);
  }
  for (const slurm::NodeRow& node : slurm::ParseNodes(text)) {
    (void)slurm::ParseGpuGres(node.gres);
    (void)slurm::ParseGpuGresTypes(node.gres);
    (void)slurm::MapNodeState(node.state, node.reason);
  }
  (void)slurm::ParseGpuGres(text);
  (void)slurm::ParseGpuGresTypes(text);
  (void)slurm::ParseSubmitted(text);
  (void)slurm::ParseIndexList(text);
  return 0;
}
