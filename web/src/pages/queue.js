// Queue: what waits, in which tier and tenant, and why: the scheduler's last
// decision for each job (which filter turned capacity away, the earliest
// start, the pricing model it waits for).
import { html } from '../html.js';
import { getJson } from '../api.js';
import { usePoll } from '../poll.js';
import { JobLink, Status } from '../components.js';
import { duration } from '../format.js';

function Filters({ filters }) {
  if (!filters.length) return html`<span class="muted">none</span>`;
  return html`<ul class="plain">${filters.map((f) => html`<li key=${f.plugin}><strong>${f.plugin}</strong> rejected ${f.rejected}${f.examples.length ? html`: <span class="muted">${f.examples.join('; ')}</span>` : ''}</li>`)}</ul>`;
}

export function QueueView({ data }) {
  const jobs = data.jobs;
  return html`<section aria-labelledby="h-queue">
    <h2 id="h-queue">Queue</h2>
    <p class="lead" data-testid="queue-summary">${jobs.length === 0 ? 'Nothing is waiting.' : `${jobs.length} job${jobs.length === 1 ? '' : 's'} waiting, most urgent tier first.`}</p>
    ${jobs.length ? html`<div class="scroll"><table class="stack headless" data-testid="queue-table">
      <thead><tr><th scope="col">Job</th><th scope="col">Tenant</th><th scope="col">Tier</th><th scope="col">Waited</th><th scope="col">Decision</th><th scope="col">Why</th><th scope="col">Filters that rejected</th><th scope="col">Earliest start</th><th scope="col">Pricing model</th></tr></thead>
      <tbody>${jobs.map((j) => html`<tr key=${j.id}>
        <td data-label="Job"><${JobLink} id=${j.id} /><div class="muted">${j.name}</div></td>
        <td data-label="Tenant">${j.tenant}</td><td data-label="Tier">${j.tier}</td><td data-label="Waited">${duration(j.waited_s)}</td>
        <td data-label="Decision">${j.decision}</td><td data-label="Why">${j.message}</td>
        <td data-label="Filters"><${Filters} filters=${j.filters} /></td>
        <td data-label="Earliest start">${j.earliest_start || 'unknown'}${j.start_reason ? html`<div class="muted">${j.start_reason}</div>` : ''}</td>
        <td data-label="Pricing model">${j.pricing || '–'}${j.pricing_reason ? html`<div class="muted">${j.pricing_reason}</div>` : ''}</td>
      </tr>`)}</tbody></table></div>` : null}
  </section>`;
}

export function Queue() {
  const { data, error, loading } = usePoll(() => getJson('/v1/waiting'));
  return data ? html`<${Status} error=${error} /><${QueueView} data=${data} />` : html`<${Status} error=${error} loading=${loading} />`;
}
