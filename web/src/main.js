// The dashboard: pages chosen by the URL fragment (#overview, #job=ID, ...),
// each reading the /v1 API with the session's token.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { getToken, takeTokenFromHash } from './token.js';
import { route } from './route.js';
import { Overview } from './pages/overview.js';
import { Queue } from './pages/queue.js';
import { Jobs } from './pages/jobs.js';
import { Job } from './pages/job.js';
import { Fleet } from './pages/fleet.js';
import { Regions } from './pages/regions.js';
import { Plan } from './pages/plan.js';
import { TokenPage } from './pages/token.js';
import './style.css';

export const PAGES = [
  ['overview', 'Overview', Overview],
  ['queue', 'Queue', Queue],
  ['jobs', 'Jobs', Jobs],
  ['fleet', 'Fleet', Fleet],
  ['regions', 'Regions', Regions],
  ['plan', 'Plan', Plan],
];

function App() {
  takeTokenFromHash();
  const [r, setR] = useState(route(window.location.hash));
  const [signedIn, setSignedIn] = useState(!!getToken());
  useEffect(() => {
    const on = () => {
      takeTokenFromHash();
      setSignedIn(!!getToken());
      setR(route(window.location.hash));
    };
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  useEffect(() => {
    const main = document.getElementById('main');
    if (main) main.focus({ preventScroll: true });
  }, [r.page, r.id]);
  const page = !signedIn ? 'token' : r.page;
  const found = PAGES.find((p) => p[0] === page);
  let body;
  if (page === 'token') body = html`<${TokenPage} onChange=${() => setSignedIn(!!getToken())} />`;
  else if (page === 'job') body = html`<${Job} key=${r.id} id=${r.id} />`;
  else body = found ? html`<${found[2]} key=${page} />` : html`<p role="alert">No page "${page}". <a href="#overview">Overview</a></p>`;
  return html`
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById('main').focus(); }}>Skip to content</a>
    <header>
      <h1><span class="logo" aria-hidden="true">◐</span> meridian</h1>
      <nav aria-label="Pages"><ul>
        ${PAGES.map(([k, label]) => html`<li key=${k}><a href=${'#' + k} aria-current=${page === k ? 'page' : undefined}>${label}</a></li>`)}
        <li><a href="#token" aria-current=${page === 'token' ? 'page' : undefined}>Token</a></li>
      </ul></nav>
    </header>
    <main id="main" tabindex="-1">${body}</main>`;
}

render(html`<${App} />`, document.getElementById('app'));
