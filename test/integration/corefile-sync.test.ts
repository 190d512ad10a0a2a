// CorefileSync (kube-dns -conf's reload) reading a real file as it changes: what an operator's edit of
// the coredns ConfigMap does once the kubelet has synced it.

import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeDnsConfig } from '../../pkg/config/config.ts';
import { CorefileSync, planCorefileAt } from '../../pkg/kubedns/corefile-sync.ts';
import type { KubeDnsCorefile } from '../../pkg/kubedns/corefile.ts';
import { createLogger } from '../../pkg/log/log.ts';
import { eventually } from '../helpers/eventually.ts';
import { kubeadmCorefile } from '../e2e/harness/manifests.ts';

t.test("a stub block appended to kubeadm's Corefile is applied at reload, with its own forward policy", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kdt-corefile-sync-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'Corefile');
  const base = kubeadmCorefile().replace(/^(\s*)reload$/m, '$1reload 2s');
  writeFileSync(path, base);
  const ctx = { defaultPort: 53, resolvServers: () => [{ host: '10.200.0.1', port: 53 }] };
  const log = createLogger('test');
  const sync = new CorefileSync(path, planCorefileAt(path, ctx, log), ctx, log);
  const applied: KubeDnsConfig[] = [];
  const replaced: KubeDnsCorefile[] = [];
  sync.onPlugins = (plan) => void replaced.push(plan);
  sync.start((config) => void applied.push(config));
  t.teardown(() => sync.stop());
  writeFileSync(path, `${base}corp.example:53 {\n    errors\n    forward . 10.200.0.2 {\n        policy sequential\n    }\n}\n`);
  await eventually(() => applied.length > 0, 'the edit applied within reload', 6000);
  t.same([...applied[0].stubDomains], [['corp.example', ['10.200.0.2:53']]]);
  t.equal(sync.stubPolicy('corp.example'), 'sequential', "the stub block's policy, for the forwarder's routes");
  t.equal(sync.invalidUpdates, 0, 'nothing refused');
  t.same(replaced.map((p) => p.cache?.bypass), [['corp.example']], "the block has no cache: its names bypass the root's, put in place with the plugins");
});
