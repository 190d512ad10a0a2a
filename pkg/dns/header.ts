// Byte offsets and bit masks inside the 12-byte header, for code that patches messages in place.

export const OFF_ID = 0;
export const OFF_FLAGS = 2;
export const OFF_QDCOUNT = 4;
export const OFF_ANCOUNT = 6;
export const OFF_NSCOUNT = 8;
export const OFF_ARCOUNT = 10;

// Masks on the two flag bytes separately (byte 2 and byte 3), which is how in-place patches see them.
export const B2_QR = 0x80;
export const B2_OPCODE = 0x78;
export const B2_AA = 0x04;
export const B2_TC = 0x02;
export const B2_RD = 0x01;
export const B3_RA = 0x80;
export const B3_AD = 0x20;
export const B3_CD = 0x10;
export const B3_RCODE = 0x0f;

export function u16(buf: Uint8Array, off: number): number {
  return (buf[off] << 8) | buf[off + 1];
}

export function setU16(buf: Uint8Array, off: number, v: number): void {
  buf[off] = v >>> 8;
  buf[off + 1] = v & 0xff;
}
