package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
)

// replayConfig returns the config a replay of a bundle of live compiles
// to: the run's spec (run.SpecOf), as a bundle's manifest keeps it (JSON),
// built again (run.FromSpec).
func replayConfig(t *testing.T, live *liveRun) *liveRun {
	t.Helper()
	b, err := json.Marshal(run.SpecOf(live.cfg))
	if err != nil {
		t.Fatal(err)
	}
	var s run.Spec
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	cfg, err := run.FromSpec(s, run.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return &liveRun{cfg: cfg}
}

// TestReplayBundlesOfFormat1: bundles written by the plugin before bundles
// recorded the compiled run (format 1: the command line's flags in the
// manifest; v0.0.0-dev at commit 1319031, on a bare control plane with a
// node and a namespace) still replay, offline, to the live run's report
// byte for byte and its exit code: a pre-install run with values, --set,
// the shortcuts, --waivers, -n, --fail-on warn, --only and
// --request-timeout (exit 1: ingress-class fails); an --upgrade run with
// --reuse-values, --helm-major and --skip (exit 1: no release); and a fleet
// archive of a --post run over two contexts and one whose client
// certificate is missing (exit 2).
func TestReplayBundlesOfFormat1(t *testing.T) {
	for _, tc := range []struct {
		name string
		exit int
	}{{"pre-install", ExitFailed}, {"upgrade", ExitFailed}, {"fleet-post", ExitUsage}} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join("testdata", "format1", tc.name+".tar.gz")
			want, err := os.ReadFile(filepath.Join("testdata", "format1", tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			out, _, _, err := runCmd(t, map[string]string{"KUBECONFIG": "/nonexistent"}, "replay", file)
			if ExitCode(err) != tc.exit {
				t.Errorf("exit %d (%v), want %d", ExitCode(err), err, tc.exit)
			}
			if out != string(want) {
				t.Errorf("replay of %s differs from the live run's report:\n%s", file, out)
			}
		})
	}
}

// TestReplayHelmWait: `replay FILE --helm-wait[=false]` judges the recorded
// run again as if Helm waits (does not); without it the replay keeps the
// recorded run's.
func TestReplayHelmWait(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *checks.HelmWait
	}{
		{nil, nil},
		{[]string{"--helm-wait"}, ptr(checks.HelmWaitOn)},
		{[]string{"--helm-wait=false"}, ptr(checks.HelmWaitOff)},
	} {
		fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
		f := newFlags(genericiooptions.NewTestIOStreamsDiscard(), Host{}.withDefaults())
		addReplayFlags(fs, f)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		ov, err := replayOverrides(fs, f)
		if err != nil {
			t.Fatal(err)
		}
		if (ov.HelmWait == nil) != (tc.want == nil) || tc.want != nil && *ov.HelmWait != *tc.want {
			t.Errorf("%v: override %v, want %v", tc.args, ov.HelmWait, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
