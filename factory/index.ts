// The public face of factory/: what other folders may use of it.
export { AttestationRejectedError, signAttestation, type FactoryCa } from './sign-attestation.js'
