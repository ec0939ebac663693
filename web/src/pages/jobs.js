// Jobs: the jobs the token may see, newest first, one page at a time (only
// the page shown is fetched and refreshed), searchable and sortable within
// it, and a form that submits a spec (JSON or YAML) through POST /v1/jobs.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { jobsPage, postJson } from '../api.js';
import { usePoll } from '../poll.js';
import { JobLink, Status } from '../components.js';
import { duration, kg, placement, runtime, usd } from '../format.js';
import { submitExample, useFleetModel } from '../example.js';

const COLUMNS = [
  ['id', 'Job', (j) => j.seq ?? j.id],
  ['name', 'Name', (j) => j.name],
  ['state', 'State', (j) => j.state],
  ['tenant', 'Tenant', (j) => j.tenant],
  ['kind', 'Kind', (j) => j.kind],
  ['placement', 'Placement', (j) => placement(j)],
  ['pricing', 'Pricing', (j) => j.pricing || ''],
  ['cost', 'Cost', (j) => j.cost_usd],
  ['co2', 'CO₂', (j) => j.co2_g],
  ['runtime', 'Runtime', (j) => runtime(j) ?? -1],
];

const NUMERIC = new Set(['cost', 'co2', 'runtime']);

// One job's cells, in COLUMNS order.
const cells = (j) => [
  html`<${JobLink} id=${j.id} />`, j.name, html`<span class=${'state s-' + j.state}>${j.state}</span>`,
  j.tenant, j.kind, placement(j), j.pricing || '–', usd(j.cost_usd), kg(j.co2_g / 1000), duration(runtime(j)),
];

export function filterAndSort(jobs, query, key, dir) {
  const q = query.trim().toLowerCase();
  const rows = q ? jobs.filter((j) => [j.id, j.name, j.state, j.tenant, j.kind, placement(j), j.pricing || ''].some((v) => String(v).toLowerCase().includes(q))) : jobs.slice();
  const col = COLUMNS.find((c) => c[0] === key) || COLUMNS[0];
  rows.sort((a, b) => {
    const x = col[2](a), y = col[2](b);
    return (x < y ? -1 : x > y ? 1 : 0) * dir;
  });
  return rows;
}

export function JobsTable({ jobs }) {
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState(['id', -1]);
  const rows = filterAndSort(jobs, query, sort[0], sort[1]);
  const by = (k) => setSort(([key, dir]) => [k, key === k ? -dir : 1]);
  return html`<div>
    <label for="job-search">Search jobs</label>
    <input id="job-search" type="search" value=${query} onInput=${(e) => setQuery(e.target.value)} placeholder="name, state, tenant, region…" />
    <span class="muted" aria-live="polite"> ${rows.length} of ${jobs.length}</span>
    <div class="scroll"><table class="stack" data-testid="jobs-table">
      <thead><tr>${COLUMNS.map(([k, label]) => html`<th scope="col" key=${k} aria-sort=${sort[0] === k ? (sort[1] > 0 ? 'ascending' : 'descending') : 'none'}>
        <button class="sort" onClick=${() => by(k)}>${label}${sort[0] === k ? (sort[1] > 0 ? ' ▲' : ' ▼') : ''}</button></th>`)}</tr></thead>
      <tbody>${rows.map((j) => html`<tr key=${j.id} data-job=${j.id}>
        ${cells(j).map((c, i) => html`<td key=${i} data-label=${COLUMNS[i][1]} class=${NUMERIC.has(COLUMNS[i][0]) ? 'num' : undefined}>${c}</td>`)}
      </tr>`)}</tbody>
    </table></div>
  </div>`;
}

export function SubmitForm({ onSubmitted }) {
  const model = useFleetModel();
  const [text, setText] = useState(submitExample(null));
  const [edited, setEdited] = useState(false);
  const [type, setType] = useState('application/json');
  useEffect(() => { if (!edited) setText(submitExample(model)); }, [model]);
  const [msg, setMsg] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    try {
      const j = await postJson('/v1/jobs', text, type);
      setMsg({ ok: true, text: `Submitted ${j.id} (${j.state}).`, id: j.id });
      onSubmitted && onSubmitted(j);
    } catch (err) {
      setMsg({ ok: false, text: err.message });
    }
  };
  return html`<form onSubmit=${submit} aria-labelledby="h-submit">
    <h3 id="h-submit">Submit a job</h3>
    <label for="spec-text">Job spec</label>
    <textarea id="spec-text" rows="8" spellcheck="false" value=${text} onInput=${(e) => { setEdited(true); setText(e.target.value); }}></textarea>
    <div class="row">
      <label for="spec-type">Format</label>
      <select id="spec-type" value=${type} onChange=${(e) => setType(e.target.value)}>
        <option value="application/json">JSON</option><option value="application/yaml">YAML</option>
      </select>
      <button type="submit" id="submit-job">Submit</button>
    </div>
    ${msg ? html`<p role="status" class=${msg.ok ? 'ok' : 'error'} data-testid="submit-result">${msg.text} ${msg.id ? html`<${JobLink} id=${msg.id} />` : ''}</p>` : null}
  </form>`;
}

export function Jobs() {
  // The page tokens of the pages before the one shown; the last is its own.
  const [tokens, setTokens] = useState(['']);
  const token = tokens[tokens.length - 1];
  const { data, error, loading } = usePoll(() => jobsPage(token), 2000, [token]);
  const older = () => data && data.next && setTokens((t) => [...t, data.next]);
  const newer = () => setTokens((t) => (t.length > 1 ? t.slice(0, -1) : t));
  return html`<section aria-labelledby="h-jobs">
    <h2 id="h-jobs">Jobs</h2>
    <${Status} error=${error} loading=${loading && !data} />
    ${data ? html`<${JobsTable} jobs=${data.jobs} />` : null}
    <nav class="row" aria-label="Job pages">
      <button type="button" id="jobs-newer" onClick=${newer} disabled=${tokens.length === 1}>Newer</button>
      <span class="muted">page ${tokens.length}</span>
      <button type="button" id="jobs-older" onClick=${older} disabled=${!data || !data.next}>Older</button>
    </nav>
    <${SubmitForm} />
  </section>`;
}
