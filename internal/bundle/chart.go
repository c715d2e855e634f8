package bundle

import (
	"fmt"
	"os"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// ChartArchive packages c as `helm package` does (Helm's chartutil.Save)
// and returns the archive's bytes.
func ChartArchive(c *helmchart.Chart) ([]byte, error) {
	dir, err := os.MkdirTemp("", "gitops-preflight-bundle-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path, err := chartutil.Save(c, dir)
	if err != nil {
		return nil, fmt.Errorf("packaging the chart: %w", err)
	}
	return os.ReadFile(path)
}
