// The bearer token: taken from the URL fragment (#token=..., which the
// browser never sends to the server) or the Token form, kept only in this
// tab's sessionStorage, and removed from the address bar at once.
const KEY = 'meridian-token';

export function takeTokenFromHash(loc = window.location, hist = window.history) {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const t = params.get('token');
  if (!t) return false;
  sessionStorage.setItem(KEY, t);
  params.delete('token');
  const rest = params.toString();
  hist.replaceState(null, '', loc.pathname + (rest ? '#' + rest : ''));
  return true;
}

export const getToken = () => sessionStorage.getItem(KEY) || '';
export const setToken = (t) => sessionStorage.setItem(KEY, t);
export const clearToken = () => sessionStorage.removeItem(KEY);
