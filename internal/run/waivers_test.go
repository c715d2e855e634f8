package run

import (
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

func registry(t *testing.T) *checks.Registry {
	t.Helper()
	reg, err := checks.NewRegistry(checks.All())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestParseWaivers: the file's shape, the required fields, strict decoding
// and the one-line error naming the file and the waiver at fault.
func TestParseWaivers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    int    // waivers parsed
		wantErr string // substring of the error; "" for none
	}{
		{name: "empty file", in: "", want: 0},
		{name: "empty list", in: "[]", want: 0},
		{name: "minimal", in: "- check: node-resources\n  reason: lab\n  expires: 2026-12-31\n", want: 1},
		{name: "quoted date", in: "- check: node-resources\n  reason: lab\n  expires: \"2026-12-31\"\n", want: 1},
		{name: "every field", in: `
- check: helm-ownership
  reason: adopted by hand
  expires: 2026-12-31
  owner: platform-team
  context: "kind-*"
  namespace: codefresh
  objects: ["Secret/codefresh/*", "ClusterRole/argo-*"]
- check: node-resources
  reason: lab
  expires: 2027-01-01
`, want: 2},
		{name: "no check", in: "- reason: lab\n  expires: 2026-12-31\n", wantErr: "--waivers w.yaml: waiver 1: check is required"},
		{name: "no reason", in: "- check: node-resources\n  expires: 2026-12-31\n", wantErr: "waiver 1 (node-resources): reason is required"},
		{name: "blank reason", in: "- check: node-resources\n  reason: '  '\n  expires: 2026-12-31\n", wantErr: "reason is required"},
		{name: "no expires", in: "- check: node-resources\n  reason: lab\n", wantErr: "waiver 1 (node-resources): expires is required"},
		{name: "bad date", in: "- check: node-resources\n  reason: lab\n  expires: 31/12/2026\n", wantErr: `expires "31/12/2026" is not a day YYYY-MM-DD`},
		{name: "impossible date", in: "- check: node-resources\n  reason: lab\n  expires: 2026-02-30\n", wantErr: "is not a day"},
		{name: "unknown check", in: "- check: node-resource\n  reason: lab\n  expires: 2026-12-31\n", wantErr: `waiver 1 (node-resource): unknown check ID "node-resource" (did you mean "node-resources"?)`},
		{name: "fatal check", in: "- check: cluster-reachable\n  reason: lab\n  expires: 2026-12-31\n", wantErr: "cluster-reachable cannot be waived"},
		{name: "second waiver at fault", in: "- check: node-resources\n  reason: lab\n  expires: 2026-12-31\n- check: helm-version\n  reason: x\n", wantErr: "waiver 2 (helm-version): expires is required"},
		{name: "unknown field", in: "- check: node-resources\n  reason: lab\n  expires: 2026-12-31\n  until: 2027-01-01\n", wantErr: `unknown field "until"`},
		{name: "not a list", in: "check: node-resources\n", wantErr: "want a YAML list of waivers"},
		{name: "not YAML", in: "- check: [\n", wantErr: "want a YAML list of waivers"},
		{name: "bad glob", in: "- check: node-resources\n  reason: lab\n  expires: 2026-12-31\n  objects: ['Node/[']\n", wantErr: `bad glob "Node/["`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := ParseWaivers("w.yaml", []byte(tc.in), registry(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if len(ws) != tc.want {
				t.Fatalf("%d waivers, want %d", len(ws), tc.want)
			}
		})
	}
	ws, err := ParseWaivers("w.yaml", []byte("- check: helm-ownership\n  reason: adopted\n  expires: 2026-12-31\n  owner: me\n  context: 'kind-*'\n  namespace: cf\n  objects: ['Secret/cf/*']\n"), registry(t))
	if err != nil {
		t.Fatal(err)
	}
	w := ws[0]
	if w.File != "w.yaml" || w.Index != 1 || w.Check != "helm-ownership" || w.Reason != "adopted" || w.Owner != "me" ||
		w.Context != "kind-*" || w.Namespace != "cf" || len(w.Objects) != 1 || !w.Expires.Equal(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("parsed %+v", w)
	}
}

// TestWaiverExpired: a waiver is valid through its expires day, UTC.
func TestWaiverExpired(t *testing.T) {
	w := Waiver{Expires: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}
	plus2 := time.FixedZone("UTC+2", 2*3600)
	for _, tc := range []struct {
		now  time.Time
		want bool
	}{
		{time.Date(2026, 12, 30, 12, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC), false},
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{time.Date(2027, 1, 1, 1, 0, 0, 0, plus2), false}, // 23:00 UTC on the 31st
		{time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC), true},
	} {
		if got := w.Expired(tc.now); got != tc.want {
			t.Errorf("Expired(%s) = %v, want %v", tc.now, got, tc.want)
		}
	}
}

