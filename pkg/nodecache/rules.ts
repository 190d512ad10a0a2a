// The rules that keep DNS to the node-local addresses out of conntrack (the 5 s race of
// kubernetes#56903, and kube-proxy's DNAT of the kube-dns ClusterIP when node-cache also holds that
// address): the original node-cache's, per local address, for udp and tcp on the DNS port — raw
// PREROUTING and OUTPUT NOTRACK both ways, filter INPUT/OUTPUT ACCEPT for the untracked packets — and
// NOTRACK for the liveness probe's TCP to the health port. With iptables (legacy or nft, whichever the
// node's `iptables` is), each rule inserted first in its chain with a comment naming it; where there
// is no iptables, the same in an nftables table of our own. ensure() adds what is missing (run every
// -syncinterval: a flush by another agent is repaired), remove() takes every rule away.

import { execFile } from 'node:child_process';
const { isIP } = process.getBuiltinModule('node:net');
const { promisify } = process.getBuiltinModule('node:util');

const run = promisify(execFile);

export const RULE_COMMENT = 'NodeLocal DNS Cache: skip conntrack';
/** Our nftables table (inet: both families). */
export const NFT_TABLE = 'node-local-dns';

export interface Rule {
  table: 'raw' | 'filter';
  chain: 'PREROUTING' | 'OUTPUT' | 'INPUT';
  /** ip6tables for an IPv6 local address. */
  family: 4 | 6;
  proto: 'udp' | 'tcp';
  /** Match on the local address as destination (d) or source (s), and the port on the same side. */
  side: 'd' | 's';
  ip: string;
  port: number;
  verdict: 'NOTRACK' | 'ACCEPT';
}

/** The original's rules, in its order. */
export function nodeLocalRules(localIps: readonly string[], dnsPort: number, healthPort: number): Rule[] {
  const rules: Rule[] = [];
  for (const ip of localIps) {
    const family = isIP(ip) === 6 ? 6 : 4;
    const both = (table: Rule['table'], chain: Rule['chain'], side: Rule['side'], verdict: Rule['verdict']) => {
      for (const proto of ['tcp', 'udp'] as const) rules.push({ table, chain, family, proto, side, ip, port: dnsPort, verdict });
    };
    both('raw', 'PREROUTING', 'd', 'NOTRACK');
    both('filter', 'INPUT', 'd', 'ACCEPT');
    both('raw', 'OUTPUT', 's', 'NOTRACK');
    both('filter', 'OUTPUT', 's', 'ACCEPT');
    // Queries sent on this node (hostNetwork pods) to the local address.
    both('raw', 'OUTPUT', 'd', 'NOTRACK');
    for (const side of ['d', 's'] as const) rules.push({ table: 'raw', chain: 'OUTPUT', family, proto: 'tcp', side, ip, port: healthPort, verdict: 'NOTRACK' });
  }
  return rules;
}

/** `-p udp -d 169.254.20.10 --dport 53 -j NOTRACK -m comment --comment ...`, as iptables -S prints it less the chain. */
export function iptablesArgs(r: Rule): string[] {
  return ['-p', r.proto, `-${r.side}`, r.ip, `--${r.side}port`, String(r.port), '-m', 'comment', '--comment', RULE_COMMENT, '-j', r.verdict];
}

export interface Firewall {
  /** `iptables` or `nftables`. */
  readonly kind: string;
  /** Adds the rules that are missing; resolves with how many were. */
  ensure(): Promise<number>;
  /** Removes every rule of ours (missing ones are no error). */
  remove(): Promise<void>;
}

/** iptables and ip6tables, `-w` to wait for the xtables lock kube-proxy also takes. */
export class IptablesFirewall implements Firewall {
  readonly kind = 'iptables';
  private readonly rules: Rule[];

  constructor(rules: Rule[]) {
    this.rules = rules;
  }

