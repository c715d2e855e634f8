package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// recordedSample is a way to give a flag whose effect a bundle records:
// args set it (after sampleBase), and base (after sampleBase) are the flags
// it needs without it (--wait needs --post), the run it must change.
type recordedSample struct {
	args, base []string
}

// sampleBase comes first in every sample run: a local chart that does not
// exist, so that no run pulls the default one.
var sampleBase = []string{"--chart", "./no-such-chart"}

// recordedSamples give every flag whose effect a bundle records; a flag
// described as recorded without a sample here fails
// TestEveryFlagIsDescribed. Files are under dir.
func recordedSamples(t *testing.T, dir string) map[string]recordedSample {
	t.Helper()
	values := filepath.Join(dir, "values.yaml")
	writeFile(t, values, "global:\n  codefresh:\n    accountId: acc-1\n  runtime:\n    ingress:\n      enabled: true\n      hosts: [rt.example.com]\n")
	waivers := filepath.Join(dir, "waivers.yaml")
	writeFile(t, waivers, "- check: values\n  reason: lab\n  expires: 2099-12-31\n")
	upgrade := []string{"--upgrade"}
	return map[string]recordedSample{
		"post":                    {args: []string{"--post"}},
		"upgrade":                 {args: upgrade},
		"namespace":               {args: []string{"-n", "team-a"}},
		"runtime-name":            {args: []string{"--runtime-name", "rt-1"}},
		"release-name":            {args: []string{"--release-name", "rel-1"}},
		"only":                    {args: []string{"--only", "values,runtime-name"}},
		"skip":                    {args: []string{"--skip", "values"}},
		"fail-on":                 {args: []string{"--fail-on", "warn"}},
		"waivers":                 {args: []string{"--waivers", waivers}},
		"wait":                    {args: []string{"--post", "--wait", "1m"}, base: []string{"--post"}},
		"timeout":                 {args: []string{"--timeout", "1m"}},
		"values":                  {args: []string{"-f", values}},
		"set":                     {args: []string{"--set", "global.codefresh.accountId=acc-2,global.runtime.ingress.enabled=true"}},
		"set-string":              {args: []string{"--set-string", "global.codefresh.accountId=0042"}},
		"chart":                   {args: []string{"--chart", "./another-chart"}},
		"chart-version":           {args: []string{"--chart-version", "0.30.0"}},
		"access-mode":             {args: []string{"--access-mode", "ingress"}},
		"ingress-host":            {args: []string{"--ingress-host", "rt.example.com"}},
		"ingress-class":           {args: []string{"--ingress-class", "alb"}},
		"ingress-url":             {args: []string{"--ingress-url", "https://rt.example.com"}},
		"existing-argocd":         {args: []string{"--existing-argocd"}},
		"skip-ingress-validation": {args: []string{"--skip-ingress-validation"}},
		"argocd-version-range":    {args: []string{"--argocd-version-range", ">=3 <4"}},
		"reuse-values":            {args: []string{"--upgrade", "--reuse-values"}, base: upgrade},
		"reset-values":            {args: []string{"--upgrade", "--reset-values"}, base: upgrade},
		"reset-then-reuse-values": {args: []string{"--upgrade", "--reset-then-reuse-values"}, base: upgrade},
		"helm-major":              {args: []string{"--helm-major", "4"}},
		"helm-wait":               {args: []string{"--helm-wait=false"}},
		"output":                  {args: []string{"-o", "json"}},
		"no-color":                {args: []string{"--no-color"}},
		"request-timeout":         {args: []string{"--request-timeout", "20s"}},
		"connect-to":              {args: []string{"--connect-to", "a.example:443:127.0.0.1:9"}},
		"argocd-app":              {args: []string{"--argocd-app", "argocd/codefresh"}},
		"argocd-source":           {args: []string{"--upgrade", "--argocd-source", "values=" + dir}, base: upgrade},
		"registry-mirror":         {args: []string{"--registry-mirror", "mirror.example.com/cf"}},
		"registry-check":          {args: []string{"--registry-check"}},
		"installer":               {args: []string{"--installer", "system:serviceaccount:argocd:argocd-application-controller"}},
		"installer-group":         {args: []string{"--installer", "ci-deployer", "--installer-group", "deployers"}, base: []string{"--installer", "ci-deployer"}},
		"in-cluster":              {args: []string{"--in-cluster"}},
	}
}

