// The command line end to end: in-process through RunMeridian for exit codes
// and messages, and through the real binary for `-o json` parsed back.
#include "cli/commands.h"
#include "cli/test_cli.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace meridian::cli {
namespace {

using nlohmann::json;

using testutil::CliRun;
using testutil::kNow;
using testutil::Meridian;

std::string WriteTemp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("meridian_cli_test_" + name);
  std::ofstream(path) << text;
  return path.string();
}

const std::vector<std::string> kExampleKinds = {
    "llm-training",       "training",     "fine-tuning", "batch-inference",
    "realtime-inference", "data-science", "rendering",   "scientific"};

TEST(Cli, HelpListsCommands) {
  CliRun r = Meridian({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("plan"), std::string::npos);
  EXPECT_NE(r.out.find("catalog"), std::string::npos);
  CliRun p = Meridian({"plan", "--help"});
  EXPECT_EQ(p.code, 0);
  EXPECT_NE(p.out.find("--top"), std::string::npos);
  EXPECT_NE(p.out.find("--at"), std::string::npos);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(Meridian({}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"frobnicate"}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"plan"}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"plan", "no/such/file.yaml"}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"plan", "examples/training.yaml", "-o", "xml"}).code, kExitBadInput);
  CliRun at = Meridian({"plan", "examples/training.yaml", "--at", "tomorrow"});
  EXPECT_EQ(at.code, kExitBadInput);
  EXPECT_NE(at.err.find("--at"), std::string::npos);
}

TEST(Cli, BadSpecNamesFieldAndExitsTwo) {
  std::string path = WriteTemp("bad_gpus.yaml", "name: x\nkind: training\nresources: {gpus: -2}\n");
  CliRun r = Meridian({"plan", path});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("resources.gpus"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-2"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  std::string unknown_gpu =
      WriteTemp("bad_model.yaml", "name: x\nkind: training\nresources: {gpu_models: [H900]}\n");
  CliRun u = Meridian({"plan", unknown_gpu});
  EXPECT_EQ(u.code, kExitBadInput);
  EXPECT_NE(u.err.find("H900"), std::string::npos) << u.err;
}

TEST(Cli, PlansEveryExampleAsJson) {
  for (const auto& kind : kExampleKinds) {
    SCOPED_TRACE(kind);
    CliRun r = Meridian({"plan", "examples/" + kind + ".yaml", "-o", "json", "--top", "0"});
    ASSERT_EQ(r.code, 0) << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["job"]["kind"], kind);
    ASSERT_TRUE(j["options"].is_array());
    ASSERT_TRUE(j["rejected"].is_array());
    ASSERT_FALSE(j["options"].empty()) << "no option for " << kind << ": " << j["rejected"].dump();
    // A service's options are billed for its replica set: its mean replicas
    // by GPU model, replica-hours over run hours (docs/plan-output.md).
    std::map<std::string, double> replicas;
    for (const auto& e : j["estimates"]) {
      if (!e.contains("service")) continue;
      replicas[e["gpu"]] = e["service"]["replica_hours"].get<double>() / e["throughput"]["run_hours"].get<double>();
    }
    EXPECT_EQ(replicas.empty(), kind != "realtime-inference");
    for (const auto& o : j["options"]) {
      for (const char* key : {"gpu", "gpus", "provider", "region", "zone", "instance_type",
                              "pricing", "hours", "cost_usd", "energy_kwh", "co2_kg",
                              "memory_per_gpu_gib", "billed_hours", "other_zones"}) {
        EXPECT_TRUE(o.contains(key)) << key;
      }
      EXPECT_NE(o["region"].get<std::string>().find(':'), std::string::npos);
      EXPECT_GT(o["hours"].get<double>(), 0);
      EXPECT_GE(o["cost_usd"].get<double>(), 0);
      // A reservation is paid for its whole term; everything else for the
      // hours used; a service's, for each of its replicas.
      const auto set = replicas.find(o["gpu"].get<std::string>());
      const double mean = set == replicas.end() ? 1.0 : set->second;
      if (o["pricing"] == "reserved") {
        EXPECT_GE(o["billed_hours"].get<double>(), 8760.0 * mean - 0.01);
      } else {
        EXPECT_NEAR(o["billed_hours"].get<double>(), o["hours"].get<double>() * mean, 0.01);
      }
      std::string pricing = o["pricing"];
      EXPECT_TRUE(pricing == "on-demand" || pricing == "spot" || pricing == "flex-start" ||
                  pricing == "reserved");
      // Spot only for preemptible jobs; flex-start never for real-time services.
      if (!j["job"]["preemptible"].get<bool>()) {
        EXPECT_NE(pricing, "spot");
      }
      if (kind == "realtime-inference") {
        EXPECT_NE(pricing, "flex-start");
      }
    }
    // Ranked: options meeting the deadline first, then by cost.
    const auto& opts = j["options"];
    for (size_t i = 1; i < opts.size(); ++i) {
      bool a = opts[i - 1]["meets_deadline"], b = opts[i]["meets_deadline"];
      EXPECT_GE(a, b);
      if (a == b) {
        EXPECT_LE(opts[i - 1]["cost_usd"].get<double>(), opts[i]["cost_usd"].get<double>());
      }
    }
    for (const auto& rej : j["rejected"]) {
      EXPECT_FALSE(rej["gpu"].get<std::string>().empty());
      EXPECT_FALSE(rej["reason"].get<std::string>().empty());
    }
  }
}

