package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/run"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/version"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// runCmd executes the root command with args and env, returning stdout,
// stderr, the flags and the error.
func runCmd(t *testing.T, env map[string]string, args ...string) (string, string, *Flags, error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd, f := newCommand(streams, Host{Getenv: func(k string) string { return env[k] }})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), f, err
}

// compile parses args as the root command's flags, with host, and
// compiles them into the run's config (Flags.ToConfig): nothing runs.
func compile(t *testing.T, streams genericiooptions.IOStreams, host Host, args ...string) (*Flags, *run.Config, error) {
	t.Helper()
	cmd, f := newCommand(streams, host)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	cfg, err := f.ToConfig(context.Background())
	return f, cfg, err
}

// compileEnv is compile with the environment env and no terminal.
func compileEnv(t *testing.T, env map[string]string, args ...string) (*Flags, *run.Config, error) {
	t.Helper()
	return compile(t, genericiooptions.NewTestIOStreamsDiscard(), Host{Getenv: func(k string) string { return env[k] }}, args...)
}

func TestHelmEnvironment(t *testing.T) {
	helm := map[string]string{
		"HELM_PLUGIN_NAME": "gitops-preflight",
		"HELM_NAMESPACE":   "team-a",
		"HELM_KUBECONTEXT": "ctx-a",
		"KUBECONFIG":       "/tmp/helm.kubeconfig",
	}
	tests := []struct {
		name                     string
		env                      map[string]string
		args                     []string
		wantNS, wantCtx, wantKC  string
		wantNSExplicit, wantHelm bool
	}{
		{name: "kubectl plugin ignores HELM_* variables", env: map[string]string{"HELM_NAMESPACE": "team-a", "HELM_KUBECONTEXT": "ctx-a"},
			wantNS: checks.DefaultNamespace},
		{name: "under Helm the namespace, context and kubeconfig are Helm's", env: helm,
			wantNS: "team-a", wantCtx: "ctx-a", wantKC: "/tmp/helm.kubeconfig", wantNSExplicit: true, wantHelm: true},
		{name: "explicit flags win over Helm's", env: helm, args: []string{"-n", "mine", "--context", "ctx-b", "--kubeconfig", "/tmp/b"},
			wantNS: "mine", wantCtx: "ctx-b", wantKC: "/tmp/b", wantNSExplicit: true, wantHelm: true},
		{name: "a KUBECONFIG path list is left to client-go's loading rules", env: map[string]string{"HELM_PLUGIN_NAME": "gitops-preflight", "HELM_NAMESPACE": "default", "KUBECONFIG": "/a:/b"},
			wantNS: "default", wantNSExplicit: true, wantHelm: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, cfg, err := compileEnv(t, tt.env, append([]string{"--list-checks"}, tt.args...)...)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if cfg.Inputs.Namespace != tt.wantNS || cfg.Inputs.NamespaceExplicit != tt.wantNSExplicit {
				t.Errorf("namespace = %q (explicit %v), want %q (%v)", cfg.Inputs.Namespace, cfg.Inputs.NamespaceExplicit, tt.wantNS, tt.wantNSExplicit)
			}
			if got := *f.conn.kube.Context; got != tt.wantCtx {
				t.Errorf("context = %q, want %q", got, tt.wantCtx)
			}
			if f.conn.helm.Active != tt.wantHelm {
				t.Errorf("under Helm = %v, want %v", f.conn.helm.Active, tt.wantHelm)
			}
			if got := *f.conn.kube.KubeConfig; got != tt.wantKC {
				t.Errorf("kubeconfig = %q, want %q", got, tt.wantKC)
			}
		})
	}
}

