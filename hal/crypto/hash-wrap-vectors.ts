// FIPS 180-4/202 digests, RFC 4231 and NIST HMAC-SHA3 examples, RFC 3394 key wrap (hex); see VECTORS.md.
import type { Digest } from './types.js'

export interface DigestVector {
  name: string
  digest: Digest
  message: string
  output: string
}

export const DIGEST_VECTORS: DigestVector[] = [
  {
    name: 'SHA2-256("abc") (FIPS 180-4 example)',
    digest: 'SHA2-256',
    message: '616263',
    output: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  },
  {
    name: 'SHA2-384("abc") (FIPS 180-4 example)',
    digest: 'SHA2-384',
    message: '616263',
    output: 'cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7',
  },
  {
    name: 'SHA2-512("abc") (FIPS 180-4 example)',
    digest: 'SHA2-512',
    message: '616263',
    output:
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd' +
      '454d4423643ce80e2a9ac94fa54ca49f',
  },
  {
    name: 'SHA3-256("abc") (FIPS 202 example)',
    digest: 'SHA3-256',
    message: '616263',
    output: '3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532',
  },
  {
    name: 'SHA3-384("abc") (FIPS 202 example)',
    digest: 'SHA3-384',
    message: '616263',
    output: 'ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25',
  },
  {
    name: 'SHA3-512("abc") (FIPS 202 example)',
    digest: 'SHA3-512',
    message: '616263',
    output:
      'b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e39340' +
      '57340b4cf408d5a56592f8274eec53f0',
  },
]

export interface HmacVector {
  name: string
  key: string
  message: string
  /** The MAC under each digest the source gives. */
  macs: Partial<Record<Digest, string>>
}

export const HMAC_VECTORS: HmacVector[] = [
  {
    name: 'RFC 4231 test case 1',
    key: '0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b',
    message: '4869205468657265',
    macs: {
      'SHA2-256': 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
      'SHA2-384': 'afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6',
      'SHA2-512':
        '87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4' +
        'be9d914eeb61f1702e696c203a126854',
    },
  },
  {
    name: 'RFC 4231 test case 2',
    key: '4a656665',
    message: '7768617420646f2079612077616e7420666f72206e6f7468696e673f',
    macs: {
      'SHA2-256': '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
      'SHA2-384': 'af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649',
      'SHA2-512':
        '164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fd' +
        'caeab1a34d4a6b4b636e070a38bce737',
    },
  },
  {
    name: 'RFC 4231 test case 4',
    key: '0102030405060708090a0b0c0d0e0f10111213141516171819',
    message:
      'cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd' + 'cdcd',
    macs: {
      'SHA2-256': '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b',
      'SHA2-384': '3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e6801dd23c4a7d679ccf8a386c674cffb',
      'SHA2-512':
        'b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063' +
        'a5f19741120c4f2de2adebeb10a298dd',
    },
  },
  {
    name: 'RFC 4231 test case 6',
    key:
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' +
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' +
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    message:
      '54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579' +
      '204669727374',
    macs: {
      'SHA2-256': '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
      'SHA2-384': '4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952',
      'SHA2-512':
        '80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e52' +
        '95e64f73f63f0aec8b915a985d786598',
    },
  },
  {
    name: 'NIST HMAC_SHA3-256 sample 1',
    key: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    message: '53616d706c65206d65737361676520666f72206b65796c656e3c626c6f636b6c656e',
    macs: {
      'SHA3-256': '4fe8e202c4f058e8dddc23d8c34e467343e23555e24fc2f025d598f558f67205',
    },
  },
  {
    name: 'NIST HMAC_SHA3-256 sample 3',
    key:
      '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f' +
      '303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f' +
      '606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f' +
      '909192939495969798999a9b9c9d9e9fa0a1a2a3a4a5a6a7',
    message: '53616d706c65206d65737361676520666f72206b65796c656e3e626c6f636b6c656e',
    macs: {
      'SHA3-256': '9bcf2c238e235c3ce88404e813bd2f3a97185ac6f238c63d6229a00b07974258',
    },
  },
  {
    name: 'NIST HMAC_SHA3-384 sample 1',
    key: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f',
    message: '53616d706c65206d65737361676520666f72206b65796c656e3c626c6f636b6c656e',
    macs: {
      'SHA3-384': 'd588a3c51f3f2d906e8298c1199aa8ff6296218127f6b38a90b6afe2c5617725bc99987f79b22a557b6520db710b7f42',
    },
  },
  {
    name: 'NIST HMAC_SHA3-512 sample 1',
    key:
      '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f' +
      '303132333435363738393a3b3c3d3e3f',
    message: '53616d706c65206d65737361676520666f72206b65796c656e3c626c6f636b6c656e',
    macs: {
      'SHA3-512':
        '4efd629d6c71bf86162658f29943b1c308ce27cdfa6db0d9c3ce81763f9cbce5f7ebe9868031db1a8f8eb7b6b95e5c5e' +
        '3f657a8996c86a2f6527e307f0213196',
    },
  },
]

