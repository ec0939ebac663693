// Readers for the nested blocks of a job spec (model, work, resources, ...).
// Each reads one YAML node at `path` into its part of a JobSpec, reporting
// problems to the SpecReader. Internal to spec/.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "core/job.h"
#include "spec/reader.h"

namespace meridian::spec {

void ReadModel(SpecReader& r, const YAML::Node& node, const std::string& path, ModelShape& out);
void ReadWork(SpecReader& r, const YAML::Node& node, const std::string& path, Work& out);
void ReadResources(SpecReader& r, const YAML::Node& node, const std::string& path,
                   Resources& out);
void ReadDeadline(SpecReader& r, const YAML::Node& node, const std::string& path, Deadline& out);
void ReadCheckpoint(SpecReader& r, const YAML::Node& node, const std::string& path,
                    Checkpoint& out);
void ReadData(SpecReader& r, const YAML::Node& node, const std::string& path, DataLocation& out);
void ReadLatency(SpecReader& r, const YAML::Node& node, const std::string& path, Latency& out);
void ReadDriver(SpecReader& r, const YAML::Node& node, const std::string& path, DriverPin& out);

}  // namespace meridian::spec
