#include "control/dashboard.h"

namespace meridian::control {

namespace {

constexpr std::string_view kHtml = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>meridian dashboard</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#123;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.8rem;align-items:center}
header h1{font-size:1.1rem;margin:0 1rem 0 0}
nav button{background:none;border:1px solid #fff6;color:#fff;padding:.35rem .7rem;border-radius:4px;cursor:pointer}
nav button[aria-current=page]{background:#fff;color:#123}
button:focus-visible,a:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid #f90;outline-offset:2px}
main{padding:1rem;max-width:80rem;margin:auto}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.8rem}
.card{background:#fff;border-radius:6px;padding:.8rem;box-shadow:0 1px 2px #0002}
.card b{display:block;font-size:1.5rem}
table{border-collapse:collapse;width:100%;background:#fff;font-size:.9rem}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e3e5e8}
th button{background:none;border:0;font:inherit;font-weight:600;cursor:pointer;padding:0}
.scroll{overflow-x:auto}
pre{background:#111;color:#ddd;padding:.6rem;max-height:20rem;overflow:auto;white-space:pre-wrap}
.err{color:#b00020}
textarea{width:100%;min-height:10rem;font-family:monospace}
</style></head><body>
<header><h1>meridian</h1>
<nav aria-label="Pages">
<button data-page="overview">Overview</button> <button data-page="queue">Queue</button>
<button data-page="jobs">Jobs</button> <button data-page="fleet">Fleet</button>
<button data-page="plan">Plan</button> <button data-page="token">Token</button>
</nav></header>
<main id="main" tabindex="-1"></main>
<script>
"use strict";
const m = document.getElementById("main");
const esc = s => String(s ?? "").replace(/[&<>"']/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;","'":"&#39;"}[c]));
(function takeFragmentToken(){
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get("token")) { sessionStorage.setItem("meridian-token", h.get("token")); history.replaceState(null, "", location.pathname + (h.get("page") ? "#" + h.get("page") : "")); }
})();
const token = () => sessionStorage.getItem("meridian-token");
async function api(path, opts = {}) {
  const r = await fetch(path, {...opts, headers: {...(opts.headers||{}), Authorization: "Bearer " + token()}});
  if (!r.ok) { let t = await r.text(); try { t = JSON.parse(t).error?.message || t; } catch {} throw new Error(r.status + ": " + t); }
  return r;
}
async function allJobs() {
  let out = [], page = "";
  for (;;) {
    const j = await (await api("/v1/jobs?limit=1000" + (page ? "&page_token=" + encodeURIComponent(page) : ""))).json();
    out = out.concat(j.jobs);
    if (!j.next_page_token) return out;
    page = j.next_page_token;
  }
}
const count = (xs, f) => xs.reduce((a, x) => (a[f(x)] = (a[f(x)] || 0) + 1, a), {});
const pages = {
  async overview() {
    const jobs = await allJobs();
    const spend = {}; let cost = 0, co2 = 0;
    for (const j of jobs) { cost += j.cost_usd || 0; co2 += j.co2_g || 0; const p = j.pricing || "none"; spend[p] = (spend[p] || 0) + (j.cost_usd || 0); }
    const states = count(jobs, j => j.state);
    return `<h2>Overview</h2><div class="cards">
      <div class="card">Jobs<b id="total-jobs">${jobs.length}</b></div>
      <div class="card">Spend so far<b id="total-cost">$${cost.toFixed(2)}</b></div>
      <div class="card">CO2<b id="total-co2">${(co2/1000).toFixed(3)} kg</b></div></div>
      <h3>Jobs by state</h3><table><thead><tr><th>State</th><th>Jobs</th></tr></thead><tbody>
      ${Object.entries(states).map(([k,v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join("")}</tbody></table>
      <h3>Spend by pricing model</h3><table><thead><tr><th>Pricing model</th><th>USD</th></tr></thead><tbody>
      ${Object.entries(spend).map(([k,v]) => `<tr><td>${esc(k)}</td><td>${v.toFixed(4)}</td></tr>`).join("")}</tbody></table>`;
  },
  async queue() {
    const q = await (await api("/v1/queues")).json();
    const waiting = (await allJobs()).filter(j => j.state === "queued");
    return `<h2>Queue</h2><table><thead><tr><th>Tier</th><th>Tenant</th><th>Queued</th></tr></thead><tbody>
      ${q.queues.map(r => `<tr><td>${esc(r.tier)}</td><td>${esc(r.tenant)}</td><td>${r.queued}</td></tr>`).join("")}</tbody></table>
      <h3>Why they wait</h3><table><thead><tr><th>Job</th><th>Tenant</th><th>Priority</th><th>Reason</th></tr></thead><tbody>
      ${waiting.map(j => `<tr><td><a href="#job=${esc(j.id)}">${esc(j.id)}</a></td><td>${esc(j.tenant)}</td><td>${esc(j.priority)}</td><td>${esc(j.reason)}</td></tr>`).join("")}</tbody></table>`;
  },
  async jobs() {
    window.jobsCache = await allJobs();
    return `<h2>Jobs</h2><label>Search <input id="search" type="search"></label>
      <div class="scroll"><table id="jobs-table"><thead><tr>
      ${["id","name","state","tenant","kind","placement","pricing","cost_usd","co2_g"].map(k => `<th><button data-sort="${k}">${k}</button></th>`).join("")}
      </tr></thead><tbody></tbody></table></div>
      <h3>Submit a job</h3><label for="spec">Job spec (JSON)</label>
      <textarea id="spec">{"name": "hello", "kind": "data-science", "resources": {"gpus": 0}, "command": ["/bin/echo", "hello"]}</textarea>
      <button id="submit">Submit</button> <span id="submit-result"></span>`;
  },
  async fleet() {
    const n = await (await api("/v1/nodes")).json();
    return `<h2>Fleet</h2><div class="scroll"><table><thead><tr><th>Node</th><th>GPU</th><th>GPUs</th><th>vCPUs</th><th>RAM GiB</th><th>State</th><th>Jobs</th></tr></thead><tbody>
      ${n.nodes.map(x => `<tr><td>${esc(x.name)}</td><td>${esc(x.gpu_model)}</td><td>${x.gpus}</td><td>${x.vcpus}</td><td>${x.ram_gib}</td><td>${esc(x.state)}</td><td>${(x.jobs||[]).map(esc).join(", ")}</td></tr>`).join("")}</tbody></table></div>`;
  },
  async plan() {
    return `<h2>Plan explorer</h2><label for="plan-spec">Job spec (JSON)</label>
      <textarea id="plan-spec">{"name": "train", "kind": "training", "resources": {"gpus": 1}}</textarea>
      <button id="plan-run">Plan</button><pre id="plan-out"></pre>`;
  },
  async token() {
    return `<h2>Bearer token</h2><p>Kept only in this browser tab's session storage.</p>
      <label for="token-in">Token</label> <input id="token-in" type="password" autocomplete="off">
      <button id="token-save">Use token</button>`;
  },
};
let sortKey = "id", sortDir = 1;
function renderJobRows() {
  const q = (document.getElementById("search")?.value || "").toLowerCase();
  const place = j => j.placement ? `${j.placement.region || ""} ${j.placement.node || ""} ${j.placement.mig || ""}` : "";
  const rows = (window.jobsCache || []).filter(j => JSON.stringify(j).toLowerCase().includes(q))
    .sort((a, b) => (a[sortKey] > b[sortKey] ? 1 : a[sortKey] < b[sortKey] ? -1 : 0) * sortDir);
  document.querySelector("#jobs-table tbody").innerHTML = rows.map(j => `<tr><td><a href="#job=${esc(j.id)}">${esc(j.id)}</a></td><td>${esc(j.name)}</td>
    <td class="state">${esc(j.state)}</td><td>${esc(j.tenant)}</td><td>${esc(j.kind)}</td><td>${esc(place(j))}</td><td>${esc(j.pricing)}</td>
    <td>${(j.cost_usd||0).toFixed(4)}</td><td>${(j.co2_g||0).toFixed(1)}</td></tr>`).join("");
}
async function jobPage(id) {
  const j = await (await api("/v1/jobs/" + encodeURIComponent(id))).json();
  const ev = await (await api("/v1/jobs/" + encodeURIComponent(id) + "/events")).json();
  m.innerHTML = `<h2>Job ${esc(j.id)} <span id="job-state">${esc(j.state)}</span></h2><p>${esc(j.reason)}</p>
    <button id="cancel">Cancel job</button>
    <h3>Events</h3><ol id="events">${ev.events.map(e => `<li>${esc(e.at)} ${esc(e.from)} &rarr; ${esc(e.to)}: ${esc(e.message)}</li>`).join("")}</ol>
    <h3>Logs</h3><pre id="logs" aria-live="polite"></pre>`;
  document.getElementById("cancel").onclick = async () => {
    if (!confirm("Cancel job " + j.id + "?")) return;
    await api("/v1/jobs/" + encodeURIComponent(id) + "/cancel", {method: "POST"});
    jobPage(id);
  };
  let offset = 0;
  const follow = async () => {
    if (location.hash !== "#job=" + id) return;
    const r = await api(`/v1/jobs/${encodeURIComponent(id)}/logs?offset=${offset}`);
    document.getElementById("logs").textContent += await r.text();
    offset = Number(r.headers.get("X-Next-Offset") || offset);
    if (r.headers.get("X-Job-Done") !== "true") setTimeout(follow, 1000);
  };
  follow();
}
async function show() {
  const h = location.hash.slice(1);
  const page = !token() ? "token" : h.startsWith("job=") ? null : (pages[h] ? h : "overview");
  document.querySelectorAll("nav button").forEach(b => b.setAttribute("aria-current", b.dataset.page === page ? "page" : "false"));
  try {
    if (page === null) return await jobPage(h.slice(4));
    m.innerHTML = await pages[page]();
    if (page === "jobs") {
      renderJobRows();
      document.getElementById("search").oninput = renderJobRows;
      document.querySelectorAll("[data-sort]").forEach(b => b.onclick = () => { sortDir = sortKey === b.dataset.sort ? -sortDir : 1; sortKey = b.dataset.sort; renderJobRows(); });
      document.getElementById("submit").onclick = async () => {
        const out = document.getElementById("submit-result");
        try { const r = await (await api("/v1/jobs", {method: "POST", headers: {"Content-Type": "application/json"}, body: document.getElementById("spec").value})).json();
              out.textContent = "submitted " + r.id; show(); } catch (e) { out.textContent = e.message; out.className = "err"; }
      };
    }
    if (page === "plan") document.getElementById("plan-run").onclick = async () => {
      const out = document.getElementById("plan-out");
      try { out.textContent = JSON.stringify(await (await api("/v1/plan", {method: "POST", headers: {"Content-Type": "application/json"}, body: document.getElementById("plan-spec").value})).json(), null, 2); }
      catch (e) { out.textContent = e.message; }
    };
    if (page === "token") document.getElementById("token-save").onclick = () => {
      sessionStorage.setItem("meridian-token", document.getElementById("token-in").value); location.hash = "overview"; show();
    };
  } catch (e) { m.innerHTML = `<p class="err" role="alert">${esc(e.message)}</p>`; }
}
document.querySelectorAll("nav button").forEach(b => b.onclick = () => { location.hash = b.dataset.page; });
window.addEventListener("hashchange", show);
show();
</script></body></html>
)HTML";

}  // namespace

std::string_view DashboardHtml() { return kHtml; }

}  // namespace meridian::control
