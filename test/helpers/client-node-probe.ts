// What kube-dns loads @kubernetes/client-node for, as a script to run where the package is installed
// or bundled (the images): a kubeconfig whose user is an exec plugin. The plugin is the running Node
// itself (the images have no shell), printing an ExecCredential. The script prints one JSON line:
// the module's exports and the Authorization header client-node put on a request.

export const EXEC_TOKEN = 'from-exec';

export const execUserProbe = (): string => {
  const plugin = `console.log(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: { token: "${EXEC_TOKEN}" } }))`;
  return `const m = await import('@kubernetes/client-node');
const kc = new m.KubeConfig();
kc.loadFromOptions({ clusters: [{ name: 'c', server: 'https://10.0.0.1' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x',
  users: [{ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', ${JSON.stringify(plugin)}] } }] });
const opts = {};
await kc.applyToHTTPSOptions(opts);
console.log(JSON.stringify({ exports: Object.keys(m), authorization: opts.headers.Authorization }));
`;
};

/** The probe's line, parsed, from its output. */
export function probeResult(stdout: string): { exports: string[]; authorization: string } {
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}
