package probe

import (
	"crypto/x509"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcert"
)

// FuzzAppendPEM parses arbitrary --ca-file contents: never a panic, and it
// reports a certificate exactly when the pool gained one.
func FuzzAppendPEM(f *testing.F) {
	good := testcert.NewCA(f, "fuzz CA").PEM
	f.Add(good)
	f.Add(append([]byte("junk\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), good...))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		pool := x509.NewCertPool()
		ok := appendPEM(pool, data)
		if empty := pool.Equal(x509.NewCertPool()); ok == empty {
			t.Fatalf("appendPEM = %v, pool empty = %v", ok, empty)
		}
	})
}
