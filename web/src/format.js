// Numbers as the pages print them.
export const usd = (v) => (v == null ? '–' : '$' + (Math.abs(v) < 1 && v !== 0 ? v.toFixed(4) : v.toFixed(2)));
export function kg(v) {
  if (v == null) return '–';
  if (v === 0) return '0 g';
  if (v < 0.0001) return (v * 1e6).toFixed(0) + ' mg';
  return v < 1 ? (v * 1000).toFixed(1) + ' g' : v.toFixed(2) + ' kg';
}
export const pct = (f) => (f * 100).toFixed(0) + '%';

export function duration(s) {
  if (s == null) return '–';
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function runtime(job, now = Date.now()) {
  if (!job.started_at) return null;
  const end = job.ended_at ? Date.parse(job.ended_at) : now;
  return Math.max(0, (end - Date.parse(job.started_at)) / 1000);
}

// "testnode GPUs 0,1 (owned)", "testnode MIG 1g.10gb", "CPU".
export function placement(job) {
  const p = job.placement;
  if (!p) return '–';
  const what = p.mig ? `MIG ${p.mig}` : p.gpus.length ? `${p.gpus.length} GPU${p.gpus.length > 1 ? 's' : ''} (${p.gpus.join(',')})` : 'CPU';
  return `${p.region} · ${p.node} · ${what}`;
}

export const hourLabel = (iso) => iso.slice(11, 13);
