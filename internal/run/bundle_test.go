package run

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// TestWithBundle: a recording run's hooks record what they answer; a
// replay's answer from the bundle, its prober dials nothing and its clock
// is the recorded run's, and it waits for nothing.
func TestWithBundle(t *testing.T) {
	if c := (&Config{}); withBundle(c, nil) != c {
		t.Error("a run without a bundle is changed")
	}
	rec := bundle.NewRecorder()
	p, err := probe.New(time.Second, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	live := withBundle(&Config{Host: checks.Host{Probe: p, Getenv: func(k string) string { return "v-" + k },
		Command:  func(context.Context, string, ...string) ([]byte, error) { return []byte("v3.17.0"), nil },
		LookPath: func(string) (string, error) { return "/bin/helm", nil }}}, rec)
	if live.Probe == p || live.Probe.Tape == nil {
		t.Error("the recording prober is not taped (or the caller's was changed)")
	}
	live.Getenv("HELM_BIN")
	_, _ = live.LookPath("helm")
	_, _ = live.Command(context.Background(), "/bin/helm", "version", "--short")
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "b.tgz")
	if err := rec.Write(path, bundle.Manifest{Time: at}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := withBundle(&Config{Replay: b, Wait: time.Minute, Host: checks.Host{Probe: p, Getenv: func(string) string { return "live" }}}, nil)
	if r.Wait != 0 || r.Getenv("HELM_BIN") != "v-HELM_BIN" || r.Probe.Now() != at {
		t.Errorf("replay config: wait %s, HELM_BIN %q, now %s", r.Wait, r.Getenv("HELM_BIN"), r.Probe.Now())
	}
	if out, err := r.Command(context.Background(), "/bin/helm", "version", "--short"); err != nil || string(out) != "v3.17.0" {
		t.Errorf("command %q %v", out, err)
	}
	if _, err := r.Probe.DialContext(context.Background(), "tcp", "127.0.0.1:1"); !errors.Is(err, bundle.ErrOffline) {
		t.Errorf("a replay's dial: %v", err)
	}
	if r.Probe.Resolves(context.Background(), "example.invalid", "443") {
		t.Error("an unrecorded lookup resolves")
	}
}
