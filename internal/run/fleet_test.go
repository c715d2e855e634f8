package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
)

// TestFleetRunsEveryMemberBounded: every member gets an entry with its own
// index and context; a member whose Connect fails gets its error and no
// report, and the others still run; no more than Parallel members connect
// at once, and Done is never called concurrently.
func TestFleetRunsEveryMemberBounded(t *testing.T) {
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		t.Fatal(err)
	}
	selected, err := reg.Select(checks.ModePre, []string{"runtime-name"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Mode: checks.ModePre, Registry: reg, Selected: selected, Host: checks.Host{Getenv: func(string) string { return "" }}}
	var running, peak atomic.Int32
	// The first members wait until two run at once: an unbounded fleet
	// would have started the others by then.
	gate := make(chan struct{})
	var release sync.Once
	var members []Member
	names := []string{"a", "b", "bad", "c", "d", "e"}
	for _, n := range names {
		members = append(members, Member{Context: n, Connect: func(ctx context.Context) (*rest.Config, checks.ClusterInfo, error) {
			now := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			if now >= 2 {
				release.Do(func() { close(gate) })
			}
			<-gate
			if n == "bad" {
				return nil, checks.ClusterInfo{}, errors.New("kubeconfig context bad: cluster missing")
			}
			// A server nobody listens on: cluster-reachable fails.
			return &rest.Config{Host: "https://127.0.0.1:1"}, checks.ClusterInfo{Server: "https://127.0.0.1:1"}, nil
		}})
	}
	var mu sync.Mutex
	inDone := false
	got := map[string]Entry{}
	f := &Fleet{Config: cfg, Members: members, Parallel: 2, Done: func(e Entry) {
		mu.Lock()
		if inDone {
			t.Error("Done called concurrently")
		}
		inDone = true
		mu.Unlock()
		got[e.Context] = e
		mu.Lock()
		inDone = false
		mu.Unlock()
	}}
	v, err := f.Run(context.Background())
	if err != nil || v.Kind != Unreachable || v.Err != nil {
		t.Errorf("fleet verdict %v (%v), want unreachable (its worst member's), no line", v.Kind, v.Err)
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d members connected at once, want at most 2", p)
	}
	if len(got) != len(names) {
		t.Fatalf("%d entries, want %d", len(got), len(names))
	}
	for i, n := range names {
		e := got[n]
		if e.Index != i || e.Context != n {
			t.Errorf("entry %s: index %d context %q, want %d", n, e.Index, e.Context, i)
		}
		switch {
		case n == "bad" && (e.Verdict.Kind != NotChecked || e.Verdict.Err == nil || e.Report != nil):
			t.Errorf("bad: verdict %v (%v), report %v; want not checked with the Connect error, no report", e.Verdict.Kind, e.Verdict.Err, e.Report)
		case n != "bad" && (e.Report == nil || e.Verdict.Kind != Unreachable || e.Report.Cluster.Context != n):
			t.Errorf("%s: report %v, verdict %v; want an unreachable report naming its context", n, e.Report, e.Verdict.Kind)
		}
	}
}

// TestFleetMemberDeadlines: each member runs under its own Timeout, and an
// interruption reaches every member: one that had not reached its cluster
// is Unreachable, as a single run interrupted before contact.
func TestFleetMemberDeadlines(t *testing.T) {
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		t.Fatal(err)
	}
	selected, err := reg.Select(checks.ModePre, []string{"runtime-name"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Mode: checks.ModePre, Registry: reg, Selected: selected, Host: checks.Host{Getenv: func(string) string { return "" }}}
	// A member whose connection never ends but with its deadline.
	hang := Member{Context: "hang", Connect: func(ctx context.Context) (*rest.Config, checks.ClusterInfo, error) {
		<-ctx.Done()
		return nil, checks.ClusterInfo{}, ctx.Err()
	}}
	var got []Entry
	short := *cfg
	short.Timeout = 1
	f := &Fleet{Config: &short, Members: []Member{hang}, Done: func(e Entry) { got = append(got, e) }}
	if v, _ := f.Run(context.Background()); v.Kind != NotChecked {
		t.Errorf("fleet verdict %v, want not checked", v.Kind)
	}
	if len(got) != 1 || !errors.Is(got[0].Verdict.Err, context.DeadlineExceeded) {
		t.Fatalf("entries %+v: want the member's own deadline exceeded", got)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&Interrupt{Signal: "SIGINT"})
	reach := Member{Context: "a", Connect: func(context.Context) (*rest.Config, checks.ClusterInfo, error) {
		return &rest.Config{Host: "https://127.0.0.1:1"}, checks.ClusterInfo{Server: "https://127.0.0.1:1"}, nil
	}}
	got = nil
	f = &Fleet{Config: cfg, Members: []Member{reach, reach}, Done: func(e Entry) { got = append(got, e) }}
	if v, _ := f.Run(ctx); v.Kind != Unreachable || v.Signal == nil || !strings.Contains(fmt.Sprint(v.Err), "interrupted by SIGINT: the report is partial") {
		t.Errorf("fleet verdict %v (%v), want unreachable, the report partial", v.Kind, v.Err)
	}
	if len(got) != 2 {
		t.Fatalf("%d entries, want 2", len(got))
	}
	for _, e := range got {
		if e.Verdict.Kind != Unreachable || e.Verdict.Signal == nil {
			t.Errorf("entry %d: verdict %v (signal %v), want unreachable by the interruption", e.Index, e.Verdict.Kind, e.Verdict.Signal)
		}
	}
}

