package cli

import (
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

func TestChartLoaderOnlyWhenAChartCheckRuns(t *testing.T) {
	tests := []struct {
		name     string
		set      func(o *Options)
		want     bool
		wantRef  string
		wantTime time.Duration
	}{
		{"default chart for chart-renders", func(o *Options) { o.Only = []string{"chart-renders"} }, true, plan.DefaultChart, 0},
		{"argo-crds-ownership reads the chart too", func(o *Options) { o.Only = []string{"argo-crds-ownership"} }, true, plan.DefaultChart, 0},
		{"no chart check selected", func(o *Options) { o.Only = []string{"values"} }, false, "", 0},
		{"--chart= turns the chart off", func(o *Options) { o.Chart = "" }, false, "", 0},
		{"post-install runs never load it", func(o *Options) { o.Post = true }, false, "", 0},
		{"--request-timeout bounds the pull", func(o *Options) {
			o.Only = []string{"helm-ownership"}
			o.Chart, o.ChartVersion = "./local", "0.30.0"
			d := "5s"
			o.ConfigFlags.Timeout = &d
		}, true, "./local", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(genericiooptions.NewTestIOStreamsDiscard(), Host{})
			tt.set(o)
			if err := o.Complete(false); err != nil {
				t.Fatal(err)
			}
			if (o.config.Chart != nil) != tt.want {
				t.Fatalf("loader %v, want %v", o.config.Chart != nil, tt.want)
			}
			if o.config.Chart == nil {
				return
			}
			src := o.config.Chart.Source()
			if src.Ref != tt.wantRef || src.Timeout != tt.wantTime || src.DialContext == nil || src.Settings == nil {
				t.Errorf("source %+v", src)
			}
			if o.config.Inputs.Chart != o.Chart || o.config.Inputs.ChartVersion != o.ChartVersion {
				t.Errorf("plan chart %q %q", o.config.Inputs.Chart, o.config.Inputs.ChartVersion)
			}
		})
	}
}
