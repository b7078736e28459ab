const DOMAIN = 'hemd.seal.v1'

/** What a seal signs: "hemd.seal.v1" || fileId || u32be(seq) || head. */
export function sealMessage(fileId: string, seq: number, head: Uint8Array): Uint8Array {
  const seqBytes = Buffer.alloc(4)
  seqBytes.writeUInt32BE(seq)
  return new Uint8Array(Buffer.concat([Buffer.from(DOMAIN + fileId, 'utf8'), seqBytes, head]))
}