// TestFleetRecordsAnArchive: with Config.Bundle, each member's session is
// recorded into a bundle of its own (its host reads among what it keeps),
// the archive lists the contexts in order, one that was not checked with
// its error, and each bundle replays; an archive that cannot be written
// makes the fleet's verdict Failed with its line.
func TestFleetRecordsAnArchive(t *testing.T) {
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		t.Fatal(err)
	}
	selected, err := reg.Select(checks.ModePre, []string{"helm-version"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "fleet.tgz")
	cfg := &Config{Mode: checks.ModePre, Registry: reg, Selected: selected, Bundle: file, Output: Output{Format: "json"},
		Host: checks.Host{
			Getenv:   func(k string) string { return map[string]string{"HELM_BIN": "/opt/helm"}[k] },
			LookPath: func(string) (string, error) { return "", errors.New("not found") },
			Command: func(context.Context, string, ...string) ([]byte, error) {
				return []byte("v3.17.0+gabc\n"), nil
			}}}
	connect := func(context.Context) (*rest.Config, checks.ClusterInfo, error) {
		return &rest.Config{Host: "https://127.0.0.1:1"}, checks.ClusterInfo{Server: "https://127.0.0.1:1"}, nil
	}
	broken := func(context.Context) (*rest.Config, checks.ClusterInfo, error) {
		return nil, checks.ClusterInfo{}, errors.New("kubeconfig context c: no user token=s3cr3t")
	}
	f := &Fleet{Config: cfg, Members: []Member{{Context: "b", Connect: connect}, {Context: "a", Connect: connect}, {Context: "c", Connect: broken}}}
	v, err := f.Run(context.Background())
	if err != nil || v.Kind != Unreachable || v.Err != nil {
		t.Fatalf("fleet verdict %v (%v), error %v; want unreachable (a, b), no line", v.Kind, v.Err, err)
	}
	fl, err := bundle.OpenFleet(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	var order []string
	for _, c := range fl.Manifest.Clusters {
		order = append(order, c.Context)
	}
	if strings.Join(order, ",") != "b,a,c" || fl.Manifest.Clusters[2].Bundle != "" || !strings.Contains(fl.Manifest.Clusters[2].Error, "no user") || strings.Contains(fl.Manifest.Clusters[2].Error, "s3cr3t") {
		t.Errorf("fleet manifest %+v", fl.Manifest.Clusters)
	}
	if s, err := FleetSpec(fl); err != nil || s.Output.Format != "json" || strings.Join(s.Checks, ",") != "cluster-reachable,helm-version" {
		t.Errorf("fleet spec %+v (%v)", s, err)
	}
	for _, c := range fl.Manifest.Clusters[:2] {
		b, err := fl.Bundle(c)
		if err != nil {
			t.Fatal(err)
		}
		if b.Getenv("HELM_BIN") != "/opt/helm" || b.Manifest.Context != c.Context {
			t.Errorf("%s: the bundle kept no HELM_BIN read, or names context %q", c.Context, b.Manifest.Context)
		}
	}

	bad := *cfg
	bad.Bundle = filepath.Join(t.TempDir(), "no-such-dir", "fleet.tgz")
	v, err = (&Fleet{Config: &bad, Members: []Member{{Context: "a", Connect: connect}}}).Run(context.Background())
	if err != nil || v.Kind != Unreachable || v.Err == nil || !strings.Contains(v.Err.Error(), "no-such-dir") {
		t.Errorf("an archive not written: verdict %v (%v), error %v; want its worst member's, with the archive's line", v.Kind, v.Err, err)
	}
}