// TestWaiverCovers: check, status, context and namespace globs, and objects
// (every object of the result covered).
func TestWaiverCovers(t *testing.T) {
	out := func(id string, st checks.Status, objs ...checks.ObjectRef) checks.Outcome {
		return checks.Outcome{Meta: checks.Meta{ID: id}, Result: checks.Result{Status: st, Objects: objs}}
	}
	secret := func(ns, name string) checks.ObjectRef {
		return checks.ObjectRef{Kind: "Secret", Namespace: ns, Name: name}
	}
	crole := checks.ObjectRef{Kind: "ClusterRole", Name: "argo-server"}
	base := Waiver{Check: "helm-ownership"}
	with := func(f func(*Waiver)) Waiver { w := base; f(&w); return w }
	for _, tc := range []struct {
		name string
		w    Waiver
		o    checks.Outcome
		want bool
	}{
		{"fail", base, out("helm-ownership", checks.StatusFail), true},
		{"warn", base, out("helm-ownership", checks.StatusWarn), true},
		{"error", base, out("helm-ownership", checks.StatusError), true},
		{"pass is not waived", base, out("helm-ownership", checks.StatusPass), false},
		{"skip is not waived", base, out("helm-ownership", checks.StatusSkip), false},
		{"other check", base, out("node-resources", checks.StatusFail), false},
		{"context glob", with(func(w *Waiver) { w.Context = "kind-*" }), out("helm-ownership", checks.StatusFail), true},
		{"context glob misses", with(func(w *Waiver) { w.Context = "prod-*" }), out("helm-ownership", checks.StatusFail), false},
		{"namespace glob", with(func(w *Waiver) { w.Namespace = "code*" }), out("helm-ownership", checks.StatusFail), true},
		{"namespace glob misses", with(func(w *Waiver) { w.Namespace = "other" }), out("helm-ownership", checks.StatusFail), false},
		{"every object covered", with(func(w *Waiver) { w.Objects = []string{"Secret/codefresh/*", "ClusterRole/argo-*"} }),
			out("helm-ownership", checks.StatusFail, secret("codefresh", "a"), secret("codefresh", "b"), crole), true},
		{"one object not covered", with(func(w *Waiver) { w.Objects = []string{"Secret/codefresh/*"} }),
			out("helm-ownership", checks.StatusFail, secret("codefresh", "a"), crole), false},
		{"namespaced object needs its namespace in the glob", with(func(w *Waiver) { w.Objects = []string{"Secret/*"} }),
			out("helm-ownership", checks.StatusFail, secret("codefresh", "a")), false},
		{"cluster-scoped object", with(func(w *Waiver) { w.Objects = []string{"ClusterRole/*"} }),
			out("helm-ownership", checks.StatusFail, crole), true},
		{"objects given, result names none", with(func(w *Waiver) { w.Objects = []string{"Secret/*/*"} }),
			out("helm-ownership", checks.StatusFail), false},
		{"no objects given covers any", base, out("helm-ownership", checks.StatusFail, secret("x", "y"), crole), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.w.Covers(tc.o, "kind-dev", "codefresh"); got != tc.want {
				t.Errorf("Covers = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestApplyWaivers: what a run's outcomes and waivers become, and the
// verdict on them: a waived failure does not fail the run, an expired
// waiver's does, and waiver warnings fail it only with --fail-on=warn.
func TestApplyWaivers(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	valid := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	past := time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)
	out := func(id string, st checks.Status) checks.Outcome {
		return checks.Outcome{Meta: registered(t, id), Result: checks.Result{Status: st, Message: id + " " + string(st)}}
	}
	reachable := out("cluster-reachable", checks.StatusPass)
	nodes := out("node-resources", checks.StatusFail)
	helm := out("helm-version", checks.StatusWarn)
	waiver := func(i int, id string, exp time.Time) Waiver {
		return Waiver{File: "w.yaml", Index: i, Check: id, Reason: "because " + id, Owner: "team", Expires: exp}
	}
	for _, tc := range []struct {
		name       string
		outs       []checks.Outcome
		waivers    []Waiver
		failOnWarn bool
		wantStatus map[string]checks.Status
		wantStates []checks.WaiverState
		wantKind   Kind
		wantWaived int
		wantImpact int // summary impact counts, summed
	}{
		{name: "no waivers", outs: []checks.Outcome{reachable, nodes}, wantStatus: map[string]checks.Status{"node-resources": checks.StatusFail}, wantKind: Failed, wantImpact: 1},
		{name: "a waived failure", outs: []checks.Outcome{reachable, nodes}, waivers: []Waiver{waiver(1, "node-resources", valid)},
			wantStatus: map[string]checks.Status{"node-resources": checks.StatusWaived}, wantStates: []checks.WaiverState{checks.WaiverApplied}, wantKind: OK, wantWaived: 1},
		{name: "a waived warning with --fail-on=warn", outs: []checks.Outcome{reachable, helm}, waivers: []Waiver{waiver(1, "helm-version", valid)}, failOnWarn: true,
			wantStatus: map[string]checks.Status{"helm-version": checks.StatusWaived}, wantStates: []checks.WaiverState{checks.WaiverApplied}, wantKind: OK, wantWaived: 1},
		{name: "an expired waiver", outs: []checks.Outcome{reachable, nodes}, waivers: []Waiver{waiver(1, "node-resources", past)},
			wantStatus: map[string]checks.Status{"node-resources": checks.StatusFail}, wantStates: []checks.WaiverState{checks.WaiverExpired}, wantKind: Failed, wantImpact: 1},
		{name: "an expired waiver and a valid one", outs: []checks.Outcome{reachable, nodes}, waivers: []Waiver{waiver(1, "node-resources", past), waiver(2, "node-resources", valid)},
			wantStatus: map[string]checks.Status{"node-resources": checks.StatusWaived}, wantStates: []checks.WaiverState{checks.WaiverExpired, checks.WaiverApplied}, wantKind: OK, wantWaived: 1},
		{name: "two valid waivers of one result", outs: []checks.Outcome{reachable, nodes}, waivers: []Waiver{waiver(1, "node-resources", valid), waiver(2, "node-resources", valid)},
			wantStatus: map[string]checks.Status{"node-resources": checks.StatusWaived}, wantStates: []checks.WaiverState{checks.WaiverApplied, checks.WaiverApplied}, wantKind: OK, wantWaived: 1},
		{name: "a waiver of a passing check is unmatched", outs: []checks.Outcome{reachable, out("node-resources", checks.StatusPass)}, waivers: []Waiver{waiver(1, "node-resources", valid)},
			wantStatus: map[string]checks.Status{"node-resources": checks.StatusPass}, wantStates: []checks.WaiverState{checks.WaiverUnmatched}, wantKind: OK},
		{name: "unmatched with --fail-on=warn", outs: []checks.Outcome{reachable}, waivers: []Waiver{waiver(1, "node-resources", valid)}, failOnWarn: true,
			wantStates: []checks.WaiverState{checks.WaiverUnmatched}, wantKind: Failed},
		{name: "expired, nothing failing, --fail-on=warn", outs: []checks.Outcome{reachable}, waivers: []Waiver{waiver(1, "node-resources", past)}, failOnWarn: true,
			wantStates: []checks.WaiverState{checks.WaiverExpired}, wantKind: Failed},
		{name: "waiver out of the context's scope", outs: []checks.Outcome{reachable, nodes},
			waivers:    []Waiver{func() Waiver { w := waiver(1, "node-resources", valid); w.Context = "prod-*"; return w }()},
			wantStatus: map[string]checks.Status{"node-resources": checks.StatusFail}, wantStates: []checks.WaiverState{checks.WaiverUnmatched}, wantKind: Failed, wantImpact: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outs, uses := applyWaivers(tc.outs, tc.waivers, "kind-dev", "codefresh", now)
			// Applying again (the --wait rounds, then the run's end) changes nothing.
			outs, uses = applyWaivers(outs, tc.waivers, "kind-dev", "codefresh", now)
			for _, o := range outs {
				if want, ok := tc.wantStatus[o.ID]; ok && o.Status != want {
					t.Errorf("%s: status %s, want %s", o.ID, o.Status, want)
				}
				if o.Status == checks.StatusWaived {
					if o.Waiver == nil || o.Waiver.Reason != "because "+o.ID || o.Waiver.Owner != "team" || o.Waiver.Expires != "2026-12-31" || o.Waiver.Status == "" || o.Waiver.Status == checks.StatusWaived {
						t.Errorf("%s: waiver %+v", o.ID, o.Waiver)
					}
				} else if o.Waiver != nil {
					t.Errorf("%s: %s with a waiver", o.ID, o.Status)
				}
			}
			if len(uses) != len(tc.wantStates) {
				t.Fatalf("%d waiver uses, want %d", len(uses), len(tc.wantStates))
			}
			for i, u := range uses {
				if u.State != tc.wantStates[i] || u.Index != tc.waivers[i].Index || u.File != "w.yaml" {
					t.Errorf("waiver %d: %+v, want state %s", i, u, tc.wantStates[i])
				}
			}
			for _, o := range tc.outs {
				if o.Status == checks.StatusWaived || o.Waiver != nil {
					t.Errorf("applyWaivers changed its input")
				}
			}
			r := &checks.Report{Mode: checks.ModePre, Outcomes: outs, Waivers: uses}
			if v := decide(r, "codefresh", tc.failOnWarn, false, nil); v.Kind != tc.wantKind {
				t.Errorf("verdict %s, want %s", v.Kind, tc.wantKind)
			}
			if got := r.Summary()[checks.StatusWaived]; got != tc.wantWaived {
				t.Errorf("summary waived %d, want %d", got, tc.wantWaived)
			}
			impact := 0
			for _, n := range r.ImpactSummary() {
				impact += n
			}
			if impact != tc.wantImpact {
				t.Errorf("impact summary counts %d, want %d", impact, tc.wantImpact)
			}
		})
	}
	// A waiver that expires between a --wait round and the run's end: the
	// outcome it waived counts again.
	w := waiver(1, "node-resources", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	outs, _ := applyWaivers([]checks.Outcome{nodes}, []Waiver{w}, "kind-dev", "codefresh", now)
	if outs[0].Status != checks.StatusWaived {
		t.Fatalf("before midnight: %s, want waived", outs[0].Status)
	}
	outs, uses := applyWaivers(outs, []Waiver{w}, "kind-dev", "codefresh", now.Add(12*time.Hour))
	if outs[0].Status != checks.StatusFail || outs[0].Waiver != nil || uses[0].State != checks.WaiverExpired {
		t.Errorf("after midnight: %s %+v %s, want fail, no waiver, expired", outs[0].Status, outs[0].Waiver, uses[0].State)
	}
}
