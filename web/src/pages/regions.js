// Regions: a table rather than a map (the daemon's work runs in its one home
// region, and a map of dots would suggest a spread that is not there): price
// and hourly grid carbon of every catalog region, where work runs, and the
// 24-hour follow-the-sun strip (tenants' working hours, where load went).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { getJson } from '../api.js';
import { usePoll } from '../poll.js';
import { Sparkline, Status } from '../components.js';
import { hourLabel } from '../format.js';
import { useFleetModel } from '../example.js';

const SHOWN = 12;  // rows before "Show all": the home region and the best few

const sum = (a) => a.reduce((x, y) => x + y, 0);

export function priceOf(region, model) {
  return region.prices.find((p) => p.gpu_model === model) || null;
}

export function sortRegions(regions, model, by) {
  const key = {
    carbon: (r) => r.carbon_g_per_kwh_now,
    price: (r) => (priceOf(r, model) ? priceOf(r, model).on_demand_usd_per_gpu_hour : Infinity),
    load: (r) => -sum(r.gpu_hours_24h),
  }[by];
  return regions.slice().sort((a, b) => (b.home - a.home) || key(a) - key(b) || a.id.localeCompare(b.id));
}

export function SunStrip({ data }) {
  const loaded = data.regions.filter((r) => sum(r.gpu_hours_24h) > 0);
  const max = Math.max(1e-9, ...loaded.flatMap((r) => r.gpu_hours_24h));
  return html`<div class="scroll"><table class="strip" data-testid="sun-strip">
    <caption>The last 24 hours (UTC): who was at work, and where the GPU-hours went</caption>
    <thead><tr><th scope="col">Hour (UTC)</th>${data.hours.map((h) => html`<th scope="col" key=${h}>${hourLabel(h)}</th>`)}</tr></thead>
    <tbody>
      ${data.tenants.map((t) => html`<tr key=${t.tenant}><th scope="row">${t.tenant}<div class="muted">${t.zone} ${t.hours}</div></th>
        ${t.working.map((w, i) => html`<td key=${i} class=${w ? 'work' : 'off'} title=${w ? 'working hours' : 'off hours'}>${w ? 'W' : ''}</td>`)}</tr>`)}
      ${data.tenants.length === 0 ? html`<tr><th scope="row">tenants</th><td colspan="24" class="muted">The scheduling profile (${data.profile}) sets no working hours (follow_the_sun).</td></tr>` : null}
      ${loaded.map((r) => html`<tr key=${r.id}><th scope="row">${r.id}<div class="muted">GPU-hours</div></th>
        ${r.gpu_hours_24h.map((v, i) => html`<td key=${i} class="load" style=${`--load:${(v / max).toFixed(3)}`} title=${`${v.toFixed(3)} GPU-hours`}>${v > 0 ? (v < 0.01 ? '·' : v.toFixed(2)) : ''}</td>`)}</tr>`)}
      ${loaded.length === 0 ? html`<tr><th scope="row">load</th><td colspan="24" class="muted">No GPU work ran in the last 24 hours.</td></tr>` : null}
    </tbody></table></div>`;
}

export function RegionsView({ data, fleetModel }) {
  const models = [...new Set(data.regions.flatMap((r) => r.prices.map((p) => p.gpu_model)))].sort();
  const home = data.regions.find((r) => r.home);
  // The fleet's own GPU model first; else one the home region sells.
  const [picked, setModel] = useState(null);
  const homeModel = home && home.prices.length ? home.prices[0].gpu_model : models[0];
  const model = picked || (models.includes(fleetModel) ? fleetModel : homeModel);
  const [by, setBy] = useState('carbon');
  const [all, setAll] = useState(false);
  const [offering, setOffering] = useState(true);
  const sorted = sortRegions(data.regions.filter((r) => r.home || !offering || priceOf(r, model)), model, by);
  const rows = all ? sorted : sorted.slice(0, SHOWN);
  return html`<section aria-labelledby="h-regions">
    <h2 id="h-regions">Regions</h2>
    <p class="lead">Work runs in ${data.home_region}${home ? ` (${home.location})` : ''}, at ${home ? home.carbon_g_per_kwh_now : '–'} gCO₂/kWh now. Below: what the other regions would cost and how clean their power is.</p>
    <h3>Follow the sun</h3>
    <${SunStrip} data=${data} />
    <h3>Price and carbon by region</h3>
    <div class="row">
      <label for="gpu-model">GPU model</label>
      <select id="gpu-model" value=${model} onChange=${(e) => setModel(e.target.value)}>${models.map((m) => html`<option key=${m} value=${m}>${m}</option>`)}</select>
      <label for="region-sort">Sort by</label>
      <select id="region-sort" value=${by} onChange=${(e) => setBy(e.target.value)}>
        <option value="carbon">carbon now</option><option value="price">on-demand price</option><option value="load">load</option>
      </select>
      <input type="checkbox" id="regions-offering" checked=${offering} onChange=${(e) => setOffering(e.target.checked)} />
      <label for="regions-offering">only regions that offer ${model}</label>
    </div>
    <div class="scroll"><table data-testid="regions-table">
      <thead><tr><th scope="col">Region</th><th scope="col">Location</th><th scope="col" class="num">gCO₂/kWh now</th><th scope="col">Last 24 h</th><th scope="col" class="num">${model} on-demand $/GPU-h</th><th scope="col" class="num">${model} spot $/GPU-h</th><th scope="col" class="num">Running here</th></tr></thead>
      <tbody>${rows.map((r) => {
        const p = priceOf(r, model);
        return html`<tr key=${r.id} class=${r.home ? 'home' : ''}>
          <th scope="row">${r.id}${r.home ? html` <span class="badge">home</span>${r.owned_gpu_hour_usd != null ? html`<div class="muted">owned: $${r.owned_gpu_hour_usd}/GPU-h</div>` : ''}` : ''}</th>
          <td>${r.location}<div class="muted">${r.time_zone}</div></td>
          <td class="num">${r.carbon_g_per_kwh_now}<div class="muted">${r.carbon_source}</div></td>
          <td><${Sparkline} values=${r.carbon_g_per_kwh_hourly} label=${`hourly carbon ${Math.min(...r.carbon_g_per_kwh_hourly)} to ${Math.max(...r.carbon_g_per_kwh_hourly)} gCO2/kWh`} /></td>
          <td class="num">${p ? p.on_demand_usd_per_gpu_hour.toFixed(4) : '–'}</td>
          <td class="num">${p && p.spot_usd_per_gpu_hour != null ? p.spot_usd_per_gpu_hour.toFixed(4) : '–'}</td>
          <td class="num">${r.running_jobs ? `${r.running_jobs} jobs, ${r.running_gpus} GPUs` : '–'}</td>
        </tr>`;
      })}</tbody></table></div>
    ${sorted.length > SHOWN ? html`<p><button id="regions-all" aria-expanded=${all} onClick=${() => setAll(!all)}>${all ? `Show the first ${SHOWN}` : `Show all ${sorted.length} regions`}</button></p>` : null}
    <p class="muted">Prices: the catalog's cheapest offering of the model in each region, per GPU. Carbon: the grid zone's hourly series where the catalog has one, else the yearly figure.</p>
  </section>`;
}

export function Regions() {
  const { data, error, loading } = usePoll(() => getJson('/v1/regions'), 10000);
  const fleetModel = useFleetModel();
  return data ? html`<${Status} error=${error} /><${RegionsView} data=${data} fleetModel=${fleetModel} />` : html`<${Status} error=${error} loading=${loading} />`;
}
