// Known-answer vectors, in hex. Where each comes from is in VECTORS.md; the few not taken
// from a standard are marked "derived" there and here.
import type { Curve } from './types.js'

/** SP 800-38A F.1/F.2: the same four blocks are encrypted under every key. */
export const SP800_38A_PLAINTEXT =
  '6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51' +
  '30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710'

export const SP800_38A_IV = '000102030405060708090a0b0c0d0e0f'

export interface BlockVector {
  /** Section names of the encrypt and decrypt vectors. */
  encrypt: string
  decrypt: string
  key: string
  ciphertext: string
}

export const ECB_VECTORS: BlockVector[] = [
  {
    encrypt: 'SP 800-38A F.1.1 ECB-AES128.Encrypt',
    decrypt: 'SP 800-38A F.1.2 ECB-AES128.Decrypt',
    key: '2b7e151628aed2a6abf7158809cf4f3c',
    ciphertext:
      '3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf' +
      '43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4',
  },
  {
    encrypt: 'SP 800-38A F.1.3 ECB-AES192.Encrypt',
    decrypt: 'SP 800-38A F.1.4 ECB-AES192.Decrypt',
    key: '8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b',
    ciphertext:
      'bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef' +
      'ef7afd2270e2e60adce0ba2face6444e9a4b41ba738d6c72fb16691603c18e0e',
  },
  {
    encrypt: 'SP 800-38A F.1.5 ECB-AES256.Encrypt',
    decrypt: 'SP 800-38A F.1.6 ECB-AES256.Decrypt',
    key: '603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4',
    ciphertext:
      'f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870' +
      'b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7',
  },
]

export interface CbcVector extends BlockVector {
  /**
   * Derived: the PKCS#7 block the engines append, AES_K(C4 xor 10^16). SP 800-38A encrypts
   * without padding, so its ciphertext is the first 64 bytes of ours.
   */
  paddingBlock: string
}

export const CBC_VECTORS: CbcVector[] = [
  {
    encrypt: 'SP 800-38A F.2.1 CBC-AES128.Encrypt',
    decrypt: 'SP 800-38A F.2.2 CBC-AES128.Decrypt',
    key: '2b7e151628aed2a6abf7158809cf4f3c',
    ciphertext:
      '7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2' +
      '73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7',
    paddingBlock: '8cb82807230e1321d3fae00d18cc2012',
  },
  {
    encrypt: 'SP 800-38A F.2.3 CBC-AES192.Encrypt',
    decrypt: 'SP 800-38A F.2.4 CBC-AES192.Decrypt',
    key: '8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b',
    ciphertext:
      '4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a' +
      '571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd',
    paddingBlock: '612ccd79224b350935d45dd6a98f8176',
  },
  {
    encrypt: 'SP 800-38A F.2.5 CBC-AES256.Encrypt',
    decrypt: 'SP 800-38A F.2.6 CBC-AES256.Decrypt',
    key: '603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4',
    ciphertext:
      'f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d' +
      '39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b',
    paddingBlock: '3f461796d6b0d6b2e0c2a72b4d80e644',
  },
]

export interface GcmVector {
  name: string
  key: string
  iv: string
  plaintext: string
  aad: string
  ciphertext: string
  tag: string
}

const GCM_KEY_A = 'feffe9928665731c6d6a8f9467308308'
const GCM_PLAINTEXT =
  'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72' +
  '1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255'
// Test cases 4, 6, 10, 12, 16 and 18 drop the last 4 bytes and add this aad.
const GCM_PLAINTEXT_60 = GCM_PLAINTEXT.slice(0, 120)
const GCM_AAD = 'feedfacedeadbeeffeedfacedeadbeefabaddad2'
const GCM_IV_96 = 'cafebabefacedbaddecaf888'
const GCM_IV_480 =
  '9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728' +
  'c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b'
const ZERO_IV = '000000000000000000000000'

