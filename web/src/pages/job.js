// One job: what it is and where it runs (a service: each replica), why it waits (the scheduler's
// explanation), its events timeline, its logs followed live until it ends,
// and Cancel with a confirmation step.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { getJson, logChunk, postJson } from '../api.js';
import { usePoll } from '../poll.js';
import { Status } from '../components.js';
import { duration, kg, placement, runtime, usd } from '../format.js';

const TERMINAL = ['succeeded', 'failed', 'cancelled'];

export function Events({ events }) {
  return html`<ol class="timeline" data-testid="events">${events.map((e) => html`<li key=${e.seq}>
    <time datetime=${e.at}>${e.at.replace('T', ' ').replace('Z', '')}</time>
    ${e.type === 'state' ? html` <span class=${'state s-' + e.to}>${e.to}</span>` : html` <span class="muted">note</span>`}
    ${e.message ? html` — ${e.message}` : ''}</li>`)}</ol>`;
}

function Logs({ id }) {
  const [stream, setStream] = useState('stdout');
  const [text, setText] = useState('');
  const [done, setDone] = useState(false);
  const pre = useRef(null);
  useEffect(() => {
    let alive = true, offset = 0, timer = null;
    setText('');
    setDone(false);
    const tick = async () => {
      try {
        const c = await logChunk(id, stream, offset);
        if (!alive) return;
        offset = c.next;
        if (c.text) setText((t) => t + c.text);
        setDone(c.done);
        if (!c.done || c.text) timer = setTimeout(tick, 1000);
      } catch (e) {
        if (alive) setText((t) => t + `\n[logs: ${e.message}]`);
      }
    };
    tick();
    return () => { alive = false; clearTimeout(timer); };
  }, [id, stream]);
  useEffect(() => { if (pre.current) pre.current.scrollTop = pre.current.scrollHeight; }, [text]);
  return html`<section aria-labelledby="h-logs">
    <h3 id="h-logs">Logs</h3>
    <div role="group" aria-label="Log stream" class="row">
      ${['stdout', 'stderr'].map((s) => html`<button key=${s} aria-pressed=${stream === s} onClick=${() => setStream(s)}>${s}</button>`)}
      <span class="muted" aria-live="polite">${done ? 'the job has ended; this is all of it' : 'following live…'}</span>
    </div>
    <pre class="logs" ref=${pre} tabindex="0" data-testid="logs" aria-label=${stream + ' of the job'}>${text || '(empty so far)'}</pre>
  </section>`;
}

export function CancelButton({ job, onCancelled }) {
  const [asking, setAsking] = useState(false);
  const [msg, setMsg] = useState('');
  if (TERMINAL.includes(job.state)) return null;
  const confirm = async () => {
    try {
      const j = await postJson(`/v1/jobs/${encodeURIComponent(job.id)}/cancel`, '');
      setMsg(`Cancel sent; the job is ${j.state}.`);
      setAsking(false);
      onCancelled && onCancelled(j);
    } catch (e) {
      setMsg(e.message);
    }
  };
  return html`<div class="cancel">
    ${asking ? html`<div role="alertdialog" aria-labelledby="cancel-q" class="confirm">
        <p id="cancel-q">Cancel ${job.id} (${job.name})? A running job gets SIGTERM and its grace period.</p>
        <button class="danger" id="cancel-confirm" onClick=${confirm} ref=${(b) => b && b.focus()}>Yes, cancel it</button>
        <button id="cancel-keep" onClick=${() => setAsking(false)}>Keep it</button>
      </div>` : html`<button class="danger" id="cancel-job" onClick=${() => setAsking(true)} disabled=${job.cancel_requested}>${job.cancel_requested ? 'Cancel requested' : 'Cancel job…'}</button>`}
    ${msg ? html`<p role="status">${msg}</p>` : null}
  </div>`;
}

