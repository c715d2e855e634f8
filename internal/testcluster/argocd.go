package testcluster

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ApplicationGVR is argoproj.io/v1alpha1 applications.
var ApplicationGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// WriteUmbrella writes into dir the chart the Shared Configuration
// Repository holds for a runtime (resources/<runtime>/chart,
// https://codefresh.io/docs/docs/installation/gitops/manage-runtimes/):
// codefresh-gitops-runtime at version, depending on gitops-runtime at the
// same version from oci://quay.io/codefresh, with runtimeChart (the
// gitops-runtime chart directory) copied into charts/ as `helm dependency
// build` leaves it, and values (nested under gitops-runtime: beside
// global:).
func WriteUmbrella(dir, runtimeChart, version, values string) error {
	if err := os.CopyFS(filepath.Join(dir, "charts", "gitops-runtime"), os.DirFS(runtimeChart)); err != nil {
		return err
	}
	meta := fmt.Sprintf(`apiVersion: v2
appVersion: 1.0.0
description: Codefresh gitops runtime umbrella chart
name: codefresh-gitops-runtime
version: %s
dependencies:
  - name: gitops-runtime
    repository: oci://quay.io/codefresh
    version: %s
`, version, version)
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(meta), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "values.yaml"), []byte(values), 0o600)
}
