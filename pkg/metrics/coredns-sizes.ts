// CoreDNS's request and reply size histograms (plugin/metrics/vars): their buckets and help, for
// kube-dns -conf and node-cache alike.

/** CoreDNS's plugin.SizeBuckets. */
export const SIZE_BUCKETS = [0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3];
/** CoreDNS's words, though it observes the request's length. */
export const REQUEST_SIZE_HELP = 'Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.';
export const RESPONSE_SIZE_HELP = 'Size of the returned response in bytes.';
