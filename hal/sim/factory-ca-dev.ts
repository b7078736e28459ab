// The development factory CA (deploy/keys/factory-ca-dev.crt.pem) that sim devices are manufactured to
// trust. A copy, because the HAL must not read deploy/ at run time; a test keeps the two equal.
export const DEV_FACTORY_ROOT_PEM = `-----BEGIN CERTIFICATE-----
MIIBtzCCAVygAwIBAgIBATAKBggqhkjOPQQDAjBAMSMwIQYDVQQDExpIRU0gRGV2
ZWxvcG1lbnQgRmFjdG9yeSBDQTEZMBcGA1UEChMQaGVtZCBkZXZlbG9wbWVudDAg
Fw0yNjAxMDEwMDAwMDBaGA8yMDU2MDEwMTAwMDAwMFowQDEjMCEGA1UEAxMaSEVN
IERldmVsb3BtZW50IEZhY3RvcnkgQ0ExGTAXBgNVBAoTEGhlbWQgZGV2ZWxvcG1l
bnQwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARTFjDdJ5zMfEfiyb/9lelt+mL9
7PgkJT8pMJEZBpgypM5ynBzgUUz/gTnFP3PAF5mCBz2mrYi0zITFqZEqg/eNo0Uw
QzASBgNVHRMBAf8ECDAGAQH/AgEAMA4GA1UdDwEB/wQEAwIBhjAdBgNVHQ4EFgQU
uZv8DcCMkPH5Fstp/6zdXVtsan0wCgYIKoZIzj0EAwIDSQAwRgIhAN2m5C3i2Nt1
xnS87xIzLOIJAlnWF1qZ4E1oJI2mdSysAiEA4DaNgTI0CMk4wyuWJ+xPdyR3TJac
cOVbPlb7FAfmy1k=
-----END CERTIFICATE-----
`