func TestDisplayNameUnderHelm(t *testing.T) {
	out, _, _, err := runCmd(t, map[string]string{"HELM_PLUGIN_NAME": "gitops-preflight"}, "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "helm gitops-preflight [flags]") {
		t.Errorf("help under Helm does not say `helm gitops-preflight [flags]`:\n%s", out)
	}
	out, _, _, _ = runCmd(t, nil, "--help")
	if !strings.Contains(out, "kubectl gitops-preflight [flags]") {
		t.Errorf("help does not say `kubectl gitops-preflight [flags]`:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	old := version.Version
	version.Version = "v1.2.3-test"
	t.Cleanup(func() { version.Version = old })

	out, _, _, err := runCmd(t, nil, "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var v VersionInfo
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out)
	}
	if v.Version != "v1.2.3-test" || v.GoVersion == "" || v.Platform == "" {
		t.Errorf("version -o json = %+v", v)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, _, err := runCmd(t, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "kubectl gitops-preflight v1.2.3-test\n") || !strings.Contains(out, "commit: ") {
			t.Errorf("%v printed %q", args, out)
		}
	}
	if _, _, _, err := runCmd(t, nil, "version", "-o", "xml"); ExitCode(err) != ExitUsage {
		t.Errorf("version -o xml: exit %d (%v), want 2", ExitCode(err), err)
	}
}

func TestCompletion(t *testing.T) {
	out, _, _, err := runCmd(t, nil, "__complete", "--only", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks.All() {
		if c.Modes.Has(checks.ModePre) && !strings.Contains(out, c.ID+"\t"+c.Title+"\n") {
			t.Errorf("--only completion lacks %s:\n%s", c.ID, out)
		}
	}
	out, _, _, _ = runCmd(t, nil, "__complete", "--skip", "helm-version,")
	if strings.Contains(out, "helm-version,helm-version") || !strings.Contains(out, "helm-version,runtime-name\t") {
		t.Errorf("--skip completion after a comma:\n%s", out)
	}
	out, _, _, _ = runCmd(t, nil, "__complete", "-o", "")
	for _, f := range []string{"table", "json", "yaml", "junit"} {
		if !strings.Contains(out, f+"\n") {
			t.Errorf("-o completion lacks %s:\n%s", f, out)
		}
	}
	out, _, _, _ = runCmd(t, nil, "completion", "bash")
	if !strings.Contains(out, "__start_kubectl-gitops_preflight") {
		t.Errorf("completion bash is not a bash completion script:\n%.300s", out)
	}
}

func TestCompletionContexts(t *testing.T) {
	kc := t.TempDir() + "/config"
	writeFile(t, kc, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts:
- {name: prod-eu, context: {cluster: c, user: u}}
- {name: dev, context: {cluster: c, user: u}}
current-context: dev
`)
	out, _, _, err := runCmd(t, nil, "--kubeconfig", kc, "__complete", "--context", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "dev\nprod-eu\n:4\n") {
		t.Errorf("--context completion = %q", out)
	}
}

func TestColourDecision(t *testing.T) {
	tests := []struct {
		name     string
		noColor  bool
		env      string
		term     string
		terminal bool
		want     bool
	}{
		{"terminal", false, "", "xterm-256color", true, true},
		{"terminal, no TERM", false, "", "", true, true},
		{"pipe", false, "", "xterm", false, false},
		{"--no-color", true, "", "xterm", true, false},
		{"NO_COLOR", false, "1", "xterm", true, false},
		{"TERM=dumb", false, "", "dumb", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term := console{streams: genericiooptions.IOStreams{Out: io.Discard}, host: Host{
				Getenv:     func(k string) string { return map[string]string{"NO_COLOR": tt.env, "TERM": tt.term}[k] },
				IsTerminal: func(io.Writer) bool { return tt.terminal },
			}.withDefaults()}
			if got := term.colorEnabled(tt.noColor); got != tt.want {
				t.Errorf("colorEnabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 2, 200)
	opts := p.runOptions()
	a := checks.Meta{ID: "node-resources"}
	b := checks.Meta{ID: "cluster-admin"}
	opts.OnStart(a)
	opts.OnStart(b)
	opts.OnDone(checks.Outcome{Meta: a})
	opts.OnDone(checks.Outcome{Meta: b})
	p.Done()
	want := eraseLine + "[0/2] checking node-resources" +
		eraseLine + "[0/2] checking cluster-admin, node-resources" +
		eraseLine + "[1/2] checking cluster-admin" +
		eraseLine + "[2/2] checking" + eraseLine
	if buf.String() != want {
		t.Errorf("progress wrote %q, want %q", buf.String(), want)
	}

	// Not a terminal, or TERM=dumb: no hooks, nothing written.
	for _, tc := range []struct {
		name     string
		terminal bool
		term     string
	}{{"pipe", false, "xterm"}, {"dumb", true, "dumb"}} {
		var errOut bytes.Buffer
		term := console{streams: genericiooptions.IOStreams{ErrOut: &errOut}, host: Host{
			IsTerminal: func(io.Writer) bool { return tc.terminal },
			Getenv:     func(k string) string { return map[string]string{"TERM": tc.term}[k] },
		}.withDefaults()}
		ro, done := term.runOptions(3)
		done()
		if ro.OnStart != nil || ro.OnDone != nil || errOut.Len() != 0 {
			t.Errorf("%s: progress hooks %v/%v, wrote %q", tc.name, ro.OnStart != nil, ro.OnDone != nil, errOut.String())
		}
	}
}

// TestProgressLineFitsTheTerminal: on an 80-column terminal every progress
// line (check progress and --wait's) stays under 80 columns, each starts by
// erasing the row, and the run's hooks are there.
func TestProgressLineFitsTheTerminal(t *testing.T) {
	var errOut bytes.Buffer
	term := console{streams: genericiooptions.IOStreams{ErrOut: &errOut}, host: Host{
		IsTerminal:    func(io.Writer) bool { return true },
		TerminalWidth: func(io.Writer) int { return 80 },
		Getenv:        func(k string) string { return map[string]string{"TERM": "xterm-256color"}[k] },
	}.withDefaults()}
	ro, done := term.runOptions(24)
	if ro.OnStart == nil {
		t.Fatal("no progress on a terminal")
	}
	var ids []checks.Meta
	for _, c := range checks.All() {
		ids = append(ids, c.Meta)
		ro.OnStart(c.Meta)
	}
	for _, m := range ids {
		ro.OnDone(checks.Outcome{Meta: m})
	}
	done()
	terminalProgress(&errOut, term.progressWidth())(checkIDs(ids), 42*time.Second)
	draws := strings.Split(errOut.String(), eraseLine)
	if draws[0] != "" || len(draws) < len(ids) {
		t.Fatalf("progress output does not start each line with an erase: %q", errOut.String())
	}
	for _, d := range draws[1:] {
		if strings.ContainsAny(d, "\r\n") || utf8.RuneCountInString(d) >= 80 {
			t.Errorf("progress line of %d runes (terminal 80): %q", utf8.RuneCountInString(d), d)
		}
	}
	if !strings.HasSuffix(draws[len(draws)-1], "…") {
		t.Errorf("long wait line not cut with an ellipsis: %q", draws[len(draws)-1])
	}
}

func checkIDs(ms []checks.Meta) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestHelmNames: under Helm the help, the examples and the -n help name the
// command and the default as Helm's; as a kubectl plugin they stay kubectl's,
// and -n's help carries exactly one default either way.
func TestHelmNames(t *testing.T) {
	helm := map[string]string{"HELM_PLUGIN_NAME": "gitops-preflight", "HELM_NAMESPACE": "team-a"}
	for _, tc := range []struct {
		name      string
		env       map[string]string
		want, not string
		nsDefault string
	}{
		{"kubectl", nil, "kubectl gitops-preflight", "helm gitops-preflight", `default "` + checks.DefaultNamespace + `"`},
		{"helm", helm, "helm gitops-preflight", "kubectl gitops-preflight", `default "team-a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, _, err := runCmd(t, tc.env, "--help")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tc.want+" --post -n codefresh") || !strings.HasPrefix(out, tc.want+" checks") {
				t.Errorf("help does not name %q in the text and examples:\n%s", tc.want, out)
			}
			if strings.Contains(out, tc.not) {
				t.Errorf("help names %q:\n%s", tc.not, out)
			}
			var nsLine string
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "--namespace string") {
					nsLine = l
				}
			}
			if strings.Count(nsLine, "default") != 1 || !strings.Contains(nsLine, tc.nsDefault) {
				t.Errorf("-n help %q: want exactly one default, %s", nsLine, tc.nsDefault)
			}
		})
	}
}

