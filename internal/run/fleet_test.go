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
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
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
	cfg := &Config{Mode: checks.ModePre, Registry: reg, Selected: selected, Getenv: func(string) string { return "" }}
	var running, peak atomic.Int32
	// The first members wait until two run at once: an unbounded fleet
	// would have started the others by then.
	gate := make(chan struct{})
	var release sync.Once
	var members []Member
	names := []string{"a", "b", "bad", "c", "d", "e"}
	for _, n := range names {
		members = append(members, Member{Context: n, Connect: func(ctx context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
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
			c, err := cluster.NewClients(&rest.Config{Host: "https://127.0.0.1:1"})
			return c, checks.ClusterInfo{Server: "https://127.0.0.1:1"}, err
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
	v := f.Run(context.Background())
	if v.Kind != Unreachable || v.Err != nil {
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
	cfg := &Config{Mode: checks.ModePre, Registry: reg, Selected: selected, Getenv: func(string) string { return "" }}
	// A member whose connection never ends but with its deadline.
	hang := Member{Context: "hang", Connect: func(ctx context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
		<-ctx.Done()
		return nil, checks.ClusterInfo{}, ctx.Err()
	}}
	var got []Entry
	short := *cfg
	short.Timeout = 1
	f := &Fleet{Config: &short, Members: []Member{hang}, Done: func(e Entry) { got = append(got, e) }}
	if v := f.Run(context.Background()); v.Kind != NotChecked {
		t.Errorf("fleet verdict %v, want not checked", v.Kind)
	}
	if len(got) != 1 || !errors.Is(got[0].Verdict.Err, context.DeadlineExceeded) {
		t.Fatalf("entries %+v: want the member's own deadline exceeded", got)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&Interrupt{Signal: "SIGINT"})
	reach := Member{Context: "a", Connect: func(context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
		c, err := cluster.NewClients(&rest.Config{Host: "https://127.0.0.1:1"})
		return c, checks.ClusterInfo{Server: "https://127.0.0.1:1"}, err
	}}
	got = nil
	f = &Fleet{Config: cfg, Members: []Member{reach, reach}, Done: func(e Entry) { got = append(got, e) }}
	if v := f.Run(ctx); v.Kind != Unreachable || v.Signal == nil || !strings.Contains(fmt.Sprint(v.Err), "interrupted by SIGINT: the report is partial") {
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

// TestFleetMemberRecorders: with Fleet.Recorder, each member's session
// records its host reads into that member's own recorder (--bundle over a
// fleet); a member with none records nothing and still runs.
func TestFleetMemberRecorders(t *testing.T) {
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		t.Fatal(err)
	}
	selected, err := reg.Select(checks.ModePre, []string{"helm-version"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Mode: checks.ModePre, Registry: reg, Selected: selected,
		Getenv:   func(k string) string { return map[string]string{"HELM_BIN": "/opt/helm"}[k] },
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Command: func(context.Context, string, ...string) ([]byte, error) {
			return []byte("v3.17.0+gabc\n"), nil
		}}
	connect := func(context.Context) (*cluster.Clients, checks.ClusterInfo, error) {
		c, err := cluster.NewClients(&rest.Config{Host: "https://127.0.0.1:1"})
		return c, checks.ClusterInfo{Server: "https://127.0.0.1:1"}, err
	}
	recs := map[string]*bundle.Recorder{"a": bundle.NewRecorder(), "b": bundle.NewRecorder()}
	var asked []string
	var mu sync.Mutex
	got := 0
	f := &Fleet{Config: cfg, Members: []Member{{Context: "a", Connect: connect}, {Context: "b", Connect: connect}, {Context: "c", Connect: connect}},
		Recorder: func(ctx string) *bundle.Recorder {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, ctx)
			return recs[ctx]
		},
		Done: func(e Entry) {
			got++
			if e.Report == nil {
				t.Errorf("%s: no report", e.Context)
			}
		}}
	f.Run(context.Background())
	if got != 3 || len(asked) != 3 {
		t.Fatalf("%d entries, recorders asked for %v; want 3 and every member", got, asked)
	}
	for name, rec := range recs {
		p := filepath.Join(t.TempDir(), name+".tgz")
		if err := rec.Write(p, bundle.Manifest{Context: name}, nil); err != nil {
			t.Fatal(err)
		}
		b, err := bundle.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if b.Getenv("HELM_BIN") != "/opt/helm" {
			t.Errorf("%s: the recorder kept no HELM_BIN read: the member's session did not record into it", name)
		}
	}
}
