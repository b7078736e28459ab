/** What a seal signs: "hemd.seal.v1" || fileId || u32be(seq) || head (the chain before the seal's line). */
export function sealMessage(fileId: string, seq: number, head: Uint8Array): Uint8Array {
  return positionMessage('hemd.seal.v1', fileId, seq, head)
}

/** What a signed head signs: "hemd.head.v1" || fileId || u32be(seq) || head (the chain after record `seq`). */
export function headMessage(fileId: string, seq: number, head: Uint8Array): Uint8Array {
  return positionMessage('hemd.head.v1', fileId, seq, head)
}

const utf8 = new TextEncoder()

function positionMessage(domain: string, fileId: string, seq: number, head: Uint8Array): Uint8Array {
  const prefix = utf8.encode(domain + fileId)
  const message = new Uint8Array(prefix.length + 4 + head.length)
  message.set(prefix, 0)
  new DataView(message.buffer).setUint32(prefix.length, seq)
  message.set(head, prefix.length + 4)
  return message
}
