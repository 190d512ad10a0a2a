// One object per configured upstream address (ip + port), shared by every route that names it. The
// route lists hold these objects, so counting a try is a field bump on an object that already
// exists: no lookup and no allocation per query. The objects outlive a reload for every address
// that stays configured, so counts carry over a SIGHUP as dnsmasq's do.

import { HistogramCounts } from '../metrics/histogram.ts';
import type { Upstream } from './upstream.ts';

/** CoreDNS's forward duration buckets (prometheus.ExponentialBuckets(0.00025, 2, 16)): 0.25 ms to 8.2 s. */
export const FORWARD_DURATION_BUCKETS = Array.from({ length: 16 }, (_, i) => 0.00025 * 2 ** i);
/** Replies are counted by rcode 0-15 (the header's four bits). */
export const REPLY_RCODES = 16;

/** What serverStats() reports for one upstream address. */
export interface ServerStats {
  server: Upstream;
  /** Tries sent to it (a TC→TCP retry on the same server belongs to the same try). */
  queries: number;
  /** SERVFAIL or REFUSED replies from it (dnsmasq's "failed" in servers.bind). */
  failed: number;
  /** Tries that got no usable reply: timeout, socket error, TCP failure or a mismatched TCP reply. */
  unanswered: number;
  /** Skipped on the default route until the next setUpstreams() (see Forwarder.disable). */
  disabled: boolean;
}

/** What replyStats() reports for one upstream address: tries, and replies by rcode with how long each try took. */
export interface ReplyStats {
  server: Upstream;
  queries: number;
  /** Health probes that got no reply (health.ts). */
  healthcheckFailures: number;
  /** Series: the reply's rcode; values: seconds from the try's send to its reply. */
  replies: HistogramCounts;
}

export class UpstreamServer implements Upstream {
  readonly host: string;
  readonly port: number;
  queries = 0;
  failed = 0;
  unanswered = 0;
  disabled = false;
  /** Tries in a row that got no reply (health.ts). */
  fails = 0;
  /** Health probes that got no reply. */
  healthcheckFailures = 0;
  readonly replies = new HistogramCounts(FORWARD_DURATION_BUCKETS, REPLY_RCODES);

  constructor(u: Upstream) {
    this.host = u.host;
    this.port = u.port;
  }
}

/** The identity of an upstream: its (normalized) address and port, as dnsmasq prints it (`ip#port`, IPv6 without brackets). */
export function serverKey(u: Upstream): string {
  return `${u.host}#${u.port}`;
}

/**
 * The set of upstream objects for one configuration. `intern` hands out the object for an address,
 * taking it over from the previous set when it was configured there (counts kept).
 */
export class ServerSet {
  readonly byKey = new Map<string, UpstreamServer>();
  private readonly previous: ReadonlyMap<string, UpstreamServer>;

  constructor(previous: ReadonlyMap<string, UpstreamServer>) {
    this.previous = previous;
  }

  intern(u: Upstream): UpstreamServer {
    const key = serverKey(u);
    let server = this.byKey.get(key);
    if (server === undefined) {
      server = this.previous.get(key) ?? new UpstreamServer(u);
      this.byKey.set(key, server);
    }
    return server;
  }
}