export interface KeyWrapVector {
  name: string
  kek: string
  /** Absent: RFC 3394's default A6A6A6A6A6A6A6A6. */
  iv?: string
  data: string
  wrapped: string
}

export const KEY_WRAP_VECTORS: KeyWrapVector[] = [
  {
    name: 'RFC 3394 §4.1 128 bits of key data with a 128-bit KEK',
    kek: '000102030405060708090a0b0c0d0e0f',
    data: '00112233445566778899aabbccddeeff',
    wrapped: '1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5',
  },
  {
    name: 'RFC 3394 §4.2 128 bits of key data with a 192-bit KEK',
    kek: '000102030405060708090a0b0c0d0e0f1011121314151617',
    data: '00112233445566778899aabbccddeeff',
    wrapped: '96778b25ae6ca435f92b5b97c050aed2468ab8a17ad84e5d',
  },
  {
    name: 'RFC 3394 §4.3 128 bits of key data with a 256-bit KEK',
    kek: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    data: '00112233445566778899aabbccddeeff',
    wrapped: '64e8c3f9ce0f5ba263e9777905818a2a93c8191e7d6e8ae7',
  },
  {
    name: 'RFC 3394 §4.4 192 bits of key data with a 192-bit KEK',
    kek: '000102030405060708090a0b0c0d0e0f1011121314151617',
    data: '00112233445566778899aabbccddeeff0001020304050607',
    wrapped: '031d33264e15d33268f24ec260743edce1c6c7ddee725a936ba814915c6762d2',
  },
  {
    name: 'RFC 3394 §4.5 192 bits of key data with a 256-bit KEK',
    kek: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    data: '00112233445566778899aabbccddeeff0001020304050607',
    wrapped: 'a8f9bc1612c68b3ff6e6f4fbe30e71e4769c8b80a32cb8958cd5d17d6b254da1',
  },
  {
    name: 'RFC 3394 §4.6 256 bits of key data with a 256-bit KEK',
    kek: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    data: '00112233445566778899aabbccddeeff000102030405060708090a0b0c0d0e0f',
    wrapped: '28c9f404c4b810f4cbccb35cfb87f8263f5786e2d80ed326cbc7f0e71a99f43bfb988b9b7a02dd21',
  },
  {
    name: 'Key wrap with an 8-byte IV (derived: RFC 3394 §4.1 with IV 0102030405060708)',
    kek: '000102030405060708090a0b0c0d0e0f',
    iv: '0102030405060708',
    data: '00112233445566778899aabbccddeeff',
    wrapped: '1f0167d51c8f6e4eb1f0286f52cf9cf97d904baf9ddda8a4',
  },
]

/** SP 800-38F KW-AD-AES128 COUNT = 1 of CAVS 17.4: NIST's expected answer is FAIL. */
export const KEY_UNWRAP_FAIL_VECTOR = {
  name: 'SP 800-38F KW-AD AES-128 COUNT 1 (FAIL)',
  kek: '5d4899ee66beff1bda1fc717a1ad4c50',
  wrapped: 'bb7fd0bce778bd775e4e88d904d26a7134364c53a6c493a0',
}
