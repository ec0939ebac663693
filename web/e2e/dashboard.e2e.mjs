// The dashboard end to end in Debian's Chromium, driven by playwright-core,
// against a real `meridian serve` with a temporary database: sign in from the
// link serve leaves, submit jobs through the page, watch them run to
// completion, cancel one (with the confirmation), open its logs, compare the
// Overview's totals with the API, and check that a second tenant sees none of
// the first tenant's jobs. Screenshots of every page (laptop and phone widths)
// go to OUT_DIR. Fails with the reason when Chromium cannot start.
//   node e2e/dashboard.e2e.mjs MERIDIAN_BINARY OUT_DIR
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [bin, out] = process.argv.slice(2);
if (!bin || !out) {
  console.error('usage: dashboard.e2e.mjs MERIDIAN_BINARY OUT_DIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), 'meridian-e2e-'));
// Passable by others (not listable): as root, serve runs each tenant's jobs as
// a uid of its own, which must reach its directories under the state dir.
chmodSync(dir, 0o711);
const db = join(dir, 'meridian.db');
let serve = null;
const started = Date.now();
const step = (what) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`);

function fail(why) {
  throw new Error(why);
}
function check(cond, why) {
  if (!cond) fail(why);
}

async function main() {
  // The shipped default profile with the two tenants' working hours, so the
  // Regions page has a follow-the-sun strip to show.
  const profile = readFileSync(join(process.cwd(), '..', 'sched', 'profiles', 'default.yaml'), 'utf8').replace(
    /^  - name: drf_fair_share.*$/m,
    '  - name: follow_the_sun\n    args:\n      tenants:\n' +
    '        alice: {zone: Asia/Tokyo, hours: "09:00-18:00"}\n        bob: {zone: Europe/Berlin, hours: "08:00-17:00"}');
  check(profile.includes('follow_the_sun'), 'sched/profiles/default.yaml has no drf_fair_share line to replace');
  writeFileSync(join(dir, 'profile.yaml'), profile);
  writeFileSync(join(dir, 'serve.yaml'),
    'region: gcp:us-central1\nreconcile_interval_ms: 50\ngpu_hour_usd: 1.10\n' +
    `profile: ${join(dir, 'profile.yaml')}\n` +
    'node: {name: testnode, gpu_model: T4, gpus: 4, vcpus: 8, ram_gib: 32}\n');
  serve = spawn(bin, ['serve', '--listen', '127.0.0.1:0', '--db', db, '--config', join(dir, 'serve.yaml')],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  serve.stdout.on('data', (d) => (log += d));
  serve.stderr.on('data', (d) => (log += d));
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('meridian serve printed no dashboard URL:\n' + log)), 10000);
    const poll = setInterval(() => {
      const m = log.match(/dashboard at (http:\/\/[0-9.:]+\/)/);
      if (m) {
        clearTimeout(t);
        clearInterval(poll);
        resolve(m[1]);
      }
    }, 50);
    serve.on('exit', (c) => reject(new Error(`meridian serve exited (${c}):\n${log}`)));
  });
  step(`serve at ${url}`);
  // The first start of an empty database leaves an admin sign-in token beside
  // it and, with its output not a terminal, does not print it.
  const admin = readFileSync(db + '.signin', 'utf8').trim();
  check(admin.startsWith('mrd_'), 'DB.signin holds no token');
  check(!log.includes(admin), 'serve printed the sign-in token into its (non-terminal) output');
  const token = (tenant) => execFileSync(bin, ['token', 'create', '--db', db, '--tenant', tenant]).toString().trim();
  const alice = token('alice');
  const bob = token('bob');
  const api = async (tok, path) => {
    const r = await fetch(url + path.replace(/^\//, ''), { headers: { Authorization: 'Bearer ' + tok } });
    check(r.ok, `${path}: HTTP ${r.status}`);
    return r.json();
  };

  const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'];
  // Each browser gets a fresh --user-data-dir of its own (a persistent
  // context on a new folder), so no profile state carries over.
  const requests = [];
  const pageErrors = [];
  const newPage = async (width, height, profile) => {
    let ctx;
    try {
      ctx = await chromium.launchPersistentContext(join(dir, 'chromium-' + profile), {
        executablePath: '/usr/bin/chromium', headless: true, args: flags,
        viewport: { width, height }, timeout: 30000 });
    } catch (e) {
      fail(`Chromium (/usr/bin/chromium) cannot start: ${e.message.split('\n').slice(0, 3).join(' ')} ` +
        '(tools/install-deps installs chromium)');
    }
    const page = ctx.pages()[0] || (await ctx.newPage());
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (e) => pageErrors.push(`${profile}: ${e.message}`));
    return { ctx, page };
  };

  // Alice signs in with the link and submits three jobs through the page.
  const { ctx, page } = await newPage(1280, 800, 'alice');
  await page.goto(url + '#token=' + alice + '&page=jobs');
  check(!page.url().includes(alice), 'the token stays in the address bar after sign-in');
  await page.getByRole('heading', { name: 'Jobs' }).waitFor();
  const submit = async (name, command) => {
    await page.getByLabel('Job spec').fill(JSON.stringify({ name, kind: 'data-science', resources: { gpus: 1, gpu_models: ['T4'] }, command }));
    const before = await page.evaluate(() => (document.querySelector('[data-testid=submit-result]') || {}).textContent || '');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.waitForFunction((b) => {
      const el = document.querySelector('[data-testid=submit-result]');
      return el && el.textContent !== b;
    }, before);
    const result = page.getByTestId('submit-result');
    const m = (await result.textContent()).match(/Submitted (j-\d+)/);
    check(m, `no job id after submitting ${name}: ${await result.textContent()}`);
    return m[1];
  };
  const quick = await submit('e2e-hello', ['/bin/sh', '-c', 'echo hello from the e2e test; sleep 1']);
  const second = await submit('e2e-second', ['/bin/sh', '-c', 'echo second; sleep 1']);
  const slow = await submit('e2e-to-cancel', ['/bin/sh', '-c', 'echo waiting to be cancelled; sleep 120']);
  step(`submitted ${quick} ${second} ${slow}`);
  check(new Set([quick, second, slow]).size === 3, 'three submissions gave three job ids');

  // The Jobs table shows the first two succeed.
  for (const id of [quick, second]) {
    await page.locator(`tr[data-job="${id}"]`).filter({ hasText: 'succeeded' }).waitFor({ timeout: 30000 });
  }
  step('two jobs succeeded on the Jobs page');

  // Cancel the slow one from its page, through the confirmation.
  await page.goto(url + '#job=' + slow);
  await page.getByTestId('job-state').filter({ hasText: 'running' }).waitFor({ timeout: 20000 });
  await page.getByTestId('logs').filter({ hasText: 'waiting to be cancelled' }).waitFor({ timeout: 20000 });
  await page.getByRole('button', { name: /Cancel job/ }).click();
  await page.getByRole('alertdialog').waitFor();
  await page.getByRole('button', { name: 'Yes, cancel it' }).click();
  await page.getByTestId('job-state').filter({ hasText: 'cancelled' }).waitFor({ timeout: 30000 });
  check((await api(alice, `/v1/jobs/${slow}`)).state === 'cancelled', 'the API does not have the job cancelled');
  step('cancelled through the page');

  // The finished job's page has its events and its whole log.
  await page.goto(url + '#job=' + quick);
  await page.getByTestId('logs').filter({ hasText: 'hello from the e2e test' }).waitFor({ timeout: 10000 });
  await page.getByText('the job has ended').waitFor();
  const events = await page.getByTestId('events').textContent();
  check(events.includes('succeeded') && events.includes('queued'), `events timeline: ${events}`);
  step('logs and events of the finished job');

  // Overview totals agree with the API's.
  await page.goto(url + '#overview');
  const o = await api(alice, '/v1/overview');
  check(o.jobs.total === 3 && o.jobs.by_state.succeeded === 2 && o.jobs.by_state.cancelled === 1,
    `API overview: ${JSON.stringify(o.jobs)}`);
  await page.getByTestId('jobs-total').filter({ hasText: '3' }).waitFor();
  const spend = await page.getByTestId('spend-total').textContent();
  const owned = o.spend.by_pricing.find((p) => p.pricing === 'owned');
  check(owned.so_far_usd > 0, `owned spend is ${owned.so_far_usd}`);
  const shown = Number(spend.match(/\$([0-9.]+)/)[1]);
  check(Math.abs(shown - o.spend.so_far_usd) < 0.00051, `page spend ${spend} vs API ${o.spend.so_far_usd}`);
  const summary = await page.getByTestId('summary').textContent();
  check(summary.includes('3 jobs') && summary.includes('2 succeeded') && summary.includes('1 cancelled'),
    `overview summary: ${summary}`);
  step('overview totals match the API');

  // The Regions page: the home region first, alice's working hours in the strip.
  await page.goto(url + '#regions');
  await page.getByTestId('sun-strip').waitFor();
  const strip = await page.getByTestId('sun-strip').textContent();
  check(strip.includes('alice') && strip.includes('Asia/Tokyo') && !strip.includes('bob'),
    `alice's follow-the-sun strip: ${strip.slice(0, 200)}`);
  check(strip.includes('gcp:us-central1'), 'the strip shows no load in the home region');
  const first = await page.getByTestId('regions-table').locator('tbody tr').first().textContent();
  check(first.includes('gcp:us-central1') && first.includes('home'), `first region row: ${first}`);
  check((await page.getByLabel('GPU model').inputValue()) === 'T4', 'the price column is not the fleet\'s GPU model');
  step('regions');

  // Screenshots of each page at laptop and phone widths.
  const pages = ['overview', 'queue', 'jobs', 'fleet', 'regions', 'plan', 'token'];
  const shoot = async (p, name) => {
    for (const id of pages) {
      await p.goto(url + '#' + id);
      await p.locator('main h2').first().waitFor();
      if (id === 'plan') {
        // The explorer with its answer: the ranked options and their arithmetic.
        await p.waitForFunction(() => document.getElementById('plan-text').value.includes('gpu_models'));
        await p.getByRole('button', { name: 'Plan' }).click();
        await p.getByTestId('option-1').waitFor();
      }
      await p.waitForTimeout(150);
      await p.screenshot({ path: join(out, `${id}-${name}.png`), fullPage: true });
    }
    await p.goto(url + '#job=' + quick);
    await p.getByTestId('logs').filter({ hasText: 'hello' }).waitFor();
    await p.screenshot({ path: join(out, `job-${name}.png`), fullPage: true });
  };
  // The plan explorer's ranked options, before the screenshots.
  await page.goto(url + '#plan');
  await page.waitForFunction(() => document.getElementById('plan-text').value.includes('gpu_models: [T4]'));
  await page.getByRole('button', { name: 'Plan' }).click();
  await page.getByTestId('option-1').waitFor({ timeout: 10000 });
  check((await page.getByTestId('plan-result').textContent()).includes('Total'), 'plan shows no total');
  await shoot(page, '1280x800');
  const phone = await newPage(390, 844, 'alice-phone');
  await phone.page.goto(url + '#token=' + alice);
  await phone.page.getByRole('heading', { name: 'Overview' }).waitFor();
  const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `the Overview is ${overflow}px wider than a phone screen`);
  await shoot(phone.page, '390x844');
  await phone.ctx.close();
  step('screenshots');

  // Keyboard: Tab reaches the navigation, Enter opens a page.
  await page.goto(url + '#overview');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  let focused = await page.evaluate(() => document.activeElement && document.activeElement.textContent);
  for (let i = 0; i < 8 && focused !== 'Queue'; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement && document.activeElement.textContent);
  }
  check(focused === 'Queue', `Tab never reached the Queue link (at "${focused}")`);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Queue' }).waitFor();
  await ctx.close();
  step('keyboard navigation');

  // Bob sees none of Alice's jobs anywhere.
  const b = await newPage(1280, 800, 'bob');
  await b.page.goto(url + '#token=' + bob + '&page=overview');
  await b.page.getByTestId('jobs-total').waitFor();
  check((await b.page.getByTestId('jobs-total').textContent()).includes('0'), 'bob\'s overview counts jobs');
  for (const id of ['jobs', 'queue', 'fleet', 'regions']) {
    await b.page.goto(url + '#' + id);
    await b.page.locator('main h2').first().waitFor();
    await b.page.waitForTimeout(300);
    const text = await b.page.locator('main').textContent();
    for (const leak of [quick, second, slow, 'e2e-hello', 'e2e-to-cancel']) {
      check(!text.includes(leak), `bob's ${id} page shows alice's ${leak}`);
    }
  }
  await b.page.screenshot({ path: join(out, 'bob-regions-1280x800.png'), fullPage: true });
  await b.ctx.close();
  step('second tenant sees none of the first tenant\'s jobs');

  check(pageErrors.length === 0, `errors in the page: ${pageErrors.join('; ')}`);
  const foreign = requests.filter((r) => !r.startsWith(url) && !r.startsWith('data:'));
  check(foreign.length === 0, `requests to other hosts: ${foreign.slice(0, 5).join(', ')}`);
  const tokenInQuery = requests.filter((r) => r.includes(alice) || r.includes(bob));
  check(tokenInQuery.length === 0, `a token in a request URL: ${tokenInQuery[0]}`);
  check(!log.includes(alice) && !log.includes(bob), 'a token in the server output');
}

main().then(
  () => {
    console.log('PASS');
    cleanup(0);
  },
  (e) => {
    console.error('FAIL: ' + e.message);
    cleanup(1);
  },
);

async function cleanup(code) {
  if (serve && serve.exitCode === null) {
    serve.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    if (serve.exitCode === null) serve.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}
