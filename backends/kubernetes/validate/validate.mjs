// Validates Kubernetes manifests against the official OpenAPI schemas, as
// compiled into the npm package kubernetes-models (version 5, which has
// resource.k8s.io/v1). Every document of every file must be a known
// apiVersion/kind and pass its schema: types, required fields, enums and
// formats. (The schemas leave unknown keys alone; a server with strict field
// validation rejects those too.)
//
//   node validate.mjs FILE.yaml...                 exit 0 when every document is valid
//   node validate.mjs --expect-invalid FILE.yaml   exit 0 only when some document is rejected
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const models = {
  "batch/v1/Job": ["kubernetes-models/batch/v1/Job", "Job"],
  "v1/Service": ["kubernetes-models/v1/Service", "Service"],
  "v1/Pod": ["kubernetes-models/v1/Pod", "Pod"],
  "v1/PersistentVolumeClaim": ["kubernetes-models/v1/PersistentVolumeClaim", "PersistentVolumeClaim"],
  "scheduling.k8s.io/v1/PriorityClass": ["kubernetes-models/scheduling.k8s.io/v1/PriorityClass", "PriorityClass"],
  "resource.k8s.io/v1/ResourceClaimTemplate": ["kubernetes-models/resource.k8s.io/v1/ResourceClaimTemplate", "ResourceClaimTemplate"],
};

async function check(file) {
  const problems = [];
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  if (docs.length === 0) problems.push(`${file}: no documents`);
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) {
      problems.push(`${file}: document ${i + 1}: YAML: ${doc.errors[0].message}`);
      continue;
    }
    const top = doc.toJS();
    // kubectl get ... -o json answers several objects as a v1 List.
    const objs = top?.apiVersion === "v1" && top?.kind === "List" ? top.items ?? [] : [top];
    for (const obj of objs) {
      const where = `${file}: document ${i + 1} (${obj?.kind}/${obj?.metadata?.name})`;
      const model = models[`${obj?.apiVersion}/${obj?.kind}`];
      if (!model) {
        problems.push(`${where}: no schema for apiVersion ${obj?.apiVersion} kind ${obj?.kind}`);
        continue;
      }
      const mod = await import(model[0]);
      try {
        new mod[model[1]](obj).validate();
      } catch (e) {
        problems.push(`${where}: ${e.message}`);
      }
    }
  }
  return { docs: docs.length, problems };
}

const args = process.argv.slice(2);
const expectInvalid = args[0] === "--expect-invalid";
const files = expectInvalid ? args.slice(1) : args;
if (files.length === 0) {
  console.error("usage: node validate.mjs [--expect-invalid] FILE.yaml...");
  process.exit(2);
}
let total = 0;
let failed = false;
for (const file of files) {
  const { docs, problems } = await check(file);
  total += docs;
  if (expectInvalid) {
    if (problems.length === 0) {
      console.error(`${file}: expected the schema to reject it, but all ${docs} documents passed`);
      failed = true;
    } else {
      console.log(`${file}: rejected as expected:\n  ${problems.join("\n  ")}`);
    }
  } else if (problems.length > 0) {
    console.error(problems.join("\n"));
    failed = true;
  }
}
if (!expectInvalid && !failed) console.log(`${total} documents in ${files.length} files are valid`);
process.exit(failed ? 1 : 0);
