package cli

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// fixConsole is a console reading in from stdin, stdin and stdout
// terminals or not; out is its stdout.
func fixConsole(in string, terminal bool) (console, *bytes.Buffer) {
	out := &bytes.Buffer{}
	streams := genericiooptions.IOStreams{In: strings.NewReader(in), Out: out, ErrOut: &bytes.Buffer{}}
	host := Host{IsTerminal: func(io.Writer) bool { return terminal }, IsInputTerminal: func(io.Reader) bool { return terminal }}
	return console{streams: streams, host: host.withDefaults()}, out
}

// compileFix compiles args with stdin and stdout terminals or not.
func compileFix(t *testing.T, terminal bool, args ...string) (*run.Config, error) {
	t.Helper()
	term, _ := fixConsole("", terminal)
	_, c, err := compile(t, term.streams, term.host, args...)
	return c, err
}

func TestCompleteFix(t *testing.T) {
	for _, tc := range []struct {
		name              string
		fix, yes, dry, tt bool
		wantErr           string
	}{
		{name: "no fix"},
		{name: "yes without fix", yes: true, wantErr: "--yes only applies with --fix"},
		{name: "dry-run without fix", dry: true, wantErr: "--dry-run only applies with --fix"},
		{name: "fix, no terminal, no yes", fix: true, wantErr: "--fix without --yes needs a terminal"},
		{name: "fix --yes", fix: true, yes: true},
		{name: "fix --dry-run", fix: true, dry: true},
		{name: "fix on a terminal", fix: true, tt: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, f := range []struct {
				set  bool
				flag string
			}{{tc.fix, "--fix"}, {tc.yes, "--yes"}, {tc.dry, "--dry-run"}} {
				if f.set {
					args = append(args, f.flag)
				}
			}
			c, err := compileFix(t, tc.tt, args...)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ToConfig = %v", err)
				}
				if f := c.Fix; f.Enabled != tc.fix || f.Yes != tc.yes || f.DryRun != tc.dry {
					t.Fatalf("run config Fix = %+v, want enabled %v, yes %v, dry run %v", f, tc.fix, tc.yes, tc.dry)
				}
				return
			}
			if err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ToConfig = %v (exit %d), want exit 2 with %q", err, ExitCode(err), tc.wantErr)
			}
		})
	}
}

