package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
)

// replayConfig records live in a bundle, as a run with --bundle does, and
// returns the config its replay compiles to.
func replayConfig(t *testing.T, live *liveRun) *liveRun {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "run.tgz")
	report := &checks.Report{Mode: live.cfg.Mode, Cluster: checks.ClusterInfo{Server: "https://127.0.0.1:1", Context: "lab"}}
	if err := writeBundle(ctx, bundle.NewRecorder(), path, live.cfg, recordFlags(live.fs, live.flags.conn), bundle.Now(), report); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	streams := genericiooptions.NewTestIOStreamsDiscard()
	rs, err := replayOptions(newReplayCommand(streams, Host{}), streams, Host{}, path, b.Manifest.Flags, b, replayFlags{})
	defer rs.cleanup()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := completeReplay(ctx, rs, b)
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
