// The example specs the Jobs and Plan forms start with, for a GPU model this
// fleet has (a spec without gpu_models may ask for a model it lacks).
import { useEffect, useState } from 'preact/hooks';
import { getJson } from './api.js';

export function fleetModel(fleet) {
  for (const c of fleet.clusters) {
    for (const n of c.nodes) if (n.state === 'ready' && n.gpu_model) return n.gpu_model;
  }
  return null;
}

export function useFleetModel() {
  const [model, setModel] = useState(null);
  useEffect(() => {
    getJson('/v1/fleet').then((f) => setModel(fleetModel(f)), () => {});
  }, []);
  return model;
}

export const submitExample = (model) => JSON.stringify({
  name: 'hello', kind: 'data-science',
  resources: model ? { gpus: 1, gpu_models: [model] } : { gpus: 1 },
  command: ['/bin/sh', '-c', 'echo hello from meridian; sleep 2'],
}, null, 2);

export const planExample = (model) =>
  `name: explore\nkind: data-science\nresources: {gpus: 1${model ? `, gpu_models: [${model}]` : ''}}\ncommand: [/bin/true]\n`;