// TestFixFlagPairs compiles every pair of the fix options and the
// mode/selection flags: each pair is accepted or refused with exit 2 as the
// table says, before anything touches the cluster.
func TestFixFlagPairs(t *testing.T) {
	names := []string{"--fix", "--yes", "--dry-run", "--crds=rollouts", "--tls-secret=t", "--post",
		"--only=kubernetes-version", "--skip=argo-crds-ownership", "--list-checks"}
	// want: "" accepted, else a substring of the exit-2 message. Keys are
	// the pair in sorted order. (On a terminal, so --fix needs no --yes.)
	want := map[string]string{
		"--crds=rollouts --dry-run":                            "--dry-run only applies with --fix",
		"--crds=rollouts --fix":                                "",
		"--crds=rollouts --list-checks":                        "--crds only applies with --fix",
		"--crds=rollouts --only=kubernetes-version":            "--crds only applies with --fix",
		"--crds=rollouts --post":                               "--crds only applies with --fix",
		"--crds=rollouts --skip=argo-crds-ownership":           "--crds only applies with --fix",
		"--crds=rollouts --tls-secret=t":                       "--crds only applies with --fix",
		"--crds=rollouts --yes":                                "--yes only applies with --fix",
		"--dry-run --fix":                                      "",
		"--dry-run --list-checks":                              "--dry-run only applies with --fix",
		"--dry-run --only=kubernetes-version":                  "--dry-run only applies with --fix",
		"--dry-run --post":                                     "--dry-run only applies with --fix",
		"--dry-run --skip=argo-crds-ownership":                 "--dry-run only applies with --fix",
		"--dry-run --tls-secret=t":                             "--dry-run only applies with --fix",
		"--dry-run --yes":                                      "--yes only applies with --fix",
		"--fix --list-checks":                                  "--fix cannot be combined with --list-checks",
		"--fix --only=kubernetes-version":                      "none of the selected checks can be fixed",
		"--fix --post":                                         "",
		"--fix --skip=argo-crds-ownership":                     "", // helm-ownership is still selected and fixable
		"--fix --tls-secret=t":                                 "--tls-secret fixes nginx-tls-secret, which runs after the install (--post): add --post",
		"--fix --yes":                                          "",
		"--list-checks --only=kubernetes-version":              "",
		"--list-checks --post":                                 "",
		"--list-checks --skip=argo-crds-ownership":             "",
		"--list-checks --tls-secret=t":                         "--tls-secret only applies with --fix",
		"--list-checks --yes":                                  "--yes only applies with --fix",
		"--only=kubernetes-version --post":                     "runs only in pre-install mode",
		"--only=kubernetes-version --skip=argo-crds-ownership": "",
		"--only=kubernetes-version --tls-secret=t":             "--tls-secret only applies with --fix",
		"--only=kubernetes-version --yes":                      "--yes only applies with --fix",
		"--post --skip=argo-crds-ownership":                    "",
		"--post --tls-secret=t":                                "--tls-secret only applies with --fix",
		"--post --yes":                                         "--yes only applies with --fix",
		"--skip=argo-crds-ownership --tls-secret=t":            "--tls-secret only applies with --fix",
		"--skip=argo-crds-ownership --yes":                     "--yes only applies with --fix",
		"--tls-secret=t --yes":                                 "--yes only applies with --fix",
	}
	sort.Strings(names)
	seen := 0
	for i, a := range names {
		for _, b := range names[i+1:] {
			key := a + " " + b
			w, ok := want[key]
			if !ok {
				t.Errorf("pair %q is not in the table", key)
				continue
			}
			seen++
			_, err := compileFix(t, true, a, b)
			switch {
			case w == "" && err != nil:
				t.Errorf("%s: refused (%v), want accepted", key, err)
			case w != "" && (err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), w)):
				t.Errorf("%s: ToConfig = %v (exit %d), want exit 2 with %q", key, err, ExitCode(err), w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("table has %d pairs, %d were run", len(want), seen)
	}
	// Three-flag cases the pairs cannot show.
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"--fix", "--post", "--tls-secret=t"}, ""},
		{[]string{"--fix", "--post", "--crds=rollouts"}, "--crds fixes argo-crds-ownership, which runs before helm install and before helm upgrade (--upgrade): run it without --post"},
		{[]string{"--fix", "--skip=argo-crds-ownership,helm-ownership"}, "none of the selected checks can be fixed"},
		{[]string{"--fix", "--skip=argo-crds-ownership", "--crds=rollouts"}, "--crds fixes argo-crds-ownership, which --only/--skip left out"},
		{[]string{"--fix", "--post", "--tls-secret=t", "--only=runtime-workloads"}, "--tls-secret fixes nginx-tls-secret, which --only/--skip left out"},
	} {
		_, err := compileFix(t, true, tc.set...)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: ToConfig = %v, want %q", tc.set, err, tc.want)
		}
	}
}

func TestConfirm(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, "YES\n": true, " y \n": true, "n\n": false, "\n": false, "": false, "yess\n": false} {
		term, out := fixConsole(in, true)
		got, err := term.confirm(out)
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
	term := console{streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, host: Host{}.withDefaults()}
	for _, tc := range []struct {
		format reporters.Format
		want   io.Writer
	}{{reporters.FormatTable, &out}, {reporters.FormatWide, &out}, {reporters.FormatJSON, &errOut}, {reporters.FormatJUnit, &errOut}} {
		if term.planWriter(tc.format) != tc.want {
			t.Errorf("-o %s: plan written to the wrong stream", tc.format)
		}
	}
}

// TestPlanWriterWraps: on a terminal the plan and result lines are wrapped
// to its width, continuations indented under their line, and the
// confirmation prompt (no newline) is shown before the answer is read.
func TestPlanWriterWraps(t *testing.T) {
	var out bytes.Buffer
	term := console{streams: genericiooptions.IOStreams{Out: &out, In: strings.NewReader("y\n")}, host: Host{
		IsTerminal:    func(io.Writer) bool { return true },
		TerminalWidth: func(io.Writer) int { return 60 },
	}.withDefaults()}
	w := term.planWriter(reporters.FormatTable)
	long := "  ✔ customresourcedefinition/applicationsets.argoproj.io: patched (resourceVersion 1234)"
	fmt.Fprintln(w, long)
	ok, err := term.confirm(w)
	if err != nil || !ok {
		t.Fatalf("confirm = %v, %v", ok, err)
	}
	got := out.String()
	if !strings.HasSuffix(got, "Apply these changes? [y/N]: ") {
		t.Errorf("prompt not shown before reading: %q", got)
	}
	lines := strings.Split(strings.TrimSuffix(got, "Apply these changes? [y/N]: "), "\n")
	for _, l := range lines {
		if utf8.RuneCountInString(l) > 60 {
			t.Errorf("line wider than 60: %q", l)
		}
	}
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "      ") {
		t.Errorf("not wrapped with the continuation indented: %q", got)
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(long+" Apply these changes? [y/N]:"), " ") {
		t.Errorf("words lost: %q", got)
	}
}