TEST(Cli, TopLimitsOptions) {
  CliRun r = Meridian({"plan", "examples/fine-tuning.yaml", "-o", "json", "--top", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LE(json::parse(r.out)["options"].size(), 3u);
}

TEST(Cli, TableShowsArithmeticAndRejections) {
  CliRun r = Meridian({"plan", "examples/fine-tuning.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Options"), std::string::npos);
  EXPECT_NE(r.out.find("memory:"), std::string::npos);
  EXPECT_NE(r.out.find("speed:"), std::string::npos);
  EXPECT_NE(r.out.find("/h x "), std::string::npos);
  // The 70B fine-tune on 24 H100s: its layout, communication share and MFU
  // (docs/estimator.md, section 2's worked example: 23.56 h, MFU 44.9%; the
  // pipeline sends, 2 x 171 x 67.1 MB / 40 GB/s = 0.574 s of a 174.552 +
  // 3.062 + 0.574 = 178.188 s step, are its only exposed communication: 0.3%).
  EXPECT_NE(r.out.find("layout: TP 1 x PP 4 x DP 6 (ZeRO-3), communication 0.3% of the run, "
                       "MFU 44.9%"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nNotes\n"), std::string::npos);
}

// docs/estimator.md's calibration table quotes these plans; a change to the
// model that moves them must update the table (the published figures stay).
// By hand (A100 312 TFLOPS x 0.869 = 271.13e12; NVLink 3 600 / 2 x 0.80 = 240
// GB/s; 1,600 Gbit/s of InfiniBand a node: 20 GB/s a GPU). A trained token is
// three forward passes of 2P + 4 L s h (attention), four with recomputation;
// MFU counts three: MFU = (3 / passes) x 0.869 x compute / step, compute the
// matmuls alone. The step's compute adds the element-wise kernels, E = (22 +
// 88/3) x L x h x 2 B a token ((2 x 22 + 88/3) recomputed) over (N x 2000
// GB/s, the catalog's A100-80GB row, x 0.80 = N x 1.6e12 B/s), and the bubble
// and the all-reduce's window scale with that sum.
// (Before the element-wise kernels were charged: LLaMA-65B 0.6316, OPT-175B
// 0.4898, BLOOM-176B 0.5776 in TP 4 x PP 8 x DP 12, the 1T GPT 0.5550.)
// LLaMA-65B, 2048 sequences a step: compute 3 x (2 x 65.2e9 + 4 x 80 x 2048 x
// 8192 = 1.35769e11) x 2048 x 2048 / (2048 x 271.13e12) = 3.0766 s. TP 8 x PP
// 8 x DP 32, 64 micro-batches: bubble x 7/64 = 0.3365 s; tensor 64 x 80/8 x 4
// x 2(7/8) x 33.55 MB / 240 GB/s = 0.6263 s; sends 2 x 64 x 33.55 MB / 20
// GB/s = 0.2147 s; all-reduce 2 x 31/32 x 65.2e9 x 2 / 64 B / 20 GB/s =
// 0.1974 s less 2/3 x 3.0766 / 64 = 0.0320 s: 0.1653 s; step 4.4196 s. TP 4 x
// PP 8 x DP 64 with two chunks a stage (32 micro-batches, a multiple of 8) is
// faster: bubble x 7/(2 x 32) = 0.3365 s; tensor 32 x 80/8 x 4 x 2(3/4) x
// 33.55 MB / 240 GB/s = 0.2684 s; sends 2 x 2 x 32 x 33.55 MB / 20 GB/s =
// 0.2147 s; all-reduce 2 x 63/64 x 65.2e9 x 2 / 32 B / 20 GB/s = 0.4011 s
// less 2/3 x 3.0766 / 32 = 0.0641 s: 0.3370 s; step 4.2334 s, MFU 0.869 x
// 3.0766 / 4.2334 = 0.6316. (TP 8 x DP 256 without pipelining would expose
// 1.3672 s of its 1.6236 s all-reduce: 5.070 s.)
// With the element-wise kernels, E = 67,283,627 B a token x 2048 x 2048 /
// (2048 x 1.6e12) = 0.0861 s: compute 3.1628 s, bubble x 7/64 = 0.3459 s,
// all-reduce 0.4011 s less 2/3 x 3.1628 / 32 = 0.0659 s: 0.3352 s; step
// 4.3271 s, MFU 0.869 x 3.0766 / 4.3271 = 0.6179 (TP 8 x PP 8: 4.5142 s).
// OPT-175B, full recomputation, 1024 sequences rounded up to 34 on each of 31
// replicas = 1054: compute 4 x (3.5e11 + 4 x 96 x 2048 x 12288 = 9.664e9) x
// 1054 x 2048 / (992 x 271.13e12) = 11.5463 s; TP 8 x PP 4: bubble x 3/34 =
// 1.0188 s; tensor 34 x 96/4 x 6 x 7/4 x 50.33 MB / 240 GB/s = 1.7968 s; sends
// 2 x 34 x 50.33 MB / 20 GB/s = 0.1711 s; all-reduce 2 x 30/31 x 1.75e11 x 2 /
// 32 B / 20 GB/s = 1.0585 s less 2/3 x 11.5463 / 34 = 0.2264 s: 0.8321 s; step
// 15.3651 s. With E = 173,015,040 B a token x 1054 x 2048 / (992 x
// 1.6e12) = 0.2353 s: compute 11.7816 s, bubble x 3/34 = 1.0395 s,
// all-reduce exposed 1.0585 - 2/3 x 11.7816 / 34 = 0.8275 s; step 15.6165 s,
// MFU 3/4 x 0.869 x 11.5463 / 15.6165 = 0.4819.
// BLOOM-176B, full recomputation, 2048 sequences rounded up to 171 on each of
// 12 replicas = 2052: compute 4 x (3.52e11 + 4 x 70 x 2048 x 14336 = 8.221e9)
// x 2052 x 2048 / (384 x 271.13e12) = 58.1608 s; TP 4 x PP 8: bubble x 7/171 =
// 2.3809 s; tensor 171 x 70/8 x 6 x 3/2 x 58.72 MB / 240 GB/s = 3.2948 s;
// sends 2 x 171 x 58.72 MB / 20 GB/s = 1.0041 s; all-reduce (4 x 12 = 48 GPUs
// span nodes) 2 x 11/12 x 1.76e11 x 2 / 32 B / 20 GB/s = 1.0083 s less 2/3 x
// 58.1608 / 171 = 0.2267 s: 0.7816 s; step 65.6221 s. With E = 147,182,933
// B a token x 2052 x 2048 / (384 x 1.6e12) = 1.0067 s: compute 59.1676 s,
// bubble 2.4221 s, all-reduce exposed 0.7777 s; step 66.6662 s, 0.0324884 s a
// sequence. TP 4 x PP 4 x DP 24 (ZeRO-1), 86 micro-batches, 2064 sequences:
// compute 58.1608 x 2064 / 2052 = 58.5009 s + E 1.0126 s = 59.5136 s; bubble
// x 3/86 = 2.0761 s; tensor 86 x 70/4 x 6 x 3/2 x 58.72 MB / 240 GB/s =
// 3.3140 s; sends 2 x 86 x 58.72 MB / 20 GB/s = 0.5050 s; all-reduce (96 GPUs
// span nodes) 2 x 23/24 x 1.76e11 x 2 / 16 B / 20 GB/s = 2.1083 s less 2/3 x
// 59.5136 / 86 = 0.4613 s: 1.6470 s; step 67.0556 s, 0.0324882 s a sequence:
// faster by a hair. MFU 3/4 x 0.869 x 58.5009 / 67.0556 = 0.5686.
// GPT 1T, full recomputation, 3072 sequences: compute 4 x (2.016e12 + 4 x
// 128 x 2048 x 25600 = 2.6844e10) x 3072 x 2048 / (3072 x 271.13e12) =
// 61.7235 s. TP 8 x PP 16 x DP 24, 128 micro-batches: bubble x 15/128 =
// 7.2332 s; tensor 128 x 128/16 x 6 x 7/4 x 104.86 MB / 240 GB/s = 4.6976 s;
// sends 2 x 128 x 104.86 MB / 20 GB/s = 1.3422 s; all-reduce 2 x 23/24 x
// 1.008e12 x 2 / 128 B / 20 GB/s = 1.5094 s less 2/3 x 61.7235 / 128 =
// 0.3215 s: 1.1879 s; step 76.1844 s. TP 4 x PP 16 x DP 48 with four chunks
// a stage (64 micro-batches) is faster: bubble x 15/(4 x 64) = 3.6166 s;
// tensor 64 x 128/16 x 6 x 2(3/4) x 104.86 MB / 240 GB/s = 2.0133 s; sends 2
// x 4 x 64 x 104.86 MB / 20 GB/s = 2.6844 s; all-reduce 2 x 47/48 x 1.008e12
// x 2 / 64 B / 20 GB/s = 3.0844 s less 2/3 x 61.7235 / 64 = 0.6430 s: 2.4414
// s; step 72.4792 s. With E = 480,597,333 B a token x 3072 x 2048 / (3072 x
// 1.6e12) = 0.6152 s: compute 62.3387 s, bubble x 15/256 = 3.6527 s,
// all-reduce exposed 3.0844 - 2/3 x 62.3387 / 64 = 2.4350 s; step 73.1240 s,
// MFU 3/4 x 0.869 x 61.7235 / 73.1240 = 0.5501 (TP 8 x PP 16: 76.8685 s).
// MPT-7B on one node of 8 A100-80GB (llm-foundry's benchmark table), no
// recomputation: ZeRO-3 over 8 holds 16 x 6.659e9 / 8 B = 12.40 GiB + 34 x
// 2048 x 6 x 4096 x 32 B = 51.00 GiB + 1 = 64.40 GiB, under 72. 96 sequences
// a step, two micro-batches of 6 a replica: compute 3 x (2 x 6.659e9 + 4 x 32
// x 2048 x 4096 = 1.43917e10) x 96 x 2048 / (8 x 271.13e12) = 3.9136 s, +
// element-wise 13,456,725 B a token x 196,608 / (8 x 2000 GB/s, the catalog's
// A100-80GB row, x 0.80) = 0.2067 s: 4.1203 s. ZeRO-3's gathers, 2 x 3 x 7/8
// x 6.659e9 x 2 B / 240 GB/s = 0.2913 s, hide behind 2/3 x 4.1203 s: step
// 4.1203 s, 196,608 / (8 x 4.1203) = 5,965 tokens/s/GPU, MFU 0.869 x 3.9136
// / 4.1203 = 0.8254 (published 4,641 tokens/s/GPU, 64.23%: 0.78x).
// With the matmuls at the model's width, 0.869 x h / (h + 875) (the A100's
// h0, docs/estimator.md section 3), the matmul time above grows by 0.869 /
// eff and the bubble and the all-reduce's window with it; the communication
// terms stay:
// LLaMA-65B, eff 0.869 x 8192 / 9067 = 0.78514: matmuls 3.0766 x 0.869 /
// 0.78514 = 3.4053 s + E 0.0861 = 3.4914 s; TP 4 x PP 8 x DP 64, two chunks:
// bubble x 7/64 = 0.3819 s, tensor 0.2684 s, sends 0.2147 s, all-reduce
// 0.4011 less 2/3 x 3.4914 / 32 = 0.0727 s: 0.3284 s; step 4.6848 s, MFU
// 0.78514 x 3.4053 / 4.6848 = 0.5707 (TP 8 x PP 8: bubble 0.3819, tensor
// 0.6263, sends 0.2147, all-reduce 0.1974 - 0.0364: 4.8754 s). 2048 x 2048 /
// (2048 x 4.6848) = 437.2 tokens/s/GPU (published 380: 0.87x).
// OPT-175B, eff 0.869 x 12288 / 13163 = 0.81123: matmuls 11.5463 x 0.869 /
// 0.81123 = 12.3684 s + E 0.2353 = 12.6037 s; TP 8 x PP 4: bubble x 3/34 =
// 1.1121 s, tensor 1.7968 s, sends 0.1711 s, all-reduce 1.0585 - 2/3 x
// 12.6037 / 34 = 0.8113 s; step 16.4951 s, MFU 3/4 x 0.81123 x 12.3684 /
// 16.4951 = 0.4562 (x 312 = 142.3 TFLOP/s; published 147: 1.03x).
// BLOOM-176B, eff 0.869 x 14336 / 15211 = 0.81901: TP 4 x PP 8, 2052
// sequences: matmuls 58.1608 x 0.869 / 0.81901 = 61.7107 s + E 1.0067 =
// 62.7174 s, bubble x 7/171 = 2.5674 s, tensor 3.2948 s, sends 1.0041 s,
// all-reduce 1.0083 - 2/3 x 62.7174 / 171 = 0.7638 s: 70.3475 s, 0.0342824 s
// a sequence; TP 4 x PP 4 x DP 24, 2064 sequences: matmuls 58.5009 x 0.869 /
// 0.81901 = 62.0716 s + E 1.0126 = 63.0842 s, bubble x 3/86 = 2.2006 s,
// tensor 3.3140 s, sends 0.5050 s, all-reduce 2.1083 - 2/3 x 63.0842 / 86 =
// 1.6193 s: 70.7231 s, 0.0342651 s a sequence, still faster by a hair. MFU
// 3/4 x 0.81901 x 62.0716 / 70.7231 = 0.5391.
// GPT 1T, eff 0.869 x 25600 / 26475 = 0.84028: TP 4 x PP 16 x DP 48, four
// chunks: matmuls 61.7235 x 0.869 / 0.84028 = 63.8332 s + E 0.6152 =
// 64.4484 s, bubble x 15/256 = 3.7763 s, tensor 2.0133 s, sends 2.6844 s,
// all-reduce 3.0844 - 2/3 x 64.4484 / 64 = 2.4130 s; step 75.3353 s, MFU 3/4
// x 0.84028 x 63.8332 / 75.3353 = 0.5340 (TP 8 x PP 16: bubble x 15/128 =
// 7.5525 s, tensor 4.6976, sends 1.3422, all-reduce 1.5094 - 0.3357: 79.2144 s).
// MPT-7B, eff 0.869 x 4096 / 4971 = 0.71604: matmuls 3.9136 x 0.869 / 0.71604
// = 4.7496 s + E 0.2067 = 4.9563 s, the gathers (0.2913 s) hidden: 196,608 /
// (8 x 4.9563) = 4,959 tokens/s/GPU (published 4,641: 0.94x), MFU 0.71604 x
// 4.7496 / 4.9563 = 0.6862.
TEST(Cli, CalibrationRunsGiveTheFiguresTheDocsQuote) {
  struct Case {
    const char* file;
    const char* layout;
    double mfu;
  };
  const Case cases[] = {
      {"llama-65b", "TP 4 x PP 8 (2 chunks each) x DP 64 (ZeRO-1)", 0.5707},
      {"opt-175b", "TP 8 x PP 4 x DP 31 (ZeRO-1)", 0.4562},
      {"bloom-176b", "TP 4 x PP 4 x DP 24 (ZeRO-1)", 0.5391},
      {"megatron-1t", "TP 4 x PP 16 (4 chunks each) x DP 48 (ZeRO-1)", 0.5340},
      {"mpt-7b-a100", "TP 1 x PP 1 x DP 8 (ZeRO-3)", 0.6862},
  };
  for (const Case& c : cases) {
    CliRun r = Meridian({"plan", std::string("estimate/testdata/calibration/") + c.file + ".yaml",
                         "-o", "json", "--top", "1"});
    ASSERT_EQ(r.code, 0) << c.file << ": " << r.err;
    const json t = json::parse(r.out)["estimates"].at(0)["throughput"];
    EXPECT_EQ(t["layout"], c.layout) << c.file;
    EXPECT_NEAR(t["mfu"].get<double>(), c.mfu, 0.0005) << c.file;
  }
}

TEST(Cli, PlanJsonCarriesLayoutCommunicationAndMfu) {
  CliRun r = Meridian({"plan", "examples/fine-tuning.yaml", "-o", "json", "--top", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  const json* h100 = nullptr;
  for (const auto& e : j["estimates"]) {
    if (e["gpu"] == "H100-80GB") h100 = &e;
  }
  ASSERT_NE(h100, nullptr);
  const json& t = (*h100)["throughput"];
  EXPECT_EQ(t["layout"], "TP 1 x PP 4 x DP 6 (ZeRO-3)");
  // MFU: (6 x 7e10 + 12 x 80 x 4096 x 8192 of attention) x 2e9 = 9.0442e20
  // model FLOP / (24 x 989e12 x 23.556 h x 3600) = 0.449 (docs/estimator.md,
  // section 2's worked example: 83,071 s x (174.552 + 3.062 + 0.574) /
  // 174.552 = 84,802 s).
  EXPECT_NEAR(t["mfu"].get<double>(), 0.449, 0.001);
  EXPECT_GT(t["communication_share"].get<double>(), 0);
  EXPECT_LT(t["communication_share"].get<double>(), 0.01);
  ASSERT_TRUE(j["notes"].is_array());
}

TEST(Cli, CatalogCommands) {
  CliRun g = Meridian({"catalog", "gpus", "-o", "json"});
  ASSERT_EQ(g.code, 0) << g.err;
  json gpus = json::parse(g.out)["gpus"];
  EXPECT_GE(gpus.size(), 12u);

  CliRun o = Meridian({"catalog", "offers", "--gpu", "H100-80GB", "--provider", "aws", "-o", "json"});
  ASSERT_EQ(o.code, 0) << o.err;
  json offers = json::parse(o.out)["offers"];
  ASSERT_FALSE(offers.empty());
  for (const auto& x : offers) {
    EXPECT_EQ(x["gpu"], "H100-80GB");
    EXPECT_EQ(x["provider"], "aws");
  }

  CliRun eu = Meridian({"catalog", "regions", "--region", "eu", "-o", "json"});
  ASSERT_EQ(eu.code, 0) << eu.err;
  json regions = json::parse(eu.out)["regions"];
  ASSERT_FALSE(regions.empty());
  for (const auto& x : regions) EXPECT_EQ(x["geography"], "eu");

  CliRun bad = Meridian({"catalog", "offers", "--gpu", "H900"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--gpu"), std::string::npos);
  EXPECT_EQ(Meridian({"catalog", "planets"}).code, kExitBadInput);
}

// `plan --fleet`: the scheduler's decision against a fleet file, end to end.
const char* kMigJob = "name: notebook\nkind: data-science\n"
                      "resources: {gpus: 1, vram_gib: 8, mig: true}\nwork: {duration: 2h}\n";

TEST(Cli, PlanFleetPutsASmallMigJobOnAMigSlice) {
  std::string job = WriteTemp("mig_job_PlanFleetPutsASmallMigJobOnAMigSlice.yaml", kMigJob);
  CliRun r = Meridian({"plan", job, "--fleet", "examples/fleets/onprem-mixed.yaml", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["profile"], "default");
  EXPECT_EQ(j["fleet"], "examples/fleets/onprem-mixed.yaml");
  ASSERT_EQ(j["decisions"].size(), 1u);
  const json& d = j["decisions"][0];
  EXPECT_EQ(d["decision"], "place");
  EXPECT_EQ(d["status"], "ok");
  ASSERT_EQ(d["allocation"]["nodes"].size(), 1u);
  const json& node = d["allocation"]["nodes"][0];
  ASSERT_TRUE(node.contains("mig")) << d.dump(2);
  EXPECT_TRUE(node["gpus"].empty());  // a slice, not a whole GPU
  // A slice of onprem-a's A100s (2g.20gb, the smallest there) or of onprem-h100's (1g.10gb).
  const std::string profile = node["mig"]["profile"];
  EXPECT_TRUE(profile == "2g.20gb" || profile == "1g.10gb") << profile;
  EXPECT_EQ(d["start_reason"], "capacity free now");
  EXPECT_TRUE(d["pricing"].is_null());  // fleet capacity, no pricing model
  EXPECT_NE(d["pricing_reason"].get<std::string>().find("owned capacity of cluster"),
            std::string::npos);
  ASSERT_FALSE(d["chosen"]["scores"].empty());
  bool priced = false;
  for (const auto& l : d["chosen"]["scores"]) {
    if (l["plugin"] != "cheapest_price") continue;
    priced = true;
    // 1.10 $/GPU-h x 2/8 of a GPU x 2 h, or 2.40 x 1/8 x 2 h
    const std::string note = l["note"];
    EXPECT_TRUE(note == "1.10 $/GPU-h x 2/8 GPU x 2.00 h = 0.55 $" ||
                note == "2.40 $/GPU-h x 1/8 GPU x 2.00 h = 0.60 $")
        << note;
  }
  EXPECT_TRUE(priced) << d["chosen"].dump(2);
  EXPECT_FALSE(d["runner_up"].is_null());
  EXPECT_GT(d["candidates"].get<int>(), 0);
}

TEST(Cli, PlanFleetTableExplainsTheDecision) {
  std::string job = WriteTemp("mig_job_PlanFleetTableExplainsTheDecision.yaml", kMigJob);
  CliRun r = Meridian({"plan", job, "--fleet", "examples/fleets/onprem-mixed.yaml", "--at",
                       "2026-03-02T09:00:00Z"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"profile default", " MIG ",
                        "start: capacity free now", "pricing: owned capacity", "runner-up",
                        "cheapest_price", "candidates:"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  }
}

TEST(Cli, PlanFleetDecidesEveryJobInQueueOrderAndShowsRejections) {
  std::string jobs = WriteTemp("fleet_jobs.yaml", R"(jobs:
  - name: big
    kind: batch-inference
    model: {precision: fp16}
    resources: {gpus: 8, vram_gib: 30, gpu_models: [V100-32GB]}
    work: {duration: 1h}
  - name: again
    kind: batch-inference
    model: {precision: fp16}
    resources: {gpus: 8, vram_gib: 30, gpu_models: [V100-32GB]}
    work: {duration: 1h}
  - name: third
    kind: batch-inference
    model: {precision: fp16}
    resources: {gpus: 8, vram_gib: 30, gpu_models: [V100-32GB]}
    work: {duration: 1h}
  - name: too-big
    kind: batch-inference
    model: {precision: fp16}
    resources: {gpus: 1, vram_gib: 60, gpu_models: [V100-32GB]}
    work: {duration: 1h}
)");
  std::string fleet = WriteTemp("v100_fleet.yaml", R"(clusters:
  - name: lab
    region: gcp:us-central1
    gpu_hour_usd: 1.0
    nodes:
      - {count: 2, gpu: V100-32GB, gpus: 8, vcpus: 32, ram_gib: 256}
elastic: false
)");
  CliRun r = Meridian({"plan", jobs, "--fleet", fleet, "--profile", "fifo-greedy", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json ds = json::parse(r.out)["decisions"];
  ASSERT_EQ(ds.size(), 4u);
  // First fit in fleet order: lab-v100-32gb-0, then -1; the third waits for
  // the first to end (1 h); 60 GiB never fits a 32 GiB GPU.
  EXPECT_EQ(ds[0]["allocation"]["nodes"][0]["node"], "lab-v100-32gb-0");
  EXPECT_EQ(ds[1]["allocation"]["nodes"][0]["node"], "lab-v100-32gb-1");
  EXPECT_EQ(ds[2]["decision"], "wait");
  EXPECT_EQ(ds[2]["status"], "unschedulable");
  EXPECT_FALSE(ds[2]["start"].is_null());
  EXPECT_NE(ds[2]["start_reason"].get<std::string>().find("job 1"), std::string::npos)
      << ds[2].dump(2);
  EXPECT_EQ(ds[3]["decision"], "reject");
  EXPECT_EQ(ds[3]["status"], "unresolvable");
  ASSERT_FALSE(ds[3]["filters"].empty());
  EXPECT_EQ(ds[3]["filters"][0]["plugin"], "gpu_fit");
  EXPECT_GE(ds[3]["filters"][0]["rejected"].get<int>(), 1);

  CliRun t = Meridian({"plan", jobs, "--fleet", fleet, "--profile", "fifo-greedy"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("rejections:"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("gpu_fit"), std::string::npos) << t.out;
}

TEST(Cli, PlanFleetBadInputExitsTwoWithTheLocation) {
  std::string job = WriteTemp("mig_job_PlanFleetBadInputExitsTwoWithTheLocation.yaml", kMigJob);
  std::string bad = WriteTemp("bad_fleet.yaml", R"(clusters:
  - name: a
    region: gcp:us-centrall
    gpu_hour_usd: 1
    nodes:
      - {count: 1, gpu: H100-80GB, gpus: 8, vcpus: 10, ram_gib: 10}
)");
  CliRun r = Meridian({"plan", job, "--fleet", bad});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("bad_fleet.yaml:3:13: clusters[0].region"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean gcp:us-central1"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());

  std::string syntax = WriteTemp("syntax_fleet.yaml", "clusters: [\n");
  EXPECT_EQ(Meridian({"plan", job, "--fleet", syntax}).code, kExitBadInput);
  EXPECT_EQ(Meridian({"plan", job, "--fleet", "no/such/fleet.yaml"}).code, kExitBadInput);

  CliRun p = Meridian({"plan", job, "--fleet", "examples/fleets/onprem-mixed.yaml", "--profile",
                       "fifo-strit"});
  EXPECT_EQ(p.code, kExitBadInput);
  EXPECT_NE(p.err.find("did you mean fifo-strict"), std::string::npos) << p.err;
  std::string prof = WriteTemp("bad_profile.yaml", "name: x\nplugins:\n  - name: gpu_fitt\n");
  CliRun pf = Meridian({"plan", job, "--fleet", "examples/fleets/onprem-mixed.yaml", "--profile", prof});
  EXPECT_EQ(pf.code, kExitBadInput);
  EXPECT_NE(pf.err.find("plugins[0].name"), std::string::npos) << pf.err;
  // --profile means nothing without --fleet.
  EXPECT_EQ(Meridian({"plan", job, "--profile", "default"}).code, kExitBadInput);
}

TEST(Cli, PlanFleetTakesAProfileFile) {
  std::string job = WriteTemp("mig_job_PlanFleetTakesAProfileFile.yaml", kMigJob);
  std::string prof = WriteTemp("first_fit_profile.yaml", R"(name: mine
description: first fit only
plugins: [{name: gpu_fit}, {name: first_fit}]
)");
  CliRun r = Meridian({"plan", job, "--fleet", "examples/fleets/onprem-mixed.yaml", "--profile",
                       prof, "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["profile"], "mine");
  EXPECT_EQ(j["decisions"][0]["chosen"]["scores"][0]["plugin"], "first_fit");
}

TEST(Cli, ProfilesListsTheShippedOnes) {
  CliRun r = Meridian({"profiles", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  json ps = json::parse(r.out)["profiles"];
  std::vector<std::string> names;
  for (const auto& p : ps) {
    names.push_back(p["name"]);
    EXPECT_FALSE(p["description"].get<std::string>().empty()) << p["name"];
    EXPECT_FALSE(p["plugins"].empty());
  }
  for (const char* want :
       {"default", "fifo-strict", "fifo-greedy", "fifo-backfill", "kueue-like", "skypilot-like"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  CliRun t = Meridian({"profiles"});
  ASSERT_EQ(t.code, 0);
  EXPECT_NE(t.out.find("head of line blocks"), std::string::npos) << t.out;
}

TEST(Cli, RealBinaryJsonParsesBack) {
  std::string cmd = std::string(MERIDIAN_BINARY) +
                    " plan examples/fine-tuning.yaml -o json --at 2026-03-02T09:00:00Z";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) text.append(buf, n);
  int status = pclose(pipe);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  json j = json::parse(text);
  EXPECT_EQ(j["at"], "2026-03-02T09:00:00Z");
  EXPECT_FALSE(j["options"].empty());
}

// A serve config whose node.pids_per_job is out of range stops `serve`
// before it opens anything, naming the file, the place, the field and the
// range (exit 2).
TEST(Cli, ServeRefusesAPidsLimitOutOfRange) {
  for (const char* value : {"-1", "5000000"}) {
    const std::string config = WriteTemp("pids.yaml", std::string("node:\n  pids_per_job: ") + value + "\n");
    CliRun r = Meridian({"serve", "--listen", "127.0.0.1:0", "--db", config + ".db", "--config", config});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(config + ":2:17: node.pids_per_job: \"" + value +
                         "\" must be 0 (no limit) to 4194304 (Linux's pid_max)"),
              std::string::npos)
        << r.err;
  }
}

// With a PostgreSQL --db and no --state-dir, serve makes and names the
// database's own directory under its base ($STATE_DIRECTORY here) before it
// connects; no server runs at this address, so it then fails, naming the URI.
// The name is worked by hand: database "meridian", the socket directory
// "/nonexistent-meridian-dir" with "/" as %2F, libpq's default port.
TEST(Cli, ServeOnPostgresDefaultsToADirectoryPerDatabase) {
  char tmpl[] = "/tmp/meridian-cli-stateXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string base = tmpl;
  ASSERT_EQ(chmod(tmpl, 0711), 0);  // a root daemon's tenants pass through it
  ASSERT_EQ(setenv("STATE_DIRECTORY", base.c_str(), 1), 0);
  CliRun r = Meridian({"serve", "--listen", "127.0.0.1:0", "--db",
                       "postgresql://meridian@/meridian?host=/nonexistent-meridian-dir"});
  unsetenv("STATE_DIRECTORY");
  const std::string dir = base + "/postgresql/meridian@%2Fnonexistent-meridian-dir:5432";
  EXPECT_NE(r.out.find("meridian serve: state directory " + dir +
                       " (this database's default on this host; --state-dir overrides)"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("postgresql://meridian@/meridian?host=/nonexistent-meridian-dir"),
            std::string::npos)
      << r.err;
  std::filesystem::remove_all(base);
}

// A URI naming a pg_service.conf service does not say which database it is:
// serve then needs --state-dir, says so and exits 2 before it connects.
TEST(Cli, ServeOnAPostgresServiceNeedsAStateDirectory) {
  CliRun r = Meridian({"serve", "--listen", "127.0.0.1:0", "--db", "postgresql:///?service=prod"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--state-dir: required when the database is named by a service (\"prod\""),
            std::string::npos)
      << r.err;
}

// --sync is SQLite's; with a PostgreSQL --db it is refused, naming the
// value and what governs durability there (exit 2).
TEST(Cli, ServeOnPostgresRefusesSync) {
  CliRun r = Meridian({"serve", "--listen", "127.0.0.1:0", "--db", "postgres://meridian@/m",
                       "--state-dir", "/nonexistent-meridian-dir", "--sync", "normal"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--sync: \"normal\" applies to a SQLite --db only; with PostgreSQL, "
                       "durability is the server's synchronous_commit"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace meridian::cli