// TestRenameInHints: under Helm the hints name "helm gitops-preflight".
func TestRenameInHints(t *testing.T) {
	o := &Options{name: "helm gitops-preflight"}
	outs := []checks.Outcome{{Result: checks.Result{Hint: "run kubectl gitops-preflight --fix; then kubectl get crd"}}}
	o.renameInHints(outs)
	if outs[0].Hint != "run helm gitops-preflight --fix; then kubectl get crd" {
		t.Errorf("hint = %q", outs[0].Hint)
	}
}

// TestRequestTimeoutIsWhatTheHelpSays: the help names the bounds that apply
// when --request-timeout is unset or 0, and the code uses exactly those: the
// API clients 30s, the probes 10s; a given value bounds both.
func TestRequestTimeoutIsWhatTheHelpSays(t *testing.T) {
	out, _, _, err := runCmd(t, nil, "--help")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "unset or 0: 30s per API request, 10s per probe") || strings.Contains(out, "don't timeout") {
		t.Errorf("--request-timeout help does not say what the code does:\n%s", out)
	}
	for _, tc := range []struct {
		flag             string
		wantAPI, wantPrb time.Duration
	}{{"", 30 * time.Second, 10 * time.Second}, {"0", 30 * time.Second, 10 * time.Second}, {"20s", 20 * time.Second, 20 * time.Second}, {"7", 7 * time.Second, 7 * time.Second}} {
		conn := newConnectionFlags(func(string) string { return "" })
		*conn.kube.Timeout = tc.flag
		conn.kube.APIServer = ptrTo("https://127.0.0.1:1")
		got, _, err := conn.requestTimeout()
		if err != nil || got != tc.wantPrb {
			t.Errorf("--request-timeout=%q: probes %v (%v), want %v", tc.flag, got, err, tc.wantPrb)
		}
		cfg, err := conn.kube.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		c, err := cluster.NewClients(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.Config.Timeout != tc.wantAPI {
			t.Errorf("--request-timeout=%q: API requests %v, want %v", tc.flag, c.Config.Timeout, tc.wantAPI)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestExitForEveryVerdict: the exit code of each verdict (README "Exit
// codes"), its line, and what a fleet's report calls it; every kind of
// verdict is in the exit table.
func TestExitForEveryVerdict(t *testing.T) {
	line := errors.New("the line")
	sigterm := &Interrupted{Signal: "SIGTERM"}
	for _, tc := range []struct {
		v       run.Verdict
		code    int
		err     error
		outcome reporters.Outcome
	}{
		{run.Verdict{Kind: run.OK}, ExitOK, nil, reporters.OutcomeOK},
		{run.Verdict{Kind: run.Failed}, ExitFailed, nil, reporters.OutcomeFailed},
		{run.Verdict{Kind: run.Failed, Err: line}, ExitFailed, line, reporters.OutcomeFailed},
		{run.Verdict{Kind: run.NothingVerified, Err: line}, ExitFailed, line, reporters.OutcomeFailed},
		{run.Verdict{Kind: run.NotChecked, Err: line}, ExitUsage, line, reporters.OutcomeNotChecked},
		{run.Verdict{Kind: run.Unreachable, Err: line}, ExitUnreachable, line, reporters.OutcomeUnreachable},
		{run.Verdict{Kind: run.Unreachable, Err: line, Signal: sigterm}, ExitUnreachable, line, reporters.OutcomeUnreachable},
		{run.Verdict{Kind: run.Interrupted, Err: line, Signal: &Interrupted{Signal: "SIGINT"}}, 130, line, reporters.OutcomeInterrupted},
		{run.Verdict{Kind: run.Interrupted, Err: line, Signal: sigterm}, 143, line, reporters.OutcomeInterrupted},
	} {
		err := exitFor(tc.v)
		if got := ExitCode(err); got != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.v.Kind, got, tc.code)
		}
		var e *ExitError
		if tc.code != ExitOK && (!errors.As(err, &e) || !errors.Is(e.Err, tc.err) || (tc.err == nil && e.Err != nil)) {
			t.Errorf("%s: error %v, want the line %v", tc.v.Kind, err, tc.err)
		}
		if _, o := exitCode(tc.v); o != tc.outcome {
			t.Errorf("%s: outcome %q, want %q", tc.v.Kind, o, tc.outcome)
		}
	}
	for k := run.OK; k <= run.NotChecked; k++ {
		if _, ok := exitTable[k]; !ok {
			t.Errorf("verdict %s is not in the exit table", k)
		}
	}
	if ExitCode(&Interrupted{Signal: "SIGINT"}) != 130 || ExitCode(sigterm) != 143 {
		t.Errorf("a second signal exits with %d and %d, want 130 and 143", ExitCode(&Interrupted{Signal: "SIGINT"}), ExitCode(sigterm))
	}
}

// TestCompleteChecksOfTheMode: --only/--skip complete the checks of the mode
// selected (--post or not), the only IDs the run accepts.
func TestCompleteChecksOfTheMode(t *testing.T) {
	for _, tc := range []struct {
		args []string
		mode checks.Mode
	}{
		{[]string{"__complete", "--only", ""}, checks.ModePre},
		{[]string{"__complete", "--post", "--skip", ""}, checks.ModePost},
		{[]string{"__complete", "--post", "--only", "release-deployed,"}, checks.ModePost},
	} {
		out, _, _, err := runCmd(t, nil, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks.All() {
			if c.ID == "release-deployed" && strings.HasSuffix(tc.args[len(tc.args)-1], ",") {
				continue // already given
			}
			offered := strings.Contains(out, c.ID+"\t")
			if offered != c.Modes.Has(tc.mode) {
				t.Errorf("%v: %s offered=%v, its modes %s", tc.args, c.ID, offered, c.Modes)
			}
		}
	}
}

// TestCompleteBuildsTheRunConfig: the flags compile into the typed run
// config field by field.
func TestCompleteBuildsTheRunConfig(t *testing.T) {
	_, c, err := compileEnv(t, nil, "--post", "--fail-on", "warn", "--wait", "90s", "--only", "release-deployed,runtime-workloads")
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != checks.ModePost || !c.FailOnWarn || c.Wait != 90*time.Second || c.Timeout != 5*time.Minute || c.Registry == nil || c.Getenv == nil || c.Probe == nil {
		t.Errorf("run config = %+v", c)
	}
	var ids []string
	for _, s := range c.Selected {
		ids = append(ids, s.ID)
	}
	if want := []string{"cluster-reachable", "release-deployed", "runtime-workloads"}; !slices.Equal(ids, want) {
		t.Errorf("selected %v, want %v", ids, want)
	}
	if c.Chart != nil || c.Fix.Enabled {
		t.Errorf("post run: chart %v, fix %+v; want neither", c.Chart, c.Fix)
	}
	if c.Inputs.Namespace != checks.DefaultNamespace || c.Inputs.ReleaseName != checks.DefaultReleaseName {
		t.Errorf("inputs %+v", c.Inputs)
	}
}

// TestCompleteLoadsWaivers: --waivers compiles into run.Config.Waivers; a
// missing or invalid file is a usage error (exit 2) naming it.
func TestCompleteLoadsWaivers(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "- check: node-resources\n  reason: lab\n  expires: 2030-01-01\n")
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "- check: node-resources\n  expires: 2030-01-01\n")
	for _, tc := range []struct {
		file, wantErr string
		want          int
	}{
		{file: good, want: 1},
		{file: bad, wantErr: "waiver 1 (node-resources): reason is required"},
		{file: filepath.Join(dir, "missing.yaml"), wantErr: "--waivers: open "},
	} {
		// --list-checks: the command completes its flags and contacts no cluster.
		_, c, err := compileEnv(t, nil, "--waivers", tc.file, "--list-checks")
		if tc.wantErr != "" {
			if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v (exit %d), want exit 2 with %q", tc.file, err, ExitCode(err), tc.wantErr)
			}
			continue
		}
		if err != nil || len(c.Waivers) != tc.want || c.Waivers[0].Check != "node-resources" {
			t.Errorf("%s: error %v, waivers %+v", tc.file, err, c.Waivers)
		}
	}
}

