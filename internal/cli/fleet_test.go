package cli

import (
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/bundle"
)

// TestFlagsForContextCopiesEveryFlag: the per-context ConfigFlags carries
// every exported field of the user's (--kubeconfig, --as, --token, ...),
// the same pointers, except Context, which names the member's context; a
// field cli-runtime adds later fails here until flagsForContext copies it.
func TestFlagsForContextCopiesEveryFlag(t *testing.T) {
	f := genericclioptions.NewConfigFlags(true)
	given := "given"
	f.Context = &given
	f.WrapConfigFn = nil
	got := flagsForContext(f, "prod-eu")
	if *got.Context != "prod-eu" || *f.Context != "given" {
		t.Errorf("Context = %q (original %q), want prod-eu (original untouched)", *got.Context, *f.Context)
	}
	src, dst := reflect.ValueOf(f).Elem(), reflect.ValueOf(got).Elem()
	for i := 0; i < src.NumField(); i++ {
		field := src.Type().Field(i)
		if !field.IsExported() || field.Name == "Context" || field.Name == "WrapConfigFn" {
			continue
		}
		if src.Field(i).Pointer() != dst.Field(i).Pointer() {
			t.Errorf("flagsForContext does not copy ConfigFlags.%s", field.Name)
		}
	}
}

// TestCompletionOfContextsList: --contexts completes the comma-separated
// list's last element from the kubeconfig, leaving out those given.
func TestCompletionOfContextsList(t *testing.T) {
	kc := t.TempDir() + "/config"
	writeFile(t, kc, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts:
- {name: prod-eu, context: {cluster: c, user: u}}
- {name: prod-us, context: {cluster: c, user: u}}
- {name: dev, context: {cluster: c, user: u}}
current-context: dev
`)
	out, _, _, err := runCmd(t, nil, "--kubeconfig", kc, "__complete", "--contexts", "prod-eu,")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "prod-eu,dev\nprod-eu,prod-us\n:") || strings.Contains(out, "prod-eu,prod-eu") {
		t.Errorf("--contexts completion = %q", out)
	}
}

// TestFleetUsageErrors: the fleet flags' conflicts are exit 2, one line,
// before the kubeconfig is read (it does not exist here).
func TestFleetUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--contexts", "a", "--all-contexts"}, "--contexts and --all-contexts"},
		{[]string{"--all-contexts", "--context", "a"}, "--all-contexts and --context"},
		{[]string{"--contexts", "a,b", "--fix", "--yes"}, "--fix changes one cluster at a time"},
		{[]string{"--contexts", "a,a"}, `context "a" is given twice`},
		{[]string{"--contexts", "a,,b"}, "empty context name"},
		{[]string{"--contexts", ""}, "--contexts needs at least one"},
		{[]string{"--all-contexts", "--parallel", "0"}, "--parallel must be at least 1"},
		{[]string{"--all-contexts", "--list-checks"}, "--list-checks lists the catalogue"},
	} {
		args := append([]string{"--kubeconfig", t.TempDir() + "/missing"}, tc.args...)
		out, _, _, err := runCmd(t, nil, args...)
		if ExitCode(err) != ExitUsage || err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d, error %v; want exit 2 and one line with %q", tc.args, ExitCode(err), err, tc.want)
		}
		if out != "" {
			t.Errorf("%v: wrote %q", tc.args, out)
		}
	}
}

// TestUnknownContextIsAUsageError: a --contexts name the kubeconfig lacks
// is exit 2 naming it and the contexts there are, before any cluster is
// contacted (the servers here would refuse: nothing is printed either).
func TestUnknownContextIsAUsageError(t *testing.T) {
	kc := t.TempDir() + "/config"
	writeFile(t, kc, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts:
- {name: dev, context: {cluster: c, user: u}}
current-context: dev
`)
	out, _, _, err := runCmd(t, nil, "--kubeconfig", kc, "--contexts", "dev,prod")
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), `no context "prod" in the kubeconfig (it has: dev)`) || out != "" {
		t.Errorf("exit %d, error %v, stdout %q", ExitCode(err), err, out)
	}
}

