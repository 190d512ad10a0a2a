// A throwaway CA, a serving certificate for 127.0.0.1/localhost (and any other names given) signed by it, and the ServiceAccount signing
// key, made with openssl. Our own CA (rather than kube-apiserver's self-signed cert) gives clients a fixed
// file to trust before the server has started.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterCerts {
  caFile: string;
  serverCert: string;
  serverKey: string;
  /** EC private key: kube-apiserver signs ServiceAccount tokens with it and verifies with its public half. */
  saKey: string;
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** `sans`: the serving certificate's names beyond 127.0.0.1 and localhost (`IP:…`, `DNS:…`). */
export function makeCerts(dir: string, sans: string[] = []): ClusterCerts {
  const p = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', p('ca.key'), '-out', p('ca.crt'), '-days', '7', '-subj', '/CN=kube-dns-ts e2e CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  openssl(['req', ...ec, '-keyout', p('apiserver.key'), '-out', p('apiserver.csr'), '-subj', '/CN=kube-apiserver']);
  writeFileSync(p('apiserver.ext'), [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth',
    `subjectAltName=${['IP:127.0.0.1', 'DNS:localhost', ...sans].join(',')}`,
    '',
  ].join('\n'));
  openssl(['x509', '-req', '-in', p('apiserver.csr'), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial',
    '-days', '7', '-extfile', p('apiserver.ext'), '-out', p('apiserver.crt')]);
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', p('sa.key')]);
  return { caFile: p('ca.crt'), serverCert: p('apiserver.crt'), serverKey: p('apiserver.key'), saKey: p('sa.key') };
}
