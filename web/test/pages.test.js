// The pages rendered from the API examples in control/testdata/api/ (the
// same files control_aggregates_test checks the server's answers against),
// so a change of either side's contract fails here or there.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/preact';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { html } from '../src/html.js';
import { OverviewView, summary } from '../src/pages/overview.js';
import { QueueView } from '../src/pages/queue.js';
import { FleetView } from '../src/pages/fleet.js';
import { RegionsView, sortRegions } from '../src/pages/regions.js';
import { PlanResult } from '../src/pages/plan.js';
import { JobsTable, filterAndSort } from '../src/pages/jobs.js';
import { CancelButton, Events, Replicas, ServiceSlo } from '../src/pages/job.js';
import { route } from '../src/route.js';

// Vitest runs in web/ (CTest's working directory for it).
const example = (name) => JSON.parse(readFileSync(join(process.cwd(), '..', 'control', 'testdata', 'api', name), 'utf8'));

afterEach(cleanup);

describe('Overview', () => {
  const o = example('overview.json');
  it('shows the totals, spend by pricing model, CO2, utilization and preemptions', () => {
    render(html`<${OverviewView} data=${o} />`);
    expect(screen.getByTestId('jobs-total').textContent).toContain(String(o.jobs.total));
    expect(screen.getByTestId('spend-total').textContent).toContain('$' + o.spend.so_far_usd.toFixed(o.spend.so_far_usd < 1 ? 4 : 2));
    expect(screen.getByTestId('preemptions').textContent).toContain(String(o.preemptions));
    expect(screen.getByTestId('util-owned').textContent).toContain(`${o.utilization.owned.busy_gpus} of ${o.utilization.owned.gpus} GPUs`);
    const rows = within(screen.getByTestId('by-pricing')).getAllByRole('row');
    expect(rows.map((r) => r.querySelector('th').textContent)).toEqual(['Pricing model', 'spot', 'flex-start', 'on-demand', 'reserved', 'owned']);
    const tiers = within(screen.getByTestId('by-tier')).getAllByRole('row').slice(1).map((r) => r.querySelector('th').textContent);
    expect(tiers).toEqual(['critical', 'high', 'normal', 'low']);
  });
  it('tells a new user where to start when there are no jobs', () => {
    const empty = { ...o, jobs: { ...o.jobs, total: 0 } };
    render(html`<${OverviewView} data=${empty} />`);
    expect(within(screen.getByTestId('first-steps')).getByRole('link', { name: 'Jobs' }).getAttribute('href')).toBe('#jobs');
  });
  it('says in one sentence what is going on', () => {
    const s = summary(o);
    expect(s).toContain(`${o.jobs.total} job`);
    expect(s).toContain(`${o.utilization.owned.busy_gpus} of ${o.utilization.owned.gpus} owned GPUs busy`);
  });
});

describe('Queue', () => {
  const w = example('waiting.json');
  it('explains each waiting job: filter, earliest start, pricing model', () => {
    render(html`<${QueueView} data=${w} />`);
    const table = screen.getByTestId('queue-table');
    const j = w.jobs[0];
    expect(table.textContent).toContain(j.id);
    expect(table.textContent).toContain(j.filters[0].plugin);
    expect(table.textContent).toContain(`rejected ${j.filters[0].rejected}`);
    expect(table.textContent).toContain(j.pricing);
    expect(within(table).getByRole('link', { name: j.id }).getAttribute('href')).toBe('#job=' + j.id);
  });
  it('says so when nothing waits', () => {
    render(html`<${QueueView} data=${{ ...w, jobs: [] }} />`);
    expect(screen.getByTestId('queue-summary').textContent).toBe('Nothing is waiting.');
  });
});

describe('Fleet', () => {
  const f = example('fleet.json');
  it('lists nodes with each GPU, MIG slices and drained nodes', () => {
    render(html`<${FleetView} data=${f} />`);
    const table = screen.getByTestId('fleet-table');
    for (const n of f.clusters[0].nodes) expect(table.textContent).toContain(n.name);
    const drained = f.clusters[0].nodes.find((n) => n.drained);
    expect(drained).toBeTruthy();
    expect(table.querySelector('tr.drained').textContent).toContain(drained.name);
    const mig = f.clusters[0].nodes.find((n) => n.mig_gpus > 0);
    expect(mig).toBeTruthy();
    expect(table.textContent).toContain(mig.mig_slices[0].profile);
    expect(table.textContent).toContain('another tenant');
  });
});

