package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

func fixOptions(in string, terminal bool) (*Options, *bytes.Buffer) {
	out := &bytes.Buffer{}
	streams := genericiooptions.IOStreams{In: strings.NewReader(in), Out: out, ErrOut: &bytes.Buffer{}}
	host := Host{IsTerminal: func(io.Writer) bool { return terminal }, IsInputTerminal: func(io.Reader) bool { return terminal }}
	return NewOptions(streams, host), out
}

func TestCompleteFix(t *testing.T) {
	for _, tc := range []struct {
		name              string
		fix, yes, dry, tt bool
		wantErr           string
	}{
		{name: "no fix"},
		{name: "yes without fix", yes: true, wantErr: "only apply with --fix"},
		{name: "dry-run without fix", dry: true, wantErr: "only apply with --fix"},
		{name: "fix, no terminal, no yes", fix: true, wantErr: "--fix without --yes needs a terminal"},
		{name: "fix --yes", fix: true, yes: true},
		{name: "fix --dry-run", fix: true, dry: true},
		{name: "fix on a terminal", fix: true, tt: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := fixOptions("", tc.tt)
			o.Fix, o.Yes, o.DryRun = tc.fix, tc.yes, tc.dry
			err := o.Complete(false)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Complete = %v", err)
				}
				return
			}
			if err == nil || ExitCode(err) != checks.ExitUsage || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Complete = %v (exit %d), want exit 2 with %q", err, ExitCode(err), tc.wantErr)
			}
		})
	}
}

func TestConfirm(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, "YES\n": true, " y \n": true, "n\n": false, "\n": false, "": false, "yess\n": false} {
		o, out := fixOptions(in, true)
		got, err := o.confirm(out)
		if err != nil || got != want {
			t.Errorf("confirm(%q) = %v, %v; want %v", in, got, err, want)
		}
		if !strings.Contains(out.String(), "[y/N]") {
			t.Errorf("no prompt: %q", out.String())
		}
	}
}

// TestPlanWriter: the fix plan goes with the report for both tables, and to
// stderr for the machine formats.
func TestPlanWriter(t *testing.T) {
	var out, errOut bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, Host{})
	for _, tc := range []struct {
		format reporters.Format
		want   io.Writer
	}{{reporters.FormatTable, &out}, {reporters.FormatWide, &out}, {reporters.FormatJSON, &errOut}, {reporters.FormatJUnit, &errOut}} {
		o.format = tc.format
		if o.planWriter() != tc.want {
			t.Errorf("-o %s: plan written to the wrong stream", tc.format)
		}
	}
}
