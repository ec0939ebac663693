// Overview: where the money goes and by which pricing model, how green, how
// busy the owned GPUs are, what waits and what was preempted.
import { html } from '../html.js';
import { getJson } from '../api.js';
import { usePoll } from '../poll.js';
import { Bar, Card, Status } from '../components.js';
import { kg, pct, usd } from '../format.js';

const ACTIVE = ['scheduled', 'starting', 'running', 'checkpointing'];
// Most urgent first, whatever order the answer's keys come in.
const TIERS = ['critical', 'high', 'normal', 'low'];
const STATES = ['queued', 'scheduled', 'starting', 'running', 'checkpointing', 'preempted', 'succeeded', 'failed', 'cancelled'];

// One sentence a newcomer can read without the docs.
export function summary(o) {
  const s = o.jobs.by_state;
  const active = ACTIVE.reduce((n, k) => n + s[k], 0);
  const u = o.utilization.owned;
  const who = o.tenant ? `Tenant ${o.tenant}` : 'All tenants';
  return `${who}: ${o.jobs.total} job${o.jobs.total === 1 ? '' : 's'} — ${active} running, ${s.queued} waiting, ` +
    `${s.succeeded} succeeded, ${s.failed} failed, ${s.cancelled} cancelled. ` +
    `${u.busy_gpus} of ${u.gpus} owned GPUs busy; spending ${usd(o.spend.per_hour_usd)}/h now.`;
}

export function OverviewView({ data: o }) {
  const states = STATES.filter((k) => k in o.jobs.by_state).map((k) => [k, o.jobs.by_state[k]]);
  const maxState = Math.max(1, ...states.map(([, n]) => n));
  const maxSpend = Math.max(0, ...o.spend.by_pricing.map((p) => p.so_far_usd));
  const u = o.utilization;
  return html`<section aria-labelledby="h-overview">
    <h2 id="h-overview">Overview</h2>
    <p class="lead" data-testid="summary">${summary(o)}</p>
    ${o.jobs.total === 0 ? html`<p data-testid="first-steps">meridian decides for each job where it runs (node, GPUs, pricing model) and runs it on this fleet, with the reasons shown.
      No jobs yet: submit the ready-made example on the <a href="#jobs">Jobs</a> page, or see what the scheduler would decide on the <a href="#plan">Plan</a> page.</p>` : null}
    <div class="cards">
      <${Card} id="jobs-total" label="Jobs" value=${o.jobs.total} note=${`${o.jobs.by_state.queued} queued`} />
      <${Card} id="spend-total" label="Spend so far" value=${usd(o.spend.so_far_usd)} note=${`${usd(o.spend.per_hour_usd)} per hour now`} />
      <${Card} id="co2-total" label="CO₂ so far" value=${kg(o.co2.so_far_kg)} note=${`${kg(o.co2.per_hour_kg)} per hour now`} />
      <${Card} id="util-owned" label="Owned GPUs busy" value=${pct(u.owned.fraction)} note=${`${u.owned.busy_gpus} of ${u.owned.gpus} GPUs; ${u.owned.your_gpus} yours`} />
      <${Card} id="util-reserved" label="Reserved GPUs busy" value=${u.reserved.gpus ? pct(u.reserved.fraction) : 'none'} note=${`${u.reserved.busy_gpus} of ${u.reserved.gpus} GPUs`} />
      <${Card} id="preemptions" label="Preemptions" value=${o.preemptions} note="times a job was stopped for a more urgent one" />
    </div>
    <div class="grid2">
      <div>
        <h3>Jobs by state</h3>
        <table class="compact" data-testid="by-state">
          <thead><tr><th scope="col">State</th><th scope="col" class="num">Jobs</th><th scope="col"><span class="sr-only">Share</span></th></tr></thead>
          <tbody>${states.map(([k, n]) => html`<tr key=${k}><th scope="row"><span class=${'state s-' + k}>${k}</span></th><td class="num">${n}</td><td><${Bar} value=${n} max=${maxState} label=${`${n} ${k}`} /></td></tr>`)}</tbody>
        </table>
      </div>
      <div>
        <h3>Jobs by tier</h3>
        <table class="compact" data-testid="by-tier">
          <thead><tr><th scope="col">Tier</th><th scope="col" class="num">Queued</th><th scope="col" class="num">Running</th><th scope="col" class="num">Done</th><th scope="col" class="num">Total</th></tr></thead>
          <tbody>${TIERS.filter((t) => o.jobs.by_tier[t]).map((t) => [t, o.jobs.by_tier[t]]).map(([t, c]) => html`<tr key=${t}><th scope="row">${t}</th><td class="num">${c.queued}</td><td class="num">${c.active}</td><td class="num">${c.done}</td><td class="num">${c.total}</td></tr>`)}</tbody>
        </table>
      </div>
    </div>
    <h3>Spend by pricing model</h3>
    <table data-testid="by-pricing">
      <thead><tr><th scope="col">Pricing model</th><th scope="col" class="num">So far</th><th scope="col"><span class="sr-only">Share</span></th><th scope="col" class="num">Per hour now</th><th scope="col" class="num">Running jobs</th></tr></thead>
      <tbody>${o.spend.by_pricing.map((p) => html`<tr key=${p.pricing}><th scope="row">${p.pricing}</th><td class="num">${usd(p.so_far_usd)}</td><td><${Bar} value=${p.so_far_usd} max=${maxSpend} label=${`${usd(p.so_far_usd)} on ${p.pricing}`} /></td><td class="num">${usd(p.per_hour_usd)}</td><td class="num">${p.running_jobs}</td></tr>`)}</tbody>
    </table>
    <p class="muted">As of ${o.at}. Spend and CO₂ include what running jobs have used so far. Owned capacity is billed at the daemon's gpu_hour_usd.</p>
  </section>`;
}

export function Overview() {
  const { data, error, loading } = usePoll(() => getJson('/v1/overview'));
  return data ? html`<${Status} error=${error} /><${OverviewView} data=${data} />` : html`<${Status} error=${error} loading=${loading} />`;
}