  async ensure(): Promise<number> {
    let added = 0;
    // Inserted first, in reverse, so they end up in the original's order at the head of each chain.
    for (const r of [...this.rules].reverse()) {
      if (await this.has(r)) continue;
      await iptables(r, ['-I', r.chain, '1', ...iptablesArgs(r)]);
      added++;
    }
    return added;
  }

  async remove(): Promise<void> {
    for (const r of this.rules) while (await this.has(r)) await iptables(r, ['-D', r.chain, ...iptablesArgs(r)]);
  }

  private has(r: Rule): Promise<boolean> {
    return iptables(r, ['-C', r.chain, ...iptablesArgs(r)]).then(
      () => true,
      (err: { code?: unknown }) => {
        // Exit status 1: no such rule. Anything else (no permission, no iptables) is an error of its own.
        if (err.code === 1) return false;
        throw err;
      },
    );
  }
}

function iptables(r: Rule, args: string[]): Promise<unknown> {
  return run(r.family === 6 ? 'ip6tables' : 'iptables', ['-w', '5', '-t', r.table, ...args]);
}

/** The rules as one nftables table, replaced whole (atomically) when it differs from what the kernel has. */
export class NftablesFirewall implements Firewall {
  readonly kind = 'nftables';
  private readonly script: string;
  private readonly count: number;

  constructor(rules: Rule[]) {
    this.count = rules.length;
    this.script = nftTable(rules);
  }

  async ensure(): Promise<number> {
    const present = await run('nft', ['list', 'table', 'inet', NFT_TABLE]).then((r) => r.stdout, () => '');
    const want = (present.match(/comment "NodeLocal DNS Cache/g) ?? []).length;
    if (present !== '' && want === this.count) return 0;
    await nft(`${present !== '' ? `delete table inet ${NFT_TABLE}\n` : ''}${this.script}`);
    return this.count - want;
  }

  async remove(): Promise<void> {
    await run('nft', ['delete', 'table', 'inet', NFT_TABLE]).catch(() => undefined);
  }
}

const NFT_HOOKS: Record<Rule['table'], Record<string, string>> = {
  raw: { PREROUTING: 'prerouting', OUTPUT: 'output' },
  filter: { INPUT: 'input', OUTPUT: 'output' },
};

function nftTable(rules: Rule[]): string {
  const chains = new Map<string, string[]>();
  for (const r of rules) {
    const name = `${r.table}-${r.chain.toLowerCase()}`;
    const addr = r.family === 6 ? 'ip6' : 'ip';
    const line = `${addr} ${r.side === 'd' ? 'daddr' : 'saddr'} ${r.ip} ${r.proto} ${r.side === 'd' ? 'dport' : 'sport'} ${r.port} ${r.verdict === 'NOTRACK' ? 'notrack' : 'accept'} comment "${RULE_COMMENT}"`;
    chains.set(name, [...(chains.get(name) ?? []), line]);
  }
  const body = [...chains].map(([name, lines]) => {
    const [table, chain] = name.split('-') as [Rule['table'], string];
    const hook = NFT_HOOKS[table][chain.toUpperCase()];
    return `  chain ${name} {\n    type filter hook ${hook} priority ${table === 'raw' ? 'raw' : 'filter'}; policy accept;\n${lines.map((l) => `    ${l}\n`).join('')}  }\n`;
  });
  return `table inet ${NFT_TABLE} {\n${body.join('')}}\n`;
}

function nft(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile('nft', ['-f', '-'], (err, _stdout, stderr) => (err ? reject(new Error(`nft: ${stderr.trim() || err.message}`)) : resolve()));
    child.stdin!.end(script);
  });
}

/** iptables when the node has it, else nftables. */
export async function chooseFirewall(rules: Rule[]): Promise<Firewall> {
  const iptablesWorks = await run('iptables', ['-w', '5', '-t', 'raw', '-S', 'PREROUTING']).then(() => true, () => false);
  return iptablesWorks ? new IptablesFirewall(rules) : new NftablesFirewall(rules);
}
