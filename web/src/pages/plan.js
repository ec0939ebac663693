// Plan explorer: a spec (pasted or from a file) through POST /v1/plan, and
// the scheduler's ranked options with the arithmetic: each score plugin's
// normalized score times its weight, summed to the candidate's total.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { postJson } from '../api.js';
import { planExample, useFleetModel } from '../example.js';

export function RankedOption({ rank, option, label }) {
  const sumText = option.scores.map((s) => `${s.normalized}×${s.weight}`).join(' + ');
  return html`<div class="option" data-testid=${'option-' + rank}>
    <h4>#${rank} ${label}: ${option.where}</h4>
    <div class="scroll"><table class="compact arith">
      <thead><tr><th scope="col">Plugin</th><th scope="col" class="num">Raw</th><th scope="col" class="num">Normalized</th><th scope="col" class="num">× Weight</th><th scope="col" class="num">= Weighted</th></tr></thead>
      ${option.scores.map((s) => html`<tbody key=${s.plugin}>
        <tr><th scope="row">${s.plugin}</th><td class="num">${s.raw}</td><td class="num">${s.normalized}</td><td class="num">${s.weight}</td><td class="num">${s.weighted}</td></tr>
        ${s.note ? html`<tr class="note"><td colspan="5">${s.note}</td></tr>` : null}
      </tbody>`)}
      <tfoot><tr><th scope="row">Total</th><td colspan="3" class="muted">${sumText || '–'}</td><td class="num" data-testid=${'total-' + rank}>${option.total}</td></tr></tfoot>
    </table></div>
  </div>`;
}

export function PlanResult({ plan }) {
  const decisions = plan.decisions || [];
  return html`<div data-testid="plan-result">${decisions.map((d, i) => {
    const ranked = [d.chosen && ['chosen', d.chosen], d.runner_up && ['runner-up', d.runner_up]].filter(Boolean);
    return html`<div key=${i}>
      <p class="lead"><strong>${d.decision}</strong>${d.status_message ? ` — ${d.status_message}` : ''}${d.start ? `; starts ${d.start}` : ''}${d.start_reason ? ` (${d.start_reason})` : ''}</p>
      <p>Pricing model: ${d.pricing || 'owned (the fleet)'}${d.pricing_reason ? ` — ${d.pricing_reason}` : ''}. ${d.candidates} candidates examined, ${d.feasible} passed every filter.</p>
      <h3>Ranked options</h3>
      ${ranked.length ? ranked.map(([label, o], k) => html`<${RankedOption} key=${label} rank=${k + 1} option=${o} label=${label} />`) : html`<p class="muted">No candidate passed every filter.</p>`}
      ${d.filters && d.filters.length ? html`<h3>What the filters turned away</h3><ul class="plain">${d.filters.map((f) => html`<li key=${f.plugin}><strong>${f.plugin}</strong> rejected ${f.rejected}${f.examples.length ? ': ' + f.examples.join('; ') : ''}</li>`)}</ul>` : null}
    </div>`;
  })}</div>`;
}

export function Plan() {
  const model = useFleetModel();
  const [text, setText] = useState(planExample(null));
  const [edited, setEdited] = useState(false);
  useEffect(() => { if (!edited) setText(planExample(model)); }, [model]);
  const [plan, setPlan] = useState(null);
  const [error, setError] = useState('');
  const run = async (e) => {
    e.preventDefault();
    setError('');
    try {
      const type = text.trim().startsWith('{') ? 'application/json' : 'application/yaml';
      setPlan(await postJson('/v1/plan', text, type));
    } catch (err) {
      setPlan(null);
      setError(err.message);
    }
  };
  const upload = async (e) => {
    const f = e.target.files && e.target.files[0];
    if (f) {
      setEdited(true);
      setText(await f.text());
    }
  };
  return html`<section aria-labelledby="h-plan">
    <h2 id="h-plan">Plan explorer</h2>
    <p class="lead">What the scheduler would decide for a spec now, without submitting it.</p>
    <form onSubmit=${run}>
      <label for="plan-text">Job spec (YAML or JSON)</label>
      <textarea id="plan-text" rows="7" spellcheck="false" value=${text} onInput=${(e) => { setEdited(true); setText(e.target.value); }}></textarea>
      <div class="row">
        <label for="plan-file">or a file</label><input id="plan-file" type="file" accept=".yaml,.yml,.json" onChange=${upload} />
        <button type="submit" id="plan-run">Plan</button>
      </div>
    </form>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${plan ? html`<${PlanResult} plan=${plan} />` : null}
  </section>`;
}
