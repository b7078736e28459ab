// RFC 8032 EdDSA and NIST CAVP ECDSA vectors, in hex; sources in VECTORS.md.
import type { EcdsaDigest, EdAlgorithm, SecCurve } from './types.js'

export interface EddsaVector {
  name: string
  algorithm: EdAlgorithm
  seed: string
  publicKey: string
  message: string
  context: string
  signature: string
}

export const EDDSA_VECTORS: EddsaVector[] = [
  {
    name: 'RFC 8032 §7.1 Ed25519 test 1',
    algorithm: 'Ed25519',
    seed: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    context: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46b' +
      'd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'RFC 8032 §7.1 Ed25519 test 2',
    algorithm: 'Ed25519',
    seed: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    context: '',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c' +
      '387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    name: 'RFC 8032 §7.1 Ed25519 test 3',
    algorithm: 'Ed25519',
    seed: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    publicKey: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    context: '',
    signature:
      '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc659' +
      '4a7c15e9716ed28dc027beceea1ec40a',
  },
  {
    name: 'RFC 8032 §7.2 Ed25519ctx test 1, context "foo"',
    algorithm: 'Ed25519ctx',
    seed: '0305334e381af78f141cb666f6199f57bc3495335a256a95bd2a55bf546663f6',
    publicKey: 'dfc9425e4f968f7f0c29f0259cf5f9aed6851c2bb4ad8bfb860cfee0ab248292',
    message: 'f726936d19c800494e3fdaff20b276a8',
    context: '666f6f',
    signature:
      '55a4cc2f70a54e04288c5f4cd1e45a7bb520b36292911876cada7323198dd87a8b36950b95130022907a7fb7c4e9b2d5' +
      'f6cca685a587b4b21f4b888e4e7edb0d',
  },
  {
    name: 'RFC 8032 §7.3 Ed25519ph test 1',
    algorithm: 'Ed25519ph',
    seed: '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
    publicKey: 'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
    message: '616263',
    context: '',
    signature:
      '98a70222f0b8121aa9d30f813d683f809e462b469c7ff87639499bb94e6dae4131f85042463c2a355a2003d062adf5aa' +
      'a10b8c61e636062aaad11c2a26083406',
  },
  {
    // Derived (VECTORS.md): RFC 8032 has no Ed25519ph vector with a context.
    name: 'Ed25519ph with context "foo" (derived from RFC 8032 §7.3 test 1)',
    algorithm: 'Ed25519ph',
    seed: '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
    publicKey: 'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
    message: '616263',
    context: '666f6f',
    signature:
      'e039702b4c2595a6a541ac8509236e2990474795330c9b34a75f58a660129e08fd736943fb1943a55720b9e0957b1ed6' +
      '734816619f1388f43f73e6e3baa81c0e',
  },
  {
    name: 'RFC 8032 §7.4 Ed448 test 1',
    algorithm: 'Ed448',
    seed:
      '6c82a562cb808d10d632be89c8513ebf6c929f34ddfa8c9f63c9960ef6e348a3528c8a3fcc2f044e39a3fc5b94492f8f' +
      '032e7549a20098f95b',
    publicKey:
      '5fd7449b59b461fd2ce787ec616ad46a1da1342485a70e1f8a0ea75d80e96778edf124769b46c7061bd6783df1e50f6c' +
      'd1fa1abeafe8256180',
    message: '',
    context: '',
    signature:
      '533a37f6bbe457251f023c0d88f976ae2dfb504a843e34d2074fd823d41a591f2b233f034f628281f2fd7a22ddd47d78' +
      '28c59bd0a21bfd3980ff0d2028d4b18a9df63e006c5d1c2d345b925d8dc00b4104852db99ac5c7cdda8530a113a0f4db' +
      'b61149f05a7363268c71d95808ff2e652600',
  },
  {
    name: 'RFC 8032 §7.4 Ed448 test 3, context "foo"',
    algorithm: 'Ed448',
    seed:
      'c4eab05d357007c632f3dbb48489924d552b08fe0c353a0d4a1f00acda2c463afbea67c5e8d2877c5e3bc397a659949e' +
      'f8021e954e0a12274e',
    publicKey:
      '43ba28f430cdff456ae531545f7ecd0ac834a55d9358c0372bfa0c6c6798c0866aea01eb00742802b8438ea4cb82169c' +
      '235160627b4c3a9480',
    message: '03',
    context: '666f6f',
    signature:
      'd4f8f6131770dd46f40867d6fd5d5055de43541f8c5e35abbcd001b32a89f7d2151f7647f11d8ca2ae279fb842d60721' +
      '7fce6e042f6815ea000c85741de5c8da1144a6a1aba7f96de42505d7a7298524fda538fccbbb754f578c1cad10d54d0d' +
      '5428407e85dcbc98a49155c13764e66c3c00',
  },
  {
    name: 'RFC 8032 §7.5 Ed448ph test 1',
    algorithm: 'Ed448ph',
    seed:
      '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42ef7822e0d5104127dc05d6dbefde69e3' +
      'ab2cec7c867c6e2c49',
    publicKey:
      '259b71c19f83ef77a7abd26524cbdb3161b590a48f7d17de3ee0ba9c52beb743c09428a131d6b1b57303d90d8132c276' +
      'd5ed3d5d01c0f53880',
    message: '616263',
    context: '',
    signature:
      '822f6901f7480f3d5f562c592994d9693602875614483256505600bbc281ae381f54d6bce2ea911574932f52a4e6cadd' +
      '78769375ec3ffd1b801a0d9b3f4030cd433964b6457ea39476511214f97469b57dd32dbc560a9a94d00bff07620464a3' +
      'ad203df7dc7ce360c3cd3696d9d9fab90f00',
  },
  {
    name: 'RFC 8032 §7.5 Ed448ph test 2, context "foo"',
    algorithm: 'Ed448ph',
    seed:
      '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42ef7822e0d5104127dc05d6dbefde69e3' +
      'ab2cec7c867c6e2c49',
    publicKey:
      '259b71c19f83ef77a7abd26524cbdb3161b590a48f7d17de3ee0ba9c52beb743c09428a131d6b1b57303d90d8132c276' +
      'd5ed3d5d01c0f53880',
    message: '616263',
    context: '666f6f',
    signature:
      'c32299d46ec8ff02b54540982814dce9a05812f81962b649d528095916a2aa481065b1580423ef927ecf0af5888f90da' +
      '0f6a9a85ad5dc3f280d91224ba9911a3653d00e484e2ce232521481c8658df304bb7745a73514cdb9bf3e15784ab7128' +
      '4f8d0704a608c54a6b62d97beb511d132100',
  },
]