export const GCM_VECTORS: GcmVector[] = [
  {
    name: 'GCM test case 1 (AES-128, empty)',
    key: '00000000000000000000000000000000',
    iv: ZERO_IV,
    plaintext: '',
    aad: '',
    ciphertext: '',
    tag: '58e2fccefa7e3061367f1d57a4e7455a',
  },
  {
    name: 'GCM test case 2 (AES-128)',
    key: '00000000000000000000000000000000',
    iv: ZERO_IV,
    plaintext: '00000000000000000000000000000000',
    aad: '',
    ciphertext: '0388dace60b6a392f328c2b971b2fe78',
    tag: 'ab6e47d42cec13bdf53a67b21257bddf',
  },
  {
    name: 'GCM test case 3 (AES-128)',
    key: GCM_KEY_A,
    iv: GCM_IV_96,
    plaintext: GCM_PLAINTEXT,
    aad: '',
    ciphertext:
      '42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e' +
      '21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985',
    tag: '4d5c2af327cd64a62cf35abd2ba6fab4',
  },
  {
    name: 'GCM test case 4 (AES-128, aad)',
    key: GCM_KEY_A,
    iv: GCM_IV_96,
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      '42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e' +
      '21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091',
    tag: '5bc94fbc3221a5db94fae95ae7121a47',
  },
  {
    name: 'GCM test case 6 (AES-128, aad, 60-byte IV)',
    key: GCM_KEY_A,
    iv: GCM_IV_480,
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      '8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca7' +
      '01e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5',
    tag: '619cc5aefffe0bfa462af43c1699d050',
  },
  {
    name: 'GCM test case 7 (AES-192, empty)',
    key: '000000000000000000000000000000000000000000000000',
    iv: ZERO_IV,
    plaintext: '',
    aad: '',
    ciphertext: '',
    tag: 'cd33b28ac773f74ba00ed1f312572435',
  },
  {
    name: 'GCM test case 8 (AES-192)',
    key: '000000000000000000000000000000000000000000000000',
    iv: ZERO_IV,
    plaintext: '00000000000000000000000000000000',
    aad: '',
    ciphertext: '98e7247c07f0fe411c267e4384b0f600',
    tag: '2ff58d80033927ab8ef4d4587514f0fb',
  },
  {
    name: 'GCM test case 10 (AES-192, aad)',
    key: GCM_KEY_A + 'feffe9928665731c',
    iv: GCM_IV_96,
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      '3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c' +
      '7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710',
    tag: '2519498e80f1478f37ba55bd6d27618c',
  },
  {
    name: 'GCM test case 12 (AES-192, aad, 60-byte IV)',
    key: GCM_KEY_A + 'feffe9928665731c',
    iv: GCM_IV_480,
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      'd27e88681ce3243c4830165a8fdcf9ff1de9a1d8e6b447ef6ef7b79828666e45' +
      '81e79012af34ddd9e2f037589b292db3e67c036745fa22e7e9b7373b',
    tag: 'dcf566ff291c25bbb8568fc3d376a6d9',
  },
  {
    name: 'GCM test case 13 (AES-256, empty)',
    key: '0000000000000000000000000000000000000000000000000000000000000000',
    iv: ZERO_IV,
    plaintext: '',
    aad: '',
    ciphertext: '',
    tag: '530f8afbc74536b9a963b4f1c4cb738b',
  },
  {
    name: 'GCM test case 14 (AES-256)',
    key: '0000000000000000000000000000000000000000000000000000000000000000',
    iv: ZERO_IV,
    plaintext: '00000000000000000000000000000000',
    aad: '',
    ciphertext: 'cea7403d4d606b6e074ec5d3baf39d18',
    tag: 'd0d1c8a799996bf0265b98b5d48ab919',
  },
  {
    name: 'GCM test case 15 (AES-256)',
    key: GCM_KEY_A + GCM_KEY_A,
    iv: GCM_IV_96,
    plaintext: GCM_PLAINTEXT,
    aad: '',
    ciphertext:
      '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa' +
      '8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad',
    tag: 'b094dac5d93471bdec1a502270e3cc6c',
  },
  {
    name: 'GCM test case 16 (AES-256, aad)',
    key: GCM_KEY_A + GCM_KEY_A,
    iv: GCM_IV_96,
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa' +
      '8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662',
    tag: '76fc6ece0f4e1768cddf8853bb2d551b',
  },
  {
    name: 'GCM test case 18 (AES-256, aad, 60-byte IV)',
    key: GCM_KEY_A + GCM_KEY_A,
    iv: GCM_IV_480,
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      '5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf4' +
      '0fc0c3b780f244452da3ebf1c5d82cdea2418997200ef82e44ae7e3f',
    tag: 'a44a8266ee1c8eb0c8b5d4cf5ae9f19a',
  },
  {
    name: 'GCM derived 16-byte IV (AES-128, aad)',
    key: GCM_KEY_A,
    iv: GCM_IV_96 + 'feedface',
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      '710b5746678b6ba050b7b313b4eb3eb5b4b787bc37adf97a283cf269efb1745f' +
      '33f559ac93afcc71c1527aca31492c6b1a33a3ce34872f7e05f793aa',
    tag: '8632a7ac1974d9378bc3d3ac53a2a1ab',
  },
  {
    name: 'GCM derived 16-byte IV (AES-256, aad)',
    key: GCM_KEY_A + GCM_KEY_A,
    iv: GCM_IV_96 + 'feedface',
    plaintext: GCM_PLAINTEXT_60,
    aad: GCM_AAD,
    ciphertext:
      '3dabe8c2c442b078986cd191bd84ec31ee311189a8ad97ab7964cb95f3b90dc1' +
      '3164021ff694951f66f88dbfc72d41e3469c881a08e02d29b37cfeb3',
    tag: '7f69084b3da90040aba0ba1012f8efaf',
  },
]

