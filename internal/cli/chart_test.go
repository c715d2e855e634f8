package cli

import (
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// TestChartLoaderOnlyWhenAChartCheckRuns: the chart is loaded only when a
// selected check reads it, not after the install, and not with --chart=;
// its pull dials through the prober, bounded by --request-timeout when
// given.
func TestChartLoaderOnlyWhenAChartCheckRuns(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     bool
		wantRef  string
		wantVer  string
		wantTime time.Duration
	}{
		{"default chart for chart-renders", []string{"--only", "chart-renders"}, true, plan.DefaultChart, "", 0},
		{"argo-crds-ownership reads the chart too", []string{"--only", "argo-crds-ownership"}, true, plan.DefaultChart, "", 0},
		{"no chart check selected", []string{"--only", "values"}, false, "", "", 0},
		{"--chart= turns the chart off", []string{"--chart="}, false, "", "", 0},
		{"post-install runs never load it", []string{"--post"}, false, "", "", 0},
		{"--request-timeout bounds the pull", []string{"--only", "helm-ownership", "--chart", "./local", "--chart-version", "0.30.0", "--request-timeout", "5s"}, true, "./local", "0.30.0", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, err := compileEnv(t, nil, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if (c.Chart != nil) != tt.want {
				t.Fatalf("loader %v, want %v", c.Chart != nil, tt.want)
			}
			if c.Chart == nil {
				return
			}
			src := c.Chart.Source()
			if src.Ref != tt.wantRef || src.Version != tt.wantVer || src.Timeout != tt.wantTime || src.DialContext == nil {
				t.Errorf("source %+v", src)
			}
			if c.Inputs.Chart != tt.wantRef || c.Inputs.ChartVersion != tt.wantVer {
				t.Errorf("plan chart %q %q", c.Inputs.Chart, c.Inputs.ChartVersion)
			}
		})
	}
}