export function JobSummary({ job }) {
  return html`<dl class="facts" data-testid="job-facts">
    <dt>State</dt><dd><span class=${'state s-' + job.state} data-testid="job-state">${job.state}</span></dd>
    <dt>Tenant</dt><dd>${job.tenant}</dd>
    <dt>Kind · tier</dt><dd>${job.kind} · ${job.priority}</dd>
    <dt>Placement</dt><dd>${placement(job)}</dd>
    <dt>Pricing</dt><dd>${job.pricing || '–'}</dd>
    <dt>Cost</dt><dd>${usd(job.cost_usd)}</dd>
    <dt>CO₂</dt><dd>${kg(job.co2_g / 1000)}</dd>
    <dt>Runtime</dt><dd>${duration(runtime(job))}</dd>
    <dt>Attempts</dt><dd>${job.attempts}</dd>
    <dt>Exit code</dt><dd>${job.exit_code ?? '–'}</dd>
    <dt>Reason</dt><dd data-testid="job-reason">${job.reason || '–'}</dd>
  </dl>`;
}

// A real-time service's replicas (docs/control-plane.md, "Real-time services").
export function Replicas({ replicas }) {
  return html`<table data-testid="replicas"><caption>Replicas</caption>
    <thead><tr><th scope="col">#</th><th scope="col">Node</th><th scope="col">State</th><th scope="col">Restarts</th></tr></thead>
    <tbody>${replicas.map((r) => html`<tr key=${r.index}>
      <th scope="row">${r.index}</th><td>${r.node}</td><td><span class=${'state s-' + r.state}>${r.state}</span></td><td>${r.restarts}</td></tr>`)}</tbody>
  </table>`;
}

// A service's minutes met as the daemon counts them (slo_minutes, slo_minutes_met).
export function ServiceSlo({ job }) {
  if (!job.slo_minutes) return html`<p data-testid="slo">SLO: no whole minute counted yet</p>`;
  const pct = (100 * job.slo_minutes_met / job.slo_minutes).toFixed(1);
  return html`<p data-testid="slo">SLO met in ${job.slo_minutes_met} of ${job.slo_minutes} minutes (${pct}%)</p>`;
}

export function Job({ id }) {
  const { data, error, loading } = usePoll(async () => {
    const job = await getJson(`/v1/jobs/${encodeURIComponent(id)}`);
    const events = (await getJson(`/v1/jobs/${encodeURIComponent(id)}/events`)).events;
    let wait = null;
    if (job.state === 'queued') wait = (await getJson('/v1/waiting')).jobs.find((w) => w.id === id) || null;
    return { job, events, wait };
  }, 1500, [id]);
  if (!data) return html`<${Status} error=${error} loading=${loading} />`;
  const { job, events, wait } = data;
  return html`<section aria-labelledby="h-job">
    <h2 id="h-job">${job.id} <span class="muted">${job.name}</span></h2>
    <p><a href="#jobs">← all jobs</a></p>
    <${Status} error=${error} />
    <div class="grid2">
      <div><${JobSummary} job=${job} />${job.replicas ? html`<${Replicas} replicas=${job.replicas} /><${ServiceSlo} job=${job} />` : null}<${CancelButton} job=${job} /></div>
      <div>
        <h3>Events</h3><${Events} events=${events} />
        ${wait ? html`<h3>Why it waits</h3><p>${wait.decision}: ${wait.message}</p>
          <ul class="plain">${wait.filters.map((f) => html`<li key=${f.plugin}>${f.plugin} rejected ${f.rejected}${f.examples.length ? ': ' + f.examples.join('; ') : ''}</li>`)}</ul>
          <p>Earliest start: ${wait.earliest_start || 'unknown'}. Pricing model: ${wait.pricing || '–'}${wait.pricing_reason ? ' (' + wait.pricing_reason + ')' : ''}.</p>` : null}
      </div>
    </div>
    <${Logs} id=${job.id} />
  </section>`;
}
