package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	helmchart "helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// deployed is revision 1 of a gitops-runtime release, as the upgrade tests
// describe it: the chart version, the chart's defaults, the user's values
// and the manifest Helm recorded.
type deployed struct {
	Version  string
	Defaults map[string]any
	Config   map[string]any
	Manifest string
}

// record returns the Secret Helm's own storage driver writes for d as
// revision 1 of release DefaultReleaseName in DefaultNamespace, deployed.
func (d deployed) record(t *testing.T) runtime.Object {
	t.Helper()
	kube := fake.NewClientset()
	drv := driver.NewSecrets(kube.CoreV1().Secrets(DefaultNamespace))
	key := fmt.Sprintf("sh.helm.release.v1.%s.v1", DefaultReleaseName)
	rls := &rspb.Release{Name: DefaultReleaseName, Namespace: DefaultNamespace, Version: 1, Manifest: d.Manifest, Config: d.Config,
		Info:  &rspb.Info{Status: rspb.StatusDeployed},
		Chart: &helmchart.Chart{Metadata: &helmchart.Metadata{APIVersion: "v2", Name: "gitops-runtime", Version: d.Version}, Values: d.Defaults}}
	if err := drv.Create(key, rls); err != nil {
		t.Fatal(err)
	}
	sec, err := kube.CoreV1().Secrets(DefaultNamespace).Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// targetChart writes chart gitops-runtime at version with values.yaml
// values and the given templates (file name under templates/ → text), and
// returns its directory: the target of the kit's helm upgrade.
func targetChart(t *testing.T, version, values string, templates map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gitops-runtime")
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: gitops-runtime\nversion: " + version + "\n", "values.yaml": values}
	for name, text := range templates {
		files[filepath.Join("templates", name)] = text
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// configMapManifest is a release manifest holding ConfigMap codefresh-cm.
const configMapManifest = "---\n# Source: gitops-runtime/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: codefresh-cm\n"

// configMapTemplate renders ConfigMap codefresh-cm.
var configMapTemplate = map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: codefresh-cm\n"}
