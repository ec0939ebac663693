// Fleet: clusters and nodes with their GPUs (which job holds each), MIG
// slices, and drained or down nodes. Another tenant's jobs are counted, not named.
import { html } from '../html.js';
import { getJson } from '../api.js';
import { usePoll } from '../poll.js';
import { Card, JobLink, Status } from '../components.js';

function Slots({ node }) {
  if (!node.gpus) return html`<span class="muted">CPU only</span>`;
  return html`<ul class="slots" aria-label=${`${node.busy_gpus} of ${node.gpus} GPUs busy`}>${node.gpu_slots.map((s) => html`<li key=${s.index} class=${s.busy ? 'slot busy' : 'slot'}>
    <span class="slot-i">GPU ${s.index}</span> ${s.job == null ? html`<span class="muted">free</span>` : s.job.startsWith('j-') ? html`<${JobLink} id=${s.job} />` : html`<span>${s.job}</span>`}
  </li>`)}</ul>`;
}

export function FleetView({ data }) {
  const t = data.totals;
  return html`<section aria-labelledby="h-fleet">
    <h2 id="h-fleet">Fleet</h2>
    <div class="cards">
      <${Card} id="fleet-nodes" label="Nodes" value=${t.nodes} note=${`${t.drained_nodes} drained, ${t.down_nodes} down`} />
      <${Card} id="fleet-gpus" label="GPUs busy" value=${`${t.busy_gpus} / ${t.gpus}`} note="on ready nodes" />
    </div>
    ${data.clusters.map((c) => html`<div key=${c.name}>
      <h3>${c.name}</h3>
      <p class="muted">${c.pricing} capacity in ${c.region}, billed at $${c.gpu_hour_usd}/GPU-hour</p>
      <div class="scroll"><table class="stack headless" data-testid="fleet-table">
        <thead><tr><th scope="col">Node</th><th scope="col">State</th><th scope="col">GPUs</th><th scope="col">Which job holds each GPU</th><th scope="col">MIG slices</th><th scope="col">Your jobs</th><th scope="col">Others'</th></tr></thead>
        <tbody>${c.nodes.map((n) => html`<tr key=${n.name} class=${n.drained ? 'drained' : ''}>
          <th scope="row">${n.name}<div class="muted">${n.vcpus} vCPU, ${n.ram_gib} GiB</div></th>
          <td data-label="State"><span class=${'node-' + n.state}>${n.state}</span></td>
          <td data-label="GPUs">${n.gpus ? `${n.gpus}× ${n.gpu_model}` : '–'}</td>
          <td data-label="GPU use"><${Slots} node=${n} /></td>
          <td data-label="MIG">${n.mig_gpus ? html`${n.mig_gpus} GPU${n.mig_gpus > 1 ? 's' : ''} in MIG mode: ${n.mig_slices.map((s) => `${s.profile} @${s.start}`).join(', ')}` : html`<span class="muted">not in MIG mode</span>`}</td>
          <td data-label="Your jobs">${n.jobs.length ? n.jobs.map((j) => html`<div key=${j.id}><${JobLink} id=${j.id} /> ${j.name}${j.mig ? ` (MIG ${j.mig})` : ''}</div>`) : html`<span class="muted">none</span>`}</td>
          <td data-label="Others' jobs" class="num">${n.other_tenants_jobs}</td>
        </tr>`)}</tbody>
      </table></div>
    </div>`)}
  </section>`;
}

export function Fleet() {
  const { data, error, loading } = usePoll(() => getJson('/v1/fleet'));
  return data ? html`<${Status} error=${error} /><${FleetView} data=${data} />` : html`<${Status} error=${error} loading=${loading} />`;
}