// TestEveryFlagIsDescribed: every flag of the root command says whether a
// bundle records its effect, and for each one that does, a replay of a
// bundle of the run compiles to the live run's config (configView), which
// the flag changes.
func TestEveryFlagIsDescribed(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	cmd, _ := newCommand(streams, Host{})
	samples := recordedSamples(t, t.TempDir())
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		rec, err := isRecorded(f)
		if err != nil {
			t.Error(err)
			return
		}
		s, ok := samples[f.Name]
		switch {
		case !rec && ok:
			t.Errorf("--%s is not recorded, yet has a sample in recordedSamples: remove it", f.Name)
			return
		case !rec:
			return
		case !ok:
			t.Errorf("--%s is recorded: give it a sample in recordedSamples", f.Name)
			return
		}
		t.Run(f.Name, func(t *testing.T) {
			base := configView(t, liveConfig(t, append(slices.Clone(sampleBase), s.base...)...))
			live := liveConfig(t, append(slices.Clone(sampleBase), s.args...)...)
			got := configView(t, live)
			if got == base {
				t.Fatalf("%v compiles to the config of %v: the sample does not show the flag", s.args, s.base)
			}
			if replayed := configView(t, replayConfig(t, live)); replayed != got {
				t.Errorf("the replay of a bundle of %v compiles to\n%s\nthe live run to\n%s", s.args, replayed, got)
			}
		})
	})
}

// liveConfig compiles args (no terminal, an empty environment).
func liveConfig(t *testing.T, args ...string) *liveRun {
	t.Helper()
	streams := genericiooptions.NewTestIOStreamsDiscard()
	cmd, f := newCommand(streams, Host{})
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	cfg, err := f.ToConfig(context.Background())
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return &liveRun{cfg: cfg, flags: f, fs: cmd.Flags()}
}

// liveRun is a compiled run and the flags it was compiled from.
type liveRun struct {
	cfg   *run.Config
	flags *Flags
	fs    *pflag.FlagSet
}

// configView is what a run's config says, as JSON: every field of
// run.Config, the check IDs of Selected, the prober's settings, the chart's
// source; none of the hooks (progress, the host's environment and
// programs), which the process and the command bind when it runs. A field
// it cannot show fails the test until it knows how to compare it.
func configView(t *testing.T, r *liveRun) string {
	t.Helper()
	c := r.cfg
	v := reflect.ValueOf(*c)
	out := map[string]any{}
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		switch name {
		case "Registry", "Hooks", "Replay":
			continue
		case "Selected":
			var ids []string
			for _, s := range c.Selected {
				ids = append(ids, s.ID)
			}
			out[name] = ids
		case "Host":
			// The environment and the programs are the process's; the
			// prober's settings are the run's.
			if c.Probe != nil {
				out["Probe"] = map[string]any{"timeout": c.Probe.Timeout, "connectTo": c.Probe.ConnectTo}
			}
		case "Chart":
			if c.Chart != nil {
				src := c.Chart.Source()
				out[name] = map[string]any{"ref": src.Ref, "version": src.Version, "timeout": src.Timeout}
			}
		case "Fix":
			out[name] = map[string]any{"enabled": c.Fix.Enabled, "yes": c.Fix.Yes, "dryRun": c.Fix.DryRun, "options": c.Fix.Options}
		default:
			out[name] = v.Field(i).Interface()
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatalf("configView: %v (teach it the new field of run.Config)", err)
	}
	return string(b)
}

// TestConfigViewSeesEveryField: configView shows a change of each field of
// run.Config it compares (a field it skipped silently would let a replay
// differ unseen).
func TestConfigViewSeesEveryField(t *testing.T) {
	base := &run.Config{}
	view := configView(t, &liveRun{cfg: base})
	for _, tc := range []struct {
		field string
		set   func(c *run.Config)
	}{
		{"Mode", func(c *run.Config) { c.Mode = checks.ModePost }},
		{"Selected", func(c *run.Config) { c.Selected = []checks.Check{{Meta: checks.Meta{ID: "values"}}} }},
		{"Inputs", func(c *run.Config) { c.Inputs.RuntimeName = "x" }},
		{"FailOnWarn", func(c *run.Config) { c.FailOnWarn = true }},
		{"Output", func(c *run.Config) { c.Output.NoColor = true }},
		{"Waivers", func(c *run.Config) { c.Waivers = []run.Waiver{{Check: "values"}} }},
	} {
		c := *base
		tc.set(&c)
		if configView(t, &liveRun{cfg: &c}) == view {
			t.Errorf("configView does not show %s", tc.field)
		}
	}
	if !strings.Contains(view, `"Timeout"`) {
		t.Errorf("configView leaves out Timeout:\n%s", view)
	}
}
