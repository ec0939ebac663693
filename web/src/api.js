// The /v1 API with the session's bearer token. Errors carry the API's
// message and field ({"error": {"code", "message", "field"}}).
import { getToken } from './token.js';

export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.field = e.field || null;
  }
}

export async function request(path, opts = {}) {
  const headers = { ...(opts.headers || {}), Authorization: 'Bearer ' + getToken() };
  const r = await fetch(path, { ...opts, headers });
  return r;
}

export async function getJson(path) {
  const r = await request(path);
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}

export async function postJson(path, text, type = 'application/json') {
  const r = await request(path, { method: 'POST', body: text, headers: { 'Content-Type': type } });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}

// One page of the jobs the token may see, newest first: `page` is a page
// token from an earlier answer ('' for the newest). Returns the jobs and the
// next page's token (null on the last).
export async function jobsPage(page = '', limit = 100) {
  const j = await getJson(`/v1/jobs?order=newest&limit=${limit}` + (page ? '&page_token=' + encodeURIComponent(page) : ''));
  return { jobs: j.jobs, next: j.next_page_token };
}

// A stream of a job's log from `offset`: the text, the next offset, and
// whether the job has ended (no more will come).
export async function logChunk(id, stream, offset) {
  const r = await request(`/v1/jobs/${encodeURIComponent(id)}/logs?stream=${stream}&offset=${offset}`);
  if (!r.ok) throw new ApiError(r.status, await r.json().catch(() => null));
  return {
    text: await r.text(),
    next: Number(r.headers.get('X-Next-Offset') || offset),
    done: r.headers.get('X-Job-Done') === 'true',
  };
}