describe('Regions', () => {
  const r = example('regions.json');
  it('puts the home region first and sorts the rest by carbon', () => {
    const rows = sortRegions(r.regions, 'T4', 'carbon');
    expect(rows[0].home).toBe(true);
    for (let i = 2; i < rows.length; i++) expect(rows[i - 1].carbon_g_per_kwh_now).toBeLessThanOrEqual(rows[i].carbon_g_per_kwh_now);
  });
  it('draws the follow-the-sun strip: working hours per tenant and load per region', () => {
    render(html`<${RegionsView} data=${r} fleetModel="T4" />`);
    const strip = screen.getByTestId('sun-strip');
    const t = r.tenants[0];
    const row = within(strip).getByText(t.tenant).closest('tr');
    expect(row.querySelectorAll('td.work').length).toBe(t.working.filter(Boolean).length);
    const home = r.regions.find((g) => g.home);
    expect(within(strip).getByText(home.id)).toBeTruthy();
    const table = screen.getByTestId('regions-table');
    const offering = r.regions.filter((g) => g.home || g.prices.some((p) => p.gpu_model === 'T4'));
    expect(table.querySelectorAll('tbody tr').length).toBe(Math.min(12, offering.length));
    fireEvent.click(screen.getByLabelText(/only regions that offer T4/));
    expect(table.querySelectorAll('tbody tr').length).toBe(Math.min(12, r.regions.length));
    expect(table.querySelector('tbody tr').textContent).toContain('home');
  });
  it('changes the price column with the GPU model', () => {
    render(html`<${RegionsView} data=${r} fleetModel="T4" />`);
    const select = screen.getByLabelText('GPU model');
    fireEvent.change(select, { target: { value: 'T4' } });
    expect(screen.getByTestId('regions-table').querySelector('thead').textContent).toContain('T4 on-demand');
  });
});

describe('Plan', () => {
  const p = example('plan.json');
  it('ranks the options and shows the arithmetic of each total', () => {
    render(html`<${PlanResult} plan=${p} />`);
    const d = p.decisions[0];
    const first = screen.getByTestId('option-1');
    expect(first.textContent).toContain(d.chosen.where);
    const sum = d.chosen.scores.reduce((n, s) => n + s.normalized * s.weight, 0);
    expect(sum).toBe(d.chosen.total);
    expect(screen.getByTestId('total-1').textContent).toBe(String(d.chosen.total));
  });
});

describe('Jobs', () => {
  const jobs = example('jobs.json').jobs;
  it('searches and sorts', () => {
    expect(filterAndSort(jobs, jobs[0].name, 'id', 1).map((j) => j.id)).toContain(jobs[0].id);
    expect(filterAndSort(jobs, 'no-such-job-anywhere', 'id', 1)).toEqual([]);
    const byCost = filterAndSort(jobs, '', 'cost', -1);
    for (let i = 1; i < byCost.length; i++) expect(byCost[i - 1].cost_usd).toBeGreaterThanOrEqual(byCost[i].cost_usd);
  });
  it('sorts when a column header is pressed, and says which way', () => {
    render(html`<${JobsTable} jobs=${jobs} />`);
    const header = screen.getByRole('button', { name: /State/ });
    fireEvent.click(header);
    expect(header.closest('th').getAttribute('aria-sort')).toBe('ascending');
    fireEvent.click(header);
    expect(header.closest('th').getAttribute('aria-sort')).toBe('descending');
  });
});

describe('Job page', () => {
  const job = example('jobs.json').jobs.find((j) => j.state === 'running') || example('jobs.json').jobs[0];
  it('asks before cancelling', () => {
    render(html`<${CancelButton} job=${{ ...job, state: 'running', cancel_requested: false }} />`);
    fireEvent.click(screen.getByRole('button', { name: /Cancel job/ }));
    expect(screen.getByRole('alertdialog').textContent).toContain(job.id);
    fireEvent.click(screen.getByRole('button', { name: 'Keep it' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });
  it('shows no cancel for a finished job', () => {
    render(html`<${CancelButton} job=${{ ...job, state: 'succeeded' }} />`);
    expect(screen.queryByRole('button')).toBeNull();
  });
  it('lists the events in order', () => {
    const ev = example('events.json').events;
    render(html`<${Events} events=${ev} />`);
    expect(screen.getByTestId('events').querySelectorAll('li').length).toBe(ev.length);
  });
});

describe('routes', () => {
  it('reads pages and jobs from the fragment', () => {
    expect(route('#jobs')).toEqual({ page: 'jobs' });
    expect(route('#page=regions')).toEqual({ page: 'regions' });
    expect(route('#job=j-00000002')).toEqual({ page: 'job', id: 'j-00000002' });
    expect(route('')).toEqual({ page: 'overview' });
  });
});

describe('ServiceSlo', () => {
  it("says a service's minutes met of those due", () => {
    render(html`<${ServiceSlo} job=${{ slo_minutes: 10, slo_minutes_met: 7 }} />`);
    // 7 / 10 = 70.0%
    expect(screen.getByTestId('slo').textContent).toBe('SLO met in 7 of 10 minutes (70.0%)');
  });
  it('says when no minute is counted yet', () => {
    render(html`<${ServiceSlo} job=${{ slo_minutes: 0, slo_minutes_met: 0 }} />`);
    expect(screen.getByTestId('slo').textContent).toBe('SLO: no whole minute counted yet');
  });
});

describe('Replicas', () => {
  it('lists each replica of a service with its node, state and restarts', () => {
    const replicas = [
      { index: 0, node: 'm0', gpus: [0], state: 'running', restarts: 0, attempt: 1 },
      { index: 1, node: 'm2', gpus: [0], state: 'restarting', restarts: 3, attempt: 3 },
    ];
    render(html`<${Replicas} replicas=${replicas} />`);
    const rows = within(screen.getByTestId('replicas')).getAllByRole('row').slice(1);
    expect(rows.map((r) => [...r.children].map((c) => c.textContent))).toEqual([
      ['0', 'm0', 'running', '0'],
      ['1', 'm2', 'restarting', '3'],
    ]);
  });
});
