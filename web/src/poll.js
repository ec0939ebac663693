// A page's data, fetched now and again every `ms` while the page is open.
import { useEffect, useState } from 'preact/hooks';

export function usePoll(load, ms = 2000, deps = []) {
  const [state, setState] = useState({ data: null, error: '', loading: true });
  useEffect(() => {
    let alive = true;
    let timer = null;
    const tick = async () => {
      try {
        const data = await load();
        if (alive) setState({ data, error: '', loading: false });
      } catch (e) {
        if (alive) setState((s) => ({ ...s, error: e.message, loading: false }));
      }
      if (alive && ms > 0) timer = setTimeout(tick, ms);
    };
    tick();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, deps);
  return state;
}
