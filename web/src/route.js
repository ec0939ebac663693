// "#page=jobs" (what a sign-in link carries after its token), "#jobs" and
// "#job=ID" name what to show.
export function route(hash) {
  const h = hash.replace(/^#/, '');
  const params = new URLSearchParams(h);
  if (params.get('job')) return { page: 'job', id: params.get('job') };
  const name = params.get('page') || h.split('&')[0];
  return { page: name || 'overview' };
}
