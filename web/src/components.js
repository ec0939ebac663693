// Small building blocks the pages share: a figure card, a horizontal bar,
// a 24-value sparkline and the loading / error line.
import { html } from './html.js';

export function Card({ label, value, note, id }) {
  return html`<div class="card" data-testid=${id}>
    <div class="card-label">${label}</div>
    <div class="card-value">${value}</div>
    ${note ? html`<div class="card-note">${note}</div>` : null}
  </div>`;
}

// A bar whose width is value/max; the number is always printed beside it.
export function Bar({ value, max, label }) {
  const w = max > 0 ? Math.max(0, Math.min(100, (value / max) * 100)) : 0;
  return html`<span class="bar" role="img" aria-label=${label || String(value)}>
    <span class="bar-fill" style=${`width:${w.toFixed(1)}%`}></span>
  </span>`;
}

export function Sparkline({ values, label, width = 96, height = 20 }) {
  if (!values || values.length === 0) return html`<span>–</span>`;
  const max = Math.max(...values, 1e-9);
  const min = Math.min(...values);
  const span = max - min || 1;
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const pts = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - ((v - min) / span) * (height - 4)).toFixed(1)}`);
  return html`<svg class="spark" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${label}>
    <polyline points=${pts.join(' ')} fill="none" stroke="currentColor" stroke-width="1.5" />
  </svg>`;
}

export function Status({ error, loading }) {
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (loading) return html`<p class="muted" aria-live="polite">Loading…</p>`;
  return null;
}

export function JobLink({ id }) {
  return html`<a href=${'#job=' + encodeURIComponent(id)}>${id}</a>`;
}
