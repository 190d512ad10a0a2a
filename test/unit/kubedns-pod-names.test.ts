// kube-dns's PodNames: the pod at a limited asker's address, asked of the API server with a bound (a
// flood from many addresses must not become a flood of API requests). The API's list is given here as
// a recorded function (what the requests were, what it answers).

import t from 'tap';
import { PodNames } from '../../pkg/kubedns/pod-names.ts';
import type { KubeObject } from '../../pkg/source/source.ts';

const pod = (name: string, o: { hostNetwork?: boolean; phase?: string } = {}): KubeObject => ({
  metadata: { name, namespace: 'team-a' },
  spec: { hostNetwork: o.hostNetwork ?? false },
  status: { phase: o.phase ?? 'Running' },
});

t.test('the one running pod at the address, by a field selector; none, several, or an error: no name', async (t) => {
  const asked: string[] = [];
  let answer: KubeObject[] | Error = [pod('web-1')];
  const names = new PodNames(async (path) => {
    asked.push(path);
    if (answer instanceof Error) throw answer;
    return answer;
  });
  t.equal(await names.of('10.244.1.7'), 'team-a/web-1');
  t.same(asked, ['/api/v1/pods?fieldSelector=status.podIP%3D10.244.1.7&limit=5']);
  answer = [pod('old', { phase: 'Succeeded' }), pod('host', { hostNetwork: true }), pod('web-2')];
  t.equal(await names.of('10.244.1.7'), 'team-a/web-2', 'a finished pod and one on the host network are not it');
  answer = [pod('a'), pod('b')];
  t.equal(await names.of('10.244.1.7'), null, 'two running pods claim it: no name');
  answer = new Error('timeout');
  t.equal(await names.of('10.244.1.7'), null, 'the API failing: no name');
});

t.test('one request at a time, ten a minute at most', async (t) => {
  let requests = 0;
  let release: () => void = () => {};
  const names = new PodNames(async () => {
    requests++;
    await new Promise<void>((r) => (release = r));
    return [pod('web-1')];
  });
  const first = names.of('10.244.1.7');
  t.equal(await names.of('10.244.1.8'), null, 'a second asker while the first is asked: not asked');
  release();
  t.equal(await first, 'team-a/web-1');
  for (let i = 0; i < 12; i++) {
    const n = names.of(`10.244.2.${i}`);
    release();
    await n;
  }
  t.equal(requests, 10, 'ten requests in the minute, whatever was asked');
});
