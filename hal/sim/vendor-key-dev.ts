// The development vendor key (deploy/keys/vendor-dev.pem) that signs `npm run build`'s firmware and
// test images: its raw Ed25519 public key. A copy, because the HAL must not read deploy/ at run
// time; a test keeps the two equal.
export const DEV_VENDOR_PUBLIC_KEY = 'TQkNDUIzsASrD7f3m8iHGU36d3ne7NJiXAUlLUPTii4='
