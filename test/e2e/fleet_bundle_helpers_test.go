package e2e

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// plantedFleetToken is the value of the Secret plantFleetSecret writes.
const plantedFleetToken = "planted-fleet-token-7c2e"

// plantFleetSecret writes a codefresh-token Secret holding
// plantedFleetToken in c's runtime namespace.
func plantFleetSecret(t *testing.T, c *tc.Cluster) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "codefresh"}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "codefresh-token", Namespace: "codefresh"}, Data: map[string][]byte{"token": []byte(plantedFleetToken)}}
	if _, err := c.Kube.CoreV1().Secrets("codefresh").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// untarredDeep is untarred with every entry that is itself a gzip'd tar
// (a cluster's bundle in a fleet archive) uncompressed too.
func untarredDeep(t *testing.T, path string) string {
	t.Helper()
	var b strings.Builder
	tarEntries(t, path, func(hdr *tar.Header, data []byte) {
		fmt.Fprintf(&b, "%q\n", hdr.Name)
		if !strings.HasSuffix(hdr.Name, ".tar.gz") {
			b.Write(data)
			return
		}
		inner := filepath.Join(t.TempDir(), "inner.tgz")
		if err := os.WriteFile(inner, data, 0o600); err != nil {
			t.Fatal(err)
		}
		b.WriteString(untarred(t, inner))
	})
	return b.String()
}