export interface DhVector {
  name: string
  curve: Curve
  /** Both parties' private keys, their public keys (SEC1 uncompressed for the SEC curves). */
  alicePrivate: string
  alicePublic: string
  bobPrivate: string
  bobPublic: string
  shared: string
}

export const DH_VECTORS: DhVector[] = [
  {
    name: 'RFC 7748 §6.1 X25519',
    curve: 'CURVE25519',
    alicePrivate: '77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a',
    alicePublic: '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a',
    bobPrivate: '5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb',
    bobPublic: 'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f',
    shared: '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742',
  },
  {
    name: 'RFC 7748 §6.2 X448',
    curve: 'CURVE448',
    alicePrivate:
      '9a8f4925d1519f5775cf46b04b5800d4ee9ee8bae8bc5565d498c28d' +
      'd9c9baf574a9419744897391006382a6f127ab1d9ac2d8c0a598726b',
    alicePublic:
      '9b08f7cc31b7e3e67d22d5aea121074a273bd2b83de09c63faa73d2c' +
      '22c5d9bbc836647241d953d40c5b12da88120d53177f80e532c41fa0',
    bobPrivate:
      '1c306a7ac2a0e2e0990b294470cba339e6453772b075811d8fad0d1d' +
      '6927c120bb5ee8972b0d3e21374c9c921b09d1b0366f10b65173992d',
    bobPublic:
      '3eb7a829b0cd20f5bcfc0b599b6feccf6da4627107bdb0d4f345b430' +
      '27d8b972fc3e34fb4232a13ca706dcb57aec3dae07bdc1c67bf33609',
    shared:
      '07fff4181ac6cc95ec1c16a94a0f74d12da232ce40a77552281d282b' +
      'b60c0b56fd2464c335543936521c24403085d59a449a5037514a879d',
  },
  {
    name: 'RFC 5903 §8.1 ECDH P-256',
    curve: 'SECP256R1',
    alicePrivate: 'c88f01f510d9ac3f70a292daa2316de544e9aab8afe84049c62a9c57862d1433',
    alicePublic:
      '04dad0b65394221cf9b051e1feca5787d098dfe637fc90b9ef945d0c3772581180' +
      '5271a0461cdb8252d61f1c456fa3e59ab1f45b33accf5f58389e0577b8990bb3',
    bobPrivate: 'c6ef9c5d78ae012a011164acb397ce2088685d8f06bf9be0b283ab46476bee53',
    bobPublic:
      '04d12dfb5289c8d4f81208b70270398c342296970a0bccb74c736fc7554494bf63' +
      '56fbf3ca366cc23e8157854c13c58d6aac23f046ada30f8353e74f33039872ab',
    shared: 'd6840f6b42f6edafd13116e0e12565202fef8e9ece7dce03812464d04b9442de',
  },
  {
    name: 'RFC 5903 §8.2 ECDH P-384',
    curve: 'SECP384R1',
    alicePrivate: '099f3c7034d4a2c699884d73a375a67f7624ef7c6b3c0f160647b67414dce655e35b538041e649ee3faef896783ab194',
    alicePublic:
      '04667842d7d180ac2cde6f74f37551f55755c7645c20ef73e31634fe72b4c55ee6de3ac808acb4bdb4c88732aee95f41aa' +
      '9482ed1fc0eeb9cafc4984625ccfc23f65032149e0e144ada024181535a0f38eeb9fcff3c2c947dae69b4c634573a81c',
    bobPrivate: '41cb0779b4bdb85d47846725fbec3c9430fab46cc8dc5060855cc9bda0aa2942e0308312916b8ed2960e4bd55a7448fc',
    bobPublic:
      '04e558dbef53eecde3d3fccfc1aea08a89a987475d12fd950d83cfa41732bc509d0d1ac43a0336def96fda41d0774a3571' +
      'dcfbec7aacf3196472169e838430367f66eebe3c6e70c416dd5f0c68759dd1fff83fa40142209dff5eaad96db9e6386c',
    shared: '11187331c279962d93d604243fd592cb9d0a926f422e47187521287e7156c5c4d603135569b9e9d09cf5d4a270f59746',
  },
  {
    name: 'RFC 5903 §8.3 ECDH P-521',
    curve: 'SECP521R1',
    alicePrivate:
      '0037ade9319a89f4dabdb3ef411aaccca5123c61acab57b5393dce47608172a095aa85a30fe1c2952c6771d937ba97' +
      '77f5957b2639bab072462f68c27a57382d4a52',
    alicePublic:
      '040015417e84dbf28c0ad3c278713349dc7df153c897a1891bd98bab4357c9ecbee1e3bf42e00b8e380aeae57c2d10' +
      '7564941885942af5a7f4601723c4195d176ced3e017cae20b6641d2eeb695786d8c946146239d099e18e1d5a514c73' +
      '9d7cb4a10ad8a788015ac405d7799dc75e7b7d5b6cf2261a6a7f1507438bf01beb6ca3926f9582',
    bobPrivate:
      '0145ba99a847af43793fdd0e872e7cdfa16be30fdc780f97bccc3f078380201e9c677d600b343757a3bdbf2a3163e4' +
      'c2f869cca7458aa4a4effc311f5cb151685eb9',
    bobPublic:
      '0400d0b3975ac4b799f5bea16d5e13e9af971d5e9b984c9f39728b5e5739735a219b97c356436adc6e95bb0352f6be' +
      '64a6c2912d4ef2d0433ced2b6171640012d9460f015c68226383956e3bd066e797b623c27ce0eac2f551a10c2c724d' +
      '9852077b87220b6536c5c408a1d2aebb8e86d678ae49cb57091f4732296579ab44fcd17f0fc56a',
    shared:
      '01144c7d79ae6956bc8edb8e7c787c4521cb086fa64407f97894e5e6b2d79b04d1427e73ca4baa240a34786859810c' +
      '06b3c715a3a8cc3151f2bee417996d19f3ddea',
  },
  {
    name: 'ECDH secp256k1 (derived)',
    curve: 'SECP256K1',
    alicePrivate: '6815247b10daf527b4fe21599f7a4f91659c186d4a5d4f6d923f91d1e4658d4b',
    alicePublic:
      '0420f72a96cd510311d935cae83249ad5c0ae80528126c352e6720c0f37e7b6315' +
      'ed1289e7318408185aad51a08538d1f770f60b096f92333a81dc31ad5b908e4f',
    bobPrivate: '926243defbf655a399f45af42f843dce015cf1f924eb9f90d821fa4efc125759',
    bobPublic:
      '0443372d03161117ab7ca45fb8d319ebb09dd89985ced85bc15090bafd02ec4b9f' +
      'b8eb10e801ebd8143faa60945adb2cab4d342be79a45273fa06b1936221678ab',
    shared: '1995636d3a3006f2d6f55ea28c381edb1dd66254ae6d71faf43157d4e1dd8f3e',
  },
]

export interface HkdfVector {
  name: string
  ikm: string
  /** Absent: RFC 5869 test case 3's "salt = (0 octets)", i.e. the default salt. */
  salt?: string
  info: string
  okm: string
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => (from + i).toString(16).padStart(2, '0')).join('')

export const HKDF_VECTORS: HkdfVector[] = [
  {
    name: 'RFC 5869 A.1 HKDF-SHA256 test case 1',
    ikm: '0b'.repeat(22),
    salt: range(0x00, 0x0c),
    info: range(0xf0, 0xf9),
    okm: '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf' + '34007208d5b887185865',
  },
  {
    name: 'RFC 5869 A.2 HKDF-SHA256 test case 2',
    ikm: range(0x00, 0x4f),
    salt: range(0x60, 0xaf),
    info: range(0xb0, 0xff),
    okm:
      'b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c' +
      '59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71' +
      'cc30c58179ec3e87c14c01d5c1f3434f1d87',
  },
  {
    name: 'RFC 5869 A.3 HKDF-SHA256 test case 3',
    ikm: '0b'.repeat(22),
    info: '',
    okm: '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d' + '9d201395faa4b61a96c8',
  },
]
