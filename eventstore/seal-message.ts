/** What a seal signs: "hemd.seal.v1" || fileId || u32be(seq) || head (the chain before the seal's line). */
export function sealMessage(fileId: string, seq: number, head: Uint8Array): Uint8Array {
  return positionMessage('hemd.seal.v1', fileId, seq, head)
}

/** What a signed head signs: "hemd.head.v1" || fileId || u32be(seq) || head (the chain after record `seq`). */
export function headMessage(fileId: string, seq: number, head: Uint8Array): Uint8Array {
  return positionMessage('hemd.head.v1', fileId, seq, head)
}

function positionMessage(domain: string, fileId: string, seq: number, head: Uint8Array): Uint8Array {
  const seqBytes = Buffer.alloc(4)
  seqBytes.writeUInt32BE(seq)
  return new Uint8Array(Buffer.concat([Buffer.from(domain + fileId, 'utf8'), seqBytes, head]))
}
