// ML-KEM (FIPS 203) and ML-DSA (FIPS 204) vectors, in hex. Derived, not ACVP (none was reachable
// here): see VECTORS.md for how each was confirmed. Long outputs are kept as their SHA-256.
import type { MlDsaVariant, MlKemVariant } from './types.js'

/** Every seed counts up from 00 (d‖z = 00…3f), every m from 80 (80…9f). */
export interface MlKemVector {
  variant: MlKemVariant
  seed: string
  m: string
  publicKeySha256: string
  secretKeySha256: string
  cipherTextSha256: string
  sharedSecret: string
  /** The implicit-rejection key: decapsulating the ciphertext with its first bit flipped. */
  rejectionKey: string
}

export const ML_KEM_VECTORS: MlKemVector[] = [
  {
    variant: 'MLKEM512',
    seed:
      '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f' +
      '202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f',
    m: '808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f',
    publicKeySha256: '3ae268dccc5456ac0d0f9b39257dc48fe081383b97c400512d712b739762daee',
    secretKeySha256: '17fb29b8c4baf74fb81eea15ffd583b3e37f5a5b8dcf6db96c72c3b3751d6f17',
    cipherTextSha256: '61bc8493b2a0b32c6a5be3ca58afa3dc64fb059b6298f6f7d61efbcee6f14032',
    sharedSecret: '74a91ec5873cd675a267bb08a2ab43c1746f67923d2b95d5c5616102ca34f28a',
    rejectionKey: 'b2831d752b119a2b555954992c657f8a8e9857f8d0bb23d27cc0ff8158c26287',
  },
  {
    variant: 'MLKEM768',
    seed:
      '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f' +
      '202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f',
    m: '808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f',
    publicKeySha256: '0b7934c83125c788995e2ba6bd761e33046b3e40571be53e023309a29f398cc9',
    secretKeySha256: 'dac268bde6a8dd238e9887117d6b664e7a7a9350ad6b7c08a948e504809572a5',
    cipherTextSha256: '1f16e217ad23771f7f72522c602dcf10cd1e2eea2648e72d29c1255a3949c33e',
    sharedSecret: 'ef91db44b6cd5b2c50f483481a3d6e2a08cc149764fcb8dc568851332da45ed9',
    rejectionKey: '016b585c8abc901fa45387c496d0ed74332aa06501ace2bb65ab9f8458a35bfc',
  },
  {
    variant: 'MLKEM1024',
    seed:
      '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f' +
      '202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f',
    m: '808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f',
    publicKeySha256: 'c7b8fa0aa471d5ae18922d6ccad5b31e1d84f92ae723abfd13747018740a8530',
    secretKeySha256: '3a2a676c5a242ee683cb6097c8f3e64fbef4d90267f9250ec2beab8f99621fad',
    cipherTextSha256: 'ed94c4d368750d7afcae38a6e5a5d351840a8c66c6da49907f6ebfbdd402c2d3',
    sharedSecret: '7d9404fdb9a12fafe778c3cec2c017de229fdb1c8564964830db5541970e8079',
    rejectionKey: 'd35f7dfb8f0945bf574a3b2ae51630bb7766e769b68cb6983bab3e337f4b97dc',
  },
]

/** ξ = 00…1f; signed deterministically (rnd = 0^32, FIPS 204 §3.4). */
export interface MlDsaVector {
  variant: MlDsaVariant
  seed: string
  message: string
  context: string
  publicKeySha256: string
  secretKeySha256: string
  signatureSha256: string
}

export const ML_DSA_VECTORS: MlDsaVector[] = [
  {
    variant: 'MLDSA44',
    seed: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    message: '68656d64204d4c2d445341206b6e6f776e2d616e737765722074657374',
    context: '68656d64',
    publicKeySha256: '9f107644c1084526af3bc8098680b05499a2325a644e388fb4f970e058d19d46',
    secretKeySha256: '04bf6b9f579166a627961dfc5c3bf9717df868db88863856356c4668c8b56b0b',
    signatureSha256: '44e491c82aff93365171de5973e403757404c313457253048bd512575f55bf6f',
  },
  {
    variant: 'MLDSA65',
    seed: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    message: '68656d64204d4c2d445341206b6e6f776e2d616e737765722074657374',
    context: '68656d64',
    publicKeySha256: 'd666806e11cee19a7c989f7445f90dd419cf4d2d51db8c0fdb4c0f0a542238c9',
    secretKeySha256: '9f1e24f47795fe50040384e3d6183988047170fa2d866406b70fe0a3f8216063',
    signatureSha256: '481ef4b68c8a56c0cc8ea4e2b16f0b54ae5a679935ab502762ddb0e0e29e40eb',
  },
  {
    variant: 'MLDSA87',
    seed: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
    message: '68656d64204d4c2d445341206b6e6f776e2d616e737765722074657374',
    context: '68656d64',
    publicKeySha256: '91dc389cfaa01470b7f66eee45a4ae9026d154817c754dfe22298b3fa241ffcd',
    secretKeySha256: '764d3e223ed90c07bc91a0ab6ecd170e5c66ffe39f7039298596039a36005435',
    signatureSha256: 'ddc216aea160cde7711f5c049d6092986ee4a303064c334461a791fe43524bfa',
  },
]