// TestHelmWaitFlag: --helm-wait compiles into run.Config.HelmWait: alone or
// =true on, =false off, absent unknown; another value, or --helm-wait with
// --post, is a usage error (exit 2).
func TestHelmWaitFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want checks.HelmWait
	}{
		{nil, checks.HelmWaitUnknown},
		{[]string{"--helm-wait"}, checks.HelmWaitOn},
		{[]string{"--helm-wait=true"}, checks.HelmWaitOn},
		{[]string{"--helm-wait=false"}, checks.HelmWaitOff},
		{[]string{"--helm-wait=0", "--upgrade"}, checks.HelmWaitOff},
	} {
		_, c, err := compileEnv(t, nil, append([]string{"--list-checks"}, tc.args...)...)
		if err != nil || c.HelmWait != tc.want {
			t.Errorf("%v: error %v, HelmWait %d, want %d", tc.args, err, c.HelmWait, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--helm-wait=sometimes"}, `invalid argument "sometimes" for "--helm-wait" flag: want true or false`},
		{[]string{"--post", "--helm-wait"}, "--helm-wait says how Helm will install or upgrade: it has no use with --post"},
	} {
		_, _, _, err := runCmd(t, nil, tc.args...)
		if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (exit %d), want exit 2 with %q", tc.args, err, ExitCode(err), tc.want)
		}
	}
}