// TestFleetProgressOnATerminal: on a terminal stderr the fleet keeps one
// progress line of the clusters under way, erased before the report; the
// report on stdout is the fleet's, and both closed-port clusters exit 3.
func TestFleetProgressOnATerminal(t *testing.T) {
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
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd, _ := newCommand(streams, Host{
		IsTerminal:    func(w io.Writer) bool { return w == streams.ErrOut },
		TerminalWidth: func(io.Writer) int { return 80 },
		Getenv:        func(k string) string { return map[string]string{"TERM": "xterm"}[k] },
	})
	cmd.SetArgs([]string{"--kubeconfig", kc, "--all-contexts", "--only", "runtime-name", "--connect-to", "quay.io:443:127.0.0.1:9"})
	err := cmd.Execute()
	if ExitCode(err) != ExitUnreachable {
		t.Fatalf("exit %d (%v), want 3\n%s", ExitCode(err), err, out.String())
	}
	e := errOut.String()
	if !strings.Contains(e, "] checking ") || !strings.Contains(e, "[2/2] checking") || !strings.HasSuffix(e, eraseLine) {
		t.Errorf("stderr %q: want the fleet's progress line, erased at the end", e)
	}
	if !strings.Contains(out.String(), "pre-install checks on 2 clusters") {
		t.Errorf("stdout is not the fleet table:\n%s", out.String())
	}
}

// TestFleetBundleReplays: --bundle over a fleet writes one archive (two
// contexts on a closed port and one whose client certificate is missing); its
// replay, with no kubeconfig, prints the same fleet JSON and exits the
// same; -o, --only and --fail-on apply to the archive as to a bundle, and
// --hooks is refused in one line.
func TestFleetBundleReplays(t *testing.T) {
	kc := t.TempDir() + "/config"
	writeFile(t, kc, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users:
- {name: u, user: {token: fleet-secret-token}}
- {name: badcert, user: {client-certificate: /nonexistent/c.crt, client-key: /nonexistent/c.key}}
contexts:
- {name: prod/eu, context: {cluster: c, user: u}}
- {name: dev, context: {cluster: c, user: u}}
- {name: broken, context: {cluster: c, user: badcert}}
current-context: dev
`)
	file := filepath.Join(t.TempDir(), "fleet.tgz")
	live, _, _, liveErr := runCmd(t, nil, "--kubeconfig", kc, "--all-contexts", "--only", "runtime-name", "-o", "json", "--bundle", file, "--connect-to", "quay.io:443:127.0.0.1:9")
	if ExitCode(liveErr) != ExitUnreachable {
		t.Fatalf("live exit %d (%v), want 3\n%s", ExitCode(liveErr), liveErr, live)
	}
	fl, err := bundle.OpenFleet(file)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range fl.Manifest.Clusters {
		order = append(order, c.Context)
		if (c.Bundle == "") != (c.Context == "broken") {
			t.Errorf("%+v: want a bundle for each checked context, none for broken", c)
		}
	}
	fl.Close()
	if strings.Join(order, ",") != "broken,dev,prod/eu" || fl.Manifest.Mode != "pre-install" {
		t.Errorf("manifest: contexts %v, mode %q", order, fl.Manifest.Mode)
	}
	rep, _, _, repErr := runCmd(t, map[string]string{"KUBECONFIG": "/nonexistent"}, "replay", file)
	if ExitCode(repErr) != ExitCode(liveErr) {
		t.Errorf("replay exit %d (%v), live %d", ExitCode(repErr), repErr, ExitCode(liveErr))
	}
	if rep != live {
		t.Errorf("replay JSON differs from the live run's\nlive:\n%s\nreplay:\n%s", live, rep)
	}
	table, _, _, err := runCmd(t, nil, "replay", file, "-o", "table", "--only", "cluster-reachable")
	if ExitCode(err) != ExitUnreachable || !strings.Contains(table, "pre-install checks on 3 clusters") || strings.Contains(table, "runtime-name") {
		t.Errorf("replay -o table --only cluster-reachable: exit %d\n%s", ExitCode(err), table)
	}
	// Retargeted: every cluster's replay is an upgrade run.
	up, _, _, err := runCmd(t, nil, "replay", file, "--upgrade", "--chart", filepath.Join(t.TempDir(), "no-chart"), "--only", "cluster-reachable", "-o", "json")
	if ExitCode(err) != ExitUnreachable || strings.Count(up, `"mode": "upgrade"`) != 2 || strings.Contains(up, `"mode": "pre-install"`) {
		t.Errorf("replay --upgrade --chart: exit %d (%v)\n%s", ExitCode(err), err, up)
	}
	_, _, _, err = runCmd(t, nil, "replay", file, "--hooks")
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "fleet archive") {
		t.Errorf("replay --hooks of a fleet archive: %v", err)
	}
}
