// The development trusted backend (deploy/keys/backend-dev.pem) whose check-in replies sim devices
// obey: its raw Ed25519 public key. A copy, because the HAL must not read deploy/ at run time; a
// test keeps the two equal.
export const DEV_BACKEND_PUBLIC_KEY = 'JfB6XLOJem0v9bnWHFw3cN1aOkFUwzsPZJIuB4CYQx8='
