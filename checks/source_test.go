package checks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// TestFindingsCarryTheirSource: a check whose finding a value causes
// anchors it where the plan says the value came from (a values file's
// line and column, a flag); a passing result, and a cause that is no
// value, carry none.
func TestFindingsCarryTheirSource(t *testing.T) {
	dir := t.TempDir()
	vals := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(vals, []byte(`global:
  runtime:
    name: Bad_Name
    ingress:
      enabled: true
      className: missing
      protocol: ftp
      hosts: [rt.example.com]
  codefresh:
    accountId: acc
    userToken:
      secretKeyRef:
        name: codefresh-token
        key: token
installer:
  skipValidation: true
`), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := plan.New(plan.Flags{ValueFiles: []string{vals}})
	if err != nil {
		t.Fatal(err)
	}
	k := newKit(t).with(in)

	for _, tc := range []struct {
		check Check
		want  string
	}{
		{RuntimeName(), vals + ":3:5"},
		{Values(), vals + ":12:7"}, // the first problem: the reserved Secret name
		{IngressClassCheck(), vals + ":6:7"},
		{ValidationHooks(), vals + ":16:3"},
	} {
		r := k.run(tc.check)
		if r.Status == StatusPass || r.Source == nil || r.Source.String() != tc.want {
			t.Errorf("%s: %s %q, source %v; want anchored at %s", tc.check.ID, r.Status, r.Message, r.Source, tc.want)
		}
	}
	in.RuntimeName, in.RuntimeNameSource = "codefresh", plan.Source{}
	if r := newKit(t).with(in).run(RuntimeName()); r.Status != StatusPass || r.Source != nil {
		t.Errorf("a passing runtime-name: %s, source %v", r.Status, r.Source)
	}
	flagged, err := plan.New(plan.Flags{RuntimeName: "Nope", SetValues: []string{"global.runtime.ingress.className=none"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := newKit(t).with(flagged).run(RuntimeName()); r.Source == nil || r.Source.Flag != "--runtime-name Nope" {
		t.Errorf("runtime-name from a flag: source %v", r.Source)
	}
}
