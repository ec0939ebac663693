// Token: paste a bearer token (meridian token create); kept only in this tab.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { clearToken, getToken, setToken } from '../token.js';

export function TokenPage({ onChange }) {
  const [value, setValue] = useState('');
  const save = (e) => {
    e.preventDefault();
    if (!value.trim()) return;
    setToken(value.trim());
    onChange();
    window.location.hash = 'overview';
  };
  return html`<section aria-labelledby="h-token">
    <h2 id="h-token">Sign in with a token</h2>
    <p>meridian's dashboard shows what the scheduler is doing: jobs, spend, carbon, the fleet and why work waits. It needs a bearer token; the URL that <code>meridian serve</code> prints signs you in, or create one with <code>meridian token create --db DB --tenant NAME</code>.</p>
    <p class="muted">The token is kept only in this browser tab's session storage and sent only in the Authorization header.</p>
    <form onSubmit=${save} class="row">
      <label for="token-in">Token</label>
      <input id="token-in" type="password" autocomplete="off" value=${value} onInput=${(e) => setValue(e.target.value)} />
      <button type="submit" id="token-save">Use token</button>
    </form>
    ${getToken() ? html`<p><button id="token-clear" onClick=${() => { clearToken(); onChange(); }}>Sign out</button></p>` : null}
  </section>`;
}