export interface EcdsaVector {
  name: string
  curve: SecCurve
  digest: EcdsaDigest
  /** The private key, where the source gives it (SigGen); SigVer vectors have only the public point. */
  privateKey?: string
  /** SEC1 uncompressed. */
  publicKey: string
  message: string
  r: string
  s: string
  /** SigVer's verdict: false for the vectors NIST altered (R, S or Q changed). */
  valid: boolean
}

export const ECDSA_VECTORS: EcdsaVector[] = [
  {
    name: 'FIPS 186-3 SigVer [P-256,SHA-256] (valid)',
    curve: 'SECP256R1',
    digest: 'SHA2-256',
    publicKey:
      '04e424dc61d4bb3cb7ef4344a7f8957a0c5134e16f7a67c074f82e6e12f49abf3c970eed7aa2bc48651545949de1ddda' +
      'f0127e5965ac85d1243d6f60e7dfaee927',
    message:
      'e1130af6a38ccb412a9c8d13e15dbfc9e69a16385af3c3f1e5da954fd5e7c45fd75e2b8c36699228e92840c0562fbf37' +
      '72f07e17f1add56588dd45f7450e1217ad239922dd9c32695dc71ff2424ca0dec1321aa47064a044b7fe3c2b97d03ce4' +
      '70a592304c5ef21eed9f93da56bb232d1eeb0035f9bf0dfafdcc4606272b20a3',
    r: 'bf96b99aa49c705c910be33142017c642ff540c76349b9dab72f981fd9347f4f',
    s: '17c55095819089c2e03b9cd415abdf12444e323075d98f31920b9e0f57ec871c',
    valid: true,
  },
  {
    name: 'FIPS 186-3 SigVer [P-256,SHA-256] (S changed)',
    curve: 'SECP256R1',
    digest: 'SHA2-256',
    publicKey:
      '0487f8f2b218f49845f6f10eec3877136269f5c1a54736dbdf69f89940cad41555e15f369036f49842fac7a86c8a2b05' +
      '57609776814448b8f5e84aa9f4395205e9',
    message:
      'e4796db5f785f207aa30d311693b3702821dff1168fd2e04c0836825aefd850d9aa60326d88cde1a23c7745351392ca2' +
      '288d632c264f197d05cd424a30336c19fd09bb229654f0222fcb881a4b35c290a093ac159ce13409111ff0358411133c' +
      '24f5b8e2090d6db6558afc36f06ca1f6ef779785adba68db27a409859fc4c4a0',
    r: 'd19ff48b324915576416097d2544f7cbdf8768b1454ad20e0baac50e211f23b0',
    s: 'a3e81e59311cdfff2d4784949f7a2cb50ba6c3a91fa54710568e61aca3e847c6',
    valid: false,
  },
  {
    name: 'FIPS 186-3 SigVer [P-384,SHA-384] (valid)',
    curve: 'SECP384R1',
    digest: 'SHA2-384',
    publicKey:
      '04cb908b1fd516a57b8ee1e14383579b33cb154fece20c5035e2b3765195d1951d75bd78fb23e00fef37d7d064fd9af1' +
      '44cd99c46b5857401ddcff2cf7cf822121faf1cbad9a011bed8c551f6f59b2c360f79bfbe32adbcaa09583bdfdf7c374' +
      'bb',
    message:
      '9dd789ea25c04745d57a381f22de01fb0abd3c72dbdefd44e43213c189583eef85ba662044da3de2dd8670e632515448' +
      '0155bbeebb702c75781ac32e13941860cb576fe37a05b757da5b5b418f6dd7c30b042e40f4395a342ae4dce05634c336' +
      '25e2bc524345481f7e253d9551266823771b251705b4a85166022a37ac28f1bd',
    r: '33f64fb65cd6a8918523f23aea0bbcf56bba1daca7aff817c8791dc92428d605ac629de2e847d43cee55ba9e4a0e83ba',
    s: '4428bb478a43ac73ecd6de51ddf7c28ff3c2441625a081714337dd44fea8011bae71959a10947b6ea33f77e128d3c6ae',
    valid: true,
  },
  {
    name: 'FIPS 186-3 SigVer [P-384,SHA-384] (R changed)',
    curve: 'SECP384R1',
    digest: 'SHA2-384',
    publicKey:
      '041f94eb6f439a3806f8054dd79124847d138d14d4f52bac93b042f2ee3cdb7dc9e09925c2a5fee70d4ce08c61e3b191' +
      '601c4fd111f6e33303069421deb31e873126be35eeb436fe2034856a3ed1e897f26c846ee3233cd16240989a7990c19d' +
      '8c',
    message:
      '4132833a525aecc8a1a6dea9f4075f44feefce810c4668423b38580417f7bdca5b21061a45eaa3cbe2a7035ed189523a' +
      'f8002d65c2899e65735e4d93a16503c145059f365c32b3acc6270e29a09131299181c98b3c76769a18faf21f6b4a8f27' +
      '1e6bf908e238afe8002e27c63417bda758f846e1e3b8e62d7f05ebd98f1f9154',
    r: '3c15c3cedf2a6fbff2f906e661f5932f2542f0ce68e2a8182e5ed3858f33bd3c5666f17ac39e52cb004b80a0d4ba73cd',
    s: '9de879083cbb0a97973c94f1963d84f581e4c6541b7d000f9850deb25154b23a37dd72267bdd72665cc7027f88164fab',
    valid: false,
  },
  {
    name: 'FIPS 186-3 SigVer [P-521,SHA-512] (valid)',
    curve: 'SECP521R1',
    digest: 'SHA2-512',
    publicKey:
      '040153eb2be05438e5c1effb41b413efc2843b927cbf19f0bc9cc14b693eee26394a0d8880dc946a06656bcd09871544' +
      'a5f15c7a1fa68e00cdc728c7cfb9c4480348670143ae8eecbce8fcf6b16e6159b2970a9ceb32c17c1d878c09317311b7' +
      '519ed5ece3374e7929f338ddd0ec0522d81f2fa4fa47033ef0c0872dc049bb89233eef9bc1',
    message:
      'f69417bead3b1e208c4c99236bf84474a00de7f0b9dd23f991b6b60ef0fb3c62073a5a7abb1ef69dbbd8cf61e64200ca' +
      '086dfd645b641e8d02397782da92d3542fbddf6349ac0b48b1b1d69fe462d1bb492f34dd40d137163843ac11bd099df7' +
      '19212c160cbebcb2ab6f3525e64846c887e1b52b52eced9447a3d31938593a87',
    r:
      '00dd633947446d0d51a96a0173c01125858abb2bece670af922a92dedcec067136c1fa92e5fa73d7116ac9c1a42b9cb6' +
      '42e4ac19310b049e48c53011ffc6e7461c36',
    s:
      '00efbdc6a414bb8d663bb5cdb7c586bccfe7589049076f98cee82cdb5d203fddb2e0ffb77954959dfa5ed0de850e42a8' +
      '6f5a63c5a6592e9b9b8bd1b40557b9cd0cc0',
    valid: true,
  },
  {
    name: 'FIPS 186-3 SigVer [P-521,SHA-512] (R changed)',
    curve: 'SECP521R1',
    digest: 'SHA2-512',
    publicKey:
      '04012a593f568ca2571e543e00066ecd3a3272a57e1c94fe311e5df96afc1b792e5862720fc730e62052bbf3e118d3a0' +
      '78f0144fc00c9d8baaaa8298ff63981d09d911017cea5ae75a74100ee03cdf2468393eef55ddabfe8fd5718e88903eb9' +
      'fd241e8cbf9c68ae16f4a1db26c6352afcb1894a9812da6d32cb862021c86cd8aa483afc26',
    message:
      'a0732a605c785a2cc9a3ff84cbaf29175040f7a0cc35f4ea8eeff267c1f92f06f46d3b35437195185d322cbd775fd247' +
      '41e86ee9236ba5b374a2ac29803554d715fa4656ac31778f103f88d68434dd2013d4c4e9848a11198b390c3d600d7128' +
      '93513e179cd3d31fb06c6e2a1016fb96ffd970b1489e36a556ab3b537eb29dff',
    r:
      '01aac7692baf3aa94a97907307010895efc1337cdd686f9ef2fd8404796a74701e55b03ceef41f3e6f50a0eeea11869c' +
      '4789a3e8ab5b77324961d081e1a3377ccc91',
    s:
      '0009c1e7d93d056b5a97759458d58c49134a45071854b8a6b8272f9fe7e78e1f3d8097e8a6e731f7ab4851eb26d5aa4f' +
      'dadba6296dc7af835fe3d1b6dba4b031d5f3',
    valid: false,
  },
  {
    name: 'FIPS 186-3 SigVer [P-256,SHA-512] (valid)',
    curve: 'SECP256R1',
    digest: 'SHA2-512',
    publicKey:
      '049cb0cf69303dafc761d4e4687b4ecf039e6d34ab964af80810d8d558a4a8d6f72d51233a1788920a86ee08a1962c79' +
      'efa317fb7879e297dad2146db995fa1c78',
    message:
      '6e2932153301a4eef680e6428929adae988c108d668a31ff55d0489947d75ff81a46bf89e84d6401f023be6e87688fbc' +
      'd784d785ca846735524acb52d00452c84040a479e7cc330936441d93bbe722a9432a6e1db112b5c9403b10272cb1347f' +
      'd619d463f7a9d223ad76fde06d8a6883500fb843235abff98e241bdfb5538c3e',
    r: '4b9f91e4285287261a1d1c923cf619cd52c175cfe7f1be60a5258c610348ba3d',
    s: '28c45f901d71c41b298638ec0d6a85d7fcb0c33bbfec5a9c810846b639289a84',
    valid: true,
  },
  {
    name: 'FIPS 186-3 SigVer [P-521,SHA-256] (valid)',
    curve: 'SECP521R1',
    digest: 'SHA2-256',
    publicKey:
      '0400397714abcc503eaa0c18abd1fd26586d28ec1b1035d37ac710f2823911ec9afa429b41ea89cec13d5bcae9d6d714' +
      '7794407e409f3b267cf4dd27e8c77e7ccf4d3600a3a4b749d19b84708e42b59e9faa5a99ac0f0a01121655fab87785fc' +
      'a38c8cd4277c8c2c9a0024ff608c3cce954596315dfe0e3b133aeab08bb5389eb2a4f1fb42',
    message:
      '961c9451bbb298e17f503680099244d969a0ff3d0ce6cf15b5bcc73d6edc3e8c8535a18531d885664612cad97da174f1' +
      'daee6aad95220f6e2fd8c734c57747e46db21e169a03dd673df07aff30848e8370c0960d732e74f9b1d8b53847b69d2c' +
      'ad80f346b50e89d7993cb758fc218668c771422f804d3c9162da98cb30821912',
    r:
      '019da96a866db12948e0aec7231f797061f345739d439bdaaba63e4d03e0bb52c3fea2fb593347d983f24a3afa6a77f4' +
      '76e6bb49a5de843b4c4755cddce97b8b909e',
    s:
      '001bb442f428b2ca445a75ad88ed49d965d6659d748d02cebf78faa1ecc187b606f284d11d47791d585dc371c2d91848' +
      'a55ca7b092f06d561efcf64e0de0814e1db4',
    valid: true,
  },
  {
    name: 'secp256k1 SigGen [K-256,SHA-256] (valid)',
    curve: 'SECP256K1',
    digest: 'SHA2-256',
    privateKey: '42202a98374f6dca439c0af88140e41f8eced3062682ec7f9fc8ac9ea83c7cb2',
    publicKey:
      '04131ca4e5811267fa90fc631d6298c2d7a4ecccc45cc60d378e0660b61f82fe8dcf5acf8ed3e0bbf735308cc415604b' +
      'd34ab8f7fc8b4a22741117a7fbc72a7949',
    message:
      '5c868fedb8026979ebd26f1ba07c27eedf4ff6d10443505a96ecaf21ba8c4f0937b3cd23ffdc3dd429d4cd1905fb8dbc' +
      'ceeff1350020e18b58d2ba70887baa3a9b783ad30d3fbf210331cdd7df8d77defa398cdacdfc2e359c7ba4cae46bb744' +
      '01deb417f8b912a1aa966aeeba9c39c7dd22479ae2b30719dca2f2206c5eb4b7',
    r: 'd89f9586070230bb03e625cca18c89bb3117cd472ff6ee2a50809f0e89039309',
    s: '45972842e92e3a41abeea1089d812eb5343ca8f075ac9c66e13f3db287048638',
    valid: true,
  },
]
